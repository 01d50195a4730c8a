"""How a CPU run's time grows with the number of scenarios and with the size of the plan.

    python benchmarks/scale.py [--sizes 10000 100000 1000000] [--factor 4] [--seed 1]

For the reference (scenarios/reference-2048.toml) and the reference scaled --factor times in
plan size (written by benchmarks/make_scaled_scenario.py to benchmarks/out/, not committed),
and for each number of scenarios in --sizes: one mcrisk.app.run.run_scenario(..., backend="numba",
out_dir=None) call, timed whole and, inside it, the chunked driver (mcrisk.backends.chunks.simulate,
the Numba kernel over 65,536-scenario chunks). Prints scenario-strategies/s and time per
scenario of both. The Numba kernel is warmed up (JIT or cache) on each plan first.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import numba  # noqa: E402

from mcrisk.backends import numba as numba_backend  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.app.run import run_scenario  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402

import make_scaled_scenario  # noqa: E402

REFERENCE = "scenarios/reference-2048.toml"


def plan_size(path: str) -> str:
    plan = compile_scenario(load_scenario(path))
    scenario = load_scenario(path)
    return (f"{len(scenario.existing)} SUs, {len(scenario.incoming)} racks, "
            f"{len(scenario.shipments)} shipments, {len(scenario.rows())} rows; "
            f"{plan.n_quantities} quantities, {plan.n_nodes} nodes")


def time_run(path: str, samples: int, seed: int) -> dict:
    started = time.perf_counter()
    run = run_scenario(path, samples=samples, seed=seed, backend="numba", out_dir=None)
    whole = time.perf_counter() - started
    n = run.plan.n_strategies
    return {"samples": samples, "strategies": n, "simulate_s": run.result.wall_seconds,
            "whole_s": whole, "simulate_rate": samples * n / run.result.wall_seconds,
            "whole_rate": samples * n / whole}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    parser.add_argument("--factor", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    scaled = make_scaled_scenario.write_scaled(
        args.factor, ROOT / "benchmarks" / "out" / f"reference-x{args.factor}.toml")
    plans = [(REFERENCE, "reference"),
             (str(scaled.relative_to(ROOT)), f"reference x{args.factor}")]
    print(f"backend numba ({numba.get_num_threads()} threads of {os.cpu_count()} cores), "
          f"seed {args.seed}")
    for path, label in plans:
        print(f"  {label}: {path}: {plan_size(path)}")
    print("| plan | scenarios | simulate (driver) | scenario-strategies/s | us per scenario "
          "| whole run_scenario | scenario-strategies/s | us per scenario |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for path, label in plans:
        plan = compile_scenario(load_scenario(path))
        numba_backend.simulate_chunk(plan, args.seed, 0, 64)      # JIT
        for samples in args.sizes:
            r = time_run(path, samples, args.seed)
            print(f"| {label} | {samples:,} | {r['simulate_s']:,.2f} s | "
                  f"{r['simulate_rate']:,.0f} | {1e6 * r['simulate_s'] / samples:,.2f} | "
                  f"{r['whole_s']:,.2f} s | {r['whole_rate']:,.0f} | "
                  f"{1e6 * r['whole_s'] / samples:,.2f} |", flush=True)
    print(f"reproduce: python benchmarks/scale.py --sizes {' '.join(map(str, args.sizes))} "
          f"--factor {args.factor} --seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
