"""spillway.shuffle: Arrow data in, partitions out, under a memory limit."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections import Counter
from decimal import Decimal

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import spillway


def rows(table: pa.Table) -> Counter:
    """The multiset of `table`'s rows."""
    return Counter(zip(*(column.to_pylist() for column in table.columns)))


def sample(n: int = 20_000) -> pa.Table:
    return pa.table({
        "k": pa.array([i % 997 for i in range(n)], pa.int64()),
        "name": pa.array([None if i % 13 == 0 else f"name-{i}" for i in range(n)], pa.string()),
        "x": pa.array([i * 0.25 for i in range(n)], pa.float64()),
    })


def shuffled(result: spillway.ShuffleResult) -> dict[int, pa.Table]:
    return dict(result)


def test_every_row_arrives_once_and_equal_keys_share_a_partition():
    table = sample()
    parts = shuffled(spillway.shuffle(table, "k", partitions=7, ranks=3, memory_limit="64MiB"))
    assert sorted(parts) == list(range(7))
    assert rows(pa.concat_tables(parts.values())) == rows(table)
    owner: dict[int, int] = {}
    for partition, part in parts.items():
        assert part.schema == table.schema
        for key in set(part.column("k").to_pylist()):
            assert owner.setdefault(key, partition) == partition
    assert len(owner) == 997


def test_a_partition_without_rows_is_an_empty_table_of_the_schema():
    table = pa.table({"k": pa.array([5, 5, 5], pa.int64()), "v": ["a", "b", "c"]})
    parts = shuffled(spillway.shuffle(table, "k", partitions=4))
    assert sum(part.num_rows for part in parts.values()) == 3
    assert sum(part.num_rows == 0 for part in parts.values()) == 3
    assert all(part.schema == table.schema for part in parts.values())


def test_a_stream_of_no_batches_gives_empty_partitions_of_its_schema():
    schema = pa.schema([("k", pa.int64()), ("v", pa.string())])
    parts = shuffled(spillway.shuffle(pa.RecordBatchReader.from_batches(schema, []), "k", partitions=3))
    assert [part.schema for part in parts.values()] == [schema] * 3
    assert all(part.num_rows == 0 for part in parts.values())
    with pytest.raises(spillway.InvalidArgument, match="no column is named 'nope'"):
        spillway.shuffle(pa.RecordBatchReader.from_batches(schema, []), "nope")


def test_partitions_agree_with_spillway_partition(tmp_path):
    table = sample(5_000)
    pq.write_table(table, tmp_path / "in.parquet")
    spillway.partition(tmp_path / "in.parquet", "k", tmp_path / "out", partitions=5)
    parts = shuffled(spillway.shuffle(table, "k", partitions=5, ranks=2))
    for partition, part in parts.items():
        written = pq.read_table(tmp_path / "out" / f"part-{partition:05d}.parquet")
        assert rows(part) == rows(written)


def test_files_are_read_by_spillway_itself(tmp_path):
    table = sample(5_000)
    pq.write_table(table, tmp_path / "a.parquet", row_group_size=1_000)
    pq.write_table(table, tmp_path / "b.parquet")
    parts = shuffled(spillway.shuffle([tmp_path / "a.parquet", str(tmp_path / "b.parquet")], "k", partitions=3))
    assert rows(pa.concat_tables(parts.values())) == rows(pa.concat_tables([table, table]))
    with pytest.raises(spillway.IoError, match="missing.parquet"):
        spillway.shuffle(tmp_path / "missing.parquet", "k")
    (tmp_path / "bad.parquet").write_bytes(b"not parquet at all")
    with pytest.raises(spillway.CorruptData, match="bad.parquet"):
        spillway.shuffle(tmp_path / "bad.parquet", "k")
    # A .tbl file is TPC-H's dialect: no header, '|' after every field.
    (tmp_path / "t.tbl").write_text("1|x|\n2|y|\n1|z|\n")
    parts = shuffled(spillway.shuffle(tmp_path / "t.tbl", "column0", partitions=2))
    together = pa.concat_tables(parts.values())
    assert together.column_names == ["column0", "column1"]
    assert rows(together) == Counter([(1, "x"), (2, "y"), (1, "z")])


