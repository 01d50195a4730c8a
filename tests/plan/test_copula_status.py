"""A status run with correlated quantities (issue 28, item 3): a correlation group where the
status conditions exactly one member X is conditioned exactly (X as the conditioning draws
it, the others from the Gaussian copula given X's rank); anything else is refused at the
correlation's name (mcrisk/plan/copula.py).

Checked by its definition, rejection sampling: prior worlds of the reference with X
rank-correlated RANK with unit.N01.install (Y, triangular 2, 4, 10; named first, so the
conditioned run reorders the group) are drawn with the NumPy backend, those that meet the
status's facts on X's side kept (CASES: the fabric not ready by day 150, or ready on day 145
within WINDOW days, X its own delay: pinned, or above a fixed bound; no shipment arrived by
day 110, X the vendor slip drawn from its posterior or S1's own delay above a bound less
the slip; S1 arrived on day 102, X its delay, the rest of the slip: X ranked by its value; hall B
energized on its day 120, X its slip, a `chance` pinned to 0: its range (0, 1 - p)),
and Y's kept distribution compared with the conditioned run's by a two-sample
Kolmogorov-Smirnov test at ALPHA, and where X varies X's too and the rank correlation of
(X, Y) by Fisher's z within four standard errors. The check has power: the conditioned run
with the correlation set to 0, or with X's own uniform's score in place of its conditioned
rank (the copula ignoring the status), is rejected at ALPHA in every case.

Measured (two cores): about 6 s for the file; KS p-values of Y 0.29 to 0.63, Spearman gaps
0.14 to 0.66 standard errors; the wrong versions at p below 1e-22.

A risk or per-GPU performance the status settles (SETTLED; core.facts.with_facts keeps a
correlated one's distribution, its quantity pinned), in a group Y - X (RANK), X - Z (RANK_Z),
run as the app sets it (app.run.set_risks): prior worlds kept where X did not occur, occurred
with impact 30 (within a day) or with its fixed impact 90, or measured 2.6 (within 0.01), and Y,
Z and their rank correlation compared. Measured: kept 13,245 to 240,159 worlds; KS p-values of
Y 0.62 to 0.97, of Z 0.46 to 0.92, Spearman gaps 0.76 to 1.11 standard errors; with the pairs
dropped (what a run did before for a risk that can no longer occur) p below 1e-300 for Y and Z.
A run that disables the risk (--risks off, --disable-risk, `enabled = false`) still drops its
pairs.
"""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from scipy import stats

from mcrisk.app.run import set_risks
from mcrisk.backends.numpy.world import sample_worlds
from mcrisk.core.errors import ScenarioError
from mcrisk.core.facts import with_facts
from mcrisk.core.model import Correlation, Distribution
from mcrisk.core.rng import address_id
from mcrisk.core.risks import select_risks
from mcrisk.core.status import Status
from mcrisk.plan import copula
from mcrisk.plan.compile import compile_scenario
from mcrisk.plan.world import mitigations_in_effect
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE

FABRIC, Y = "island.xdr.ready.delay", "unit.N01.install"
S1 = "shipment.S1.arrival.delay"
HALL = "hall.B.energized.delay"
RANK = 0.7
WINDOW = 0.5            # days either side of a recorded day that a prior world may miss it by
N_PRIOR = 400_000       # prior worlds drawn (0.7% to 25% meet a case's facts)
N_CONDITIONED = 20_000
ALPHA = 1e-3
SEED = 11
SUPPLY = ["shared.vendor"] + [f"shipment.S{i}.arrival{part}" for i in range(1, 5)
                              for part in (".delay", "")]
DRAWN = SUPPLY + ["island.xdr.install", FABRIC, "island.xdr.ready", HALL, Y]


def status(as_of: float, **facts) -> Status:
    return Status("status.toml", "0" * 64, as_of, **facts)


def arrived_after(as_of: float, first: int = 1):
    return lambda w: np.all([w[f"shipment.S{i}.arrival"] > as_of for i in range(first, 5)],
                            axis=0)


