"""What a job reports when it ends."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass(frozen=True)
class Summary:
    """The figures of one run of a job, as ``spillway <command> --json`` prints them.

    Sizes are in bytes, times in seconds. ``peak_memory`` maps a tier
    (``"HOST"``, ``"DISK"``) to ``{"limit": bytes per rank, "ranks": [peak of
    each rank]}`` for the jobs whose ranks hold their data in memory tiers
    (``partition`` on several ranks, ``shuffle``, ``tpch``); it is empty for
    ``partition`` on one rank, which plans its memory up front instead.
    ``peak_resident_bytes`` is the process's peak resident set so far (in
    Python, the interpreter's too).
    """

    command: str
    verified: bool | None
    settings: dict[str, Any]
    rows: int
    bytes: int
    seconds: float
    throughput_bytes_per_second: float
    phases: dict[str, float]
    spilled_bytes: int
    read_back_bytes: int
    peak_memory: dict[str, dict[str, Any]]
    peak_resident_bytes: int
    verification: list[str] = field(default_factory=list)
    skipped_rows: int | None = None
    sent_bytes: int | None = None

    @classmethod
    def from_json(cls, text: str) -> Summary:
        """The summary in ``text``, one JSON object of the tool's ``--json``; keys it has no field for
        (``exit_code``, ``error``) are left out."""
        values = json.loads(text)
        return cls(**{f.name: values[f.name] for f in fields(cls) if f.name in values})
