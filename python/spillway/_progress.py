"""Progress of long calls: a callback, or tqdm bars."""

from __future__ import annotations

from typing import Callable, Optional, Union

#: Called as ``callback(phase, done, total, unit, last)``: the phase's name,
#: the units done, the total (0 if unknown), ``"bytes"`` or ``"items"``, and
#: whether this is the phase's last call. Called at most every 100 ms per
#: phase, from spillway's threads, one call at a time.
ProgressCallback = Callable[[str, int, int, str, bool], None]

Progress = Union[bool, ProgressCallback]


class _TqdmBars:
    """One tqdm bar per phase, each closed at its phase's last call."""

    def __init__(self) -> None:
        try:
            from tqdm.auto import tqdm
        except ImportError as error:
            raise ImportError("progress=True needs tqdm: pip install 'spillway[progress]' or tqdm") from error
        self._tqdm = tqdm
        self._bar = None
        self._phase = ""

    def __call__(self, phase: str, done: int, total: int, unit: str, last: bool) -> None:
        if self._bar is None or phase != self._phase:
            if self._bar is not None:
                self._bar.close()
            bytes_unit = unit == "bytes"
            self._bar = self._tqdm(desc=phase, total=total or None, unit="B" if bytes_unit else "it",
                                   unit_scale=bytes_unit, unit_divisor=1024)
            self._phase = phase
        self._bar.update(done - self._bar.n)
        if last:
            self._bar.close()
            self._bar = None


def callback_of(progress: Progress) -> Optional[ProgressCallback]:
    """The callback that reports ``progress``: nothing for ``False``, tqdm bars for ``True``."""
    if progress is True:
        return _TqdmBars()
    if progress is False or progress is None:
        return None
    if not callable(progress):
        from spillway._errors import InvalidArgument

        raise InvalidArgument(f"progress must be True, False or a callable, not {progress!r}")
    return progress
