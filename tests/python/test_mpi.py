"""spillway.Shuffler over mpi4py's communicator, in a real MPI job of 2 processes."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

import spillway


def mpirun() -> list[str]:
    launcher = shutil.which("mpirun")
    if launcher is None:
        pytest.fail("mpirun is missing: scripts/setup installs Debian's openmpi-bin")
    # Shared memory between the processes, as root in a container.
    return [launcher, "--allow-run-as-root", "--oversubscribe", "-x", "OMPI_MCA_btl=self,vader",
            "-x", "OMPI_MCA_btl_vader_single_copy_mechanism=none"]


def run_mpi_shuffle(lineitem_parquet: Path, output: Path, partitions: int, mode: str) -> None:
    """mpi_shuffle.py in MODE on 2 processes, which must succeed (each writes what it raised; see its docstring)."""
    script = Path(__file__).with_name("mpi_shuffle.py")
    subprocess.run([*mpirun(), "-np", "2", sys.executable, str(script), str(lineitem_parquet), str(output),
                    str(partitions), mode], check=True, timeout=300)


def test_two_processes_shuffle_like_spillway_partition(lineitem_parquet: Path, tmp_path: Path):
    output = tmp_path / "mpi"
    output.mkdir()
    script = Path(__file__).with_name("mpi_shuffle.py")
    run = subprocess.run([*mpirun(), "-np", "2", sys.executable, str(script), str(lineitem_parquet), str(output), "6"],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "warn" not in run.stderr, run.stderr
    files = sorted(f.name for f in output.iterdir())
    # Partitions are owned round-robin: partition p by rank p % 2.
    assert files == [f"part-{p:05d}.rank-{p % 2}.parquet" for p in range(6)]

    reference = tmp_path / "reference"
    spillway.partition(lineitem_parquet, "l_orderkey", reference, partitions=6)
    connection = duckdb.connect()
    expected_rows = pq.ParquetFile(lineitem_parquet).metadata.num_rows
    assert connection.sql(f"SELECT count(*) FROM '{output}/*.parquet'").fetchall() == [(expected_rows,)]
    for p in range(6):
        mine, theirs = output / files[p], reference / f"part-{p:05d}.parquet"
        difference = connection.sql(f"""
            SELECT count(*) FROM ((SELECT * FROM '{mine}' EXCEPT ALL SELECT * FROM '{theirs}')
                                  UNION ALL (SELECT * FROM '{theirs}' EXCEPT ALL SELECT * FROM '{mine}'))""")
        assert difference.fetchall() == [(0,)], f"partition {p} differs from spillway partition's"


def test_a_rank_that_fails_fails_the_shuffle_on_every_rank(lineitem_parquet: Path, tmp_path: Path):
    run_mpi_shuffle(lineitem_parquet, tmp_path, 6, "fail")
    own = (tmp_path / "error.rank-1.txt").read_text()
    assert own.startswith("InvalidArgument: no column is named 'l_orderkey'")
    peer = (tmp_path / "error.rank-0.txt").read_text()
    assert peer.startswith("InvalidArgument:") and "rank 1" in peer, peer
    assert not list(tmp_path.glob("part-*")), "no partition of a failed shuffle was written"


def test_ranks_that_give_different_partition_counts_fail_saying_so(lineitem_parquet: Path, tmp_path: Path):
    run_mpi_shuffle(lineitem_parquet, tmp_path, 6, "mismatch")
    for rank in range(2):
        # The first to learn of it: a finish message of another layout, or a chunk of a partition the rank
        # does not own.
        error = (tmp_path / f"error.rank-{rank}.txt").read_text()
        assert ("every rank must give the same partition count and owner" in error
                or "the ranks give different partition counts or owners" in error), error
    assert not list(tmp_path.glob("part-*")), "no partition of a failed shuffle was written"


def test_ranks_that_insert_different_schemas_fail_saying_so(lineitem_parquet: Path, tmp_path: Path):
    run_mpi_shuffle(lineitem_parquet, tmp_path, 4, "schemas")
    for rank in range(2):
        # Rank 0 first takes a partition of its own rows, then one of rank 1's alone; rank 1, both ranks' rows.
        error = (tmp_path / f"error.rank-{rank}.txt").read_text()
        assert error.startswith("InvalidArgument:"), error
        assert ("every rank must insert tables of one schema" in error
                or "cannot concatenate a packed table" in error), error
    error = (tmp_path / "error.rank-0.txt").read_text()
    assert "partition 2 holds rows of l_orderkey:int64, value:float64" in error, error
