"""What a run costs after its chunk loop, in CPU seconds per phase, read two ways in one process:

    .venv/bin/python benchmarks/bench_after_loop.py [--samples 1000000] [--repeat 3]
        [--scenario scenarios/reference-2048.toml]

The scenario is simulated once (Numba, every output but the report, into a temporary
folder); then the phases after the loop run --repeat times each way, alternated, and the
best CPU time (time.process_time: user and system, the page faults of fresh memory too)
of each phase counts:

  as simulated   the results in the chunk loop's layout (a column strided), every order
                 statistic selected where it is asked for (main before issue 27's work)
  by column      app.run.by_column first (its copy is the phase `by_column`), then the
                 phases inside results.quantiles.shared_order_statistics, as a run does

The phases, as benchmarks/output_phases.py names them: summaries (results.statistics.summarize,
results.horizon.beyond_horizon), ranking (results.ranking.rank), drivers
(results.drivers.drivers_summary), paired (results.compare.against_leader), report
(report.write_report less its replays of whole scenarios, which are kernel time).
"""
from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcrisk.app import run as app_run  # noqa: E402
from mcrisk.core.definitions import COMPLETION_DAY  # noqa: E402
from mcrisk.report import write_report  # noqa: E402
from mcrisk.results.quantiles import shared_order_statistics  # noqa: E402

PHASES = ("by_column", "summaries", "ranking", "drivers", "paired", "report")


def phases(run, columnar: bool) -> dict[str, float]:
    """CPU seconds of each phase after the loop of `run` (a RunResult with its detail)."""
    seconds = {}
    clock = time.process_time()
    result = app_run.by_column(run.result) if columnar else run.result
    seconds["by_column"] = time.process_time() - clock
    run = replace(run, result=result)
    shared = (shared_order_statistics(result.metrics, result.costs, result.jobs) if columnar
              else contextlib.nullcontext())
    names = result.plan.strategy_names
    replays = [0.0]

    def replay(index: int):
        started = time.process_time()
        try:
            return app_run.RunResult.replay(run, index)
        finally:
            replays[0] += time.process_time() - started

    with shared:
        clock = time.process_time()
        summary = app_run.summarize(result.metrics, names)
        for k, name in enumerate(names):
            summary[name]["beyond_horizon"] = app_run.beyond_horizon(
                result.metrics[:, k, COMPLETION_DAY], result.plan.horizon)
        seconds["summaries"] = time.process_time() - clock
        clock = time.process_time()
        ranking = app_run.rank(result.metrics, names, summary)["ranking"]
        seconds["ranking"] = time.process_time() - clock
        clock = time.process_time()
        app_run.drivers_summary(result.plan, result.metrics, result.world,
                                top=app_run.DRIVERS_TOP)
        seconds["drivers"] = time.process_time() - clock
        clock = time.process_time()
        app_run.against_leader(result.metrics, names, ranking)
        seconds["paired"] = time.process_time() - clock
        with tempfile.TemporaryDirectory() as folder:
            timed = replace(run, out_dir=Path(folder))
            object.__setattr__(timed, "replay", replay)     # a frozen dataclass's method
            clock = time.process_time()
            write_report(timed)
            seconds["report"] = time.process_time() - clock - replays[0]
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "reference-2048.toml"))
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        run = app_run.run_scenario(args.scenario, samples=args.samples, backend="numba",
                                   out_dir=Path(folder) / "out", report=False)
    run = replace(run, result=replace(run.result, metrics=run.result.metrics.copy(order="C"),
                                      costs=None if run.result.costs is None
                                      else run.result.costs.copy(order="C"),
                                      jobs=None if run.result.jobs is None
                                      else run.result.jobs.copy(order="C")))
    if run.detail.milestones is not None:
        run.summary["milestones"] = run.detail.milestones
    best = {way: dict.fromkeys(PHASES, float("inf")) for way in ("as simulated", "by column")}
    phases(run, True)                           # Numba's loads and compiles, outside the timings
    for _ in range(args.repeat):
        for way, fastest in best.items():
            for phase, spent in phases(run, way == "by column").items():
                fastest[phase] = min(fastest[phase], spent)
    print(f"{Path(args.scenario).name}, {args.samples:,} scenarios: CPU seconds after the "
          f"chunk loop, best of {args.repeat}")
    print(f"{'phase':12s}" + "".join(f"{way:>15s}" for way in best))
    for phase in PHASES:
        print(f"{phase:12s}" + "".join(f"{best[way][phase]:15.3f}" for way in best))
    print(f"{'total':12s}" + "".join(f"{sum(best[way].values()):15.3f}" for way in best))


if __name__ == "__main__":
    main()