def test_polars_in_and_out():
    frame = pl.DataFrame({"id": list(range(1000)), "city": [f"c{i % 7}" for i in range(1000)]})
    parts = shuffled(spillway.shuffle(frame, ["city", "id"], partitions=3))
    back = pl.concat([pl.from_arrow(part) for part in parts.values()])
    assert back.sort("id").equals(frame.sort("id"))


def test_readers_batches_and_iterables():
    table = sample(3_000)
    batches = table.to_batches(max_chunksize=500)
    generated = pa.RecordBatchReader.from_batches(table.schema, (batch for batch in batches))
    for data in (generated, batches, batches[0], iter(batches)):
        expected = rows(pa.Table.from_batches([batches[0]] if data is batches[0] else batches))
        parts = shuffled(spillway.shuffle(data, "k", partitions=4))
        assert rows(pa.concat_tables(parts.values())) == expected


def test_narrow_and_large_types_are_converted():
    table = pa.table({
        "k": pa.array([1, 2, 3], pa.int8()),
        "f": pa.array([0.5, 1.5, 2.5], pa.float32()),
        "s": pa.array(["a", "bb", "ccc"], pa.large_string()),
        "price": pa.array([Decimal("0.07"), Decimal("-123.45"), None], pa.decimal128(15, 2)),
    })
    parts = shuffled(spillway.shuffle(table, "k", partitions=2))
    out = pa.concat_tables(parts.values()).sort_by("k")
    assert out.schema == pa.schema([("k", pa.int32()), ("f", pa.float64()), ("s", pa.string()),
                                    ("price", pa.float64())])
    assert out.column("s").to_pylist() == ["a", "bb", "ccc"]
    assert out.column("price").to_pylist() == [0.07, -123.45, None]


def test_wide_decimals_of_other_tools_are_read_where_15_significant_digits_hold_each_value():
    # DuckDB's sum of integers is decimal(38, 0), Spark's default decimal(38, 18).
    table = pa.table({
        "k": [1, 2, 3],
        "total": pa.array([Decimal("4950"), Decimal("-1E+30"), None], pa.decimal128(38, 0)),
        "spark": pa.array([Decimal("1.5"), None, Decimal("-0.000000000000000001")], pa.decimal128(38, 18)),
    })
    out = pa.concat_tables(shuffled(spillway.shuffle(table, "k", partitions=2)).values()).sort_by("k")
    assert out.column("total").to_pylist() == [4950.0, -1e30, None]
    assert out.column("spark").to_pylist() == [1.5, None, -1e-18]
    sixteen_digits = pa.table({"k": [1], "total": pa.array([Decimal("1234567890123456")], pa.decimal128(38, 0))})
    with pytest.raises(spillway.InvalidArgument, match=r"column 'total' holds a value of more than 15 significant "
                                                       r"digits.*1234567890123456"):
        list(spillway.shuffle(sixteen_digits, "k", partitions=2))


def test_a_column_of_nulls_only_comes_back_as_strings_all_null():
    frame = pl.DataFrame({"id": [1, 2, 3], "comment": [None, None, None]})
    assert frame.schema["comment"] == pl.Null
    out = pa.concat_tables(shuffled(spillway.shuffle(frame, "id", partitions=2)).values()).sort_by("id")
    assert out.schema == pa.schema([("id", pa.int64()), ("comment", pa.string())])
    assert out.column("comment").to_pylist() == [None, None, None]


def test_a_type_the_arrow_library_does_not_know_is_an_invalid_argument_with_or_without_progress():
    frame = pl.DataFrame({"id": [1], "huge": pl.Series([1], dtype=pl.Int128)})
    for progress in (False, lambda *report: None):
        with pytest.raises(spillway.InvalidArgument, match="unsupported format string: .{0,2}_pli128"):
            list(spillway.shuffle(frame, "id", partitions=2, progress=progress))


