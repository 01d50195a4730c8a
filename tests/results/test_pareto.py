"""The Pareto frontier of risk against cost (mcrisk.results.pareto) on hand-made arrays whose
answer is known: a clear domination, a tie within noise that must not dominate (though the
estimates alone would), atoms at 0 and at the whole baseline, and the error on bad shapes."""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.results.pareto import (COST_AXES, RISK_AXES, frontier_of, mean_lower,
                                    pareto_frontiers, p90_lower)
from mcrisk.core.definitions import COST, METRICS, N_COSTS, N_METRICS

N = 2000


def arrays(depth: list[np.ndarray], cost: list[np.ndarray], shortfall=None):
    """metrics[n, s, 6] and costs[n, s, 9] with the given trough depth, shortfall (0 unless
    given) and cost_total per strategy; every other column 0."""
    s = len(depth)
    metrics = np.zeros((N, s, N_METRICS))
    costs = np.zeros((N, s, N_COSTS))
    for k in range(s):
        metrics[:, k, METRICS.index("trough_depth")] = depth[k]
        if shortfall is not None:
            metrics[:, k, METRICS.index("shortfall_gpu_days")] = shortfall[k]
        costs[:, k, COST["cost_total"]] = cost[k]
    return metrics, costs


def atom_share(share: float, value: float, order: np.ndarray) -> np.ndarray:
    """`value` in the first round(share x N) worlds of `order`, 0 elsewhere."""
    out = np.zeros(N)
    out[order[:round(share * N)]] = value
    return out


def test_clear_domination_names_the_dominator_on_every_frontier():
    rng = np.random.default_rng(1)
    noise = rng.normal(0, 0.1, N)
    metrics, costs = arrays(
        depth=[np.zeros(N), np.full(N, 500.0), rng.uniform(0, 100, N)],
        cost=[1e6 + noise, 2e6 + noise, 5e6 + noise],
        shortfall=[np.zeros(N), np.full(N, 10.0), np.ones(N)])
    frontiers = pareto_frontiers(metrics, costs, ("a", "b", "c"))
    assert [(f.risk, f.cost) for f in frontiers] == [(r, c) for r in RISK_AXES for c in COST_AXES]
    for f in frontiers:
        assert f.frontier == ("a",)
        assert f.dominated_by == {"a": (), "b": ("a",), "c": ("a",)}
        assert f.dominated == ("b", "c")
    depth_mean = frontier_of(frontiers, "trough_depth", "mean")
    assert depth_mean.risk_values["b"] == 500.0
    assert depth_mean.cost_values["a"] == pytest.approx(1e6, abs=0.01)


def test_a_trade_leaves_both_on_the_frontier_cheapest_first():
    metrics, costs = arrays(depth=[np.full(N, 100.0), np.zeros(N)],
                            cost=[np.full(N, 1e6), np.full(N, 3e6)])
    f = frontier_of(pareto_frontiers(metrics, costs, ("deep-cheap", "flat-dear")),
                    "trough_depth", "mean")
    assert f.frontier == ("deep-cheap", "flat-dear")
    assert f.dominated == ()


def test_a_cost_difference_within_noise_never_dominates():
    """Same depth, costs that differ only by noise: the estimates alone would call b
    dominated (a's mean and P90 cost are both lower), the paired tests must not."""
    rng = np.random.default_rng(10)
    base = rng.lognormal(14, 0.5, N)
    a, b = base + rng.normal(0, 1e4, N), base + rng.normal(0, 1e4, N)
    assert a.mean() < b.mean() and np.quantile(a, 0.9) < np.quantile(b, 0.9)   # the premise
    assert b.mean() - a.mean() > 100            # a gap the estimates alone would act on
    metrics, costs = arrays(depth=[np.zeros(N), np.zeros(N)], cost=[a, b])
    for f in pareto_frontiers(metrics, costs, ("a", "b")):
        assert f.dominated == (), (f.risk, f.cost)
        assert set(f.frontier) == {"a", "b"}


def test_the_same_small_gap_without_noise_dominates():
    """Control for the test above: the same worlds with b exactly 500 dearer in every one
    dominate on the mean (the paired difference has no spread). The P90's test counts the
    worlds that cross the pooled P90, so it needs a shift that moves enough of them: 500
    does not at this n (a claim it cannot back), 100,000 does."""
    rng = np.random.default_rng(7)
    a = rng.lognormal(14, 0.5, N)
    metrics, costs = arrays(depth=[np.zeros(N), np.zeros(N)], cost=[a, a + 500.0])
    frontiers = pareto_frontiers(metrics, costs, ("a", "b"))
    assert frontier_of(frontiers, "trough_depth", "mean").dominated_by["b"] == ("a",)
    assert frontier_of(frontiers, "trough_depth", "p90").dominated == ()
    metrics, costs = arrays(depth=[np.zeros(N), np.zeros(N)], cost=[a, a + 1e5])
    for f in pareto_frontiers(metrics, costs, ("a", "b")):
        assert f.dominated_by["b"] == ("a",), (f.risk, f.cost)


