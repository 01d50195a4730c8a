"""The engine against hand calculations and closed forms, never against its own output.

Every test runs on every backend (the `backend` fixture, tests/conftest.py): the NumPy
reference, Numba, the CUDA sources built for the host, and the GPU when there is one.
"""
import math

import numpy as np
import pytest
from scipy import stats

from mcrisk.results.statistics import p90_confidence_interval
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import METRICS
from mcrisk.core.distributions import lognormal_sigma
from mcrisk.scenario import load_scenario

M = {name: k for k, name in enumerate(METRICS)}


def run(path, backend, samples=1, seed=1, keep_nodes=False):
    plan = compile_scenario(load_scenario(path))
    metrics, world, nodes = backend.simulate_chunk(plan, seed, 0, samples, keep_nodes)
    return plan, metrics, world, nodes


def metric(plan, metrics, strategy, name):
    return metrics[:, plan.strategy_names.index(strategy), M[name]]


def node(plan, nodes, strategy, name):
    return nodes[:, plan.strategy_names.index(strategy), plan.node_names.index(name)]


def test_fixed_durations_give_hand_computed_metrics(tiny, backend):
    # swap-on-day: both old units drain at day 10 (baseline 256 lost), row R3 is retrofitted
    # 0..10, racks arrive at 20, install 20..22, burn-in 22..27, island ready 15 + 3 = 18:
    # accepted at 27, capacity 360 from then. Removal ends 10 + 2 + 3 = 15.
    plan, metrics, _, nodes = run(tiny(), backend, keep_nodes=True)
    s = "swap-on-day"
    assert node(plan, nodes, s, "row R3 ready for new units")[0] == 10.0
    assert node(plan, nodes, s, "N1 accepted")[0] == 27.0
    assert metric(plan, metrics, s, "trough_depth")[0] == 256.0
    assert metric(plan, metrics, s, "trough_days")[0] == 17.0
    assert metric(plan, metrics, s, "shortfall_gpu_days")[0] == pytest.approx(256.0 * 17)
    assert metric(plan, metrics, s, "homeless_days")[0] == 17.0
    assert metric(plan, metrics, s, "completion_day")[0] == 27.0
    assert metric(plan, metrics, s, "power_violation")[0] == 0.0


def test_shortfall_integrates_a_demand_ramp_exactly(tiny, backend):
    # C = 256 on [0, 10), 0 on [10, 27), 360 on [27, 100); D = 256 to day 20, then +10/day
    # to 456 at day 40. Shortfall: 2560 on [10, 20); 256*7 + 10*7^2/2 on [20, 27);
    # D - 360 = 10 t - 304 crosses 0 at 30.4: 0.5 * 9.6 * 96 on [30.4, 40); 96 * 60 after.
    plan, metrics, _, _ = run(tiny(demand="[[0, 256], [20, 256], [40, 456]]"), backend)
    expected = 2560 + (256 * 7 + 10 * 49 / 2) + 0.5 * 9.6 * 96 + 96 * 60
    assert metric(plan, metrics, "swap-on-day", "shortfall_gpu_days")[0] == pytest.approx(expected)
    # gated: C = 256 until 27, then 360 (both drains happen at the acceptance instant);
    # D - 256 = 10 (t - 20) on [20, 27), then as above.
    gated = 0.5 * 7 * 70 + 0.5 * 9.6 * 96 + 96 * 60
    assert metric(plan, metrics, "swap-gated", "shortfall_gpu_days")[0] == pytest.approx(gated)


def test_a_drain_triggered_by_an_acceptance_makes_no_dip(tiny, backend):
    plan, metrics, _, nodes = run(tiny(), backend, keep_nodes=True)
    s = "swap-gated"
    assert node(plan, nodes, s, "E1 drain starts")[0] == node(plan, nodes, s, "N1 accepted")[0]
    for name in ("trough_depth", "trough_days", "homeless_days"):
        assert metric(plan, metrics, s, name)[0] == 0.0


