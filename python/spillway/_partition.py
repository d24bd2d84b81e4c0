"""``spillway.partition``: the ``spillway partition`` job, from Python."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any, Union

from spillway import _core
from spillway._arguments import flag_value, mapping_of, names_of, path_of, size_of, without_comma
from spillway._errors import Error, InvalidArgument, VerificationFailed
from spillway._progress import Progress, callback_of
from spillway._summary import Summary

PathLike = Union[str, "os.PathLike[str]"]
Size = Union[str, int]


# pyarrow's names of the types spillway reads that differ from spillway's.
_PYARROW_TYPE_NAMES = {"double": "float64", "date32[day]": "date32", "large_string": "string",
                       "string_view": "string", "bool": "boolean"}
# pyarrow's names of timestamps, ``timestamp[us]`` or ``timestamp[ns, tz=Europe/Paris]``: any zone is UTC to spillway.
_PYARROW_TIMESTAMP = re.compile(r"timestamp\[(ms|us|ns)(, tz=.+)?\]")


def _type_name(column: Any, type_: Any) -> str:
    """Column ``column``'s type by spillway's name ("int64"), given as that or as a pyarrow type
    (``pa.float64()``). The tool names the types it does not know, but a name with a comma in it
    (``decimal128(15, 2)``) would reach it in pieces: such a type is refused here."""
    text = str(type_)
    if timestamp := _PYARROW_TIMESTAMP.fullmatch(text):
        return f"timestamp_{timestamp.group(1)}" + ("_utc" if timestamp.group(2) else "")
    if "," in text:
        raise InvalidArgument(f"schema: column {str(column)!r} is given the type {text}, which spillway does not "
                              "read from CSV")
    return _PYARROW_TYPE_NAMES.get(text, text)


def _in_keywords(message: str, flags: dict[str, Any]) -> str:
    """The tool's ``message`` in this function's terms: its keywords where it names flags, without the
    command line's ``--help`` hint or its origin."""
    message = message.replace("\nRun with --help for more information.", "").replace(" (from the command line)", "")
    names = {**{flag: flag.replace("-", "_") for flag in flags},
             "input": "inputs", "key": "key", "output": "output", "schema": "schema", "spill-dir": "spill_directory"}
    # Only flags: not "--" inside a path or a name the message quotes.
    return re.sub(r"(?<![\w/.-])--([a-z][a-z-]*)\b", lambda match: names.get(match.group(1), match.group(0)),
                  message)


def _duration_of(value: Any) -> Any:
    """A duration flag's value: a number of seconds as ``"<n>s"`` (in plain digits, never an exponent,
    which the tool does not read); anything else as it is."""
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value}s"
    if isinstance(value, float):
        return f"{value:.9f}s"
    return value


