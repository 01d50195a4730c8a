"""`--fail-if` conditions: parsed by a regular expression (no eval), checked, evaluated.

Grammar:  TARGET.METRIC.STAT[.delta] OP NUMBER
  TARGET  a strategy name of the scenario, `any` (breached when some strategy meets the
          condition) or `all` (breached when every strategy does)
  METRIC  trough_depth | trough_days | shortfall_gpu_days | homeless_days | completion_day |
          power_violation
  STAT    mean | p50 | p90 | p99 (power_violation: probability)
  .delta  tonight's value minus the previous run's (skipped, with a note, when there is none).
          Only a change the diff reports counts: beyond Monte Carlo noise and at least the
          materiality threshold (mcrisk.report.nightly.materiality). A change within noise
          or below the threshold never breaches a .delta condition, whatever its operator:
          `.delta >= 0` means "a reported increase", and `.delta == 0` can never be
          breached. When the raw change would have met the condition, a note says why it
          did not count.
  OP      > >= < <= == !=
Examples: "hybrid-gated.trough_depth.p90 > 0", "any.power_violation.probability > 0",
          "hybrid-gated.trough_days.p90.delta > 5".
Strategy names may contain dots: the last two (three with .delta) dotted parts are read first.
"""
from __future__ import annotations

import difflib
import math
import operator
import re
from dataclasses import dataclass

from ...core.definitions import METRICS
from ...core.errors import McriskError
from .diff import NightDiff
from ..text import visible

CONTINUOUS_STATS = ("mean", "p50", "p90", "p99")
PROBABILITY_STATS = ("probability",)
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
        "==": operator.eq, "!=": operator.ne}
_CONDITION = re.compile(
    r"^\s*(?P<lhs>\S.*)\s*(?P<op>>=|<=|==|!=|>|<)\s*"
    r"(?P<rhs>[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?)\s*$")
GRAMMAR = "STRATEGY|any|all.METRIC.STAT[.delta] OP NUMBER, e.g. 'hybrid-gated.trough_depth.p90 > 0'"


class AlertError(McriskError):
    """A --fail-if condition that cannot be parsed or names nothing in the scenario."""

    exit_code = 2


@dataclass(frozen=True)
class Condition:
    text: str
    target: str               # strategy name, "any" or "all"
    metric: str
    stat: str
    delta: bool
    op: str
    threshold: float

    def label(self, strategy: str) -> str:
        return f"{strategy}.{self.metric}.{self.stat}{'.delta' if self.delta else ''}"


@dataclass(frozen=True)
class Breach:
    condition: Condition
    strategy: str
    value: float
    detail: str = ""          # for a .delta condition: old -> new, and how it was judged

    def __str__(self) -> str:
        c = self.condition
        detail = f"; {visible(self.detail)}" if self.detail else ""
        return (f"{visible(c.label(self.strategy))} = {self.value:,.6g} {c.op} {c.threshold:g}  "
                f"(--fail-if {c.text!r}{detail})")


@dataclass(frozen=True)
class AlertOutcome:
    """What the conditions said tonight, for the report: every condition, the breaches, and
    the notes (conditions skipped or changes not counted, and why)."""

    conditions: tuple[Condition, ...] = ()
    breaches: tuple[Breach, ...] = ()
    notes: tuple[str, ...] = ()


