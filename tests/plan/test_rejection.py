"""The conditioning's independent check (issue 25): rejection sampling of prior worlds.

Prior worlds of the reference are drawn with the NumPy backend and kept when they are
consistent with a status: every recorded day within WINDOW days of the fact, every event the
status does not record after as_of, every burn-in attempt's outcome as recorded. Among the
kept worlds, the distribution of every metric and cost (trough, shortfall, completion, ...),
every milestone (each node's time) and every world quantity is compared with the conditioned
run's (compile_scenario(scenario, status), simulated with the NumPy backend), on the three
statuses of the reference's story (tests/statuses.py: days 110, 150 and 210; the first moves
the shared vendor delay: S1 is 27 days late). The check knows nothing of the conditioning's
method: it uses the prior plan, the status and the model's own rules for when things happen.

How the worlds are drawn. A world's quantities fall into independent groups (by address:
the supply, i.e. the vendor delay and the shipments it links; each hall, island, old unit,
row and new unit; the prices). Plain rejection of whole worlds would keep one in millions
(a dozen recorded days), so each kept world is built group by group, in the order in which
the facts depend on them (supply, halls, islands, old units, rows, new units): a group's
draw is taken from its own stream of prior draws, the first whose facts hold given the groups
already kept (its facts: the recorded days it settles, read off the node times the earlier
groups fix, plus its own draws; a burn-in's attempts replayed from its random streams). That
is rejection sampling of the joint up to the windows' width, since what a later group's facts
need from an earlier group is a day inside a window. Every fact is then checked again on the
finished worlds, through their node times.

The statistics: each column's two samples by a two-sample Kolmogorov-Smirnov test, with a
Bonferroni correction over the compared columns, so the check raises a false alarm with
probability at most ALPHA per status (KS is conservative on columns with ties). A column the
conditioned run holds constant (a fact pinned) must instead lie within two windows of it in
every kept world. A conditioning that pins S1's arrival but leaves the vendor delay at its
prior (conditioning.CONDITION_SHARED = False) must fail: test_the_check_fails_without_the_posterior.

Measured: about 10-20 s per status on two cores (WINDOW 0.5 days, N_KEPT kept worlds).
"""
from __future__ import annotations

import dataclasses
from functools import lru_cache

import numpy as np
import pytest
from scipy import stats

from mcrisk.backends.numpy.driver import simulate_chunk, simulate_worlds
from mcrisk.backends.numpy.schedule import schedule_nodes
from mcrisk.backends.numpy.world import sample_worlds
from mcrisk.core import rng
from mcrisk.core.distributions import sample
from mcrisk.plan import conditioning
from mcrisk.plan.compile import compile_scenario
from mcrisk.plan.window import with_window
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE
from ..statuses import STORY_DAYS, STORY_STRATEGY, story

pytestmark = pytest.mark.slow

WINDOW = 0.5            # days either side of a recorded day
N_KEPT = 1500           # kept prior worlds per status
N_CONDITIONED = 15000   # conditioned worlds
ALPHA = 1e-3            # false alarms per status, all columns together
SEED = 7
BATCH = 64              # candidate draws of a group tried per world at a time


@lru_cache(maxsize=None)
def scenario():
    """The reference with the story's strategy alone (the facts are its decisions)."""
    full = load_scenario(REFERENCE)
    return dataclasses.replace(full, strategies=(full.strategy(STORY_STRATEGY),))


@lru_cache(maxsize=None)
def prior_plan():
    return compile_scenario(scenario())


def group_order(plan) -> list[tuple[str, list[int]]]:
    """The independent groups of the world's quantities, in the order facts depend on them."""
    rank = {"shipment": 0, "shared": 0, "hall": 1, "island": 2, "row": 4, "cost": 6,
            "demand": 7}
    old = {u.id for u in scenario().existing}
    groups: dict[tuple, list[int]] = {}
    for q, label in enumerate(plan.quantity_labels):
        if label.section in ("shared", "shipment"):
            key = (0, "supply")
        elif label.section == "unit":
            key = (3 if label.subject in old else 5, f"unit.{label.subject}")
        else:
            key = (rank[label.section], f"{label.section}.{label.subject}")
        groups.setdefault(key, []).append(q)
    return [(name, qs) for (_, name), qs in sorted(groups.items(), key=lambda kv: kv[0][0])]


