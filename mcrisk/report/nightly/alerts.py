"""`--fail-if` conditions: parsed by a regular expression (no eval), checked, evaluated.

Grammar:  TARGET.COLUMN.STAT[.date][.delta] OP VALUE
  TARGET  a strategy name of the scenario, `any` (breached when some strategy meets the
          condition) or `all` (breached when every strategy does)
  COLUMN  any column the run reports, named as summary.json names it (columns.py):
          a metric      trough_depth | trough_days | shortfall_gpu_days | homeless_days |
                        completion_day | power_violation
          a cost        cost_total | cost_power_reserved | ... (with a [costs] section)
          a job column  unservable_gpu_days | homeless_days.<job class> (with a job mix)
          a milestone   milestone.<key>, the key of summary.json's milestones
                        (milestone.completion, milestone.arrival:S1, milestone.wave:hall:B)
  STAT    mean | p50 | p90 | p99; power_violation: probability; a milestone: mean | p10 |
          p50 | p90 (its day)
  .date   a milestone or completion_day compared as a calendar date (VALUE an ISO date,
          2027-11-30; needs the scenario's start_date): day t falls on start_date + floor(t)
  .delta  a metric's tonight's value minus the previous run's (skipped, with a note, when
          there is none). Only a change the diff reports counts: beyond Monte Carlo noise and
          at least the materiality threshold (mcrisk.report.nightly.materiality). A change
          within noise or below the threshold never breaches a .delta condition, whatever its
          operator: `.delta >= 0` means "a reported increase", and `.delta == 0` can never be
          breached. When the raw change would have met the condition, a note says why it
          did not count. Only the metrics are compared night over night.
  OP      > >= < <= == !=
  VALUE   a number (in the column's unit: days, H100-eq, money in the run's currency), or
          with .date an ISO date
Examples: "hybrid-gated.trough_depth.p90 > 0", "any.power_violation.probability > 0",
          "hybrid-gated.trough_days.p90.delta > 5", "big-bang.cost_total.p90 > 6e7",
          "any.homeless_days.frontier.p90 > 10", "hybrid-gated.milestone.completion.p90 > 300",
          "hybrid-gated.milestone.completion.p90.date > 2027-11-30".
Strategy names may contain dots: the statistic is read from the right, then the column.
"""
from __future__ import annotations

import datetime as _dt
import math
import operator
import re
from dataclasses import dataclass

from ...core.definitions import METRICS
from ...core.errors import McriskError
from .columns import (COLUMN_FORMS, DATED, METRIC, MILESTONE, MILESTONE_PREFIX, can_be_dated,
                      column_problems, column_words, kind_of, split_column, stats_of, suggest,
                      value_unit)
from .diff import NightDiff
from ..text import visible

CONTINUOUS_STATS = ("mean", "p50", "p90", "p99")
PROBABILITY_STATS = ("probability",)
_OPS = {">": operator.gt, ">=": operator.ge, "<": operator.lt, "<=": operator.le,
        "==": operator.eq, "!=": operator.ne}
_OP_WORDS = {">": "above", ">=": "at or above", "<": "below", "<=": "at or below",
             "==": "equal to", "!=": "other than"}
_DATE_WORDS = {">": "after", ">=": "on or after", "<": "before", "<=": "on or before",
               "==": "on", "!=": "not on"}
_CONDITION = re.compile(
    r"^\s*(?P<lhs>\S.*)\s*(?P<op>>=|<=|==|!=|>|<)\s*"
    r"(?:(?P<date>\d{4}-\d{2}-\d{2})|"
    r"(?P<rhs>[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?))\s*$")
GRAMMAR = ("STRATEGY|any|all.COLUMN.STAT[.date][.delta] OP VALUE, e.g. "
           "'hybrid-gated.trough_depth.p90 > 0' (docs/nightly.md)")


class AlertError(McriskError):
    """A --fail-if condition that cannot be parsed or names nothing in the scenario."""

    exit_code = 2


@dataclass(frozen=True)
class Condition:
    text: str
    target: str               # strategy name, "any" or "all"
    metric: str               # the column: a metric, cost, job column or milestone.<key>
    stat: str
    delta: bool
    op: str
    threshold: float
    date: str | None = None   # .date: the ISO date compared with (threshold is then 0)

    def label(self, strategy: str) -> str:
        return (f"{strategy}.{self.metric}.{self.stat}{'.date' if self.date else ''}"
                f"{'.delta' if self.delta else ''}")

    @property
    def kind(self) -> str:
        return kind_of(self.metric)

    def threshold_text(self) -> str:
        return self.date if self.date else f"{self.threshold:g}"


