"""The milestones' reductions on the GPU against Numba's on the same chunk (run it on a lent GPU).

    python benchmarks/bench_gpu_milestones.py [--scenario scenarios/reference-2048.toml]
        [--chunk 65536] [--repeats 3] [--out DIR]

benchmarks/gpu_check.sh runs it after `pytest -m gpu`. One chunk of --chunk scenarios simulated
on the device (cuda.simulate_chunk_device, node times kept), then, best of --repeats:
  * chunk_milestones  every strategy's milestone times and critical-path counts: on the device
                      (cuda.DeviceChunk, the times copied back as the collector takes them)
                      against milestone_chunks.chunk_milestones (Numba, one thread a strategy
                      here; a run spreads the strategies over the cores) on the host copy
  * add_to_bins       the first strategy's times into its windows (set from the first 25,000
                      scenarios): cuda.add_to_bins_device against milestone_chunks.add_to_bins
  * copy              what the device path saves: node_times to the host (.get())
and whether the numbers are Numba's (bit for bit; the bins' bounds as numbers). Writes
bench_gpu_milestones.json into --out.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from mcrisk.backends import cuda  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.results import milestone_chunks  # noqa: E402
from mcrisk.results.milestone_store import MilestoneBins  # noqa: E402
from mcrisk.results.milestones import (BIN_DAYS, CREW_TOLERANCE, _PathArrays,  # noqa: E402
                                       definitions)
from mcrisk.scenario import load_scenario  # noqa: E402


def best(repeats: int, work) -> float:
    import cupy
    times = []
    for _ in range(repeats):
        cupy.cuda.Device().synchronize()
        started = time.perf_counter()
        work()
        cupy.cuda.Device().synchronize()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "reference-2048.toml"))
    parser.add_argument("--chunk", type=int, default=65_536)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "gpu-check"))
    args = parser.parse_args()
    import cupy

    scenario = load_scenario(args.scenario)
    plan = compile_scenario(scenario)
    items = definitions(plan, scenario)
    paths = [_PathArrays.of(plan, s, its) for s, its in enumerate(items)]
    _, world, nodes = cuda.simulate_chunk_device(plan, 1, 0, args.chunk, keep_nodes=True)
    host_nodes, host_world = nodes.get(), world.get()
    chunk = cuda.DeviceChunk(nodes, world)

    def reduce(by, node_times, w):
        out = []
        for s, (its, path) in enumerate(zip(items, paths)):
            times = np.empty((len(its), args.chunk))
            critical = np.zeros(len(its), np.int64)
            arguments = (s, path.member_ptr, path.members, path.first, path.is_ancestor,
                         plan.dep_ptr, plan.dep_idx, path.is_crew, path.crew_rows,
                         plan.node_base_const, plan.node_base_q, plan.node_add_const,
                         plan.node_add_q, plan.completion_node.astype(np.int64),
                         CREW_TOLERANCE, times, critical)
            if by == "device":
                chunk.chunk_milestones(*arguments)
            else:
                milestone_chunks.chunk_milestones(node_times, w, *arguments)
            out.append((times, critical))
        return out

    on_device, on_host = reduce("device", None, None), reduce("numba", host_nodes, host_world)
    same = all(np.array_equal(a[0].view(np.uint64), b[0].view(np.uint64))
               and np.array_equal(a[1], b[1]) for a, b in zip(on_device, on_host))
    timing = {
        "chunk_milestones_device_s": best(args.repeats, lambda: reduce("device", None, None)),
        "chunk_milestones_numba_s": best(args.repeats,
                                         lambda: reduce("numba", host_nodes, host_world)),
        "node_times_copy_s": best(args.repeats, nodes.get),
    }
    times = on_host[0][0]
    keep = min(25_000, args.chunk)

    def fresh():
        return MilestoneBins(times[:, :keep], BIN_DAYS, 4096)

    def bins_on_device():
        bins = fresh()
        state = [cupy.asarray(a) for a in (bins.counts, bins.low, bins.high, bins.non_finite)]
        tail = cuda.add_to_bins_device(cupy.asarray(times), bins.bin_days, bins.exponent,
                                       bins.origin, *state)
        return bins, [a.get() for a in state], tail

    def bins_by_numba():
        bins = fresh()
        tail = milestone_chunks.add_to_bins(times, bins.bin_days, bins.exponent, bins.origin,
                                            bins.counts, bins.low, bins.high, bins.non_finite)
        return bins, tail

    (_, state, tail), (numba_bins, numba_tail) = bins_on_device(), bins_by_numba()
    filled = numba_bins.counts > 0
    bins_same = (np.array_equal(state[0], numba_bins.counts)
                 and np.array_equal(state[3], numba_bins.non_finite)
                 and np.array_equal(state[1][filled], numba_bins.low[filled])
                 and np.array_equal(state[2][filled], numba_bins.high[filled])
                 and np.array_equal(tail[0], numba_tail[0])
                 and np.array_equal(tail[1].view(np.uint64), numba_tail[1].view(np.uint64)))
    timing["add_to_bins_device_s"] = best(args.repeats, bins_on_device)
    timing["add_to_bins_numba_s"] = best(args.repeats, bins_by_numba)
    result = {"scenario": args.scenario, "chunk": args.chunk, "strategies": plan.n_strategies,
              "milestones": sum(len(its) for its in items), "tails": int(tail[0].size),
              "chunk_milestones_equal_numba": same, "add_to_bins_equal_numba": bins_same,
              **{k: round(v, 6) for k, v in timing.items()}}
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "bench_gpu_milestones.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))
    return 0 if same and bins_same else 1


if __name__ == "__main__":
    sys.exit(main())
