"""The milestones' bounded histograms (results.milestones._Bins, compiled in
results.milestone_chunks) against a slow obvious implementation: every time binned at once by
the rule the docs give, then each order statistic read off the sorted times."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mcrisk.results.milestones import BIN_DAYS, _Bins, bins_per_milestone, exact_scenarios


def _slow(column: np.ndarray, n_bins: int, ranks) -> tuple[int, list[float]]:
    """(exponent, the times at `ranks`) by the documented rule, one milestone, all at once:
    the smallest exponent e whose bins floor(t / 0.01) >> e of the finite times span at most
    n_bins; a rank's time is its bin's smallest time when first in the bin, the largest
    when last, else the bin's middle held between them; +inf past the finite times."""
    finite = np.sort(column[np.isfinite(column)])
    base = [math.floor(t / BIN_DAYS) for t in finite]
    e = 0
    while base and (base[-1] >> e) - (base[0] >> e) + 1 > n_bins:
        e += 1
    out = []
    for rank in ranks:
        if rank >= finite.size:
            out.append(math.inf)
            continue
        b = base[rank] >> e
        members = [r for r in range(finite.size) if base[r] >> e == b]
        if rank == members[0]:
            out.append(float(finite[rank]))
        elif rank == members[-1]:
            out.append(float(finite[rank]))
        else:
            middle = (b + 0.5) * (BIN_DAYS * 2.0 ** e)
            out.append(min(max(middle, float(finite[members[0]])),
                           float(finite[members[-1]])))
    return e, out


def _columns(rng: np.random.Generator, n: int) -> np.ndarray:
    """[n, 5] times of five shapes: a lognormal tail (widens the bins), integers (atoms at
    bin edges), a point mass, times before day 0, and one with non-finite times."""
    out = np.c_[np.exp(rng.normal(5.0, 0.8, n)), np.round(rng.uniform(0, 60, n)),
                np.full(n, 42.0), rng.normal(-3.0, 2.0, n), rng.gamma(3.0, 20.0, n)]
    out[rng.integers(0, n, max(1, n // 50)), 4] = np.inf
    out[rng.integers(0, n, 2), 4] = np.nan
    return out


def _fill(values: np.ndarray, n_bins: int, chunks) -> _Bins:
    bins = _Bins(values.shape[1], BIN_DAYS, n_bins)
    start = 0
    for size in chunks:
        bins.add(values[start:start + size].T.copy())
        start += size
    assert start == values.shape[0]
    return bins


@pytest.mark.parametrize("n_bins", [64, 1_024, 32_768])
def test_order_statistics_equal_the_slow_rule(n_bins):
    rng = np.random.default_rng(n_bins)
    values = _columns(rng, 3_000)
    ranks = [0, 1, 299, 1_500, 2_700, 2_931, 2_999]
    bins = _fill(values, n_bins, [1_000, 7, 993, 1_000])
    got = bins.order_statistics(ranks)
    for k in range(values.shape[1]):
        e, expected = _slow(values[:, k], n_bins, ranks)
        assert bins.exponent[k] == e, k
        assert got[k].tolist() == expected, k
    assert got[2].tolist() == [42.0] * len(ranks)             # a point mass stays exact
    assert bins.non_finite[4] == np.count_nonzero(~np.isfinite(values[:, 4]))


def test_the_histogram_is_the_same_for_any_chunking():
    values = _columns(np.random.default_rng(3), 5_000)
    one = _fill(values, 128, [5_000])
    for chunks in ([1] * 20 + [4_980], [2_500, 2_500], [17] * 294 + [2]):
        other = _fill(values, 128, chunks)
        for name in ("exponent", "origin", "used", "counts", "non_finite"):
            np.testing.assert_array_equal(getattr(other, name), getattr(one, name), name)
        occupied = one.counts > 0
        np.testing.assert_array_equal(other.low[occupied], one.low[occupied])
        np.testing.assert_array_equal(other.high[occupied], one.high[occupied])


def test_quantiles_follow_numpys_linear_rule_within_half_a_bin():
    values = _columns(np.random.default_rng(9), 2_001)[:, :4]
    bins = _fill(values, 512, [700, 700, 601])
    table = bins.quantiles(2_001, [0.1, 0.5, 0.9, 0.37])
    for k in range(4):
        for j, q in enumerate([0.1, 0.5, 0.9, 0.37]):
            assert abs(table[j, k] - np.quantile(values[:, k], q)) <= bins.widths()[k] / 2 + 1e-9


def test_budgets_bound_the_store_by_the_plans_size():
    assert exact_scenarios(476) == 25_000 and bins_per_milestone(476) == 32_768
    assert exact_scenarios(30_830) == 1_037 and bins_per_milestone(30_830) == 1_037
    assert exact_scenarios(10**9) == 1_000 and bins_per_milestone(10**9) == 256


def test_bins_widen_exactly_when_the_times_outgrow_them():
    """64 bins hold times from bin 0 to bin 63 at 0.01 day; one more bin widens them to
    0.02 day, and the widened table is what the times would give at once."""
    fits = np.array([[0.005, 0.3, 0.635]])
    bins = _Bins(1, BIN_DAYS, 64)
    bins.add(fits.copy())
    assert (bins.exponent[0], bins.origin[0], bins.used[0]) == (0, 0, 64)
    bins.add(np.array([[0.645]]))
    assert (bins.exponent[0], bins.origin[0], bins.used[0]) == (1, 0, 33)
    assert bins.counts[0, :33].sum() == 4 and bins.counts[0, 0] == 1
    assert bins.counts[0, 31] == 1 and bins.counts[0, 32] == 1     # 0.635 (bin 63 >> 1)
    bins.add(np.array([[-0.005]]))                                  # bin -1 >> 1 = -1
    assert (bins.exponent[0], bins.origin[0], bins.used[0]) == (1, -1, 34)
    assert bins.order_statistics([0, 4]).tolist() == [[-0.005, 0.645]]
