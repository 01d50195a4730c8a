"""Nightly runs: a dated folder per run in a history folder, an index of the runs that
succeeded, and a comparison with the previous one.

The application layer: a night reads the scenario file once (its bytes are parsed, hashed
into summary.json and kept as scenario.toml), runs it (mcrisk.app.run), and hands the results to
the report stage for what is rendered and compared (mcrisk.report: diff, alerts, trend,
report.html); what the history holds is read and written here.

    HISTORY/index.json              {"schema": 1, "runs": [entry, ...]}, oldest first
    HISTORY/2026-12-02T031500Z/     scenario.toml (a copy), status.toml (with --status: a
                                    copy, .json or .csv as the file was), summary.json,
                                    metrics.parquet, capacity_bands.parquet, milestones.parquet,
                                    intervals.json, diff.md, alerts.json, report.html, summary.md
    HISTORY/.partial-<id>/          a run in progress (or one that was killed: safe to delete)

A run is built in .partial-<id>/ (every file written through a temporary name and a rename),
renamed to <id>/ when complete, and only then added to index.json (rewritten atomically under
a lock). A run that fails or is interrupted (KeyboardInterrupt, SystemExit, the CLI's SIGTERM)
removes its .partial folder and leaves the index and every earlier folder as they were; it is
never registered. What it made to get there goes too: the index's lock file when this run
created it, and the history folder (with its parents) when this run created that, so a first
night that fails (a full disk, say) leaves no empty history behind.

The index is checked field by field before it is used, and a run folder it names must be a
plain folder name inside the history: a damaged index is a HistoryError (exit 2) that names
the entry and what to do. A damaged earlier night (a run folder with a missing or corrupt
file) is not: the comparison skips it, says why, and uses the latest night it can read.

With keep_large=N, a successful night deletes metrics.parquet and capacity_bands.parquet of
the registered nights of its scenario name older than the latest N (tonight is one of them);
the rest of their folders stays. A later night compared with one of them is compared unpaired
(mcrisk.report.nightly.diff), from its intervals.json.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from ..results.precision import PrecisionTarget
from ..results.jobs import scenario_job_columns
from ..core.definitions import COSTS
from ..backends.dask import dask_session
from ..core.errors import NO_VALUE, McriskError, Problem
from ..core.outputs import lock_file, make_folders, remove_folders, write_atomic, write_json
from ..core.stops import signals_held
from ..core.progress import WRITE, Progress, Steps, as_progress
from ..report import write_report
from ..report.nightly.alerts import AlertOutcome, Breach, Condition, check_conditions, evaluate
from ..report.nightly.diff import (INTERVALS_FILE, Materiality, NightDiff, NightUnreadable,
                                   compare_nights, diff_markdown, intervals_document, read_night)
from ..report.figures.data import strategy_colors
from ..report.text import visible
from ..report.nightly.trend import read_trend, trend_chart
from ..report.nightly.burndown import burndown_svg, read_burndown
from .attribution import build_lead, milestones_against_plan
from .run import RiskRun, RunResult, run_scenario, set_risks
from ..report.nightly.lead import Lead
from ..scenario import load_status, read_file_bytes, read_scenario

INDEX_FILE = "index.json"
SCENARIO_COPY = "scenario.toml"
STATUS_COPY = "status"          # + the status file's suffix: status.toml, .json or .csv
DIFF_FILE = "diff.md"
ALERTS_FILE = "alerts.json"
LARGE_FILES = ("metrics.parquet", "capacity_bands.parquet")   # what --keep-large deletes
_PARTIAL = ".partial-"
_LOCK = ".index.lock"
INDEX_SCHEMA = 1
_NEW_HISTORY = "move index.json aside to start a new history"


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
    alerts: AlertOutcome = AlertOutcome()
    pruned: tuple[str, ...] = ()    # earlier runs whose large files --keep-large deleted
    lead: Lead | None = None        # the executing plan: its figures and what moved them


def read_index(history: Path) -> dict:
    """HISTORY/index.json, checked (check_index); an empty index when there is none yet."""
    path = history / INDEX_FILE
    if not path.exists():
        return {"schema": INDEX_SCHEMA, "runs": []}
    try:
        index = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError, RecursionError) as error:
        reason = visible(" ".join(str(error).split()))
        raise HistoryError(f"{path}: not a valid history index ({reason}); {_NEW_HISTORY}, "
                           "or restore it from a backup") from None
    problems = check_index(history, index)
    if problems:
        raise HistoryError("\n".join(str(p) for p in problems))
    return index


# Fields of an index entry: (required, what it must be, test). The nightly reads the required
# ones; the others are checked so that what it writes back is what it wrote. The id is printed
# as the run compared with, so it must be one line of printable text.
_TEXT = ("text", lambda v: isinstance(v, str))
_ID = ("printable text", lambda v: isinstance(v, str) and v.isprintable() and v != "")
_INTEGER = ("a whole number", lambda v: isinstance(v, int) and not isinstance(v, bool))
_NUMBER = ("a number", lambda v: isinstance(v, (int, float)) and not isinstance(v, bool))
_TEXT_LIST = ("a list of text", lambda v: isinstance(v, list) and all(isinstance(x, str) for x in v))
_ENTRY_FIELDS = {
    "id": (True, *_ID), "folder": (True, *_TEXT), "status": (True, *_TEXT),
    "scenario_name": (True, *_TEXT), "created_utc": (False, *_TEXT),
    "scenario": (False, *_TEXT), "scenario_sha256": (False, *_TEXT),
    "seed": (False, *_INTEGER), "samples": (False, *_INTEGER), "backend": (False, *_TEXT),
    "mcrisk_version": (False, *_TEXT), "wall_seconds": (False, *_NUMBER),
    "previous": (False, "text or null", lambda v: v is None or isinstance(v, str)),
    "ranking": (False, *_TEXT_LIST), "breaches": (False, *_TEXT_LIST),
    "status_file": (False, *_TEXT), "status_sha256": (False, *_TEXT),
    "status_as_of": (False, *_NUMBER),
}


def check_index(history: Path, index) -> list[Problem]:
    """Every problem of a parsed index.json: its schema, and each entry's fields and folder."""
    file = str(history / INDEX_FILE)
    hint = f"fix the entry, or {_NEW_HISTORY}"
    if not isinstance(index, dict):
        return [Problem(file, "", index, "must be a JSON object with 'schema' and 'runs'",
                        _NEW_HISTORY)]
    problems = []
    schema = index.get("schema")
    if "schema" not in index:
        problems.append(Problem(file, "schema", NO_VALUE, "missing", _NEW_HISTORY))
    elif type(schema) is not int or schema != INDEX_SCHEMA:
        problems.append(Problem(file, "schema", schema,
                                f"unknown history schema (this mcrisk reads {INDEX_SCHEMA})",
                                f"a newer mcrisk may have written it; or {_NEW_HISTORY}"))
    runs = index.get("runs")
    if not isinstance(runs, list):
        problems.append(Problem(file, "runs", runs if "runs" in index else NO_VALUE,
                                "must be a list of runs", _NEW_HISTORY))
        return problems
    for i, entry in enumerate(runs):
        if not isinstance(entry, dict):
            problems.append(Problem(file, f"runs[{i}]", entry, "must be an object", hint))
            continue
        for key, (required, wanted, test) in _ENTRY_FIELDS.items():
            if key not in entry:
                if required:
                    problems.append(Problem(file, f"runs[{i}].{key}", NO_VALUE, "missing", hint))
            elif not test(entry[key]):
                problems.append(Problem(file, f"runs[{i}].{key}", entry[key],
                                        f"must be {wanted}", hint))
        folder = entry.get("folder")
        if isinstance(folder, str):
            wrong = _folder_problem(history, folder)
            if wrong:
                problems.append(Problem(file, f"runs[{i}].folder", folder, wrong, hint))
    return problems


