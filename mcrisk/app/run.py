"""One run, end to end without printing: compile -> simulate -> summarize -> write.

The application layer's core: run_scenario takes a loaded scenario with its risk register set
(RiskRun: load_for_run reads the file, set_risks sets the register of one already loaded), so a
caller that needs the file itself too (the nightly keeps a copy) reads it once. The runs that
grow to a precision target and the value of mitigation's second simulation are
mcrisk.app.precision and mcrisk.app.mitigation; the statistics they use live in
mcrisk.results, the files in mcrisk.report.
"""
from __future__ import annotations

import contextlib
import datetime as _dt
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator

import numpy as np

from .. import __version__
from ..results.contingency import contingent_block
from ..results.ranking import rank
from ..results.statistics import summarize
from ..results.compare import against_leader
from ..results.drivers import drivers_summary
from ..results.horizon import beyond_horizon
from ..results.mitigation import counterpart, risks_entry
from ..results.precision import PrecisionTarget, precision_entry
from ..results.quantiles import shared_order_statistics
from ..backends import Backend, select_backend
from ..backends.jit_events import numba_compiles
from ..plan.record import CompiledScenario
from ..plan.compile import compile_scenario
from ..core.risks import select_risks
from ..results.costs import costs_block, summarize_costs
from ..backends.dask import dask_entry, dask_session
from ..core.definitions import COMPLETION_DAY, N_METRICS
from ..core.errors import McriskError
from ..results.jobs import summary_keys as job_summary_keys
from .mitigation import mitigation_entry
from ..core.model import Scenario
from ..core.status import Status
from ..plan.window import with_window
from ..core.outputs import OutputFolder, metrics_parquet_entry, with_filename, write_json
from .precision import simulate_to_precision
from ..core.progress import COMPILE, QUIET, SUMMARIZE, WRITE, Progress, Steps, as_progress
from ..core.rng import RNG_NAME
from ..core.facts import with_facts
from ..scenario import load_scenario, load_status, scenario_warnings
from ..backends.chunks import SimulationResult, check_memory, default_chunk, simulate

if TYPE_CHECKING:
    from .collect import RunDetail

DEFAULT_SAMPLES = 20_000
DEFAULT_SEED = 1


@dataclass(frozen=True)
class RunResult:
    scenario: Scenario
    plan: CompiledScenario
    backend: Backend
    result: SimulationResult
    summary: dict              # the summary.json document
    out_dir: Path | None
    files: tuple[Path, ...] = ()            # every file written into out_dir, in order
    detail: "RunDetail | None" = None       # streamed bands and hall power (when out_dir)

    def replay(self, index: int):
        """Scenario `index` simulated alone with node times, on the run's backend, plan and
        seed: (metrics[1, s, 6], world[1, q], node_times[1, s, v]), the six metrics only, as
        result.metrics keeps them (the backend's cost columns, which follow them when the
        plan has costs, are left out: result.costs has them). The report draws whole
        scenarios through this, so it never needs a backend of its own."""
        metrics, world, node_times = self.backend.simulate_chunk(
            self.plan, self.result.seed, index, 1, keep_nodes=True)
        return metrics[:, :, :N_METRICS], world, node_times


DRIVERS_TOP = 5
SUMMARY_STEPS = ("summaries", "ranking", "drivers", "paired")
COMPILING = "Numba is compiling {name}: once after an install or an upgrade, then cached"
COMPILED = "Numba compiled {name} in {seconds:.0f} s, cached for later runs"


def prepare_backend(name: str, plan: CompiledScenario, progress: Progress = QUIET,
                    session=None) -> Backend:
    """select_backend(name) with its kernel ready for `plan` (Numba compiles it, or loads it
    from its cache), as the run's `compile` phase: a phase note says when Numba compiles,
    the one long wait of a first run. With a Dask `session` (mcrisk.backends.dask), the
    backend `name` on its workers, prepared on each."""
    with progress.phase(COMPILE):
        if session is not None:
            return session.backend(name, plan)
        chosen = select_backend(name)
        with compiles_noted(progress):
            chosen.prepare(plan)
    return chosen


