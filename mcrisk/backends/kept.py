"""Where a run keeps its per-scenario results: in memory, or, for a very large run, in a file.

A run keeps every scenario's metrics, cost columns and job columns for the analysis after the
simulation (percentiles and their intervals, the paired tests, costs, jobs, the Pareto front).
At 1e7 scenarios x 5 strategies of the priced reference that is 15 columns x 8 bytes x 5e7 =
6 GB. Up to IN_MEMORY_BYTES of them (all three arrays together), when the run fits in memory
with them there (mcrisk.backends.chunks.results_in_memory), they are ordinary arrays; else
each array lives in an anonymous temporary file mapped into memory (numpy.memmap of
tempfile.TemporaryFile: the file has no name, so the operating system removes it when the
run ends, however it ends, a kill included), laid out column by column: the analysis reads
one metric of one strategy at a time, and such a column is then one contiguous run of the
file. The pages of a mapped file are the page cache's, which the system writes back and
drops under memory pressure, so the run's own memory stays bounded by the chunk and the
reductions, not by the scenarios; the numbers are the same bit for bit (only where the
values live differs: tests/backends/test_kept.py).

The file goes in the temporary directory (TMPDIR, else the system's); a run whose kept
results would not fit in its free space is refused before it starts (check_disk).
"""
from __future__ import annotations

import shutil
import tempfile

import numpy as np

from ..core.errors import McriskError

IN_MEMORY_BYTES = 1_000_000_000     # kept per-scenario results past this live in a file
DISK_SHARE = 0.9                    # refuse a file larger than this share of the free space


def kept_bytes(samples: int, strategies: int, columns: int) -> int:
    """Bytes of the kept per-scenario results: samples x strategies x columns x 8."""
    return int(samples) * int(strategies) * int(columns) * 8


def small_enough(nbytes: int) -> bool:
    """Whether `nbytes` of kept results may stay in memory (at most IN_MEMORY_BYTES)."""
    return nbytes <= IN_MEMORY_BYTES


def kept_array(samples: int, strategies: int, columns: int, in_file: bool,
               column_major: bool = False) -> np.ndarray:
    """An unfilled float64[samples, strategies, columns]: an ordinary array (with
    `column_major` in Fortran order, each [:, s, k] contiguous, as the analysis after a run
    reads it: mcrisk.app.run.by_column), or with `in_file` a view of a file-backed array
    stored column-major (each [:, s, k] contiguous)."""
    if not in_file:
        return np.empty((samples, strategies, columns), order="F" if column_major else "C")
    handle = tempfile.TemporaryFile(prefix="mcrisk-kept-")
    stored = np.memmap(handle, dtype=np.float64, mode="w+",
                       shape=(strategies, columns, samples))
    handle.close()              # the mapping keeps the nameless file until it is dropped
    return stored.transpose(2, 0, 1)


def scratch_folder() -> str:
    """The folder the files of kept results go in: tempfile's (TMPDIR, else the system's)."""
    return tempfile.gettempdir()


def check_disk(needed: int, option: str, free: int | None = None) -> None:
    """Refuse a run whose kept results (`needed` bytes, in files) would not fit in the
    scratch folder's free space: McriskError naming the option, the folder and the fix."""
    folder = scratch_folder()
    if free is None:
        try:
            free = shutil.disk_usage(folder).free
        except OSError:
            return
    if needed <= DISK_SHARE * free:
        return
    raise McriskError(
        f"{option}: this run keeps {needed / 1e9:,.1f} GB of per-scenario results, too "
        f"many to hold in memory, in a temporary file in {folder}, which has "
        f"{free / 1e9:,.1f} GB free (make room there, point TMPDIR at a folder with "
        f"{needed / DISK_SHARE / 1e9:,.1f} GB free, or run fewer scenarios)")


def describe(array: np.ndarray | None) -> str:
    """'memory' or 'file' for a kept array (None: 'memory')."""
    base = array
    while base is not None and not isinstance(base, np.memmap):
        base = base.base if isinstance(base, np.ndarray) else None
    return "file" if base is not None else "memory"

