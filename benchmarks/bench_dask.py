"""The overhead of Dask (issue 16): a local cluster of 2 worker processes against the in-process
run on 2 Numba threads, on one scenario, for several task (chunk) sizes, measured in one run.

    python benchmarks/bench_dask.py [--scenario scenarios/reference-2048.toml]
        [--samples 131072] [--chunk-sizes 4096 16384 65536] [--workers 2] [--threads 2]

For each chunk size: scenarios per second of mcrisk.backends.chunks.simulate (the whole chunk loop,
metrics and world kept, as a run does) in this process with the numba backend on --threads
threads, and the same on a `local:--workers` cluster (each worker one chunk at a time, with
cores // workers Numba threads: mcrisk.backends.dask), after one warm-up call each (Numba's
compile or cache load, the workers' plan preparation). Also the seconds to start the cluster
and prepare the plan on its workers, paid once per run. Checks that both give the same
metrics. Machines here are shared and noisy: quote ratios from one run, with this command.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402
import numpy as np  # noqa: E402

from mcrisk.backends import select_backend  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.backends.dask import dask_session  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402
from mcrisk.backends.chunks import simulate  # noqa: E402

SEED = 20260


def timed(plan, samples: int, backend, chunk_size: int):
    """(seconds, metrics) of one simulate call."""
    started = time.perf_counter()
    result = simulate(plan, samples, SEED, backend, chunk_size=chunk_size)
    return time.perf_counter() - started, result.metrics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--samples", type=int, default=131_072)
    parser.add_argument("--chunk-sizes", type=int, nargs="+", default=[4096, 16_384, 65_536])
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    plan = compile_scenario(load_scenario(args.scenario))
    numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    here = select_backend("numba")
    here.prepare(plan)
    simulate(plan, 256, SEED, here, chunk_size=256)              # compile or cache load
    started = time.perf_counter()
    with dask_session(f"local:{args.workers}") as session:
        remote = session.backend("numba", plan)
        ready_s = time.perf_counter() - started
        simulate(plan, 256, SEED, remote, chunk_size=128)      # every worker warm
        print(f"{args.scenario}: {args.samples:,} scenarios x {plan.n_strategies} strategies, "
              f"{os.cpu_count()} cores, in-process numba on {numba.get_num_threads()} threads "
              f"vs local:{args.workers} (cluster started and plan prepared in {ready_s:.1f} s)")
        print("| chunk size | tasks | in process: s, scenarios/s | Dask local:"
              f"{args.workers}: s, scenarios/s | Dask / in process | same metrics |")
        print("|---|---|---|---|---|---|")
        for chunk_size in args.chunk_sizes:
            alone_s, alone = timed(plan, args.samples, here, chunk_size)
            dask_s, spread = timed(plan, args.samples, remote, chunk_size)
            tasks = -(-args.samples // chunk_size)
            print(f"| {chunk_size:,} | {tasks} | {alone_s:.2f}, {args.samples / alone_s:,.0f} "
                  f"| {dask_s:.2f}, {args.samples / dask_s:,.0f} | {dask_s / alone_s:.2f} "
                  f"| {np.array_equal(alone, spread)} |", flush=True)


if __name__ == "__main__":
    main()
