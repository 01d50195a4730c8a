"""Reading one night of a nightly history for a comparison: its summary.json, scenario.toml
and metrics.parquet (or, where --keep-large deleted that, its intervals.json), checked.

A night is read with read_night, which checks what the comparison relies on and raises
NightUnreadable (naming the file and what is wrong) for a folder that is damaged, so that the
nightly can say so and compare with an earlier night instead. A night whose metrics.parquet is
missing (deleted by --keep-large) is not damaged: it is compared unpaired.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from ...core.definitions import METRICS
from ...results.jobs import HOMELESS_PREFIX, UNSERVABLE
from .input_changes import scenario_keys
from .intervals import INTERVALS_FILE, intervals_from_summary, intervals_problem, is_number
from .metric_changes import COMPARED_STATS
from ..text import visible


class NightUnreadable(Exception):
    """A run folder that cannot be compared with: which file, and what is wrong with it."""


@dataclass(frozen=True)
class Night:
    """What a comparison needs of one run folder, read and checked."""

    run_id: str
    summary: dict                                  # summary.json
    scenario_keys: dict                            # scenario.toml, flattened (scenario_keys)
    per_scenario: dict | None                      # metrics.parquet (load_per_scenario); None
                                                   # when the folder has none (--keep-large,
                                                   # or a run over the row budget)
    intervals: dict | None = None                  # night_intervals, when per_scenario is None
    intervals_source: str = ""                     # where those came from, in words
    extra_columns: tuple[str, ...] = ()            # cost and job columns after METRICS in
                                                   # per_scenario's values (extra_columns)


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
        any_name = next(iter(intervals), None)    # its cost and job columns, as intervals.json has them
        extras = extra_columns(intervals[any_name]) if any_name is not None else ()
        return Night(run_id, summary, keys, None, intervals, source, extra_columns=extras)
    per_scenario = _read(parquet, _load_metrics)
    extras = _read(parquet, lambda path: extra_columns(pq.read_schema(path).names))
    missing = [name for name in summary["strategies"] if name not in per_scenario]
    if missing:
        raise NightUnreadable(f"{folder / 'metrics.parquet'}: no rows for strategy "
                              f"{visible(missing[0])!r}, which summary.json lists")
    return Night(run_id, summary, keys, per_scenario, extra_columns=extras)


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
                    is_number(found.get(s)) or found.get(s) is None for s in tested):
                return (f"strategies.{visible(name)}.{metric} is missing or lacks "
                        f"{'/'.join(tested)}")
    return None


def _load_metrics(path: Path) -> dict:
    per_scenario = load_per_scenario(path)
    for name, (_, values) in per_scenario.items():
        if not isinstance(name, str) or np.isnan(values).any():
            raise NightUnreadable(f"{path}: strategy {visible(name)!r} has missing values")
    return per_scenario


def extra_columns(names) -> tuple[str, ...]:
    """The cost columns (cost_*) and job columns (unservable_gpu_days, homeless_days.<id>) of
    a metrics.parquet's column names, in file order: compared like the metrics."""
    return tuple(n for n in names if n.startswith("cost_") or n == UNSERVABLE
                 or n.startswith(HOMELESS_PREFIX))


def load_per_scenario(path: str | Path) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """{strategy: (scenario[n] int64, values[n, column] float64)} from a metrics.parquet: the
    METRICS, then its extra_columns (cost and job columns) in file order."""
    extras = extra_columns(pq.read_schema(path).names)
    table = pq.read_table(path, columns=["scenario", "strategy", *METRICS, *extras])
    out = {}
    for name in pc.unique(table["strategy"]).to_pylist():
        rows = table.filter(pc.equal(table["strategy"], name))
        scenario = rows["scenario"].to_numpy()
        values = np.stack([rows[m].to_numpy().astype(np.float64) for m in (*METRICS, *extras)],
                          axis=1)
        order = np.argsort(scenario, kind="stable")
        out[name] = (scenario[order], values[order])
    return out


def _stored_intervals(path: Path, summary: dict) -> tuple[dict, str]:
    """(intervals, where from) of a night without metrics.parquet: its intervals.json when
    that is readable and complete, else what its summary.json holds."""
    if path.is_file():
        try:
            document = json.loads(path.read_text("utf-8"))
            problem = intervals_problem(document, summary)
        except _READ_ERRORS as error:
            problem = f"cannot be read ({type(error).__name__})"
        if problem is None:
            return document["strategies"], f"its intervals from {INTERVALS_FILE}"
        why = f"its {INTERVALS_FILE} is unusable ({problem})"
    else:
        why = f"it has no {INTERVALS_FILE}"
    return intervals_from_summary(summary), (
        f"{why}: only the P90s and the power probability can be judged, from its summary.json")