def test_worse_estimate_on_one_axis_blocks_domination_even_when_within_noise():
    """a is far cheaper but its P90 depth estimate is a hair above b's (noise): a is not at
    least as good on both, so b stays on the frontier (conservative)."""
    rng = np.random.default_rng(3)
    depth = rng.uniform(0, 1000, N)
    b_depth = depth + rng.normal(0, 1, N)
    a_depth = b_depth.copy()
    a_depth[a_depth >= np.quantile(b_depth, 0.9) - 1] += 2.0       # a's P90 a touch higher
    assert np.quantile(a_depth, 0.9) > np.quantile(b_depth, 0.9)
    metrics, costs = arrays(depth=[a_depth, b_depth], cost=[np.full(N, 1e6), np.full(N, 9e6)])
    f = frontier_of(pareto_frontiers(metrics, costs, ("a", "b")), "trough_depth", "mean")
    assert f.dominated == ()


def test_atoms_at_zero_equal_p90_is_a_tie_on_depth_and_cost_decides():
    """Both P90 depths are 0 (a at 0 in 99% of worlds, b in 92%): equal P90s are never told
    apart however differently often the worlds reach the atom; b's cost, dearer beyond noise,
    then makes it dominated; with equal costs, neither is."""
    order = np.random.default_rng(5).permutation(N)
    a_depth, b_depth = atom_share(0.01, 2048.0, order), atom_share(0.08, 2048.0, order)
    assert np.quantile(a_depth, 0.9) == np.quantile(b_depth, 0.9) == 0.0
    cost = np.random.default_rng(6).uniform(1e6, 2e6, N)
    metrics, costs = arrays(depth=[a_depth, b_depth], cost=[cost, cost])
    assert all(f.dominated == () for f in pareto_frontiers(metrics, costs, ("a", "b")))
    metrics, costs = arrays(depth=[a_depth, b_depth], cost=[cost, cost + 1e5])
    f = frontier_of(pareto_frontiers(metrics, costs, ("a", "b")), "trough_depth", "mean")
    assert f.dominated_by == {"a": (), "b": ("a",)}


def test_an_atom_needs_the_atom_check_not_only_mcnemar():
    """Depth 0 or the whole baseline (2048): a reaches 2048 in 9% of worlds (P90 = 0), b in
    20% (P90 = 2048), b's worlds a superset of a's. McNemar at the pooled P90 (an atom, 2048)
    is overwhelming, but 9% is not beyond noise below 10% at this n, so a's P90 is not shown
    lower and b is not dominated; at 2%, it is."""
    order = np.random.default_rng(11).permutation(N)
    b_depth = atom_share(0.20, 2048.0, order)
    cost = np.full(N, 1e6)
    barely = atom_share(0.09, 2048.0, order)
    clearly = atom_share(0.02, 2048.0, order)
    assert np.quantile(barely, 0.9) == 0.0 and np.quantile(b_depth, 0.9) == 2048.0
    metrics, costs = arrays(depth=[barely, b_depth], cost=[cost, cost])
    f = frontier_of(pareto_frontiers(metrics, costs, ("a", "b")), "trough_depth", "mean")
    assert f.dominated == ()
    metrics, costs = arrays(depth=[clearly, b_depth], cost=[cost, cost])
    f = frontier_of(pareto_frontiers(metrics, costs, ("a", "b")), "trough_depth", "mean")
    assert f.dominated_by["b"] == ("a",)


def test_shortfall_frontier_reads_shortfall_not_depth():
    rng = np.random.default_rng(2)
    metrics, costs = arrays(depth=[np.zeros(N), np.zeros(N)],
                            cost=[np.full(N, 1e6), np.full(N, 1e6)],
                            shortfall=[rng.uniform(0, 10, N), rng.uniform(1000, 2000, N)])
    frontiers = pareto_frontiers(metrics, costs, ("a", "b"))
    assert frontier_of(frontiers, "shortfall_gpu_days", "mean").dominated_by["b"] == ("a",)
    assert frontier_of(frontiers, "trough_depth", "mean").dominated == ()


def test_not_finite_compares_with_nothing():
    metrics, costs = arrays(depth=[np.zeros(N), np.full(N, 100.0)],
                            cost=[np.full(N, np.inf), np.full(N, 2e6)])
    f = frontier_of(pareto_frontiers(metrics, costs, ("a", "b")), "trough_depth", "mean")
    assert f.cost_values["a"] is None
    assert f.dominated == () and f.frontier == ("b", "a")     # the unknown one last


def test_mean_and_p90_tests_alone():
    x = np.arange(100.0)
    assert mean_lower(x, x + 1.0, 0.05) and not mean_lower(x + 1.0, x, 0.05)
    assert not mean_lower(x, x, 0.05)
    assert not p90_lower(x, x + 1.0, None, 100.0, 0.05)       # a missing P90 never compares
    assert p90_lower(x, x + 50.0, float(np.quantile(x, 0.9)),
                     float(np.quantile(x + 50.0, 0.9)), 0.05)


def test_bad_shapes_are_a_clear_error():
    metrics, costs = arrays(depth=[np.zeros(N)], cost=[np.zeros(N)])
    with pytest.raises(ValueError, match="costs must be"):
        pareto_frontiers(metrics, costs[:, :, :0], ("a",))
    with pytest.raises(ValueError, match="metrics must be"):
        pareto_frontiers(metrics, costs, ("a", "b"))
