"""Where a whole run's time goes after the kernel: each phase's seconds, this checkout against
an earlier commit, in one run.

    python benchmarks/output_phases.py [--before REF | --floor] [--samples 1000000]
        [--repeats 1] [--scenario scenarios/reference-2048.toml] [--seed 1] [--json FILE]

Each measurement is one mcrisk.app.run.run_scenario(..., backend="numba", out_dir=TMP) call (every
output file and the report, as `mcrisk run --quiet` writes them) in a fresh child process whose
PYTHONPATH points at the tree measured: this checkout ("after") and, with --before, a git
worktree of REF ("before"), alternated so that a noisy neighbour hurts both alike. Numba is
warmed up (cache or JIT) in the child first, outside the timings.

The child wraps the functions of each phase (those a version lacks are skipped) and charges
every second to the innermost phase running, so nested phases are not counted twice:

  kernel            Backend.simulate_chunk: the simulation itself (also the mitigation
                    counterpart's and the report's replays: counted here, as simulation)
  metrics.parquet   the chunk hook writing metrics.parquet, and its commit
  bands             the capacity/power hook, the bands and hall power, capacity_bands.parquet
  milestones        the milestone hook, its summary, milestones.parquet
  summaries         results.statistics.summarize, results.horizon.beyond_horizon
  ranking           results.ranking.rank (the paired tests of the ranking)
  drivers           results.drivers.drivers_summary
  paired            results.compare.against_leader
  mitigation        mitigation_entry less its kernel time (its statistics)
  summary.json      write_json
  report            report.write_report less its replays (figures, report.html, summary.md)
  other             the rest of the call (the chunk loop's copies, compile, imports on demand)

"outputs" is the whole call less the kernel: what the issue asks to cost at most the kernel.
The chunk hooks run on threads side by side (metrics.parquet beside the bands and the
milestones; since issue 27 metrics.parquet is written behind the chunk loop, beside the next
kernels and the summaries), so their phases overlap: "outputs" is the figure to read, the
phases say where the work is.

With --floor, this checkout is measured three ways in the same call, to show how close to the
kernel a run could come if the streamed outputs cost nothing: "every output" (as above),
"no milestones or bands" (the milestone hook off, as bench_milestones.py switches it, and the
band hook on the first chunk only, so that the bands and the report still exist) and "nothing
streamed" (that, and no metrics.parquet: `scenarios_out=False`). The last two are not runs a
user can ask for; they bound what making those hooks cheaper could ever give.
"""
from __future__ import annotations

import argparse
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# The Numba backend by the name every version knows: "cpu" before issue 11 named it "numba"
# (an alias since), so that --before can reach back past the redesign (21a05d5, say).
NUMBA = "cpu"

# phase -> [(module, attribute path)]; the first phase listing a function owns it
PHASES = {
    "kernel": [("mcrisk.backends", "Backend.simulate_chunk")],
    "metrics.parquet": [("mcrisk.report.tables", "MetricsWriter.__call__"),
                        ("mcrisk.report.tables", "MetricsWriter.commit")],
    "bands": [("mcrisk.results.bands", "BandCollector._add_strategy"),   # each task
              ("mcrisk.results.bands", "BandCollector.bands"),
              ("mcrisk.results.bands", "BandCollector.hall_power"),
              ("mcrisk.app.collect", "write_bands")],
    "milestones": [("mcrisk.results.milestones", "MilestoneCollector.__call__"),
                   ("mcrisk.results.milestones", "MilestoneCollector._add_compiled"),
                   ("mcrisk.results.milestones", "MilestoneCollector._add_by_numpy"),
                   ("mcrisk.results.milestones", "MilestoneCollector.summary"),
                   ("mcrisk.app.collect", "write_milestones_parquet")],
    "summaries": [("mcrisk.app.run", "summarize"), ("mcrisk.app.run", "beyond_horizon")],
    "ranking": [("mcrisk.app.run", "rank")],
    "drivers": [("mcrisk.app.run", "drivers_summary")],
    "paired": [("mcrisk.app.run", "against_leader")],
    "mitigation": [("mcrisk.app.run", "mitigation_entry")],
    "summary.json": [("mcrisk.app.run", "write_json")],
    "report": [("mcrisk.report", "write_report")],
}


