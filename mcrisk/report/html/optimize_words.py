"""The words of an `mcrisk optimize` run that the terminal (mcrisk.cli.optimize_text) and its
report.html (mcrisk.report.html.optimize) share, each a pure function of the optimize.json
document or a piece of it: statistics by the names the run's report gives them, money as
money, shares as percentages, the objective, the constraints and their verdicts, the space,
the yardstick, and what a share bounded by 0 found.

A plan is called better or worse than the best written strategy only where the evaluation's
verdict says the difference is beyond noise; within noise is said as such, never as a small
win.
"""
from __future__ import annotations

import numpy as np

from ...core.definitions import COSTS, METRICS
from ...core.labels import heading, label, share_label
from ...results.compare import money_text
from ..findings.sentences import fmt
from .parts import interval_text

STATISTIC_WORDS = {"p50": "P50", "p90": "P90", "p99": "P99", "mean": "mean", "p": "P"}
OBJECTIVE_WORDS = {"minimize": "minimize", "weights": "minimize the weighted sum",
                   "pareto": "Pareto set of"}


def column_words(column: str) -> str:
    """A metric or cost column in words (core.labels' heading, plain text, for the terminal
    too): 'shortfall (H100-eq x days)', 'total cost', 'retrofit crews cost'."""
    if column in COSTS:
        return f"{label(column)} cost"
    return heading(column) if column in METRICS else column


def statistic_label(statistic: str) -> str:
    """'p90:shortfall_gpu_days' as 'P90 shortfall (H100-eq x days)', 'mean:cost_total' as
    'mean total cost'; 'p:power_violation' as 'P(power over cap)' and another share as
    'P(trough depth (H100-eq) > 0)': the share of scenarios where the column is above 0."""
    kind, _, column = statistic.partition(":")
    if kind == "p":
        return (share_label(column) if column == "power_violation"
                else f"P({column_words(column)} > 0)")
    return f"{STATISTIC_WORDS.get(kind, kind)} {column_words(column)}"


def is_money(statistic: str) -> bool:
    """Whether a statistic is an amount of money (a cost column's, not a share)."""
    kind, _, column = statistic.partition(":")
    return kind != "p" and column in COSTS


def percent_text(share: float) -> str:
    """A share as a percentage to two significant digits, never in exponent form: 100%,
    46%, 0.5%, 0.000001%; a share below 1 never rounds up to 100% (99.9%, 99.99%)."""
    percent = 100 * float(share)
    for digits in range(2, 9):
        text = np.format_float_positional(percent, precision=digits, unique=False,
                                          fractional=False, trim="-")
        if abs(percent) >= 100 or abs(float(text)) < 100:
            break
    return f"{text}%"


def statistic_value(statistic: str, value: float | None, currency: str = "USD") -> str:
    """A statistic's value for a table: money for a cost ($22.8M), a share for p: ('none'
    at 0, else a percentage to two significant digits), else fmt's number."""
    if value is None:
        return "n/a"
    if statistic.startswith("p:"):
        return "none" if value == 0 else percent_text(value)
    if is_money(statistic):
        return money_text(value, currency)
    return fmt(value)


def statistic_interval(statistic: str, ci, currency: str = "USD") -> str:
    """'[low, high]' of a 95% interval in the statistic's own format, '[n/a]' without one."""
    if ci is None or None in ci:
        return "[n/a]"
    if statistic.startswith("p:"):
        return "[" + ", ".join("0%" if end == 0 else percent_text(end) for end in ci) + "]"
    if is_money(statistic):
        return f"[{money_text(ci[0], currency)}, {money_text(ci[1], currency)}]"
    return interval_text({"ci": ci}, "ci")


def estimate_text(statistic: str, estimate: dict | None, currency: str = "USD",
                  samples: int | None = None) -> str:
    """A statistic's value and 95% interval, '14,523 [13,731, 15,454]', '$22.8M [$22.7M,
    $22.9M]'; a share of 0 as 'none in 20,000 scenarios' (with `samples`): no interval of
    a share of 0 says more than the count does."""
    estimate = estimate or {}
    value = estimate.get("value")
    if statistic.startswith("p:") and value == 0 and samples:
        return f"none in {samples:,} scenarios"
    return (f"{statistic_value(statistic, value, currency)} "
            f"{statistic_interval(statistic, estimate.get('ci'), currency)}")


