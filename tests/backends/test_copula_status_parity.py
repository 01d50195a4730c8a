"""Backend parity on status runs with correlated quantities (issue 28, item 3): a group whose
one member a status conditions has rows ordered with that member first and its entry's
uniform mapped into its conditioned range (copula_low, copula_high: mcrisk/plan/copula.py).
The reference with three groups, under the big-bang and rolling-on-delivery strategies:
island.xdr.ready.delay with unit.N05.install (0.7), row.A2.retrofit with unit.N06.install
(-0.5), unit.N07.install with unit.N08.install (0.4, never conditioned), unit.N09.install with
shared.vendor (0.6) and unit.N10.install with shipment.S1.arrival.delay (-0.4), at day 150
with nothing recorded (the fabric's delay drawn above a bound: its range (F(46), 1); the
vendor slip from its posterior and S1's delay above a bound less it, both ranked by their
values, copula_quantity) and in the story at day 150 (the fabric ready on day 127: its delay
pinned, range (F(23), F(23)); A2's retrofit running since day 134; S1 arrived on day 102:
its delay the rest of the vendor slip); and, with every risk on and gb300-nvl72's performance
drawn, at day 150 with the risks and the performance settled (core.facts.with_facts keeps a
correlated one's distribution, its quantity pinned): unit.N11.install with risk.cdu-recall
(0.5; can no longer occur: range (0, 0.9)), unit.N12.install with risk.allocation-cut (-0.6;
occurred, its fixed impact of 90: (0.85, 1)), unit.N13.install with risk.utility-slip (0.4;
occurred, impact 30: a point) and unit.N14.install with the performance (0.5; measured 2.6: a
point). Every backend gives the NumPy reference's world, node times
and metrics to tests/parity.py's table, the host build of the CUDA sources Numba's bit for
bit, and two chunks what one gives."""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from scipy import special

from mcrisk.backends import select_backend
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.core.distributions import cdf
from mcrisk.core.facts import with_facts
from mcrisk.core.model import Correlation, Distribution
from mcrisk.core.risks import select_risks
from mcrisk.core.status import Status
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE
from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity
from ..statuses import story

numpy_backend = select_backend("numpy")
PAIRS = (("unit.N05.install", "island.xdr.ready.delay", 0.7),
         ("row.A2.retrofit", "unit.N06.install", -0.5),
         ("unit.N07.install", "unit.N08.install", 0.4),
         ("unit.N09.install", "shared.vendor", 0.6),
         ("unit.N10.install", "shipment.S1.arrival.delay", -0.4))
SETTLED_PAIRS = (("unit.N11.install", "risk.cdu-recall", 0.5),
                 ("unit.N12.install", "risk.allocation-cut", -0.6),
                 ("unit.N13.install", "risk.utility-slip", 0.4),
                 ("unit.N14.install", "unit_type.gb300-nvl72.h100_eq_per_gpu", 0.5))
SETTLED = Status("status.toml", "0" * 64, 150.0,
                 risks=(("cdu-recall", None), ("allocation-cut", 90.0), ("utility-slip", 30.0)),
                 performance=(("gb300-nvl72", 2.6),))
# Both members of a group of two conditioned (plan.copula.joint_status): the vendor slip from
# its posterior given the shipments, weighed by hall B's fact, and hall B's slip (a `chance`)
# not energized by day 150 (drawn truncated into (F(30), 1) given the vendor slip, large: mostly
# core.copula.truncated_score's lower branch), not by day 200 with every shipment early (into
# (F(80), 1) given a small vendor slip: mostly its upper tail's branch), or energized on day 141
# (pinned to 21).
TWO_PAIRS = (("shared.vendor", "hall.B.energized.delay", 0.7),
             ("unit.N05.install", "island.xdr.ready.delay", 0.7))
TWO = {"two above": Status("status.toml", "0" * 64, 150.0),
       "two early": Status("status.toml", "0" * 64, 200.0, arrived=(
           ("S1", 80.0), ("S2", 110.0), ("S3", 140.0), ("S4", 170.0))),
       "two pinned": Status("status.toml", "0" * 64, 150.0, energized=(("B", 141.0),))}
CASES = ("bound", "pinned", "settled", *TWO)


@cache
def plan_of(case: str):
    scenario = load_scenario(REFERENCE)
    scenario = dataclasses.replace(
        scenario, strategies=tuple(s for s in scenario.strategies
                                   if s.name in ("big-bang", "rolling-on-delivery")),
        correlations=tuple(Correlation((a, b), rank)
                           for a, b, rank in (TWO_PAIRS if case in TWO else PAIRS)))
    if case in TWO:
        return compile_scenario(with_facts(scenario, TWO[case]))
    if case == "settled":
        kinds = tuple(dataclasses.replace(k, performance=Distribution("triangular",
                                                                      (2.0, 2.5, 2.8)))
                      if k.id == "gb300-nvl72" else k for k in scenario.unit_types)
        scenario = select_risks(dataclasses.replace(
            scenario, unit_types=kinds, correlations=scenario.correlations + tuple(
                Correlation((a, b), rank) for a, b, rank in SETTLED_PAIRS)), "pre")
        return compile_scenario(with_facts(scenario, SETTLED))
    status = Status("status.toml", "0" * 64, 150.0) if case == "bound" else story(150.0)
    return compile_scenario(with_facts(scenario, status))


