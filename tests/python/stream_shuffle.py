"""Shuffles a Parquet file under a memory limit, batch by batch, and prints peak figures as JSON.

Run by test_memory_bound.py in a process of its own:
python stream_shuffle.py FILE LIMIT PARTITIONS BATCH_ROWS.
It reads the file once without spillway first, so that `peak_reading` is the peak resident set of
reading alone (pyarrow's reader holds row groups and read-ahead of its own); `peak` is the peak
after the shuffle, which read the file the same way.
"""

import json
import resource
import sys

import pyarrow.parquet as pq

import spillway


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    path, limit, partitions, batch_rows = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    source = pq.ParquetFile(path)
    for _ in source.iter_batches(batch_size=batch_rows):
        pass
    peak_reading = peak_rss_bytes()
    rows = 0
    batches = source.iter_batches(batch_size=batch_rows)
    with spillway.shuffle(batches, "l_orderkey", partitions=partitions, memory_limit=limit) as result:
        for _, table in result:
            rows += table.num_rows
            figures = result.figures
    print(json.dumps({"rows": rows, "expected_rows": source.metadata.num_rows, "peak_reading": peak_reading,
                      "peak": peak_rss_bytes(), **figures}))


if __name__ == "__main__":
    main()
