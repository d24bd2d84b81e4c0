"""spillway.partition: the `spillway partition` job from Python."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spillway


def test_parquet_to_parquet_matches_duckdb(lineitem_parquet: Path, tmp_path: Path):
    output = tmp_path / "parts"
    summary = spillway.partition(lineitem_parquet, "l_orderkey", output, partitions=8, memory_limit="256MiB",
                                 output_format="parquet", threads=2)
    assert summary.command == "partition"
    assert summary.verified is True
    assert summary.rows == pq.ParquetFile(lineitem_parquet).metadata.num_rows
    assert summary.settings["partitions"] == 8
    assert summary.settings["memory_limit_bytes"] == 256 << 20
    assert 0 < summary.peak_resident_bytes
    files = sorted(output.iterdir())
    assert [f.name for f in files] == [f"part-{p:05d}.parquet" for p in range(8)]
    connection = duckdb.connect()
    differences = connection.sql(f"""
        (SELECT * FROM '{lineitem_parquet}' EXCEPT ALL SELECT * FROM '{output}/*.parquet')
        UNION ALL
        (SELECT * FROM '{output}/*.parquet' EXCEPT ALL SELECT * FROM '{lineitem_parquet}')""").fetchall()
    assert differences == []
    shared = connection.sql(f"""
        SELECT count(*) FROM (SELECT l_orderkey FROM read_parquet('{output}/*.parquet', filename = true)
                              GROUP BY l_orderkey HAVING count(DISTINCT filename) > 1)""").fetchall()
    assert shared == [(0,)]


def test_ranks_shuffle_the_rows_into_the_files_one_rank_writes(lineitem_parquet: Path, tmp_path: Path):
    one = spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "one", partitions=5, threads=2)
    ranks = spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "ranks", partitions=5, ranks=3,
                               memory_limit="400MiB", spill_directory=tmp_path, codec="lz4", threads=2)
    assert ranks.verified is True
    assert ranks.rows == one.rows
    assert ranks.settings["ranks"] == 3
    assert len(ranks.peak_memory["HOST"]["ranks"]) == 3
    connection = duckdb.connect()
    for name in sorted(p.name for p in (tmp_path / "one").iterdir()):
        differences = connection.sql(f"""
            (SELECT * FROM '{tmp_path / "one" / name}' EXCEPT ALL SELECT * FROM '{tmp_path / "ranks" / name}')
            UNION ALL
            (SELECT * FROM '{tmp_path / "ranks" / name}' EXCEPT ALL SELECT * FROM '{tmp_path / "one" / name}')
        """).fetchall()
        assert differences == [], name


def test_progress_reaches_a_callback(lineitem_parquet: Path, tmp_path: Path):
    calls = []
    spillway.partition([lineitem_parquet], ["l_orderkey"], tmp_path / "out", partitions=4,
                       progress=lambda *call: calls.append(call))
    last_calls = [call for call in calls if call[4]]
    assert last_calls, "no phase ended"
    for phase, done, total, unit, _ in calls:
        assert isinstance(phase, str) and phase
        assert unit in ("bytes", "items")
        assert total == 0 or done <= total


def test_ctrl_c_in_a_progress_callback_is_raised_once_the_run_has_ended(lineitem_parquet: Path, tmp_path: Path):
    # The callback sends this process SIGINT, as Ctrl-C does, and Python
    # raises KeyboardInterrupt inside it; spillway used to report that as
    # an error of the callback and drop it, so Ctrl-C was lost.
    script = f"""
import os, signal, spillway
def progress(*call):
    os.kill(os.getpid(), signal.SIGINT)
try:
    spillway.partition({str(lineitem_parquet)!r}, "l_orderkey", {str(tmp_path / "out")!r}, partitions=4,
                       progress=progress)
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert completed.stdout.strip() == "KeyboardInterrupt", completed.stderr
    assert "Exception ignored" not in completed.stderr
    assert sorted(path.name for path in (tmp_path / "out").iterdir()) == [f"part-0000{p}.parquet" for p in range(4)]


def test_progress_bars_with_tqdm(lineitem_parquet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "out", partitions=4, progress=True)
    assert "100%" in capsys.readouterr().err


