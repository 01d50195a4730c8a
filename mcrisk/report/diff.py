"""Night-over-night comparison: what changed in the scenario file, and which metric changes
are beyond Monte Carlo noise and large enough to matter.

Significance, per strategy, metric and statistic (mean, P50, P90, P99; probability for power):

* paired, when both nights used the same seed and sample count and both folders still hold
  metrics.parquet, so scenario i drew the same uniforms both nights (common random numbers;
  draws keyed by name, so inputs that did not change keep their values). Quantiles: an exact
  McNemar test at the pooled quantile q of both nights. With x = last night's values and
  y = tonight's, b = #(x below q, y above q) and c = #(x above q, y below q); under "no
  change" b ~ Binomial(b + c, 1/2). Ties at q matter for metrics with atoms (a trough depth of
  exactly 0 or 2,048), so "above" is tested both as > q and as >= q, Bonferroni-corrected.
  Beyond noise when p < ALPHA, the quantile itself moved, and the crossings go the way it
  moved (mass shifting behind an atom, with the quantile staying put, is not a change of that
  quantile). Mean: a one-sample t-test of the per-scenario differences y - x. Power: McNemar.
* unpaired otherwise: the two nights' distribution-free 95% CIs (binomial order statistics,
  as summary.json's p90_ci) do not overlap; Welch's t-test for the mean; Fisher's exact test
  for the power probability. Each night's intervals are computed from its metrics.parquet or,
  where --keep-large deleted that, read from its intervals.json (night_intervals); a night
  with neither has only summary.json's P90 interval and power probability to be judged by.

A change is *reported* (diff.md's list, the report, alerts on .delta conditions) only when it
is beyond noise AND material: |new - old| >= max(relative x max(|old|, |new|), the metric's
floor) (Materiality; default 1% and one unit of the metric). Reported changes are ordered by
relative size, |new - old| / max(|old|, |new|), largest first.

A night is read with read_night, which checks what the comparison relies on and raises
NightUnreadable (naming the file and what is wrong) for a folder that is damaged, so that the
nightly can say so and compare with an earlier night instead. A night whose metrics.parquet is
missing (deleted by --keep-large) is not damaged: it is compared unpaired.
"""
from __future__ import annotations

import json
import math
import sys
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from scipy import stats

from ..analysis.paired import mcnemar as _mcnemar
from ..analysis.paired import paired_quantile_test
from ..definitions import METRICS
from .text import md_code, md_text, visible

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

ALPHA = 0.01
COMPARED_STATS = ("mean", "p50", "p90", "p99")
_LEVELS = {"p50": 0.5, "p90": 0.9, "p99": 0.99}
_ID_KEYS = ("id", "name", "units")
INTERVALS_FILE = "intervals.json"
INTERVALS_SCHEMA = 1

# Materiality: the smallest change worth reporting. Relative to the larger of the two values,
# with a floor of one unit of the metric (a thousandth for the power probability), so that a
# metric near 0 does not report every fraction of a unit.
DEFAULT_RELATIVE = 0.01
DEFAULT_FLOORS = {"trough_depth": 1.0, "trough_days": 1.0, "shortfall_gpu_days": 1.0,
                  "homeless_days": 1.0, "completion_day": 1.0, "power_violation": 0.001}
UNITS = {"trough_depth": "H100-eq", "trough_days": "days", "shortfall_gpu_days": "H100-eq x days",
         "homeless_days": "days", "completion_day": "days", "power_violation": ""}


@dataclass(frozen=True)
class Materiality:
    """A change is material when |new - old| >= max(relative x max(|old|, |new|), floor)."""

    relative: float = DEFAULT_RELATIVE
    floors: tuple[tuple[str, float], ...] = tuple(DEFAULT_FLOORS.items())

    def floor(self, metric: str) -> float:
        return dict(self.floors).get(metric, 0.0)

    def threshold(self, metric: str, old: float, new: float) -> float:
        scale = max(abs(old), abs(new))
        return max(self.relative * scale, self.floor(metric))

    def is_material(self, metric: str, old: float, new: float) -> bool | None:
        """None when a value is missing (not a number), so that nothing can be said."""
        if not (math.isfinite(old) and math.isfinite(new)):
            return None
        delta = abs(new - old)
        return delta > 0 and delta >= self.threshold(metric, old, new)

    def describe(self) -> str:
        floors = ", ".join(f"{metric} {value:g}{' ' + _unit(metric, value) if UNITS.get(metric) else ''}"
                           for metric, value in self.floors)
        relative = (f"at least {100 * self.relative:g}% of the larger of the two nights' "
                    "values and ") if self.relative > 0 else ""
        return f"material: {relative}at least the metric's floor ({floors})"


