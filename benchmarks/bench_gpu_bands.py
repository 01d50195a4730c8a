"""The capacity bands' and hall peaks' reductions on the GPU against Numba (run it on a lent GPU).

    python benchmarks/bench_gpu_bands.py [--samples 20000] [--scenarios reference-2048 ...]
        [--repeats 2] [--out DIR]

benchmarks/gpu_check.sh runs it after the GPU tests. For each scenario, one chunk of --samples
scenarios is simulated on the device with its node times kept (cuda.simulate_chunk_device);
then, for every strategy, the three reductions of mcrisk.results.band_chunks run
  * gpu     on the device node times (mcrisk.backends.cuda_bands.DeviceBands), outputs copied
            back into NumPy arrays as the collector holds them; the day keys also counted on
            the device (DeviceBands.sorted_counts, DayHistogram.add_keys' sort and count)
  * numba   band_chunks on the same node times copied to the host (compiled, warm), the keys
            sorted and counted as DayHistogram.add_keys does (np.sort, band_chunks.count_runs)
and every output is compared bit for bit (exit 1 on a difference). capacity_blocks runs where
the plan's grids fit a dense block (the collector's own rule, band_histograms._MAX_DENSE_CELLS).
Wall seconds, best of --repeats, summed over the strategies. Writes bench_gpu_bands.json into
--out.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from mcrisk.backends import cuda, cuda_bands  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.results import band_chunks, band_histograms, bands  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402


def reductions_of(reduce, plan, nodes, s, dense: bool) -> dict:
    """{output: NumPy array} of strategy s's reductions by `reduce` (band_chunks' signatures)."""
    c, n_days = nodes.shape[0], bands.n_band_days(plan)
    total, largest = bands.capacity_grids(plan)
    delta, cap0 = bands.to_units(plan.cap_event_delta), bands.to_units(plan.island_cap0)
    out = {"peak": np.empty((c, plan.hall_cap.size)),
           "total_keys": np.empty(c * n_days, np.int64),
           "largest_keys": np.empty(c * n_days, np.int64)}
    reduce.peak_draws(nodes, s, plan.power_event_node, plan.power_event_hall[s],
                      plan.power_event_delta, plan.hall_draw0, out["peak"])
    reduce.capacity_day_keys(nodes, s, plan.cap_event_node, delta, plan.cap_event_island[s], cap0,
                             n_days, total.lo, total.step, total.n_bins, largest.lo, largest.step,
                             largest.n_bins, out["total_keys"], out["largest_keys"])
    if dense:
        out["total_block"] = np.zeros((n_days + 1, total.n_bins), np.int32)
        out["largest_block"] = np.zeros((n_days + 1, largest.n_bins), np.int32)
        reduce.capacity_blocks(nodes, s, plan.cap_event_node, delta, plan.cap_event_island[s],
                               cap0, n_days, total.lo, total.step, out["total_block"], largest.lo,
                               largest.step, out["largest_block"])
    return out


def best_of(repeats: int, fn):
    """(best wall seconds, the last result) of fn() run `repeats` times."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def one_scenario(cupy, name: str, samples: int, repeats: int) -> dict:
    plan = compile_scenario(load_scenario(ROOT / "scenarios" / f"{name}.toml"))
    _, _, device_nodes = cuda.simulate_chunk_device(plan, 7, 0, samples, keep_nodes=True)
    nodes = device_nodes.get()
    total, largest = bands.capacity_grids(plan)
    cells = (bands.n_band_days(plan) + 1) * max(total.n_bins, largest.n_bins)
    dense = cells <= band_histograms._MAX_DENSE_CELLS
    device = cuda_bands.DeviceBands(plan)
    seconds = {"gpu": 0.0, "gpu_counts": 0.0, "numba": 0.0, "numba_counts": 0.0}
    differences = []
    reductions_of(band_chunks, plan, nodes[:10], 0, dense)          # compiled before timing
    reductions_of(device, plan, device_nodes[:10], 0, dense)        # module loaded before timing

    def on_gpu(s):
        out = reductions_of(device, plan, device_nodes, s, dense)
        cupy.cuda.Device().synchronize()
        return out

    def counts(count, outputs):
        return [count(outputs[k]) for k in ("total_keys", "largest_keys")]

    def host_count(keys):
        return band_chunks.count_runs(np.sort(keys))

    for s in range(plan.n_strategies):
        gpu_seconds, got = best_of(repeats, lambda s=s: on_gpu(s))
        numba_seconds, expected = best_of(
            repeats, lambda s=s: reductions_of(band_chunks, plan, nodes, s, dense))
        count_seconds, counted = best_of(
            repeats, lambda got=got: counts(device.sorted_counts, got))
        host_count_seconds, host_counted = best_of(
            repeats, lambda expected=expected: counts(host_count, expected))
        seconds["gpu"] += gpu_seconds
        seconds["numba"] += numba_seconds
        seconds["gpu_counts"] += count_seconds
        seconds["numba_counts"] += host_count_seconds
        differences += [f"s={s} {k}" for k in expected if not np.array_equal(got[k], expected[k])]
        differences += [f"s={s} counts {j}" for j in range(2) for a, b in
                        zip(counted[j], host_counted[j]) if not np.array_equal(a, b)]
    row = {"scenario": name, "samples": samples, "strategies": plan.n_strategies,
           "capacity_events": int(plan.cap_event_node.size), "dense_blocks": dense,
           **{k: round(v, 4) for k, v in seconds.items()}, "differences": differences}
    print(f"{name:<22} {samples:>8,} x {plan.n_strategies}  events {row['capacity_events']:>4}  "
          f"gpu {seconds['gpu']:.3f} s (+ counts {seconds['gpu_counts']:.3f} s)  "
          f"numba {seconds['numba']:.3f} s (+ counts {seconds['numba_counts']:.3f} s)  "
          f"{'bit-identical' if not differences else 'DIFFERENT: ' + ', '.join(differences)}")
    return row


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=20_000)
    parser.add_argument("--scenarios", nargs="+",
                        default=["reference-2048", "reference-2048-full", "positions"])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", type=Path,
                        default=Path(os.environ.get("OUT", ROOT / "benchmarks")))
    args = parser.parse_args(argv)
    import cupy

    rows = [one_scenario(cupy, name, args.samples, args.repeats) for name in args.scenarios]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_gpu_bands.json").write_text(json.dumps(rows, indent=2) + "\n")
    return 1 if any(row["differences"] for row in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
