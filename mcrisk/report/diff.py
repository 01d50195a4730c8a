"""Night-over-night comparison: what changed in the scenario file, and which metric changes
are beyond Monte Carlo noise.

Significance, per strategy, metric and statistic (P50, P90; probability for power):

* paired, when both nights used the same seed and sample count, so scenario i drew the same
  uniforms both nights (common random numbers; draws keyed by name, so inputs that did not
  change keep their values): an exact McNemar test at the pooled quantile q of both nights.
  With x = last night's values and y = tonight's, b = #(x below q, y above q) and
  c = #(x above q, y below q); under "no change" b ~ Binomial(b + c, 1/2). Ties at q matter for
  metrics with atoms (a trough depth of exactly 0 or 2,048), so "above" is tested both as > q
  and as >= q, Bonferroni-corrected. Beyond noise when p < ALPHA, the quantile itself moved,
  and the crossings go the way it moved (mass shifting behind an atom, with the quantile
  staying put, is not a change of that quantile).
* unpaired otherwise: the two nights' distribution-free 95% CIs (binomial order statistics,
  as summary.json's p90_ci) do not overlap; for the power probability, Fisher's exact test.

A night is read with read_night, which checks what the comparison relies on and raises
NightUnreadable (naming the file and what is wrong) for a folder that is damaged, so that the
nightly can say so and compare with an earlier night instead.
"""
from __future__ import annotations

import json
import math
import sys
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from scipy import stats

from ..compile import METRICS
from .text import md_code, md_text, visible

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ALPHA = 0.01
COMPARED_STATS = ("p50", "p90")
_ID_KEYS = ("id", "name", "units")


# -- the scenario file ------------------------------------------------------------------------

@dataclass(frozen=True)
class InputChange:
    key: str                   # a path like shipments[S1].arrival.day
    kind: str                  # "added" | "removed" | "changed"
    old: object = None
    new: object = None


def _element_keys(items: list[dict]) -> list[str]:
    """Labels for an array of tables: its id/name/units when unique, else the index."""
    for key in _ID_KEYS:
        labels = [item.get(key) for item in items]
        if all(isinstance(x, str) for x in labels) and len(set(labels)) == len(labels):
            return labels
    return [str(i) for i in range(len(items))]


def _flatten(value, path: str, out: dict) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else key, out)
    elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        for label, item in zip(_element_keys(value), value):
            _flatten(item, f"{path}[{label}]", out)
    else:
        out[path] = value


def render_value(value) -> str:
    """A TOML value in one short line."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def scenario_keys(text: str) -> dict:
    """A scenario file as {key path: value}, arrays of tables keyed by their id."""
    keys = {}
    _flatten(tomllib.loads(text), "", keys)
    return keys


def toml_changes(old_text: str, new_text: str) -> list[InputChange]:
    """Keys added, removed and changed between two scenario files, in the new file's order."""
    return key_changes(scenario_keys(old_text), scenario_keys(new_text))


def key_changes(old: dict, new: dict) -> list[InputChange]:
    """Keys added, removed and changed between two flattened scenario files (scenario_keys)."""
    changes = []
    for key, value in new.items():
        if key not in old:
            changes.append(InputChange(key, "added", None, value))
        elif old[key] != value:
            changes.append(InputChange(key, "changed", old[key], value))
    changes += [InputChange(key, "removed", value, None) for key, value in old.items()
                if key not in new]
    return changes


# -- the numbers -------------------------------------------------------------------------------

@dataclass(frozen=True)
class MetricChange:
    strategy: str
    metric: str
    stat: str                  # p50 | p90 | probability
    old: float
    new: float
    significant: bool | None   # None: not testable
    method: str                # how significance was judged, in words
    p_value: float | None = None

    @property
    def delta(self) -> float:
        return self.new - self.old


@dataclass(frozen=True)
class NightDiff:
    current: str
    previous: str
    paired: bool
    pairing_note: str
    same_file: bool
    input_changes: list[InputChange]
    changes: list[MetricChange]
    deltas: dict = field(default_factory=dict)   # (strategy, metric, stat) -> delta, all stats
    added_strategies: list[str] = field(default_factory=list)
    removed_strategies: list[str] = field(default_factory=list)
    skipped: tuple[str, ...] = ()                # later nights not compared with, and why

    def delta(self, strategy: str, metric: str, stat: str) -> float | None:
        return self.deltas.get((strategy, metric, stat))

    @property
    def significant(self) -> list[MetricChange]:
        return [c for c in self.changes if c.significant]


