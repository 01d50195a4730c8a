"""Nightly runs: a dated folder per run in a history folder, an index of the runs that
succeeded, and a comparison with the previous one.

    HISTORY/index.json              {"schema": 1, "runs": [entry, ...]}, oldest first
    HISTORY/2026-12-02T031500Z/     scenario.toml (a copy), summary.json, metrics.parquet,
                                    capacity_bands.parquet, diff.md, alerts.json,
                                    report.html, summary.md
    HISTORY/.partial-<id>/          a run in progress (or one that was killed: safe to delete)

A run is built in .partial-<id>/ (every file written through a temporary name and a rename),
renamed to <id>/ when complete, and only then added to index.json (rewritten atomically under
a lock). A run that fails or is interrupted removes its .partial folder and leaves the index
and every earlier folder as they were; it is never registered.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import fcntl
import hashlib
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from ..errors import McriskError
from ..outputs import write_atomic, write_json
from ..run import RunResult, run_scenario
from ..scenario import load_scenario
from . import write_report
from .alerts import Breach, Condition, check_strategies, evaluate
from .diff import NightDiff, compare_nights, diff_markdown

INDEX_FILE = "index.json"
SCENARIO_COPY = "scenario.toml"
DIFF_FILE = "diff.md"
ALERTS_FILE = "alerts.json"
_PARTIAL = ".partial-"
_LOCK = ".index.lock"


class HistoryError(McriskError):
    """The history folder or its index cannot be used."""


@dataclass(frozen=True)
class NightlyResult:
    run_id: str
    folder: Path
    run: RunResult
    previous: str | None            # id of the run compared with
    diff: NightDiff | None
    breaches: list[Breach]
    notes: list[str]                # conditions skipped, and why
    files: tuple[Path, ...]


def read_index(history: Path) -> dict:
    path = history / INDEX_FILE
    if not path.exists():
        return {"schema": 1, "runs": []}
    try:
        index = json.loads(path.read_text())
        if not isinstance(index.get("runs"), list):
            raise ValueError("no list 'runs'")
    except (ValueError, AttributeError) as error:
        raise HistoryError(f"{path}: not a valid history index ({error}); move it aside to "
                           "start a new history") from None
    return index


def previous_run(history: Path, index: dict, scenario_name: str) -> dict | None:
    """The latest registered run of the same scenario name whose folder is still there."""
    for entry in reversed(index["runs"]):
        if (entry.get("scenario_name") == scenario_name and entry.get("status") == "ok"
                and (history / entry["folder"] / "summary.json").exists()):
            return entry
    return None


def run_id_for(now: _dt.datetime) -> str:
    return now.astimezone(_dt.timezone.utc).strftime("%Y-%m-%dT%H%M%SZ")


def _claim(history: Path, base: str) -> tuple[str, Path]:
    """A run id not taken by a finished or running run, and its .partial folder.

    mkdir is atomic, and a finished run's folder appears (by rename) before its .partial
    folder disappears, so checking the final name again after mkdir rules out races between
    two runs started within the same second.
    """
    for n in range(1, 10_000):
        run_id = base if n == 1 else f"{base}-{n}"
        if (history / run_id).exists():
            continue
        staging = history / f"{_PARTIAL}{run_id}"
        try:
            staging.mkdir()
        except FileExistsError:
            continue
        if (history / run_id).exists():
            staging.rmdir()
            continue
        return run_id, staging
    raise HistoryError(f"{history}: no free run id for {base}")


@contextlib.contextmanager
def _locked(history: Path):
    with open(history / _LOCK, "a+") as handle:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle.fileno(), fcntl.LOCK_UN)


def _register(history: Path, entry: dict) -> None:
    with _locked(history):
        index = read_index(history)
        index["runs"].append(entry)
        write_json(history / INDEX_FILE, index)


def _entry(run_id: str, run: RunResult, previous: str | None, breaches: list[Breach]) -> dict:
    s = run.summary
    return {"id": run_id, "folder": run_id, "status": "ok", "created_utc": s["created_utc"],
            "scenario": s["scenario"], "scenario_name": s["scenario_name"],
            "scenario_sha256": s["scenario_sha256"], "seed": s["seed"], "samples": s["samples"],
            "backend": s["backend"], "mcrisk_version": s["mcrisk_version"],
            "wall_seconds": s["wall_seconds"], "previous": previous, "ranking": s["ranking"],
            "breaches": [str(b) for b in breaches]}


def run_nightly(scenario_path: str, history: str | Path, conditions: list[Condition] = (),
                samples: int | None = None, seed: int | None = None, backend: str = "auto",
                chunk_size: int | None = None,
                progress: Callable[[int, int], None] | None = None,
                now: _dt.datetime | None = None) -> NightlyResult:
    """One nightly run into `history`; compares with the previous run and checks conditions.

    Raises (and registers nothing) on failure; breached conditions are returned, not raised.
    """
    history = Path(history)
    scenario = load_scenario(scenario_path)
    check_strategies(list(conditions), [s.name for s in scenario.strategies])
    history.mkdir(parents=True, exist_ok=True)
    previous = previous_run(history, read_index(history), scenario.name)
    run_id, staging = _claim(history, run_id_for(now or _dt.datetime.now(_dt.timezone.utc)))
    try:
        result = _build(scenario_path, history, run_id, staging, previous, list(conditions),
                        samples, seed, backend, chunk_size, progress)
        folder = history / run_id
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    try:
        _register(history, _entry(run_id, result.run, result.previous, result.breaches))
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)   # complete but unregistered: drop it
        raise
    files = tuple(folder / p.name for p in result.files)
    run = replace(result.run, out_dir=folder, files=files)
    return replace(result, folder=folder, run=run, files=files)


def _build(scenario_path, history, run_id, staging, previous, conditions, samples, seed,
           backend, chunk_size, progress) -> NightlyResult:
    """Everything of one run inside its .partial folder."""
    data = Path(scenario_path).read_bytes()
    copy = write_atomic(staging / SCENARIO_COPY, data)
    options = {k: v for k, v in (("samples", samples), ("seed", seed), ("chunk_size", chunk_size))
               if v is not None}
    run = run_scenario(scenario_path, backend=backend, out_dir=staging, progress=progress,
                       report=False, **options)
    if hashlib.sha256(data).hexdigest() != run.summary["scenario_sha256"]:
        raise HistoryError(f"{scenario_path} changed while the run read it; run again")
    files = [copy, *run.files]
    diff = None
    if previous is not None:
        diff = compare_nights(run_id, staging, previous["id"], history / previous["folder"])
        files.append(write_atomic(staging / DIFF_FILE, diff_markdown(diff)))
    breaches, notes = evaluate(conditions, run.summary, diff)
    files.append(write_json(staging / ALERTS_FILE, {
        "conditions": [c.text for c in conditions],
        "breaches": [{"condition": b.condition.text, "strategy": b.strategy, "value": b.value}
                     for b in breaches],
        "notes": notes}))
    files += write_report(run, diff=diff, run_label=run_id)
    return NightlyResult(run_id, staging, run, previous["id"] if previous else None, diff,
                         breaches, notes, tuple(files))
