"""Two strategies that differ in one decision, head to head on the same worlds: what the
decision buys (trough depth, days below baseline, shortfall) and what it costs in
completion, and which milestone that completion cost is made of (the last acceptance or the
last removal, from summary.json's milestones)."""
from __future__ import annotations

import numpy as np

from ...core.labels import label, unit
from .words import _beyond_noise, _column, _count, _interval, _of_size, _paired, fmt


_GATING_WORDS = {   # metric: (what, if gating lowers it, if gating raises it)
    "trough_depth": ("the trough is", "shallower", "deeper"),
    "trough_days": ("the time below baseline is", "shorter", "longer"),
    "shortfall_gpu_days": ("the shortfall against demand is", "smaller", "larger"),
}


def _head_to_head(base: str, other: str, metrics: np.ndarray, names, change: str) -> str:
    """What `change` (other against base, paired on the same worlds) buys: trough depth, days
    below baseline, shortfall (base minus other, so positive is what it saves); and what it
    costs: completion (other minus base); each as a mean difference with its 95% interval,
    a difference claimed only when its interval excludes 0."""
    n = metrics.shape[0]
    col = lambda s, m: _column(metrics, names, s, m)          # noqa: E731
    buys = []
    for metric, (what, less, more) in _GATING_WORDS.items():
        a, b = col(base, metric), col(other, metric)
        d = _paired(a, b)
        if np.all(a == b):
            buys.append(f"{what} the same in every world")
        elif _beyond_noise(d):
            better, worse = int(np.sum(a > b)), int(np.sum(a < b))
            buys.append(f"{what} {less if d['mean'] > 0 else more} by {fmt(abs(d['mean']))} "
                        f"{unit(metric)} on average ({_interval(_of_size(d))}; better in "
                        f"{better:,} worlds, " + (f"worse in {worse:,})" if worse else
                                                  "never worse)"))
        else:
            ci = d["mean_ci"]
            buys.append(f"{label(metric)} show no difference beyond Monte Carlo noise (mean "
                        f"{fmt(d['mean'])} {unit(metric)}" + (f", {_interval(ci)})" if ci else ")"))
    late_other, late_base = col(other, "completion_day"), col(base, "completion_day")
    cost = _paired(late_other, late_base)
    later, earlier = int(np.sum(late_other > late_base)), int(np.sum(late_other < late_base))
    if np.all(late_other == late_base):
        costs = f"With {change} it completes on the same day in every world."
    elif _beyond_noise(cost):
        costs = (f"{change[0].upper() + change[1:]} costs {fmt(abs(cost['mean']))} days of "
                 f"completion on average ({_interval(cost['mean_ci'])})" if cost["mean"] > 0
                 else f"With {change} it even completes {fmt(abs(cost['mean']))} days earlier "
                      f"on average ({_interval(_of_size(cost))})")
        costs += (f": it completes later in {_count(later, n, 'worlds')} and earlier in "
                  f"{earlier:,}.")
    else:
        costs = (f"Its completion shows no difference beyond Monte Carlo noise (mean "
                 f"{fmt(cost['mean'])} days; later in {later:,} worlds, earlier in "
                 f"{earlier:,}).")
    return f"Paired on the same {n:,} worlds, with {change} " + "; ".join(buys) + ". " + costs


def _last(entries: list[dict], kind: str) -> dict | None:
    """The strategy's wave milestone of `kind` (accepted, removed) with the latest mean."""
    found = [e for e in entries if e["key"].startswith(f"wave:{kind}:")]
    return max(found, key=lambda e: e["mean"]) if found else None


def completion_parts(base: str, other: str, milestones: dict | None) -> str:
    """' Completion is the later of the last acceptance and the last removal: with X the
    last rack is accepted N days later on average (day a against b), the last removal ends
    M days later (day c against d).' from the two strategies' wave milestones (their means:
    a difference of means is the mean of the differences); '' without milestones."""
    per = (milestones or {}).get("strategies") or {}
    if base not in per or other not in per:
        return ""
    parts = []
    for kind, what, verb in (("accepted", "last acceptance", "the last rack is accepted"),
                             ("removed", "last removal", "the last removal ends")):
        a, b = _last(per[other], kind), _last(per[base], kind)
        if a is None or b is None:
            continue
        shift = a["mean"] - b["mean"]
        if fmt(abs(shift)) == "0":
            parts.append(f"{verb} on the same day on average (day {fmt(a['mean'])})")
        else:
            parts.append(f"{verb} {fmt(abs(shift))} days {'later' if shift > 0 else 'earlier'}"
                         f" (day {fmt(a['mean'])} against {fmt(b['mean'])})")
    if not parts:
        return ""
    return (" Completion is the later of the last acceptance and the last removal; on average "
            f"over the worlds, with {other} " + " and ".join(parts) + ".")


def gating(arrival: str, gated: str, metrics: np.ndarray, names,
           milestones: dict | None = None) -> str:
    """The head-to-head of a pair from gating_pairs: what gating buys and costs, and which
    milestone the completion cost is made of (summary.json's `milestones`, when given)."""
    return (f"When to drain is what separates {gated} from {arrival}: they put the same racks "
            f"in the same rows and drain the same old units together; only the trigger differs "
            f"({arrival} drains when shipments arrive, {gated} once the replacements are "
            f"accepted). " + _head_to_head(arrival, gated, metrics, names, "gating")
            + completion_parts(arrival, gated, milestones))


def soaking(first_pass: str, soaked: str, policy, metrics: np.ndarray, names) -> str:
    """The head-to-head of a pair from acceptance_pairs: what the extra soak buys and costs."""
    return (f"Whether to accept a rack whose burn-in failed is what separates {soaked} from "
            f"{first_pass}: {soaked} gives a rack whose burn-in failed "
            f"{policy.soak_after_failures} or more times an extra soak before acceptance, "
            f"{first_pass} accepts it on its first pass; every other choice is the same. "
            + _head_to_head(first_pass, soaked, metrics, names, "the soak"))