@contextlib.contextmanager
def compiles_noted(progress: Progress) -> Iterator[None]:
    """Inside the block, a note on the open phase while Numba compiles something (the kernel
    in the compile phase; the compiled loops of the milestones and bands, the first time a
    run writes them), and for how long it did (mcrisk.backends.jit_events)."""
    with numba_compiles(lambda name: progress.note(COMPILING.format(name=name)),
                        lambda name, seconds: progress.note(
                            COMPILED.format(name=name, seconds=seconds))):
        yield


def completion_dates(start, completion_day: dict) -> dict:
    """completion_day's P50/P90/P99 as calendar dates: the date the instant falls in, day 0
    being all of `start` (start + floor(day)); None where the day is not finite."""
    from ..results.milestones import day_date  # lazily: milestones brings Numba (validate needs neither)

    return {key: day_date(start, completion_day.get(key)) for key in ("p50", "p90", "p99")}


def build_summary(scenario: Scenario, backend: Backend, result: SimulationResult,
                  chunk_size: int, precision: dict | None = None, risks: dict | None = None,
                  mitigation: dict | None = None, progress: Progress = QUIET,
                  status: dict | None = None) -> dict:
    """The summary.json document (schema: mcrisk/schema/summary.schema.json), plus keys of its
    own: risks (the register as run: mcrisk.results.mitigation.risks_entry; mode file unless
    given), drivers (of every metric, per strategy), paired (each strategy against the
    leader on the same scenarios), for --precision runs precision, and, when the run's risks
    have mitigated values, mitigation (the same worlds pre vs post mitigation). `progress` sees it
    as the `summarize` phase, one step each of SUMMARY_STEPS. With costs (a [costs]
    section), every strategy gets `costs` (mcrisk.results.costs) and the document a top-level
    `costs` block; without, neither key. With a job mix ([[demand.jobs]]), likewise `jobs`
    (mcrisk.results.jobs). With a status, `status` is its block (status_block: the status
    file, as_of, what happened, the history's figures; the run's plan then counts the
    future, [as_of, horizon)); the scenario's executing strategy, when it names one, is
    `executing`. Without either, neither key."""
    with progress.phase(SUMMARIZE, total=len(SUMMARY_STEPS)) as phase:
        return _summary(scenario, backend, result, chunk_size, precision, risks, mitigation,
                        Steps(phase, SUMMARY_STEPS), status)


def status_block(scenario: Scenario, plan: CompiledScenario, status: Status | None,
                 seed: int) -> dict | None:
    """summary.json's `status` block of a run of `plan` (conditioned on `status`) with `seed`,
    its history measured once: the NumPy reference on the run's first HISTORY_WORLDS worlds
    of the plan over [0, as_of) (mcrisk.plan.window.history_plan; mcrisk.results.history);
    None without a status."""
    if status is None:
        return None
    from ..backends.numpy.driver import simulate_chunk
    from ..plan.window import history_plan
    from ..results.history import HISTORY_WORLDS, status_entry

    past = simulate_chunk(history_plan(plan, status), seed, 0, HISTORY_WORLDS)[0]
    return status_entry(scenario, plan, status, past)


