"""A status run with correlated quantities (issue 28, item 3): a correlation group where the
status conditions exactly one member X, on its own, is conditioned exactly (X as the
conditioning draws it, the others from the Gaussian copula given X's rank); anything else is
refused at the correlation's name (mcrisk/plan/copula.py).

Checked by its definition, rejection sampling: prior worlds of the reference with
island.xdr.ready.delay (X, lognormal) rank-correlated RANK with unit.N01.install (Y,
triangular 2, 4, 10) are drawn with the NumPy backend, those that meet the fact on X kept
(the fabric not ready by day 150: 90 + X + 14 > 150; or ready on day 145 within WINDOW
days), and Y's kept distribution compared with the conditioned run's by a two-sample
Kolmogorov-Smirnov test at ALPHA, and (above a bound, where X still varies) the rank
correlation of (X, Y) by Fisher's z within four standard errors. The check has power: the
conditioned run with the correlation set to 0, or with X's raw uniform in place of its
conditioned rank (the copula ignoring the status), is rejected at ALPHA.

Measured: about 2 s for the file on two cores.
"""
from __future__ import annotations

import dataclasses
from functools import cache

import numpy as np
import pytest
from scipy import stats

from mcrisk.backends.numpy.world import sample_worlds
from mcrisk.core.errors import ScenarioError
from mcrisk.core.facts import with_facts
from mcrisk.core.model import Correlation
from mcrisk.core.status import Status
from mcrisk.plan import copula
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE, SCENARIOS

X, Y = "island.xdr.ready.delay", "unit.N01.install"
RANK = 0.7
AS_OF = 150.0
READY = 145.0           # the recorded day of the equality case
WINDOW = 0.5            # days either side of it that a prior world may miss it by
N_PRIOR = 400_000       # prior worlds drawn (about 25% meet the bound, 0.7% the equality)
N_CONDITIONED = 20_000
ALPHA = 1e-3
SEED = 11


def correlated(*pairs: tuple[str, str, float], path=REFERENCE):
    scenario = load_scenario(path)
    return dataclasses.replace(scenario, strategies=scenario.strategies[:1],
                               correlations=tuple(Correlation((a, b), r) for a, b, r in pairs))


def bound() -> Status:
    """Day 150 with nothing recorded: among others, the fabric is not ready (X > 46)."""
    return Status("status.toml", "0" * 64, AS_OF)


def equality() -> Status:
    """Day 150 with the fabric ready on day 145 (X = 41)."""
    return Status("status.toml", "0" * 64, AS_OF, ready=(("xdr", READY),))


def draws(plan, names, count, seed=SEED):
    index = [plan.quantity_names.index(n) for n in names]
    world = sample_worlds(plan, seed, np.arange(count, dtype=np.uint64), only=sorted(index))
    return [world[:, q] for q in index]


@cache
def kept(case: str) -> tuple[np.ndarray, np.ndarray]:
    """(X, Y) of the prior worlds that meet the case's fact on the fabric."""
    plan = compile_scenario(correlated((Y, X, RANK)))
    x, y, _, ready = draws(plan, [X, Y, "island.xdr.install", "island.xdr.ready"], N_PRIOR)
    keep = ready > AS_OF if case == "bound" else np.abs(ready - READY) <= WINDOW
    return x[keep], y[keep]


def conditioned(case: str, rank: float = RANK) -> tuple[np.ndarray, np.ndarray]:
    status = bound() if case == "bound" else equality()
    plan = compile_scenario(with_facts(correlated((Y, X, rank)), status))
    x, y = draws(plan, [X, Y], N_CONDITIONED, seed=SEED + 1)
    return x, y


def fisher_z_gap(a: tuple, b: tuple) -> float:
    """|Fisher z of Spearman(a) - of Spearman(b)| in standard errors."""
    za, zb = (np.arctanh(stats.spearmanr(*s).statistic) for s in (a, b))
    se = np.sqrt(1.06 / (len(a[0]) - 3) + 1.06 / (len(b[0]) - 3))
    return abs(za - zb) / se


