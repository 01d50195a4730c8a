"""Aggregation: numpy.quantile percentiles, P90 CI coverage, ranking order."""
import numpy as np
import pytest

from mcrisk.aggregate import metric_summary, p90_confidence_interval, rank, summarize


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


def test_ranking_is_by_p90_depth_then_days_then_shortfall():
    metrics = np.zeros((100, 3, 6))
    metrics[:, 0, 0] = 10.0           # a: deeper trough
    metrics[:, 1, 1] = 5.0            # b: no depth (rounded), longer? no: depth 0, 5 days
    metrics[:, 1, 0] = 0.0
    metrics[:, 2, 2] = 100.0          # c: no trough, some shortfall
    summary = summarize(metrics, ("a", "b", "c"))
    assert rank(summary) == ["c", "b", "a"]
    assert summary["a"]["power_violation"] == {"probability": 0.0}
