"""Conditioning the world on a status: every uncertain quantity drawn from its posterior.

A status (mcrisk/core/status.py) says what has happened by `as_of`. Each of its facts about
a time is a fact about world quantities (mcrisk/plan/world.py): a date, or an activity's
duration from its recorded start, is a constant c plus a sum of independent SAMPLE terms
(a shared delay, its own delay, a risk's impact, ...). A recorded time is an equality
(c + terms = a); an event the status does not record is a bound (c + terms > as_of), since
the status is complete. A risk that occurred, or can no longer occur, pins the risk's
quantity; a measured per-GPU performance pins the type's; a revised promise replaces a
shipment's planned day. Every fact is met in every world: an event with a recorded time
happens then, an unrecorded one after `as_of`.

Each fact's unknown terms are its non-fixed terms. A term of two or more facts is SHARED.
Facts linked by shared terms form a group; a group with one shared term V (or a single fact
with two unknown terms, the earlier one taken as V) and at most one other unknown term E_f per
fact is conditioned exactly:

  p(V | facts) ~ prior(V) x prod_f L_f(V), with
    L_f(V) = density of E_f at a_f - c_f - V      (equality; without E_f, V = a_f - c_f)
           = P(E_f > as_of - c_f - V)              (bound; without E_f, 1 if c_f + V > as_of)

computed on a grid and drawn from a quantile table at V's own address (mcrisk/plan/posterior.py,
which states the table's numerical error); then E_f given V is exact: an equality's E_f is
a_f - c_f - V (Q_REST), a bound's E_f its prior truncated to above as_of - c_f - V (Q_ABOVE,
drawn at E_f's own address by the kernels through the distribution's CDF). Every world stays
equally weighted and every draw keeps its address, so strategies share worlds and consecutive
nights stay paired; a fact's date itself is pinned to its recorded day.

Refused, located at the status file's key (ScenarioError; docs/status.md lists them): a fact
impossible under the scenario (zero likelihood: a day outside what its distributions allow,
facts that leave a shared term no value), a group with two shared unknown terms or a fact with
two unknown terms besides its shared one (the hint names the quantities, a risk's with "say
in the status whether it occurred"), an equality fact whose own term may be exactly 0 (a
`chance` delay) alongside a shared term, and a risk recorded as occurred that this run has
disabled.

CONDITION_SHARED = False leaves every shared term at its prior (the facts' own terms still
meet the facts): the wrong conditioning that tests/plan/test_rejection.py's rejection
sampling check must reject.
"""
from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

import numpy as np

from ..core.definitions import Q_ABOVE, Q_REST, Q_SAMPLE, Q_SUM
from ..core.distributions import KIND_FIXED, KIND_LOGNORMAL, KIND_PERT, KIND_TRIANGULAR, \
    KIND_UNIFORM
from ..core.errors import NO_VALUE, Problem, ScenarioError
from ..core.model import Scenario
from ..core.quantities import QuantityLabel
from ..core.status import Status
from .posterior import Encoded, NoPosterior, log_density, log_survival, posterior
from .world import World

CONDITION_SHARED = True
TOLERANCE = 1e-9        # days: a recorded day equals a fixed date within this


@dataclass
class Fact:
    """One fact about world quantities: start + sum of `quantities` == at, or > as_of when
    `at` is None. `key` and `value` locate it in the status file (NO_VALUE: an event the
    status does not record), `what` names it in messages; `pin`: the fact's single quantity
    (a date) is set to at - start exactly."""

    key: str
    value: object
    what: str
    quantities: tuple[int, ...]
    start: float = 0.0
    at: float | None = None
    pin: bool = False
    const: float = field(default=0.0, init=False)      # start + the fixed terms
    unknowns: tuple[int, ...] = field(default=(), init=False)


class Refused(Exception):
    """A fact the conditioning refuses: the problem, located at the fact's key."""

    def __init__(self, fact: Fact, message: str, hint: str = ""):
        super().__init__(message)
        self.fact, self.message, self.hint = fact, message, hint

    def problem(self, path: str) -> Problem:
        return Problem(path, self.fact.key, self.fact.value, self.message, self.hint)


def encoded(world: World, d: int) -> Encoded:
    kind, param, chance = world.dists[d]
    tables = np.concatenate(world.pert_tables) if world.pert_tables else np.zeros(1)
    return Encoded(kind, np.array(param, dtype=np.float64), float(chance), tables)


def support(dist: Encoded) -> tuple[float, float]:
    """The smallest and largest values a (non-chance part of a) distribution draws."""
    p = dist.param
    if dist.kind == KIND_FIXED:
        return float(p[0]), float(p[0])
    if dist.kind in (KIND_UNIFORM, KIND_PERT):
        return float(p[0]), float(p[0] + p[1])
    if dist.kind == KIND_TRIANGULAR:
        return float(p[0]), float(p[2])
    if dist.kind == KIND_LOGNORMAL:    # a bounded one's [min, max] (max 0: none)
        return float(p[2]), float(p[3]) if p[3] > 0.0 else math.inf
    raise ValueError(f"no support for kind {dist.kind}")