def _summary(scenario, backend, result, chunk_size, precision, risks, mitigation,
             steps: Steps, status: dict | None = None) -> dict:
    """build_summary's document, computed step by step."""
    from ..results.milestones import day_date  # lazily, as in completion_dates

    strategies = summarize(result.metrics, result.plan.strategy_names)
    for k, name in enumerate(result.plan.strategy_names):
        strategies[name]["beyond_horizon"] = beyond_horizon(result.metrics[:, k, COMPLETION_DAY],
                                                            result.plan.horizon)
        if scenario.start_date is not None:
            strategies[name]["completion_date"] = completion_dates(
                scenario.start_date, strategies[name]["completion_day"])
    if result.costs is not None:
        for name, per_cost in summarize_costs(result.costs, result.plan.strategy_names).items():
            strategies[name]["costs"] = per_cost
    jobs = job_summary_keys(scenario, result, strategies, result.plan.horizon,
                            result.plan.window_start)
    steps.next()
    ranked = rank(result.metrics, result.plan.strategy_names, strategies)
    ranking = ranked["ranking"]
    steps.next()
    drivers = drivers_summary(result.plan, result.metrics, result.world, top=DRIVERS_TOP)
    steps.next()
    paired = against_leader(result.metrics, result.plan.strategy_names, ranking)
    steps.next()
    return {
        "scenario": scenario.path,
        "scenario_name": scenario.name,
        "scenario_sha256": scenario.sha256,
        "samples": result.samples,
        "seed": result.seed,
        "backend": backend.name,
        "backend_reason": backend.reason,
        "mcrisk_version": __version__,
        "rng": RNG_NAME,
        "chunk_size": chunk_size,
        "horizon_days": result.plan.horizon,
        **({"start_date": scenario.start_date.isoformat(),
            "horizon_date": day_date(scenario.start_date, result.plan.horizon)}
           if scenario.start_date is not None else {}),
        "baseline_h100_eq": result.plan.baseline,
        "wall_seconds": round(result.wall_seconds, 3),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "ranking": ranking,
        "ranks": ranked["ranks"],
        "ranking_rule": ranked["rule"],
        **({"executing": scenario.executing} if scenario.executing is not None else {}),
        **({"status": status} if status is not None else {}),
        **({"warnings": warned} if (warned := scenario_warnings(scenario)) else {}),
        "strategies": strategies,
        **({"costs": costs_block(_currency(scenario), result.plan.horizon,
                                 result.plan.window_start)}
           if result.costs is not None else {}),
        **jobs,
        "risks": risks if risks is not None else risks_entry(scenario),
        "drivers": {"scenarios": int(result.world.shape[0]), "strategies": drivers},
        "paired": paired,
        **({"precision": precision} if precision else {}),
        **({"mitigation": mitigation} if mitigation else {}),
        **({"contingent": contingent_block(result.plan, result.metrics, result.costs,
                                           result.branches)}
           if result.branches is not None else {}),
        **_dask_key(backend),
    }


def _dask_key(backend: Backend) -> dict:
    """summary.json's `dask` key of a run on Dask workers (mcrisk.backends.dask), else none."""
    entry = dask_entry(backend)
    return {"dask": entry} if entry is not None else {}


def _currency(scenario: Scenario) -> str | None:
    """The [costs] section's currency label, None without one."""
    costs = getattr(scenario, "costs", None)
    return getattr(costs, "currency", None)


@dataclass(frozen=True)
class RiskRun:
    """A run's risk register: the scenario as loaded (`raw`) and as run (`scenario`), the
    mode and what --disable-risk switched off (`disabled_by_cli`, each id once)."""

    raw: Scenario
    scenario: Scenario
    mode: str
    disabled_by_cli: tuple[str, ...]
    status: Status | None = None      # what has happened by its status date (--status)

    def entry(self) -> dict:
        return risks_entry(self.scenario, self.mode, self.disabled_by_cli)

    def counterpart(self):
        """The other side for the value of mitigation (results.mitigation.counterpart)."""
        return counterpart(self.raw, self.mode, self.disabled_by_cli)


def load_for_run(path: str | os.PathLike, risks: str = "file", disable_risks=(),
                 status: str | os.PathLike | None = None) -> RiskRun:
    """Load the scenario (once), and the status file at `status` against it (--status), and
    set its risk register for this run."""
    raw = load_scenario(path)
    return set_risks(raw, risks, disable_risks,
                     load_status(status, raw) if status is not None else None)


def set_risks(raw: Scenario, risks: str = "file", disable_risks=(),
              status: Status | None = None) -> RiskRun:
    """The risk register of a run of the loaded scenario `raw`: mode `risks`, and the ids of
    `disable_risks` switched off (each once); a McriskError naming the file for an unknown id.
    With a status, its facts about the model itself apply whatever the mode says
    (core.status.with_facts: a risk that occurred is on with its impact, one that can no
    longer occur is off, a measured performance, a revised promise)."""
    disabled = tuple(dict.fromkeys(disable_risks))
    raw = with_facts(raw, status)
    try:
        scenario = with_facts(select_risks(raw, risks, disabled), status)
    except ValueError as error:
        raise McriskError(f"{raw.path}: {error}") from None
    return RiskRun(raw, scenario, risks, disabled, status)


