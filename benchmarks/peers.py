"""mcrisk's backends against a plain SimPy model of the same migration, in one run.

    python benchmarks/peers.py [--scenario scenarios/reference-2048.toml] [--simpy-samples 1000]
        [--numpy-samples 20000] [--numba-samples 262144] [--gpu-samples 1000000] [--repeats 3]

Measures scenario-strategies per second (scenarios x strategies / seconds, best of --repeats,
each repeat on fresh scenario indices) of
  (a) benchmarks/simpy_model.py, the SimPy peer (one process, one core),
  (b) the NumPy reference backend (vectorized over scenarios, one core),
  (c) the Numba backend on every core numba sees, and on one thread,
  (d) the cuda backend (GPU), when mcrisk.backends.gpu_unavailable_reason() is None,
each through the call the driver makes (simulate_chunk: metrics and inputs back in host
memory; the SimPy peer returns metrics only). Numba's JIT and the GPU module are warmed up
first. The repeats are interleaved (each repeat times every peer once), so a neighbour that
slows the machine for a while slows every peer alike; one-thread peers are timed in process
time (their CPU seconds: the per-core rate, which time lost to a neighbour does not inflate),
the others in wall time. Prints the table with ratios against SimPy and the command that
reproduces it. Machines here are shared and noisy: quote ratios from one run.
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
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402

import simpy_model  # noqa: E402


def interleaved_best(peers: list[tuple], repeats: int) -> list[float]:
    """Fewest seconds of each peer's run(first, count) over `repeats` rounds; a round times
    every peer once, on fresh scenarios. peers: (run, samples, one_thread)."""
    best = [float("inf")] * len(peers)
    for r in range(repeats):
        for k, (run, samples, one_thread) in enumerate(peers):
            clock = time.process_time if one_thread else time.perf_counter
            started = clock()
            run(r * samples, samples)
            best[k] = min(best[k], clock() - started)
    return best


def with_threads(run, threads: int):
    """run(first, count) with Numba on `threads` threads, the setting restored after."""
    def timed(first, count):
        before = numba.get_num_threads()
        numba.set_num_threads(threads)
        try:
            return run(first, count)
        finally:
            numba.set_num_threads(before)
    return timed


def measure(args) -> list[dict]:
    """[{name, threads, samples, seconds, rate, clock}] for every peer that can run here."""
    plan = compile_scenario(load_scenario(str(ROOT / args.scenario)))
    plans = simpy_model.read_plans(ROOT / args.scenario)
    numba_backend.simulate_chunk(plan, args.seed, 0, 64)        # JIT compile (or cache load)
    threads = numba.get_num_threads()
    numba_run = lambda first, n: numba_backend.simulate_chunk(plan, args.seed, first, n)  # noqa: E731
    peers = [("simpy model", 1, args.simpy_samples,
              lambda first, n: simpy_model.simulate(plans, n, args.seed, first)),
             ("numpy reference", 1, args.numpy_samples,
              lambda first, n: numpy_backend.simulate_chunk(plan, args.seed, first, n)),
             ("numba cpu", threads, args.numba_samples, with_threads(numba_run, threads))]
    if threads > 1:
        peers.append(("numba cpu", 1, args.numba_samples // threads,
                      with_threads(numba_run, 1)))
    reason = gpu_unavailable_reason()
    if reason is None:
        from mcrisk.backends import cuda

        cuda.simulate_chunk(plan, args.seed, 0, 1024)         # module compile and load
        peers.append(("gpu", "device", args.gpu_samples,
                      lambda first, n: cuda.simulate_chunk(plan, args.seed, first, n)))
    seconds = interleaved_best([(run, samples, threads == 1)
                                for _, threads, samples, run in peers], args.repeats)
    rows = [{"name": name, "threads": threads, "samples": samples, "seconds": s,
             "rate": samples * plan.n_strategies / s,
             "clock": "process" if threads == 1 else "wall"}
            for (name, threads, samples, _), s in zip(peers, seconds)]
    return rows, reason, plan


def format_table(rows) -> str:
    simpy = rows[0]["rate"]
    lines = ["| peer | threads | scenarios timed | clock | scenario-strategies/s "
             "| us per scenario-strategy | x SimPy |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row in rows:
        lines.append(f"| {row['name']} | {row['threads']} | {row['samples']:,} | {row['clock']} | "
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
    per_core = next(r for r in rows if r["name"] == "numba cpu" and r["threads"] == 1)
    per_core = per_core["rate"] / rows[0]["rate"]
    print(f"numba / simpy = {numba_all:,.0f}x on {rows[2]['threads']} thread(s), "
          f"{per_core:,.0f}x per core (target >= 1000x per core): "
          f"{'met' if per_core >= 1000 else 'NOT met'}")
    print(f"reproduce: {command_line(args)}")
    if args.json:
        args.json.write_text(json.dumps({"rows": rows, "gpu_unavailable": reason,
                                         "command": command_line(args)}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
