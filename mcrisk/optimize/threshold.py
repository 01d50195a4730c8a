"""A contingent template's decision threshold, a knob of `mcrisk optimize`: [search.decision].

A contingent strategy (a `[[strategies]]` entry with a `decision`, docs/scenario-format.md)
follows its `met` branch in the worlds where at least `at_least` of its events have happened
by its day, else its `unmet` branch. When the template is contingent, the search varies that
threshold: each candidate decides on one of `days` (the day of a decision taken on a day) with
one of `at_least` (how many of its events must have happened), its branches as the scenario
writes them. The other knobs (drain groups, waves, orders, crews) would vary a plan, and a
contingent template has two: they are refused with a located error (name a branch as the
template to vary its plan), so every candidate of a contingent search differs from the
template in its threshold alone.

`read_decision_search` reads the table with the scenario reader's helpers (located errors, all
at once): days only for a decision taken on a day (one taken when an event happens has no day
to search), at_least from 1 to the number of events counted. `with_branches` adds to a list of
plans the written branches their decisions name, once, whatever the number of thresholds
raced: every world is simulated in each branch once and takes, for each candidate, the branch
that candidate's threshold chooses (mcrisk/backends/contingency.py).
"""
from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, replace

from ..backends import Backend
from ..backends.chunks import check_memory, default_chunk, simulate
from ..backends.contingency import AnticipationError, check_non_anticipative
from ..core.errors import NO_VALUE
from ..core.model import Decision, Scenario, Strategy
from ..core.progress import Progress
from ..plan.compile import compile_scenario
from ..results.contingency import condition_text, moment_text
from ..scenario.limits import DAYS, Limit
from ..scenario.reader import (
    Spec,
    Table,
    as_integer,
    as_number,
    format_number,
    type_name,
)

KNOB = "decision"              # the knob's label in a candidate's knobs
ANTICIPATIVE = "anticipative"  # the reason a threshold is rejected before the race
MAX_VALUES = 1_000             # days, or counts, of one [search.decision]
PLAN_KNOBS = ("drain_groups", "waves", "orders", "crews")    # what a contingent search refuses


@dataclass(frozen=True)
class DecisionSearch:
    """The thresholds a contingent template's decision takes: each candidate decides on one
    of `days` (None: the template's moment, an event's time) when at least one of `at_least`
    of its events have happened."""

    days: tuple[float | None, ...]     # ascending, distinct
    at_least: tuple[int, ...]          # ascending, distinct

    @property
    def thresholds(self) -> tuple[tuple[float | None, int], ...]:
        """The knob's values, (day, at_least), days varying slowest."""
        return tuple(itertools.product(self.days, self.at_least))


def with_threshold(decision: Decision, threshold: tuple[float | None, int]) -> Decision:
    """`decision` taken on the threshold's day (unchanged when None) with its count."""
    day, at_least = threshold
    return replace(decision, day=decision.day if day is None else float(day),
                   at_least=int(at_least))


def decision_words(decision: Decision) -> str:
    """A decision's threshold in words: 'on day 160: at least 8 of 16 events (N01
    accepted .. N16 accepted)', its events named as the run's report names them."""
    names = {"energized": "hall {} energized", "accepted": "{} accepted",
             "arrival": "shipment {} arrives"}
    events = [names[kind].format(ident) for kind, ident in decision.events]
    moment = {"day": decision.day}
    if decision.on is not None:
        moment["on"] = names[decision.on[0]].format(decision.on[1])
    return (f"{moment_text(moment)}: "
            f"{condition_text({'events': events, 'at_least': decision.at_least})}")


def with_branches(scenario: Scenario, plans: Sequence[tuple]) -> list[tuple]:
    """`plans` ((strategy, crews) pairs) followed by the scenario's written strategies that
    their decisions name as branches and that are not among them (by name), each once with
    its own crews: a contingent plan's rows need its branches' rows in the same plan."""
    names = {strategy.name for strategy, _ in plans}
    extra = []
    for strategy, _ in plans:
        d = strategy.decision
        for branch in () if d is None else (d.met, d.unmet):
            if branch not in names:
                names.add(branch)
                written = scenario.strategy(branch)
                extra.append((written, written.crews_in(scenario.retrofit)))
    return [*plans, *extra]