def test_booleans_and_timestamps_come_back_as_they_went_in_with_any_zone_as_utc():
    moments = [-1, 0, 1_700_000_000_123_456_789, None]
    table = pa.table({
        "k": pa.array([1, 2, 3, 4], pa.int64()),
        "flag": pa.array([True, False, None, True]),
        "naive": pa.array(moments, pa.timestamp("ns")),
        "zoned": pa.array(moments, pa.timestamp("us", tz="Europe/Paris")),
        "ms": pa.array(moments[:2] + [1_700_000_000_123, None], pa.timestamp("ms", tz="UTC")),
        "seconds": pa.array([0, 1, 2, None], pa.timestamp("s")),
    })
    out = pa.concat_tables(shuffled(spillway.shuffle(table, ["flag", "naive"], partitions=3)).values())
    assert out.schema == pa.schema([("k", pa.int64()), ("flag", pa.bool_()), ("naive", pa.timestamp("ns")),
                                    ("zoned", pa.timestamp("us", tz="UTC")), ("ms", pa.timestamp("ms", tz="UTC")),
                                    ("seconds", pa.timestamp("ms"))])
    assert out.sort_by("k").equals(table.cast(out.schema))


def test_spills_under_a_small_limit_and_loses_nothing(tmp_path):
    table = pa.concat_tables([sample(100_000)] * 4)  # about 16 MB of columns
    result = spillway.shuffle(table.to_batches(max_chunksize=20_000), "k", partitions=16, ranks=2,
                              memory_limit="8MiB", spill_directory=tmp_path)
    figures = result.figures
    assert figures["spilled_bytes"] > 0
    assert figures["host_limit_bytes"] == 8 << 20
    assert rows(pa.concat_tables(table for _, table in result)) == rows(table)
    assert list(tmp_path.iterdir()) == []  # iterating to the end closed it, spill files included
    assert result.figures["spilled_bytes"] >= figures["spilled_bytes"], "the figures outlive the result"


def test_many_small_batches_are_sent_together_not_one_chunk_per_piece(tmp_path):
    # 300 batches of 500 rows into 64 partitions: sent as they came, each
    # batch would make 64 pieces of about 8 rows, and the 19,200 pieces'
    # bookkeeping alone held the 4 MiB limit, so the shuffle failed with
    # nothing in use.
    table = pa.table({"k": pa.array(range(150_000), pa.int64())})
    result = spillway.shuffle(table.to_batches(max_chunksize=500), "k", partitions=64, memory_limit="4MiB",
                              options={"memory_reserve_timeout": "1s"}, spill_directory=tmp_path)
    assert rows(pa.concat_tables(part for _, part in result)) == rows(table)


def test_a_result_iterated_to_its_end_refuses_a_second_pass():
    result = spillway.shuffle(sample(100), "k", partitions=3)
    assert len(list(result)) == 3
    with pytest.raises(spillway.InvalidArgument, match="each partition is handed out once"):
        iter(result)
    # A loop that stops at the last partition, before the result knows it is done.
    result = spillway.shuffle(sample(100), "k", partitions=3)
    for partition, _ in result:
        if partition == 2:
            break
    with pytest.raises(spillway.InvalidArgument, match="each partition is handed out once"):
        iter(result)
    # One that stops earlier goes on where it stopped.
    result = spillway.shuffle(sample(100), "k", partitions=3)
    assert next(iter(result))[0] == 0
    assert [partition for partition, _ in result] == [1, 2]


def test_closing_early_frees_the_spill_files(tmp_path):
    result = spillway.shuffle(sample(), "k", partitions=8, memory_limit="1MiB",
                              options={"spill_force_disk": "true"}, spill_directory=tmp_path)
    with result:
        next(iter(result))
        assert any(tmp_path.iterdir())
    assert list(tmp_path.iterdir()) == []
    assert result.figures["spilled_bytes"] > 0, "the figures as they were when it closed"
    with pytest.raises(spillway.InvalidArgument, match="closed"):
        next(iter(result))