def _unit(metric: str, value: float) -> str:
    unit = UNITS[metric]
    return unit[:-1] if value == 1 and unit.endswith("days") else unit


def parse_materiality(specs) -> Materiality:
    """--materiality values: `2%` (the relative part) and `METRIC=AMOUNT` (that metric's floor,
    in its unit), repeated or comma-separated; what is not given keeps its default. ValueError
    naming every bad item."""
    relative, floors, bad = DEFAULT_RELATIVE, dict(DEFAULT_FLOORS), []
    for spec in specs:
        for item in (part.strip() for part in str(spec).split(",")):
            if not item:
                continue
            try:
                if item.endswith("%"):
                    relative = _amount(item[:-1]) / 100.0
                elif "=" in item:
                    metric, _, amount = (x.strip() for x in item.partition("="))
                    if metric not in floors:
                        raise ValueError(f"unknown metric {metric!r} (metrics: "
                                         f"{', '.join(DEFAULT_FLOORS)})")
                    floors[metric] = _amount(amount)
                else:
                    raise ValueError("write a relative amount with %, e.g. 2%, or an absolute "
                                     "one with its metric, e.g. trough_days=2")
            except ValueError as error:
                bad.append(f"{visible(item)!r}: {error}")
    if bad:
        raise ValueError("; ".join(bad))
    return Materiality(relative, tuple(floors.items()))


