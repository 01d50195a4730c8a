"""What the costs cost the Numba kernel (issue 13), measured in one run, interleaved.

    python benchmarks/bench_costs.py --against REF [--samples 16384] [--repeats 9] [--threads 1]

Three worker processes take turns on the same fresh scenarios of the reference: REF's kernel
without costs (before the kernels computed costs), this checkout's without costs (a plan
without [costs] must do no cost work, so it must not be slower), and this checkout's with
costs (the scenario's own [costs] section: the reference's prices every kind of cost, most
of them drawn). Each worker imports mcrisk from its own tree (REF by git archive,
bench_backends.source_of). One thread is timed in process time (the worker's CPU seconds,
which a neighbour on the other core disturbs less), more threads in wall time; best of
--repeats. The workers without costs also hash one fixed chunk's metrics, world and node times,
so the table says whether the kernel without costs is bit-identical to REF's. Machines here are
shared and noisy: quote ratios from one run, with this command.
"""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_backends import source_of  # noqa: E402

# The worker: argv = scenario, threads, mode ("none": the plan without its cost fields, as a
# scenario without [costs] compiles; "costs": as it is, which must have costs).
WORKER = r"""
import dataclasses, hashlib, sys, time
import numba
threads = int(sys.argv[2])
numba.set_num_threads(threads)
from mcrisk.backends import numba as backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario
plan = compile_scenario(load_scenario(sys.argv[1]))
if sys.argv[3] == "none" and getattr(plan, "n_costs", 0):
    from mcrisk.plan.costs import no_cost_arrays
    plan = dataclasses.replace(plan, **no_cost_arrays(plan.n_strategies, len(plan.hall_names)))
assert (getattr(plan, "n_costs", 0) > 0) == (sys.argv[3] == "costs"), sys.argv[3]
backend.simulate_chunk(plan, 1, 0, 64)
digest = hashlib.sha256()
for part in backend.simulate_chunk(plan, 7, 5_000_000, 1000, True):
    digest.update(part.tobytes())
print(plan.n_strategies, digest.hexdigest(), flush=True)
clock = time.process_time if threads == 1 else time.perf_counter
for line in sys.stdin:
    first, count = (int(x) for x in line.split())
    started = clock()
    backend.simulate_chunk(plan, 1, first, count)
    print(clock() - started, flush=True)
"""


def start_worker(source: Path, scenario: Path, threads: int, mode: str) -> tuple:
    """A worker importing mcrisk from `source`; returns (process, strategies, hash)."""
    worker = subprocess.Popen([sys.executable, "-c", WORKER, str(scenario), str(threads), mode],
                              cwd=source, env=dict(os.environ, PYTHONPATH=str(source)),
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    line = worker.stdout.readline()
    if not line:
        raise SystemExit(f"the worker for {source} ({mode}) failed (see its error above)")
    n_strategies, digest = line.split()
    return worker, int(n_strategies), digest


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--against", metavar="REF", required=True,
                        help="the commit whose kernel computes no costs")
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--samples", type=int, default=16_384)
    parser.add_argument("--repeats", type=int, default=9)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    scenario = (ROOT / args.scenario).resolve()
    if "\n[costs]" not in "\n" + scenario.read_text():
        parser.error(f"{args.scenario} has no [costs] section: there is no cost work to time")
    with tempfile.TemporaryDirectory(prefix="mcrisk-bench-costs-") as tmp:
        with_costs = scenario
        runs = {f"{args.against}, no costs": (source_of(args.against, Path(tmp)), scenario,
                                               "none"),
                "this checkout, no costs": (ROOT, scenario, "none"),
                "this checkout, costs": (ROOT, with_costs, "costs")}
        workers = {name: start_worker(source, path, args.threads, mode)
                   for name, (source, path, mode) in runs.items()}
        best = {name: float("inf") for name in workers}
        for r in range(args.repeats):
            order = list(workers)[r % 3:] + list(workers)[:r % 3]
            for name in order:
                process = workers[name][0]
                process.stdin.write(f"{r * args.samples} {args.samples}\n")
                process.stdin.flush()
                best[name] = min(best[name], float(process.stdout.readline()))
        for process, *_ in workers.values():
            process.stdin.close()
            process.wait()
    n_s = next(iter(workers.values()))[1]
    clock = "process time" if args.threads == 1 else "wall time"
    print(f"{args.scenario}: Numba kernel, {args.threads} thread(s), {args.samples:,} scenarios "
          f"x {n_s} strategies per call, best of {args.repeats} ({clock}, interleaved)")
    for name in workers:
        print(f"  {name:>28}: {args.samples * n_s / best[name]:>12,.0f} scenario-strategies/s")
    before, after, costs = best.values()
    print(f"  {'no costs, this / REF':>28}: {before / after:>12.3f} x the rate")
    print(f"  {'costs / no costs, this':>28}: {after / costs:>12.3f} x the rate")
    digests = [digest for _, _, digest in workers.values()]
    print(f"  {'no costs bit-identical':>28}: {'yes' if digests[0] == digests[1] else 'NO'} "
          f"(metrics, world and node times of 1,000 scenarios)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
