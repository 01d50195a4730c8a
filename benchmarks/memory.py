"""Peak memory of CPU runs of the reference, each in a fresh child process.

    python benchmarks/memory.py [--scenario scenarios/reference-2048.toml]
        [--no-out-samples 10000000 ...] [--out-samples 1000000 ...] [--seed 1]
        [--before REF]

Runs, each in its own `python benchmarks/memory.py --child ...` process:
  * mcrisk.app.run.run_scenario(..., backend="numba", out_dir=None) on --no-out-samples scenarios
    (the driver keeps every scenario's metrics, 6 float64 per strategy, and the drawn inputs
    of the first 250,000 scenarios only; chunks stream through);
  * the same with out_dir (summary.json, metrics.parquet and capacity_bands.parquet streamed
    chunk by chunk, then report.html and summary.md) on --out-samples scenarios, in a
    temporary folder that is removed afterwards (file sizes are printed).
The child reports its own peak resident set (getrusage ru_maxrss), the peaks of its own
memory and of the file pages mapped into it (RssAnon and RssFile of /proc/self/status,
sampled every 50 ms: a run past 1 GB of kept results keeps them in a mapped file,
mcrisk.backends.kept, whose pages the system writes back and drops under pressure, so the
target counts the run's own memory), the resident set after
imports and the Numba JIT warm-up (what any run costs), the largest resident set seen after a
chunk of the driver (the simulation phase; the rest of the peak is summary and analysis), wall
seconds, and mcrisk.backends.chunks.memory_needed's estimate for the run (of the tree measured).
Several sizes without outputs give the peak's growth per scenario and its fixed part (a
straight line through the smallest and largest), and so the peak at 10^7 without running it:
take sizes past the 250,000 scenarios whose inputs a run keeps (2e6 and 4e6, say), below it
the kept inputs still grow. Measured on the reference (issue 12): 1.155 and 1.621 GB at 2e6
and 4e6 (0.69 GB + 233 B a scenario), 3.08 GB at 1e7; memory_needed within 2% of each.
With --before REF every run is repeated on a git worktree of REF, alternating. Target: under
4 GB for 1e7 x 5 strategies.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GB = 1e9
# The Numba backend by the name every version knows: "cpu" before issue 11 named it "numba"
# (an alias since), so that --before can reach back past the redesign (21a05d5, say).
NUMBA = "cpu"


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # Linux: kB


def current_rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def anonymous_rss_bytes() -> tuple[int, int]:
    """(RssAnon, RssFile) of this process: its own memory, and the file pages mapped into it
    (the page cache's, which the system drops under pressure: a run keeping its results in a
    file, mcrisk.backends.kept, has them there)."""
    found = {}
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(("RssAnon:", "RssFile:")):
                key, value = line.split(":")
                found[key] = int(value.split()[0]) * 1024
    return found.get("RssAnon", 0), found.get("RssFile", 0)


class PeakSampler:
    """The largest RssAnon and RssFile seen, sampled every `every` seconds on a thread."""

    def __init__(self, every: float = 0.05) -> None:
        import threading
        self.anon = self.file = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(every,), daemon=True)
        self._thread.start()

    def _run(self, every: float) -> None:
        while not self._stop.wait(every):
            anon, file = anonymous_rss_bytes()
            self.anon, self.file = max(self.anon, anon), max(self.file, file)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def child(scenario: str, samples: int, seed: int, out_dir: str | None) -> dict:
    """One run in this process (mcrisk from the tree on PYTHONPATH); what it cost."""
    from mcrisk.backends import select_backend
    from mcrisk.plan.compile import compile_scenario
    from mcrisk.app.run import run_scenario
    from mcrisk.scenario import load_scenario

    plan = compile_scenario(load_scenario(scenario))
    select_backend(NUMBA).simulate_chunk(plan, seed, 0, 64)         # JIT / cache
    if out_dir is not None:
        import mcrisk.report  # noqa: F401  (the report stack, loaded as a run with out_dir does)
    baseline = current_rss_bytes()
    during = []                          # resident set after each chunk of the driver

    def progress(done: int, total: int) -> None:
        during.append(current_rss_bytes())

    sampler = PeakSampler()
    started = time.perf_counter()
    run = run_scenario(scenario, samples=samples, seed=seed, backend=NUMBA, out_dir=out_dir,
                       progress=progress)
    seconds = time.perf_counter() - started
    sampler.stop()
    files = {p.name: p.stat().st_size for p in run.files} if out_dir else {}
    from mcrisk.backends.chunks import memory_needed
    return {"samples": samples, "strategies": run.plan.n_strategies, "out_dir": bool(out_dir),
            "seconds": seconds, "simulate_seconds": run.result.wall_seconds,
            "baseline_rss": baseline, "peak_rss": peak_rss_bytes(),
            "simulate_rss": max(during),
            "peak_anon": sampler.anon, "peak_file": sampler.file,
            "metrics_bytes": run.result.metrics.nbytes, "world_bytes": run.result.world.nbytes,
            "estimate": memory_needed(plan, samples, keep_nodes=out_dir is not None),
            "files": files}


def measure(scenario: str, samples: int, seed: int, with_out: bool,
            source: Path = ROOT) -> dict:
    """Run `child` in a fresh interpreter importing mcrisk from `source`; its report."""
    command = [sys.executable, str(Path(__file__).resolve()), "--child", "--scenario",
               str(ROOT / scenario), "--samples", str(samples), "--seed", str(seed)]
    folder = tempfile.mkdtemp(prefix="mcrisk-memory-") if with_out else None
    env = dict(os.environ, PYTHONPATH=str(source))
    try:
        if folder:
            command += ["--out", folder]
        done = subprocess.run(command, cwd=source, env=env, capture_output=True, text=True,
                              check=True)
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def format_row(tree: str, r: dict) -> str:
    what = "run_scenario, " + ("out_dir (Parquet + report)" if r["out_dir"] else "out_dir=None")
    estimate = r.get("estimate")
    off = f"{estimate / GB:.2f} GB ({estimate / r['peak_rss'] - 1:+.0%})" if estimate else "-"
    return (f"| {tree} | {r['samples']:,} x {r['strategies']} | {what} | "
            f"{r['peak_rss'] / GB:.2f} GB | {r['peak_anon'] / GB:.2f} GB + "
            f"{r['peak_file'] / GB:.2f} GB | {r['baseline_rss'] / GB:.2f} GB | "
            f"{r['simulate_rss'] / GB:.2f} GB | {r['metrics_bytes'] / GB:.2f} GB + "
            f"{r['world_bytes'] / GB:.2f} GB | {off} | {r['simulate_seconds']:,.1f} s | "
            f"{r['seconds']:,.1f} s |")


def growth(rows: list[dict]) -> tuple[float, float] | None:
    """(bytes per scenario, fixed bytes) of the peak through the smallest and largest run
    without outputs; None with fewer than two sizes."""
    runs = sorted((r for r in rows if not r["out_dir"]), key=lambda r: r["samples"])
    if len(runs) < 2 or runs[0]["samples"] == runs[-1]["samples"]:
        return None
    small, large = runs[0], runs[-1]
    slope = (large["peak_rss"] - small["peak_rss"]) / (large["samples"] - small["samples"])
    return slope, small["peak_rss"] - slope * small["samples"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--no-out-samples", type=int, nargs="*", default=[10_000_000])
    parser.add_argument("--out-samples", type=int, nargs="*", default=[1_000_000])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--before", help="git ref to measure too (a worktree of it)")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.scenario, args.samples, args.seed, args.out)))
        return 0
    tmp = Path(tempfile.mkdtemp(prefix="mcrisk-memory-tree-"))
    trees = {"after": ROOT}
    if args.before:
        trees = {"before": tmp / "before", "after": ROOT}
        subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f",
                        str(trees["before"]), args.before], check=True, capture_output=True)
    rows: dict[str, list[dict]] = {name: [] for name in trees}
    try:
        for samples, with_out in ([(n, False) for n in args.no_out_samples]
                                  + [(n, True) for n in args.out_samples]):
            for name, source in trees.items():
                rows[name].append(measure(args.scenario, samples, args.seed, with_out, source))
    finally:
        if args.before:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(trees["before"])], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"{args.scenario}, seed {args.seed}, backend numba, {os.cpu_count()} cores")
    print("| tree | scenarios x strategies | call | peak RSS | peak own (RssAnon) + mapped "
          "file pages (RssFile) | RSS before the run | largest RSS during simulate | kept "
          "metrics + inputs | memory_needed (vs peak) | simulate | whole call |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for index in range(len(rows["after"])):
        for name in trees:
            print(format_row(name, rows[name][index]))
    for name in trees:
        fit = growth(rows[name])
        if fit:
            slope, fixed = fit
            print(f"{name}: peak = {fixed / GB:.2f} GB + {slope:,.0f} B x scenarios "
                  f"-> {(fixed + slope * 1e7) / GB:.2f} GB at 10,000,000 x 5")
        for r in rows[name]:
            if r["out_dir"]:
                for file, size in r["files"].items():
                    print(f"  {name}, {r['samples']:,} scenarios: {file} {size / 1e6:,.1f} MB")
    for r in rows["after"]:
        if r["samples"] >= 10_000_000:      # the target: the run's own memory (RssAnon)
            verdict = "met" if r["peak_anon"] < 4 * GB else "NOT met"
            outputs = "with outputs" if r["out_dir"] else "without outputs"
            print(f"target: {r['samples']:,} x {r['strategies']} {outputs} under 4 GB of "
                  f"its own memory: {verdict} ({r['peak_anon'] / GB:.2f} GB; mapped file "
                  f"pages {r['peak_file'] / GB:.2f} GB)")
    print(f"reproduce: python benchmarks/memory.py {' '.join(argv or sys.argv[1:])}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