def _amount(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{visible(text)!r} is not a number") from None
    if not (math.isfinite(value) and value >= 0):
        raise ValueError(f"must be a number >= 0, got {visible(text)}")
    return value


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
    stat: str                  # mean | p50 | p90 | p99 | probability
    old: float
    new: float
    significant: bool | None   # beyond Monte Carlo noise; None: not testable
    method: str                # how significance was judged, in words
    p_value: float | None = None
    material: bool | None = True     # at least the materiality threshold; None: a value missing
    threshold: float = 0.0           # that threshold, in the metric's unit

    @property
    def delta(self) -> float:
        return self.new - self.old

    @property
    def relative(self) -> float:
        """|new - old| / max(|old|, |new|): 0 for no change, 1 for a change from 0, NaN when a
        value is missing."""
        scale = max(abs(self.old), abs(self.new))
        return 0.0 if scale == 0 else abs(self.delta) / scale

    @property
    def reported(self) -> bool:
        """Beyond noise and material: a change the diff reports."""
        return bool(self.significant) and bool(self.material)

    def why_not_reported(self) -> str:
        """In words, why this change is not reported ("" when it is)."""
        if self.reported:
            return ""
        if self.material is None:
            return "not computable (a value is missing)"
        if self.delta == 0:
            return "unchanged"
        if self.significant is None:
            return f"not testable against noise ({self.method})"
        if not self.significant:
            return f"within Monte Carlo noise ({self.method})"
        return (f"beyond noise but below the materiality threshold "
                f"(|change| {abs(self.delta):,.4g} < {self.threshold:,.4g})")


@dataclass(frozen=True)
class NightDiff:
    current: str
    previous: str
    paired: bool
    pairing_note: str
    same_file: bool
    input_changes: list[InputChange]
    changes: list[MetricChange]
    deltas: dict = field(default_factory=dict)   # (strategy, metric, stat) -> raw delta, all stats
    added_strategies: list[str] = field(default_factory=list)
    removed_strategies: list[str] = field(default_factory=list)
    skipped: tuple[str, ...] = ()                # later nights not compared with, and why
    materiality: Materiality = Materiality()
    run_changes: list[InputChange] = field(default_factory=list)   # seed, samples, risks

    def delta(self, strategy: str, metric: str, stat: str) -> float | None:
        """The raw change of a statistic, noise or not (None when not in both nights)."""
        return self.deltas.get((strategy, metric, stat))

    def change(self, strategy: str, metric: str, stat: str) -> MetricChange | None:
        """The judged change of a statistic, or None when it was not compared."""
        for c in self.changes:
            if (c.strategy, c.metric, c.stat) == (strategy, metric, stat):
                return c
        return None

    @property
    def significant(self) -> list[MetricChange]:
        """Changes beyond noise, material or not, in the order compared."""
        return [c for c in self.changes if c.significant]

    @property
    def reported(self) -> list[MetricChange]:
        """Changes beyond noise and material, largest relative change first."""
        return sorted((c for c in self.changes if c.reported), key=lambda c: -c.relative)

    @property
    def immaterial(self) -> list[MetricChange]:
        """Changes beyond noise but below the materiality threshold."""
        return [c for c in self.changes if c.significant and c.material is False]


# -- reading a night ---------------------------------------------------------------------------

class NightUnreadable(Exception):
    """A run folder that cannot be compared with: which file, and what is wrong with it."""


@dataclass(frozen=True)
class Night:
    """What a comparison needs of one run folder, read and checked."""

    run_id: str
    summary: dict                                  # summary.json
    scenario_keys: dict                            # scenario.toml, flattened (scenario_keys)
    per_scenario: dict | None                      # metrics.parquet (load_per_scenario); None
                                                   # when the folder has none (--keep-large)
    intervals: dict | None = None                  # night_intervals, when per_scenario is None
    intervals_source: str = ""                     # where those came from, in words


# What a damaged file can raise while it is read: I/O, JSON, TOML, UTF-8 and Parquet errors
# (all OSError or ValueError), and the lookups of a document of the wrong shape.
_READ_ERRORS = (OSError, ValueError, KeyError, TypeError, IndexError, RecursionError,
                pa.ArrowException)


def read_night(run_id: str, folder: Path) -> Night:
    """A run folder's summary.json, scenario.toml and metrics.parquet, checked.

    NightUnreadable when one is missing, cannot be parsed, or does not hold what mcrisk
    writes there (the fields and strategies the comparison uses). A metrics.parquet that is
    not there at all (--keep-large deletes it from older nights) is not an error: the night
    is then compared unpaired, with the intervals of its intervals.json (or, lacking that,
    the P90 intervals and power probabilities of its summary.json).
    """
    summary = _read(folder / "summary.json", _load_summary)
    keys = _read(folder / "scenario.toml", lambda path: scenario_keys(path.read_text("utf-8")))
    parquet = folder / "metrics.parquet"
    if not parquet.exists() and not parquet.is_symlink():
        intervals, source = _stored_intervals(folder / INTERVALS_FILE, summary)
        return Night(run_id, summary, keys, None, intervals, source)
    per_scenario = _read(parquet, _load_metrics)
    missing = [name for name in summary["strategies"] if name not in per_scenario]
    if missing:
        raise NightUnreadable(f"{folder / 'metrics.parquet'}: no rows for strategy "
                              f"{visible(missing[0])!r}, which summary.json lists")
    return Night(run_id, summary, keys, per_scenario)


def read_summary(folder: Path) -> dict:
    """A run folder's summary.json, checked as read_night checks it (NightUnreadable)."""
    return _read(folder / "summary.json", _load_summary)


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
    """Distribution-free CI of the p-quantile (binomial order statistics); an end that does
    not exist (too few values) is NaN."""
    if values.min() == values.max():
        return (float(values[0]), float(values[0]))
    test = stats.quantile_test(values, q=float(np.quantile(values, p)), p=p)
    low, high = test.confidence_interval(confidence_level=confidence)
    return (float(low), float(high))


# -- each night's intervals, for unpaired comparisons ------------------------------------------

def _finite(value: float) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


def metric_intervals(values: np.ndarray) -> dict:
    """What an unpaired comparison needs of one metric's values: n, mean, standard deviation
    (ddof 1) and the 95% interval of P50, P90 and P99 (null where it does not exist)."""
    values = np.asarray(values, dtype=np.float64)
    n = int(values.size)
    with np.errstate(over="ignore", invalid="ignore"):
        out = {"n": n, "mean": _finite(np.mean(values)) if n else None,
               "std": _finite(np.std(values, ddof=1)) if n > 1 else None}
    for stat, level in _LEVELS.items():
        ci = quantile_ci(values, level) if n else (math.nan, math.nan)
        out[f"{stat}_ci"] = list(ci) if all(math.isfinite(end) for end in ci) else None
    return out


def night_intervals(per_strategy: dict[str, np.ndarray]) -> dict:
    """{strategy: {metric: metric_intervals, power_violation: {n, count}}} from each
    strategy's values[scenario, metric] (metric in METRICS order)."""
    out = {}
    for name, values in per_strategy.items():
        per = {metric: metric_intervals(values[:, k]) for k, metric in enumerate(METRICS)
               if metric != "power_violation"}
        power = values[:, METRICS.index("power_violation")]
        per["power_violation"] = {"n": int(power.size), "count": int(np.sum(power > 0.5))}
        out[name] = per
    return out


def intervals_document(metrics: np.ndarray, strategy_names) -> dict:
    """intervals.json of a run: night_intervals of metrics[scenario, strategy, metric].

    Written by every nightly run (a few kB), so that a night whose metrics.parquet has been
    deleted can still be compared with, unpaired, on every statistic."""
    return {"schema": INTERVALS_SCHEMA, "samples": int(metrics.shape[0]),
            "strategies": night_intervals({name: metrics[:, s, :]
                                           for s, name in enumerate(strategy_names)})}


def _intervals_from_summary(summary: dict) -> dict:
    """What summary.json alone offers: the P90 intervals and the power probabilities."""
    n = summary["samples"]
    out = {}
    for name, metrics in summary["strategies"].items():
        per = {}
        for metric in METRICS:
            found = metrics[metric]
            if metric == "power_violation":
                probability = found.get("probability")
                per[metric] = {"n": n, "count": None if not _is_number(probability)
                               else int(round(probability * n))}
                continue
            ci = found.get("p90_ci")
            ok = isinstance(ci, list) and len(ci) == 2 and all(_is_number(e) for e in ci)
            per[metric] = {"n": n, "mean": None, "std": None, "p50_ci": None,
                           "p90_ci": ci if ok else None, "p99_ci": None}
        out[name] = per
    return out


def _interval_ok(value) -> bool:
    return value is None or (isinstance(value, list) and len(value) == 2
                             and all(_is_number(e) and math.isfinite(e) for e in value))


def _intervals_problem(document, summary: dict) -> str | None:
    """What in an intervals.json does not hold what mcrisk writes there, or None."""
    if not isinstance(document, dict) or document.get("schema") != INTERVALS_SCHEMA:
        return f"not an intervals document of schema {INTERVALS_SCHEMA}"
    strategies = document.get("strategies")
    if not isinstance(strategies, dict):
        return "strategies is missing"
    for name in summary["strategies"]:
        per = strategies.get(name)
        if not isinstance(per, dict):
            return f"no intervals for strategy {visible(name)!r}"
        for metric in METRICS:
            found = per.get(metric)
            if not isinstance(found, dict) or not _is_number(found.get("n")):
                return f"strategies.{visible(name)}.{metric} is missing"
            if metric == "power_violation":
                if not _is_number(found.get("count")):
                    return f"strategies.{visible(name)}.{metric}.count is missing"
                continue
            if not all(found.get(k) is None or _is_number(found.get(k)) for k in ("mean", "std")) \
                    or not all(_interval_ok(found.get(f"{s}_ci")) for s in _LEVELS):
                return f"strategies.{visible(name)}.{metric} is not a set of intervals"
    return None


def _stored_intervals(path: Path, summary: dict) -> tuple[dict, str]:
    """(intervals, where from) of a night without metrics.parquet: its intervals.json when
    that is readable and complete, else what its summary.json holds."""
    if path.is_file():
        try:
            document = json.loads(path.read_text("utf-8"))
            problem = _intervals_problem(document, summary)
        except _READ_ERRORS as error:
            problem = f"cannot be read ({type(error).__name__})"
        if problem is None:
            return document["strategies"], f"its intervals from {INTERVALS_FILE}"
        why = f"its {INTERVALS_FILE} is unusable ({problem})"
    else:
        why = f"it has no {INTERVALS_FILE}"
    return _intervals_from_summary(summary), (
        f"{why}: only the P90s and the power probability can be judged, from its summary.json")


def _p(value: float) -> str:
    return "p<1e-300" if value < 1e-300 else f"p={value:.2g}"


def _judge_paired(x: np.ndarray, y: np.ndarray, stat: str):
    """(significant, method, p_value) of one statistic, scenario i of both nights paired."""
    if stat == "probability":
        xs, ys = x > 0.5, y > 0.5
        p = _mcnemar(int(np.sum(~xs & ys)), int(np.sum(xs & ~ys)))
        return p < ALPHA, f"paired McNemar {_p(p)}", p
    if stat == "mean":
        d = y - x
        if not np.any(d):
            return False, "paired: no scenario changed", 1.0
        if d.size < 2 or np.ptp(d) <= 1e-9 * max(1.0, float(np.max(np.abs(d)))):
            # the same shift in every scenario (to float rounding): no noise to test against
            return True, f"paired: every scenario moved by {_signed(float(np.mean(d)))}", 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # nearly constant differences
            p = float(stats.ttest_1samp(d, 0.0).pvalue)
        return p < ALPHA, f"paired t-test {_p(p)}", p
    level = _LEVELS[stat]
    # A quantile that did not move did not change, whatever happened around it (atoms).
    moved = float(np.sign(np.quantile(y, level) - np.quantile(x, level)))
    p, direction = paired_quantile_test(x, y, level)
    if moved == 0 or direction != moved:
        why = (", quantile unchanged" if moved == 0 else
               ", as many scenarios cross it each way" if direction == 0 else
               ", direction disagrees")
        return False, f"paired test {_p(p)}{why}", p
    return p < ALPHA, f"paired test {_p(p)}", p


def _judge_unpaired(a: dict, b: dict, stat: str):
    """(significant, method, p_value) of one statistic from each night's intervals (a: last
    night's, b: tonight's, as night_intervals); significant is None when one night lacks
    what the test needs."""
    if stat == "probability":
        if a.get("count") is None or b.get("count") is None:
            return None, "no power probability to test", None
        table = [[a["count"], a["n"] - a["count"]], [b["count"], b["n"] - b["count"]]]
        p = float(stats.fisher_exact(table).pvalue)
        return p < ALPHA, f"Fisher exact {_p(p)}", p
    if stat == "mean":
        for night, stats_ in (("last night", a), ("tonight", b)):
            if stats_.get("mean") is None or stats_.get("std") is None:
                return None, f"no mean and spread of {night} to test with", None
        if a["std"] == 0 and b["std"] == 0:
            apart = a["mean"] != b["mean"]
            return apart, "both nights constant", 0.0 if apart else 1.0
        p = float(stats.ttest_ind_from_stats(a["mean"], a["std"], a["n"], b["mean"], b["std"],
                                             b["n"], equal_var=False).pvalue)
        if not math.isfinite(p):
            return None, "Welch t-test not computable", None
        return p < ALPHA, f"Welch t-test {_p(p)}", p
    ci_a, ci_b = a.get(f"{stat}_ci"), b.get(f"{stat}_ci")
    if ci_a is None or ci_b is None:
        night = "last night" if ci_a is None else "tonight"
        return None, f"no 95% interval of {night}'s {stat.upper()}", None
    apart = ci_a[1] < ci_b[0] or ci_b[1] < ci_a[0]
    return apart, (f"95% CIs [{ci_a[0]:,.4g}, {ci_a[1]:,.4g}] vs [{ci_b[0]:,.4g}, {ci_b[1]:,.4g}]"
                   + (" apart" if apart else " overlap")), None


def _pairing(previous: Night, current: Night) -> tuple[bool, str]:
    prev_summary, cur_summary = previous.summary, current.summary
    same_seed = prev_summary.get("seed") == cur_summary.get("seed")
    same_n = prev_summary.get("samples") == cur_summary.get("samples")
    unpaired_by = ("judged by non-overlapping 95% CIs (quantiles), Welch's t-test (means) and "
                   "Fisher's exact test (power)")
    if same_seed and same_n and previous.per_scenario is not None:
        return True, ("paired: same seed and sample count, so each scenario index drew the "
                      "same random numbers both nights")
    why = []
    if not same_seed:
        why.append(f"seed {prev_summary.get('seed')} -> {cur_summary.get('seed')}")
    if not same_n:
        why.append(f"samples {prev_summary.get('samples'):,} -> {cur_summary.get('samples'):,}")
    if previous.per_scenario is None:
        why.append(f"{previous.run_id} has no metrics.parquet (--keep-large deletes it from "
                   f"older nights), so scenarios cannot be paired; {previous.intervals_source}")
    return False, "unpaired (" + "; ".join(visible(w) for w in why) + "): " + unpaired_by


def run_settings(summary: dict) -> dict:
    """The settings of a run that choose its worlds, flattened like scenario_keys: seed,
    samples, and the risk register as run (summary.json's `risks`)."""
    out = {key: summary[key] for key in ("seed", "samples") if key in summary}
    if isinstance(summary.get("risks"), dict):
        _flatten(summary["risks"], "risks", out)
    return out


def _value(metric_stats: dict, stat: str) -> float:
    """A statistic as a float; NaN where summary.json holds null (it could not be computed)."""
    value = metric_stats.get(stat)
    return float(value) if _is_number(value) else math.nan


def _values(night: Night) -> dict:
    """{strategy: values[scenario, metric]} of a night with per-scenario values."""
    return {name: values for name, (_, values) in night.per_scenario.items()}


def compare_nights(current: Night, previous: Night,
                   materiality: Materiality = Materiality()) -> NightDiff:
    """Compare two nights read with read_night: inputs, and every statistic's change, judged
    against Monte Carlo noise and the materiality threshold. `current` must have
    per-scenario values (tonight's metrics.parquet)."""
    cur_summary, prev_summary = current.summary, previous.summary
    paired, note = _pairing(previous, current)
    common = [n for n in cur_summary["strategies"] if n in prev_summary["strategies"]]
    intervals: dict = {}

    def unpaired(name: str) -> tuple[dict, dict]:
        if not intervals:           # computed once, and only when a comparison needs them
            intervals["prev"] = (previous.intervals if previous.per_scenario is None
                                 else night_intervals(_values(previous)))
            intervals["cur"] = night_intervals(_values(current))
        return intervals["prev"][name], intervals["cur"][name]

    changes, deltas = [], {}
    for name in common:
        (yi, y) = current.per_scenario[name]
        pair = paired and previous.per_scenario[name][0].shape == yi.shape and bool(
            np.array_equal(previous.per_scenario[name][0], yi))
        for k, metric in enumerate(METRICS):
            old, new = prev_summary["strategies"][name][metric], cur_summary["strategies"][name][metric]
            for stat, value in new.items():
                if _is_number(value) and _is_number(old.get(stat)):
                    deltas[(name, metric, stat)] = float(value) - float(old[stat])
            tested = ("probability",) if metric == "power_violation" else COMPARED_STATS
            for stat in tested:
                if pair:
                    significant, method, p = _judge_paired(previous.per_scenario[name][1][:, k],
                                                           y[:, k], stat)
                else:
                    a, b = unpaired(name)
                    significant, method, p = _judge_unpaired(a[metric], b[metric], stat)
                before, after = _value(old, stat), _value(new, stat)
                material = materiality.is_material(metric, before, after)
                threshold = (materiality.threshold(metric, before, after)
                             if material is not None else math.nan)
                changes.append(MetricChange(name, metric, stat, before, after,
                                            None if significant is None else bool(significant),
                                            method, p, material, threshold))
    return NightDiff(
        current=current.run_id, previous=previous.run_id, paired=paired, pairing_note=note,
        same_file=cur_summary.get("scenario_sha256") == prev_summary.get("scenario_sha256"),
        input_changes=key_changes(previous.scenario_keys, current.scenario_keys),
        changes=changes, deltas=deltas,
        added_strategies=[n for n in cur_summary["strategies"] if n not in prev_summary["strategies"]],
        removed_strategies=[n for n in prev_summary["strategies"] if n not in cur_summary["strategies"]],
        materiality=materiality,
        run_changes=key_changes(run_settings(prev_summary), run_settings(cur_summary)))


def _num(value: float) -> str:
    if value != value:
        return "n/a"
    if math.isinf(value):
        return str(value)
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.2f}".rstrip("0").rstrip(".")


