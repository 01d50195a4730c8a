"""The Numba kernel taking the plan as one record (`p`, a KernelPlan) against taking its fields
as argument lists, measured in one run, interleaved: throughput and cold compile time.

    python benchmarks/bench_plan_record.py [--lists REF] [--record REF]
        [--scenario FILE --samples N ...] [--repeats 21] [--threads 1] [--compile-repeats 2]
        [--json FILE]

--lists defaults to 35a7c49, the last commit whose Numba stages take the plan's fields one by
one (about 100 positional arguments); --record defaults to this checkout (the stages take
`p`). Each variant runs in its own worker process importing mcrisk from its own source tree
(REF extracted with `git archive`), so both kernels are in the same run on the same machine.

Cold compile: each variant's worker starts with an empty Numba cache (NUMBA_CACHE_DIR and
XDG_CACHE_HOME in a fresh folder) and times its first simulate_chunk call, the kernel's
compile; --compile-repeats rounds, the variants' order alternating. Then one worker per
variant starts on the cache the last round filled (the time to load the kernel from it, and
whether it was a cache hit; with --compile-repeats 0 the user's own cache, compiling there
if need be) and the two take turns, scenario by scenario: an untimed call in each worker,
then each repeat times one simulate_chunk call in each worker, the order alternating (A, B,
B, A, ...), on the same fresh scenarios. (Alternating scenarios from call to call instead
made whichever worker went first in a pair ~30% slower: a bimodal spread no median settles.)
One thread is timed in process time (the worker's CPU seconds, which a neighbour on the other
core disturbs less), more threads in wall time. Reported: the median rate of each variant
(scenario-strategies/s), the record's cost (1 - record / lists, of the medians), the time
ratio record / lists (median per repeat, and per two repeats in both orders, which cancels
an advantage of going first), the medians by which variant went first, and whether the two
kernels agree bit for bit on one fixed chunk (metrics, world and node times of 1,000
scenarios).

Defaults: scenarios/reference-2048.toml at 65,536 scenarios per call (~0.4 s of one core)
and scenarios/reference-2048-full.toml (every feature; ~30x slower per scenario) at 8,192
(~2.4 s). Machines here are shared and noisy: quote numbers from one run, with this command;
many short repeats, interleaved, give steadier medians than a few long ones.
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
LISTS_REF = "35a7c49"
DEFAULT_SCENARIOS = {"scenarios/reference-2048.toml": 65_536,
                     "scenarios/reference-2048-full.toml": 8_192}

# A worker: the kernel of the mcrisk on its PYTHONPATH, timed on request.
WORKER = r"""
import hashlib, json, sys, time
import numba
threads = int(sys.argv[1])
numba.set_num_threads(threads)
from mcrisk.backends.numba import driver
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario
plans = [compile_scenario(load_scenario(path)) for path in sys.argv[2:]]
started = time.perf_counter()
driver.simulate_chunk(plans[0], 1, 0, 64)
first_call_s = time.perf_counter() - started
stats = driver.simulate_chunk_kernel.stats
digests = []
for plan in plans:
    driver.simulate_chunk(plan, 1, 0, 64)
    digest = hashlib.sha256()
    for part in driver.simulate_chunk(plan, 7, 5_000_000, 1000, True):
        digest.update(part.tobytes())
    digests.append(digest.hexdigest())
print(json.dumps({"strategies": [plan.n_strategies for plan in plans],
                  "first_call_s": first_call_s, "digests": digests,
                  "cache_hits": sum(stats.cache_hits.values()),
                  "cache_misses": sum(stats.cache_misses.values())}), flush=True)
clock = time.process_time if threads == 1 else time.perf_counter
for line in sys.stdin:
    index, first, count = (int(x) for x in line.split())
    started = clock()
    driver.simulate_chunk(plans[index], 1, first, count)
    print(clock() - started, flush=True)
