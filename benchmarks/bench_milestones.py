"""What collecting milestones costs a default run: the reference scenario, 20,000 scenarios,
every output (report included), with and without the milestone hook (the report's Schedule
section and milestones.parquet then drop out too). Run once, on an otherwise idle machine:

    .venv/bin/python benchmarks/bench_milestones.py [--samples 20000] [--backend cpu] [--repeat 1]

Prints the wall time of each run and the ratio (the issue's bound: within 20%).
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import mcrisk.app.collect as collect  # noqa: E402
from mcrisk.app.run import run_scenario  # noqa: E402


def timed(samples: int, backend: str, milestones: bool) -> float:
    collect.COLLECT_MILESTONES = milestones
    with tempfile.TemporaryDirectory() as tmp:
        started = time.perf_counter()
        run = run_scenario(str(ROOT / "scenarios" / "reference-2048.toml"), samples=samples,
                           backend=backend, out_dir=Path(tmp) / "out")
        wall = time.perf_counter() - started
    assert ("milestones" in run.summary) is milestones
    return wall


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    timed(200, args.backend, True)                    # Numba's compile or cache load
    rows = {False: [], True: []}
    for _ in range(args.repeat):
        for milestones in (False, True):
            rows[milestones].append(timed(args.samples, args.backend, milestones))
    before, after = min(rows[False]), min(rows[True])
    print(f"reference-2048, {args.samples:,} scenarios, backend {args.backend}, "
          f"best of {args.repeat}:")
    print(f"  without milestones {before:7.2f} s")
    print(f"  with milestones    {after:7.2f} s  ({after / before - 1:+.1%})")


if __name__ == "__main__":
    main()
