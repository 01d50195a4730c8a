"""Throughput of the CPU backends on one scenario, measured in one run; or the Numba kernel of
this checkout against an earlier commit's, interleaved.

    python benchmarks/bench_backends.py [--scenario scenarios/reference-2048.toml]
        [--numba-samples 262144] [--numpy-samples 20000] [--repeats 5] [--threads N]
    python benchmarks/bench_backends.py --against REF [--numba-samples 16384] [--repeats 9]
        [--threads N]

Prints scenario-strategies per second (samples x strategies / wall seconds of the backend's
simulate_chunk, JIT compile excluded, best of --repeats) for NumPy and Numba, and their ratio.

With --against REF, two worker processes each import mcrisk from their own source tree (this
checkout, and REF extracted with `git archive` into a temporary folder), compile or load their
kernel, and then take turns: each repeat times one simulate_chunk call in each worker, in
alternating order, on the same fresh scenarios. One thread is timed in process time (the
worker's CPU seconds, which a neighbour on the other core disturbs less), more threads in wall
time. The workers also hash one fixed chunk's metrics, world and node times, so the table says
whether the two kernels agree bit for bit. Machines here are shared and noisy: quote ratios from
one run, with this command.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numba  # noqa: E402

from mcrisk import __version__  # noqa: E402
from mcrisk.backends import numba as numba_backend  # noqa: E402
from mcrisk.backends import numpy as numpy_backend  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402

# The worker of --against: the kernel of the mcrisk on its PYTHONPATH, timed on request.
WORKER = r"""
import hashlib, sys, time
import numba
threads = int(sys.argv[2])
numba.set_num_threads(threads)
from mcrisk.backends import numba as backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario
plan = compile_scenario(load_scenario(sys.argv[1]))
started = time.perf_counter()
backend.simulate_chunk(plan, 1, 0, 64)
compile_s = time.perf_counter() - started
digest = hashlib.sha256()
for part in backend.simulate_chunk(plan, 7, 5_000_000, 1000, True):
    digest.update(part.tobytes())
print(plan.n_strategies, compile_s, digest.hexdigest(), flush=True)
clock = time.process_time if threads == 1 else time.perf_counter
for line in sys.stdin:
    first, count = (int(x) for x in line.split())
    started = clock()
    backend.simulate_chunk(plan, 1, first, count)
    print(clock() - started, flush=True)
"""


def best_rate(backend, plan, samples: int, repeats: int) -> float:
    """Best scenario-strategies/s over `repeats` timed calls (first scenario varies)."""
    best = 0.0
    for r in range(repeats):
        started = time.perf_counter()
        backend.simulate_chunk(plan, 1, r * samples, samples)
        elapsed = time.perf_counter() - started
        best = max(best, samples * plan.n_strategies / elapsed)
    return best


def source_of(ref: str, into: Path) -> Path:
    """The tree of commit `ref`, extracted (git archive) into a folder of `into`."""
    path = into / "against"
    path.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


def start_worker(source: Path, scenario: Path, threads: int) -> tuple:
    """A worker importing mcrisk from `source`; returns (process, strategies, compile s, hash)."""
    env = dict(os.environ, PYTHONPATH=str(source))
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(scenario), str(threads)],
                              cwd=source, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True)
    line = worker.stdout.readline()
    if not line:
        raise SystemExit(f"the worker for {source} failed (see its error above)")
    n_strategies, compile_s, digest = line.split()
    return worker, int(n_strategies), float(compile_s), digest


def against(args) -> int:
    """Interleaved A/B of this checkout's Numba kernel against REF's (see the module doc)."""
    threads = args.threads or numba.get_num_threads()
    scenario = (ROOT / args.scenario).resolve()
    with tempfile.TemporaryDirectory(prefix="mcrisk-bench-") as tmp:
        sources = {args.against: source_of(args.against, Path(tmp)), "this checkout": ROOT}
        workers = {name: start_worker(src, scenario, threads) for name, src in sources.items()}
        best = {name: float("inf") for name in workers}
        for r in range(args.repeats):
            order = list(workers) if r % 2 == 0 else list(workers)[::-1]
            for name in order:
                process = workers[name][0]
                process.stdin.write(f"{r * args.numba_samples} {args.numba_samples}\n")
                process.stdin.flush()
                best[name] = min(best[name], float(process.stdout.readline()))
        for process, *_ in workers.values():
            process.stdin.close()
            process.wait()
    (_, n_s, c_before, h_before), (_, _, c_after, h_after) = workers.values()
    before, after = best[args.against], best["this checkout"]
    clock = "process time" if threads == 1 else "wall time"
    print(f"{args.scenario}: Numba kernel, {threads} thread(s), {args.numba_samples:,} scenarios "
          f"x {n_s} strategies per call, best of {args.repeats} ({clock}, interleaved)")
    print(f"  {args.against:>14}: {args.numba_samples * n_s / before:>12,.0f} "
          f"scenario-strategies/s (compile or cache load {c_before:.1f} s)")
    print(f"  {'this checkout':>14}: {args.numba_samples * n_s / after:>12,.0f} "
          f"scenario-strategies/s (compile or cache load {c_after:.1f} s)")
    print(f"  speed-up        : {before / after:>12.2f} x")
    print(f"  bit-identical   : {'yes' if h_before == h_after else 'NO'} "
          f"(metrics, world and node times of 1,000 scenarios)")
    if args.json:
        args.json.write_text(json.dumps({
            "against": args.against, "threads": threads, "samples": args.numba_samples,
            "before_rate": args.numba_samples * n_s / before,
            "after_rate": args.numba_samples * n_s / after, "speedup": before / after,
            "bit_identical": h_before == h_after}, indent=2) + "\n")
    return 0


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--numba-samples", type=int, default=None,
                        help="262144 (16384 with --against)")
    parser.add_argument("--numpy-samples", type=int, default=20_000)
    parser.add_argument("--repeats", type=int, default=None, help="5 (9 with --against)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--against", metavar="REF",
                        help="time this checkout's Numba kernel against commit REF's")
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)
    if args.against:
        args.numba_samples = args.numba_samples or 16_384
        args.repeats = args.repeats or 9
        return against(args)
    args.numba_samples = args.numba_samples or 262_144
    args.repeats = args.repeats or 5
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
