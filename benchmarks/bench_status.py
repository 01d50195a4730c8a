"""What conditioning on a status costs the Numba kernel, measured in one run, interleaved.

    python benchmarks/bench_status.py [--before REF] [--samples 65536] [--repeats 15]
        [--scenario FILE] [--status FILE ...] [--json FILE]

Two workers, each importing mcrisk from its own source tree: `--before` (default 98a865e,
the last commit before statuses: its kernel has no conditioning code) and this checkout.
Both simulate the scenario without a status; this checkout also simulates it conditioned on
each `--status` (default: the reference's example series, scenarios/reference-2048-status/).
Calls take turns, plan by plan and worker by worker, the order alternating from repeat to
repeat, every call on the same scenario numbers; one thread, timed in process time (the
worker's CPU seconds, which a neighbour on the other core disturbs less).

Reported, from the medians (scenario-strategies per second):
- the new kernel code on a plan without a status against the kernel before it (what every
  run pays for the conditioning's branches);
- each conditioned plan against the same scenario without a status, in this checkout, and
  against the kernel before it (what a nightly run in flight pays, all told).
A conditioned plan does different work (pinned events need no draw, a truncated draw
evaluates a CDF), so the second figure can be a gain as well as a cost. Machines here are
shared and noisy: quote numbers from one run, with this command.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_plan_record import source_of  # noqa: E402 (a commit's tree, extracted: one way)
BEFORE_REF = "98a865e"
SCENARIO = "scenarios/reference-2048.toml"
STATUSES = sorted(str(p.relative_to(ROOT))
                  for p in (ROOT / "scenarios" / "reference-2048-status").glob("*.toml"))

# A worker: plans given as SCENARIO or SCENARIO::STATUS, timed on request.
WORKER = r"""
import json, sys, time
import numba
numba.set_num_threads(1)
from mcrisk.backends.numba import driver
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario
plans = []
for spec in sys.argv[1:]:
    path, _, status = spec.partition("::")
    scenario = load_scenario(path)
    if status:
        from mcrisk.core.facts import with_facts
        from mcrisk.scenario import load_status
        scenario = with_facts(scenario, load_status(status, scenario))
    plans.append(compile_scenario(scenario))
for plan in plans:
    driver.simulate_chunk(plan, 1, 0, 64)          # compile (or load) and warm
print(json.dumps({"strategies": [plan.n_strategies for plan in plans]}), flush=True)
for line in sys.stdin:
    index, first, count = (int(x) for x in line.split())
    started = time.process_time()
    driver.simulate_chunk(plans[index], 1, first, count)
    print(time.process_time() - started, flush=True)
"""


class Worker:
    """A worker process importing mcrisk from `source`, simulating the plans `specs`."""

    def __init__(self, source: Path, specs: list[str]):
        env = dict(os.environ, PYTHONPATH=str(source))
        self.process = subprocess.Popen([sys.executable, "-c", WORKER, *specs], cwd=source,
                                        env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        text=True)
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the worker for {source} failed (see its error above)")
        self.strategies = json.loads(line)["strategies"]

    def time(self, index: int, first: int, count: int) -> float:
        self.process.stdin.write(f"{index} {first} {count}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=BEFORE_REF, help="the kernel before statuses")
    parser.add_argument("--scenario", default=SCENARIO)
    parser.add_argument("--status", action="append", help="repeatable (default: the series)")
    parser.add_argument("--samples", type=int, default=65_536, help="scenarios per call")
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)
    statuses = args.status or STATUSES
    scenario = str((ROOT / args.scenario).resolve())
    specs = [scenario] + [f"{scenario}::{(ROOT / s).resolve()}" for s in statuses]
    labels = ["no status"] + [Path(s).stem for s in statuses]
    with tempfile.TemporaryDirectory() as scratch:
        before = Worker(source_of(args.before, Path(scratch)), specs[:1])
        after = Worker(ROOT, specs)
        calls = [("before", before, 0, "no status")] + [
            ("after", after, i, label) for i, label in enumerate(labels)]
        seconds: dict[tuple[str, str], list[float]] = {(c[0], c[3]): [] for c in calls}
        for repeat in range(args.repeats):
            order = calls if repeat % 2 == 0 else calls[::-1]
            first = 1_000_000 + repeat * args.samples
            for tree, worker, index, label in order:
                seconds[(tree, label)].append(worker.time(index, first, args.samples))
        before.close()
        after.close()
    rate = {key: args.samples * after.strategies[0] / statistics.median(times)
            for key, times in seconds.items()}
    base_before, base_after = rate[("before", "no status")], rate[("after", "no status")]
    print(f"{args.scenario}, {args.samples:,} scenarios a call, {args.repeats} repeats, one "
          f"thread (process time); medians in scenario-strategies/s")
    print(f"  kernel before statuses ({args.before}), no status: {base_before:,.0f}")
    print(f"  this kernel, no status: {base_after:,.0f} "
          f"(cost {1 - base_after / base_before:+.1%} of the speed before)")
    result = {"before_ref": args.before, "samples": args.samples, "repeats": args.repeats,
              "rates": {f"{tree} {label}": r for (tree, label), r in rate.items()}}
    for label in labels[1:]:
        r = rate[("after", label)]
        print(f"  this kernel, {label}: {r:,.0f} (cost {1 - r / base_after:+.1%} against no "
              f"status here, {1 - r / base_before:+.1%} against the kernel before)")
    if args.json is not None:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
