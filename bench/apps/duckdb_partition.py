"""The DuckDB side of bench_partition.sh: the same repartition with DuckDB,
timed inside the process, so that Python's start-up is not counted against it.

Usage: duckdb_partition.py INPUT OUTPUT_DIR KEY PARTITIONS MEMORY_LIMIT THREADS
Prints `seconds S`.
"""

import sys
import time

import duckdb


def main() -> None:
    input_path, output, key, partitions, memory_limit, threads = sys.argv[1:]
    connection = duckdb.connect(config={"memory_limit": memory_limit, "threads": int(threads)})
    start = time.perf_counter()
    connection.execute(
        f"COPY (SELECT *, hash({key}) % {int(partitions)} AS p FROM read_csv('{input_path}')) "
        f"TO '{output}' (FORMAT csv, PARTITION_BY (p))"
    )
    print(f"seconds {time.perf_counter() - start}")


if __name__ == "__main__":
    main()