def possible(dist: Encoded, x: float) -> bool:
    """Whether a distribution (a `chance` included) can draw x."""
    if dist.chance < 1.0 and x == 0.0:
        return True
    low, high = support(dist)
    if dist.kind == KIND_LOGNORMAL:
        return x > 0.0 and math.isfinite(x) and low - TOLERANCE <= x <= high + TOLERANCE
    return low - TOLERANCE <= x <= high + TOLERANCE


def _pin(world: World, q: int, value: float) -> None:
    """Quantity q becomes the constant `value` (a SUM without terms), at its place."""
    world.rows[q].update(kind=Q_SUM, const=float(value), terms=(), dist=-1)


def pin_quantities(scenario: Scenario, status: Status, world: World, handles: dict) -> None:
    """Risks that occurred or can no longer occur, and measured performance: pinned."""
    problems = []
    for risk_id, impact in status.risks:
        key = f"risks.{risk_id}.occurred"
        value = {"impact": impact} if impact is not None else False
        q = world.index.get(QuantityLabel("risk", risk_id).name)
        if q is None:
            if impact is not None:
                problems.append(Problem(status.path, key, value, f"risk {risk_id!r} occurred, "
                                        "but it is not enabled in this run",
                                        "enable it in the scenario, or run with its "
                                        "assessed risks (--risks pre)"))
            continue
        dist = encoded(world, world.rows[q]["dist"])
        if impact is not None and not possible(dist, float(impact)):
            low, high = support(dist)
            problems.append(Problem(status.path, key, value, f"risk {risk_id!r}'s impact must "
                                    f"be between {low:g} and {high:g} days in this scenario",
                                    "check the impact, or the risk's distribution"))
            continue
        _pin(world, q, 0.0 if impact is None else float(impact))
    for type_id, measured in status.performance:
        key = f"unit_types.{type_id}.h100_eq_per_gpu"
        q = handles["performance"].get(type_id)
        if q is None:
            nominal = scenario.unit_type(type_id).h100_eq_per_gpu
            if abs(measured - nominal) > TOLERANCE:
                problems.append(Problem(status.path, key, measured, "the scenario fixes "
                                        f"h100_eq_per_gpu = {nominal:g} for this type",
                                        "give the type an uncertain `performance` that allows "
                                        "the measure, or set h100_eq_per_gpu to it"))
            continue
        dist = encoded(world, world.rows[q]["dist"])
        if not possible(dist, float(measured)):
            low, high = support(dist)
            problems.append(Problem(status.path, key, measured, "outside the scenario's "
                                    f"performance, {low:g} to {high:g} H100-eq per GPU",
                                    "check the measure, or widen the type's performance"))
            continue
        _pin(world, q, float(measured))
    if problems:
        raise ScenarioError(problems)


def date_facts(scenario: Scenario, status: Status, world: World, handles: dict) -> list[Fact]:
    """The facts on shipments, halls and islands: arrived / energized / ready on a day, or not
    yet (a bound). A revised promise replaces a shipment's planned day. A hall or island the
    scenario makes ready at day 0 (no `energized`, no `delivery`) needs no record."""
    facts, problems = [], []
    arrived, promised = dict(status.arrived), dict(status.promised)
    for ship in scenario.shipments:
        q = handles["arrival"][ship.id]
        if ship.id in promised and ship.id not in arrived:
            world.rows[q]["const"] = float(promised[ship.id])
        facts.append(_date_fact(f"shipments.{ship.id}.arrived", arrived.get(ship.id),
                                f"shipment {ship.id}'s arrival", q))
    for key, section, records, ready_q in (
            ("halls", "energized", dict(status.energized), handles["energized"]),
            ("islands", "ready", dict(status.ready), handles["island_ready"])):
        things = scenario.halls if key == "halls" else scenario.islands
        for thing in things:
            day = records.get(thing.id)
            q = ready_q.get(thing.id)
            what = f"{key[:-1]} {thing.id} {'energized' if key == 'halls' else 'ready'}"
            if q is None:
                if day is not None and abs(day) > TOLERANCE:
                    problems.append(Problem(status.path, f"{key}.{thing.id}.{section}", day,
                                            f"the scenario has {what} at day 0",
                                            f"give the {key[:-1]} a date in the scenario, or "
                                            "record 0"))
                continue
            facts.append(_date_fact(f"{key}.{thing.id}.{section}", day, what, q))
    if problems:
        raise ScenarioError(problems)
    return facts


