"""Throughput of the CPU backends on one scenario, measured in one run.

    python benchmarks/bench_backends.py [--scenario scenarios/reference-2048.toml]
        [--numba-samples 262144] [--numpy-samples 20000] [--repeats 5] [--threads N]

Prints scenario-strategies per second (samples x strategies / wall seconds of the backend's
simulate_chunk, JIT compile excluded, best of --repeats) for NumPy and Numba, and their ratio.
Machines here are shared and noisy: quote ratios from one run, with this command.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numba  # noqa: E402

from mcrisk import __version__  # noqa: E402
from mcrisk.backends import numba as numba_backend  # noqa: E402
from mcrisk.backends import numpy as numpy_backend  # noqa: E402
from mcrisk.compile import compile_scenario  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402


def best_rate(backend, plan, samples: int, repeats: int) -> float:
    """Best scenario-strategies/s over `repeats` timed calls (first scenario varies)."""
    best = 0.0
    for r in range(repeats):
        started = time.perf_counter()
        backend.simulate_chunk(plan, 1, r * samples, samples)
        elapsed = time.perf_counter() - started
        best = max(best, samples * plan.n_strategies / elapsed)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--numba-samples", type=int, default=262_144)
    parser.add_argument("--numpy-samples", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)
    if args.threads:
        numba.set_num_threads(args.threads)
    plan = compile_scenario(load_scenario(args.scenario))
    numba_backend.simulate_chunk(plan, 1, 0, 64)                       # JIT compile (or cache load)
    numba_rate = best_rate(numba_backend, plan, args.numba_samples, args.repeats)
    numpy_rate = best_rate(numpy_backend, plan, args.numpy_samples, max(1, args.repeats // 2))
    result = {
        "scenario": args.scenario, "strategies": plan.n_strategies,
        "numba_threads": numba.get_num_threads(), "cpu_count": os.cpu_count(),
        "machine": platform.machine(), "processor": platform.processor(),
        "python": platform.python_version(), "numba": numba.__version__,
        "mcrisk": __version__,
        "numpy_scenario_strategies_per_s": round(numpy_rate),
        "numba_scenario_strategies_per_s": round(numba_rate),
        "numba_over_numpy": round(numba_rate / numpy_rate, 1),
    }
    print(f"{args.scenario}: {plan.n_strategies} strategies, {plan.n_quantities} quantities, "
          f"{plan.n_nodes} nodes; numba threads {result['numba_threads']} of "
          f"{result['cpu_count']} cores")
    print(f"  numpy reference : {numpy_rate:>14,.0f} scenario-strategies/s "
          f"({args.numpy_samples:,} samples, best of {max(1, args.repeats // 2)})")
    print(f"  numba           : {numba_rate:>14,.0f} scenario-strategies/s "
          f"({args.numba_samples:,} samples, best of {args.repeats})")
    print(f"  numba / numpy   : {numba_rate / numpy_rate:>14,.1f} x")
    if args.json:
        args.json.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
