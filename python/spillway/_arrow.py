"""Arrow data in and out of spillway, through the Arrow PyCapsule interface."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from spillway import _core
from spillway._errors import InvalidArgument


def arrow_streams(data: Any) -> Iterator[Any]:
    """``data`` as objects with ``__arrow_c_stream__`` and file paths, in order.

    ``data`` is an object with ``__arrow_c_stream__`` (a pyarrow Table or
    RecordBatchReader, a Polars DataFrame, a DuckDB relation, ...), one with
    only ``__arrow_c_array__`` (a record batch), the path of a Parquet, Arrow
    IPC or CSV file (a ``str`` or ``os.PathLike``, yielded as a string), or
    an iterable of any of these; not a mapping (a dict of columns), which
    pyarrow.table makes a table of.
    """
    if isinstance(data, (str, os.PathLike)):
        yield os.fspath(data)
    elif hasattr(data, "__arrow_c_stream__"):
        yield data
    elif hasattr(data, "__arrow_c_array__"):
        try:
            batch = pa.record_batch(data)
        except (pa.ArrowInvalid, TypeError) as error:
            raise InvalidArgument(f"expected a table or record batch, not a single column ({type(data).__name__}): "
                                  f"{error}") from None
        yield pa.Table.from_batches([batch])
    elif isinstance(data, (bytes, Mapping)) or not hasattr(data, "__iter__"):
        raise InvalidArgument(
            "expected Arrow data (an object with __arrow_c_stream__ or __arrow_c_array__, such as a pyarrow "
            "Table, RecordBatch or RecordBatchReader, or a Polars DataFrame), a file path, or an iterable of "
            f"them, not {type(data).__name__}"
            + (" (make a table of a dict of columns with pyarrow.table)" if isinstance(data, Mapping) else "")
            + (" (a lazy query: collect() it, or stream it with collect_batches() or sink it to a file)"
               if hasattr(data, "collect") else "")
        )
    else:
        for item in data:
            yield from arrow_streams(item)


def to_pyarrow(table: _core.ExportableTable | None) -> pa.Table:
    """``table`` as a pyarrow Table over the same buffers; an empty one with no columns for None."""
    if table is None:
        return pa.table({})
    return pa.Table.from_batches([pa.record_batch(table)])
