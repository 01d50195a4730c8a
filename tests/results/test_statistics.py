"""Summary statistics (mcrisk.results.statistics): numpy.quantile percentiles, the one
quantile-interval rule (against an exact binomial computation and scipy), P90 CI coverage,
strict JSON (the ranking: tests/results/test_ranking.py)."""
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mcrisk.results.statistics import (metric_summary, p90_ci_min_samples, p90_confidence_interval,
                              quantile_ci, quantile_ci_min_samples, quantile_ci_ranks, summarize)


def test_percentiles_are_numpy_quantile_defaults():
    values = np.random.default_rng(0).lognormal(size=999)
    s = metric_summary(values)
    assert s["mean"] == pytest.approx(values.mean())
    for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        assert s[key] == np.quantile(values, q)


def test_p90_ci_is_the_binomial_order_statistic_interval():
    # n = 10^4: the 95% interval spans about +-1.96 x sqrt(n x 0.9 x 0.1) = +-59 ranks around 9000.
    values = np.random.default_rng(1).random(10_000)
    low, high = p90_confidence_interval(values)
    ordered = np.sort(values)
    low_rank = np.searchsorted(ordered, low)
    high_rank = np.searchsorted(ordered, high)
    assert 8930 <= low_rank <= 8950 and 9050 <= high_rank <= 9070


def test_p90_ci_covers_the_true_quantile_95_percent_of_the_time():
    gen = np.random.default_rng(2)
    truth = -np.log(0.1)              # P90 of Exponential(1)
    trials = 400
    covered = sum(low <= truth <= high for low, high in
                  (p90_confidence_interval(gen.exponential(size=500)) for _ in range(trials)))
    assert 0.92 * trials <= covered <= 0.99 * trials


def test_degenerate_metric_has_a_point_ci():
    assert p90_confidence_interval(np.zeros(100)) == (0.0, 0.0)


def test_the_p90_interval_needs_36_scenarios_as_scipy_says():
    # the upper end exists once 0.9^n <= 0.025: n >= log(0.025) / log(0.9) = 35.01
    assert p90_ci_min_samples() == math.ceil(math.log(0.025) / math.log(0.9)) == 36
    for n, exists in ((35, False), (36, True)):
        values = np.random.default_rng(n).random(n)
        ci = stats.quantile_test(values, q=np.quantile(values, 0.9), p=0.9).confidence_interval(0.95)
        assert bool(np.isfinite([ci.low, ci.high]).all()) == exists
        assert (p90_confidence_interval(values) is not None) == exists
    # equal values give a point interval only where an interval exists at all
    assert p90_confidence_interval(np.zeros(35)) is None
    assert p90_confidence_interval(np.zeros(36)) == (0.0, 0.0)


@pytest.mark.parametrize("n", [1, 2, 20, 35])
def test_too_few_scenarios_give_a_null_interval_with_the_reason(n):
    summary = metric_summary(np.arange(n, dtype=float))
    assert summary["p90_ci"] is None
    assert summary["p90_ci_unavailable"] == (
        f"too few scenarios: a 95% interval of the P90 needs at least 36, this run has {n}")
    json.dumps(summary, allow_nan=False)              # strict JSON: raises on NaN


def test_huge_and_infinite_values_give_finite_statistics_or_null():
    huge = metric_summary(np.full(40, 1e308))         # the plain sum overflows
    assert huge["mean"] == pytest.approx(1e308) and huge["p90_ci"] == [1e308, 1e308]
    with_inf = metric_summary(np.array([1.0] * 39 + [np.inf]))
    assert with_inf["mean"] is None and with_inf["p99"] is None and with_inf["p50"] == 1.0
    assert with_inf["p90_ci"] is None and with_inf["p90_ci_unavailable"]
    json.dumps([huge, with_inf], allow_nan=False)


def test_power_violation_is_a_probability():
    metrics = np.zeros((100, 1, 6))
    metrics[:25, 0, 5] = 1.0
    summary = summarize(metrics, ("a",))
    assert summary["a"]["power_violation"] == {"probability": 0.25}