# -- reading a night ---------------------------------------------------------------------------

class NightUnreadable(Exception):
    """A run folder that cannot be compared with: which file, and what is wrong with it."""


@dataclass(frozen=True)
class Night:
    """What a comparison needs of one run folder, read and checked."""

    run_id: str
    summary: dict                                  # summary.json
    scenario_keys: dict                            # scenario.toml, flattened (scenario_keys)
    per_scenario: dict                             # metrics.parquet (load_per_scenario)


# What a damaged file can raise while it is read: I/O, JSON, TOML, UTF-8 and Parquet errors
# (all OSError or ValueError), and the lookups of a document of the wrong shape.
_READ_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError,
                pa.ArrowException)


def read_night(run_id: str, folder: Path) -> Night:
    """A run folder's summary.json, scenario.toml and metrics.parquet, checked.

    NightUnreadable when one is missing, cannot be parsed, or does not hold what mcrisk
    writes there (the fields and strategies the comparison uses).
    """
    summary = _read(folder / "summary.json", _load_summary)
    keys = _read(folder / "scenario.toml", lambda path: scenario_keys(path.read_text("utf-8")))
    per_scenario = _read(folder / "metrics.parquet", _load_metrics)
    missing = [name for name in summary["strategies"] if name not in per_scenario]
    if missing:
        raise NightUnreadable(f"{folder / 'metrics.parquet'}: no rows for strategy "
                              f"{visible(missing[0])!r}, which summary.json lists")
    return Night(run_id, summary, keys, per_scenario)


def _read(path: Path, load):
    try:
        if not path.is_file():
            raise NightUnreadable(f"{path}: missing")
        return load(path)
    except _READ_ERRORS as error:
        text = " ".join(str(error).split()) or "no details"
        text = text if len(text) <= 160 else text[:157] + "..."
        raise NightUnreadable(f"{path}: cannot be read ({type(error).__name__}: "
                              f"{visible(text)})") from None


def _is_number(value) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _load_summary(path: Path) -> dict:
    summary = json.loads(path.read_text("utf-8"))
    problem = _summary_problem(summary)
    if problem:
        raise NightUnreadable(f"{path}: {problem}")
    return summary


def _summary_problem(summary) -> str | None:
    """What in a summary.json the comparison cannot use, or None."""
    if not isinstance(summary, dict):
        return "not a JSON object"
    for key, wanted, test in (("seed", "an integer", lambda v: isinstance(v, int)),
                              ("samples", "an integer", lambda v: isinstance(v, int)),
                              ("scenario_sha256", "text", lambda v: isinstance(v, str)),
                              ("strategies", "an object", lambda v: isinstance(v, dict))):
        value = summary.get(key)
        if isinstance(value, bool) or not test(value):
            return f"{key} is {'missing' if key not in summary else 'not ' + wanted}"
    for name, metrics in summary["strategies"].items():
        for metric in METRICS:
            found = metrics.get(metric) if isinstance(metrics, dict) else None
            tested = ("probability",) if metric == "power_violation" else COMPARED_STATS
            if not isinstance(found, dict) or not all(
                    _is_number(found.get(s)) or found.get(s) is None for s in tested):
                return (f"strategies.{visible(name)}.{metric} is missing or lacks "
                        f"{'/'.join(tested)}")
    return None


def _load_metrics(path: Path) -> dict:
    per_scenario = load_per_scenario(path)
    for name, (_, values) in per_scenario.items():
        if not isinstance(name, str) or np.isnan(values).any():
            raise NightUnreadable(f"{path}: strategy {visible(name)!r} has missing values")
    return per_scenario


