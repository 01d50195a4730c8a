"""Contingent strategies: `[[strategies]]` entries with a `decision` instead of a plan.

A decision point says, on a day, how many of some events (halls energized, new units
accepted, shipments arrived) must have happened for the plan to follow one written strategy
(`met`) rather than another (`unmet`) from then on. Both branches are ordinary strategies of
the file, read and checked as every strategy is, so a branch can change anything a strategy
sets (placement, drain triggers and lags, crews, keep, reservations, acceptance); that they
agree on everything before the decision is checked world by world when the plan is
simulated (mcrisk/backends/contingency.py), where the times are known.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import Decision

from .limits import DAYS, Limit
from .reader import (
    Table,
    as_ids,
    as_integer,
    as_number,
    as_string,
    check_ref,
    did_you_mean,
)

# The keys of a contingent entry: its plan comes from its branches.
CONTINGENT_KEYS = ("name", "description", "decision")
# The event kinds a decision counts: key in the file -> (node kind, what the ids name).
DECISION_EVENTS = {"energized": ("energized", "hall"), "accepted": ("accepted", "incoming unit"),
                   "arrived": ("arrival", "shipment")}
# When the decision is taken: on a day, or when one event happens (key -> node kind, noun).
DECISION_MOMENTS = {"on_arrival": ("arrival", "shipment"),
                    "on_accepted": ("accepted", "incoming unit")}
DECISION_KEYS = ("day", *DECISION_MOMENTS, *DECISION_EVENTS, "at_least", "met", "unmet")


@dataclass(frozen=True)
class PendingDecision:
    """A contingent entry as read, before its branches' names are resolved."""

    table: Table           # the `decision` table (None when it was not one)
    name: str | None
    description: str
    decision: Decision | None


def is_contingent(t: Table) -> bool:
    return "decision" in t.data


def read_contingent(t: Table, name: str | None, description: str) -> PendingDecision:
    """A contingent entry's decision (its name and description read by the caller)."""
    for key in t.data:
        if key not in CONTINGENT_KEYS:
            t.r.report(t.at(key), t.data[key], "a contingent strategy takes its plan from its "
                       "branches", f"move {key} into the strategies its decision names (met, "
                       "unmet), or remove the decision")
    d = t.table("decision", DECISION_KEYS, "the decision point")
    if d is None:
        return PendingDecision(None, name, description, None)
    day, on = _read_moment(d)
    events = _read_events(d)
    at_least = None
    if events is not None:
        at_least = d.read("at_least", as_integer, "1", "how many of the events must have "
                          "happened by the day (default: all)", default=len(events) or 1,
                          at_least=1, at_most=Limit(max(1, len(events)),
                                                    "the number of events counted"))
    met = d.read("met", as_string, '"hybrid-gated"', "the strategy followed when the "
                 "condition holds on the day")
    unmet = d.read("unmet", as_string, '"swing-gated"', "the strategy followed otherwise")
    if met is not None and met == unmet:
        t.r.report(d.at("unmet"), unmet, "is the same strategy as met: nothing is decided",
                   "name two different strategies, or use the strategy itself")
        unmet = None
    if None in (events, at_least, met, unmet) or (day is None and on is None):
        return PendingDecision(d, name, description, None)
    return PendingDecision(d, name, description, Decision(
        None if day is None else float(day), events, int(at_least), met, unmet, on))


def _read_moment(d: Table) -> tuple[float | None, tuple[str, str] | None]:
    """When the decision is taken: exactly one of `day`, `on_arrival` (a shipment id) and
    `on_accepted` (an incoming unit id); (day, None), (None, (kind, id)) or (None, None) if
    bad (reported)."""
    given = [key for key in ("day", *DECISION_MOMENTS) if key in d.data]
    hint = ('give day = 150 (a day), or on_arrival = "S3" or on_accepted = "N08" (when that '
            "event happens)")
    if not given:
        d.r.report(d.key, NO_VALUE, "needs its moment: day, on_arrival or on_accepted", hint)
        return None, None
    if len(given) > 1:
        d.r.report(d.at(given[1]), d.data[given[1]], f"is given with {given[0]}: a decision "
                   "has one moment", hint)
        return None, None
    if given[0] == "day":
        return d.read("day", as_number, "150", "the day the decision is taken", at_least=0,
                      at_most=DAYS), None
    kind, noun = DECISION_MOMENTS[given[0]]
    registry = d.r.shipments if kind == "arrival" else d.r.incoming
    ident = d.read(given[0], as_string, '"S3"', f"the {noun} whose event is the decision's "
                   "moment")
    if ident is None or not check_ref(d.r, d.at(given[0]), ident, registry, noun):
        return None, None
    return None, (kind, ident)


def _read_events(d: Table) -> tuple[tuple[str, str], ...] | None:
    """The events a decision counts, in key order (energized, accepted, arrived); None if bad."""
    events, ok = [], True
    registries = {"energized": d.r.halls, "accepted": d.r.incoming, "arrived": d.r.shipments}
    for key, (kind, noun) in DECISION_EVENTS.items():
        ids = d.read(key, as_ids, '"B"' if key == "energized" else '"N01..N08"',
                     f"the {noun}s whose event the decision counts", default=())
        if ids is None:
            ok = False
            continue
        for ident in ids:
            ok = check_ref(d.r, d.at(key), ident, registries[key], noun) and ok
            events.append((kind, ident))
    if ok and not events:
        d.r.report(d.key, {k: d.data[k] for k in d.data}, "counts no event",
                   'add energized = "B", accepted = "N01..N08" or arrived = "S3": what must '
                   "have happened by the day")
        return None
    return tuple(events) if ok else None


def resolve_decisions(strategies: list, pending: dict[int, PendingDecision]) -> list | None:
    """The strategies in file order with each contingent entry made a Strategy: the plan of
    its `met` branch, its own name and description, and its decision. None if a branch is
    unknown or itself contingent (reported)."""
    by_name = {s.name: s for s in strategies if s is not None}
    contingent = {entry.name for entry in pending.values()}
    ok = True
    for index, entry in pending.items():
        if entry.decision is None:
            ok = False
            continue
        d = entry.table
        for key in ("met", "unmet"):
            branch = getattr(entry.decision, key)
            if branch in contingent:
                d.r.report(d.at(key), branch, "is a contingent strategy itself: a branch is a "
                           "written plan", "name a strategy with place and drain")
                ok = False
            elif branch not in by_name:
                d.r.report(d.at(key), branch, "unknown strategy",
                           did_you_mean(branch, list(by_name), "written strategies"))
                ok = False
        if not ok:
            continue
        met = by_name[entry.decision.met]
        strategies[index] = dataclasses.replace(
            met, name=entry.name, description=entry.description, decision=entry.decision)
    return strategies if ok else None
