"""Strategies that differ in one decision only, read from their plans, so the findings can
compare them head to head on the same worlds and say truthfully that only that decision
differs: the drain trigger (gating_pairs: on a shipment's arrival against on the
replacements' acceptance) and the acceptance policy (acceptance_pairs: first pass against an
extra soak after failed burn-ins).
"""
from __future__ import annotations

from ...core.model import Scenario, Strategy, Trigger


def _drain_groups(strategy: Strategy) -> dict[frozenset, Trigger]:
    """{existing units drained together: their trigger}."""
    groups: dict[Trigger, set] = {}
    for unit, trigger in strategy.drains:
        groups.setdefault(trigger, set()).add(unit)
    return {frozenset(units): trigger for trigger, units in groups.items()}


def _arrival_only(t: Trigger) -> bool:
    return bool(t.on_arrival) and not t.on_accepted


def _acceptance_only(t: Trigger) -> bool:
    return bool(t.on_accepted) and not t.on_arrival


def gating_pairs(scenario: Scenario) -> list[tuple[str, str]]:
    """(on-arrival strategy, gated strategy) pairs that differ only in the drain trigger:
    the same units in the same rows, the same old units drained together, and every group
    drained on a shipment's arrival in the one and on the acceptance of new units in the
    other (with the same fixed day, if any, and the same lag); everything else about the two
    is the same too (crews, kept units, acceptance policy, power reservations), so the
    sentence "only the trigger differs" is true of them."""
    pairs = []
    written = [s for s in scenario.strategies if s.decision is None]   # not a contingent one
    for a in written:
        for b in written:
            if a.name == b.name or sorted(a.placement) != sorted(b.placement) \
                    or _besides_drains(a) != _besides_drains(b):
                continue
            ga, gb = _drain_groups(a), _drain_groups(b)
            if set(ga) != set(gb):
                continue
            if all(_arrival_only(ga[g]) and _acceptance_only(gb[g])
                   and ga[g].day == gb[g].day and ga[g].lag_days == gb[g].lag_days for g in ga):
                pairs.append((a.name, b.name))
    return pairs


def _besides_drains(strategy: Strategy) -> tuple:
    """What a strategy decides besides its placement and drains: equal in a gating pair."""
    return (strategy.crews, sorted(strategy.keep), strategy.acceptance,
            dict(strategy.reservations))


def acceptance_pairs(scenario: Scenario) -> list[tuple[str, str]]:
    """(first-pass strategy, soaking strategy) pairs that differ only in the acceptance
    policy: one accepts a unit on its first pass of burn-in, the other gives a unit whose
    burn-in failed often an extra soak (Strategy.acceptance); every other choice is the
    same (placement, drains, crews, kept units, reservations)."""
    def rest(strategy: Strategy) -> tuple:
        return (sorted(strategy.placement), sorted(strategy.drains, key=repr),
                strategy.crews, sorted(strategy.keep), dict(strategy.reservations))
    written = [s for s in scenario.strategies if s.decision is None]   # not a contingent one
    return [(a.name, b.name) for a in written for b in written
            if a.acceptance is None and b.acceptance is not None and rest(a) == rest(b)]
