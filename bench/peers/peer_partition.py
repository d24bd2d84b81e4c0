"""One tool's run of the peers benchmark (bench_peers.sh): a hash repartition
of a Parquet or CSV file into PARTITIONS partitions by KEY, written as
zstd-compressed Parquet at level `zstd_level`, timed inside the process
(interpreter and cluster start-up are not counted against any tool).

Usage: peer_partition.py TOOL INPUT OUTPUT_DIR KEY PARTITIONS THREADS MEMORY_LIMIT_MIB FORMAT [RANKS]

TOOL is one of
- duckdb: COPY ... PARTITION_BY on hash(KEY) % PARTITIONS;
- polars: sink_parquet with PartitionBy on the same expression;
- dask: a LocalCluster of THREADS single-threaded workers sharing the memory
  limit, `shuffle(KEY, shuffle_method="p2p")` into PARTITIONS partitions;
- spark: local[THREADS] with the driver's (in local mode, the executor's)
  memory at the limit, `repartition(PARTITIONS, KEY)`;
- ray: Ray Data on THREADS CPUs with an object store of a third of the limit,
  `repartition(PARTITIONS, keys=[KEY])`;
- spillway: the Python package, `spillway.shuffle` of the file (read by
  spillway itself) over RANKS in-process ranks (default 4) with half the
  limit (the partitions being written and pyarrow's writers hold the rest),
  each partition written by pyarrow on THREADS writer threads as the next is
  extracted;
- spillway-mpi: the same over MPI, one rank per process of `mpirun -np N`,
  each reading its share of the row groups with pyarrow, with a quarter of
  the limit shared equally.

Every column is read and written. Prints `seconds S` (rank 0 only under MPI).
"""

import os
import sys
import time

# The most rows in a row group, for every tool that writes with a size of
# its own: 2^20, or the environment's PEER_ROW_GROUP_ROWS.
row_group_rows = int(os.environ.get("PEER_ROW_GROUP_ROWS", 1 << 20))
# Every tool compresses at one zstd level: 1, the Arrow library's default,
# which `spillway partition` and pyarrow use. DuckDB, Polars and Spark
# default to 3, which compresses more slowly.
zstd_level = 1


def run_duckdb() -> float:
    import duckdb

    db = duckdb.connect(config={"threads": threads, "memory_limit": f"{limit_mib}MiB"})
    scan = f"read_parquet('{source}')" if file_format == "parquet" else f"read_csv('{source}')"
    start = time.perf_counter()
    db.execute(
        f"COPY (SELECT *, hash({key}) % {partitions} AS p FROM {scan}) TO '{output}' "
        f"(FORMAT parquet, PARTITION_BY (p), COMPRESSION zstd, COMPRESSION_LEVEL {zstd_level}, "
        f"ROW_GROUP_SIZE {row_group_rows})")
    return time.perf_counter() - start


def run_polars() -> float:
    os.environ["POLARS_MAX_THREADS"] = str(threads)
    import polars as pl

    frame = pl.scan_parquet(source) if file_format == "parquet" else pl.scan_csv(source)
    start = time.perf_counter()
    frame.with_columns(p=pl.col(key).hash() % partitions).sink_parquet(
        pl.PartitionBy(output, key="p"), compression="zstd", compression_level=zstd_level, statistics=True,
        row_group_size=row_group_rows,
        mkdir=True)
    return time.perf_counter() - start


def run_dask() -> float:
    import dask
    import dask.dataframe as dd
    from distributed import Client, LocalCluster

    with LocalCluster(n_workers=threads, threads_per_worker=1, processes=True,
                      memory_limit=f"{limit_mib // threads}MiB", dashboard_address=None) as cluster, \
            Client(cluster):
        start = time.perf_counter()
        with dask.config.set({"dataframe.shuffle.method": "p2p"}):
            frame = dd.read_parquet(source, split_row_groups=True)  # a partition per row group
            frame.shuffle(key, npartitions=partitions, shuffle_method="p2p").to_parquet(
                output, compression="zstd", compression_level=zstd_level, write_index=False)
        return time.perf_counter() - start


