"""The nightly's intervals for unpaired comparisons (mcrisk.report.nightly.intervals,
intervals.json) follow the one quantile-interval rule of mcrisk.results.statistics, the rule of
summary.json's p90_ci."""
import numpy as np
import pytest

from mcrisk.results.statistics import metric_summary, quantile_ci, quantile_ci_min_samples
from mcrisk.report.nightly.intervals import LEVELS, metric_intervals


def test_the_intervals_are_the_aggregate_rule_and_summary_jsons_p90_ci():
    values = np.random.default_rng(4).lognormal(size=500)
    values[::7] = np.round(values[::7])                        # ties too
    got = metric_intervals(values)
    for stat, q in LEVELS.items():
        assert got[f"{stat}_ci"] == list(quantile_ci(values, q))
    assert got["p90_ci"] == metric_summary(values)["p90_ci"]


@pytest.mark.parametrize("stat", sorted(LEVELS))
def test_equal_values_too_few_for_an_interval_give_none(stat):
    # intervals.json used to give [v, v] for equal values at any n (a shortcut taken before the
    # minimum-sample rule): from 35 values the largest lies below the true P90 with probability
    # 0.9^35 = 2.5% and more, so no pair of them is a 95% interval, equal or not.
    needed = quantile_ci_min_samples(LEVELS[stat])
    assert metric_intervals(np.full(needed - 1, 7.0))[f"{stat}_ci"] is None
    assert metric_intervals(np.full(needed, 7.0))[f"{stat}_ci"] == [7.0, 7.0]


def test_no_values_give_no_statistics():
    assert metric_intervals(np.array([])) == {"n": 0, "mean": None, "std": None,
                                              "p50_ci": None, "p90_ci": None, "p99_ci": None}