def anticipative_decisions(space, scenario: Scenario, backend: Backend,
                           progress: Progress | None = None,
                           chunk_size: int | None = None) -> frozenset[Decision]:
    """The decisions of a contingent search (the template's and each threshold's) that would
    need to know the future in some world the search simulates: the race's (scenarios 0 ..
    its last stage - 1 of its seed) and the evaluation's (its samples of the fresh seed).

    A decision may only choose between branches that agree on everything before its outcome
    is known (mcrisk/backends/contingency.py), and a later day, or a count met later, moves
    that moment: deciding on day 260 between plans that drain a unit on day 200 and on day 290
    anticipates. The branches' node times do not depend on the threshold, so the branches
    are simulated once on those worlds, and every threshold is checked on them with the run's
    own check; a threshold that fails is rejected before the race (`ANTICIPATIVE`), so no
    stage or evaluation meets it. Empty for a search without [search.decision]."""
    if space.decision is None:
        return frozenset()
    template = space.template_strategy
    d = template.decision
    branches = (scenario.strategy(d.met), scenario.strategy(d.unmet))
    plan = compile_scenario(replace(scenario, strategies=(*branches, template)))
    written = plan.contingencies[0]          # the template's, its rows 0 and 1 the branches
    plan = replace(plan, contingencies=())   # simulated as they are: no branch taken
    decisions = {d, *(with_threshold(d, t) for t in space.decision.thresholds)}
    checks = {decision: replace(written, day=written.day if decision.day is None
                                else float(decision.day), at_least=decision.at_least)
              for decision in decisions}
    bad: set[Decision] = set()

    def check(first, _metrics, _world, node_times):
        for decision, c in checks.items():
            if decision not in bad:
                try:
                    check_non_anticipative(plan, c, first, node_times, c.met(node_times))
                except AnticipationError:
                    bad.add(decision)

    chunk = default_chunk(plan, chunk_size)
    for seed, samples, option in ((space.race.seed, space.race.scenarios[-1], "race.scenarios"),
                                  (space.evaluate.seed, space.evaluate.samples,
                                   "evaluate.samples")):
        check_memory(plan, samples, chunk, option=option)
        backend.prepare(plan)
        simulate(plan, samples, seed, backend, chunk_size=chunk, progress=progress,
                 chunk_hooks=(check,), keep_world=0,
                 note=f"the decision's branches on the {option.split('.')[0]}'s worlds: ")
    return frozenset(bad)


# --------------------------------------------------------------------------------------------
# Reading [search.decision]


def read_decision_search(search: Table, template: Strategy | None) -> DecisionSearch | None:
    """[search.decision] of a contingent template, and the refusal of the plan knobs beside
    it; None when absent or bad (reported), or when the template is unknown."""
    decision = None if template is None else template.decision
    if decision is not None:
        _refuse_plan_knobs(search, template)
    t = search.table("decision", ("days", "at_least"), "the thresholds to try", default=None)
    if decision is not None and "decision" not in search.data:
        search.r.report(search.at("template"), template.name, "is contingent, and the search "
                        "has no [search.decision]: a contingent template's knob is its "
                        "decision's threshold", "add [search.decision] with days = [120, 150] "
                        f"or at_least = [4, 8], or name a branch ({decision.met!r} or "
                        f"{decision.unmet!r}) as the template to vary its plan")
    if t is None or template is None:
        return None
    if decision is None:
        search.r.report(t.key, t.data, f"the template {template.name!r} is not contingent: it "
                        "has no decision to vary", "name a contingent strategy (one with a "
                        "decision) as the template, or remove [search.decision]")
        return None
    if not t.data:
        search.r.report(t.key, t.data, "gives neither days nor at_least: nothing to vary",
                        "add days = { min = 120, max = 200, step = 20 } or at_least = [4, 8]")
        return None
    return _read_thresholds(t, decision)


