"""Failures of units in service: [unit_types.attrition] (steady failures while a fleet runs,
folded into a unit's usable capacity) and [unit_types.early_failures] (one early-life failure
of a new unit after acceptance, more likely when its burn-in failed), and a strategy's
`acceptance` policy (an extra soak for units whose burn-in failed often). docs/scenario-format.md
says what each key means; mcrisk/plan/compile.py how they enter the plan.
"""
from __future__ import annotations

from mcrisk.core.model import Acceptance, Attrition, EarlyFailures

from .distributions import DIST_EXAMPLE, as_distribution
from .limits import DAYS, Limit
from .reader import Table, as_integer, as_number, as_probability

ATTRITION_KEYS = ("interruptions_per_gpu_day", "gpus_per_interruption", "days_out")
EARLY_FAILURE_KEYS = ("chance", "chance_after_burnin_failure", "age_days", "repair_days")
ACCEPTANCE_KEYS = ("soak_after_failures", "soak_days")
MIN_USABLE_SHARE = 0.5   # attrition that takes half a fleet out is a unit mistake, not a fleet
_GPUS_OUT = Limit(1_000_000, "an interruption takes a node (8 GPUs) or a rack out, not more")
_FAILURES = Limit(1_000, "burn-in failures of one unit: a handful at most")


def read_attrition(t: Table | None) -> Attrition | None:
    """[unit_types.attrition]: the usable share 1 - rate x GPUs x days out must be above
    MIN_USABLE_SHARE (reported otherwise)."""
    if t is None:
        return None
    rate = t.read("interruptions_per_gpu_day", as_number, "4.7e-4", "interruptions per GPU "
                  "and day of service (Llama 3 on 16,384 H100: 419 in 54 days)", at_least=0)
    gpus = t.read("gpus_per_interruption", as_integer, "8", "GPUs one interruption takes out "
                  "(a node)", default=8, at_least=1, at_most=_GPUS_OUT)
    days = t.read("days_out", as_number, "3", "days a failed node is out of service",
                  above=0, at_most=DAYS)
    if None in (rate, gpus, days):
        return None
    attrition = Attrition(rate, gpus, days)
    if attrition.usable_share <= MIN_USABLE_SHARE:
        t.r.report(t.at("interruptions_per_gpu_day"), rate,
                   f"leaves a usable share of {attrition.usable_share:.3g} (1 - {rate:g} x "
                   f"{gpus} GPUs x {days:g} days); it must be above {MIN_USABLE_SHARE}",
                   "check the units: the rate is per GPU-day (4.7e-4 for Llama 3's H100s)")
        return None
    return attrition


def read_early_failures(t: Table | None) -> EarlyFailures | None:
    """[unit_types.early_failures]: chance (and chance_after_burnin_failure >= chance) that
    a new unit fails once at service age age_days, out for repair_days."""
    if t is None:
        return None
    chance = t.read("chance", as_probability, "0.05", "the chance a unit that passed burn-in "
                    "first time fails in its first months of service")
    after = t.read("chance_after_burnin_failure", as_probability, "0.15", "the same for a "
                   "unit whose burn-in failed at least once (default: chance)", default=chance)
    age = t.read("age_days", as_distribution, '{ dist = "lognormal", median = 20, p90 = 60 }',
                 "the unit's service age at the failure")
    repair = t.read("repair_days", as_distribution, DIST_EXAMPLE,
                    "days the unit is out of service for repair")
    if chance is not None and after is not None and after < chance:
        t.r.report(t.at("chance_after_burnin_failure"), after,
                   f"must be at least chance = {chance:g}",
                   "a unit whose burn-in failed is at least as likely to fail early")
        return None
    if None in (chance, after, age, repair):
        return None
    return EarlyFailures(chance, after, age, repair)


def read_acceptance(t: Table | None) -> Acceptance | None:
    """A strategy's `acceptance = { soak_after_failures, soak_days }`."""
    if t is None:
        return None
    after = t.read("soak_after_failures", as_integer, "2", "burn-in failures from which a "
                   "unit soaks before acceptance", at_least=1, at_most=_FAILURES)
    days = t.read("soak_days", as_distribution, "7", "days the extra soak takes (drawn per "
                  "unit)")
    return None if None in (after, days) else Acceptance(after, days)


def check_acceptance(t: Table, acceptance: Acceptance | None) -> None:
    """An acceptance policy needs some incoming unit whose burn-in can fail, or early failures
    (reported otherwise: the soak could never start)."""
    r = t.r
    if acceptance is None or r.incoming is None or r.unit_types is None:
        return
    kinds = [r.unit_types.get(unit.type) for unit in r.incoming.values()]
    if any(k is None for k in kinds):
        return
    if not any(k.burn_in is not None or k.early_failures is not None for k in kinds):
        r.report(t.at("acceptance"), t.data["acceptance"],
                 "no incoming unit type has a burn-in or early_failures: the soak can never "
                 "start", "add [unit_types.burn_in] to the incoming types, or remove acceptance")
