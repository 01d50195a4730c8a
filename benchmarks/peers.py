"""mcrisk's backends against a plain SimPy model of the same migration, in one run.

    python benchmarks/peers.py [--scenario scenarios/reference-2048.toml] [--simpy-samples 1000]
        [--numpy-samples 20000] [--numba-samples 262144] [--gpu-samples 1000000] [--repeats 3]

Measures scenario-strategies per second (scenarios x strategies / wall seconds, best of
--repeats, each repeat on fresh scenario indices) of
  (a) benchmarks/simpy_model.py, the SimPy peer (one process, one core),
  (b) the NumPy reference backend (vectorized over scenarios, one core),
  (c) the Numba backend on every core numba sees, and on one thread,
  (d) the cuda backend (GPU), when mcrisk.backends.gpu_unavailable_reason() is None,
each through the call the driver makes (simulate_chunk: metrics and inputs back in host
memory; the SimPy peer returns metrics only). Numba's JIT and the GPU module are warmed up
first. Prints the table with ratios against SimPy and the command that reproduces it.
Machines here are shared and noisy: quote ratios from one run.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numba  # noqa: E402

from mcrisk.backends import gpu_unavailable_reason  # noqa: E402
from mcrisk.backends import numba as numba_backend  # noqa: E402
from mcrisk.backends import numpy as numpy_backend  # noqa: E402
from mcrisk.compile import compile_scenario  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402

import simpy_model  # noqa: E402


def best_seconds(run, samples: int, repeats: int) -> float:
    """Fewest wall seconds of run(first, count) over `repeats` calls on fresh scenarios."""
    best = float("inf")
    for r in range(repeats):
        started = time.perf_counter()
        run(r * samples, samples)
        best = min(best, time.perf_counter() - started)
    return best


def measure(args) -> list[dict]:
    """[{name, threads, samples, seconds, rate}] for every peer that can run here."""
    plan = compile_scenario(load_scenario(str(ROOT / args.scenario)))
    plans = simpy_model.read_plans(ROOT / args.scenario)
    n_strategies = plan.n_strategies
    rows = []

    def add(name, threads, samples, seconds):
        rows.append({"name": name, "threads": threads, "samples": samples,
                     "seconds": seconds, "rate": samples * n_strategies / seconds})

    add("simpy model", 1, args.simpy_samples, best_seconds(
        lambda first, n: simpy_model.simulate(plans, n, args.seed, first),
        args.simpy_samples, args.repeats))
    add("numpy reference", 1, args.numpy_samples, best_seconds(
        lambda first, n: numpy_backend.simulate_chunk(plan, args.seed, first, n),
        args.numpy_samples, args.repeats))
    numba_backend.simulate_chunk(plan, args.seed, 0, 64)               # JIT compile (or cache load)
    threads = numba.get_num_threads()
    add("numba cpu", threads, args.numba_samples, best_seconds(
        lambda first, n: numba_backend.simulate_chunk(plan, args.seed, first, n),
        args.numba_samples, args.repeats))
    if threads > 1:
        numba.set_num_threads(1)
        add("numba cpu", 1, args.numba_samples // threads, best_seconds(
            lambda first, n: numba_backend.simulate_chunk(plan, args.seed, first, n),
            args.numba_samples // threads, args.repeats))
        numba.set_num_threads(threads)
    reason = gpu_unavailable_reason()
    if reason is None:
        from mcrisk.backends import cuda

        cuda.simulate_chunk(plan, args.seed, 0, 1024)         # module compile and load
        add("gpu", "device", args.gpu_samples, best_seconds(
            lambda first, n: cuda.simulate_chunk(plan, args.seed, first, n),
            args.gpu_samples, args.repeats))
    return rows, reason, plan


def format_table(rows) -> str:
    simpy = rows[0]["rate"]
    lines = ["| peer | threads | scenarios timed | scenario-strategies/s | us per scenario-strategy"
             " | x SimPy |", "| --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row['name']} | {row['threads']} | {row['samples']:,} | "
                     f"{row['rate']:,.0f} | {1e6 / row['rate']:,.2f} | "
                     f"{row['rate'] / simpy:,.0f} |")
    return "\n".join(lines)


def command_line(args) -> str:
    return (f"python benchmarks/peers.py --scenario {args.scenario} --simpy-samples "
            f"{args.simpy_samples} --numpy-samples {args.numpy_samples} --numba-samples "
            f"{args.numba_samples} --gpu-samples {args.gpu_samples} --repeats {args.repeats} "
            f"--seed {args.seed}")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--simpy-samples", type=int, default=1_000)
    parser.add_argument("--numpy-samples", type=int, default=20_000)
    parser.add_argument("--numba-samples", type=int, default=262_144)
    parser.add_argument("--gpu-samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    args = parser.parse_args(argv)
    if args.scenario != "scenarios/reference-2048.toml":
        parser.error("the SimPy peer models the reference scenario only")
    rows, reason, plan = measure(args)
    print(f"{args.scenario}: {plan.n_strategies} strategies; {os.cpu_count()} cores "
          f"({platform.processor() or platform.machine()}), numba {numba.__version__}")
    print(format_table(rows))
    if reason is not None:
        print(f"gpu: not available here ({reason})")
    numba_all = rows[2]["rate"] / rows[0]["rate"]
    print(f"numba / simpy = {numba_all:,.0f}x (target >= 1000x): "
          f"{'met' if numba_all >= 1000 else 'NOT met'}")
    print(f"reproduce: {command_line(args)}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "gpu_unavailable": reason,
                                         "command": command_line(args)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
