"""The exceptions spillway raises: every one is a :class:`spillway.Error`."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from spillway._summary import Summary


class Error(Exception):
    """Base of every error spillway raises. Its message says what to change."""


class InvalidArgument(Error, ValueError):
    """An argument, option value or call order is invalid (API misuse too)."""


class OutOfMemory(Error, MemoryError):
    """A memory limit cannot be met, even after spilling."""


class ReservationError(Error):
    """A memory reservation was misused (an internal error, worth reporting)."""


class IoError(Error, OSError):
    """The operating system refused a file operation; the message names the path."""


class CorruptData(Error):
    """Data is malformed, truncated, or failed its checksum; the message says where."""


class PeerTimeout(Error, TimeoutError):
    """A peer rank sent nothing for longer than its timeout: it stopped or hangs."""


class VerificationFailed(Error):
    """A job ran, but reading its output back found it wrong; nothing was kept.

    ``summary`` holds the run's figures and what verification found.
    """

    def __init__(self, message: str, summary: Summary) -> None:
        super().__init__(message)
        self.summary = summary
