"""A status that conditions BOTH members of a correlation group of two (issue 28, item 3):
V, the vendor slip, drawn from its posterior given the shipments' facts, and H, hall B's
energization slip (a `chance` of p = 0.35), whose own fact is a range of its copula uniform
(mcrisk/plan/copula.py, joint_status): V's posterior gains the factor g(V) = P(H's fact | V)
and H is drawn from the copula given V, truncated into its range.

Checked by its definition, rejection sampling: prior worlds of the reference with hall B due
on day 20 (so that a day-100 status says something about both) and the vendor slip
rank-correlated RANK with hall B's slip are drawn with the NumPy backend; those that meet the
status's facts (no shipment arrived by day 100, and hall B not energized by day 100: H above 80;
energized on day 50 within WINDOW: H = 30; energized on its day: H = 0, its copula uniform on
(0, 0.65)) are kept, and V's and H's kept distributions compared with the conditioned run's by
two-sample Kolmogorov-Smirnov tests at ALPHA and their rank correlation by Fisher's z within
four standard errors. The check has power: V's posterior without g(V) (the partner's fact
ignored), and H drawn from its range as if V did not matter (H's row weighing V by 0), are each
rejected at p < ALPHA.

Measured (two cores, seed 23): about 4 s for the file; kept 28,778 / 2,690 / 75,956 prior
worlds; KS p-values of V 0.98 / 0.98 / 0.88, of H (above a bound) 0.86, Spearman gap 1.24
standard errors; V without g(V) at p below 1e-300 / 4e-21 / below 1e-300; H ignoring V at
p = 8e-7 (KS) and a Spearman gap of 35 standard errors.
"""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from scipy import special, stats

from mcrisk.backends.numba import distributions as numba_distributions
from mcrisk.backends.numpy.world import sample_worlds
from mcrisk.core.copula import pearson_of_spearman, truncated_score
from mcrisk.core.errors import ScenarioError
from mcrisk.core.facts import with_facts
from mcrisk.core.model import Correlation
from mcrisk.core.status import Status
from mcrisk.plan import copula
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE, SCENARIOS

V, H = "shared.vendor", "hall.B.energized.delay"
FABRIC, Y = "island.xdr.ready.delay", "unit.N01.install"
S1 = "shipment.S1.arrival.delay"
RANK = 0.7
WINDOW = 1.0            # days either side of a recorded day that a prior world may miss it by
N_PRIOR = 400_000
N_CONDITIONED = 20_000
ALPHA = 1e-3
SEED = 23
DRAWN = [V, H] + [f"shipment.S{i}.arrival{part}" for i in range(1, 5) for part in (".delay", "")]


def status(as_of: float, **facts) -> Status:
    return Status("status.toml", "0" * 64, as_of, **facts)


def nothing_arrived(w) -> np.ndarray:
    return np.all([w[f"shipment.S{i}.arrival"] > 100.0 for i in range(1, 5)], axis=0)


# case: (the status, which prior worlds meet its facts, H's value where the status pins it)
CASES = {
    "above a bound": (status(100.0), lambda w: nothing_arrived(w) & (w[H] > 80.0), None),
    "a point": (status(100.0, energized=(("B", 50.0),)),
                lambda w: nothing_arrived(w) & (np.abs(w[H] - 30.0) <= WINDOW), 30.0),
    "a chance pinned to 0": (status(100.0, energized=(("B", 20.0),)),
                             lambda w: nothing_arrived(w) & (w[H] == 0.0), 0.0),
}


def scenario(*pairs: tuple[str, str, float]):
    """The reference with hall B due on day 20 and the pairs correlated."""
    base = load_scenario(REFERENCE)
    halls = tuple(dataclasses.replace(h, energized=dataclasses.replace(h.energized, day=20.0))
                  if h.id == "B" else h for h in base.halls)
    return dataclasses.replace(base, strategies=base.strategies[:1], halls=halls,
                               correlations=tuple(Correlation((a, b), r) for a, b, r in pairs))


def draws(plan, count, seed) -> dict[str, np.ndarray]:
    index = {n: plan.quantity_names.index(n) for n in DRAWN}
    world = sample_worlds(plan, seed, np.arange(count, dtype=np.uint64),
                          only=sorted(index.values()))
    return {n: world[:, q] for n, q in index.items()}


