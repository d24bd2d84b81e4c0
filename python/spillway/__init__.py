"""spillway: memory-bounded, multithreaded, distributed data shuffles.

- :func:`partition` repartitions Parquet, Arrow IPC or CSV files by key into
  one file per partition, verified, within a memory limit.
- :func:`shuffle` hash-partitions Arrow data (pyarrow, Polars, DuckDB, ...)
  among in-process ranks, spilling what does not fit, and hands back each
  partition as a pyarrow Table.
- :class:`Shuffler` does the same across the processes of an MPI job, over
  an :class:`MpiCommunicator` made from mpi4py's communicator.

Long calls release the GIL. Errors are :class:`Error` subclasses.
"""

from spillway._errors import (
    CorruptData,
    Error,
    InvalidArgument,
    IoError,
    OutOfMemory,
    PeerTimeout,
    ReservationError,
    VerificationFailed,
)
from spillway._partition import partition
from spillway._progress import ProgressCallback
from spillway._shuffle import MpiCommunicator, ShuffleResult, Shuffler, shuffle
from spillway._summary import Summary

__version__ = "0.1.0"

__all__ = [
    "CorruptData",
    "Error",
    "InvalidArgument",
    "IoError",
    "MpiCommunicator",
    "OutOfMemory",
    "PeerTimeout",
    "ProgressCallback",
    "ReservationError",
    "ShuffleResult",
    "Shuffler",
    "Summary",
    "VerificationFailed",
    "partition",
    "shuffle",
]