class Clock:
    """Seconds per phase, each charged to the innermost phase running in its thread (the
    chunk hooks run on threads side by side: their phases overlap, so the phases can add up
    to more than the whole run, and `other` can come out negative)."""

    def __init__(self):
        self.seconds: dict[str, float] = {}
        self.lock = threading.Lock()
        self.local = threading.local()       # .stack: [phase, started, nested seconds]

    def wrap(self, phase: str, function):
        def timed(*args, **kwargs):
            stack = self.local.__dict__.setdefault("stack", [])
            stack.append([phase, time.perf_counter(), 0.0])
            try:
                return function(*args, **kwargs)
            finally:
                _, started, nested = stack.pop()
                spent = time.perf_counter() - started
                with self.lock:
                    self.seconds[phase] = self.seconds.get(phase, 0.0) + spent - nested
                if stack:
                    stack[-1][2] += spent
        return timed


def instrument(clock: Clock) -> list[str]:
    """Wrap every phase's functions that this version has; returns those it lacks."""
    missing = []
    for phase, places in PHASES.items():
        for module_name, path in places:
            try:
                owner = importlib.import_module(module_name)
            except ImportError:
                missing.append(f"{module_name}.{path}")
                continue
            *parents, name = path.split(".")
            for part in parents:
                owner = getattr(owner, part, None)
            if owner is None or not hasattr(owner, name):
                missing.append(f"{module_name}.{path}")
                continue
            setattr(owner, name, clock.wrap(phase, getattr(owner, name)))
    return missing


FLOOR = {"every output": (), "no milestones or bands": ("milestones", "bands"),
         "nothing streamed": ("milestones", "bands", "metrics.parquet")}


def skip_hooks(skipped: tuple[str, ...]) -> dict:
    """Switch off the chunk hooks named (--floor); run_scenario's keyword arguments for it."""
    import mcrisk.app.collect as collect
    from mcrisk.results.bands import BandCollector
    if "milestones" in skipped:
        collect.COLLECT_MILESTONES = False
    if "bands" in skipped:
        tasks = BandCollector.tasks
        BandCollector.tasks = lambda self, first, *rest: (tasks(self, first, *rest)
                                                          if first == 0 else [])
    return {"scenarios_out": False} if "metrics.parquet" in skipped else {}


def child(scenario: str, samples: int, seed: int, skipped: tuple[str, ...] = ()) -> dict:
    """One timed run in this process (the tree on PYTHONPATH), without the hooks `skipped`."""
    from mcrisk.backends import select_backend
    from mcrisk.plan.compile import compile_scenario
    from mcrisk.scenario import load_scenario
    import mcrisk.report  # noqa: F401  (loaded before the clock, as a warm process has it)
    import mcrisk.app.collect  # noqa: F401
    import mcrisk.report.figures.charts  # noqa: F401
    import mcrisk.app.run

    options = skip_hooks(skipped)
    plan = compile_scenario(load_scenario(scenario))
    select_backend(NUMBA).simulate_chunk(plan, seed, 0, 64, True)   # JIT / cache
    clock = Clock()
    missing = instrument(clock)
    folder = tempfile.mkdtemp(prefix="mcrisk-phases-")
    try:
        started = time.perf_counter()
        run = mcrisk.app.run.run_scenario(scenario, samples=samples, seed=seed, backend=NUMBA,
                                      out_dir=Path(folder) / "out", **options)
        whole = time.perf_counter() - started
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    phases = dict(clock.seconds)
    phases["other"] = whole - sum(phases.values())
    return {"samples": samples, "strategies": run.plan.n_strategies, "whole": whole,
            "wall_seconds": run.summary["wall_seconds"], "phases": phases,
            "missing": missing}