class Worlds:
    """Names into a plan's worlds and one strategy's node times."""

    def __init__(self, plan, world, nodes):
        self.plan, self.world, self.nodes = plan, world, nodes

    def q(self, name):
        return self.world[..., self.plan.quantity_names.index(name)]

    def node(self, name):
        return self.nodes[..., self.plan.node_names.index(name)]


def near(x, day):
    return np.abs(x - day) <= WINDOW


def burn_in_path(plan, unit: str, ids: np.ndarray, attempts: int):
    """The first `attempts` attempts of a unit's burn-in in the prior worlds `ids`, replayed
    from its random streams (the model of docs/metrics.md, written out again here): each
    attempt's days, whether it failed, and the days of the fix or RMA after it."""
    q = plan.quantity_names.index(f"unit.{unit}.burn_in")
    b = plan.q_burnin[q]
    a_attempt, a_outcome, a_fix, a_rma = (int(a) for a in plan.q_address[q])
    attempt_d, fix_d, rma_d = plan.burnin_dist[b]
    fail_first, fail_retry = plan.burnin_fail[b]

    def draw(d, address, index):
        u1, u2 = rng.uniforms(SEED, ids, address, index)
        return sample(int(plan.dist_kind[d]), plan.dist_param[d], float(plan.dist_chance[d]),
                      plan.pert_table, u1, u2)

    fails = np.zeros(ids.shape, dtype=int)
    rmas = np.zeros(ids.shape, dtype=int)
    path = []
    for k in range(attempts):
        days = draw(attempt_d, a_attempt, k)
        u, _ = rng.uniforms(SEED, ids, a_outcome, k)
        failed = u < np.where(fails == 0, fail_first, fail_retry)
        fails = np.where(failed, fails + 1, 0)
        rma = failed & (fails == plan.burnin_rma_after[b])
        repair = np.where(rma, draw(rma_d, a_rma, rmas), draw(fix_d, a_fix, k))
        rmas, fails = rmas + rma, np.where(rma, 0, fails)
        path.append((days, failed, repair))
    return path


def attempts_hold(plan, unit_status, ids, start, as_of) -> np.ndarray:
    """Whether the burn-in that starts at `start` goes as the status records it."""
    recorded = unit_status.attempts
    ok = np.ones(np.shape(start), dtype=bool)
    if not recorded:
        return ok & (start > as_of)
    t = start
    for record, (days, failed, repair) in zip(recorded, burn_in_path(plan, unit_status.id, ids,
                                                                     len(recorded))):
        ok &= near(t, record.start)
        end = t + days
        if record.end is None:
            return ok & (end > as_of)
        ok &= near(end, record.end) & (failed == (not record.passed))
        if record.passed:
            return ok
        t = end + repair
        if record.repair_end is None:
            return ok & (t > as_of)
        ok &= near(t, record.repair_end)
    return ok & (t > as_of)          # the next attempt has not started


def group_facts(status, group: str, plan):
    """The facts a group settles, as a function of (its candidate draws W, the node times and
    world the groups before it fix, C, its candidates' scenario numbers) -> ok per candidate."""
    as_of = status.as_of

    def day_or_later(x, day):
        return near(x, day) if day is not None else x > as_of

    if group == "supply":
        arrived = dict(status.arrived)
        return lambda w, c, ids: np.logical_and.reduce([
            day_or_later(w.q(f"shipment.{s.id}.arrival"), arrived.get(s.id))
            for s in scenario().shipments])
    section, _, subject = group.partition(".")
    for hall in scenario().halls:
        if group == f"hall.{hall.id}" and hall.energized is not None:
            day = dict(status.energized).get(hall.id)
            return lambda w, c, ids: day_or_later(w.q(f"hall.{hall.id}.energized"), day)
    for island in scenario().islands:
        if group == f"island.{island.id}" and island.delivery is not None:
            day = dict(status.ready).get(island.id)
            return lambda w, c, ids: day_or_later(w.q(f"island.{island.id}.ready"), day)
    unit = status.unit(subject) if section == "unit" else None
    row = status.row(subject) if section == "row" else None
    group = subject
    if unit is not None and unit.drained is not None:
        return lambda w, c, ids: day_or_later(
            c.node(f"{group} drain starts") + w.q(f"unit.{group}.drain")
            + w.q(f"unit.{group}.removal"), unit.removed)
    if row is not None and row.retrofit_started is not None:
        return lambda w, c, ids: day_or_later(
            c.node(f"row {group} ready for new units") - c.q(f"row.{group}.retrofit")
            + w.q(f"row.{group}.retrofit"), row.retrofit_done)
    if unit is not None and unit.install_start is not None:
        def installed(w, c, ids):
            end = c.node(f"{group} install starts") + w.q(f"unit.{group}.install")
            ok = day_or_later(end, unit.install_end)
            if unit.install_end is None:
                return ok
            ok &= attempts_hold(plan, unit, ids, end, as_of)
            accepted = np.maximum(end + w.q(f"unit.{group}.burn_in"), c.node("island xdr ready"))
            return ok & day_or_later(accepted, unit.accepted)
        return installed
    return None