def _folder_problem(history: Path, folder: str) -> str | None:
    """Why `folder` cannot be a run folder of `history`, or None.

    A run folder is one plain name inside the history; resolving it (links included) must
    stay there, so that an edited index never makes the nightly read outside the history.
    """
    if (not folder or not folder.isprintable() or folder in (".", "..") or "/" in folder
            or "\\" in folder or folder.startswith(_PARTIAL)):
        return "must be the name of a run folder inside the history"
    home = history.resolve()
    if (home / folder).resolve().parent != home:
        return f"leads outside the history folder {home} (a link?)"
    return None


def earlier_runs(index: dict, scenario_name: str) -> list[dict]:
    """Registered runs of the same scenario name, latest first: the nights to compare with."""
    return [entry for entry in reversed(index["runs"])
            if entry["scenario_name"] == scenario_name and entry["status"] == "ok"]


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
    """The index's lock (HISTORY/.index.lock), waiting while another night holds it. The lock
    file stays for the next night, but one this night created is removed again when what it
    guarded failed (a full disk at index.json), so that a failed night leaves the history as
    it was."""
    path = history / _LOCK
    fd, created = lock_file(path, wait=True)
    try:
        yield
    except BaseException:
        if created:
            path.unlink(missing_ok=True)       # while still locked: see lock_file
        raise
    finally:
        os.close(fd)