# case: (the conditioned member X, the status, which prior worlds meet its facts on X's side)
CASES = {
    # day 150, nothing recorded: the fabric is not ready (90 + X + 14 > 150: X above 46)
    "bound": (FABRIC, status(150.0), lambda w: w["island.xdr.ready"] > 150.0),
    # the fabric ready on day 145 (X = 41)
    "equality": (FABRIC, status(150.0, ready=(("xdr", 145.0),)),
                 lambda w: np.abs(w["island.xdr.ready"] - 145.0) <= WINDOW),
    # day 110, nothing arrived: the vendor slip drawn from its posterior
    "posterior": ("shared.vendor", status(110.0), arrived_after(110.0)),
    # the same facts: S1's own delay above 35 - the vendor slip, world by world
    "above a shared term": (S1, status(110.0), arrived_after(110.0)),
    # S1 arrived on day 102: its own delay is 27 - the vendor slip
    "rest of a shared term": (S1, status(110.0, arrived=(("S1", 102.0),)),
                              lambda w: (np.abs(w["shipment.S1.arrival"] - 102.0) <= WINDOW)
                              & arrived_after(110.0, first=2)(w)),
    # hall B energized on its day 120: its slip, a `chance` of p = 0.35, pinned to 0 (its
    # copula uniform on (0, 0.65))
    "a chance pinned to 0": (HALL, status(150.0, energized=(("B", 120.0),)),
                             lambda w: w[HALL] == 0.0),
}
PINNED = {"equality": 41.0, "a chance pinned to 0": 0.0}


def correlated(*pairs: tuple[str, str, float], path=REFERENCE):
    scenario = load_scenario(path)
    return dataclasses.replace(scenario, strategies=scenario.strategies[:1],
                               correlations=tuple(Correlation((a, b), r) for a, b, r in pairs))


def draws(plan, count, seed=SEED) -> dict[str, np.ndarray]:
    index = {n: plan.quantity_names.index(n) for n in DRAWN}
    world = sample_worlds(plan, seed, np.arange(count, dtype=np.uint64),
                          only=sorted(index.values()))
    return {n: world[:, q] for n, q in index.items()}


@cache
def kept(case: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) of the prior worlds that meet the case's facts (Y named first: the conditioned
    run reorders the group)."""
    x, _, meets = CASES[case]
    world = draws(compile_scenario(correlated((Y, x, RANK))), N_PRIOR)
    keep = meets(world)
    return world[x][keep], world[Y][keep]


def conditioned(case: str, rank: float = RANK) -> tuple[np.ndarray, np.ndarray]:
    x, facts, _ = CASES[case]
    world = draws(compile_scenario(with_facts(correlated((Y, x, rank)), facts)),
                  N_CONDITIONED, seed=SEED + 1)
    return world[x], world[Y]


def fisher_z_gap(a: tuple, b: tuple) -> float:
    """|Fisher z of Spearman(a) - of Spearman(b)| in standard errors."""
    za, zb = (np.arctanh(stats.spearmanr(*s).statistic) for s in (a, b))
    se = np.sqrt(1.06 / (len(a[0]) - 3) + 1.06 / (len(b[0]) - 3))
    return abs(za - zb) / se


@pytest.mark.parametrize("case", CASES)
def test_the_partner_of_a_conditioned_quantity_matches_rejection_sampling(case):
    x_kept, y_kept = kept(case)
    x, y = conditioned(case)
    assert len(y_kept) > 2000, len(y_kept)
    assert stats.ks_2samp(y_kept, y).pvalue > ALPHA
    if case in PINNED:
        assert np.all(x == PINNED[case])
        return
    assert stats.ks_2samp(x_kept, x).pvalue > ALPHA
    assert fisher_z_gap((x_kept, y_kept), (x, y)) < 4.0


@pytest.mark.parametrize("case", CASES)
def test_the_check_rejects_the_partner_drawn_as_if_uncorrelated(case):
    _, y_kept = kept(case)
    _, y = conditioned(case, rank=0.0)
    assert stats.ks_2samp(y_kept, y).pvalue < ALPHA


@pytest.mark.parametrize("case", CASES)
def test_the_check_rejects_the_copula_that_ignores_the_status(case, monkeypatch):
    """X's entry in Y's row as without a status: its own uniform's score, ndtri(u)."""
    monkeypatch.setattr(copula, "score_of", lambda world, q: copula.AS_DRAWN)
    _, y_kept = kept(case)
    _, y = conditioned(case)
    assert stats.ks_2samp(y_kept, y).pvalue < ALPHA