def _suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def parse_condition(text: str) -> Condition:
    """One condition; AlertError naming the problem and the grammar."""
    match = _CONDITION.match(text)
    if match is None:
        raise AlertError(f"--fail-if {text!r}: cannot parse; expected {GRAMMAR}")
    lhs = match["lhs"].strip()
    delta = lhs.endswith(".delta")
    if delta:
        lhs = lhs[:-len(".delta")]
    parts = lhs.rsplit(".", 2)
    if len(parts) != 3 or not all(parts):
        raise AlertError(f"--fail-if {text!r}: {lhs!r} is not STRATEGY.METRIC.STAT; expected {GRAMMAR}")
    target, metric, stat = parts
    if metric not in METRICS:
        raise AlertError(f"--fail-if {text!r}: unknown metric {metric!r}{_suggest(metric, METRICS)} "
                         f"(metrics: {', '.join(METRICS)})")
    allowed = PROBABILITY_STATS if metric == "power_violation" else CONTINUOUS_STATS
    if stat not in allowed:
        raise AlertError(f"--fail-if {text!r}: unknown statistic {stat!r} for {metric}"
                         f"{_suggest(stat, allowed)} (choose one of {', '.join(allowed)})")
    threshold = float(match["rhs"].replace("_", ""))
    return Condition(text, target, metric, stat, delta, match["op"], threshold)


def parse_conditions(texts) -> list[Condition]:
    """Every condition; one AlertError listing each one that cannot be used."""
    conditions, problems = [], []
    for text in texts:
        try:
            conditions.append(parse_condition(text))
        except AlertError as error:
            problems.append(str(error))
    if len(problems) == 1:
        raise AlertError(problems[0])
    if problems:
        raise AlertError(f"{len(problems)} --fail-if conditions cannot be used:\n"
                         + "\n".join(f"  {p}" for p in problems))
    return conditions


def check_strategies(conditions: list[Condition], strategy_names) -> None:
    """AlertError naming each condition whose strategy the scenario does not have."""
    names = list(strategy_names)
    problems = [f"--fail-if {c.text!r}: no strategy {c.target!r} in the scenario"
                f"{_suggest(c.target, names)} (strategies: {', '.join(names)}; or 'any', 'all')"
                for c in conditions if c.target not in ("any", "all") and c.target not in names]
    if len(problems) == 1:
        raise AlertError(problems[0])
    if problems:
        raise AlertError(f"{len(problems)} --fail-if conditions name no strategy of the "
                         "scenario:\n" + "\n".join(f"  {p}" for p in problems))


def evaluate(conditions: list[Condition], summary: dict,
             diff: NightDiff | None) -> tuple[list[Breach], list[str]]:
    """(breaches, notes): each strategy meeting a condition; notes on conditions skipped, and
    on changes that met a .delta condition but do not count (within noise, or below the
    materiality threshold: see the module doc)."""
    breaches, notes = [], []
    names = list(summary["strategies"])
    for c in conditions:
        if c.delta and diff is None:
            notes.append(f"--fail-if {c.text!r}: skipped, no previous run to compare with")
            continue
        targets = names if c.target in ("any", "all") else [c.target]
        hits = []
        for name in targets:
            detail = ""
            if c.delta:
                change = diff.change(name, c.metric, c.stat)
                if change is None:
                    notes.append(f"--fail-if {c.text!r}: skipped for {visible(name)}, not in the "
                                 "previous run")
                    continue
                value = change.delta
                if not math.isfinite(value):
                    notes.append(f"--fail-if {c.text!r}: skipped for {visible(name)}, a value "
                                 "is not computable")
                    continue
                if _OPS[c.op](value, c.threshold) and not change.reported and value != 0:
                    notes.append(f"--fail-if {c.text!r}: not breached by {visible(name)}: its "
                                 f"change {value:+,.6g} is {change.why_not_reported()}")
                    continue
                if not change.reported:
                    continue
                detail = (f"{change.old:,.6g} -> {change.new:,.6g} since {visible(diff.previous)}, "
                          f"{change.method}")
            else:
                raw = summary["strategies"][name][c.metric].get(c.stat)
                if raw is None:
                    notes.append(f"--fail-if {c.text!r}: skipped for {visible(name)}, its "
                                 f"{c.stat} is not computable (null in summary.json)")
                    continue
                value = float(raw)
            if _OPS[c.op](value, c.threshold):
                hits.append(Breach(c, name, value, detail))
        if c.target != "all" or (hits and len(hits) == len(targets)):
            breaches += hits
    return breaches, notes