@pytest.mark.parametrize("case", CASES[:2])
def test_the_conditioned_member_leads_its_group_with_its_range(case):
    plan = plan_of(case)
    q = plan.quantity_names.index("unit.N05.install")
    row = slice(plan.q_copula_ptr[q], plan.q_copula_ptr[q + 1])
    low, high = plan.copula_low[row], plan.copula_high[row]
    assert 0.5 < low[0] < 0.8 and low[1] == 0.0 and high[1] == 1.0
    assert high[0] == (1.0 if case == "bound" else low[0])
    fabric = plan.quantity_names.index("island.xdr.ready.delay")
    assert plan.q_copula_ptr[fabric + 1] == plan.q_copula_ptr[fabric]
    for partner, member in (("unit.N09.install", "shared.vendor"),
                            ("unit.N10.install", "shipment.S1.arrival.delay")):
        q = plan.quantity_names.index(partner)
        first = plan.q_copula_ptr[q]
        assert plan.copula_quantity[first] == plan.quantity_names.index(member)
        assert plan.copula_quantity[first + 1] == -1


def test_settled_risks_and_performance_lead_their_groups_with_their_ranges():
    """0.9 = 1 - 0.1; 0.85 = 1 - 0.15; 0.8 + 0.2 G(30) with G the lognormal of median 30;
    1 - 0.2^2 / (0.8 x 0.3), the triangular (2.0, 2.5, 2.8) at 2.6."""
    plan = plan_of("settled")
    expected = {"unit.N11.install": (0.0, 0.9), "unit.N12.install": (0.85, 1.0),
                "unit.N13.install": (0.9, 0.9), "unit.N14.install": (1 - 0.04 / 0.24,) * 2}
    for partner, (low, high) in expected.items():
        q = plan.quantity_names.index(partner)
        first = plan.q_copula_ptr[q]
        assert plan.q_copula_ptr[q + 1] == first + 2
        assert (plan.copula_low[first], plan.copula_high[first]) == pytest.approx(
            (low, high), abs=1e-12), partner
        assert plan.copula_quantity[first] == -1
    values = numpy_backend.simulate_chunk(plan, 3, 0, 50)[1]
    for name, value in (("risk.cdu-recall", 0.0), ("risk.allocation-cut", 90.0),
                        ("risk.utility-slip", 30.0),
                        ("unit_type.gb300-nvl72.h100_eq_per_gpu", 2.6)):
        assert np.all(values[:, plan.quantity_names.index(name)] == value), name


@pytest.mark.parametrize("case", CASES)
def test_status_runs_with_correlations_match_the_reference(backend, case):
    plan = plan_of(case)
    got = backend.simulate_chunk(plan, 13, 5000, 300, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 13, 5000, 300, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
@pytest.mark.parametrize("case", CASES)
def test_host_build_is_bit_identical_to_numba_on_status_runs_with_correlations(host, case):
    plan = plan_of(case)
    got = host.simulate_chunk(plan, 21, 77, 600, keep_nodes=True)
    expected = numba_chunk(plan, 21, 77, 600, keep_nodes=True)
    for name, a, b in zip(("metrics", "world", "node times"), got, expected):
        np.testing.assert_array_equal(a, b, err_msg=f"{case}: {name}")


@pytest.mark.parametrize("case", ["bound", "two above"])
@pytest.mark.parametrize("run", [numba_chunk, numpy_backend.simulate_chunk],
                         ids=["numba", "numpy"])
def test_conditioned_correlated_draws_do_not_depend_on_the_chunks(run, case):
    plan = plan_of(case)
    whole = run(plan, 5, 1000, 400)
    parts = [run(plan, 5, 1000, 137), run(plan, 5, 1137, 263)]
    for name, a, b, c in zip(("metrics", "world"), whole, *parts):
        np.testing.assert_array_equal(a, np.concatenate([b, c]), err_msg=name)


@pytest.mark.parametrize("case, bound", [("two above", 30.0), ("two early", 80.0)])
def test_two_conditioned_members_draw_both_branches_of_the_truncated_score(case, bound):
    """Hall B's slip is truncated given the vendor slip's rank: a = (lo - rho z_V) / s, its
    range's lower end given it, is mostly below 0 at day 150 (the vendor late) and mostly above
    it at day 200 with every shipment early (drawn through the upper tail's Q); the slip is
    above its bound in every world, and 21 in every world where it is pinned."""
    plan = plan_of(case)
    q = plan.quantity_names.index("hall.B.energized.delay")
    v = plan.quantity_names.index("shared.vendor")
    last = plan.q_copula_ptr[q + 1] - 1
    world = numpy_backend.simulate_chunk(plan, 3, 0, 400)[1]
    assert np.all(world[:, q] > bound)
    rho, s = plan.copula_weight[last - 1], plan.copula_weight[last]
    d = plan.copula_dist[last - 1]
    z_v = special.ndtri(cdf(int(plan.dist_kind[d]), plan.dist_param[d], plan.pert_table,
                            world[:, v]))
    upper = np.sum((special.ndtri(plan.copula_low[last]) - rho * z_v) / s > 0.0)
    assert (0 < upper < 100) if case == "two above" else upper > 300
    pinned = plan_of("two pinned")
    world = numpy_backend.simulate_chunk(pinned, 3, 0, 50)[1]
    assert np.all(world[:, pinned.quantity_names.index("hall.B.energized.delay")] == 21.0)