def _register(history: Path, entry: dict) -> None:
    with _locked(history):
        index = read_index(history)
        index["runs"].append(entry)
        write_json(history / INDEX_FILE, index)


def _publish(history: Path, run_id: str, staging: Path, result: "NightlyResult") -> Path:
    """Rename the finished .partial folder to its run id and register it in the index.

    SIGINT and SIGTERM are held back meanwhile (and delivered right after), so that a stop
    cannot leave a complete folder unregistered; a registration that fails (a damaged index,
    a full disk) removes the folder again.
    """
    folder = history / run_id
    with signals_held():
        os.rename(staging, folder)
        try:
            _register(history, _entry(run_id, result.run, result.previous, result.breaches))
        except BaseException:
            shutil.rmtree(folder, ignore_errors=True)   # complete but unregistered: drop it
            raise
    return folder


def _entry(run_id: str, run: RunResult, previous: str | None, breaches: list[Breach]) -> dict:
    s = run.summary
    return {"id": run_id, "folder": run_id, "status": "ok", "created_utc": s["created_utc"],
            "scenario": s["scenario"], "scenario_name": s["scenario_name"],
            "scenario_sha256": s["scenario_sha256"], "seed": s["seed"], "samples": s["samples"],
            "backend": s["backend"], "mcrisk_version": s["mcrisk_version"],
            "wall_seconds": s["wall_seconds"], "previous": previous, "ranking": s["ranking"],
            "breaches": [str(b) for b in breaches], **_status_fields(s)}


def _status_fields(summary: dict) -> dict:
    """The index's record of a night's status (none without one): the file it was run with,
    its sha256 and as_of, as its summary.json's status block has them."""
    status = summary.get("status")
    if status is None:
        return {}
    return {"status_file": status["path"], "status_sha256": status["sha256"],
            "status_as_of": status["as_of"]}


def run_nightly(scenario_path: str, history: str | Path, conditions: list[Condition] = (),
                samples: int | None = None, seed: int | None = None, backend: str = "auto",
                chunk_size: int | None = None,
                progress: Progress | Callable[[int, int], None] | None = None,
                now: _dt.datetime | None = None, risks: str = "file",
                disable_risks: tuple[str, ...] = (), precision: PrecisionTarget | None = None,
                materiality: Materiality = Materiality(),
                keep_large: int | None = None, dask: str | None = None,
                status: str | Path | None = None, scenarios_out: bool | None = None,
                scenarios_budget: int | None = None) -> NightlyResult:
    """One nightly run into `history`; compares with the previous run and checks conditions.

    The scenario file is read once: tonight's scenario.toml holds the very bytes that were
    run and whose hash summary.json records. `risks` and `disable_risks` set the run's risk
    register and `precision` is passed to run_scenario; `materiality` is the smallest change
    the diff reports; `keep_large` (N >= 1), when given, deletes the large files of this
    scenario's nights older than the latest N once tonight is registered. With `dask`
    (`local:N` or a scheduler's address), run_scenario runs the chunks on Dask workers
    (mcrisk.backends.dask): the same numbers. `scenarios_out` and `scenarios_budget`: when
    tonight writes metrics.parquet (run_scenario); a night without one is compared unpaired,
    from its intervals.json, and the next night likewise. With `status` (tonight's status file: a migration
    in flight), the run is conditioned on what has happened by its status date.
    Raises (and registers nothing) on failure; breached conditions are returned, not raised.
    """
    if keep_large is not None and keep_large < 1:
        raise McriskError(f"--keep-large = {keep_large}: must be at least 1 (tonight's "
                          "metrics.parquet is what the next night pairs with)")
    history = Path(history)
    scenario, data = read_scenario(scenario_path)
    check_conditions(list(conditions), scenario)
    # the status file is read once too: its copy holds the bytes whose facts were run
    facts = None if status is None else (Path(status), read_file_bytes(os.fsdecode(status)))
    register = set_risks(scenario, risks, disable_risks,
                         None if facts is None else load_status(facts[0], scenario, facts[1]))
    options = {k: v for k, v in (("samples", samples), ("seed", seed), ("chunk_size", chunk_size))
               if v is not None}
    options.update(backend=backend, progress=as_progress(progress), precision=precision,
                   scenarios_out=scenarios_out, scenarios_budget=scenarios_budget)
    made = make_folders(history)         # the history and its parents, when this night makes them
    staging = None
    try:
        earlier = earlier_runs(read_index(history), scenario.name)
        run_id, staging = _claim(history, run_id_for(now or _dt.datetime.now(_dt.timezone.utc)))
        with dask_session(dask) as session:       # open for the report's replays too
            options["dask"] = session
            context = dict(raw=scenario, status=facts, risks=risks, disable=tuple(disable_risks),
                           backend=backend)
            result = _build(register, data, history, run_id, staging, earlier,
                            list(conditions), options, materiality, facts, context)
        folder = _publish(history, run_id, staging, result)
    except BaseException:       # KeyboardInterrupt, SystemExit and SIGTERM's unwinding too
        with signals_held():     # a stop now would leave half a .partial folder
            if staging is not None:
                shutil.rmtree(staging, ignore_errors=True)
            remove_folders(made)     # a history this night made holds nothing now: it goes
        raise
    files = tuple(folder / p.name for p in result.files)
    run = replace(result.run, out_dir=folder, files=files)
    pruned, prune_notes = ((), []) if keep_large is None else \
        prune_large_files(history, scenario.name, keep_large)
    return replace(result, folder=folder, run=run, files=files, pruned=tuple(pruned),
                   notes=[*result.notes, *prune_notes])