def partition(
    inputs: PathLike | Sequence[PathLike],
    key: str | int | Sequence[str | int],
    output: PathLike,
    *,
    partitions: int | None = None,
    ranks: int | None = None,
    comm: str | None = None,
    collective_timeout: str | float | None = None,
    reserve_timeout: str | float | None = None,
    memory_limit: Size | None = None,
    spill_directory: PathLike | None = None,
    codec: str | None = None,
    threads: int | None = None,
    window: int | None = None,
    input_format: str | None = None,
    output_format: str | None = None,
    compression: str | None = None,
    schema: Mapping[str, Any] | None = None,
    block_size: Size | None = None,
    delimiter: str | None = None,
    quote: str | None = None,
    header: bool | None = None,
    infer_rows: int | None = None,
    bad_rows: str | None = None,
    progress: Progress = False,
) -> Summary:
    """Repartitions files by the hash of key columns into one file per partition, verified.

    The job of ``spillway partition``, run in this process; each keyword is
    the flag of the same name (``memory_limit`` is ``--memory-limit``), and
    ``spillway partition --help`` says what each does. Unset keywords take
    the tool's defaults and ``SPILLWAY_*`` variables. Error messages name
    the keywords.

    Args:
        inputs: the files to read, all of one format (Parquet, Arrow IPC or
            CSV, told by extension unless ``input_format`` is given); quoted
            patterns such as ``"data/*.parquet"`` are expanded.
        key: the key column, or columns, by name or number from 0. As for
            the tool's ``--key``, a name comes first: ``1`` is the column
            named "1" where there is one (as pandas' default labels are
            written), else the second column.
        output: the directory for ``part-00000.parquet`` and so on; made if
            missing, and it must be empty. The files appear in it only once
            they are verified: a run that fails leaves it as it was.
        partitions: the number of partition files (default 64).
        ranks: in-process ranks (default 1). With more than one, each reads
            a share of the input (Parquet files by row group), the ranks
            shuffle the rows by key, spilling what does not fit into
            ``spill_directory`` (compressed with ``codec``), and each writes
            the partitions it owns: the same files, one open per rank.
        comm: ``"local"``, the only one from Python: the ranks are threads
            of this process. For ranks in several processes, run the tool:
            ``mpirun -np N spillway partition --comm mpi ...``.
        collective_timeout: how long a rank may send nothing before the job
            fails naming it: ``"60s"``, ``"2min"``, or seconds as a number.
        reserve_timeout: with ranks, how long work that waits for memory may
            see none freed or spilled before the job fails with
            :class:`OutOfMemory` (default ``"30s"``), given as
            ``collective_timeout`` is.
        memory_limit: what the job may use: bytes, ``"1GiB"`` or ``"25%"``
            of RAM (default 80%).
        schema: column types of CSV input, ``{"id": "int64"}``: ``int32``,
            ``int64``, ``float64``, ``date32``, ``string``, ``boolean``,
            ``timestamp_ms``, ``timestamp_us``, ``timestamp_ns`` or one of
            those with ``_utc``, or the pyarrow type of one of them
            (``pa.float64()``, ``pa.timestamp("us", tz="UTC")``).
        progress: ``True`` for tqdm bars, a callable taking
            ``(phase, done, total, unit, last)``, or ``False``.

    Returns:
        The run's :class:`Summary`.

    Raises:
        InvalidArgument: a bad argument (of the wrong type, or a file name
            or key holding a comma, which the tool's comma-separated lists
            would split), a missing input, a key that is not a column, a
            non-empty output directory, a memory limit too small (the message
            names the least that works), a column type spillway does not
            read, or a value its converted type cannot hold (a uint64 beyond
            int64, a decimal of more than 15 significant digits).
        IoError, CorruptData, OutOfMemory: the job failed while running.
        VerificationFailed: the files did not read back as written.
        KeyboardInterrupt: Ctrl-C during the call, raised once the job has
            run to its end; its verified files are kept.
    """
    if isinstance(inputs, (str, os.PathLike)):
        inputs = [inputs]
    try:
        input_list = list(inputs)
    except TypeError:
        raise InvalidArgument(f"inputs must be a path or a list of paths, not {inputs!r}") from None
    if not input_list:
        raise InvalidArgument("partition needs at least one input file")
    arguments = ["partition"]
    for path in input_list:
        arguments += ["--input", without_comma("the input", path_of("inputs", path))]
    keys = [without_comma("the key", name) for name in names_of("key", key, numbers=True)]
    arguments += ["--key", ",".join(keys), "--output", path_of("output", output)]
    flags = {
        "partitions": partitions,
        "ranks": ranks,
        "comm": comm,
        "collective-timeout": _duration_of(collective_timeout),
        "reserve-timeout": _duration_of(reserve_timeout),
        "memory-limit": memory_limit,
        "spill-dir": None if spill_directory is None else path_of("spill_directory", spill_directory),
        "codec": codec,
        "threads": threads,
        "window": window,
        "input-format": input_format,
        "output-format": output_format,
        "compression": compression,
        "block-size": block_size,
        "delimiter": delimiter,
        "quote": quote,
        "header": header,
        "infer-rows": infer_rows,
        "bad-rows": bad_rows,
    }
    for name, value in flags.items():
        if value is not None:
            keyword = name.replace("-", "_")
            sized = keyword in ("memory_limit", "block_size")
            arguments += [f"--{name}", size_of(keyword, value) if sized else flag_value(keyword, value)]
    if schema := mapping_of("schema", schema):
        types = [f"{without_comma('the schema column', str(column))}:{_type_name(column, type_)}"
                 for column, type_ in schema.items()]
        arguments += ["--schema", ",".join(types)]
    try:
        summary = Summary.from_json(_core.run_command(arguments, callback_of(progress)))
    except Error as error:
        error.args = (_in_keywords(str(error), flags),) + error.args[1:]
        raise

    if summary.verified is False:
        raise VerificationFailed("verification failed: " + "; ".join(summary.verification), summary)
    return summary
