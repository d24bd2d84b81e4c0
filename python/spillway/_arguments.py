"""Checks of the arguments the public functions take: a wrong type or value is an InvalidArgument naming it."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from spillway._errors import InvalidArgument


def path_of(name: str, value: Any) -> str:
    """``value``, a ``str`` or ``os.PathLike``, as a string."""
    if isinstance(value, (str, os.PathLike)):
        return os.fspath(value)
    raise InvalidArgument(f"{name} must be a path (a str or os.PathLike), not {value!r}")


def names_of(name: str, value: Any, *, numbers: bool = False) -> list[str]:
    """``value``, one column name (or number from 0, with ``numbers``) or a non-empty sequence of them, as strings."""
    kinds = (str, int) if numbers else (str,)
    what = "a column name or number" if numbers else "a column name"
    items = [value] if isinstance(value, kinds) else value
    if not isinstance(items, Sequence) or isinstance(items, (str, bytes)) or not items:
        raise InvalidArgument(f"{name} must be {what} or a non-empty list of them, not {value!r}")
    for item in items:
        if isinstance(item, bool) or not isinstance(item, kinds):
            raise InvalidArgument(f"{name} must be {what} or a non-empty list of them, not {value!r}")
    return [str(item) for item in items]


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


def flag_value(name: str, value: Any) -> str:
    """The text of a flag's value: a string, an integer, or a bool as ``true``/``false``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, str)):
        return str(value)
    raise InvalidArgument(f"{name} must be a string or an integer, not {value!r}")
