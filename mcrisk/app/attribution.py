"""What moved the executing plan's figures since last night: each group of changes applied
alone to last night's inputs, paired on the same worlds (same seed, scenario addresses 0..n-1),
and the milestones the status has reached against the plan's forecast.

The groups: status facts (tonight's status file instead of last night's, on last night's
scenario), plan changes (tonight's strategies and [scenario] executing, on last night's model
and status) and model changes (every other scenario input, tonight's, with last night's
strategies and status). Each variant is run at ATTRIBUTION_SAMPLES worlds at most (the night's
sample count when it is smaller), with tonight's risk mode and seed; contribution = variant -
last night re-run; total = tonight - last night re-run; the interaction remainder = total -
sum of contributions, so they add up. A group that cannot be applied alone (tonight's status
names a unit last night's scenario lacks, the strategies need a row the old model lacks, the
executing plan is not in that variant) is reported as such and its effect stays in the
remainder: nothing is guessed.

The plan's forecast of each milestone is the P50 and P90 of tonight's scenario run without a
status (what the plan expected before anything happened), at the same sample count.
"""
from __future__ import annotations

import tempfile
from dataclasses import replace
from pathlib import Path

from ..core.errors import McriskError
from ..report.nightly.lead import FIGURES, Figure, Group, Lead, MilestoneActual
from ..scenario import load_scenario, load_status
from .run import RunResult, run_scenario, set_risks

ATTRIBUTION_SAMPLES = 2000     # at most: the attribution runs are 4 more runs of the night
_FAILURES = (McriskError, ValueError, KeyError)


def figures_of(summary: dict, strategy: str) -> dict:
    """{figure key: value} of a strategy in a summary.json (cost figures only with costs)."""
    per = summary["strategies"][strategy]
    out = {}
    for metric, stat, _, _ in FIGURES:
        block = per.get(metric) if metric in per else (per.get("costs") or {}).get(metric)
        if isinstance(block, dict) and isinstance(block.get(stat), (int, float)):
            out[f"{metric}.{stat}"] = float(block[stat])
    return out


def executing_plan(summary: dict) -> tuple[str, str]:
    """(strategy, where from): the status's or [scenario] executing, else the top-ranked."""
    if summary.get("executing") in summary["strategies"]:
        source = "executing, from the status" if summary.get("status") else "[scenario] executing"
        return summary["executing"], source
    return summary["ranking"][0], "no plan marked as executing: the top-ranked strategy"


def _status_file(folder: Path) -> Path | None:
    found = sorted(folder.glob("status.*"))
    return found[0] if found else None


def _verdict(diff, strategy: str, key: str) -> str:
    metric, stat = key.split(".")
    change = diff.change(strategy, metric, stat) if diff is not None else None
    if change is None:
        return "not compared"
    return "beyond noise and material" if change.reported else change.why_not_reported()


