"""numpy.quantile's default method, one value at a time: where the quantile falls among the
sorted values and how it interpolates, the same operations in the same order, so that a
percentile read off a few order statistics equals numpy.quantile's to the bit.

At the bottom of results: the summaries (statistics) and the paired tests (paired) both
take their quantiles from here.
"""
from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator

import numpy as np


def quantile_position(n: int, q: float) -> tuple[int, int, float]:
    """(previous, next, gamma) of numpy.quantile's default 'linear' method for n values."""
    virtual = (n - 1) * q                       # numpy: (n - 1) * quantiles
    if virtual >= n - 1:                        # numpy: both neighbours are index -1, the
        return n - 1, n - 1, virtual - (-1)     # last value, and gamma is taken from -1
    previous = int(np.floor(virtual))
    return previous, previous + 1, virtual - previous


def lerp(a: float, b: float, t: float) -> float:
    """numpy's _lerp, the same operations in the same order (so the same float)."""
    a, b = np.float64(a), np.float64(b)
    diff_b_a = b - a
    if t >= 0.5:
        return float(b - diff_b_a * (1 - t))
    return float(a + diff_b_a * t)


def order_statistics(values: np.ndarray, ranks, other: np.ndarray | None = None,
                     overwrite: bool = False) -> np.ndarray:
    """numpy.sort(values)[ranks] (NaN sorts last; ranks 0-based, negative from the end as in
    numpy), of `values` and `other` read as one array when `other` is given
    (numpy.concatenate([values, other])); an IndexError for a rank out of range.

    The specification is that line. Performance: a column of at least
    core.tasks.COMPILED_FROM values goes through compiled loops (results.selection: two
    passes, no sort of the whole column) that give the same values; smaller ones are sorted,
    cheaper than loading those loops from Numba's cache, and with `overwrite` (a 1-D array
    the caller no longer needs in its order) sorted in place, without a copy."""
    values = np.asarray(values, dtype=np.float64)
    other = None if other is None else np.asarray(other, dtype=np.float64).ravel()
    ranks = np.asarray(ranks, dtype=np.int64)
    size = values.size + (0 if other is None else other.size)
    select = _compiled_selection() if size >= compiled_from() else None
    if select is not None:
        wanted = np.where(ranks < 0, ranks + size, ranks).ravel()
        if wanted.size and not (0 <= wanted.min() and wanted.max() < size):
            raise IndexError(f"rank out of range for {size} values: {ranks.tolist()}")
        ascending = np.unique(wanted)            # the selection walks ranks in order
        known = remembered("ranks", values, other)
        if known is not None:
            missing = np.array([r for r in ascending.tolist() if r not in known], np.int64)
        else:
            missing = ascending
        out = np.empty(missing.size)
        if missing.size:
            select(np.ascontiguousarray(values).ravel(),
                   np.empty(0) if other is None else other, missing, out)
        if known is not None:
            known.update(zip(missing.tolist(), out.tolist()))
            out = np.array([known[r] for r in ascending.tolist()], np.float64)
        return out[np.searchsorted(ascending, wanted)].reshape(ranks.shape)
    if other is not None:
        return np.sort(np.concatenate([values.ravel(), other]))[ranks]
    if overwrite and values.flags.writeable and values.ndim == 1:
        values.sort()
        return values[ranks]
    return np.sort(values.ravel())[ranks]


class _Remembered:
    """What was computed so far of the columns of some arrays (shared_order_statistics):
    {(kind, column keys): {...}}, a column being a 1-D view into one of the arrays; kind
    "ranks": {rank: value} of a column, or of two read as one (a pooled quantile)."""

    def __init__(self, arrays):
        self.arrays = [a for a in arrays if isinstance(a, np.ndarray)]
        self.values: dict[tuple, dict[int, float]] = {}

    def _key(self, view) -> tuple | None:
        if view is None:
            return ()
        if not isinstance(view, np.ndarray) or view.ndim != 1 or view.flags.writeable:
            return None
        at = view.__array_interface__["data"][0]
        for k, array in enumerate(self.arrays):
            start = array.__array_interface__["data"][0]
            if start <= at < start + array.nbytes:
                return (k, at - start, view.strides, view.shape)
        return None

    def of(self, kind: str, *views) -> dict | None:
        """What is known of `kind` about these columns (order_statistics: {rank: value} of
        `values` and `other` read as one), None when one is not a column of the arrays."""
        key = (kind, *(self._key(view) for view in views))
        if None in key:
            return None
        return self.values.setdefault(key, {})