def _date_fact(key: str, day: float | None, what: str, q: int) -> Fact:
    return Fact(key, NO_VALUE if day is None else day, what, (q,),
                at=None if day is None else float(day), pin=day is not None)


def condition(world: World, facts: list[Fact], status: Status) -> None:
    """Rewrite the world so every fact holds in every world, each quantity drawn from its
    posterior (the module's docstring); raises ScenarioError with every refusal."""
    problems = []
    for fact in facts:
        try:
            fact.const, fact.unknowns = _expand(world, fact)
        except Refused as refused:
            problems.append(refused.problem(status.path))
    if problems:
        raise ScenarioError(problems)
    plans = []
    for group in _groups(facts):
        try:
            plans.append(_solve(world, group, status))
        except Refused as refused:
            problems.append(refused.problem(status.path))
    if problems:
        raise ScenarioError(problems)
    for rewrite in plans:              # every group solved against the priors, then rewritten
        rewrite()
    for fact in facts:
        if fact.pin and fact.at is not None:
            _pin(world, fact.quantities[0], fact.at - fact.start)


def _expand(world: World, fact: Fact) -> tuple[float, tuple[int, ...]]:
    """(start + the fixed terms' values, the unknown SAMPLE terms) of a fact's quantities."""
    const, leaves = fact.start, []

    def walk(q: int) -> None:
        nonlocal const
        row = world.rows[q]
        if row["kind"] == Q_SUM:
            const += row["const"]
            for t in row["terms"]:
                walk(t)
        elif row["kind"] == Q_SAMPLE and encoded(world, row["dist"]).fixed:
            const += world.dists[row["dist"]][1][0]
        elif row["kind"] == Q_SAMPLE:
            leaves.append(q)
        else:
            raise ValueError(f"a fact on {world.names[q]!r}, which is not a sum of draws")

    for q in fact.quantities:
        walk(q)
    twice = [world.names[q] for q, n in Counter(leaves).items() if n > 1]
    if twice:
        raise Refused(fact, f"{fact.what} adds {', '.join(twice)} twice (a risk "
                                     "applying to it twice): not supported",
                               "apply each risk once")
    return const, tuple(leaves)