def test_a_status_that_leaves_a_group_alone_draws_it_as_without_one():
    """N02's and N03's installs are not conditioned at day 150: their draws are those of
    the run without a status, bit for bit, while Y's, in the group the status conditions,
    are not."""
    scenario = correlated(("unit.N02.install", "unit.N03.install", RANK), (FABRIC, Y, RANK))
    plain = compile_scenario(scenario)
    conditioned = compile_scenario(with_facts(scenario, CASES["bound"][1]))

    def values(plan, name):
        q = plan.quantity_names.index(name)
        return sample_worlds(plan, SEED, np.arange(5000, dtype=np.uint64), only=[q])[:, q]

    for name in ("unit.N02.install", "unit.N03.install"):
        np.testing.assert_array_equal(values(plain, name), values(conditioned, name))
    assert not np.array_equal(values(plain, Y), values(conditioned, Y))


def refusals(scenario, facts) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        compile_scenario(with_facts(scenario, facts))
    return [f"{p.key} = {p.value!r}: {p.message} ({p.hint})" for p in info.value.problems]


HINT = "(run without this correlation (a copy of the scenario), or without the status)"


def test_a_conditioned_chance_is_refused_at_its_name():
    """Hall B not energized by day 150: its slip, a `chance`, is drawn above its bound, but
    its rank has an atom at 0."""
    assert refusals(correlated((Y, "hall.B.energized.delay", RANK)), status(150.0)) == [
        "correlations[0].between[1] = 'hall.B.energized.delay': is conditioned by the status "
        "and may be exactly 0 (a `chance`): its rank given the status is not defined "
        f"{HINT}"]


def test_a_member_ranked_by_its_value_after_another_is_refused_at_its_name():
    """With the risks on and two settled by the status, the CDU recall (a risk, drawn before
    the shipments) correlated with S1's own delay, which varies with the vendor slip's
    posterior: S1's delay is ranked by its value, evaluated after the recall."""
    scenario = select_risks(correlated((S1, "risk.cdu-recall", RANK)), "pre")
    settled = status(110.0, risks=(("allocation-cut", None), ("utility-slip", None)))
    assert refusals(scenario, settled) == [
        f"correlations[0].between[0] = {S1!r}: is conditioned by the status, and its value "
        "varies from world to world with another conditioned quantity's, but "
        "'risk.cdu-recall' of its correlation group comes before it in the world: not "
        f"supported {HINT}"]


# A risk or a per-GPU performance the status settles (core.facts.with_facts keeps its
# distribution when it is correlated; its quantity is pinned): rejection sampling in a group
# of three, Y - X (RANK) and X - Z (RANK_Z), so that the partners' joint is checked too.
Z = "unit.N02.install"
RANK_Z = 0.6
N_SETTLED = 400_000
CDU, CUT, PERF = "risk.cdu-recall", "risk.allocation-cut", "unit_type.gb300-nvl72.h100_eq_per_gpu"
MEASURED = 2.6
OTHERS = {"utility-slip": None, "allocation-cut": None, "cdu-recall": None}


def risk_status(**settled) -> Status:
    """Day 110 with every risk of the reference settled (the two the case does not name can
    no longer occur: left unsettled they would be a second unknown of a date's fact)."""
    return status(110.0, risks=tuple({**OTHERS, **settled}.items()))


# case: (X, the status, which prior worlds meet its fact on X)
SETTLED = {
    # p = 0.4: X = 0 (v_X uniform on (0, 0.6))
    "did not occur": (CDU, risk_status(), lambda x: x == 0.0),
    # X = 30 exactly: v_X a point, 0.6 + 0.4 G(30)
    "occurred": (CDU, risk_status(**{"cdu-recall": 30.0}), lambda x: np.abs(x - 30.0) <= 1.0),
    # a fixed impact of 90, p = 0.15: v_X uniform on (0.85, 1)
    "occurred, a fixed impact": (CUT, risk_status(**{"allocation-cut": 90.0}),
                                 lambda x: x == 90.0),
    # measured 2.6 H100-eq per GPU, of a triangular (2.0, 2.5, 2.8)
    "measured": (PERF, status(110.0, risks=tuple(OTHERS.items()),
                              performance=(("gb300-nvl72", MEASURED),)),
                 lambda x: np.abs(x - MEASURED) <= 0.01),
}