def final_facts(status, plan, w: Worlds, ids_of) -> dict[str, np.ndarray]:
    """Every fact of the status on finished worlds, through their node times."""
    as_of, checks = status.as_of, {}

    def fact(name, x, day):
        checks[name] = near(x, day) if day is not None else x > as_of

    arrived, energized, ready = dict(status.arrived), dict(status.energized), dict(status.ready)
    for ship in scenario().shipments:
        fact(f"{ship.id} arrived", w.node(f"shipment {ship.id} arrives"), arrived.get(ship.id))
    fact("B energized", w.node("hall B energized"), energized.get("B"))
    fact("xdr ready", w.node("island xdr ready"), ready.get("xdr"))
    for old in scenario().existing:
        u = status.unit(old.id)
        fact(f"{old.id} drained", w.node(f"{old.id} drain starts"), u and u.drained)
        fact(f"{old.id} removed", w.node(f"{old.id} removed"), u and u.removed)
    crew_rows = {plan.node_names[v] for v in plan.crew_node[0, :plan.n_crew_rows[0]]}
    for r in scenario().rows():
        name, rs = f"row {r.id} ready for new units", status.row(r.id)
        if name in crew_rows:
            fact(f"{r.id} retrofit started", w.node(name) - w.q(f"row.{r.id}.retrofit"),
                 rs and rs.retrofit_started)
            fact(f"{r.id} retrofit done", w.node(name), rs and rs.retrofit_done)
    for new in scenario().incoming:
        u = status.unit(new.id)
        start = w.node(f"{new.id} install starts")
        fact(f"{new.id} installed", start, u and u.install_start)
        if u is not None and u.install_start is not None:
            end = start + w.q(f"unit.{new.id}.install")
            fact(f"{new.id} install end", end, u.install_end)
            if u.install_end is not None:
                checks[f"{new.id} burn-in"] = attempts_hold(plan, u, ids_of(f"unit.{new.id}"),
                                                            end, as_of)
        fact(f"{new.id} accepted", w.node(f"{new.id} accepted"), u and u.accepted)
    return checks