def load_per_scenario(path: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{strategy: (scenario[n] int64, values[n, metric] float64)} from a metrics.parquet."""
    table = pq.read_table(path, columns=["scenario", "strategy", *METRICS])
    out = {}
    for name in pc.unique(table["strategy"]).to_pylist():
        rows = table.filter(pc.equal(table["strategy"], name))
        scenario = rows["scenario"].to_numpy()
        values = np.stack([rows[m].to_numpy().astype(np.float64) for m in METRICS], axis=1)
        order = np.argsort(scenario, kind="stable")
        out[name] = (scenario[order], values[order])
    return out


def quantile_ci(values: np.ndarray, p: float, confidence: float = 0.95) -> tuple[float, float]:
    """Distribution-free CI of the p-quantile (binomial order statistics)."""
    if values.min() == values.max():
        return (float(values[0]), float(values[0]))
    test = stats.quantile_test(values, q=float(np.quantile(values, p)), p=p)
    low, high = test.confidence_interval(confidence_level=confidence)
    return (float(low), float(high))


def _mcnemar(b: int, c: int) -> float:
    return 1.0 if b + c == 0 else float(stats.binomtest(b, b + c, 0.5).pvalue)


def paired_quantile_test(x: np.ndarray, y: np.ndarray, p: float) -> tuple[float, int]:
    """(p-value, direction) that the p-quantile moved from x to y (paired): see module doc.

    direction is +1 when more pairs cross the pooled quantile upwards than downwards, -1 for
    the reverse, 0 when as many do; the p-value is that of the form (> q or >= q) whose
    direction agrees with the larger imbalance, Bonferroni-corrected for the two forms.
    """
    q = float(np.quantile(np.concatenate([x, y]), p))
    best = (1.0, 0)
    for above_x, above_y in ((x > q, y > q), (x >= q, y >= q)):
        up, down = int(np.sum(~above_x & above_y)), int(np.sum(above_x & ~above_y))
        if up != down:
            p_value = min(1.0, 2.0 * _mcnemar(up, down))
            best = min(best, (p_value, 1 if up > down else -1))
    return best


def _p(value: float) -> str:
    return "p<1e-300" if value < 1e-300 else f"p={value:.2g}"


def _judge(x: np.ndarray, y: np.ndarray, stat: str, paired: bool):
    """(significant, method, p_value) for one statistic."""
    if stat == "probability":
        xs, ys = x > 0.5, y > 0.5
        if paired:
            p = _mcnemar(int(np.sum(~xs & ys)), int(np.sum(xs & ~ys)))
            return p < ALPHA, f"paired McNemar {_p(p)}", p
        table = [[int(xs.sum()), int((~xs).sum())], [int(ys.sum()), int((~ys).sum())]]
        p = float(stats.fisher_exact(table).pvalue)
        return p < ALPHA, f"Fisher exact {_p(p)}", p
    level = {"p50": 0.5, "p90": 0.9}[stat]
    if paired:
        # A quantile that did not move did not change, whatever happened around it (atoms).
        moved = float(np.sign(np.quantile(y, level) - np.quantile(x, level)))
        p, direction = paired_quantile_test(x, y, level)
        if moved == 0 or direction != moved:
            return False, (f"paired test {_p(p)}" + (", quantile unchanged" if moved == 0
                                                       else ", direction disagrees")), p
        return p < ALPHA, f"paired test {_p(p)}", p
    a, b = quantile_ci(x, level), quantile_ci(y, level)
    apart = a[1] < b[0] or b[1] < a[0]
    return apart, (f"95% CIs [{a[0]:,.4g}, {a[1]:,.4g}] vs [{b[0]:,.4g}, {b[1]:,.4g}]"
                   + (" apart" if apart else " overlap")), None


def _pairing(prev_summary: dict, cur_summary: dict) -> tuple[bool, str]:
    same_seed = prev_summary.get("seed") == cur_summary.get("seed")
    same_n = prev_summary.get("samples") == cur_summary.get("samples")
    if same_seed and same_n:
        return True, ("paired: same seed and sample count, so each scenario index drew the "
                      "same random numbers both nights")
    why = []
    if not same_seed:
        why.append(f"seed {prev_summary.get('seed')} -> {cur_summary.get('seed')}")
    if not same_n:
        why.append(f"samples {prev_summary.get('samples'):,} -> {cur_summary.get('samples'):,}")
    return False, "unpaired (" + ", ".join(why) + "): judged by non-overlapping 95% CIs"


def _value(metric_stats: dict, stat: str) -> float:
    """A statistic as a float; NaN where summary.json holds null (it could not be computed)."""
    value = metric_stats.get(stat)
    return float(value) if _is_number(value) else math.nan


def compare_nights(current: Night, previous: Night) -> NightDiff:
    """Compare two nights read with read_night: inputs, and every metric's P50/P90 change."""
    cur_summary, prev_summary = current.summary, previous.summary
    paired, note = _pairing(prev_summary, cur_summary)
    cur, prev = current.per_scenario, previous.per_scenario
    common = [n for n in cur_summary["strategies"] if n in prev_summary["strategies"]]
    changes, deltas = [], {}
    for name in common:
        (xi, x), (yi, y) = prev[name], cur[name]
        pair = paired and xi.shape == yi.shape and bool(np.array_equal(xi, yi))
        for k, metric in enumerate(METRICS):
            old, new = prev_summary["strategies"][name][metric], cur_summary["strategies"][name][metric]
            for stat, value in new.items():
                if _is_number(value) and _is_number(old.get(stat)):
                    deltas[(name, metric, stat)] = float(value) - float(old[stat])
            tested = ("probability",) if metric == "power_violation" else COMPARED_STATS
            for stat in tested:
                significant, method, p = _judge(x[:, k], y[:, k], stat, pair)
                changes.append(MetricChange(name, metric, stat, _value(old, stat),
                                            _value(new, stat), bool(significant), method, p))
    return NightDiff(
        current=current.run_id, previous=previous.run_id, paired=paired, pairing_note=note,
        same_file=cur_summary.get("scenario_sha256") == prev_summary.get("scenario_sha256"),
        input_changes=key_changes(previous.scenario_keys, current.scenario_keys),
        changes=changes, deltas=deltas,
        added_strategies=[n for n in cur_summary["strategies"] if n not in prev_summary["strategies"]],
        removed_strategies=[n for n in prev_summary["strategies"] if n not in cur_summary["strategies"]])


def _num(value: float) -> str:
    if value != value or math.isinf(value):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}".rstrip("0").rstrip(".")