"""


def source_of(ref: str, into: Path) -> Path:
    """The tree of commit `ref` (git archive) in a folder of `into`; "." is this checkout."""
    if ref == ".":
        return ROOT
    path = into / ref.replace("/", "_")
    path.mkdir()
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(path)], input=archive, check=True)
    return path


class Worker:
    """A worker process importing mcrisk from `source`, its Numba cache in `cache` (None:
    the user's, as mcrisk finds it)."""

    def __init__(self, source: Path, cache: Path | None, scenarios: list[Path], threads: int):
        env = dict(os.environ, PYTHONPATH=str(source))
        if cache is not None:
            env.update(NUMBA_CACHE_DIR=str(cache / "numba"), XDG_CACHE_HOME=str(cache))
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(threads), *map(str, scenarios)], cwd=source,
            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        if not line:
            raise SystemExit(f"the worker for {source} failed (see its error above)")
        self.started = json.loads(line)

    def time(self, index: int, first: int, count: int) -> float:
        self.process.stdin.write(f"{index} {first} {count}\n")
        self.process.stdin.flush()
        return float(self.process.stdout.readline())

    def close(self) -> None:
        self.process.stdin.close()
        self.process.wait()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lists", default=LISTS_REF, help="the argument-list kernel's commit")
    parser.add_argument("--record", default=".", help="the record kernel's commit (.: here)")
    parser.add_argument("--scenario", action="append", help="repeatable")
    parser.add_argument("--samples", action="append", type=int,
                        help="scenarios per call, one per --scenario")
    parser.add_argument("--repeats", type=int, default=21)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--compile-repeats", type=int, default=2)
    parser.add_argument("--json", type=Path, default=None, help="also write results here")
    args = parser.parse_args(argv)
    names = args.scenario or list(DEFAULT_SCENARIOS)
    samples = args.samples or [DEFAULT_SCENARIOS.get(name, 16_384) for name in names]
    if len(samples) != len(names):
        parser.error("give one --samples per --scenario")
    scenarios = [(ROOT / name).resolve() for name in names]
    variants = {"lists": args.lists, "record": args.record}

    with tempfile.TemporaryDirectory(prefix="mcrisk-bench-record-") as tmp:
        tmp = Path(tmp)
        sources = {v: source_of(ref, tmp) for v, ref in variants.items()}
        compile_s = {v: [] for v in variants}
        caches = {v: None for v in variants}
        for r in range(args.compile_repeats):
            for v in (list(variants) if r % 2 == 0 else list(variants)[::-1]):
                caches[v] = tmp / f"cache-{v}-{r}"
                worker = Worker(sources[v], caches[v], scenarios, args.threads)
                compile_s[v].append(worker.started["first_call_s"])
                worker.close()
                print(f"cold compile {v:>6} (round {r + 1}): {compile_s[v][-1]:6.1f} s",
                      flush=True)
        workers = {v: Worker(sources[v], caches[v], scenarios, args.threads) for v in variants}
        seconds = {v: [[] for _ in scenarios] for v in variants}
        for i, count in enumerate(samples):
            for v in variants:                              # untimed: each worker's first call
                workers[v].time(i, 1 << 30, count)          # of this scenario
            for r in range(args.repeats):
                for v in (list(variants) if r % 2 == 0 else list(variants)[::-1]):
                    seconds[v][i].append(workers[v].time(i, r * count, count))
        for worker in workers.values():
            worker.close()

    clock = "process time" if args.threads == 1 else "wall time"
    lists, record = workers["lists"].started, workers["record"].started
    print(f"\nNumba kernel, plan as argument lists ({args.lists}) vs one record "
          f"({'this checkout' if args.record == '.' else args.record}); {args.threads} "
          f"thread(s), {clock}, {args.repeats} interleaved repeats, medians")
    results = {"lists": args.lists, "record": args.record, "threads": args.threads,
               "repeats": args.repeats, "scenarios": []}
    for i, (name, count) in enumerate(zip(names, samples)):
        work = count * lists["strategies"][i]
        rate = {v: work / statistics.median(seconds[v][i]) for v in variants}
        ratios = [b / a for a, b in zip(seconds["lists"][i], seconds["record"][i])]
        paired = statistics.median(ratios)
        # Each two repeats in turn (lists first, then record first): the geometric mean of
        # their ratios cancels an advantage of going first or second.
        crossed = statistics.median((ratios[r] * ratios[r + 1]) ** 0.5
                                    for r in range(0, len(ratios) - 1, 2))
        cost = 1 - rate["record"] / rate["lists"]
        same = lists["digests"][i] == record["digests"][i]
        print(f"{name}: {count:,} scenarios x {lists['strategies'][i]} strategies per call")
        for v in variants:
            spread = [work / s for s in (max(seconds[v][i]), min(seconds[v][i]))]
            print(f"  {v:>6}: {rate[v]:>12,.0f} scenario-strategies/s "
                  f"(range {spread[0]:,.0f} - {spread[1]:,.0f})")
        print(f"  record cost: {100 * cost:+.1f}% (medians); time ratio record / lists, median "
              f"per repeat {paired:.3f}, per two repeats in both orders {crossed:.3f}")
        for first in variants:
            at = 0 if first == "lists" else 1          # the repeats where `first` went first
            print(f"    repeats with {first} first: median rate lists "
                  f"{work / statistics.median(seconds['lists'][i][at::2]):,.0f}, record "
                  f"{work / statistics.median(seconds['record'][i][at::2]):,.0f}")
        print(f"  bit-identical: {'yes' if same else 'NO'}")
        results["scenarios"].append({
            "scenario": name, "samples": count, "strategies": lists["strategies"][i],
            "lists_rate": rate["lists"], "record_rate": rate["record"], "record_cost": cost,
            "paired_time_ratio": paired, "crossed_time_ratio": crossed, "bit_identical": same,
            "lists_seconds": seconds["lists"][i], "record_seconds": seconds["record"][i]})
    for v in variants:
        started = workers[v].started
        cold = (f"median {statistics.median(compile_s[v]):.1f} s of "
                f"{', '.join(f'{s:.1f}' for s in compile_s[v])}" if compile_s[v] else "not run")
        print(f"cold compile {v:>6}: {cold}; first call of the timed worker "
              f"{started['first_call_s']:.2f} s (cache hits {started['cache_hits']}, "
              f"misses {started['cache_misses']})")
    results["compile_s"] = compile_s
    results["cache_load_s"] = {v: workers[v].started["first_call_s"] for v in variants}
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
