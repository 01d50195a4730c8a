"""Night-over-night comparison: what changed in the scenario file, and which metric changes
are beyond Monte Carlo noise and large enough to matter.

A change is *reported* (diff.md's list, the report, alerts on .delta conditions) only when it
is beyond Monte Carlo noise AND material. Reported changes are ordered by relative size,
|new - old| / max(|old|, |new|), largest first. compare_nights makes the comparison; the
concepts it rests on have a module each, from the bottom up:

    materiality      when a change is large enough to matter (--materiality)
    input_changes    scenario-file keys and run settings that changed
    status_changes   how the status (a migration in flight) changed: as_of, new facts
    metric_changes   MetricChange and NightDiff: what a comparison finds, and ALPHA
    diff_text        the words: a line per change, diff.md
    intervals        each night's intervals for unpaired comparisons (intervals.json)
    night            reading a night's folder, checked (NightUnreadable)
    significance     beyond noise: paired tests on the same worlds, else unpaired

The names the nightly, the report, the CLI and the tests use are imported from here.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import METRICS
from .diff_text import change_line, diff_markdown, input_change_line, judged_by, percent_change
from .input_changes import (InputChange, key_changes, render_value, run_settings, scenario_keys,
                            toml_changes)
from .intervals import (INTERVALS_FILE, INTERVALS_SCHEMA, intervals_document, is_number,
                        metric_intervals, night_intervals)
from .materiality import DEFAULT_FLOORS, DEFAULT_RELATIVE, Materiality, parse_materiality
from .metric_changes import ALPHA, COMPARED_STATS, MetricChange, NightDiff
from .night import Night, NightUnreadable, load_per_scenario, read_night, read_summary
from .significance import judge_paired, judge_unpaired, pairing
from .status_changes import status_change
from .change_log import change_log, run_setting_lines

__all__ = [   # compare_nights, and what the nightly, the report, the CLI and tests take from here
    "ALPHA", "COMPARED_STATS", "DEFAULT_FLOORS", "DEFAULT_RELATIVE", "INTERVALS_FILE",
    "INTERVALS_SCHEMA", "InputChange", "Materiality", "MetricChange", "Night",
    "NightDiff", "NightUnreadable", "change_line", "compare_nights", "diff_markdown",
    "input_change_line", "intervals_document", "judged_by", "key_changes", "load_per_scenario",
    "metric_intervals", "night_intervals", "parse_materiality", "percent_change", "read_night",
    "read_summary", "render_value", "run_settings", "scenario_keys", "toml_changes"]


def _value(metric_stats: dict, stat: str) -> float:
    """A statistic as a float; NaN where summary.json holds null (it could not be computed)."""
    value = metric_stats.get(stat)
    return float(value) if is_number(value) else math.nan


def _values(night: Night) -> dict:
    """{strategy: values[scenario, column]} of a night with per-scenario values."""
    return {name: values for name, (_, values) in night.per_scenario.items()}


def stat_block(summary: dict, strategy: str, column: str) -> dict:
    """A column's statistics in a summary.json: a metric's, a cost column's (`costs`) or a job
    column's (`jobs`); {} where the night has none."""
    per = summary["strategies"].get(strategy, {})
    if column in METRICS:
        return per.get(column) or {}
    for block in ("costs", "jobs"):
        found = (per.get(block) or {}).get(column) if isinstance(per.get(block), dict) else None
        if isinstance(found, dict):
            return found
    return {}


def _compared_columns(current: Night, previous: Night) -> tuple[str, ...]:
    """Tonight's cost and job columns that last night has too (in its metrics.parquet, or its
    summary.json when that is gone): compared like the metrics."""
    prev = set(previous.extra_columns)
    if previous.per_scenario is None:
        any_name = next(iter(previous.summary["strategies"]), None)
        prev = {c for c in current.extra_columns
                if any_name is not None and stat_block(previous.summary, any_name, c)}
    return tuple(c for c in current.extra_columns if c in prev)


def compare_nights(current: Night, previous: Night,
                   materiality: Materiality = Materiality()) -> NightDiff:
    """Compare two nights read with read_night: inputs, and every statistic's change, judged
    against Monte Carlo noise and the materiality threshold. Paired when both nights have
    per-scenario values (metrics.parquet) on the same scenarios; else unpaired, from the
    intervals of a night without them (its intervals.json)."""
    cur_summary, prev_summary = current.summary, previous.summary
    paired, note = pairing(previous, current)
    common = [n for n in cur_summary["strategies"] if n in prev_summary["strategies"]]
    intervals: dict = {}
    extras = _compared_columns(current, previous)
    cur_index = {c: len(METRICS) + j for j, c in enumerate(current.extra_columns)}
    prev_index = {c: len(METRICS) + j for j, c in enumerate(previous.extra_columns)}
    columns = [(k, k, m) for k, m in enumerate(METRICS)] + [
        (prev_index.get(c), cur_index[c], c) for c in extras]

    def unpaired(name: str) -> tuple[dict, dict]:
        if not intervals:           # computed once, and only when a comparison needs them
            intervals["prev"] = (previous.intervals if previous.per_scenario is None
                                 else night_intervals(_values(previous), previous.extra_columns))
            intervals["cur"] = (current.intervals if current.per_scenario is None
                                else night_intervals(_values(current), current.extra_columns))
        return intervals["prev"][name], intervals["cur"][name]

    changes, deltas = [], {}
    for name in common:
        (yi, y) = current.per_scenario[name] if paired else (None, None)
        pair = paired and previous.per_scenario[name][0].shape == yi.shape and bool(
            np.array_equal(previous.per_scenario[name][0], yi))
        for k_prev, k, metric in columns:
            old, new = stat_block(prev_summary, name, metric), stat_block(cur_summary, name, metric)
            for stat, value in new.items():
                if is_number(value) and is_number(old.get(stat)):
                    deltas[(name, metric, stat)] = float(value) - float(old[stat])
            tested = ("probability",) if metric == "power_violation" else COMPARED_STATS
            for stat in tested:
                if pair and k_prev is not None:
                    significant, method, p = judge_paired(
                        previous.per_scenario[name][1][:, k_prev], y[:, k], stat)
                else:
                    a, b = unpaired(name)
                    significant, method, p = judge_unpaired(a.get(metric, {}),
                                                            b.get(metric, {}), stat)
                before, after = _value(old, stat), _value(new, stat)
                material = materiality.is_material(metric, before, after)
                threshold = (materiality.threshold(metric, before, after)
                             if material is not None else math.nan)
                changes.append(MetricChange(name, metric, stat, before, after,
                                            None if significant is None else bool(significant),
                                            method, p, material, threshold))
    run_changes = key_changes(run_settings(prev_summary), run_settings(cur_summary))
    return NightDiff(
        current=current.run_id, previous=previous.run_id, paired=paired, pairing_note=note,
        same_file=cur_summary.get("scenario_sha256") == prev_summary.get("scenario_sha256"),
        input_changes=key_changes(previous.scenario_keys, current.scenario_keys),
        changes=changes, deltas=deltas,
        added_strategies=[n for n in cur_summary["strategies"] if n not in prev_summary["strategies"]],
        removed_strategies=[n for n in prev_summary["strategies"] if n not in cur_summary["strategies"]],
        materiality=materiality,
        run_changes=run_changes,
        run_lines=run_setting_lines(prev_summary, cur_summary, run_changes),
        status_change=status_change(prev_summary, cur_summary),
        change_log=change_log(previous.scenario_keys, current.scenario_keys, prev_summary,
                              cur_summary))

