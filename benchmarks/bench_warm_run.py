"""The warm default run as a user waits for it: median of --repeats runs, this checkout against
earlier commits, interleaved.

    python benchmarks/bench_warm_run.py --before main [--before REF ...] [--repeats 5]
        [--scenario scenarios/reference-2048.toml]

Times `python -m mcrisk run SCENARIO --quiet --out DIR` (20,000 x 5 by default, report
included) as a subprocess, wall clock, Numba's cache filled first by a small run of each
version. Each --before REF runs from a git worktree of REF (end_to_end.worktree), every version
with the same interpreter and reading this checkout's scenario file; the versions take turns
run by run, so that a neighbour loading the machine hurts all alike. Prints each version's
median, minimum and every run, the ratio of this checkout's median to each before's, and the
load average at the start and the end. On a shared machine read the ratios; the seconds move
with the load.
"""
from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from end_to_end import run_mcrisk, worktree  # noqa: E402


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", action="append", default=[], help="git ref to compare")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    args = parser.parse_args(argv)
    tmp = Path(tempfile.mkdtemp(prefix="mcrisk-warm-"))
    versions = {f"before {ref}": worktree(ref, tmp) for ref in args.before}
    versions["this checkout"] = ROOT
    scenario = str(ROOT / args.scenario)
    load = [os.getloadavg()]
    times: dict[str, list[float]] = {name: [] for name in versions}
    try:
        for name, source in versions.items():            # fill each tree's Numba cache
            run_mcrisk(source, [scenario, "--quiet", "--samples", "1000", "--out",
                                str(tmp / "fill")])
        for _ in range(args.repeats):
            for name, source in versions.items():
                times[name].append(run_mcrisk(source, [scenario, "--quiet", "--out",
                                                       str(tmp / f"out-{len(times[name])}")]))
    finally:
        for source in versions.values():
            if source != ROOT:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(source)], capture_output=True)
    load.append(os.getloadavg())
    after = statistics.median(times["this checkout"])
    print(f"warm `mcrisk run {args.scenario}` (default samples, report included), "
          f"{args.repeats} runs each, interleaved")
    print("| version | median s | min s | runs | this checkout / it |")
    print("| --- | --- | --- | --- | --- |")
    for name, runs in times.items():
        median = statistics.median(runs)
        ratio = "" if name == "this checkout" else f"{after / median:.2f}x"
        print(f"| {name} | {median:.2f} | {min(runs):.2f} | "
              f"{', '.join(f'{t:.2f}' for t in runs)} | {ratio} |")
    print(f"load average (1 min) {load[0][0]:.2f} at the start, {load[1][0]:.2f} at the end")
    print("command: python benchmarks/bench_warm_run.py "
          + " ".join(f"--before {ref}" for ref in args.before) + f" --repeats {args.repeats}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
