"""``spillway.shuffle`` over in-process ranks, and ``Shuffler`` over MPI."""

from __future__ import annotations

import contextlib
import time
import weakref
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, Generic, Self, TypeVar, Union

import pyarrow as pa

from spillway import _core
from spillway._arguments import count_of, mapping_of, names_of, path_of, size_of
from spillway._arrow import arrow_streams, to_pyarrow
from spillway._errors import Error, InvalidArgument
from spillway._progress import Progress, ProgressCallback, callback_of

Size = Union[str, int]


def _options(memory_limit: Size | None, spill_directory: Any, options: Mapping[str, Any] | None) -> dict[str, str]:
    """The spillway options (docs/configuration.md's names) the arguments set."""
    result = {str(name): str(value) for name, value in mapping_of("options", options).items()}
    if memory_limit is not None:
        result["memory_limit_host"] = size_of("memory_limit", memory_limit)
    if spill_directory is not None:
        result["spill_directory"] = path_of("spill_directory", spill_directory)
    return result


@contextlib.contextmanager
def _keywords_in_errors() -> Iterator[None]:
    """Names ``memory_limit``, the keyword, where spillway's errors name the option it sets."""
    try:
        yield
    except Error as error:
        error.args = (str(error).replace("memory_limit_host", "memory_limit"),) + error.args[1:]
        raise


CoreT = TypeVar("CoreT")


class _Closable(Generic[CoreT]):
    """An object over C++ state in ``_core``, None once closed: a context manager that closes it, and
    ``_open`` for every use, which raises InvalidArgument naming ``_what`` once it is closed."""

    _what = "object"
    _core: CoreT | None

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _open(self) -> CoreT:
        if self._core is None:
            raise InvalidArgument(f"the {self._what} is closed")
        return self._core


class ShuffleResult(_Closable["_core.LocalShuffle"]):
    """The partitions of a shuffle, extracted as they are iterated.

    Iterating yields ``(partition, pyarrow.Table)`` for every partition in
    order, once: a partition with no rows as an empty table of the data's
    schema. Iterating again goes on after the last partition taken; once
    every partition is taken, or the result closed, it raises
    InvalidArgument. A partition that cannot be extracted (spilled rows
    found corrupt, say) raises its error and closes the result, as its rows
    are lost. Until a partition is taken, its rows wait in memory or
    on disk under the memory limit; the table handed out is the caller's,
    outside the limit. Use it as a context manager, or call ``close``, to free what
    is left (spill files included) without iterating to the end. Use it from
    one thread at a time.
    """

    _what = "shuffle's result"

    def __init__(self, shuffle: _core.LocalShuffle, partitions: int) -> None:
        self._core = shuffle
        self._partitions = partitions
        self._next = 0
        self._final_figures: dict[str, int] | None = None

    def __len__(self) -> int:
        return self._partitions

    def __iter__(self) -> Iterator[tuple[int, pa.Table]]:
        if self._core is None or self._next == self._partitions:
            self.close()
            raise InvalidArgument(f"the {self._what} is closed: each partition is handed out once, and "
                                  "iterating to the end (or close()) frees the rest")
        return self._rest()

    def _rest(self) -> Iterator[tuple[int, pa.Table]]:
        """The partitions not yet taken, in order; closes the result after the last."""
        while self._next < self._partitions:
            partition = self._next
            try:
                table = to_pyarrow(self._open().extract(partition))
            except BaseException:
                self.close()
                raise
            self._next += 1
            yield partition, table
        self.close()

    @property
    def figures(self) -> dict[str, int]:
        """Bytes spilled and read back, and the peak of each tier, summed over the ranks; once the
        result is closed (iterated to the end, say), as they were then."""
        if self._core is None and self._final_figures is not None:
            return dict(self._final_figures)
        return self._open().figures()

    def close(self) -> None:
        """Frees the partitions not yet taken and the spill files, keeping ``figures``. Idempotent."""
        if self._core is not None:
            try:
                self._final_figures = self._core.figures()
            finally:
                self._core.close()
                self._core = None


