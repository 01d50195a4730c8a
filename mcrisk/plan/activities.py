"""Activities under a status: what has happened to units and rows, in every strategy.

Facts about activities are physical, so every strategy gets them (docs/status.md):

* Strategies from today (`from_today`): an installed unit stays in its row in every strategy
  (its placement is replaced by the fact), a drained unit stays drained. A strategy that keeps
  a drained unit, or whose placement would put more units in a row than it holds once an
  installed unit is there, is refused with a located error naming the strategy; so is a
  liquid unit installed in an air row with no retrofit done, or in a row whose units were
  not removed.
* Durations (`activity_facts`, conditioned by mcrisk/plan/conditioning.py with the dates):
  an activity that ended fixes its duration (drain + removal from the drain start, install,
  retrofit, an early failure's repair); one still running has its duration conditioned on
  exceeding the days already spent.
* Burn-in (`condition_units`): a unit's BURNIN quantity continues its loop from the recorded
  state (days so far, the attempt it resumes at, failures in a row, RMAs; the attempt, fix or
  RMA running at as_of conditioned on its elapsed days), so the attempts so far count toward
  fix, RMA and soak policies and toward the chance of an early failure; a passed burn-in is
  fixed. An accepted unit that has not failed early by as_of has its failure's chance and age
  conditioned on that: c' = c (1 - G(t)) / (1 - c G(t)), the age drawn above t = as_of minus
  its acceptance (G the age's CDF), counted from its acceptance in every strategy (a soak
  policy's effect on it is history the status does not record). A recorded failure fixes it.
* Nodes (`condition_plans`): a recorded event pins its node in every strategy (the time of
  the fact, no deps, nothing added). An event not recorded happens at or after as_of: its
  node's time is floored at as_of (node_floor), and a retrofit not started starts at or
  after as_of. That floor is a rule, not conditioning, where the model would have had the
  event by as_of (a strategy's day-60 drain that has not happened happens at as_of); where
  the world's facts already put the event after as_of it changes nothing. A retrofit
  recorded as started, done or running, holds one of the strategy's crews from its start
  (the crews' days count from the first start); more rows retrofitted at once than a
  strategy has crews is refused, naming the strategy and the rows.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..core.definitions import (BURNIN_ATTEMPT, BURNIN_FIX, BURNIN_FRESH, BURNIN_RMA,
                                EARLY_SURVIVED, NODE_CREW, NODE_MAX, Q_BURNIN, Q_SUM)
from ..core.errors import NO_VALUE, Problem, ScenarioError
from ..core.model import Scenario
from ..core.status import Status, UnitStatus
from .conditioning import TOLERANCE, Fact, encoded, possible, support
from .posterior import log_survival
from .world import World


def from_today(scenario: Scenario, status: Status) -> Scenario:
    """The scenario whose strategies apply to what remains: every installed unit placed in
    its row; refused (ScenarioError) where a strategy contradicts the facts."""
    problems: list[Problem] = []
    installed = {u.id: u for u in status.units if u.install_start is not None}
    drained = {u.id: u.drained for u in status.units if u.drained is not None}
    rows = {row.id: row for row in scenario.rows()}
    strategies = []
    for strategy in scenario.strategies:
        for unit_id in strategy.keep:
            if unit_id in drained:
                problems.append(Problem(
                    status.path, f"units.{unit_id}.drained", drained[unit_id],
                    f"strategy {strategy.name!r} keeps {unit_id} in service, but it was "
                    "drained", "take it out of the strategy's `keep`, or record no drain"))
        placement = tuple((u, installed[u].row if u in installed else r)
                          for u, r in strategy.placement)
        by_row: dict[str, list[str]] = {}
        for u, r in placement:
            by_row.setdefault(r, []).append(u)
        for row_id, units in by_row.items():
            here = [u for u in units if u in installed]
            if here and len(units) > rows[row_id].positions:
                others = [u for u in units if u not in installed]
                problems.append(Problem(
                    status.path, f"units.{here[0]}.installed.row", row_id,
                    f"strategy {strategy.name!r} also places {', '.join(others)} in row "
                    f"{row_id}: {len(units)} units in its {rows[row_id].positions} positions",
                    "place them elsewhere in that strategy"))
        strategies.append(dataclasses.replace(strategy, placement=placement))
    problems += _installed_rows(scenario, status, installed)
    if problems:
        raise ScenarioError(problems)
    return dataclasses.replace(scenario, strategies=tuple(strategies))


def _installed_rows(scenario: Scenario, status: Status, installed: dict) -> list[Problem]:
    """A unit installed where it cannot be: a liquid unit in an air row not retrofitted by
    its install, a row whose units were not removed by then (true in every strategy)."""
    problems = []
    rows = {row.id: row for row in scenario.rows()}
    kinds = {u.id: scenario.unit_type(u.type) for u in scenario.incoming}
    removed = {u.id: u.removed for u in status.units}
    for unit in installed.values():
        row, key = rows[unit.row], f"units.{unit.id}.installed.row"
        done = status.row(row.id).retrofit_done if status.row(row.id) else None
        if kinds[unit.id].cooling == "liquid" and row.cooling == "air" \
                and (done is None or done > unit.install_start):
            problems.append(Problem(status.path, key, row.id, f"{unit.id} is liquid-cooled and "
                                    f"row {row.id} is air-cooled with no retrofit done by its "
                                    f"install on day {unit.install_start:g}, in every strategy",
                                    f"record rows.{row.id}.retrofit_done"))
        for old in (u for u in scenario.existing if u.row == row.id):
            day = removed.get(old.id)
            if day is None or day > unit.install_start:
                problems.append(Problem(status.path, key, row.id, f"{old.id} was not removed "
                                        f"from row {row.id} by {unit.id}'s install on day "
                                        f"{unit.install_start:g}", f"record units.{old.id}."
                                        "removed"))
    return problems


def status_retrofit_rows(status: Status) -> set[str]:
    """Rows whose retrofit started: retrofitted in every strategy (the world needs their
    retrofit quantity even where no strategy's placement retrofits them)."""
    return {r.id for r in status.rows if r.retrofit_started is not None}


def activity_facts(scenario: Scenario, status: Status, handles: dict) -> list[Fact]:
    """The facts on durations: ended (an equality from the start) or running (a bound)."""
    facts = []

    def fact(key: str, day: float | None, what: str, quantities: tuple, start: float) -> None:
        facts.append(Fact(key, NO_VALUE if day is None else day, what, quantities, start=start,
                          at=None if day is None else float(day),
                          pin=len(quantities) == 1 and day is not None))

    for unit in status.units:
        if unit.drained is not None and unit.id in handles["drain"]:
            fact(f"units.{unit.id}.removed", unit.removed, f"{unit.id}'s removal end",
                 (handles["drain"][unit.id], handles["removal"][unit.id]), unit.drained)
        if unit.install_start is not None:
            fact(f"units.{unit.id}.installed.end", unit.install_end, f"{unit.id}'s install end",
                 (handles["install"][unit.id],), unit.install_start)
        if unit.failed_out is not None and unit.id in handles["repair"]:
            fact(f"units.{unit.id}.failed.back", unit.failed_back,
                 f"{unit.id}'s return from repair", (handles["repair"][unit.id],),
                 unit.failed_out)
    for row in status.rows:
        if row.retrofit_started is not None:
            fact(f"rows.{row.id}.retrofit_done", row.retrofit_done,
                 f"row {row.id}'s retrofit end", (handles["retrofit"][row.id],),
                 row.retrofit_started)
    return facts


def condition_units(scenario: Scenario, status: Status, world: World, handles: dict) -> None:
    """Burn-in histories and early failures, per unit (the module's docstring)."""
    problems = []
    for unit in status.units:
        try:
            if unit.id in handles["attempts"]:
                _burn_in(scenario, status, world, handles, unit)
            elif unit.attempts:
                raise _Refusal(f"units.{unit.id}.burn_in", "its type has no burn-in",
                               "remove the attempts")
            if unit.id in handles["early"]:
                _early_failure(scenario, status, world, handles, unit)
        except _Refusal as refusal:
            problems.append(Problem(status.path, refusal.key, NO_VALUE, refusal.message,
                                    refusal.hint))
    if problems:
        raise ScenarioError(problems)


class _Refusal(Exception):
    def __init__(self, key: str, message: str, hint: str = ""):
        super().__init__(message)
        self.key, self.message, self.hint = key, message, hint


def burn_in_state(unit: UnitStatus, rma_after: int, as_of: float):
    """The burn-in loop's state at as_of from the recorded attempts: ("passed", days,
    attempts) or (piece, days so far, attempt it resumes at, failures in a row, RMAs done,
    elapsed days of the running piece); days count from the install's end."""
    end = unit.install_end
    fails = rmas = 0
    for k, attempt in enumerate(unit.attempts):
        key = f"units.{unit.id}.burn_in[{k}]"
        if attempt.end is None:
            if k != len(unit.attempts) - 1:
                raise _Refusal(key, "an attempt with no end is followed by another")
            return (BURNIN_ATTEMPT, attempt.start - end, k, fails, rmas, as_of - attempt.start)
        if attempt.passed:
            if k != len(unit.attempts) - 1:
                raise _Refusal(key, "an attempt that passed is followed by another")
            return ("passed", attempt.end - end, k + 1)
        fails += 1
        rma = fails == rma_after
        if attempt.repair_end is None:
            if k != len(unit.attempts) - 1:
                raise _Refusal(key, "a failed attempt with no repair end is followed by "
                                    "another")
            if rma:
                return (BURNIN_RMA, attempt.end - end, k, 0, rmas, as_of - attempt.end)
            return (BURNIN_FIX, attempt.end - end, k, fails, rmas, as_of - attempt.end)
        if rma:
            rmas, fails = rmas + 1, 0
    return (BURNIN_FRESH, as_of - end, len(unit.attempts), fails, rmas, 0.0)


def _burn_in(scenario: Scenario, status: Status, world: World, handles: dict,
             unit: UnitStatus) -> None:
    if unit.install_end is None:
        if unit.attempts:
            raise _Refusal(f"units.{unit.id}.burn_in", "burn-in attempts but no install end",
                           f"record units.{unit.id}.installed.end")
        return
    wrapped = handles["burn_in"][unit.id]
    if world.rows[wrapped]["kind"] == Q_SUM and any(
            world.rows[t]["kind"] != Q_SUM for t in world.rows[wrapped]["terms"][1:]):
        raise _Refusal(f"units.{unit.id}.burn_in", "a risk on its burn-in has not been "
                       "settled", "say in the status whether each risk on burn-in occurred")
    q = handles["attempts"][unit.id] - 1
    assert world.rows[q]["kind"] == Q_BURNIN
    kind = scenario.unit_type(next(u.type for u in scenario.incoming if u.id == unit.id))
    state = burn_in_state(unit, kind.burn_in.rma_after_failures, status.as_of)
    _check_history(world, world.rows[q]["burnin"], unit, kind.burn_in.rma_after_failures,
                   status.as_of)
    if state[0] == "passed":
        world.rows[q].update(kind=Q_SUM, const=float(state[1]), terms=(), dist=-1)
        world.rows[q + 1].update(kind=Q_SUM, const=float(state[2]), terms=())
        return
    piece, days, resume, fails, rmas, elapsed = state
    world.rows[q].update(status=piece, const=float(elapsed),
                         state=(float(days), float(resume), float(fails), float(rmas)))


def _check_history(world: World, b: int, unit: UnitStatus, rma_after: int,
                   as_of: float) -> None:
    """Every recorded piece of a burn-in (attempt, fix, RMA) possible under the scenario's
    distributions, in order, and the running one able to last longer than it has."""
    names = ("attempt_days", "fix_days", "rma_days")
    dists = [encoded(world, d) for d in world.burnins[b][0]]
    previous, fails = unit.install_end, 0
    for k, attempt in enumerate(unit.attempts):
        key = f"units.{unit.id}.burn_in[{k}]"
        if attempt.start < previous - TOLERANCE:
            raise _Refusal(key, f"starts on day {attempt.start:g}, before the day "
                                f"{previous:g} its unit was ready for it",
                           "check the attempts' days")
        pieces = [(0, attempt.start, attempt.end)]
        if attempt.end is not None and not attempt.passed:
            fails += 1
            repair = 2 if fails == rma_after else 1
            fails = 0 if repair == 2 else fails
            pieces.append((repair, attempt.end, attempt.repair_end))
        for which, start, end in pieces:
            dist = dists[which]
            if end is None:
                if not np.isfinite(log_survival(dist, np.array(as_of - start))):
                    low, high = support(dist)
                    raise _Refusal(key, f"running for {as_of - start:g} days at as_of; the "
                                        f"scenario's {names[which]} end by {high:g}",
                                   "record its end, or widen the distribution")
            elif not possible(dist, end - start):
                low, high = support(dist)
                raise _Refusal(key, f"a {names[which].split('_')[0]} of {end - start:g} days; "
                                    f"the scenario's {names[which]} allow {low:g} to {high:g}",
                               "check the days, or widen the distribution")
            previous = end if end is not None else previous


def _early_failure(scenario: Scenario, status: Status, world: World, handles: dict,
                   unit: UnitStatus) -> None:
    q = handles["early"][unit.id]
    if unit.failed_out is not None:
        if unit.accepted is None:
            raise _Refusal(f"units.{unit.id}.failed", "an early failure before acceptance",
                           f"record units.{unit.id}.accepted")
        age = unit.failed_out - unit.accepted
        if not possible(encoded(world, world.rows[q]["dist"]), age):
            raise _Refusal(f"units.{unit.id}.failed", f"an early failure {age:g} days after "
                           "acceptance, which the type's early_failures.age_days do not allow",
                           "check the days")
        world.rows[q].update(kind=Q_SUM, const=float(age), terms=(), dist=-1)
        return
    if unit.accepted is None:
        return
    kind = scenario.unit_type(next(u.type for u in scenario.incoming if u.id == unit.id))
    failed_burn_in = len(unit.attempts) > 1
    chance = (kind.early_failures.chance_after_burnin_failure if failed_burn_in
              else kind.early_failures.chance)
    age = status.as_of - unit.accepted
    survives = math.exp(float(log_survival(encoded(world, world.rows[q]["dist"]),
                                           np.array(age))))
    denominator = 1.0 - chance * (1.0 - survives)
    updated = chance * survives / denominator if denominator > 0.0 else 0.0
    world.rows[q].update(status=EARLY_SURVIVED, state=(float(age), updated, 0.0, 0.0))


def condition_plans(scenario: Scenario, status: Status, node: dict, plans: list[dict],
                    handles: dict) -> None:
    """Pins, floors and running retrofits in every strategy's network (module docstring)."""
    as_of = status.as_of
    problems = []
    for strategy, plan in zip(scenario.strategies, plans):
        def pin(v: int, day: float) -> None:
            plan["kind"][v] = NODE_MAX
            plan["base_const"][v] = float(day)
            plan["deps"][v] = []
            plan["add_q"][v] = [-1, -1]
            plan["add_const"][v] = 0.0

        def event(key: tuple, day: float | None) -> None:
            if key not in node:
                return
            if day is not None:
                pin(node[key], day)
            else:
                plan["floor"][node[key]] = as_of

        for unit in scenario.existing:
            u = status.unit(unit.id)
            event(("drain", unit.id), u.drained if u else None)
            event(("removed", unit.id), u.removed if u else None)
        for unit in scenario.incoming:
            u = status.unit(unit.id)
            event(("install", unit.id), u.install_start if u else None)
            # with burn-in bays: a recorded install end starts the burn-in (it holds no bay)
            event(("installed", unit.id), u.install_end if u else None)
            event(("bay", unit.id), u.install_end if u else None)
            passed = u.passed if u else None
            if u is not None and unit.id not in handles["attempts"]:
                passed = u.install_end               # no burn-in: it passes when installed
            event(("burned_in", unit.id), passed)
            event(("accepted", unit.id), u.accepted if u else None)
            if ("out", unit.id) in node and u is not None and u.accepted is not None:
                plan["add_q"][node[("out", unit.id)]] = [handles["early"][unit.id], -1]
            event(("out", unit.id), u.failed_out if u else None)
            event(("back", unit.id), u.failed_back if u else None)
        recorded = []
        for row in scenario.rows():
            v = node[("ready", row.id)]
            r = status.row(row.id)
            if r is not None and r.retrofit_started is not None:
                # Done or running, the row held a crew from its recorded start: the crews
                # take rows by ready time, so recorded rows (ready at their start, at most
                # as_of) go first, in the order they started, and the crew days count from
                # the first start (a done row's retrofit is its recorded days).
                pin(v, r.retrofit_started)
                plan["kind"][v] = NODE_CREW
                plan["add_q"][v] = [handles["retrofit"][row.id], -1]
                recorded.append((r.retrofit_started,
                                 math.inf if r.retrofit_done is None else r.retrofit_done,
                                 row.id))
            elif plan["kind"][v] == NODE_CREW:
                plan["base_const"][v] = max(plan["base_const"][v], as_of)
        crews = strategy.crews_in(scenario.retrofit)
        busy = _most_at_once(recorded)
        if len(busy) > crews:
            problems.append(Problem(status.path, f"rows.{busy[-1]}.retrofit_started",
                                    status.row(busy[-1]).retrofit_started,
                                    f"strategy {strategy.name!r} has {crews} retrofit crew"
                                    f"{'s' if crews != 1 else ''}, and rows "
                                    f"{', '.join(busy)} were being retrofitted at once",
                                    "check the rows' retrofit days, or give the strategy "
                                    "more crews"))
    if problems:
        raise ScenarioError(problems)


def _most_at_once(spans: list[tuple[float, float, str]]) -> list[str]:
    """The most rows whose recorded retrofits [start, end) overlap at one time, in the order
    they started (a retrofit that ends on the day another starts frees its crew for it)."""
    best: list[str] = []
    for start, _, _ in spans:
        at = sorted((s, row) for s, e, row in spans if s <= start < e)
        if len(at) > len(best):
            best = [row for _, row in at]
    return best