def prune_large_files(history: Path, scenario_name: str, keep: int) -> tuple[list[str], list[str]]:
    """Delete LARGE_FILES of the registered runs of `scenario_name` older than the latest
    `keep`; (ids of the runs that lost files, notes on files that could not be deleted).

    Runs after tonight is registered, so a failure here costs disk space, never the night.
    """
    with _locked(history):
        runs = [entry for entry in read_index(history)["runs"]
                if entry["scenario_name"] == scenario_name and entry["status"] == "ok"]
    pruned, notes = [], []
    for entry in runs[:max(0, len(runs) - keep)]:
        deleted = False
        for name in LARGE_FILES:
            path = history / entry["folder"] / name
            if not (path.exists() or path.is_symlink()):
                continue
            try:
                path.unlink()
                deleted = True
            except OSError as error:
                notes.append(visible(f"--keep-large: could not delete {path}: "
                                     f"{error.strerror or error}"))
        if deleted:
            pruned.append(entry["id"])
    return pruned, notes


def status_copy_name(path: str | os.PathLike) -> str:
    """The name of a night's copy of its status file: status.toml, .json or .csv, by the
    file's suffix (which says how it is read)."""
    return STATUS_COPY + Path(path).suffix.lower()


def _build(register: RiskRun, data: bytes, history: Path, run_id: str, staging: Path,
           earlier: list[dict], conditions: list[Condition], options: dict,
           materiality: Materiality, facts: tuple[Path, bytes] | None = None,
           context: dict | None = None) -> NightlyResult:
    """Everything of one run inside its .partial folder: `register` the scenario as loaded
    from `data`, the file's bytes; `earlier` the nights to compare with, latest first;
    `facts`, with a status, its file's path and the bytes its Status was built from."""
    copies = [write_atomic(staging / SCENARIO_COPY, data)]
    if facts is not None:
        copies.append(write_atomic(staging / status_copy_name(facts[0]), facts[1]))
    # publish=False: the .partial folder is this run's own, published by the rename below
    run = run_scenario(register, out_dir=staging, report=False, publish=False, **options)
    with options["progress"].phase(WRITE, total=len(NIGHT_STEPS)) as phase:
        return _night_files(run, copies, history, run_id, staging, earlier, conditions,
                            materiality, Steps(phase, NIGHT_STEPS), context)


NIGHT_STEPS = ("intervals.json", "diff with the previous night", "alerts and trend",
               "report.html, summary.md")