def test_a_partition_that_cannot_be_extracted_raises_and_closes_the_result(tmp_path):
    result = spillway.shuffle(sample(), "k", partitions=4, memory_limit="4MiB", spill_directory=tmp_path,
                              options={"spill_force_disk": "true", "shuffle_prefetch": "0"})
    spill_files = list(tmp_path.rglob("buffer-*"))
    assert spill_files, "the partitions wait on disk"
    for path in spill_files:
        with open(path, "r+b") as file:
            file.write(b"\xff" * 64)
    with pytest.raises(spillway.CorruptData):
        next(iter(result))
    with pytest.raises(spillway.InvalidArgument, match="closed"):
        next(iter(result))
    assert list(tmp_path.iterdir()) == [], "its rows are lost, and their spill files freed"


def test_exported_tables_are_arrow_without_a_copy():
    parts = spillway.shuffle(sample(100), "k", partitions=1)
    (_, table), = list(parts)
    assert table.num_rows == 100
    # A record batch of the C Data Interface: pyarrow imported spillway's buffers.
    assert table.column("x").chunk(0).buffers()[1].address != 0


def test_errors_name_what_is_wrong():
    table = sample(100)
    with pytest.raises(spillway.InvalidArgument, match="no column is named 'nope'"):
        spillway.shuffle(table, "nope")
    with pytest.raises(ValueError, match="one schema"):
        spillway.shuffle([table, table.rename_columns(["k", "other", "x"])], "k")
    with pytest.raises(spillway.InvalidArgument, match="'blob' has the type binary"):
        spillway.shuffle(pa.table({"k": [1], "blob": [b"\x00"]}), "k")
    with pytest.raises(spillway.InvalidArgument, match="expected Arrow data"):
        spillway.shuffle(42, "k")
    with pytest.raises(spillway.InvalidArgument, match="partitions"):
        spillway.shuffle(table, "k", partitions=0)
    with pytest.raises(spillway.InvalidArgument, match="ranks"):
        spillway.shuffle(table, "k", ranks=0)
    with pytest.raises(spillway.InvalidArgument, match="'memory_limit'") as refused:
        spillway.shuffle(table, "k", memory_limit="lots")
    assert "memory_limit_host" not in str(refused.value), "the keyword, not the option it sets"
    with pytest.raises(spillway.OutOfMemory, match="raise memory_limit") as refused:
        spillway.shuffle(table, "k", memory_limit="1KiB")
    assert "memory_limit_host" not in str(refused.value)
    with pytest.raises(spillway.InvalidArgument, match=r"collect\(\) it"):
        spillway.shuffle(pl.LazyFrame({"k": [1, 2]}), "k")


def test_an_option_name_that_no_memory_or_shuffle_option_has_is_an_invalid_argument(tmp_path):
    table = sample(100)
    with pytest.raises(spillway.InvalidArgument, match="spillway.shuffle takes no option named 'spil_codec'"):
        spillway.shuffle(table, "k", spill_directory=tmp_path, options={"spil_codec": "lz4"})
    # An option of the tool's CSV reader is not the shuffle's either.
    with pytest.raises(spillway.InvalidArgument, match="no option named 'csv_delimiter', 'max_spil_bytes'"):
        spillway.shuffle(table, "k", options={"max_spil_bytes": "1GiB", "csv_delimiter": ";"})
    assert list(tmp_path.iterdir()) == [], "refused before any spill directory is made"
    with spillway.shuffle(table, "k", partitions=4, spill_directory=tmp_path,
                          options={"spill_codec": "lz4", "shuffle_prefetch": "0"}) as result:
        assert sum(part.num_rows for _, part in result) == 100


def test_progress_counts_the_rows_taken_in_and_ends_with_a_last_call():
    table = sample(50_000)
    calls = []
    parts = spillway.shuffle(table.to_batches(max_chunksize=5_000), "k", partitions=4,
                             progress=lambda *call: calls.append(call))
    assert sum(part.num_rows for _, part in parts) == 50_000
    assert calls, "at least the last call"
    assert all(phase == "shuffle" and unit == "items" for phase, _, _, unit, _ in calls)
    assert calls[-1] == ("shuffle", 50_000, 0, "items", True), "an iterable of batches has no total"
    assert [last for *_, last in calls].count(True) == 1
    done = [call[1] for call in calls]
    assert done == sorted(done)

    calls.clear()
    assert len(list(spillway.shuffle(table, "k", partitions=4, progress=lambda *call: calls.append(call)))) == 4
    assert calls[-1] == ("shuffle", 50_000, 50_000, "items", True), "a table's rows are its total"