def _exact_ranks(n: int, q: float, confidence: float = 0.95):
    """The interval's 0-based ranks from the binomial distribution in exact rational arithmetic
    (no scipy): B ~ Bin(n, q) values fall below the true quantile, X(k) (1-based) lies below it
    when B >= k. The lower end is the largest rank that misses below with probability under
    a = (1 - confidence) / 2, the upper end the smallest that misses above with at most a.
    Also returns the exact coverage P(low + 1 <= B <= high). None when an end does not exist."""
    q, a = Fraction(str(q)), (1 - Fraction(str(confidence))) / 2
    # integer numerators over the common denominator q.denominator ** n, summed once
    num, den = q.numerator, q.denominator
    total = den ** n
    cdf, running = [], 0
    for k in range(n + 1):
        running += math.comb(n, k) * num ** k * (den - num) ** (n - k)
        cdf.append(Fraction(running, total))
    low = next(k for k in range(n + 1) if cdf[k] >= a) - 1       # 0-based rank
    high = next(k for k in range(n + 1) if 1 - cdf[k] <= a)
    if low < 0 or high >= n:
        return None
    return (low, high), cdf[high] - cdf[low]


@pytest.mark.parametrize("q, n", [(0.9, 35), (0.9, 36), (0.9, 37), (0.9, 59), (0.9, 100),
                                  (0.9, 1000), (0.5, 5), (0.5, 6), (0.5, 7), (0.5, 101),
                                  (0.99, 367), (0.99, 368), (0.99, 1000), (0.1, 36), (0.1, 35)])
def test_quantile_ci_ranks_are_the_exact_binomial_ranks(q, n):
    exact = _exact_ranks(n, q)
    got = quantile_ci_ranks(n, q, 0.95)
    if exact is None:
        assert got is None
        return
    ranks, coverage = exact
    assert got == ranks
    assert coverage >= Fraction(95, 100)          # the interval holds the quantile >= 95%


@pytest.mark.parametrize("q, needed", [(0.9, 36), (0.5, 6), (0.99, 368), (0.1, 36)])
def test_the_minimum_sample_count_is_where_both_ends_first_exist(q, needed):
    # 0.9^35 = 0.0250 > 0.025 >= 0.9^36; 0.5^5 > 0.025 > 0.5^6; 0.99^367 > 0.025 > 0.99^368
    assert quantile_ci_min_samples(q, 0.95) == needed
    assert _exact_ranks(needed - 1, q) is None and _exact_ranks(needed, q) is not None
    assert quantile_ci_ranks(needed - 1, q) is None and quantile_ci_ranks(needed, q) is not None
    assert quantile_ci(np.zeros(needed - 1), q) is None          # equal values: no shortcut
    assert quantile_ci(np.zeros(needed), q) == (0.0, 0.0)


@pytest.mark.parametrize("q", [0.5, 0.9, 0.99])
@pytest.mark.parametrize("n", [400, 2_345])
def test_quantile_ci_is_scipys_quantile_test_interval(q, n):
    values = np.random.default_rng(n).lognormal(size=n)
    values[::97] = np.round(values[::97])                         # ties too
    ci = stats.quantile_test(values, q=float(np.quantile(values, q)), p=q)
    assert quantile_ci(values, q) == tuple(ci.confidence_interval(0.95))


def _columns_to_summarize():
    """Columns a summary must get right: continuous, ties and atoms, infinities, a NaN, and
    sizes on both sides of the P90 interval's minimum (36)."""
    gen = np.random.default_rng(12)
    yield gen.lognormal(size=4_321)
    yield np.round(gen.gamma(0.3, 50.0, size=2_000))                # ties, an atom at 0
    yield np.r_[np.zeros(1_500), np.full(300, 2048.0)]              # two atoms only
    yield np.r_[gen.random(400), [np.inf] * 30]                     # the top end infinite
    yield np.r_[gen.random(100), [np.nan]]                          # a NaN
    for n in (1, 2, 35, 36, 37, 368):
        yield gen.normal(size=n)


@pytest.mark.parametrize("values", list(_columns_to_summarize()),
                         ids=lambda v: f"n{v.size}")