@dataclass(frozen=True)
class Breach:
    condition: Condition
    strategy: str
    value: float
    detail: str = ""          # for a .delta condition: old -> new, and how it was judged
    words: str = ""           # the breach as a sentence: the column, the value, the threshold
    shown: str = ""           # the value as compared: a date with .date, else ""

    def __str__(self) -> str:
        c = self.condition
        detail = f"; {visible(self.detail)}" if self.detail else ""
        value = self.shown or f"{self.value:,.6g}"
        words = f": {visible(self.words)}" if self.words else ""
        return (f"{visible(c.label(self.strategy))} = {value} {c.op} {c.threshold_text()}"
                f"{words}  (--fail-if {c.text!r}{detail})")


@dataclass(frozen=True)
class AlertOutcome:
    """What the conditions said tonight, for the report: every condition, the breaches, and
    the notes (conditions skipped or changes not counted, and why)."""

    conditions: tuple[Condition, ...] = ()
    breaches: tuple[Breach, ...] = ()
    notes: tuple[str, ...] = ()


def _suggest(word: str, choices) -> str:
    return suggest(word, choices)


def parse_condition(text: str) -> Condition:
    """One condition; AlertError naming the problem and the grammar."""
    match = _CONDITION.match(text)
    if match is None:
        raise AlertError(f"--fail-if {text!r}: cannot parse; expected {GRAMMAR}")
    lhs = match["lhs"].strip()
    delta = lhs.endswith(".delta")
    if delta:
        lhs = lhs[:-len(".delta")]
    dated = lhs.endswith(".date")
    if dated:
        lhs = lhs[:-len(".date")]
    rest, _, stat = lhs.rpartition(".")
    if not rest or not stat or "." not in rest:
        raise AlertError(f"--fail-if {text!r}: {lhs!r} is not STRATEGY.COLUMN.STAT; "
                         f"expected {GRAMMAR}")
    split = split_column(rest)
    if split is None:
        target, _, column = rest.rpartition(".")
        hint = (" (a milestone is milestone.<key>.STAT, e.g. milestone.completion.p90)"
                if column == "milestone" else "")
        raise AlertError(f"--fail-if {text!r}: unknown metric or column {column!r}"
                         f"{_suggest(column, COLUMN_FORMS.split(', '))}{hint} "
                         f"(columns: {COLUMN_FORMS})")
    target, column = split
    allowed = stats_of(column)
    if stat not in allowed:
        raise AlertError(f"--fail-if {text!r}: unknown statistic {stat!r} for {column}"
                         f"{_suggest(stat, allowed)} (choose one of {', '.join(allowed)})")
    if delta and kind_of(column) != METRIC:
        raise AlertError(f"--fail-if {text!r}: .delta compares night over night only the "
                         f"metrics ({', '.join(METRICS)}); {column} has no night-over-night "
                         "comparison: drop '.delta' and give a level")
    date = match["date"]
    if dated and not can_be_dated(column):
        raise AlertError(f"--fail-if {text!r}: .date compares a day with a calendar date, and "
                         f"{column} is not a day (a milestone, or {', '.join(DATED)})")
    if dated and delta:
        raise AlertError(f"--fail-if {text!r}: .date and .delta do not go together")
    if dated and date is None:
        raise AlertError(f"--fail-if {text!r}: .date compares with a calendar date; give one "
                         "as YYYY-MM-DD, e.g. 2027-11-30")
    if date is not None and not dated:
        hint = (f" (add .date: {lhs}.date {match['op']} {date})" if can_be_dated(column)
                else f" ({column} is not a day: give a number)")
        raise AlertError(f"--fail-if {text!r}: a date compares only with .date{hint}")
    if date is not None:
        try:
            _dt.date.fromisoformat(date)
        except ValueError as error:
            raise AlertError(f"--fail-if {text!r}: {date!r} is not a calendar date ({error})") \
                from None
    threshold = 0.0 if date else float(match["rhs"].replace("_", ""))
    return Condition(text, target, column, stat, delta, match["op"], threshold, date)


def parse_conditions(texts) -> list[Condition]:
    """Every condition; one AlertError listing each one that cannot be used."""
    conditions, problems = [], []
    for text in texts:
        try:
            conditions.append(parse_condition(text))
        except AlertError as error:
            problems.append(str(error))
    _raise(problems, "cannot be used")
    return conditions


def _raise(problems: list[str], what: str) -> None:
    if len(problems) == 1:
        raise AlertError(problems[0])
    if problems:
        raise AlertError(f"{len(problems)} --fail-if conditions {what}:\n"
                         + "\n".join(f"  {p}" for p in problems))