def settled_scenario(x: str, ranks=(RANK, RANK_Z)):
    """The reference with every risk on (cdu-recall at p = 0.4, so that enough prior worlds
    meet "occurred") and gb300-nvl72's performance drawn, Y - X and X - Z correlated."""
    scenario = select_risks(correlated((Y, x, ranks[0]), (x, Z, ranks[1])), "pre")
    risks = tuple(dataclasses.replace(r, probability=0.4) if r.id == "cdu-recall" else r
                  for r in scenario.risks)
    kinds = tuple(dataclasses.replace(k, performance=Distribution("triangular", (2.0, 2.5, 2.8)))
                  if k.id == "gb300-nvl72" else k for k in scenario.unit_types)
    return dataclasses.replace(scenario, risks=risks, unit_types=kinds)


def values(plan, names, count, seed) -> dict[str, np.ndarray]:
    index = {n: plan.quantity_names.index(n) for n in names}
    world = sample_worlds(plan, seed, np.arange(count, dtype=np.uint64),
                          only=sorted(index.values()))
    return {n: world[:, q] for n, q in index.items()}


@cache
def settled_kept(case: str) -> tuple[np.ndarray, np.ndarray]:
    """(Y, Z) of the prior worlds whose X meets the case's fact."""
    x, _, meets = SETTLED[case]
    world = values(compile_scenario(settled_scenario(x)), (x, Y, Z), N_SETTLED, SEED)
    keep = meets(world[x])
    return world[Y][keep], world[Z][keep]


def settled_run(case: str, scenario=None, mode: str = "pre") -> dict[str, np.ndarray]:
    """The conditioned run as the app sets it (app.run.set_risks: with_facts)."""
    x, facts, _ = SETTLED[case]
    scenario = settled_scenario(x) if scenario is None else scenario
    plan = compile_scenario(set_risks(scenario, mode, status=facts).scenario)
    names = [n for n in (x, Y, Z) if n in plan.quantity_names]  # a risk off has no quantity
    return values(plan, names, N_CONDITIONED, SEED + 1)


@pytest.mark.parametrize("case", SETTLED)
def test_the_partners_of_a_settled_risk_or_performance_match_rejection_sampling(case):
    y_kept, z_kept = settled_kept(case)
    got = settled_run(case)
    assert len(y_kept) > 5000, len(y_kept)
    assert stats.ks_2samp(y_kept, got[Y]).pvalue > ALPHA
    assert stats.ks_2samp(z_kept, got[Z]).pvalue > ALPHA
    assert fisher_z_gap((y_kept, z_kept), (got[Y], got[Z])) < 4.0
    x = SETTLED[case][0]
    assert np.all(got[x] == {"did not occur": 0.0, "occurred": 30.0, "measured": MEASURED
                             }.get(case, 90.0))


@pytest.mark.parametrize("case", SETTLED)
def test_the_check_rejects_the_partners_drawn_with_the_pairs_dropped(case):
    """What the run did before for "did not occur" (the risk off, its pairs left out): Y and Z
    from their marginals."""
    y_kept, z_kept = settled_kept(case)
    x = SETTLED[case][0]
    got = settled_run(case, dataclasses.replace(settled_scenario(x), correlations=()))
    assert stats.ks_2samp(y_kept, got[Y]).pvalue < ALPHA
    assert stats.ks_2samp(z_kept, got[Z]).pvalue < ALPHA


@pytest.mark.parametrize("case", SETTLED)
def test_the_check_rejects_the_settled_member_ranked_by_its_own_uniform(case, monkeypatch):
    monkeypatch.setattr(copula, "score_of", lambda world, q: copula.AS_DRAWN)
    y_kept, _ = settled_kept(case)
    assert stats.ks_2samp(y_kept, settled_run(case)[Y]).pvalue < ALPHA


