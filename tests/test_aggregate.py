"""Aggregation: numpy.quantile percentiles, P90 CI coverage, strict JSON (the ranking:
tests/test_ranking.py)."""
import json
import math

import numpy as np
import pytest
from scipy import stats

from mcrisk.aggregate import metric_summary, p90_ci_min_samples, p90_confidence_interval, summarize


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
    # the shortcut for equal values gives a point only where an interval exists at all
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