def test_progress_bars_with_tqdm_and_a_failing_callback_ends_the_shuffle(capsys: pytest.CaptureFixture[str]):
    assert len(list(spillway.shuffle(sample(1000), "k", partitions=2, progress=True))) == 2
    assert "shuffle" in capsys.readouterr().err

    def failing(*call):
        raise RuntimeError("stop here")

    with pytest.raises(spillway.IoError, match="stop here"):
        spillway.shuffle(sample(1000), "k", partitions=2, progress=failing)


def test_ending_early_or_failing_warns_of_nothing(capfd):
    table = sample(1000)
    with spillway.shuffle(table, "k", partitions=4, ranks=2) as result:
        next(iter(result))
    with pytest.raises(spillway.InvalidArgument, match="no column is named 'nope'"):
        spillway.shuffle(table, "nope", ranks=2)
    assert capfd.readouterr().err == ""


def test_a_python_producers_error_is_an_io_error_and_its_ctrl_c_a_keyboard_interrupt():
    table = sample(100)

    def failing():
        yield from table.to_batches(max_chunksize=10)[:3]
        raise ValueError("my producer failed")

    with pytest.raises(spillway.IoError, match="failed to give its next batch(.|\n)*my producer failed"):
        spillway.shuffle(pa.RecordBatchReader.from_batches(table.schema, failing()), "k")
    # Ctrl-C while spillway reads a pyarrow reader of a Python generator
    # stops the generator; pyarrow passes that on as text, and it used to
    # come out as CorruptData. In a process of its own: pytest stops on it.
    script = """
import os, signal, pyarrow as pa, spillway
table = pa.table({"k": list(range(100))})
def interrupted():
    yield from table.to_batches(max_chunksize=10)[:3]
    os.kill(os.getpid(), signal.SIGINT)
    yield from table.to_batches(max_chunksize=10)[3:]
try:
    spillway.shuffle(pa.RecordBatchReader.from_batches(table.schema, interrupted()), "k")
except KeyboardInterrupt:
    print("KeyboardInterrupt")
"""
    completed = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert completed.stdout.strip() == "KeyboardInterrupt", completed.stderr


def test_counts_out_of_range_or_of_another_type_are_invalid_arguments():
    table = sample(10)
    for partitions in (2**32, 2.0, "2", True):
        with pytest.raises(spillway.InvalidArgument, match="partitions must be an integer from 1 to 16777216"):
            spillway.shuffle(table, "k", partitions=partitions)
    for ranks in (5000, 2.0, "2"):
        with pytest.raises(spillway.InvalidArgument, match="ranks must be an integer from 1 to 4096"):
            spillway.shuffle(table, "k", ranks=ranks)


def test_arguments_of_the_wrong_kind_are_invalid_arguments_naming_them(tmp_path):
    table = sample(10)
    for key in (5, None, [], ["k", 5]):
        with pytest.raises(spillway.InvalidArgument, match="key must be a column name"):
            spillway.shuffle(table, key)
    # Any iterable of names will do.
    for key in (("k",), pl.Series(["k"]), (name for name in ["k"])):
        with spillway.shuffle(table, key, partitions=2) as result:
            assert sum(part.num_rows for _, part in result) == 10
    with pytest.raises(spillway.InvalidArgument, match="options must be a mapping"):
        spillway.shuffle(table, "k", options="spill_codec=lz4")
    with pytest.raises(spillway.InvalidArgument, match="spill_directory must be a path"):
        spillway.shuffle(table, "k", spill_directory=3)
    for size in (1e9, True):
        with pytest.raises(spillway.InvalidArgument, match="memory_limit must be a size"):
            spillway.shuffle(table, "k", memory_limit=size)
    with pytest.raises(spillway.InvalidArgument, match="pyarrow.table"):
        spillway.shuffle({"k": [1, 2]}, "k")  # a dict of columns, not an iterable of inputs