@cache
def kept(case: str) -> tuple[np.ndarray, np.ndarray]:
    _, meets, _ = CASES[case]
    world = draws(compile_scenario(scenario((V, H, RANK))), N_PRIOR, SEED)
    keep = meets(world)
    return world[V][keep], world[H][keep]


def conditioned_plan(case: str):
    return compile_scenario(with_facts(scenario((V, H, RANK)), CASES[case][0]))


def conditioned(plan) -> tuple[np.ndarray, np.ndarray]:
    world = draws(plan, N_CONDITIONED, SEED + 1)
    return world[V], world[H]


def fisher_z_gap(a: tuple, b: tuple) -> float:
    """|Fisher z of Spearman(a) - of Spearman(b)| in standard errors."""
    za, zb = (np.arctanh(stats.spearmanr(*s).statistic) for s in (a, b))
    se = np.sqrt(1.06 / (len(a[0]) - 3) + 1.06 / (len(b[0]) - 3))
    return abs(za - zb) / se


@pytest.mark.parametrize("case", CASES)
def test_both_conditioned_members_match_rejection_sampling(case):
    v_kept, h_kept = kept(case)
    v, h = conditioned(conditioned_plan(case))
    assert len(v_kept) > 1500, len(v_kept)
    assert stats.ks_2samp(v_kept, v).pvalue > ALPHA
    pinned = CASES[case][2]
    if pinned is not None:
        assert np.all(h == pinned)
        return
    assert np.all(h > 80.0)
    assert stats.ks_2samp(h_kept, h).pvalue > ALPHA
    assert fisher_z_gap((v_kept, h_kept), (v, h)) < 4.0


@pytest.mark.parametrize("case", CASES)
def test_the_check_rejects_the_posterior_that_ignores_the_partners_fact(case, monkeypatch):
    """V's posterior given the shipments alone (no g(V)): what V is drawn from in a status
    run without the correlation."""
    monkeypatch.setattr(copula, "partner_likelihood",
                        lambda *args: lambda x: np.zeros(np.shape(x)))
    v_kept, _ = kept(case)
    v, _ = conditioned(conditioned_plan(case))
    assert stats.ks_2samp(v_kept, v).pvalue < ALPHA


def test_the_check_rejects_the_partner_drawn_from_its_range_ignoring_v():
    """H's row weighing V by 0: H uniform on its range of its own copula uniform, whatever V."""
    plan = conditioned_plan("above a bound")
    q = plan.quantity_names.index(H)
    first = plan.q_copula_ptr[q]
    weight = plan.copula_weight.copy()
    weight[first:first + 2] = (0.0, 1.0)
    v_kept, h_kept = kept("above a bound")
    v, h = conditioned(dataclasses.replace(plan, copula_weight=weight))
    assert np.all(h > 80.0)
    assert fisher_z_gap((v_kept, h_kept), (v, h)) > 4.0
    assert stats.ks_2samp(h_kept, h).pvalue < ALPHA


def test_the_plan_weighs_v_and_truncates_h_into_its_range():
    """H's row: V ranked by its value (rho = 2 sin(0.7 pi / 6)), then H's own entry with the
    range (F(80), 1), F the `chance` mixture 0.65 + 0.35 G(80), G the lognormal of median 45
    and P90 120."""
    plan = conditioned_plan("above a bound")
    q = plan.quantity_names.index(H)
    row = slice(plan.q_copula_ptr[q], plan.q_copula_ptr[q + 1])
    rho = pearson_of_spearman(RANK)
    assert list(plan.copula_quantity[row]) == [plan.quantity_names.index(V), -1]
    np.testing.assert_allclose(plan.copula_weight[row], (rho, np.sqrt(1 - rho ** 2)),
                               rtol=1e-12)
    sigma = np.log(120.0 / 45.0) / special.ndtri(0.9)
    g80 = special.ndtr(np.log(80.0 / 45.0) / sigma)
    assert (plan.copula_low[row][1], plan.copula_high[row][1]) == pytest.approx(
        (0.65 + 0.35 * g80, 1.0), abs=1e-12)
    v = plan.quantity_names.index(V)
    assert plan.q_copula_ptr[v + 1] == plan.q_copula_ptr[v]