def _simulate(plan, samples, seed, backend, chunk_size, progress, precision, hooks=()):
    """simulate(), or grow the run until `precision` is met; returns (result, report)."""
    if precision is None:
        return simulate(plan, samples, seed, backend, chunk_size=chunk_size, progress=progress,
                        chunk_hooks=hooks, column_major=True), None   # as by_column reads them
    result, worst = simulate_to_precision(plan, seed, backend, precision, chunk_size,
                                          progress, hooks)
    return result, precision_entry(precision, result.samples, worst)


def run_scenario(scenario: RiskRun | str | os.PathLike, samples: int = DEFAULT_SAMPLES,
                 seed: int = DEFAULT_SEED,
                 backend: str = "auto", out_dir: str | Path | None = None,
                 chunk_size: int | None = None,
                 progress: Progress | Callable[[int, int], None] | None = None,
                 report: bool = True, risks: str = "file", disable_risks: tuple[str, ...] = (),
                 precision: PrecisionTarget | None = None, publish: bool = True,
                 mitigation: bool = True, csv: bool = False,
                 dask: str | None = None, scenarios_out: bool | None = None,
                 scenarios_budget: int | None = None) -> RunResult:
    """Run every strategy of `scenario`: a loaded scenario with its risk register set
    (load_for_run, set_risks), or, for convenience, the path of a scenario file, loaded here
    (once) with the register `risks` and `disable_risks` (mcrisk.core.risks.select_risks).

    With out_dir, writes summary.json, metrics.parquet and capacity_bands.parquet there (the
    parquet files streamed chunk by chunk), then, if `report`, report.html and summary.md.
    The files appear together or not at all: they are written into a staging folder that
    replaces out_dir in one atomic step, under a lock that makes a second run on the same
    out_dir fail at once (mcrisk.core.outputs.OutputFolder). With publish=False, out_dir is a
    private folder that the caller publishes itself (nightly's .partial folder), and the files
    go straight into it. With `precision`, `samples` is ignored and the run grows
    until every P90 is known to the target. A sample count whose results would not fit in
    memory is refused before anything runs.

    With `mitigation` (the default), when a risk this run enables has mitigated values, the
    run simulates the other side of its register too (pre for a post run, post otherwise) on
    the same scenarios, one more simulation, for summary.json's `mitigation`.

    `progress` (mcrisk.core.progress; a plain callable progress(done, total) is called as the
    scenarios are simulated) sees the run's phases: compile, simulate, summarize, write.

    With `dask` (`local:N` or a scheduler's address), the chunks run on Dask workers
    (mcrisk.backends.dask): the same numbers and files; summary.json's `dask` key says where
    they ran and how many chunks were retried after a lost worker.

    metrics.parquet (one row per scenario x strategy) is written up to `scenarios_budget`
    rows (None: mcrisk.core.outputs.METRICS_ROW_BUDGET), above it only with
    `scenarios_out=True`; `scenarios_out=False` never writes it. A run that leaves it out,
    or writes it over the budget, says so in summary.json's `metrics_parquet`
    (metrics_parquet_entry); a --precision run counts its --max-samples.
    """
    progress = as_progress(progress)
    register = _risk_run(scenario, risks, disable_risks)
    scenario = register.scenario
    plan = compile_scenario(scenario)
    chunk_size = default_chunk(plan, chunk_size)    # None: the plan's default
    side = register.counterpart() if mitigation else None
    other_plan = compile_scenario(side.other) if side is not None else None

    def risk_keys(result: SimulationResult, backend: Backend) -> dict:
        return {"risks": register.entry(),
                "mitigation": mitigation_entry(side, other_plan, result, backend, chunk_size,
                                               progress=progress)}

    if precision is None:
        check_memory(plan, samples, chunk_size, option="--samples")
    else:
        check_memory(plan, precision.max_samples, chunk_size, option="--max-samples",
                     grows=True)
    with dask_session(dask) as session:
        chosen = prepare_backend(backend, plan, progress, session)
        simulation = dict(samples=samples, seed=seed, backend=chosen, chunk_size=chunk_size,
                          progress=progress, precision=precision)
        with compiles_noted(progress):
            return _run_prepared(scenario, plan, out_dir, report, publish, csv, risk_keys,
                                 simulation, status=register.status,
                                 scenarios=(scenarios_out, scenarios_budget))