@pytest.mark.parametrize("crews, expected_completion", [(1, 32.0), (2, 27.0)])
def test_one_crew_retrofits_rows_in_the_order_they_empty(tiny, backend, crews, expected_completion):
    # E1 drains at 0 (R1 empty at 5), E2 at 1 (R2 empty at 6); N1 -> R1, N2 -> R2; retrofit
    # 10 days. One crew: R1 5..15, R2 waits 15..25; N2 installs at max(20, 25) = 25, burn-in
    # passes at 32. Two crews: R2 6..16, N2 installs at 20, accepted at 27.
    strategies = """
[[strategies]]
name = "reuse-rows"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R2" }]
drain = [{ units = "E1", day = 0 }, { units = "E2", day = 1 }]
"""
    plan, metrics, _, nodes = run(tiny(strategies=strategies, crews=crews), backend,
                                  keep_nodes=True)
    ready_r2 = node(plan, nodes, "reuse-rows", "row R2 ready for new units")[0]
    assert ready_r2 == (25.0 if crews == 1 else 16.0)
    assert metric(plan, metrics, "reuse-rows", "completion_day")[0] == expected_completion


def test_crew_order_follows_emptying_not_file_order(tiny, backend):
    # R2 empties first (E2 at day 0 -> 5), R1 later (E1 at day 3 -> 8): R2 gets the crew first.
    strategies = """
[[strategies]]
name = "reverse"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R2" }]
drain = [{ units = "E1", day = 3 }, { units = "E2", day = 0 }]
"""
    plan, _, _, nodes = run(tiny(strategies=strategies), backend, keep_nodes=True)
    assert node(plan, nodes, "reverse", "row R2 ready for new units")[0] == 15.0
    assert node(plan, nodes, "reverse", "row R1 ready for new units")[0] == 25.0


def test_power_cap_is_checked_at_every_instant(tiny, backend):
    # Old units draw 100 kW each until removal ends (15); racks draw 100 kW each from
    # install start (20). Cap 300: fine. Racks arriving at 10 overlap: 400 kW > 300.
    plan, metrics, _, _ = run(tiny(cap_kw=300), backend)
    assert metric(plan, metrics, "swap-on-day", "power_violation")[0] == 0.0
    assert metric(plan, metrics, "swap-gated", "power_violation")[0] == 1.0  # gated: overlap
    plan, metrics, _, _ = run(tiny(cap_kw=300, arrival=10), backend)
    assert metric(plan, metrics, "swap-on-day", "power_violation")[0] == 1.0


def test_removal_ending_as_install_starts_is_no_power_violation(tiny, backend):
    # Removal ends at 10 + 2 + 8 = 20, exactly when the racks start installing (arrival 20).
    plan, metrics, _, _ = run(tiny(cap_kw=200, removal=8, retrofit=0), backend)
    assert metric(plan, metrics, "swap-on-day", "power_violation")[0] == 0.0


def test_trough_days_follow_one_uncertain_duration(tiny, backend):
    # Only the install time is uncertain, Triangular(2, 4, 10), drawn for each rack. The
    # trough ends when the second rack is accepted (one alone is 180 < 256):
    # trough days = 15 + max(X1, X2), whose q-quantile is F^-1(sqrt(q)) and CDF F^2.
    # A 95% interval misses the truth for 5% of seeds: seed 1 does since draws are addressed
    # by 64-bit ids (by 3e-4 days; the KS test of its draws passes, p = 0.49), seed 2 does not.
    n = 20_000
    plan, metrics, _, _ = run(tiny(install='{ dist = "triangular", min = 2, mode = 4, max = 10 }'),
                              backend, samples=n, seed=2)
    days = metric(plan, metrics, "swap-on-day", "trough_days")
    truth = stats.triang(c=2 / 8, loc=2, scale=8)
    for q in (0.5, 0.9, 0.99):
        assert np.quantile(days, q) == pytest.approx(15 + truth.ppf(math.sqrt(q)), abs=0.15)
    assert stats.kstest(days - 15, lambda x: truth.cdf(x) ** 2).pvalue > 1e-3
    low, high = p90_confidence_interval(days)
    assert low <= 15 + truth.ppf(math.sqrt(0.9)) <= high


