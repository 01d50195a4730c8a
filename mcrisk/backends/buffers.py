"""The arrays a chunk loop hands its backend chunk after chunk, instead of new ones each time.

A chunk's node times (82 nodes x 5 strategies x 65,536 scenarios: 215 MB on the reference),
its world and its metrics were fresh arrays every chunk. Memory that large comes straight
from the OS and goes back to it when freed, so every chunk paid for the OS zeroing its pages
again, on first touch inside the kernel.

Performance: measured on the reference at 1,000,000 scenarios (Numba, 2 cores, one process
each, `mcrisk run`'s code path): system CPU 5.6-8.9 s with fresh arrays, 3.0-3.5 s with
the arrays reused, user CPU unchanged (about 40 s); the Linux kernel's page zeroing was
13% of all samples in `perf record` before.

A buffer's arrays are valid until the next request of the same name: a chunk hook that keeps
anything of a chunk copies it (each of mcrisk's hooks reduces or copies within its call).
metrics.parquet's writer takes the same kind of buffers for its copies of a chunk and for
the columns it builds (mcrisk.app.collect, mcrisk.report.tables.metrics_batch): fresh there,
they were a third of the page zeroing left in a 1e6 run (`perf record`).
"""
from __future__ import annotations

import numpy as np


class ChunkBuffers:
    """Named arrays reused from call to call; each request gets zeros of its shape.

        buffers = ChunkBuffers()
        node_times = buffers.zeros("node_times", (count, strategies, nodes))

    A request no larger than the storage kept under its name reuses it (the first elements,
    C-contiguous, in the shape asked for); a larger one replaces it. Zeroing reused memory
    costs the same writes as the OS's zeroing of fresh pages, without the page faults.
    """

    def __init__(self) -> None:
        self._storage: dict[str, np.ndarray] = {}

    def zeros(self, name: str, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        array, reused = self._take(name, shape, dtype)
        if reused:
            array.fill(0)
        return array

    def empty(self, name: str, shape: tuple[int, ...], dtype=np.float64) -> np.ndarray:
        """Like zeros, for a caller that writes every element: what the last request of
        `name` left in it is not cleared."""
        return self._take(name, shape, dtype)[0]

    def _take(self, name: str, shape: tuple[int, ...], dtype) -> tuple[np.ndarray, bool]:
        """The array for a request and whether its storage was reused (else new zeros)."""
        dtype = np.dtype(dtype)
        size = int(np.prod(shape, dtype=np.int64))
        kept = self._storage.get(name)
        if kept is None or kept.dtype != dtype or kept.size < size:
            kept = self._storage[name] = np.zeros(size, dtype=dtype)
            return kept.reshape(shape), False
        return kept[:size].reshape(shape), True

    def nbytes(self) -> int:
        """Bytes held (the largest chunk's arrays)."""
        return sum(a.nbytes for a in self._storage.values())