def currency_of(document: dict) -> str:
    """The scenario's currency (optimize.json's `currency`; USD when it has none)."""
    return document.get("currency") or "USD"


def bound_text(constraint: dict, currency: str = "USD") -> str:
    """A constraint in words: 'P90 completion day at most 540', 'mean total cost at most
    $40.0M', and a share bounded by 0 as 'power over cap in no scenario'."""
    statistic, maximum = constraint["statistic"], constraint["max"]
    kind, _, column = statistic.partition(":")
    if kind == "p" and maximum == 0:
        return f"{column_words(column)} in no scenario"
    return f"{statistic_label(statistic)} at most {statistic_value(statistic, maximum, currency)}"


def objective_text(document: dict) -> str:
    """The objective in words: 'minimize P90 shortfall (H100-eq x days)', 'minimize the
    weighted sum 1 x P90 ... + 0.0001 x mean total cost', 'Pareto set of P90 ... and mean
    ...'."""
    objective = document["objective"]
    kind, statistics = objective["kind"], objective["statistics"]
    if kind == "weights":
        weights = objective.get("weights", {})
        terms = " + ".join(f"{weights.get(s, 1):g} x {statistic_label(s)}" for s in statistics)
        return f"{OBJECTIVE_WORDS[kind]} {terms}"
    return f"{OBJECTIVE_WORDS.get(kind, kind)} " + " and ".join(
        statistic_label(s) for s in statistics)


def objective_statistic(document: dict) -> str:
    """The statistic whose format the objective's value takes: the one statistic a plain
    minimize names, else 'objective' (a weighted sum or a Pareto set: a plain number)."""
    objective = document["objective"]
    return objective["statistics"][0] if objective["kind"] == "minimize" else "objective"


def shown_statistics(document: dict) -> list[str]:
    """The value columns of the plans' table: the one statistic a plain minimize names,
    'objective' for a weighted sum, every objective statistic of a Pareto set."""
    objective = document["objective"]
    if objective["kind"] == "pareto":
        return list(objective["statistics"])
    return [objective_statistic(document)]


def objective_name(document: dict) -> str:
    """A short header for the objective's column: its statistic, 'weighted sum' for a
    weighted sum, 'objective' for a Pareto set."""
    objective = document["objective"]
    if objective["kind"] == "minimize":
        return statistic_label(objective["statistics"][0])
    return "weighted sum" if objective["kind"] == "weights" else "objective"


def verdict_text(against: dict | None, pareto: bool = False) -> str:
    """A plan against the best written strategy, in a word or two: better, worse, within
    noise (no claim either way), or n/a (no interval); '(best written)' for that strategy.
    On a Pareto objective optimize.json's 'n/a' is a trade (each lower on some objective,
    neither dominating) and is said so, as the findings say it."""
    if against is None:
        return "(best written)"
    verdict = against.get("verdict") or "n/a"
    return "trade" if pareto and verdict == "n/a" else verdict


def is_pareto(document: dict) -> bool:
    return document["objective"]["kind"] == "pareto"


PARETO_MEANING = ("no other plan or written strategy is lower on one objective beyond noise "
                  "and no higher on the others; choosing among them is choosing a price "
                  "between the objectives")


def constraints_text(plan: dict) -> str:
    """'all met', or the constraints not met, grouped by how: 'violated: P90 trough depth
    (H100-eq); within noise: P90 completion day' (within noise: the statistic's interval
    holds the bound)."""
    if not plan["constraints"]:
        return "none set"
    groups = []
    for verdict in ("violated", "within noise"):
        names = [statistic_label(s) for s, c in plan["constraints"].items()
                 if c["verdict"] == verdict]
        if names:
            groups.append(f"{verdict}: {', '.join(names)}")
    return "; ".join(groups) or "all met"


