"""Peak memory of CPU runs of the reference, each in a fresh child process.

    python benchmarks/memory.py [--scenario scenarios/reference-2048.toml]
        [--no-out-samples 10000000] [--out-samples 1000000] [--seed 1]

Runs, each in its own `python benchmarks/memory.py --child ...` process:
  * mcrisk.run.run_scenario(..., backend="numba", out_dir=None) on --no-out-samples scenarios
    (the driver keeps every scenario's metrics, 6 float64 per strategy, and the drawn inputs
    of the first 250,000 scenarios only; chunks stream through);
  * the same with out_dir (summary.json, metrics.parquet and capacity_bands.parquet streamed
    chunk by chunk, then report.html and summary.md) on --out-samples scenarios, in a
    temporary folder that is removed afterwards (file sizes are printed).
The child reports its own peak resident set (getrusage ru_maxrss), the resident set after
imports and the Numba JIT warm-up (what any run costs), the largest resident set seen after a
chunk of the driver (the simulation phase; the rest of the peak is summary and analysis), and
wall seconds. Target: under 4 GB
for 1e7 x 5 strategies.
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


def peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024   # Linux: kB


def current_rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def child(scenario: str, samples: int, seed: int, out_dir: str | None) -> dict:
    """One run in this process; what it cost."""
    sys.path.insert(0, str(ROOT))
    from mcrisk.backends import numba as numba_backend
    from mcrisk.compile import compile_scenario
    from mcrisk.run import run_scenario
    from mcrisk.scenario import load_scenario

    plan = compile_scenario(load_scenario(scenario))
    numba_backend.simulate_chunk(plan, seed, 0, 64)                 # JIT / cache
    if out_dir is not None:
        import mcrisk.report  # noqa: F401  (the report stack, loaded as a run with out_dir does)
    baseline = current_rss_bytes()
    during = []                          # resident set after each chunk of the driver

    def progress(done: int, total: int) -> None:
        during.append(current_rss_bytes())

    started = time.perf_counter()
    run = run_scenario(scenario, samples=samples, seed=seed, backend="numba", out_dir=out_dir,
                       progress=progress)
    seconds = time.perf_counter() - started
    files = {p.name: p.stat().st_size for p in run.files} if out_dir else {}
    return {"samples": samples, "strategies": run.plan.n_strategies, "out_dir": bool(out_dir),
            "seconds": seconds, "simulate_seconds": run.result.wall_seconds,
            "baseline_rss": baseline, "peak_rss": peak_rss_bytes(),
            "simulate_rss": max(during),
            "metrics_bytes": run.result.metrics.nbytes, "world_bytes": run.result.world.nbytes,
            "files": files}


def measure(scenario: str, samples: int, seed: int, with_out: bool) -> dict:
    """Run `child` in a fresh interpreter and return its report."""
    command = [sys.executable, __file__, "--child", "--scenario", scenario,
               "--samples", str(samples), "--seed", str(seed)]
    folder = tempfile.mkdtemp(prefix="mcrisk-memory-") if with_out else None
    try:
        if folder:
            command += ["--out", folder]
        done = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    finally:
        if folder:
            shutil.rmtree(folder, ignore_errors=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def format_row(r: dict) -> str:
    what = "run_scenario, " + ("out_dir (Parquet + report)" if r["out_dir"] else "out_dir=None")
    return (f"| {r['samples']:,} x {r['strategies']} | {what} | {r['peak_rss'] / GB:.2f} GB | "
            f"{r['baseline_rss'] / GB:.2f} GB | {r['simulate_rss'] / GB:.2f} GB | "
            f"{r['metrics_bytes'] / GB:.2f} GB + "
            f"{r['world_bytes'] / GB:.2f} GB | {r['simulate_seconds']:,.1f} s | "
            f"{r['seconds']:,.1f} s |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--no-out-samples", type=int, default=10_000_000)
    parser.add_argument("--out-samples", type=int, default=1_000_000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--samples", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--out", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        print(json.dumps(child(args.scenario, args.samples, args.seed, args.out)))
        return 0
    rows = [measure(args.scenario, args.no_out_samples, args.seed, with_out=False),
            measure(args.scenario, args.out_samples, args.seed, with_out=True)]
    print(f"{args.scenario}, seed {args.seed}, backend numba, {os.cpu_count()} cores")
    print("| scenarios x strategies | call | peak RSS | RSS before the run | largest RSS "
          "during simulate | kept metrics + inputs | simulate | whole call |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for row in rows:
        print(format_row(row))
    for name, size in rows[1]["files"].items():
        print(f"  {rows[1]['samples']:,}-scenario run wrote {name}: {size / 1e6:,.1f} MB")
    verdict = "met" if rows[0]["peak_rss"] < 4 * GB else "NOT met"
    print(f"target: {rows[0]['samples']:,} x {rows[0]['strategies']} under 4 GB: {verdict}")
    print(f"reproduce: python benchmarks/memory.py --scenario {args.scenario} --no-out-samples "
          f"{args.no_out_samples} --out-samples {args.out_samples} --seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