def build_lead(run: RunResult, raw, status: tuple[Path, bytes] | None, previous: Path | None,
               diff, risks: str, disable: tuple[str, ...], backend: str,
               seed: int) -> Lead:
    """The lead block of tonight's run `run` (`raw`: tonight's scenario as read, without facts;
    `status`: tonight's status file and bytes) against the night in folder `previous`."""
    summary = run.summary
    strategy, source = executing_plan(summary)
    new = figures_of(summary, strategy)
    old = {}
    prev_summary = None
    if diff is not None and previous is not None:
        import json
        prev_summary = json.loads((previous / "summary.json").read_text("utf-8"))
        if strategy in prev_summary["strategies"]:
            old = figures_of(prev_summary, strategy)
    figures = tuple(Figure(f"{m}.{s}", label, unit, old.get(f"{m}.{s}"), new.get(f"{m}.{s}"),
                           _verdict(diff, strategy, f"{m}.{s}"))
                    for m, s, label, unit in FIGURES if f"{m}.{s}" in new)
    if diff is None or previous is None:
        return Lead(strategy, source, figures)
    n = min(summary["samples"], ATTRIBUTION_SAMPLES)

    def figures_for(scenario, status_source) -> dict:
        facts = None
        if status_source is not None:
            path, data = status_source
            facts = load_status(path, scenario, data)
        register = set_risks(scenario, risks, disable, facts)
        result = run_scenario(register, samples=n, seed=seed, backend=backend, report=False,
                              mitigation=False)
        if strategy not in result.summary["strategies"]:
            raise KeyError(f"the executing plan {strategy} is not in it")
        return figures_of(result.summary, strategy)

    old_scenario = load_scenario(previous / "scenario.toml")
    old_file = _status_file(previous)
    old_status = None if old_file is None else (old_file, old_file.read_bytes())
    try:
        base = figures_for(old_scenario, old_status)
    except _FAILURES as error:
        return Lead(strategy, source, figures, note=f"last night's inputs cannot be re-run "
                                                    f"tonight ({error}): no attribution")
    tonight = new if n == summary["samples"] and seed == summary["seed"] else \
        figures_for(raw, status)
    keys_changed = [c.key for c in diff.input_changes]
    plan_changed = any(k.startswith("strategies[") or k == "scenario.executing"
                       for k in keys_changed)
    model_changed = any(not (k.startswith("strategies[") or k == "scenario.executing")
                        for k in keys_changed)
    old_sha = (prev_summary.get("status") or {}).get("sha256") if prev_summary else None
    new_sha = (summary.get("status") or {}).get("sha256")
    variants = (
        ("status facts", old_sha != new_sha, lambda: (old_scenario, status)),
        ("plan changes", plan_changed, lambda: (replace(old_scenario, strategies=raw.strategies,
                                                        executing=raw.executing), old_status)),
        ("model changes", model_changed, lambda: (replace(raw, strategies=old_scenario.strategies,
                                                          executing=old_scenario.executing),
                                                  old_status)))
    groups = []
    for name, changed, make in variants:
        if not changed:
            groups.append(Group(name, False, "nothing changed"))
            continue
        try:
            alone = figures_for(*make())
        except _FAILURES as error:
            why = " ".join(str(error).split())
            groups.append(Group(name, False, "cannot be applied alone to last night's inputs ("
                                + (why if len(why) <= 200 else why[:197] + "...")
                                + "): its effect is in the remainder"))
            continue
        groups.append(Group(name, True, "applied alone",
                            {k: alone[k] - base[k] for k in base if k in alone}))
    total = {k: tonight[k] - base[k] for k in base if k in tonight}
    interaction = {k: total[k] - sum(g.contributions.get(k, 0.0) for g in groups if g.applied)
                   for k in total}
    how = (f"each group of changes applied alone to last night's inputs, paired on the same "
           f"worlds (seed {seed}, {n:,} worlds: "
           + (f"fewer than the night's {summary['samples']:,}, to keep it affordable, so "
              "each total below is on those worlds and can differ a little from the move "
              "above"
              if n < summary["samples"] else "the night's sample count")
           + "); the interaction and the rest is what the groups do together, and any group "
             "that could not be applied alone")
    return Lead(strategy, source, figures, tuple(groups), total, interaction, n, how)


def given_at_day_0(actual: float, planned: dict) -> bool:
    """A milestone reached on day 0 that the plan has on day 0 as well (hall A, energized
    before the migration starts): the scenario's own starting point, not news."""
    p90 = planned.get("p90")
    return actual <= 0 and isinstance(p90, (int, float)) and p90 <= 0


def milestones_against_plan(run: RunResult, raw, risks: str, disable: tuple[str, ...],
                            backend: str, seed: int) -> list[MilestoneActual]:
    """Each milestone tonight's status has reached, for the executing plan: its actual day
    against the P50 and P90 of tonight's scenario run without a status."""
    summary = run.summary
    block = summary.get("milestones")
    if not summary.get("status") or not isinstance(block, dict):
        return []
    strategy, _ = executing_plan(summary)
    reached = [m for m in block["strategies"].get(strategy, []) if m.get("actual")]
    if not reached:
        return []
    n = min(summary["samples"], ATTRIBUTION_SAMPLES)
    try:
        with tempfile.TemporaryDirectory(prefix="mcrisk-plan-") as folder:
            plan = run_scenario(set_risks(raw, risks, disable), samples=n, seed=seed,
                                backend=backend, out_dir=Path(folder) / "plan", report=False,
                                mitigation=False)
    except _FAILURES:
        return []
    forecast = {m["key"]: m for m in plan.summary.get("milestones", {}).get(
        "strategies", {}).get(strategy, [])}
    out = []
    for m in sorted(reached, key=lambda m: float(m["actual_day"])):
        planned = forecast.get(m["key"], {})
        if given_at_day_0(float(m["actual_day"]), planned):
            continue
        out.append(MilestoneActual(m["name"], float(m["actual_day"]), planned.get("p50"),
                                   planned.get("p90")))
    return out