def no_plan_text(document: dict) -> str:
    """Why a search found no plan: every candidate was dropped as infeasible beyond noise in
    the race, or every one it chose (and every other it had) broke a constraint on the fresh
    scenarios."""
    aside = len(document.get("set_aside") or ())
    if aside:
        return (f"no plan found: every plan the race offered broke a constraint on the fresh "
                f"scenarios ({aside:,} set aside); loosen the constraints or widen the knobs "
                "(docs/optimize.md)")
    dropped = sum(stage.get("infeasible", 0) for stage in document["race"]["stages"])
    return (f"no plan found: every candidate was dropped, {dropped:,} of them because a "
            "constraint is violated beyond noise (the race's stages say when); loosen the "
            "constraints or widen the knobs (docs/optimize.md)")


def found_lines(document: dict) -> list[str]:
    """What became of the plans the race chose, where it is not simply `top` plans found:
    the plans set aside because they broke a constraint on the fresh scenarios (never
    presented as found), and fewer plans than `top` asked, with why."""
    plans, aside = document["plans"], document.get("set_aside") or []
    evaluation = document["evaluation"]
    lines = []
    if aside:
        names = ", ".join(plan["name"] for plan in aside)
        broken = sorted({statistic_label(label) for plan in aside
                         for label, entry in plan["constraints"].items()
                         if entry.get("verdict") == "violated"})
        replaced = evaluation.get("replacements", 0)
        lines.append(f"Set aside: {names} broke a constraint on the fresh scenarios "
                     f"({', '.join(broken)}): not plans found, and strategies.toml has no "
                     f"block for them; {_count(replaced, 'other candidate')} of the race "
                     f"{'was' if replaced == 1 else 'were'} evaluated in their place.")
    top = evaluation.get("top")
    if top and not is_pareto(document) and plans and len(plans) < top:
        stages = document["race"]["stages"]
        left = stages[-1]["candidates_out"] if stages else 0
        why = []
        if left < top:
            keep = document["race"].get("keep")
            why.append(f"the race's last stage kept {_count(left, 'candidate')}: each stage "
                       "drops the candidates that break a constraint and keeps the best "
                       + (f"{keep:.0%} " if keep else "") + "of the rest, with their ties; "
                       "a larger [search.race] keep keeps more")
        if aside:
            why.append("the plans set aside had no other candidate left to take their place")
        lines.append(f"Fewer plans than asked: {len(plans)} found of top = {top}"
                     + (f" ({'; '.join(why)})" if why else "") + ".")
    return lines


def _count(n: int, noun: str) -> str:
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


def knobs_text(plan: dict) -> str:
    """The plan's knobs as 'knob = value; ...', with the crews (last, when no knob names
    them)."""
    knobs = plan.get("knobs") or ()
    parts = [f"{k['knob']} = {k['value']}" for k in knobs]
    if not any(k["knob"] == "crews" for k in knobs):
        parts.append(f"crews = {plan['crews']}")
    return "; ".join(parts)