def _refuse_plan_knobs(search: Table, template: Strategy) -> None:
    d = template.decision
    for key in PLAN_KNOBS:
        if key in search.data:
            search.r.report(search.at(key), NO_VALUE, f"the template "
                            f"{template.name!r} is contingent: the search varies its "
                            "decision's threshold ([search.decision]), not a plan",
                            f"remove {key}, or name a branch ({d.met!r} or {d.unmet!r}) as "
                            "the template to vary its plan")


def _read_thresholds(t: Table, decision: Decision) -> DecisionSearch | None:
    """days and at_least, each defaulting to the template's own."""
    days = (decision.day,)
    if "days" in t.data and decision.on is not None:
        kind, ident = decision.on
        t.r.report(t.at("days"), t.data["days"], f"the decision is taken when "
                   f"{'shipment ' if kind == 'arrival' else ''}{ident} "
                   f"{'arrives' if kind == 'arrival' else 'is accepted'}, not on a day: "
                   "there is no day to search", "remove days, or write the template's "
                   "decision with day = 150 (a day) to search its day")
        days = None
    elif "days" in t.data:
        days = t.read("days", as_values, "{ min = 120, max = 200, step = 20 }",
                      "the decision days to try", at_most=DAYS)
    count = len(decision.events)
    at_least = t.read("at_least", as_values, "[4, 8]", "how many of the decision's events "
                      "must have happened", default=(decision.at_least,), integer=True,
                      low=1, at_most=Limit(count, f"the decision counts {count} event"
                                           f"{'s' if count != 1 else ''}"))
    if days is None or at_least is None:
        return None
    return DecisionSearch(days, at_least)


def as_values(r, key, value, spec: Spec, at_most: Limit, integer: bool = False,
              low: float = 0):
    """Values to try: a number, an array of them, or { min, max, step } (min, min + step, ...
    up to max) -> ascending distinct numbers in [low, at_most] (ints when `integer`), at most
    MAX_VALUES of them; or None (reported)."""
    def number(key, item, above=None):
        if integer:
            return as_integer(r, key, item, spec, at_least=1 if above is not None else low,
                              at_most=at_most)
        return as_number(r, key, item, spec, at_least=None if above is not None else low,
                         above=above, at_most=at_most)

    if isinstance(value, dict):
        return _as_range(r, key, value, number)
    items = value if isinstance(value, list) else [value]
    if not items or isinstance(value, (str, bool)):
        r.report(key, value, f"must be a number, an array of numbers or {{ min, max, step }}, "
                 f"not {'an empty array' if value == [] else type_name(value)}",
                 spec.type_hint)
        return None
    values = [number(f"{key}[{i}]" if isinstance(value, list) else key, item)
              for i, item in enumerate(items)]
    if None in values:
        return None
    if len(set(values)) != len(values):
        r.report(key, value, "gives a value twice", "list each value once")
        return None
    if len(values) > MAX_VALUES:
        r.report(key, NO_VALUE, f"has {len(values):,} values, more than {MAX_VALUES:,}",
                 "each value multiplies the candidates")
        return None
    return tuple(sorted(values))


def _as_range(r, key, value: dict, number):
    """{ min, max, step } -> (min, min + step, ... up to max), or None (reported)."""
    t = Table(r, key, value, ("min", "max", "step"))
    if "min" not in value or "max" not in value:
        r.report(key, value, "needs min and max", "write { min = 120, max = 200, step = 20 }")
        return None
    low, high = number(t.at("min"), value["min"]), number(t.at("max"), value["max"])
    step = number(t.at("step"), value["step"], above=0) if "step" in value else None
    if None in (low, high) or ("step" in value and step is None):
        return None
    if high < low:
        r.report(t.at("max"), high, f"is below min ({format_number(low)})", "give max >= min")
        return None
    if step is None and high > low:
        r.report(key, value, "gives min < max but no step", "add step = 10, say")
        return None
    count = 1 if high == low else math.floor((high - low) / step + 1e-9) + 1
    if count > MAX_VALUES:
        r.report(key, value, f"spans {count:,} values, more than {MAX_VALUES:,}",
                 "take a larger step: each value multiplies the candidates")
        return None
    return tuple(low + i * step for i in range(count))