def test_csv_options_under_the_flags_names(tmp_path: Path):
    source = tmp_path / "in.csv"
    source.write_text("id;name\n1;a\n2;b\n3;c\n")
    summary = spillway.partition(source, "id", tmp_path / "out", partitions=2, delimiter=";",
                                 schema={"id": pa.int64()})  # or "int64": a type by what it prints as
    assert summary.rows == 3
    lines = [line for f in sorted((tmp_path / "out").iterdir()) for line in f.read_text().splitlines()[1:]]
    assert sorted(lines) == ["1;a", "2;b", "3;c"]


def test_a_schema_takes_pyarrow_types(tmp_path: Path):
    source = tmp_path / "in.csv"
    source.write_text("id,price,day,name\n1,2.5,1995-03-15,a\n2,3.5,1996-01-02,b\n")
    summary = spillway.partition(source, "id", tmp_path / "out", partitions=2, output_format="parquet",
                                 schema={"id": pa.int32(), "price": pa.float64(), "day": pa.date32(),
                                         "name": pa.large_string()})
    assert summary.rows == 2
    out = pa.concat_tables(pq.read_table(f) for f in sorted((tmp_path / "out").iterdir()))
    assert out.schema == pa.schema([("id", pa.int32()), ("price", pa.float64()), ("day", pa.date32()),
                                    ("name", pa.string())])

    moments = tmp_path / "moments.csv"
    moments.write_text("id,at,seen,flag\n1,2024-01-02 03:04:05.5,2024-01-02T03:04:05+01:00,true\n"
                       "2,2024-01-03 00:00:00,2024-01-03 00:00:00Z,false\n")
    spillway.partition(moments, "id", tmp_path / "moments", partitions=1, output_format="parquet",
                       schema={"at": pa.timestamp("ms"), "seen": pa.timestamp("ns", tz="America/New_York"),
                               "flag": pa.bool_()})
    out = pq.read_table(tmp_path / "moments" / "part-00000.parquet")
    assert out.schema == pa.schema([("id", pa.int64()), ("at", pa.timestamp("ms")),
                                    ("seen", pa.timestamp("ns", tz="UTC")), ("flag", pa.bool_())])
    assert sorted(out.column("seen").cast(pa.int64()).to_pylist()) == [1_704_161_045_000_000_000,
                                                                        1_704_240_000_000_000_000]

    with pytest.raises(spillway.InvalidArgument, match=r"column 'at' is given the type decimal128\(15, 2\)"):
        spillway.partition(moments, "id", tmp_path / "refused", schema={"at": pa.decimal128(15, 2)})
    with pytest.raises(spillway.InvalidArgument, match="schema at:bool8: unknown column type 'bool8'") as refused:
        spillway.partition(moments, "id", tmp_path / "refused", schema={"at": "bool8"})
    assert "--" not in str(refused.value)
    assert not (tmp_path / "refused").exists()


def test_ranks_take_the_tools_comm_collective_and_reserve_timeouts(lineitem_parquet: Path, tmp_path: Path):
    summary = spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "out", partitions=4, ranks=2,
                                 comm="local", collective_timeout=30, reserve_timeout="45s")
    assert summary.verified
    with pytest.raises(spillway.InvalidArgument, match="reserve_timeout"):
        spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "late", ranks=2, reserve_timeout=0)
    # Seconds as a float, however Python would print it (1e-05), reach the tool as a duration it reads.
    assert spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "one", partitions=4,
                              collective_timeout=1e-5).verified
    with pytest.raises(spillway.InvalidArgument, match="or run the tool under mpirun"):
        spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "mpi", comm="mpi")
    with pytest.raises(spillway.InvalidArgument, match="collective_timeout"):
        spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "bad", collective_timeout="soon")
    # And a tenth of a microsecond is no zero.
    assert spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "tiny", partitions=4, ranks=2,
                              reserve_timeout=1e-7).verified
    assert not (tmp_path / "mpi").exists() and not (tmp_path / "bad").exists()


