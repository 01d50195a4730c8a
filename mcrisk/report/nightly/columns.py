"""What a --fail-if condition can name: every column the run reports (mcrisk.report.nightly.alerts
has the grammar). The metrics (definitions.METRICS), the cost columns (definitions.COSTS, with a
[costs] section), the job columns (unservable_gpu_days and homeless_days.<job class>, with a
job mix) and the milestones (milestone.<key>, the keys of summary.json's milestones); how each
reads in words; and the check of a condition's column against a scenario, before it runs.
"""
from __future__ import annotations

import difflib

from ...core.definitions import COSTS, JOB_MIX_COLUMNS, METRICS
from ...core.labels import label, unit
from ...results.milestones import node_keys

METRIC, COST, JOB, MILESTONE = "metric", "cost", "job", "milestone"
JOB_CLASS_PREFIX = "homeless_days."
MILESTONE_PREFIX = "milestone."
STATS = {METRIC: ("mean", "p50", "p90", "p99"), COST: ("mean", "p50", "p90", "p99"),
         JOB: ("mean", "p50", "p90", "p99"), MILESTONE: ("mean", "p10", "p50", "p90")}
POWER_STATS = ("probability",)
FIXED_COLUMNS = (*METRICS, *COSTS, *JOB_MIX_COLUMNS)
COLUMN_FORMS = (f"{', '.join(FIXED_COLUMNS)}, homeless_days.<job class>, milestone.<key>")
# a day-valued column: compared with a calendar date when the statistic ends in .date
DATED = ("completion_day",)


def kind_of(column: str) -> str | None:
    """The kind of a column name (METRIC, COST, JOB, MILESTONE), None when it is none."""
    if column in METRICS:
        return METRIC
    if column in COSTS:
        return COST
    if column in JOB_MIX_COLUMNS or (column.startswith(JOB_CLASS_PREFIX)
                                     and len(column) > len(JOB_CLASS_PREFIX)):
        return JOB
    if column.startswith(MILESTONE_PREFIX) and len(column) > len(MILESTONE_PREFIX):
        return MILESTONE
    return None


def stats_of(column: str) -> tuple[str, ...]:
    return POWER_STATS if column == "power_violation" else STATS[kind_of(column)]


def can_be_dated(column: str) -> bool:
    return column in DATED or kind_of(column) == MILESTONE


def suggest(word: str, choices) -> str:
    close = difflib.get_close_matches(word, list(choices), n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


def split_column(rest: str) -> tuple[str, str] | None:
    """(target, column) of `TARGET.COLUMN` (the statistic already taken off), or None when no
    known column form ends it. A milestone's key runs from the first `.milestone.` to the
    statistic (keys may hold dots); a job class's column is `homeless_days.<id>`."""
    head, sep, key = rest.partition(f".{MILESTONE_PREFIX}")
    if sep and head and key:
        return head, MILESTONE_PREFIX + key
    head, sep, job = rest.rpartition(f".{JOB_CLASS_PREFIX}")
    if sep and head and job and "." not in job:
        return head, JOB_CLASS_PREFIX + job
    head, sep, column = rest.rpartition(".")
    if sep and head and column in FIXED_COLUMNS:
        return head, column
    return None


def milestone_keys(scenario) -> dict[str, set[str]]:
    """Per strategy, the milestone keys its schedule can have (mcrisk.results.milestones: every
    node of the plan and the strategy's rollups; a node its completion does not wait for is
    left out of the run's schedule, and a condition on it is then skipped with a note)."""
    nodes = {":".join(str(k) for k in key) for key in node_keys(scenario)}
    hall_of_row = {row.id: row.hall for row in scenario.rows()}
    out = {}
    for strategy in scenario.strategies:
        keys = set(nodes) | {"completion"}
        waves: dict = {}
        for unit_id, trigger in strategy.drains:
            waves.setdefault(trigger, []).append(unit_id)
        for units in waves.values():
            keys |= {f"wave:drain:{','.join(units)}", f"wave:removed:{','.join(units)}"}
        placed = dict(strategy.placement)
        for ship in scenario.shipments:
            if any(u in placed for u in ship.units):
                keys |= {f"wave:install:{ship.id}", f"wave:accepted:{ship.id}"}
        keys |= {f"wave:hall:{hall_of_row[row]}" for row in placed.values()}
        out[strategy.name] = keys
    return out


def column_problems(condition, scenario) -> list[str]:
    """What in `condition` (alerts.Condition) the scenario does not have, each in words with
    the valid names: a [costs] section for a cost column, the job class, the milestone key,
    and start_date for a date."""
    column, kind, text = condition.metric, kind_of(condition.metric), condition.text
    problems = []
    if kind == COST and scenario.costs is None:
        problems.append(f"--fail-if {text!r}: {column} needs a [costs] section, and the "
                        "scenario has none")
    if kind == JOB:
        jobs = tuple(j.id for j in scenario.demand.jobs)
        names = [*JOB_MIX_COLUMNS, *(JOB_CLASS_PREFIX + j for j in jobs)]
        if not jobs:
            problems.append(f"--fail-if {text!r}: {column} needs a job mix ([[demand.jobs]]), "
                            "and the scenario has none")
        elif column not in names:
            problems.append(f"--fail-if {text!r}: no job column {column!r}{suggest(column, names)}"
                            f" (job columns: {', '.join(names)})")
    if kind == MILESTONE:
        key = column[len(MILESTONE_PREFIX):]
        per_strategy = milestone_keys(scenario)
        keys = (per_strategy.get(condition.target, set()) if condition.target not in ("any", "all")
                else set().union(*per_strategy.values()))
        if key not in keys and (condition.target in ("any", "all")
                                or condition.target in per_strategy):
            waves = sorted(k for k in keys if k.startswith("wave:") or k == "completion")
            problems.append(f"--fail-if {text!r}: no milestone {key!r}{suggest(key, keys)} "
                            f"(keys as in summary.json's milestones: nodes like "
                            f"'arrival:<shipment>', 'removed:<unit>', 'accepted:<unit>'; "
                            f"rollups: {', '.join(waves)})")
    if condition.date and scenario.start_date is None:
        problems.append(f"--fail-if {text!r}: compares with the date {condition.date}, but the "
                        "scenario sets no start_date, so its days have no calendar dates; set "
                        "start_date in the scenario or compare in days (drop '.date', give a "
                        "number of days)")
    return problems


def column_words(column: str, currency: str = "", milestone_name: str = "") -> str:
    """The column in words: 'trough depth', 'total cost (cost_total)', 'milestone "shipment
    S1 arrives" (arrival:S1)'."""
    kind = kind_of(column)
    if kind == MILESTONE:
        key = column[len(MILESTONE_PREFIX):]
        name = milestone_name or key
        return f"milestone '{name}'" + (f" ({key})" if name != key else "")
    if kind == COST:
        return f"{label(column)} cost ({column}{', ' + currency if currency else ''})"
    if kind == JOB:
        return f"{label(column)} ({column})"
    return label(column)


def value_unit(column: str, currency: str = "") -> str:
    """The unit a value of the column is given in: ' days', ' H100-eq', ' USD', ''."""
    kind = kind_of(column)
    if kind == MILESTONE:
        return " (day)"
    if kind == COST:
        return f" {currency}" if currency else ""
    shown = unit(column)
    return f" {shown}" if shown else ""