def run_spark() -> float:
    from pyspark.sql import SparkSession

    spark = (SparkSession.builder.master(f"local[{threads}]")
             .config("spark.driver.memory", f"{limit_mib}m")
             .config("spark.sql.shuffle.partitions", str(partitions))
             .config("spark.local.dir", os.path.abspath("spark-local"))
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    try:
        start = time.perf_counter()
        (spark.read.parquet(source).repartition(partitions, key)
         .write.option("compression", "zstd").option("parquet.compression.codec.zstd.level", str(zstd_level))
         .parquet(output))
        return time.perf_counter() - start
    finally:
        spark.stop()


def run_ray() -> float:
    import shutil
    import tempfile

    import ray

    # A short path: Ray's sockets live under it, and a socket's path is at most 107 bytes.
    temp_dir = tempfile.mkdtemp(prefix="ray-")
    ray.init(num_cpus=threads, object_store_memory=limit_mib * (1 << 20) // 3, include_dashboard=False,
             _temp_dir=temp_dir)
    try:
        import ray.data

        start = time.perf_counter()
        ray.data.read_parquet(source).repartition(partitions, keys=[key]).write_parquet(
            output, compression="zstd", compression_level=zstd_level)
        return time.perf_counter() - start
    finally:
        ray.shutdown()
        shutil.rmtree(temp_dir, ignore_errors=True)


def write_partitions(partitions_of) -> None:
    """Writes each (partition, table) with pyarrow on THREADS writer threads, as the next is extracted,
    with at most THREADS tables waiting to be written."""
    from concurrent.futures import ThreadPoolExecutor
    from threading import BoundedSemaphore

    import pyarrow.parquet as pq

    os.makedirs(output, exist_ok=True)
    slots = BoundedSemaphore(threads)

    def write(partition, table) -> None:
        try:
            pq.write_table(table, f"{output}/part-{partition:05d}.parquet", compression="zstd",
                           compression_level=zstd_level, row_group_size=row_group_rows)
        finally:
            slots.release()

    with ThreadPoolExecutor(threads) as writers:
        futures = []
        for partition, table in partitions_of:
            slots.acquire()
            futures.append(writers.submit(write, partition, table))
        for future in futures:
            future.result()


def run_spillway() -> float:
    import spillway

    start = time.perf_counter()
    with spillway.shuffle(source, key, partitions=partitions, ranks=ranks,
                          memory_limit=f"{limit_mib // 2}MiB") as result:
        write_partitions(result)
    return time.perf_counter() - start


def run_spillway_mpi() -> float | None:
    import pyarrow.parquet as pq
    from mpi4py import MPI

    import spillway

    world = MPI.COMM_WORLD
    file = pq.ParquetFile(source)
    world.Barrier()
    start = time.perf_counter()
    with spillway.MpiCommunicator(world, memory_limit=f"{limit_mib // (4 * world.size)}MiB") as communicator:
        with spillway.Shuffler(communicator, key, partitions=partitions) as shuffler:
            mine = list(range(world.rank, file.num_row_groups, world.size))
            if mine:
                shuffler.insert(file.iter_batches(batch_size=1 << 16, row_groups=mine))
            shuffler.insert_finished()
            write_partitions(shuffler)
    world.Barrier()
    return time.perf_counter() - start if world.rank == 0 else None


# Guarded: Dask's worker processes import this file again.
if __name__ == "__main__":
    tool, source, output, key, partitions, threads, limit_mib, file_format = sys.argv[1:9]
    partitions, threads, limit_mib = int(partitions), int(threads), int(limit_mib)
    ranks = int(sys.argv[9]) if len(sys.argv) > 9 else 4
    runners = {"duckdb": run_duckdb, "polars": run_polars, "dask": run_dask, "spark": run_spark, "ray": run_ray,
               "spillway": run_spillway, "spillway-mpi": run_spillway_mpi}
    if tool not in runners:
        sys.exit(f"unknown tool {tool}; give one of {', '.join(runners)}")
    seconds = runners[tool]()
    if seconds is not None:
        print(f"seconds {seconds}")