def _strategy_problems(conditions, names) -> list[str]:
    return [f"--fail-if {c.text!r}: no strategy {c.target!r} in the scenario"
            f"{_suggest(c.target, names)} (strategies: {', '.join(names)}; or 'any', 'all')"
            for c in conditions if c.target not in ("any", "all") and c.target not in names]


def check_strategies(conditions: list[Condition], strategy_names) -> None:
    """AlertError naming each condition whose strategy the scenario does not have."""
    _raise(_strategy_problems(conditions, list(strategy_names)), "name no strategy of the scenario")


def check_conditions(conditions: list[Condition], scenario) -> None:
    """AlertError naming every condition the scenario cannot answer: an unknown strategy, a
    cost column without [costs], an unknown job column or milestone key, a date without
    start_date (columns.column_problems); before the run."""
    names = [s.name for s in scenario.strategies]
    problems = _strategy_problems(conditions, names)
    for c in conditions:
        problems += column_problems(c, scenario)
    _raise(problems, "cannot be used with this scenario")


def _stat_words(c: Condition) -> str:
    return {"mean": "mean", "probability": "probability of"}.get(c.stat, c.stat.upper())


def _sentence(c: Condition, strategy: str, value: float, summary: dict, name: str = "",
              shown: str = "") -> str:
    """The breach in words: the strategy, the statistic of the column in words, the value and
    the threshold, each with its unit."""
    currency = (summary.get("costs") or {}).get("currency", "")
    column = column_words(c.metric, currency, name)
    if c.date:
        return (f"{strategy}'s {_stat_words(c)} date of {column} is {shown} (day {value:,.1f}), "
                f"{_DATE_WORDS[c.op]} {c.date}")
    if c.kind == MILESTONE:
        return (f"{strategy}'s {_stat_words(c)} day of {column} is day {value:,.1f}, "
                f"{_OP_WORDS[c.op]} day {c.threshold:g}")
    u = "" if c.metric == "power_violation" else value_unit(c.metric, currency)
    if c.delta:
        return (f"{strategy}'s {_stat_words(c)} {column} changed by {value:+,.6g}{u} since the "
                f"previous night, {_OP_WORDS[c.op]} {c.threshold:+g}{u}")
    return (f"{strategy}'s {_stat_words(c)} {column} is {value:,.6g}{u}, {_OP_WORDS[c.op]} the "
            f"threshold {c.threshold:g}{u}")


def _level(c: Condition, summary: dict, name: str) -> tuple[float | None, str, str]:
    """(value, milestone name, why not) of a level condition for one strategy: the value
    None, and why, when summary.json does not have it."""
    null = f"its {c.stat} is not computable (null in summary.json)"
    if c.kind == MILESTONE:
        key = c.metric[len(MILESTONE_PREFIX):]
        items = ((summary.get("milestones") or {}).get("strategies") or {}).get(name)
        if items is None:
            return None, "", "summary.json has no milestones"
        found = next((m for m in items if m["key"] == key), None)
        if found is None:
            return None, "", (f"its schedule has no milestone {key!r} (its completion "
                              "waits for no such event)")
        return found.get(c.stat), found.get("name", key), null
    row = summary["strategies"][name]
    holder = {"cost": row.get("costs"), "job": row.get("jobs")}.get(c.kind, row)
    if holder is None or c.metric not in holder:
        return None, "", f"summary.json has no {c.metric}"
    return holder[c.metric].get(c.stat), "", null


def _start_date(summary: dict) -> str | None:
    return summary.get("start_date") or (summary.get("milestones") or {}).get("start_date")


def _compare(c: Condition, value: float, summary: dict) -> tuple[bool, str]:
    """(met, shown): whether the value meets the condition; with .date the compared date."""
    if not c.date:
        return _OPS[c.op](value, c.threshold), ""
    start = _start_date(summary)
    if start is None:
        return False, ""
    shown = _dt.date.fromisoformat(start) + _dt.timedelta(days=math.floor(value))
    return _OPS[c.op](shown, _dt.date.fromisoformat(c.date)), shown.isoformat()


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
        if c.date and _start_date(summary) is None:
            notes.append(f"--fail-if {c.text!r}: skipped, the run has no start_date to date "
                         "its days")
            continue
        targets = names if c.target in ("any", "all") else [c.target]
        hits = []
        for name in targets:
            detail, milestone = "", ""
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
                raw, milestone, why = _level(c, summary, name)
                if raw is None:
                    notes.append(f"--fail-if {c.text!r}: skipped for {visible(name)}, {why}")
                    continue
                value = float(raw)
            met, shown = _compare(c, value, summary)
            if met:
                hits.append(Breach(c, name, value, detail,
                                   _sentence(c, name, value, summary, milestone, shown), shown))
        if c.target != "all" or (hits and len(hits) == len(targets)):
            breaches += hits
    return breaches, notes