def rejected_text(space: dict) -> str:
    """'none', or each reason with its count, most first (ties by reason)."""
    rejected = space.get("rejected") or {}
    if not rejected:
        return "none"
    ordered = sorted(rejected.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{count:,} {reason}" for reason, count in ordered)


def sampling_text(space: dict) -> str:
    """How the candidates came from the space: every combination, or a sample and by what."""
    if not space.get("sampled"):
        return f"every one of the {space['size']:,} combinations"
    return (f"a sample of {space.get('max_candidates', 0):,} of {space['size']:,} combinations, "
            f"by {space.get('sampler') or 'a sampler not recorded'}")


def difference_text(statistic: str, estimate: dict | None, currency: str = "USD") -> str:
    """The objective's difference against the best written strategy with its interval, in
    the statistic's format ('-$412k [-$480k, -$344k]', '+60,141 [57,175, 62,984]')."""
    if not estimate:
        return "-"
    return (f"{signed_text(statistic, estimate.get('value'), currency)} "
            f"{statistic_interval(statistic, estimate.get('ci'), currency)}")


def signed_text(statistic: str, value: float | None, currency: str) -> str:
    if statistic.startswith("p:") and value is not None:
        text = "0%" if value == 0 else percent_text(value)       # a difference: no 'none'
    else:
        text = statistic_value(statistic, value, currency)
    return f"+{text}" if value is not None and value > 0 else text


def pareto_names(document: dict) -> list[str]:
    """The Pareto set's names in the order the table lists them (plans, then written)."""
    listed = [e["name"] for e in (*document["plans"], *document["written"])]
    members = document.get("pareto") or ()
    return sorted(members, key=lambda n: (listed.index(n) if n in listed else len(listed), n))


def yardstick_text(document: dict) -> str:
    """What the best written strategy is the best of: by the objective (a Pareto search: by
    the sum of its ranks on the objectives, which adds no unit to another) among the written
    strategies that break no constraint beyond noise, or among them all when every one
    breaks one (mcrisk.optimize.evaluate)."""
    best = document["evaluation"].get("best_written")
    entry = next((w for w in document["written"] if w["name"] == best), None)
    by = "the objective"
    if is_pareto(document):
        first = statistic_label(document["objective"]["statistics"][0])
        by = (f"the sum of its ranks on the objectives (each ranks the written strategies on "
              f"its own, so no unit is added to another; ties by {first})")
    if entry is not None and not entry.get("feasible", True):
        return (f"the best written strategy by {by}, though it breaks a constraint: every "
                "written strategy does")
    return (f"the best written strategy by {by} among those that break no constraint beyond "
            "noise")


def pareto_support_text(document: dict) -> str:
    """How sure each Pareto-set membership is: 'How sure (share of 200 bootstrap resamples
    of the fresh scenarios on the set): plan-1 100%, plan-2 62% (a near-tie: another seed may
    leave it out), ...'; '' without a Pareto objective or figures."""
    support = document.get("pareto_support") or {}
    resamples = document["evaluation"].get("resamples")
    if not is_pareto(document) or not support or not resamples:
        return ""
    listed = [e["name"] for e in (*document["plans"], *document["written"])]
    names = sorted(support, key=lambda n: (listed.index(n) if n in listed else len(listed), n))
    members = set(document.get("pareto") or ())

    def one(name: str) -> str:
        share = support[name]
        near = NEAR_TIE[0] < share < NEAR_TIE[1]
        return (f"{name} {percent_text(share) if share else '0%'}"
                + (" (a near-tie: another seed may " + ("leave it out" if name in members
                                                         else "put it in") + ")" if near
                   else ""))
    return (f"How sure each membership is (the share of {resamples:,} bootstrap resamples of "
            "the fresh scenarios on which it is on the set): "
            + ", ".join(one(name) for name in names) + ".")


NEAR_TIE = (0.05, 0.95)     # a Pareto-set support between these is called a near-tie


def share_bound_lines(document: dict) -> list[str]:
    """Per constraint that bounds a share by 0 ('in no scenario'), what the fresh scenarios
    show: 'Power over cap: none in 20,000 fresh scenarios, for every plan and written
    strategy.', or which had it and in what share of the scenarios; then how sure 'none' is:
    'With none in 20,000, P(power over cap) < 1.5e-4 at 95% (...)'."""
    samples = document["evaluation"]["samples"]
    entries = (*document["plans"], *document["written"])
    lines = []
    for constraint in document["constraints"]:
        kind, _, column = constraint["statistic"].partition(":")
        if kind != "p" or constraint["max"] != 0 or not entries:
            continue
        label = constraint["statistic"]
        values = [(e["name"], (e["statistics"].get(label) or {}).get("value")) for e in entries]
        if any(value is None for _, value in values):
            continue                                  # no figure: nothing to say
        had = dict((name, value) for name, value in values if value > 0)
        words = column_words(column)
        clean = [e for e in entries if e["name"] not in had]
        if not had:
            line = (f"{words[0].upper()}{words[1:]}: none in {samples:,} fresh scenarios, for "
                    "every plan and written strategy.")
        else:
            line = (f"{words[0].upper()}{words[1:]}: "
                    + (f"none in {samples:,} fresh scenarios for "
                       f"{', '.join(e['name'] for e in clean)}; " if clean else "")
                    + "; ".join(f"{name} has it in {statistic_value(label, value)} of them"
                                for name, value in had.items())
                    + " (the constraint: none).")
        upper = _worst_upper(clean, label)
        if upper is not None:
            line += (f" With none in {samples:,}, {statistic_label(label)} < "
                     f"{probability_text(upper)} at 95%" + (" for those without it" if had
                                                            else "")
                     + " (an exact one-sided bound): rarer cannot be ruled out.")
        lines.append(line)
    return lines


def _worst_upper(entries: list[dict], label: str) -> float | None:
    """The largest 95% upper bound on the share of scenarios over a constraint's bound among
    `entries` (None where one gives no evidence)."""
    uppers = [(e["constraints"].get(label) or {}).get("over_upper") for e in entries]
    return None if not uppers or None in uppers else max(uppers)


def probability_text(p: float) -> str:
    """A small probability to two significant digits: 0.0015, 1.5e-5 (no zero padding)."""
    text = f"{p:.2g}"
    return text.replace("e-0", "e-").replace("e+0", "e+")


def feasibility_lines(document: dict) -> list[str]:
    """How sure the plans found are to meet each constraint on a quantile, or on a share
    above 0 (a share bounded by 0 is share_bound_lines'): the most scenarios any plan has
    beyond what the constraint allows in one world, and the exact one-sided 95% upper bound
    on that share, against the share the constraint allows; e.g. 'P90 trough depth (H100-eq)
    at most 0 allows trough depth above 0 in 10% of scenarios; the plans found have it in at
    most 12 of 20,000 fresh scenarios (plan-0003): below 0.094% at 95%.'"""
    plans, lines = document["plans"], []
    for constraint in document["constraints"]:
        statistic = constraint["statistic"]
        kind, _, column = statistic.partition(":")
        if kind == "mean" or (kind == "p" and constraint["max"] == 0) or not plans:
            continue
        found = [(p["name"], (p["constraints"].get(statistic) or {})) for p in plans]
        if any("over" not in entry for _, entry in found):
            continue                                   # an older document: nothing to say
        name, worst = max(found, key=lambda item: (item[1]["over_upper"], item[1]["over"]))
        threshold = "0" if kind == "p" else statistic_value(statistic, constraint["max"],
                                                             currency_of(document))
        words = f"{label(column)} cost" if column in COSTS else label(column)
        what = f"{words} above {threshold}"                # the unit is in the bound's words
        held = (f"none has {what} in {worst['scenarios']:,} fresh scenarios" if not worst["over"]
                else f"they have it in at most {worst['over']:,} of {worst['scenarios']:,} fresh "
                     f"scenarios ({name})")
        lines.append(f"{bound_text(constraint, currency_of(document))} allows {what} in "
                     f"{percent_text(worst['allowed'])} of scenarios; of the plans found, "
                     f"{held}: below {percent_text(worst['over_upper'])} at 95% (an exact "
                     "one-sided bound).")
    return lines


def stage_text(stage: dict) -> str:
    """A race stage in words: '2,000 scenarios: 2 in, 3 re-admitted, 3 broke a constraint,
    2 kept' (re-admitted only where the stage re-admitted any)."""
    readmitted = stage.get("readmitted", 0)
    return (f"{stage['scenarios']:,} scenarios: {stage['candidates_in']:,} in, "
            + (f"{readmitted:,} re-admitted, " if readmitted else "")
            + f"{stage.get('infeasible', 0):,} broke a constraint, "
            f"{stage['candidates_out']:,} kept")


READMISSION = ("a candidate dropped on the objective is re-admitted, best first, in place of "
               "each survivor a later stage finds breaking a constraint, so that the race "
               "ends with no candidate only when every one broke a constraint beyond noise")