@lru_cache(maxsize=None)
def kept_worlds(as_of: float):
    """N_KEPT prior worlds consistent with the story at as_of: (world, metrics, nodes)."""
    plan, status = prior_plan(), story(as_of)
    groups = group_order(plan)
    world = np.zeros((N_KEPT, plan.n_quantities))
    ids_of_group = {}
    targets = np.arange(N_KEPT)
    span = 2**32 // len(groups)              # scenario numbers per group (all below 2**32)
    tries = span // N_KEPT                   # candidate draws per world and group
    for g, (name, qs) in enumerate(groups):
        base = np.uint64(g * span)
        facts = group_facts(status, name, plan)
        chosen = np.zeros(N_KEPT, dtype=np.uint64)
        context = None
        if facts is not None:
            context = Worlds(plan, world, schedule_nodes(plan, 0, world))
        pending, j = targets, 0
        while pending.size:
            assert j < tries, f"group {name}: too few draws satisfy the facts"
            k = min(BATCH * (1 if facts is None else 8), tries - j)
            ids = base + (np.arange(j, j + k, dtype=np.uint64)[None, :] * np.uint64(N_KEPT)
                          + pending[:, None].astype(np.uint64))
            drawn = sample_worlds(plan, SEED, ids.ravel(), only=qs).reshape(
                len(pending), k, plan.n_quantities)
            if facts is None:
                ok = np.ones((len(pending), k), dtype=bool)
            else:
                sub = Worlds(plan, context.world[pending][:, None, :],
                             context.nodes[pending][:, None, :])
                ok = facts(Worlds(plan, drawn, None), sub, ids)
            found = ok.any(axis=1)
            first = ok.argmax(axis=1)
            done = pending[found]
            world[np.ix_(done, qs)] = drawn[found, first[found]][:, qs]
            chosen[done] = ids[found, first[found]]
            pending, j = pending[~found], j + k
        ids_of_group[name] = chosen
    metrics, nodes = simulate_worlds(plan, world, keep_nodes=True)
    finished = Worlds(plan, world, nodes[:, 0])
    for name, ok in final_facts(status, plan, finished, ids_of_group.get).items():
        assert ok.all(), f"day {as_of}: {name} fails in {np.count_nonzero(~ok)} kept worlds"
    return world, metrics[:, 0], nodes[:, 0]


def conditioned(as_of: float):
    # counted over the whole horizon, as the prior plan's metrics are (not the future window)
    plan = with_window(compile_scenario(scenario(), story(as_of)), 0.0)
    metrics, world, nodes = simulate_chunk(plan, 11, 0, N_CONDITIONED, keep_nodes=True)
    return world, metrics[:, 0], nodes[:, 0]


def compare(as_of: float, got) -> tuple[float, list[str]]:
    """(the smallest Bonferroni-corrected p-value, what fails) of the conditioned run `got`
    against the kept prior worlds."""
    plan = prior_plan()
    names = ([f"world {n}" for n in plan.quantity_names]
             + [f"metric {n}" for n in metric_names(plan)]
             + [f"node {n}" for n in plan.node_names])
    kept = np.concatenate(kept_worlds(as_of), axis=1)
    ours = np.concatenate(got, axis=1)
    kept, ours = (np.nan_to_num(x, posinf=1e300, neginf=-1e300) for x in (kept, ours))
    failures, tests = [], []
    for c, name in enumerate(names):
        a, b = ours[:, c], kept[:, c]
        if np.ptp(a) == 0.0:
            if np.abs(b - a[0]).max() > 2 * WINDOW + 1e-9:
                failures.append(f"{name}: {a[0]:g} in every conditioned world, but "
                                f"{b.min():g} to {b.max():g} in the kept ones")
            continue
        tests.append((name, stats.ks_2samp(a, b).pvalue))
    corrected = [(name, min(1.0, p * len(tests))) for name, p in tests]
    failures += [f"{name}: p = {p:.2g}" for name, p in sorted(corrected, key=lambda t: t[1])
                 if p < ALPHA]
    return min(p for _, p in corrected), failures


def metric_names(plan):
    from mcrisk.core.definitions import COSTS, METRICS
    return list(METRICS) + list(COSTS[:plan.n_costs])


@pytest.mark.parametrize("as_of", STORY_DAYS)
def test_conditioned_run_matches_rejection_sampling(as_of):
    smallest, failures = compare(as_of, conditioned(as_of))
    assert not failures, f"day {as_of:g} (smallest corrected p {smallest:.3g}):\n" + \
        "\n".join(failures[:20])


def test_the_story_moves_the_vendor_delay():
    prior = sample_worlds(prior_plan(), SEED, np.arange(20000, dtype=np.uint64), only=[0])[:, 0]
    kept = kept_worlds(110.0)[0][:, 0]
    assert np.median(kept) > np.median(prior) + 4.0          # S1 was 27 days late
    assert stats.ks_2samp(kept, prior).pvalue < 1e-9


def test_the_check_fails_without_the_posterior(monkeypatch):
    # S1's arrival pinned, its own delay the rest, but the vendor delay left at its prior.
    monkeypatch.setattr(conditioning, "CONDITION_SHARED", False)
    smallest, failures = compare(110.0, conditioned(110.0))
    assert failures and smallest < ALPHA, smallest
    assert any("shared.vendor" in f for f in failures)