def test_trough_days_follow_a_lognormal_shipment_delay(tiny, backend):
    n = 20_000
    plan, metrics, _, _ = run(tiny(delay='{ dist = "lognormal", median = 5, p90 = 20 }'),
                              backend, samples=n)
    days = metric(plan, metrics, "swap-on-day", "trough_days")
    truth = stats.lognorm(lognormal_sigma(5, 20), scale=5)
    low, high = p90_confidence_interval(days)
    assert low <= 17 + truth.ppf(0.9) <= high
    assert np.median(days) == pytest.approx(17 + 5, abs=0.25)


def _burn_in(world, plan, unit="N1"):
    q = plan.quantity_names.index(f"unit.{unit}.burn_in")
    return world[:, q], world[:, q + 1]


def test_burn_in_without_rma_is_geometric(tiny, backend):
    # attempt 5 d, fix 4 d, first attempt fails w.p. p, later ones w.p. q, no RMA in reach:
    # K failures: P(K=0) = 1-p, P(K=k) = p q^(k-1) (1-q); days = 5 + 9 K; E[K] = p / (1-q).
    p, q = 0.3, 0.2
    n = 40_000
    plan, _, world, _ = run(tiny(fail_first=p, fail_retry=q, rma_after=100), backend, samples=n)
    days, attempts = _burn_in(world, plan)
    failures = attempts - 1
    np.testing.assert_array_equal(days, 5 + 9 * failures)
    for k in range(4):
        expected = (1 - p) if k == 0 else p * q ** (k - 1) * (1 - q)
        sd = math.sqrt(expected * (1 - expected) / n)
        assert np.mean(failures == k) == pytest.approx(expected, abs=5 * sd)
    assert days.mean() == pytest.approx(5 + 9 * p / (1 - q), rel=0.02)


def test_burn_in_with_rma_matches_the_renewal_equation(tiny, backend):
    # Three failures in a row send the rack back (RMA, 30 d) and burn-in restarts fresh.
    # E[T] (1 - p q^2) = a + p (f + a) + p q (f + a) + p q^2 R.
    a, f, R, p, q = 5.0, 4.0, 30.0, 0.5, 0.4
    n = 40_000
    plan, _, world, _ = run(tiny(fail_first=p, fail_retry=q, rma_after=3, rma=R), backend,
                            samples=n)
    days, _ = _burn_in(world, plan)
    expected = (a + p * (f + a) + p * q * (f + a) + p * q * q * R) / (1 - p * q * q)
    assert days.mean() == pytest.approx(expected, rel=0.02)
    # the shortest path through an RMA: 3 failed attempts, 2 fixes, RMA, a passing attempt
    through_rma = days >= 4 * a + 2 * f + R
    assert np.mean(through_rma) == pytest.approx(p * q * q, abs=0.01)


@pytest.mark.slow
def test_shared_vendor_slip_correlates_arrivals_as_computed(reference_plan, backend):
    n = 100_000 if backend.name in ("numba", "cuda") else 20_000     # the parallel ones
    _, world, _ = backend.simulate_chunk(reference_plan, 3, 0, n)
    names = reference_plan.quantity_names
    col = {name: world[:, names.index(name)] for name in names}
    arrivals = [col[f"shipment.S{j}.arrival"] for j in range(1, 5)]
    for j, promised in enumerate((75, 105, 135, 165), start=1):
        np.testing.assert_allclose(arrivals[j - 1], promised + col["shared.vendor"]
                                   + col[f"shipment.S{j}.arrival.delay"], rtol=1e-12)

    def var(median, p90):
        s = lognormal_sigma(median, p90)
        return (math.exp(s * s) - 1) * math.exp(2 * math.log(median) + s * s)

    shared, own = var(14, 45), var(5, 20)
    expected = shared / (shared + own)
    # the log of a lognormal sum is far from normal; compare against sampling error
    got = np.corrcoef(arrivals[0], arrivals[3])[0, 1]
    assert got == pytest.approx(expected, abs=0.04)
    assert np.cov(arrivals[0], arrivals[2])[0, 1] == pytest.approx(shared, rel=0.15)
