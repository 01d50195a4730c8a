"""What the report's figures cost: the reference run (20,000 scenarios by default) is simulated
once without a report, its figure inputs are built as mcrisk/report/__init__.py's report_parts
builds them (colours, replayed scenario paths, the completion axis), and then only the six
figures are timed, each several times (the minimum counts: the machine is shared and noisy).

With --against REV (repeatable) the charts module as committed at REV (`git show
REV:mcrisk/report/figures/charts.py`, loaded beside the working copy as
mcrisk.report.figures._charts_at_REV; its imports resolve in the working copy; a REV from
before the charts moved there, in issue 23, is not found) is timed in the same
run, repetitions interleaved, so that the ratios compare like with like:

    .venv/bin/python benchmarks/bench_report.py --against REV1 [--against REV2] [--repeat 5]

--parallel also times the six figures rendered by a 2-process pool (fork), pool start
included, against the same figures in one process.

Prints per figure and in total: seconds (best of --repeat) and the image's size, and for
each REV its time over the working copy's.
"""
from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcrisk.app.run import run_scenario  # noqa: E402

FIGURE_NAMES = ("fan", "island", "trough", "completion", "homeless", "power")


def module_at(rev: str) -> types.ModuleType:
    """mcrisk/report/figures/charts.py as committed at `rev`, importable beside the working
    copy (its relative imports resolve inside mcrisk.report.figures, as the original's do)."""
    source = subprocess.run(["git", "show", f"{rev}:mcrisk/report/figures/charts.py"], cwd=ROOT,
                            check=True, capture_output=True, text=True).stdout
    name = "mcrisk.report.figures._charts_at_" + "".join(c if c.isalnum() else "_" for c in rev)
    module = types.ModuleType(name)
    module.__package__ = "mcrisk.report.figures"
    module.__file__ = f"{rev}:mcrisk/report/figures/charts.py"
    sys.modules[name] = module                  # dataclasses look their module up there
    exec(compile(source, module.__file__, "exec"), module.__dict__)
    return module


def inputs(samples: int, backend: str):
    """The run and what report_parts computes before drawing: (run, paths, completion axis)."""
    from mcrisk.report.figures.paths import SEVERITY, representative_paths

    with tempfile.TemporaryDirectory() as tmp:
        run = run_scenario(str(ROOT / "scenarios" / "reference-2048.toml"), samples=samples,
                           backend=backend, out_dir=Path(tmp) / "out", report=False)
    plan, metrics = run.plan, run.result.metrics
    replayed: dict = {}
    paths = {chart: representative_paths(plan, run.replay, metrics, severity,
                                         replayed=replayed)
             for chart, severity in SEVERITY.items()}
    return run, paths


def calls(figures, run, paths) -> dict:
    """The six figure calls of report_parts, as argument-less functions, by figure name (the
    curve charts from data.curve_table's quantiles, as the report submits them)."""
    from mcrisk.core.labels import axis_label
    from mcrisk.report.figures import data

    plan, metrics, detail = run.plan, run.result.metrics, run.detail
    names = plan.strategy_names
    colors = data.strategy_colors(names)
    completion = data.completion_axis(metrics, names, plan.horizon)
    curves = data.curve_table(metrics, ["trough_depth", "trough_days", "shortfall_gpu_days",
                                        "homeless_days", "completion_day"])
    start = run.scenario.start_date
    trough = tuple((m, axis_label(m)) for m in ("trough_depth", "trough_days",
                                                 "shortfall_gpu_days"))
    return {
        "fan": lambda: figures.fan_chart(plan, detail.bands, colors, paths["fan"], start),
        "island": lambda: figures.largest_island_chart(plan, detail.bands, colors,
                                                       paths["island"], start),
        "trough": lambda: figures.exceedance_of(
            curves, names, colors, trough,
            "Trough depth, duration and shortfall: probability of exceeding"),
        "completion": lambda: figures.completion_of(curves["completion_day"], names, colors,
                                                    plan.horizon, completion, start),
        "homeless": lambda: figures.exceedance_of(
            curves, names, colors, (("homeless_days", axis_label("homeless_days")),),
            f"Homeless time of the largest job ({plan.largest_job:,.0f} H100-eq)"),
        "power": lambda: figures.power_chart(detail.hall_power, colors),
    }


def time_once(call) -> tuple[float, int]:
    started = time.perf_counter()
    out = call()
    return time.perf_counter() - started, len(out)


_POOL_CALLS: dict = {}


def _pool_render(name: str) -> bytes:
    return _POOL_CALLS[name]()


def time_pool(table: dict) -> float:
    """The six figures by a 2-process fork pool, the pool's start and end included."""
    import multiprocessing

    _POOL_CALLS.clear()
    _POOL_CALLS.update(table)
    started = time.perf_counter()
    with multiprocessing.get_context("fork").Pool(2) as pool:
        pool.map(_pool_render, FIGURE_NAMES, chunksize=1)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--against", metavar="REV", action="append", default=[],
                        help="also time report/figures/charts.py as at REV (repeatable)")
    parser.add_argument("--parallel", action="store_true", help="also time a 2-process pool")
    args = parser.parse_args()
    run, paths = inputs(args.samples, args.backend)
    current = importlib.import_module("mcrisk.report.figures.charts")
    variants = {rev: calls(module_at(rev), run, paths) for rev in args.against}
    variants["working copy"] = calls(current, run, paths)
    for table in variants.values():                 # warm: fonts, caches, lazy imports
        for call in table.values():
            call()
    best = {v: {f: float("inf") for f in FIGURE_NAMES} for v in variants}
    size = {v: {} for v in variants}
    pooled = []
    for _ in range(args.repeat):
        for variant, table in variants.items():
            for figure, call in table.items():
                seconds, size[variant][figure] = time_once(call)
                best[variant][figure] = min(best[variant][figure], seconds)
        if args.parallel:
            pooled.append(time_pool(variants["working copy"]))
    print(f"report figures, reference-2048, {args.samples:,} scenarios, best of {args.repeat} "
          "(seconds; bytes of the image)")
    heads = list(variants)
    print(f"  {'figure':<12}" + "".join(f"{h[:22]:>24}" for h in heads)
          + "".join(f"{h[:10] + '/now':>15}" for h in heads[:-1]))
    for figure in (*FIGURE_NAMES, "total"):
        cells = []
        for v in heads:
            seconds = sum(best[v].values()) if figure == "total" else best[v][figure]
            kb = sum(size[v].values()) if figure == "total" else size[v][figure]
            cells.append((seconds, kb))
        line = f"  {figure:<12}" + "".join(f"{s:>10.3f} s {b / 1024:>8.0f} kB" for s, b in cells)
        line += "".join(f"{seconds / cells[-1][0]:>14.2f}x" for seconds, _ in cells[:-1])
        print(line)
    if pooled:
        serial = sum(best["working copy"].values())
        print(f"  2-process pool, start included: {min(pooled):.3f} s against {serial:.3f} s "
              f"in one process ({serial / min(pooled):.2f}x)")


if __name__ == "__main__":
    main()