def copula_row(plan, name):
    q = plan.quantity_names.index(name)
    row = slice(plan.q_copula_ptr[q], plan.q_copula_ptr[q + 1])
    return (list(plan.copula_address[row]), list(plan.copula_low[row]),
            list(plan.copula_high[row]))


@pytest.mark.parametrize("case, expected", [
    ("did not occur", (0.0, 0.6)),
    # 0.6 + 0.4 G(30), G triangular (14, 30, 60) at its mode: (30 - 14) / (60 - 14)
    ("occurred", (0.6 + 0.4 * 16 / 46,) * 2),
    ("occurred, a fixed impact", (0.85, 1.0)),
    # triangular (2.0, 2.5, 2.8) at 2.6: 1 - 0.2^2 / (0.8 * 0.3)
    ("measured", (1.0 - 0.04 / 0.24,) * 2)])
def test_a_settled_member_leads_its_group_with_the_range_its_fact_leaves(case, expected):
    x, facts, _ = SETTLED[case]
    plan = compile_scenario(set_risks(settled_scenario(x), "pre", status=facts).scenario)
    addresses, low, high = copula_row(plan, Y)
    assert addresses[0] == address_id(x)
    assert (low[0], high[0]) == pytest.approx(expected, abs=1e-12)
    assert (low[1], high[1]) == (0.0, 1.0)


@pytest.mark.parametrize("mode, disable", [("off", ()), ("pre", ("cdu-recall",)),
                                           ("file", ())])
def test_a_risk_the_run_disables_still_drops_its_pairs_under_a_status(mode, disable):
    """cdu-recall can no longer occur, and this run disables it (--risks off, --disable-risk,
    or the reference's own `enabled = false`): it has no quantity, its pairs are left out, and
    Y and Z draw as without a correlation, bit for bit, while with the risk on they do not."""
    scenario = settled_scenario(CDU)
    facts = SETTLED["did not occur"][1]
    raw = load_scenario(REFERENCE)

    def run(scenario, mode, disable):
        plan = compile_scenario(set_risks(dataclasses.replace(scenario, risks=raw.risks),
                                          mode, disable, facts).scenario)
        return plan, values(plan, (Y, Z), 5000, SEED)

    plan, got = run(scenario, mode, disable)
    _, plain = run(dataclasses.replace(scenario, correlations=()), mode, disable)
    assert CDU not in plan.quantity_names
    assert copula_row(plan, Y)[0] == [] and copula_row(plan, Z)[0] == []
    for name in (Y, Z):
        np.testing.assert_array_equal(got[name], plain[name])
    _, on = run(scenario, "pre", ())
    assert not np.array_equal(on[Y], plain[Y])


def test_a_settled_fact_its_correlated_distribution_cannot_produce_is_refused_at_the_status():
    """A correlated risk keeps its distribution, so its recorded impact is checked against it
    (plan.conditioning.pin_quantities): cdu-recall's triangular (14, 30, 60) has no 70, and
    it has no rank there."""
    facts = risk_status(**{"cdu-recall": 70.0})
    with pytest.raises(ScenarioError) as info:
        compile_scenario(set_risks(settled_scenario(CDU), "pre", status=facts).scenario)
    assert [f"{p.file}: {p.key} = {p.value!r}: {p.message}" for p in info.value.problems] == [
        ("status.toml: risks.cdu-recall.occurred = {'impact': 70.0}: risk 'cdu-recall''s "
         "impact must be between 14 and 60 days in this scenario")]


@pytest.mark.parametrize("case", ["did not occur", "occurred"])
def test_a_settled_correlated_risk_counts_no_mitigation_cost_as_an_uncorrelated_one(case):
    """Post-mitigation (--risks post), cdu-recall's mitigation has a cost; once the status
    settles the risk it is not in effect (plan.world.mitigations_in_effect), correlated or
    not, while the correlated one's prior is its mitigated probability, 0.03."""
    facts = SETTLED[case][1]
    for scenario in (settled_scenario(CDU),
                     dataclasses.replace(settled_scenario(CDU), correlations=())):
        run = set_risks(scenario, "post", status=facts).scenario
        assert mitigations_in_effect(run) == []
    run = set_risks(settled_scenario(CDU), "post", status=facts).scenario
    assert [r.probability for r in run.risks if r.id == "cdu-recall"] == [0.03]