def test_one_sort_summary_equals_the_separate_computations(values):
    """The one-sort summary (every statistic from one sorted copy) against each statistic
    computed on its own: numpy.percentile ('linear', the default), the P90 interval as
    scipy.stats.quantile_test gives it, numpy.mean; non-finite ones are None."""
    got = metric_summary(values)
    with np.errstate(invalid="ignore", over="ignore"):
        for key, q in (("p50", 50), ("p90", 90), ("p99", 99)):
            expected = float(np.percentile(values, q, method="linear"))
            assert got[key] == (expected if math.isfinite(expected) else None), key
        mean = float(np.mean(values))
    assert got["mean"] == (mean if math.isfinite(mean) else None)
    if values.size < 36:
        assert got["p90_ci"] is None and "too few scenarios" in got["p90_ci_unavailable"]
        return
    ordered_as_numpy = np.where(np.isnan(values), np.inf, values)     # NaN sorts last
    p90 = float(np.percentile(ordered_as_numpy, 90, method="inverted_cdf"))
    ci = stats.quantile_test(ordered_as_numpy, q=p90, p=0.9).confidence_interval(0.95)
    if math.isfinite(ci.low) and math.isfinite(ci.high):
        assert got["p90_ci"] == [ci.low, ci.high]
    else:
        assert got["p90_ci"] is None
        assert got["p90_ci_unavailable"] == "an end of the interval is not a finite number"


class _CountingNumpy:
    """numpy, counting the calls to its sorting and selecting functions."""

    COUNTED = ("sort", "argsort", "partition", "argpartition", "quantile", "percentile")

    def __init__(self):
        self.calls = {name: 0 for name in self.COUNTED}

    def __getattr__(self, name):
        function = getattr(np, name)
        if name not in self.COUNTED:
            return function

        def counted(*args, **kwargs):
            self.calls[name] += 1
            return function(*args, **kwargs)
        return counted


def test_summarize_sorts_each_metric_once_and_selects_nothing_else(monkeypatch):
    """One sort per strategy and metric, the only sort or selection summarize makes (the
    separate percentiles and interval used to partition each column four times); from
    core.tasks.COMPILED_FROM scenarios on, no sort at all: one compiled selection per
    strategy and metric (results.selection) reads the same order statistics."""
    from mcrisk.results import quantiles, selection, statistics

    counting = _CountingNumpy()
    monkeypatch.setattr(statistics, "np", counting)
    monkeypatch.setattr(quantiles, "np", counting)
    metrics = np.random.default_rng(4).gamma(2.0, 10.0, size=(500, 3, 6))
    document = summarize(metrics, ("a", "b", "c"))
    assert counting.calls == {**{name: 0 for name in _CountingNumpy.COUNTED},
                              "sort": 3 * 5}
    selected = []
    real = selection.select_ranks
    monkeypatch.setattr(selection, "select_ranks",
                        lambda *args: selected.append(1) or real(*args))
    monkeypatch.setattr(quantiles, "compiled_from", lambda: 100)
    counting.calls = {name: 0 for name in _CountingNumpy.COUNTED}
    assert summarize(metrics, ("a", "b", "c")) == document
    assert counting.calls == {name: 0 for name in _CountingNumpy.COUNTED}
    assert len(selected) == 3 * 5
    monkeypatch.undo()
    for s, name in enumerate(("a", "b", "c")):
        assert document[name]["trough_depth"] == metric_summary(metrics[:, s, 0])


def test_ranking_reads_the_p90s_of_the_summary():
    """rank(metrics, names, summary) takes every P90 from the summary (no selection of its
    own) and ranks exactly as rank(metrics, names) does."""
    from mcrisk.results import ranking

    metrics = np.random.default_rng(9).gamma(2.0, 10.0, size=(3_000, 4, 6))
    metrics[:, 2] *= 1.3
    names = ("a", "b", "c", "d")
    expected = ranking.rank(metrics, names)
    document = summarize(metrics, names)
    original = ranking._p90
    ranking._p90 = None                        # calling it would fail
    try:
        assert ranking.rank(metrics, names, document) == expected
    finally:
        ranking._p90 = original


def test_a_run_of_40000_scenarios_selects_its_order_statistics_compiled(monkeypatch):
    """With the thresholds as shipped (core.tasks.COMPILED_FROM), a column of 40,000 metric
    values is read by the compiled selection, not sorted: the chunk hooks' own threshold
    (counted in node times, COMPILED_FROM_NODE_TIMES) must not reach the summaries, whose
    1e6-value columns it once sent back to numpy.sort."""
    from mcrisk.results import selection

    selected = []
    real = selection.select_ranks
    monkeypatch.setattr(selection, "select_ranks",
                        lambda *args: selected.append(1) or real(*args))
    metrics = np.random.default_rng(5).gamma(2.0, 10.0, size=(40_000, 1, 6))
    summarize(metrics, ("a",))
    assert len(selected) == 5