def shuffle(
    data: Any,
    key: str | Sequence[str],
    *,
    partitions: int = 64,
    ranks: int = 1,
    memory_limit: Size | None = None,
    spill_directory: Any = None,
    options: Mapping[str, Any] | None = None,
    progress: Progress = False,
) -> ShuffleResult:
    """Hash-partitions ``data`` by ``key`` among ``ranks`` in-process ranks, spilling what does not fit.

    Args:
        data: Arrow data: a pyarrow Table, RecordBatch or RecordBatchReader,
            a Polars DataFrame, a DuckDB relation (anything with
            ``__arrow_c_stream__`` or ``__arrow_c_array__``); the path of a
            Parquet, Arrow IPC or CSV file (told by its extension; a ``.tbl``
            file in TPC-H's dialect, without a header, its columns named
            ``column0``, ``column1``, ...), which spillway reads itself; or an
            iterable of them, all with one schema (the same columns, in the same order, of the same types
            once converted; unlike ``partition``, which matches files by
            column name and widens int32 to int64, a shuffle takes its
            inputs as they come). Read once, batch by batch; Parquet files and Arrow data
            65,536 rows at a time at most, so that a large batch or row
            group is copied in parts within the limit. Column types: int32, int64,
            float64, date32, strings, booleans and timestamps in ms, us or
            ns (narrower integers, uint32, uint64 up to 2^63 - 1, float16,
            float32, decimals whose values have up to 15 significant
            digits, date64, large or view strings, dictionaries of strings,
            timestamps in seconds and columns of nulls only are converted; a
            timestamp with any time zone comes back in UTC, a column of
            nulls as strings); other types are refused. Small batches are held,
            within the memory limit, and sent together, so that batches of
            a few thousand rows split many ways do not become as many tiny
            pieces.
        key: the key column, or columns, by name. Rows with equal keys go to
            one partition, the one ``spillway partition`` puts them in.
        partitions: how many partitions.
        ranks: how many in-process ranks share the work and the memory.
        memory_limit: the HOST memory all ranks together may hold: bytes,
            ``"1GiB"`` or ``"25%"`` of RAM (default: option
            ``memory_limit_host``, else 80%).
        spill_directory: where spill files go (default ``$TMPDIR`` or /tmp).
        options: other memory and shuffle options, by their names in
            docs/configuration.md, e.g. ``{"spill_codec": "lz4"}``.
        progress: ``True`` for a tqdm bar, a callable taking
            ``(phase, done, total, unit, last)``, or ``False``: the rows of
            Arrow data taken in so far (phase ``"shuffle"``, unit
            ``"items"``; the total for a pyarrow Table or RecordBatch, else
            0), at most every 100 ms, and once more at the end. Files that
            spillway reads itself count no rows. Arrow data is then handed
            over batch by batch through Python, and an exception the
            callable raises ends the shuffle.

    Returns:
        A :class:`ShuffleResult` to iterate for ``(partition, pyarrow.Table)``.

    Raises:
        InvalidArgument: a key that is not a column, tables of different
            schemas, a column type spillway does not read, a value its
            converted type cannot hold (a uint64 beyond int64, a decimal of
            more than 15 significant digits), a bad option value, or an
            option name that no memory or shuffle option has.
        OutOfMemory: 65,536 rows (or a batch, if smaller) and their packed
            copy do not fit in one rank's share of the memory limit
            (``memory_limit`` ÷ ``ranks``); where that share could hold them
            were nothing else held, after ``memory_reserve_timeout``.
        IoError: a RecordBatchReader or other Arrow stream failed (its
            message), or a file cannot be read, or a spill file written. An
            exception raised by an iterable of batches itself comes through
            as it is.
    """
    partitions = count_of("partitions", partitions, _core.MAX_PARTITIONS)
    ranks = count_of("ranks", ranks, _core.MAX_RANKS)
    keys = names_of("key", key)
    report = callback_of(progress)
    rows_in = _RowsIn(report, data.num_rows if isinstance(data, (pa.Table, pa.RecordBatch)) else 0) if report else None
    with _keywords_in_errors():
        core = _core.LocalShuffle(keys, partitions, ranks, _options(memory_limit, spill_directory, options))
        try:
            for stream in arrow_streams(data):
                if isinstance(stream, str):
                    core.insert_file(stream)
                else:
                    core.insert(rows_in.counted(stream) if rows_in else stream)
            core.finish()
            if rows_in:
                rows_in.finish()
        except BaseException:
            core.close()
            raise
    return ShuffleResult(core, partitions)


class _Exported:
    """An Arrow stream that ``__arrow_c_stream__`` exported already."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self._stream


class _RowsIn:
    """Reports to ``callback`` the rows a shuffle has taken in, as phase ``"shuffle"``, at most every 100 ms."""

    _phase = "shuffle"
    _interval = 0.1

    def __init__(self, callback: ProgressCallback, total: int) -> None:
        self._callback = callback
        self._total = total
        self._done = 0
        self._reported = 0.0

    def counted(self, data: Any) -> pa.RecordBatchReader:
        """The batches of ``data`` (an object with ``__arrow_c_stream__``), each counted as it is handed over."""
        stream = data.__arrow_c_stream__()  # what the producer raises comes through as it is
        try:
            reader = pa.RecordBatchReader.from_stream(_Exported(stream))
        except pa.ArrowInvalid as error:  # a type Arrow does not know, or a stream of columns
            raise InvalidArgument(f"{type(data).__name__} cannot be read as Arrow record batches: {error}") from None

        def batches() -> Iterator[pa.RecordBatch]:
            for batch in reader:
                self._done += batch.num_rows
                now = time.monotonic()
                if now - self._reported >= self._interval:
                    self._reported = now
                    self._callback(self._phase, self._done, self._total, "items", False)
                yield batch

        return pa.RecordBatchReader.from_batches(reader.schema, batches())

    def finish(self) -> None:
        """The phase's last report."""
        self._callback(self._phase, self._done, self._total, "items", True)