def _signed(value: float) -> str:
    if value != value:
        return "n/a"
    text = _num(abs(value))
    return ("+" if value > 0 else "−" if value < 0 else "±") + text


def change_line(c: MetricChange, escape=md_text) -> str:
    """One reported change in words: strategy, metric, statistic, old -> new, change, how
    judged (user strings through `escape`)."""
    return (f"{escape(c.strategy)} {c.metric} {c.stat.upper()}: {_num(c.old)} -> {_num(c.new)} "
            f"({_signed(c.delta)}, {percent_change(c)}; {escape(c.method)})")


def percent_change(c: MetricChange) -> str:
    """The change as a percentage of last night's value ("from 0" when that was 0)."""
    if c.old == 0:
        return "from 0"
    text = f"{100 * c.delta / abs(c.old):+.3g}%"
    return text.replace("-", "−", 1)          # the minus sign _signed writes


def input_change_line(change: InputChange, code=md_code, escape=md_text) -> str:
    """One changed scenario input: `changed KEY: old -> new`, `added KEY = v`, `removed KEY
    (was v)`; the key through `code`, values through `escape`."""
    if change.kind == "changed":
        return (f"changed {code(change.key)}: {escape(render_value(change.old))} -> "
                f"{escape(render_value(change.new))}")
    if change.kind == "added":
        return f"added {code(change.key)} = {escape(render_value(change.new))}"
    return f"removed {code(change.key)} (was {escape(render_value(change.old))})"