@pytest.mark.parametrize("case", ["bound", "equality"])
def test_the_partner_of_a_conditioned_quantity_matches_rejection_sampling(case):
    x_kept, y_kept = kept(case)
    x, y = conditioned(case)
    assert len(y_kept) > 2000, len(y_kept)
    assert stats.ks_2samp(y_kept, y).pvalue > ALPHA
    assert stats.ks_2samp(x_kept, x).pvalue > ALPHA if case == "bound" else np.all(x == 41.0)
    if case == "bound":
        assert fisher_z_gap((x_kept, y_kept), (x, y)) < 4.0


@pytest.mark.parametrize("case", ["bound", "equality"])
def test_the_check_rejects_the_partner_drawn_as_if_uncorrelated(case):
    _, y_kept = kept(case)
    _, y = conditioned(case, rank=0.0)
    assert stats.ks_2samp(y_kept, y).pvalue < ALPHA


@pytest.mark.parametrize("case", ["bound", "equality"])
def test_the_check_rejects_the_copula_that_ignores_the_status(case, monkeypatch):
    """X's entry in Y's row given its raw uniform's range (0, 1), as without a status."""
    monkeypatch.setattr(copula, "score_range", lambda world, q: (0.0, 1.0))
    _, y_kept = kept(case)
    _, y = conditioned(case)
    assert stats.ks_2samp(y_kept, y).pvalue < ALPHA


def test_a_status_that_leaves_a_group_alone_draws_it_as_without_one():
    """N02's and N03's installs are not conditioned at day 150: their draws are those of
    the run without a status, bit for bit, while Y's, in the group the status conditions,
    are not."""
    scenario = correlated(("unit.N02.install", "unit.N03.install", RANK), (X, Y, RANK))
    names = ["unit.N02.install", "unit.N03.install"]
    plain = compile_scenario(scenario)
    status = compile_scenario(with_facts(scenario, bound()))
    for a, b in zip(draws(plain, names, 5000), draws(status, names, 5000)):
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(*draws(status, [Y], 5000) + draws(plain, [Y], 5000))


def refusals(scenario, status) -> list[str]:
    with pytest.raises(ScenarioError) as info:
        compile_scenario(with_facts(scenario, status))
    return [f"{p.key} = {p.value!r}: {p.message} ({p.hint})" for p in info.value.problems]


HINT = "(run without this correlation (a copy of the scenario), or without the status)"


def test_two_conditioned_members_of_a_group_are_refused_at_their_names():
    """scenarios/correlated.toml at day 100: the vendor slip is drawn from its posterior
    given the shipments not yet arrived, and hall B's slip above its bound."""
    scenario = load_scenario(SCENARIOS / "correlated.toml")
    assert refusals(scenario, Status("status.toml", "0" * 64, 100.0)) == [
        "correlations[0].between[0] = 'shared.vendor': is conditioned by the status, as is "
        f"'hall.B.energized.delay' of its correlation group: a status may condition one "
        f"quantity of a group {HINT}",
        "correlations[0].between[1] = 'hall.B.energized.delay': is conditioned by the status, "
        "as is 'shared.vendor' of its correlation group: a status may condition one quantity "
        f"of a group {HINT}"]


@pytest.mark.parametrize("member, why", [
    ("hall.B.energized.delay", "is conditioned by the status and may be exactly 0 (a "
     "`chance`): its rank given the status is not defined"),
    ("shipment.S1.arrival.delay", "is conditioned by the status together with shared.vendor: "
     "its value given the facts varies from world to world with theirs, which the correlation "
     "does not follow"),
    ("shared.vendor", "is conditioned by the status together with the other facts on it: its "
     "value given the facts varies from world to world with theirs, which the correlation "
     "does not follow"),
])
def test_a_member_conditioned_other_than_alone_is_refused_at_its_name(member, why):
    """At day 150 with nothing recorded: hall B's slip is a `chance` (not energized: drawn
    above its bound, but its rank has an atom), S1's own delay is drawn above a bound that
    subtracts the vendor slip, and the vendor slip from its posterior."""
    scenario = correlated((Y, member, RANK))
    assert refusals(scenario, bound()) == [f"correlations[0].between[1] = {member!r}: {why} "
                                           f"{HINT}"]