def test_a_column_rather_than_a_table_is_an_invalid_argument():
    with pytest.raises(spillway.InvalidArgument,
                       match=r"expected a table or record batch, not a single column \(Int64Array\)"):
        spillway.shuffle(pa.array([1, 2, 3]), "k")
    for column in (pa.chunked_array([[1, 2, 3]]), pl.Series("k", [1, 2, 3])):
        with pytest.raises(spillway.InvalidArgument, match="not of record batches"):
            spillway.shuffle(column, "k")


def test_a_batch_larger_than_the_limit_is_read_in_parts_that_fit():
    big = pa.table({"k": pa.array(range(1_000_000), pa.int64())})  # 8 MB in one batch
    with spillway.shuffle(big, "k", partitions=4, memory_limit="2MiB") as result:
        assert result.figures["peak_host_bytes"] <= 2 << 20  # the rows are all in by now
        assert sum(part.num_rows for _, part in result) == 1_000_000


def test_rows_that_do_not_fit_the_limit_65536_at_a_time_are_out_of_memory():
    wide = pa.table({"k": pa.array(range(70_000), pa.int64()), "text": pa.array(["x" * 100] * 70_000)})
    with pytest.raises(spillway.OutOfMemory) as raised:
        spillway.shuffle(wide, "k", memory_limit="1MiB", options={"memory_reserve_timeout": "1s"})
    assert isinstance(raised.value, MemoryError)


def test_the_gil_is_released_while_spillway_works():
    """A Python thread keeps running while a shuffle works in C++ (it could not if the GIL were held)."""
    # One stream of many batches: a single call into C++.
    table = pa.Table.from_batches(pa.concat_tables([sample(200_000)] * 25).to_batches(max_chunksize=100_000))
    ticks: list[float] = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.001)

    ticker = threading.Thread(target=tick)
    ticker.start()
    try:
        started = time.monotonic()
        # Every chunk through the disk, so that the call lasts long enough to tell.
        result = spillway.shuffle(table, "k", partitions=32, ranks=2, memory_limit="16MiB",
                                  options={"spill_force_disk": "true"})
        ended = time.monotonic()
    finally:
        stop.set()
        ticker.join()
    result.close()
    # The middle half of the call: with the GIL held there, no tick falls in it.
    quarter = (ended - started) / 4
    inside = [t for t in ticks if started + quarter < t < ended - quarter]
    assert ended - started > 0.3, "the shuffle was too short to tell"
    assert len(inside) > 10


def test_a_log_level_that_names_none_is_ignored_with_a_notice():
    # The level is read when first needed, and an error logs itself as it is
    # raised: reading such a level once raised an error there, and hung.
    code = (
        "import pyarrow as pa, spillway\n"
        "try:\n"
        "    spillway.shuffle(pa.table({'a': [1, 2]}), key='nope', partitions=2)\n"
        "except spillway.InvalidArgument as error:\n"
        "    print('raised:', error)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], env={**os.environ, "SPILLWAY_LOG_LEVEL": "verbose"},
                            capture_output=True, text=True, timeout=120)
    assert "raised: no column is named 'nope'" in result.stdout, result.stderr
    assert "ignoring SPILLWAY_LOG_LEVEL='verbose'" in result.stderr


def test_categorical_and_view_string_dictionaries_come_out_as_strings():
    frame = pl.DataFrame({"k": [1, 2, 3, 4], "c": pl.Series(["a", "b", "a", "ccc"], dtype=pl.Categorical)})
    views = pa.table({"k": [1, 2], "c": pa.array(["x", "yy"], pa.string_view()).dictionary_encode()})
    for data, expected in ((frame, {(1, "a"), (2, "b"), (3, "a"), (4, "ccc")}), (views, {(1, "x"), (2, "yy")})):
        rows = set()
        for _, part in spillway.shuffle(data, "k", partitions=2):
            assert part.schema.field("c").type == pa.string()
            rows |= set(zip(part.column("k").to_pylist(), part.column("c").to_pylist()))
        assert rows == expected