def _night_files(run: RunResult, copies: list[Path], history: Path, run_id: str, staging: Path,
                 earlier: list[dict], conditions: list[Condition], materiality: Materiality,
                 steps: Steps, context: dict | None = None) -> NightlyResult:
    """The night's own files after its run, one step each of NIGHT_STEPS; `context` (the
    scenario as read, the status, the risk register and backend asked for) lets the lead
    block re-run last night's inputs for its attribution."""
    files = [*copies, *run.files,
             write_json(staging / INTERVALS_FILE,
                        intervals_document(run.result.metrics, run.plan.strategy_names,
                                           extra_values(run)))]
    steps.next()
    diff, skipped = compare_with_last_readable(run_id, staging, history, earlier, materiality)
    lead = None
    if context is not None:
        previous = (None if diff is None else
                    history / next(e["folder"] for e in earlier if e["id"] == diff.previous))
        seed = run.summary["seed"]
        lead = build_lead(run, context["raw"], context["status"], previous, diff,
                          context["risks"], context["disable"], context["backend"], seed)
        if diff is not None:          # a first night shows no milestones: no plan run for them
            reached = milestones_against_plan(run, context["raw"], context["risks"],
                                              context["disable"], context["backend"], seed)
            diff = replace(diff, lead=lead, milestones=reached)
    if diff is not None:
        files.append(write_atomic(staging / DIFF_FILE, diff_markdown(diff)))
    steps.next()
    breaches, condition_notes = evaluate(conditions, run.summary, diff)
    notes = [*skipped, *condition_notes]
    files.append(write_json(staging / ALERTS_FILE, {
        "conditions": [c.text for c in conditions],
        "breaches": [{"condition": b.condition.text, "strategy": b.strategy, "value": b.value,
                      **({"date": b.shown} if b.shown else {}), "words": b.words,
                      **({"detail": b.detail} if b.detail else {})} for b in breaches],
        "notes": notes,
        "materiality": (diff.materiality if diff else materiality).describe()}))
    outcome = AlertOutcome(tuple(conditions), tuple(breaches), tuple(condition_notes))
    trend = read_trend(history, list(reversed(earlier)), run_id, run.summary)
    names = run.plan.strategy_names
    chart = trend_chart(trend, names, strategy_colors(names)) if len(trend.nights) > 1 else None
    executing = lead.strategy if lead is not None else run.summary["ranking"][0]
    burn, burn_notes = read_burndown(history, list(reversed(earlier)), run_id, run.summary,
                                     executing)
    burn_svg = (burndown_svg(burn, executing, strategy_colors(names).get(executing, "#1f77b4"))
                if len(burn) > 1 else None)
    steps.next()
    files += write_report(run, diff=diff, run_label=run_id,
                          notes=tuple(skipped) if diff is None else (), alerts=outcome,
                          trend=(trend, chart, burn_svg, tuple(burn_notes)))
    steps.next()
    return NightlyResult(run_id, staging, run, diff.previous if diff else None, diff,
                         breaches, [*notes, *trend.notes], tuple(files), outcome, lead=lead)


def extra_values(run: RunResult) -> dict:
    """{column: values[scenario, strategy]} of the run's cost and job columns, for
    intervals.json: compared like the metrics."""
    out = {}
    result = run.result
    if result.costs is not None:
        out.update({name: result.costs[:, :, j] for j, name in enumerate(COSTS)})
    if result.jobs is not None:
        columns = scenario_job_columns(run.scenario)
        out.update({name: result.jobs[:, :, j] for j, name in enumerate(columns)})
    return out


def compare_with_last_readable(run_id: str, folder: Path, history: Path, earlier: list[dict],
                               materiality: Materiality = Materiality()
                               ) -> tuple[NightDiff | None, list[str]]:
    """(diff of the run in `folder` with the latest readable earlier night, notes on the
    later ones skipped).

    A damaged night (a missing or corrupt file in its folder) must not stop every later
    night: it is skipped, with a note saying which file and why, for the terminal, diff.md
    and the report. Tonight's own files are read only when there is a night to compare with.
    """
    skipped = []
    for entry in earlier:
        try:
            previous = read_night(entry["id"], history / entry["folder"])
        except NightUnreadable as why:
            skipped.append(visible(f"comparison with {entry['id']} skipped: {why}"))
            continue
        diff = compare_nights(read_night(run_id, folder), previous, materiality)
        return replace(diff, skipped=tuple(skipped)), skipped
    if skipped:
        skipped.append("no earlier run of this scenario could be read: nothing compared")
    return None, skipped
