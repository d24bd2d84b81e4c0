"""One rank of an MPI shuffle from Python: mpirun -np N python mpi_shuffle.py FILE OUTPUT PARTITIONS.

Rank r inserts row groups r, r + N, ... of the Parquet FILE, then writes each partition it owns
to OUTPUT/part-NNNNN.rank-R.parquet.
"""

import sys

import pyarrow.parquet as pq
from mpi4py import MPI

import spillway


def main() -> None:
    path, output, partitions = sys.argv[1], sys.argv[2], int(sys.argv[3])
    world = MPI.COMM_WORLD
    source = pq.ParquetFile(path)
    with spillway.MpiCommunicator(world, memory_limit="32MiB") as communicator:
        assert (communicator.rank, communicator.size) == (world.rank, world.size)
        with spillway.Shuffler(communicator, "l_orderkey", partitions=partitions) as shuffler:
            for group in range(world.rank, source.num_row_groups, world.size):
                shuffler.insert(source.read_row_group(group))
            shuffler.insert_finished()
            for partition, table in shuffler:
                pq.write_table(table, f"{output}/part-{partition:05d}.rank-{world.rank}.parquet")
        # A second shuffle on the same communicator takes the next op id.
        with spillway.Shuffler(communicator, "l_orderkey", partitions=2) as second:
            second.insert_finished()
            assert [second.extract(p).num_rows for p in second.local_partitions] == [0]
    world.Barrier()


if __name__ == "__main__":
    main()
