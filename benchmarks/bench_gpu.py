"""GPU kernel throughput and end-to-end time on one scenario (run it on a lent GPU machine).

    python benchmarks/bench_gpu.py [--scenario scenarios/reference-2048.toml]
        [--sizes 1000000 10000000] [--e2e-samples 1000000] [--repeats 3] [--out DIR]

benchmarks/gpu_check.sh runs it after `pytest -m gpu`. Measures, on the scenario:
  * module      NVRTC compile and load of kernels/simulate.cu for the plan's shape (cold cache)
  * kernel      scenario-strategies/s of one launch of N scenarios (CUDA events around
                cuda.simulate_chunk_device: output zeroing, the launch and the status check),
                best of --repeats, for each N in --sizes
  * end to end  --e2e-samples scenarios x all strategies -> summary document:
                device path (simulate_chunk_device, then results.statistics.summarize of its
                metrics copied to the host), the driver path the CLI takes
                (mcrisk.backends.chunks.simulate with the cuda backend, 65,536-scenario
                chunks copied to the host, statistics.summarize), and the same driver with
                the Numba backend on this machine's cores, for comparison
  * parity      max relative difference GPU vs Numba on the first 20,000 scenarios
Writes bench_gpu.json and bench_gpu.md (rows for benchmarks/RESULTS.md) into --out.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
os.environ.setdefault("CUPY_CACHE_DIR", tempfile.mkdtemp(prefix="cupy-cache-"))  # cold compile

import numba  # noqa: E402
import numpy as np  # noqa: E402

from mcrisk import __version__
from mcrisk.results import statistics  # noqa: E402
from mcrisk.backends import cuda, select_backend  # noqa: E402
from mcrisk.backends import numba as numba_backend  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402
from mcrisk.backends.chunks import DEFAULT_CHUNK, simulate  # noqa: E402


def device_seconds(cupy, fn) -> float:
    """GPU time of fn() between two CUDA events (fn synchronizes itself or not)."""
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    return cupy.cuda.get_elapsed_time(start, stop) / 1000.0


def kernel_rate(cupy, plan, samples: int, repeats: int) -> dict:
    best = float("inf")
    for r in range(repeats):
        seconds = device_seconds(
            cupy, lambda: cuda.simulate_chunk_device(plan, 1, r * samples, samples))
        best = min(best, seconds)
        cupy.get_default_memory_pool().free_all_blocks()
    return {"samples": samples, "seconds": best,
            "scenario_strategies_per_s": samples * plan.n_strategies / best}


def end_to_end(cupy, plan, samples: int) -> dict:
    out = {}
    started = time.perf_counter()
    metrics, _, _ = cuda.simulate_chunk_device(plan, 7, 0, samples)
    simulated = time.perf_counter()
    statistics.summarize(metrics.get(), plan.strategy_names)
    out["device_path_s"] = time.perf_counter() - started
    out["device_path_simulate_s"] = simulated - started
    del metrics
    cupy.get_default_memory_pool().free_all_blocks()
    for name in ("gpu", "cpu"):
        started = time.perf_counter()
        result = simulate(plan, samples, 7, select_backend(name), chunk_size=DEFAULT_CHUNK)
        simulated = time.perf_counter()
        statistics.summarize(result.metrics, plan.strategy_names)
        out[f"driver_{name}_s"] = time.perf_counter() - started
        out[f"driver_{name}_simulate_s"] = simulated - started
    return out


def parity(plan, samples: int = 20_000) -> dict:
    got = cuda.simulate_chunk(plan, 1, 0, samples, keep_nodes=True)
    expected = numba_backend.simulate_chunk(plan, 1, 0, samples, keep_nodes=True)
    out = {}
    for name, a, b in zip(("metrics", "world", "node_times"), got, expected):
        with np.errstate(invalid="ignore"):
            rel = np.where(a == b, 0.0, np.abs(a - b) / np.maximum(np.abs(b), 1e-300))
        out[f"{name}_max_rel_diff"] = float(np.max(rel))
        out[f"{name}_bit_identical_fraction"] = float(np.mean(a == b))
    out["power_violation_equal"] = bool(np.array_equal(got[0][:, :, 5], expected[0][:, :, 5]))
    return out


def markdown(result: dict) -> str:
    rows = ["| measurement | value |", "| --- | --- |",
            f"| device | {result['device']} |",
            f"| module compile + load (cold NVRTC cache) | {result['module_s']:.2f} s |"]
    for k in result["kernel"]:
        rows.append(f"| kernel, {k['samples']:,} scenarios x {result['strategies']} strategies "
                    f"| {k['scenario_strategies_per_s']:,.0f} scenario-strategies/s "
                    f"({k['seconds'] * 1000:.1f} ms) |")
    e = result["end_to_end"]
    n = f"{result['e2e_samples']:,} x {result['strategies']}"
    rows += [f"| end to end {n}, device path (simulate on the device, summarize on the host) "
             f"| {e['device_path_s']:.3f} s (simulate {e['device_path_simulate_s']:.3f} s) |",
             f"| end to end {n}, driver + gpu backend + host summary "
             f"| {e['driver_gpu_s']:.3f} s (simulate {e['driver_gpu_simulate_s']:.3f} s) |",
             f"| end to end {n}, driver + Numba on {result['numba_threads']} threads "
             f"| {e['driver_cpu_s']:.3f} s (simulate {e['driver_cpu_simulate_s']:.3f} s) |"]
    p = result["parity"]
    rows.append(f"| GPU vs Numba, 20,000 scenarios: max rel diff metrics / world / node times "
                f"| {p['metrics_max_rel_diff']:.1e} / {p['world_max_rel_diff']:.1e} / "
                f"{p['node_times_max_rel_diff']:.1e}; power_violation equal: "
                f"{p['power_violation_equal']} |")
    return "\n".join(rows) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "reference-2048.toml"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000_000, 10_000_000])
    parser.add_argument("--e2e-samples", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path(os.environ.get("OUT", ROOT / "benchmarks")))
    args = parser.parse_args(argv)
    import cupy
    plan = compile_scenario(load_scenario(args.scenario))
    started = time.perf_counter()
    cuda.module_for(plan)
    module_s = time.perf_counter() - started
    cuda.simulate_chunk_device(plan, 1, 0, 1024)                  # first launch: load, warm
    numba_backend.simulate_chunk(plan, 1, 0, 64)                           # Numba JIT, not timed
    props = cupy.cuda.runtime.getDeviceProperties(0)
    result = {
        "scenario": args.scenario, "strategies": plan.n_strategies,
        "device": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
        "multiprocessors": props["multiProcessorCount"], "cupy": cupy.__version__,
        "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(), "python": platform.python_version(),
        "numba_threads": numba.get_num_threads(), "mcrisk": __version__,
        "compile_options": list(cuda.compile_options(plan)), "module_s": module_s,
        "kernel": [kernel_rate(cupy, plan, n, args.repeats) for n in args.sizes],
        "e2e_samples": args.e2e_samples,
        "end_to_end": end_to_end(cupy, plan, args.e2e_samples),
        "parity": parity(plan),
    }
    table = markdown(result)
    print(table)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "bench_gpu.json").write_text(json.dumps(result, indent=2) + "\n")
    (args.out / "bench_gpu.md").write_text(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