class MpiCommunicator(_Closable["_core.MpiRank"]):
    """This process's rank of an MPI communicator, with its memory and spill directory.

    ``comm`` is an mpi4py communicator (default ``MPI.COMM_WORLD``); MPI must
    be initialised with ``MPI_THREAD_MULTIPLE``, as mpi4py does by default.
    The communicator is duplicated, so spillway's messages never meet the
    application's. ``memory_limit`` is this process's HOST limit.
    ``options`` are memory, MPI and shuffle options by their names in
    docs/configuration.md (the shuffle options are its Shufflers'
    defaults); a name that is none of them raises InvalidArgument. Close it
    (or leave its ``with`` block) before MPI is finalised.
    """

    _what = "communicator"

    def __init__(
        self,
        comm: Any = None,
        *,
        memory_limit: Size | None = None,
        spill_directory: Any = None,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        from mpi4py import MPI

        if comm is not None and not isinstance(comm, MPI.Comm):
            raise InvalidArgument(f"comm must be an mpi4py communicator, not {comm!r}")
        handle = MPI._handleof(comm if comm is not None else MPI.COMM_WORLD)
        with _keywords_in_errors():
            self._core = _core.MpiRank(handle, _options(memory_limit, spill_directory, options))
        self._shufflers: weakref.WeakSet[Shuffler] = weakref.WeakSet()

    @property
    def rank(self) -> int:
        """This process's rank."""
        return self._open().rank

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._open().size

    @property
    def figures(self) -> dict[str, int]:
        """Bytes spilled and read back, and the peak of each tier, on this rank."""
        return self._open().figures()

    def close(self) -> None:
        """Frees the duplicated communicator and the spill files. Idempotent. Call it when no call on
        its Shufflers runs on another thread.

        Raises:
            InvalidArgument: a Shuffler made on it is still open.
        """
        if self._core is None:
            return
        if any(shuffler._core is not None for shuffler in self._shufflers):
            raise InvalidArgument("close the communicator's Shufflers before the communicator")
        self._core.close()
        self._core = None


class Shuffler(_Closable["_core.TableShuffler"]):
    """One rank's part of a shuffle over an :class:`MpiCommunicator`.

    Every rank makes its shufflers in the same order, with the same
    ``partitions`` (a rank that learns another gave a different count raises
    InvalidArgument, or CorruptData where rows of a partition it does not own
    come first, and so do the ranks that wait for it), inserts any Arrow
    data (as :func:`shuffle` takes), all of one schema on every rank (a
    partition holding rows of another raises InvalidArgument where it is
    extracted), calls ``insert_finished`` once, then
    takes the partitions it owns (``local_partitions``, round-robin over
    ranks) with ``extract`` or by iterating. A partition no rank inserted rows for
    is an empty table with this rank's schema (no columns if this rank
    inserted nothing). ``options`` are shuffle options, over the
    communicator's; any other name raises InvalidArgument.
    """

    _what = "shuffler"

    def __init__(
        self,
        communicator: MpiCommunicator,
        key: str | Sequence[str],
        *,
        partitions: int = 64,
        options: Mapping[str, Any] | None = None,
    ) -> None:
        if not isinstance(communicator, MpiCommunicator):
            raise InvalidArgument(f"communicator must be a spillway.MpiCommunicator, not {communicator!r}")
        partitions = count_of("partitions", partitions, _core.MAX_PARTITIONS)
        own = {str(name): str(value) for name, value in mapping_of("options", options).items()}
        self._core = _core.TableShuffler(communicator._open(), names_of("key", key), partitions, own)
        communicator._shufflers.add(self)

    @property
    def local_partitions(self) -> list[int]:
        """The partitions this rank owns, in increasing order."""
        return self._open().local_partitions

    def insert(self, data: Any) -> None:
        """Inserts the rows of ``data`` (as :func:`shuffle` takes it, file paths too); any number of times,
        before ``insert_finished``. Small batches are held, within the memory limit, and sent together:
        once they fill 16 KiB per partition (at most an eighth of the limit), or at ``insert_finished``."""
        # No local holds the C++ shuffler: a traceback keeps its frames' locals,
        # and `close` must free it even while an error from here is handled.
        for stream in arrow_streams(data):
            if isinstance(stream, str):
                self._open().insert_file(stream)
            else:
                self._open().insert(stream)

    def insert_finished(self) -> None:
        """Ends this rank's input; partitions complete once every rank has called it."""
        self._open().insert_finished()

    def extract(self, partition: int) -> pa.Table:
        """Waits for ``partition``, which this rank owns, and returns its rows; once per partition."""
        if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
            raise InvalidArgument(f"partition must be a partition number from 0, not {partition!r}")
        return to_pyarrow(self._open().extract(partition))

    def __iter__(self) -> Iterator[tuple[int, pa.Table]]:
        """``(partition, table)`` for each partition this rank owns, in order."""
        for partition in self.local_partitions:
            yield partition, self.extract(partition)

    def close(self) -> None:
        """Ends this rank's part. Idempotent. Closed before it has taken every partition it owns, it gives
        the shuffle up: the other ranks fail naming it if they still wait for it (for its rows, or to send
        it theirs); ranks that have everything they need from it go on."""
        if self._core is not None:
            self._core.end_early_quietly()
        self._core = None