def judged_by(diff: NightDiff) -> str:
    """How 'beyond noise' and 'material' were decided, in one sentence."""
    test = (f"p < {ALPHA}" if diff.paired else
            f"non-overlapping 95% CIs, or p < {ALPHA} for means and the power probability")
    return f"Beyond noise: {test}. Reported when beyond noise and {diff.materiality.describe()}."


def diff_markdown(diff: NightDiff) -> str:
    """diff.md: inputs that changed, reported changes (beyond noise and material, largest
    first), then every compared statistic with its verdict.

    Run ids, keys, values and strategy names come from scenario files and the history: each
    goes through md_text or md_code, so that it renders literally.
    """
    lines = [f"# Night over night: {md_text(diff.current)} vs {md_text(diff.previous)}", "",
             f"Comparison: {md_text(diff.pairing_note)}. {md_text(judged_by(diff))}", ""]
    if diff.skipped:
        lines += ["Later runs that could not be compared with:", "",
                  *(f"- {md_text(note)}" for note in diff.skipped), ""]
    lines += ["## Scenario inputs that changed", ""]
    if diff.same_file:
        lines.append("None: the scenario file is byte-for-byte the same (same sha256).")
    elif not diff.input_changes:
        lines.append("No keys changed (the file differs only in comments or layout).")
    lines += [f"- {input_change_line(change)}" for change in diff.input_changes]
    for label, names in (("added", diff.added_strategies), ("removed", diff.removed_strategies)):
        if names:
            lines.append(f"- strategies {label}: {', '.join(md_text(n) for n in names)}")
    if diff.run_changes:
        lines += ["", "## Run settings that changed", ""]
        lines += [f"- {input_change_line(change)}" for change in diff.run_changes]
    reported, immaterial = diff.reported, diff.immaterial
    lines += ["", "## Changes beyond Monte Carlo noise (largest first)", ""]
    if not reported:
        lines.append("None.")
    lines += [f"- {change_line(c)}" for c in reported]
    if immaterial:
        lines += ["", f"{len(immaterial)} more beyond noise but below the materiality "
                  "threshold, not reported as changes (see the table)."]
    lines += ["", "## All compared statistics", "",
              "| strategy | metric | stat | last night | tonight | change | reported | how judged |",
              "|---|---|---|---:|---:|---:|---|---|"]
    for c in diff.changes:
        verdict = "**yes**" if c.reported else f"no: {md_text(c.why_not_reported().split(' (')[0])}"
        lines.append(f"| {md_text(c.strategy)} | {c.metric} | {c.stat} | {_num(c.old)} | "
                     f"{_num(c.new)} | {_signed(c.delta)} | {verdict} | {md_text(c.method)} |")
    return "\n".join(lines) + "\n"