def _signed(value: float) -> str:
    text = _num(abs(value))
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def diff_markdown(diff: NightDiff) -> str:
    """diff.md: inputs that changed, metric changes beyond noise first, then all of them.

    Run ids, keys, values and strategy names come from scenario files and the history: each
    goes through md_text or md_code, so that it renders literally.
    """
    lines = [f"# Night over night: {md_text(diff.current)} vs {md_text(diff.previous)}", "",
             f"Comparison: {diff.pairing_note}. Beyond noise: p < {ALPHA} (paired) or "
             "non-overlapping 95% CIs (unpaired).", ""]
    if diff.skipped:
        lines += ["Later runs that could not be compared with:", "",
                  *(f"- {md_text(note)}" for note in diff.skipped), ""]
    lines += ["## Scenario inputs that changed", ""]
    if diff.same_file:
        lines.append("None: the scenario file is byte-for-byte the same (same sha256).")
    elif not diff.input_changes:
        lines.append("No keys changed (the file differs only in comments or layout).")
    for change in diff.input_changes:
        if change.kind == "changed":
            lines.append(f"- changed {md_code(change.key)}: {md_text(render_value(change.old))} "
                         f"-> {md_text(render_value(change.new))}")
        elif change.kind == "added":
            lines.append(f"- added {md_code(change.key)} = {md_text(render_value(change.new))}")
        else:
            lines.append(f"- removed {md_code(change.key)} (was "
                         f"{md_text(render_value(change.old))})")
    for label, names in (("added", diff.added_strategies), ("removed", diff.removed_strategies)):
        if names:
            lines.append(f"- strategies {label}: {', '.join(md_text(n) for n in names)}")
    lines += ["", "## Changes beyond Monte Carlo noise", ""]
    if not diff.significant:
        lines.append("None.")
    for c in diff.significant:
        lines.append(f"- **{md_text(c.strategy)}** {c.metric} {c.stat.upper()}: {_num(c.old)} -> "
                     f"{_num(c.new)} ({_signed(c.delta)}; {c.method})")
    lines += ["", "## All compared statistics", "",
              "| strategy | metric | stat | last night | tonight | change | beyond noise | how judged |",
              "|---|---|---|---:|---:|---:|---|---|"]
    for c in diff.changes:
        lines.append(f"| {md_text(c.strategy)} | {c.metric} | {c.stat} | {_num(c.old)} | {_num(c.new)} | "
                     f"{_signed(c.delta)} | {'**yes**' if c.significant else 'no'} | {c.method} |")
    return "\n".join(lines) + "\n"
