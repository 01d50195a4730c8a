"""The executing plan leads the nightly: how its key figures moved since the night compared
with, whether each move is beyond Monte Carlo noise and material (the comparison's own
verdicts), and what moved them: each group of changes (status facts, plan changes, model
changes) applied alone to last night's inputs, paired on the same worlds, its contribution to
each figure, and the interaction remainder, so that the contributions add up to the total.

Also each milestone the status has reached: its actual day against the plan's forecast (the
P50 and P90 of the run without a status: what the plan expected before anything happened).

The numbers are computed by the nightly (mcrisk.app.attribution); this module holds them and
writes them (diff.md, report.html, the terminal). Plain text: each output escapes it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from ...core.labels import label, unit

FIGURES = (("trough_depth", "p90", f"P90 {label('trough_depth')}", unit("trough_depth")),
           ("completion_day", "p90", "completion (P90)", unit("completion_day")),
           ("shortfall_gpu_days", "p90", f"{label('shortfall_gpu_days')} (P90)",
            unit("shortfall_gpu_days")),
           ("cost_total", "mean", "cost (mean)", "money"),
           ("cost_total", "p90", "cost (P90)", "money"))


@dataclass(frozen=True)
class Figure:
    key: str                 # "metric.stat"
    label: str
    unit: str
    old: float | None        # last night's value (its summary.json)
    new: float | None        # tonight's
    verdict: str             # "beyond noise and material" | why not (the comparison's)


@dataclass(frozen=True)
class Group:
    name: str                               # "status facts" | "plan changes" | "model changes"
    applied: bool                           # run alone on last night's inputs
    why: str                                # what it holds, or why it could not be applied
    contributions: dict = field(default_factory=dict)   # figure key -> contribution


@dataclass(frozen=True)
class Lead:
    strategy: str
    source: str                             # where the executing plan was read from
    figures: tuple[Figure, ...]
    groups: tuple[Group, ...] = ()
    total: dict = field(default_factory=dict)         # figure key -> total move (re-runs)
    interaction: dict = field(default_factory=dict)   # figure key -> remainder
    samples: int = 0                                  # worlds of the attribution runs
    note: str = ""                                    # how the attribution was run


@dataclass(frozen=True)
class MilestoneActual:
    name: str
    actual: float
    p50: float | None
    p90: float | None

    def words(self) -> str:
        if self.p50 is None:
            return "not in the plan's forecast"
        d = self.actual - self.p50
        n = round(abs(d))
        side = "on time" if n == 0 else f"{n} day{'s' if n != 1 else ''} {'late' if d > 0 else 'early'}"
        beyond = (", later than its P90" if self.p90 is not None and self.actual > self.p90 + 0.5
                  else "")
        return f"{side} against its P50{beyond}"


def number(value: float | None, unit: str = "") -> str:
    if value is None or value != value:
        return "n/a"
    if unit == "money":
        return f"${value / 1e6:,.2f}M" if abs(value) >= 1e5 else f"${value:,.0f}"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def signed(value: float | None, unit: str = "") -> str:
    if value is None or value != value:
        return "n/a"
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    return sign + number(abs(value), unit)


def lead_lines(lead: Lead) -> list[str]:
    """The lead block as plain lines: a line per figure with its move and verdict, then the
    attribution: a line per figure, each group's contribution and the interaction."""
    lines = [f"The executing plan: {lead.strategy} ({lead.source})."]
    for f in lead.figures:
        move = (None if f.old is None or f.new is None else f.new - f.old)
        lines.append(f"{f.label}: {number(f.old, f.unit)} → {number(f.new, f.unit)} "
                     f"({signed(move, f.unit)}; {f.verdict})")
    if not lead.groups:
        return lines
    lines.append(f"What moved them: {lead.note}.")
    for g in lead.groups:
        if not g.applied:
            lines.append(f"  {g.name}: {g.why}")
    applied = [g for g in lead.groups if g.applied]
    for f in lead.figures:
        if f.key not in lead.total:
            continue
        parts = [f"{g.name} {signed(g.contributions.get(f.key), f.unit)}" for g in applied]
        parts.append(f"interaction and the rest {signed(lead.interaction.get(f.key), f.unit)}")
        lines.append(f"  {f.label} {signed(lead.total[f.key], f.unit)} = " + ", ".join(parts))
    return lines


def milestone_rows(milestones: list[MilestoneActual]) -> list[tuple[str, str, str, str, str]]:
    """(milestone, actual, plan P50, plan P90, against plan) per milestone reached."""
    def day(v):
        return "n/a" if v is None else f"day {v:,.0f}" if float(v).is_integer() else f"day {v:,.1f}"
    return [(m.name, day(m.actual), day(m.p50), day(m.p90), m.words()) for m in milestones]


def _late(m: MilestoneActual) -> float:
    return -1e18 if m.p50 is None else m.actual - m.p50


def milestones_line(milestones: list[MilestoneActual]) -> str:
    """The terminal's one line on the milestones reached: how many, how many late, early or on
    time against the plan's P50, and how many came later than its P90."""
    n = len(milestones)
    known = [m for m in milestones if m.p50 is not None]
    late = sum(1 for m in known if round(m.actual - m.p50) > 0)
    early = sum(1 for m in known if round(m.actual - m.p50) < 0)
    beyond = sum(1 for m in known if m.p90 is not None and m.actual > m.p90 + 0.5)
    parts = [f"{late} late", f"{early} early", f"{len(known) - late - early} on time"]
    return (f"milestones reached: {n}, against the plan's P50 (tonight's scenario run without a "
            f"status): {', '.join(parts)}; {beyond} later than the plan's P90"
            + (f"; {n - len(known)} not in the plan's forecast" if n > len(known) else "")
            + ("; the latest against plan:" if late else ""))


def milestone_terminal_lines(milestones: list[MilestoneActual], top: int = 3) -> list[str]:
    """The milestones latest against the plan's P50 (every one later than its P90 among
    them), at most `top` unless more are later than their P90; diff.md has the table."""
    known = sorted((m for m in milestones if m.p50 is not None and round(m.actual - m.p50) > 0),
                   key=_late, reverse=True)
    beyond = [m for m in known if m.p90 is not None and m.actual > m.p90 + 0.5]
    shown = known[:top] + [m for m in beyond if m not in known[:top]]
    rows = {m.name: row for m, row in zip(milestones, milestone_rows(milestones))}
    lines = [f"{m.name}: {rows[m.name][1]}, {m.words()} (plan P50 {rows[m.name][2]}, "
             f"P90 {rows[m.name][3]})" for m in shown]
    if len(milestones) > len(shown):
        lines.append(f"({len(milestones) - len(shown)} more in diff.md, under \"Milestones "
                     "reached: actual against plan\")")
    return lines
