"""The peers' side of bench_partition_parquet.sh: the same hash repartition
with DuckDB or Polars, timed inside the process (interpreter start-up is not
counted against them).

Usage: peer_partition.py TOOL INPUT OUTPUT_DIR KEY PARTITIONS THREADS MEMORY_LIMIT_MIB FORMAT

TOOL is duckdb or polars; INPUT a Parquet file or CSV file (FORMAT says
which); the output is zstd-compressed Parquet with statistics and row groups
of up to 2^20 rows, one directory per partition of `hash(KEY) % PARTITIONS`.
Every column is read and written. Prints `seconds S`.
"""

import os
import sys
import time

tool, source, output, key, partitions, threads, limit_mib, file_format = sys.argv[1:9]
partitions, threads, limit_mib = int(partitions), int(threads), int(limit_mib)
row_group_rows = 1 << 20

if tool == "duckdb":
    import duckdb

    db = duckdb.connect(config={"threads": threads, "memory_limit": f"{limit_mib}MiB"})
    scan = f"read_parquet('{source}')" if file_format == "parquet" else f"read_csv('{source}')"
    start = time.perf_counter()
    db.execute(
        f"COPY (SELECT *, hash({key}) % {partitions} AS p FROM {scan}) TO '{output}' "
        f"(FORMAT parquet, PARTITION_BY (p), COMPRESSION zstd, ROW_GROUP_SIZE {row_group_rows})")
elif tool == "polars":
    os.environ["POLARS_MAX_THREADS"] = str(threads)
    import polars as pl

    frame = pl.scan_parquet(source) if file_format == "parquet" else pl.scan_csv(source)
    start = time.perf_counter()
    frame.with_columns(p=pl.col(key).hash() % partitions).sink_parquet(
        pl.PartitionBy(output, key="p"), compression="zstd", statistics=True, row_group_size=row_group_rows,
        mkdir=True)
else:
    sys.exit(f"unknown tool {tool}; give duckdb or polars")
print(f"seconds {time.perf_counter() - start}")