def _groups(facts: list[Fact]) -> list[list[Fact]]:
    """Facts linked by a shared unknown term, in the order of their first fact."""
    parent = list(range(len(facts)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first: dict[int, int] = {}
    for i, fact in enumerate(facts):
        for q in fact.unknowns:
            j = first.setdefault(q, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[Fact]] = {}
    for i, fact in enumerate(facts):
        groups.setdefault(root(i), []).append(fact)
    return list(groups.values())


def _hint(world: World, quantities) -> str:
    risks = [world.labels[q].subject for q in quantities if world.labels[q].section == "risk"]
    if risks:
        return "say in the status whether " + " and ".join(
            f"risk {r!r} occurred (risks.{r}.occurred)" for r in risks)
    return ("record the facts that settle " + ", ".join(world.names[q] for q in quantities)
            + ", or make all but one of them fixed in the scenario")


def _solve(world: World, group: list[Fact], status: Status):
    """Check one group of facts and return the rewrite that conditions it."""
    counts = Counter(q for fact in group for q in fact.unknowns)
    shared = sorted(q for q, n in counts.items() if n > 1)
    if len(shared) > 1:
        names = ", ".join(world.names[q] for q in shared)
        raise Refused(group[0], f"{', '.join(f.key for f in group)} share {names}: "
                                         "conditioning supports one shared unknown quantity "
                                         "per group of facts", _hint(world, shared[1:]))
    v = shared[0] if shared else None
    if v is None and len(group) == 1 and len(group[0].unknowns) == 2:
        v = min(group[0].unknowns)                  # the earlier one: the other follows it
    own: dict[int, int | None] = {}
    for i, fact in enumerate(group):
        others = [q for q in fact.unknowns if q != v]
        if len(others) > 1:
            raise Refused(fact, f"{fact.what} depends on {len(others)} unknown "
                                         f"quantities ({', '.join(world.names[q] for q in others)}"
                                         ") besides any shared one", _hint(world, others[1:]))
        own[i] = others[0] if others else None
        if own[i] is not None and v is not None and own[i] < v:
            raise Refused(fact, f"{world.names[own[i]]} comes before "
                                         f"{world.names[v]} in the world: not supported")
        if own[i] is not None and v is not None and fact.at is not None \
                and encoded(world, world.rows[own[i]]["dist"]).chance < 1.0:
            raise Refused(fact, f"{world.names[own[i]]} may be exactly 0 (a `chance`) "
                                         f"and {fact.what} also depends on {world.names[v]}: "
                                         "not supported", _hint(world, [v]))
    for i, fact in enumerate(group):
        if v is None:
            _check_alone(world, fact, own[i], status.as_of)
    value_of_v = None
    if v is not None and (CONDITION_SHARED or v not in shared):
        value_of_v = _posterior_of(world, v, group, own, status.as_of)
        world.likelihoods[v] = _log_likelihood(world, group, own, status.as_of)
    return lambda: _rewrite(world, group, own, v, value_of_v, status.as_of)


def _check_alone(world: World, fact: Fact, e: int | None, as_of: float) -> None:
    """A fact with at most one unknown term: refused when impossible under the scenario."""
    if e is None:
        if fact.at is not None and abs(fact.const - fact.at) > TOLERANCE:
            raise Refused(fact, f"the scenario has {fact.what} on day {fact.const:g} "
                                         "in every world", "check the day, or make the "
                                         "scenario's duration uncertain")
        if fact.at is None and not fact.const > as_of:
            raise Refused(fact, f"not recorded by as_of {as_of:g}, but the scenario "
                                         f"has {fact.what} on day {fact.const:g} in every world",
                                   "record the day it happened")
        return
    dist = encoded(world, world.rows[e]["dist"])
    low, high = support(dist)
    low = min(low, 0.0) if dist.chance < 1.0 else low
    if fact.at is not None and not possible(dist, fact.at - fact.const):
        raise Refused(fact, f"the scenario has {fact.what} between day "
                                     f"{fact.const + low:g} and day {fact.const + high:g} "
                                     f"({world.names[e]} from {low:g} to {high:g})",
                               "check the day, or widen the scenario's distribution")
    if fact.at is None and not np.isfinite(log_survival(dist, as_of - fact.const)):
        raise Refused(fact, f"not recorded by as_of {as_of:g}, but the scenario has "
                                     f"{fact.what} by day {fact.const + high:g} in every world",
                               "record the day it happened, or widen the scenario's "
                               "distribution")


def _log_likelihood(world: World, group: list[Fact], own: dict, as_of: float):
    """The joint log-likelihood of a group's facts at values x of its shared term."""
    parts = []
    for i, fact in enumerate(group):
        if own[i] is None:
            continue
        dist = encoded(world, world.rows[own[i]]["dist"])
        if fact.at is not None:
            parts.append(lambda x, d=dist, r=fact.at - fact.const: log_density(d, r - x))
        else:
            parts.append(lambda x, d=dist, b=as_of - fact.const: log_survival(d, b - x))
    bounds = [as_of - f.const for i, f in enumerate(group) if own[i] is None and f.at is None]

    def log_likelihood(x: np.ndarray) -> np.ndarray:
        total = np.zeros(np.shape(x))
        for part in parts:
            total = total + part(x)
        for b in bounds:
            total = np.where(x > b, total, -np.inf)
        return total
    return log_likelihood


def _posterior_of(world: World, v: int, group: list[Fact], own: dict, as_of: float):
    """V's value when a fact fixes it (a float), else its posterior (posterior.Posterior)."""
    prior = encoded(world, world.rows[v]["dist"])
    log_likelihood = _log_likelihood(world, group, own, as_of)
    fixed = [(f, f.at - f.const) for i, f in enumerate(group) if own[i] is None
             and f.at is not None]
    if fixed:
        fact, value = fixed[0]
        for other, other_value in fixed[1:]:
            if abs(other_value - value) > TOLERANCE:
                raise Refused(other, f"disagrees with {fact.key}: together they "
                                              f"give {world.names[v]} two values")
        if not possible(prior, value) or not np.isfinite(log_likelihood(np.array([value]))[0]):
            raise Refused(fact, f"gives {world.names[v]} = {value:g}, which the "
                                         "scenario or the other facts on it "
                                         f"({', '.join(f.key for f in group if f is not fact)}) "
                                         "do not allow", "check the days")
        return value
    try:
        return posterior(prior, log_likelihood)
    except NoPosterior:
        raise Refused(group[0], f"{', '.join(f.key for f in group)} are impossible "
                                         f"together: they leave {world.names[v]} no value the "
                                         "scenario allows", "check the days") from None


def _rewrite(world: World, group: list[Fact], own: dict, v: int | None, value_of_v,
             as_of: float) -> None:
    if v is not None and value_of_v is not None:
        if isinstance(value_of_v, float):
            _pin(world, v, value_of_v)
        elif value_of_v.chance <= 0.0:
            _pin(world, v, 0.0)
        else:
            world.rows[v]["dist"] = world.table_dist(value_of_v.table, value_of_v.chance)
    terms = (v,) if v is not None else ()
    for i, fact in enumerate(group):
        e = own[i]
        if e is None:
            continue
        if fact.at is not None:
            world.rows[e].update(kind=Q_REST, const=fact.at - fact.const, terms=terms)
        else:
            world.rows[e].update(kind=Q_ABOVE, const=as_of - fact.const, terms=terms)