def remembered(kind: str, *views) -> dict | None:
    """Inside shared_order_statistics, the dict in which what is computed of `kind` about
    these columns of its arrays (1-D views; None for a missing one) is kept for the block;
    None outside it, or where a view is not such a column."""
    memo = _SHARED.get()
    return None if memo is None else memo.of(kind, *views)


_SHARED: contextvars.ContextVar[_Remembered | None] = contextvars.ContextVar(
    "shared_order_statistics", default=None)


@contextlib.contextmanager
def shared_order_statistics(*arrays) -> Iterator[None]:
    """Within the block (in this thread), order_statistics remembers what it reads of the
    columns of `arrays` (None is skipped: a run's metrics, costs, jobs), so that a rank of a
    column read once, by the summary say, is not selected again by the report, the findings
    or the Pareto frontier: each column is selected once for the ranks nobody asked for
    before. The arrays are read-only inside the block (the values stay what was read) and
    writable again after it, where they were. Only the compiled selections (columns of
    core.tasks.COMPILED_FROM values or more) are remembered: a smaller column is sorted, as
    cheap as looking it up. The values are those a selection gives, rank by rank, whichever
    ranks are asked together, so the numbers are the same with or without the block.

    Performance: a run of the reference at 10^6 scenarios selected 174 times on columns of
    10^6 values after the chunk loop, ~12 ms each (the strided column's copy included);
    in this block 105 times, the rest asked for ranks read before (the report's CPU time
    4.7 -> 3.4 s in the chunk loop's layout; benchmarks/bench_after_loop.py)."""
    arrays = [a for a in arrays if isinstance(a, np.ndarray)]
    writable = [a for a in arrays if a.flags.writeable]
    for array in writable:
        array.flags.writeable = False
    token = _SHARED.set(_Remembered(arrays))
    try:
        yield
    finally:
        _SHARED.reset(token)
        for array in writable:
            array.flags.writeable = True


def compiled_from() -> int:
    """core.tasks.COMPILED_FROM (the fewest scenarios the compiled loops of results take), or
    never where Numba cannot be imported (core.tasks needs it)."""
    # lazily: a summary of a few values (and `mcrisk validate`) never loads Numba
    import importlib.util

    from ..core.tasks import COMPILED_FROM

    if importlib.util.find_spec("numba") is None:
        return np.iinfo(np.int64).max
    return COMPILED_FROM


def _compiled_selection():
    """results.selection.select_ranks (None where Numba cannot be imported)."""
    try:
        from .selection import select_ranks
    except ImportError:
        return None
    return select_ranks


def inverted_cdf_ranks(n: int, levels) -> np.ndarray:
    """The 0-based ranks numpy.quantile(method='inverted_cdf') reads for n values at `levels`
    (an array), by numpy's own steps: index n q - 1, its floor where that is exact, else
    the next rank, never below 0."""
    index = n * np.asarray(levels, dtype=np.float64) - 1
    previous = np.floor(index)
    ranks = np.where(index - previous == 0, previous, previous + 1).astype(np.intp)
    ranks[ranks < 0] = 0
    return ranks


def inverted_cdf_quantiles(values: np.ndarray, levels) -> np.ndarray:
    """numpy.quantile(values, levels, method='inverted_cdf') of a 1-D array (all NaN when a
    value is NaN, as numpy's), from order_statistics: no sort of a large column."""
    values = np.asarray(values, dtype=np.float64)
    levels = np.asarray(levels, dtype=np.float64)
    ranks = inverted_cdf_ranks(values.size, levels.ravel())
    wanted = np.unique(np.append(ranks, values.size - 1))   # the last: NaN sorts there
    at = order_statistics(values, wanted)
    if np.isnan(at[-1]):
        return np.full(levels.shape, np.nan)
    return at[np.searchsorted(wanted, ranks)].reshape(levels.shape)


def linear_quantile(values: np.ndarray, q: float, other: np.ndarray | None = None) -> float:
    """numpy.quantile(values, q) (the default 'linear' method; NaN when a value is NaN),
    from the order statistics beside it (order_statistics, quantile_position, lerp); of
    `values` and `other` pooled when `other` is given, without a pooled copy."""
    values = np.asarray(values, dtype=np.float64)
    n = values.size + (0 if other is None else np.size(other))
    if n == 0:
        return float(np.quantile(values, q))      # numpy's own answer to nothing
    previous, following, gamma = quantile_position(n, q)
    wanted = sorted({previous, following, n - 1})
    at = dict(zip(wanted, order_statistics(values, wanted, other)))
    if np.isnan(at[n - 1]):
        return float("nan")
    with np.errstate(invalid="ignore", over="ignore"):      # inf - inf: NaN, as numpy's
        return lerp(at[previous], at[following], gamma)