def worktree(ref: str, into: Path) -> Path:
    path = into / f"before-{ref[:12]}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), ref],
                   check=True, capture_output=True)
    return path


def measure(source: Path, args, skipped: tuple[str, ...] = ()) -> dict:
    env = dict(os.environ, PYTHONPATH=str(source))
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--scenario",
               str(ROOT / args.scenario), "--samples", str(args.samples), "--seed",
               str(args.seed), "--skip", ",".join(skipped)]
    done = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"child failed in {source}:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def table(results: dict[str, list[dict]]) -> str:
    names = list(results)
    best = {n: min(results[n], key=lambda r: r["whole"]) for n in names}
    phases = list(PHASES) + ["other"]
    lines = ["| phase | " + " | ".join(f"{n}, s" for n in names)
             + (" | after/before |" if len(names) == 2 else " |"),
             "| --- |" + " --- |" * (len(names) + (len(names) == 2))]

    def row(label, values):
        cells = [f"{v:,.2f}" for v in values]
        ratio = (f" {values[1] / values[0]:.2f}x |" if len(values) == 2 and values[0] > 0
                 else (" |" if len(values) == 2 else ""))
        lines.append(f"| {label} | " + " | ".join(cells) + " |" + ratio)

    for phase in phases:
        row(phase, [best[n]["phases"].get(phase, 0.0) for n in names])
    row("**whole run**", [best[n]["whole"] for n in names])
    outputs = [best[n]["whole"] - best[n]["phases"].get("kernel", 0.0) for n in names]
    row("**outputs (whole - kernel)**", outputs)
    lines.append("| outputs / kernel | " + " | ".join(
        f"{o / best[n]['phases']['kernel']:.2f}" for o, n in zip(outputs, names)) + " |"
        + (" |" if len(names) == 2 else ""))
    row("summary.json wall_seconds", [best[n]["wall_seconds"] for n in names])
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="git ref to compare against (a worktree of it)")
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--samples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--json", help="also write the measurements here")
    parser.add_argument("--floor", action="store_true",
                        help="this checkout with every output, without the milestone and band "
                             "hooks, and with nothing streamed (not with --before)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--skip", default="", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        skipped = tuple(name for name in args.skip.split(",") if name)
        print(json.dumps(child(args.scenario, args.samples, args.seed, skipped)))
        return 0
    if args.floor and args.before:
        parser.error("--floor measures this checkout alone: leave out --before")
    tmp = Path(tempfile.mkdtemp(prefix="mcrisk-phases-tree-"))
    runs = {"after": (ROOT, ())}             # name -> (tree on PYTHONPATH, hooks skipped)
    if args.before:
        runs = {"before": (worktree(args.before, tmp), ()), "after": (ROOT, ())}
    if args.floor:
        runs = {name: (ROOT, skipped) for name, skipped in FLOOR.items()}
    try:
        results: dict[str, list[dict]] = {name: [] for name in runs}
        for _ in range(args.repeats):
            for name, (source, skipped) in runs.items():
                results[name].append(measure(source, args, skipped))
                print(f"{name}: {results[name][-1]['whole']:.1f} s", file=sys.stderr,
                      flush=True)
    finally:
        if args.before:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(runs["before"][0])], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.scenario}, {args.samples:,} scenarios, seed {args.seed}, backend numba, "
          f"{os.cpu_count()} cores; best of {args.repeats} by whole run")
    print(table(results))
    for name, runs in results.items():
        if runs[0]["missing"]:
            print(f"{name}: not in this version: {', '.join(runs[0]['missing'])}")
    print(f"reproduce: python benchmarks/output_phases.py {' '.join(argv or sys.argv[1:])}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
