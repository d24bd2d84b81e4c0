"""Checks of the arguments the public functions take: a wrong type or value is an InvalidArgument naming it."""

from __future__ import annotations

import operator
import os
from collections.abc import Iterable, Mapping
from typing import Any

from spillway._errors import InvalidArgument


def path_of(name: str, value: Any) -> str:
    """``value``, a ``str`` or ``os.PathLike``, as a string."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise InvalidArgument(f"{name} must be a path (a str or os.PathLike), not {value!r}")


def _name(item: Any, numbers: bool) -> str | None:
    """``item`` as a column name: a string, or with ``numbers`` an integer (numpy's too); None otherwise."""
    if isinstance(item, str):
        return item
    if numbers and not isinstance(item, bool):
        try:
            return str(operator.index(item))
        except TypeError:
            return None
    return None


def names_of(name: str, value: Any, *, numbers: bool = False) -> list[str]:
    """``value``, one column name (or number from 0, with ``numbers``) or a non-empty iterable of them (a list,
    a tuple, a pandas Index, ...), as strings."""
    what = "a column name or number" if numbers else "a column name"
    single = _name(value, numbers)
    if single is not None:
        return [single]
    items = list(value) if isinstance(value, Iterable) and not isinstance(value, (str, bytes)) else []
    names = [_name(item, numbers) for item in items]
    if not names or any(item is None for item in names):
        raise InvalidArgument(f"{name} must be {what} or a non-empty list of them, not {value!r}")
    return [item for item in names if item is not None]


def mapping_of(name: str, value: Any) -> Mapping[Any, Any]:
    """``value``, a mapping, or an empty one for None."""
    if value is None:
        return {}
    if isinstance(value, Mapping):
        return value
    raise InvalidArgument(f"{name} must be a mapping (a dict), not {value!r}")


def without_comma(name: str, text: str) -> str:
    """``text``, which the tool's command line must not split at a comma."""
    if "," in text:
        raise InvalidArgument(f"{name} {text!r} holds a comma, which spillway takes to separate items; "
                              "rename it")
    return text


def count_of(name: str, value: Any, maximum: int) -> int:
    """``value``, an integer from 1 to ``maximum``."""
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= maximum:
        raise InvalidArgument(f"{name} must be an integer from 1 to {maximum}, not {value!r}")
    return value


def size_of(name: str, value: Any) -> str:
    """``value``, a size: a string such as ``"1GiB"`` or ``"25%"``, or an integer number of bytes (numpy's
    too), as text."""
    if isinstance(value, str):
        return value
    if not isinstance(value, bool):
        try:
            return str(operator.index(value))
        except TypeError:
            pass
    raise InvalidArgument(f"{name} must be a size: a string such as '1GiB' or '25%', or an integer number "
                          f"of bytes, not {value!r}")


def flag_value(name: str, value: Any) -> str:
    """The text of a flag's value: a string, an integer, or a bool as ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    raise InvalidArgument(f"{name} must be a string or an integer, not {value!r}")
