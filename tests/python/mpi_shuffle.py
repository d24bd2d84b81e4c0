"""One rank of an MPI shuffle from Python: mpirun -np N python mpi_shuffle.py FILE OUTPUT PARTITIONS [MODE].

Rank r inserts row groups r, r + N, ... of the Parquet FILE, then writes each partition it owns
to OUTPUT/part-NNNNN.rank-R.parquet. With `fail`, rank 1 inserts a table without the key column
instead; with `mismatch`, rank r shuffles into PARTITIONS + r partitions; with `schemas`, the ranks
insert three rows each, of two schemas, instead of FILE's; with any MODE, every rank writes what it
raised to OUTPUT/error.rank-R.txt.
"""

import sys

import pyarrow as pa
import pyarrow.parquet as pq
from mpi4py import MPI

import spillway


def shuffle(communicator: spillway.MpiCommunicator, path: str, output: str, partitions: int, mode: str) -> None:
    world = MPI.COMM_WORLD
    source = pq.ParquetFile(path)
    if mode == "mismatch":
        partitions += world.rank
    with spillway.Shuffler(communicator, "l_orderkey", partitions=partitions) as shuffler:
        if mode == "fail" and world.rank == 1:
            shuffler.insert(pa.table({"other": [1, 2, 3]}))
        if mode == "schemas":  # rank 1's values of another type; rank 0's partition 2 gets its row alone
            shuffler.insert(pa.table({"l_orderkey": [4, 5, 6], "value": [1.5, 2.5, 3.5]}) if world.rank == 1
                            else pa.table({"l_orderkey": [1, 2, 3], "value": ["a", "b", "c"]}))
        else:
            for group in range(world.rank, source.num_row_groups, world.size):
                shuffler.insert(source.read_row_group(group))
        shuffler.insert_finished()
        try:
            for partition, table in shuffler:
                pq.write_table(table, f"{output}/part-{partition:05d}.rank-{world.rank}.parquet")
        finally:
            if mode == "schemas":
                # Each rank takes what it can before another's close gives the shuffle up.
                world.Barrier()


def expect_invalid(make, message: str) -> None:
    try:
        make()
    except spillway.InvalidArgument as error:
        assert message in str(error), str(error)
    else:
        raise AssertionError(f"no InvalidArgument: {message}")


def main() -> None:
    path, output, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3])
    mode = sys.argv[4] if len(sys.argv) > 4 else ""
    world = MPI.COMM_WORLD
    expect_invalid(lambda: spillway.MpiCommunicator("x"), "comm must be an mpi4py communicator")
    expect_invalid(lambda: spillway.Shuffler(None, "k"), "communicator must be a spillway.MpiCommunicator")
    with spillway.MpiCommunicator(MPI.COMM_SELF) as alone:  # a communicator without MPI_TAG_UB of its own
        assert (alone.rank, alone.size) == (0, 1)
    # A Shuffler whose insert failed, closed while its error (and so the traceback of the insert) lives:
    # closing the communicator then frees its resource, so the C++ shuffler must be gone.
    alone = spillway.MpiCommunicator(MPI.COMM_SELF)
    lone = spillway.Shuffler(alone, "k", partitions=2)
    try:
        lone.insert(pa.table({"other": [1]}))
    except spillway.InvalidArgument as error:
        kept = error
    lone.close()
    alone.close()
    assert "no column is named 'k'" in str(kept), str(kept)
    expect_invalid(lambda: spillway.MpiCommunicator(world, options={"spil_codec": "lz4"}),
                   "spillway.MpiCommunicator takes no option named 'spil_codec'")
    with spillway.MpiCommunicator(world, memory_limit="32MiB", options={"shuffle_prefetch": "1MiB"}) as communicator:
        assert (communicator.rank, communicator.size) == (world.rank, world.size)
        # The memory limit is the communicator's. Refused on rank 0 alone, a Shuffler takes no op id there:
        # had it taken one, the ranks' next shuffles would not meet.
        if world.rank == 0:
            expect_invalid(lambda: spillway.Shuffler(communicator, "l_orderkey",
                                                     options={"memory_limit_host": "1GiB"}),
                           "spillway.Shuffler takes no option named 'memory_limit_host'")
        try:
            shuffle(communicator, path, output, partitions, mode)
        except spillway.Error as error:
            if not mode:
                raise
            with open(f"{output}/error.rank-{world.rank}.txt", "w") as file:
                file.write(f"{type(error).__name__}: {error}")
        # A second shuffle on the same communicator takes the next op id.
        with spillway.Shuffler(communicator, "l_orderkey", partitions=2) as second:
            try:
                communicator.close()
            except spillway.InvalidArgument:
                pass
            else:
                raise AssertionError("a communicator with an open Shuffler closed")
            second.insert_finished()
            assert [second.extract(p).num_rows for p in second.local_partitions] == [0]
        # Closed before its partitions are taken, on purpose: no rank waits for another, and none warns.
        with spillway.Shuffler(communicator, "k", partitions=4) as third:
            third.insert(pa.table({"k": list(range(100))}))
            third.insert_finished()
            world.Barrier()
    world.Barrier()


if __name__ == "__main__":
    main()