def _run_prepared(scenario: Scenario, plan: CompiledScenario, out_dir: str | Path | None,
                  report: bool, publish: bool, csv: bool,
                  risk_keys: Callable[[SimulationResult, Backend], dict],
                  simulation: dict, status: Status | None = None,
                  scenarios: tuple = (None, None)) -> RunResult:
    """run_scenario once its backend is ready: simulate and summarize, and with out_dir,
    write the files (published together, unless `publish` is False).

    With a `status` (`plan` conditioned on it), the run counts the future: the plan's window
    starts at as_of (mcrisk.plan.window), the history is measured once before the
    simulation (status_block) and every output records it. Without one, nothing changes."""
    chosen = simulation["backend"]
    plan = with_window(plan, status)
    block = status_block(scenario, plan, status, simulation["seed"])
    if out_dir is None:
        result, reached = _simulate(plan, **simulation)
        result = by_column(result)
        with _shared(result):
            summary = build_summary(scenario, chosen, result, simulation["chunk_size"],
                                    reached, **risk_keys(result, chosen),
                                    progress=simulation["progress"], status=block)
        return RunResult(scenario, plan, chosen, result, summary, None)
    out = Path(out_dir)
    rows = ((simulation["samples"] if simulation["precision"] is None
             else simulation["precision"].max_samples) * len(plan.strategy_names))
    metrics_out = metrics_parquet_entry(rows, *scenarios)
    if simulation["precision"] is not None and metrics_out[1] is not None \
            and metrics_out[1]["why"] == "over the row budget":   # decided before it grows
        metrics_out = (False, {**metrics_out[1], "why": "--max-samples over the row budget"})
    try:
        if not publish:
            return _write_run(scenario, plan, out, report, risk_keys, csv=csv, status=block,
                              metrics_out=metrics_out, **simulation)
        with OutputFolder(out) as folder:
            run = _write_run(scenario, plan, folder.staging, report, risk_keys, csv=csv,
                             status=block, metrics_out=metrics_out, **simulation)
            folder.publish()
    except OSError as error:          # one that names no file (EIO, ENOSPC): name the folder
        raise with_filename(error, out) from None
    return replace(run, out_dir=out, files=tuple(out / p.name for p in run.files))


def _risk_run(scenario: RiskRun | str | os.PathLike, risks: str, disable_risks) -> RiskRun:
    """run_scenario's register: `scenario` itself when loaded (its register is set: `risks`
    and `disable_risks` must then be left as they are), else the file at that path, loaded."""
    if not isinstance(scenario, RiskRun):
        return load_for_run(scenario, risks, disable_risks)
    if risks != "file" or tuple(disable_risks):
        raise TypeError("run_scenario: the risk register of a loaded scenario is set by "
                        "set_risks or load_for_run, not by `risks` or `disable_risks`")
    return scenario


def _write_run(scenario: Scenario, plan: CompiledScenario, folder: Path, report: bool,
               risk_keys: Callable[[SimulationResult, Backend], dict],
               samples: int, seed: int, backend: Backend, chunk_size: int,
               progress: Progress, precision: PrecisionTarget | None,
               csv: bool = False, status: dict | None = None,
               metrics_out: tuple[bool, dict | None] = (True, None)) -> RunResult:
    """Simulate, streaming metrics.parquet, the bands and the milestones into `folder`,
    summarize, then write milestones.parquet, summary.json (with `milestones`), with `csv`
    the CSV copies, and (if `report`) report.html and summary.md there: the `write` phase,
    one step each of write_steps. `status`: the run's status block (status_block), which
    metrics.parquet's metadata, the milestones and the summary record. `metrics_out`:
    (write metrics.parquet?, summary.json's `metrics_parquet` entry or None)."""
    from .collect import RunCollector  # the report stack loads only when asked for

    write_metrics, entry = metrics_out
    with RunCollector(plan, folder, scenario, status, write_metrics) as collect:
        result, reached = _simulate(plan, samples, seed, backend, chunk_size, progress,
                                    precision, collect.hooks)
        collect.commit_behind()         # its tables written while the run is summarized
        result = by_column(result)
        with _shared(result):
            summary = build_summary(scenario, backend, result, chunk_size, reached,
                                    **risk_keys(result, backend), progress=progress,
                                    status=status)
            if entry is not None:
                summary["metrics_parquet"] = {**entry, "rows": result.samples *
                                              len(plan.strategy_names)}
            with progress.phase(WRITE, total=len(write_steps(csv, report))) as phase:
                steps = Steps(phase, write_steps(csv, report))
                tables, detail = collect.committed()
                steps.next()
                return _write_files(RunResult(scenario, plan, backend, result, summary,
                                              folder, (), detail), tables, csv, report, steps)


