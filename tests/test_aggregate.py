"""Aggregation: numpy.quantile percentiles, the one quantile-interval rule (against an exact
binomial computation and scipy), P90 CI coverage, strict JSON (the ranking:
tests/test_ranking.py)."""
import json
import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from mcrisk.aggregate import (metric_summary, p90_ci_min_samples, p90_confidence_interval,
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