def test_the_correlated_example_runs_at_the_example_statuses():
    """scenarios/correlated.toml (the vendor slip and hall B's slip, rank 0.7) at days 100 and
    150 with nothing recorded: hall B's slip above 100 - 120 (no constraint: its range is
    (0, 1)) and above 150 - 120 = 30."""
    example = load_scenario(SCENARIOS / "correlated.toml")
    for as_of, low in ((100.0, 0.0), (150.0, None)):
        plan = compile_scenario(with_facts(example, status(as_of)))
        q = plan.quantity_names.index(H)
        last = plan.q_copula_ptr[q + 1] - 1
        assert plan.copula_high[last] == 1.0
        if low is not None:
            assert plan.copula_low[last] == low
        v = plan.quantity_names.index(V)
        h = sample_worlds(plan, SEED, np.arange(2000, dtype=np.uint64),
                          only=sorted((v, q)))[:, q]
        assert np.all(h > as_of - 120.0) and np.mean(h > 0.0) > 0.35


def refusals(scenario, facts) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        compile_scenario(with_facts(scenario, facts))
    return [f"{p.key} = {p.value!r}: {p.message}" for p in info.value.problems]


def test_a_group_of_three_with_two_conditioned_members_is_refused():
    got = refusals(scenario((V, H, RANK), (H, Y, RANK)), status(100.0))
    assert got == [
        (f"correlations[0].between[0] = {V!r}: is conditioned by the status, as is {H!r} of "
         "its correlation group: a status may condition one quantity of a group of three or "
         "more"),
        (f"correlations[0].between[1] = {H!r}: is conditioned by the status, as is {V!r} of "
         "its correlation group: a status may condition one quantity of a group of three or "
         "more")]


def test_two_members_drawn_above_bounds_are_refused():
    """The fabric's delay above 100 - 104 and hall B's slip above 80: neither has a posterior
    for the other's fact to weigh."""
    got = refusals(scenario((FABRIC, H, RANK)), status(150.0))
    assert got[0] == (f"correlations[0].between[0] = {FABRIC!r}: is conditioned by the status, "
                      f"as is {H!r} of its correlation group: both are drawn above a bound: a "
                      "status may condition both quantities of a group of two only where one is "
                      "drawn from its posterior or pinned")


def test_a_partner_whose_fact_involves_the_shared_delay_is_refused():
    """S1's own delay, drawn above 25 less the vendor slip: its fact is not on it alone."""
    got = refusals(scenario((V, S1, RANK)), status(100.0))
    assert got[0] == (f"correlations[0].between[0] = {V!r}: is conditioned by the status, as is "
                      f"{S1!r} of its correlation group: {S1!r} varies with another conditioned "
                      "quantity (a shared delay): a status may condition both quantities of a "
                      "group of two only where one's facts are on it alone")


@pytest.mark.parametrize("low, high, partial", [
    (0.75, 1.0, -1.0), (0.75, 1.0, 0.8),      # above a bound: a > 0, a < 0
    (0.0, 0.65, 0.5), (0.2, 0.9, -2.0),        # a range below, one inside
    (0.9, 0.999, -3.0)])                       # deep in the upper tail: a = 6.1, b = 8.7
def test_the_truncated_score_is_the_truncated_normal_quantile(low, high, partial):
    """n given the row's earlier entries' sum: the standard normal truncated to [a, b],
    a = (ndtri(low) - partial) / s, at u (scipy's truncnorm, an independent implementation);
    the Numba kernels' the same to an ulp or so."""
    s = 0.7
    u = np.linspace(0.001, 0.999, 999)
    a, b = ((special.ndtri(x) - partial) / s for x in (low, high))
    n = truncated_score(u, low, high, np.full(u.shape, partial), s)
    np.testing.assert_allclose(n, stats.truncnorm.ppf(u, a, b), rtol=1e-9, atol=1e-9)
    assert np.all((partial + s * n >= special.ndtri(low) - 1e-12)
                  & (partial + s * n <= special.ndtri(high) + 1e-12))
    kernel = [numba_distributions.truncated_score(x, low, high, partial, s) for x in u]
    np.testing.assert_allclose(kernel, n, rtol=1e-13, atol=1e-13)
