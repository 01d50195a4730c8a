"""One run, end to end without printing: load -> compile -> simulate -> summarize -> write."""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Callable

from . import __version__
from .aggregate import rank, summarize
from .backends import Backend, select_backend
from .compile import CompiledScenario, compile_scenario
from .model import Scenario
from .outputs import write_json
from .rng import RNG_NAME
from .scenario import load_scenario
from .simulate import DEFAULT_CHUNK, SimulationResult, simulate

if TYPE_CHECKING:
    from .report.collect import RunDetail

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


def build_summary(scenario: Scenario, backend: Backend, result: SimulationResult,
                  chunk_size: int) -> dict:
    """The summary.json document (schema: ../shared/REFERENCE-SCENARIO.md)."""
    strategies = summarize(result.metrics, result.plan.strategy_names)
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
        "baseline_h100_eq": result.plan.baseline,
        "wall_seconds": round(result.wall_seconds, 3),
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "ranking": rank(strategies),
        "strategies": strategies,
    }


def run_scenario(path: str, samples: int = DEFAULT_SAMPLES, seed: int = DEFAULT_SEED,
                 backend: str = "auto", out_dir: str | Path | None = None,
                 chunk_size: int = DEFAULT_CHUNK,
                 progress: Callable[[int, int], None] | None = None,
                 report: bool = True) -> RunResult:
    """Run every strategy of the scenario at `path`.

    With out_dir, writes summary.json, metrics.parquet and capacity_bands.parquet there (the
    parquet files streamed chunk by chunk), then, if `report`, report.html and summary.md.
    Every file goes through a temporary name and a rename.
    """
    scenario = load_scenario(path)
    chosen = select_backend(backend)
    plan = compile_scenario(scenario)
    if out_dir is None:
        result = simulate(plan, samples, seed, chosen, chunk_size=chunk_size, progress=progress)
        summary = build_summary(scenario, chosen, result, chunk_size)
        return RunResult(scenario, plan, chosen, result, summary, None)
    from .report.collect import RunCollector  # the report stack loads only when asked for

    out = Path(out_dir)
    with RunCollector(plan, out) as collect:
        result = simulate(plan, samples, seed, chosen, chunk_size=chunk_size, progress=progress,
                          chunk_hooks=collect.hooks)
        tables, detail = collect.commit()
    summary = build_summary(scenario, chosen, result, chunk_size)
    files = (write_json(out / "summary.json", summary), *tables)
    run = RunResult(scenario, plan, chosen, result, summary, out, files, detail)
    if report:
        from .report import write_report

        run = replace(run, files=run.files + tuple(write_report(run)))
    return run