def test_usage_errors_name_the_keyword_and_leave_the_output_alone(lineitem_parquet: Path, tmp_path: Path):
    output = tmp_path / "out"
    output.mkdir()
    (output / "keep.txt").write_text("mine")
    with pytest.raises(spillway.InvalidArgument, match="not empty"):
        spillway.partition(lineitem_parquet, "l_orderkey", output)
    assert [f.name for f in output.iterdir()] == ["keep.txt"]
    with pytest.raises(spillway.InvalidArgument, match="partitions") as refused:
        spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "new", partitions=0)
    assert "--" not in str(refused.value), "the keyword, not the tool's flag or its --help"
    with pytest.raises(spillway.InvalidArgument, match="memory_limit") as refused:
        spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "new", memory_limit="lots")
    assert "--" not in str(refused.value)
    with pytest.raises(spillway.InvalidArgument, match="block_size") as refused:
        spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "new", block_size=1)
    assert "command line" not in str(refused.value), "a keyword is no command line"
    with pytest.raises(spillway.InvalidArgument, match="no_such_column"):
        spillway.partition(lineitem_parquet, "no_such_column", tmp_path / "new")
    with pytest.raises(spillway.InvalidArgument, match="at least one input"):
        spillway.partition([], "l_orderkey", tmp_path / "new")
    with pytest.raises(spillway.Error, match="missing.parquet"):
        spillway.partition(tmp_path / "missing.parquet", "l_orderkey", tmp_path / "new")
    assert not (tmp_path / "new").exists()


def test_arguments_of_the_wrong_kind_are_invalid_arguments_naming_them(lineitem_parquet: Path, tmp_path: Path):
    new = tmp_path / "new"
    for key in (None, 1.5, True, [], ["l_orderkey", 5.0]):
        with pytest.raises(spillway.InvalidArgument, match="key must be a column name or number"):
            spillway.partition(lineitem_parquet, key, new)
    with pytest.raises(spillway.InvalidArgument, match="output must be a path"):
        spillway.partition(lineitem_parquet, "l_orderkey", None)
    with pytest.raises(spillway.InvalidArgument, match="inputs must be a path"):
        spillway.partition(42, "l_orderkey", new)
    with pytest.raises(spillway.InvalidArgument, match="schema must be a mapping"):
        spillway.partition(lineitem_parquet, "l_orderkey", new, schema=["l_orderkey"])
    for size in (1.5e9, True):
        with pytest.raises(spillway.InvalidArgument, match="memory_limit must be a size"):
            spillway.partition(lineitem_parquet, "l_orderkey", new, memory_limit=size)
    # The tool's flags take comma-separated lists: a comma in one name would split it.
    with pytest.raises(spillway.InvalidArgument, match="'we,ird.parquet' holds a comma"):
        spillway.partition("we,ird.parquet", "l_orderkey", new)
    with pytest.raises(spillway.InvalidArgument, match="'a,b' holds a comma"):
        spillway.partition(lineitem_parquet, "a,b", new)
    assert not new.exists()


def test_a_key_may_be_a_column_number(lineitem_parquet: Path, tmp_path: Path):
    class Number:  # an integer of another type, as numpy's are
        def __index__(self) -> int:
            return 0

    by_number = spillway.partition(lineitem_parquet, [Number()], tmp_path / "number", partitions=4)
    by_name = spillway.partition(lineitem_parquet, "l_orderkey", tmp_path / "name", partitions=4)
    assert by_number.settings["keys"] == ["0"]
    order = [("l_orderkey", "ascending"), ("l_linenumber", "ascending")]
    for part in range(4):
        name = f"part-{part:05d}.parquet"
        rows = [pq.read_table(tmp_path / run / name).sort_by(order) for run in ("number", "name")]
        assert rows[0].num_rows > 0 and rows[0].equals(rows[1])


def test_a_corrupt_file_fails_and_leaves_nothing(tmp_path: Path):
    corrupt = tmp_path / "corrupt.parquet"
    corrupt.write_bytes(b"PAR1" + b"\x00" * 100 + b"PAR1")
    with pytest.raises(spillway.CorruptData, match="corrupt.parquet"):
        spillway.partition(corrupt, "a", tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_malformed_rows_found_while_running_fail_and_leave_nothing(tmp_path: Path):
    source = tmp_path / "in.csv"
    source.write_text("a,b\n" + "".join(f"{i},{i}\n" for i in range(2000)) + "1,2,3\n")
    with pytest.raises(spillway.CorruptData, match="in.csv"):
        spillway.partition(source, "a", tmp_path / "out", partitions=2)
    assert not (tmp_path / "out").exists()