COLUMN_MAJOR_SHARE = 0.1       # by_column copies an array up to this share of the RAM
COLUMN_MAJOR_BLOCK = 1024      # rows copied at a time (the rows' cache lines stay in cache)


def by_column(result: SimulationResult) -> SimulationResult:
    """`result` with its metrics, costs and jobs laid out column by column (Fortran order:
    each [:, strategy, column] contiguous), the same values read by the same indices.
    Everything after the chunk loop reads them a column at a time; a column of the chunk
    loop's layout is strided (one value every 240 bytes of the metrics, 360 of the costs),
    so each read went through every cache line of the array. An array is left as it is
    when it is a file on disk (np.memmap: the results did not fit in memory) or larger than
    COLUMN_MAJOR_SHARE of the RAM (the copy has to fit beside it: a run may take
    MEMORY_SHARE, 90%, of the RAM).

    Only sums over scenarios of a 2-D slice (axis 0 of [scenario, strategy]) would add in
    another order in this layout; nothing after the loop takes one from these arrays
    (1-D columns, differences and order statistics are the same floats either way).
    Performance (reference, 10^6 scenarios, CPU-s): the copy of the metrics and the costs
    0.17 in row blocks of COLUMN_MAJOR_BLOCK (numpy.asfortranarray: 0.57), plus ~0.6 of
    system time where its 600 MB are fresh pages; the summaries, ranking, paired tests and
    report after it 4.8 -> 1.3 (shared_order_statistics in both; drivers, which read the
    world, unchanged). A run's own results come column by column from the chunk loop
    (simulate's column_major), so there is nothing to copy; a --precision run's are copied."""
    from ..backends.chunks import physical_memory

    memory = physical_memory()
    limit = None if memory is None else COLUMN_MAJOR_SHARE * memory
    return replace(result, **{name: _column_major(getattr(result, name), limit)
                              for name in ("metrics", "costs", "jobs")})


def _column_major(values, limit: float | None):
    """A Fortran-ordered copy of a 3-D array, by blocks of rows (see by_column)."""
    if (not isinstance(values, np.ndarray) or isinstance(values, np.memmap) or values.ndim != 3
            or values.flags.f_contiguous or (limit is not None and values.nbytes > limit)):
        return values
    out = np.empty(values.shape, dtype=values.dtype, order="F")
    for start in range(0, values.shape[0], COLUMN_MAJOR_BLOCK):
        out[start:start + COLUMN_MAJOR_BLOCK] = values[start:start + COLUMN_MAJOR_BLOCK]
    return out


def _shared(result: SimulationResult):
    """The block in which the summary and the report read the run's columns: each order
    statistic of a column is selected once (results.quantiles.shared_order_statistics)."""
    return shared_order_statistics(result.metrics, result.costs, result.jobs)


def write_steps(csv: bool, report: bool) -> tuple[str, ...]:
    """The steps of a run's `write` phase, named by the files each writes."""
    return ("metrics, bands and milestones (parquet)", "summary.json",
            *(("CSV files",) if csv else ()), *(("report.html, summary.md",) if report else ()))


def _write_files(run: RunResult, tables: list[Path], csv: bool, report: bool,
                 steps: Steps) -> RunResult:
    """The write phase after the tables: summary.json (with the milestones), the CSV
    copies, the report;
    `run.files` lists every file in the order they appear in."""
    summary, folder = run.summary, run.out_dir
    if run.detail.milestones is not None:
        summary["milestones"] = run.detail.milestones
    files = (write_json(folder / "summary.json", summary), *tables)
    steps.next()
    if csv:
        from ..report.schedule_tables import write_csvs

        files += tuple(write_csvs(folder, summary))
        steps.next()
    run = replace(run, files=files)
    if report:
        from ..report import write_report

        run = replace(run, files=run.files + tuple(write_report(run)))
        steps.next()
    return run
