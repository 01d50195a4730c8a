"""CPU seconds of the band hook and the metrics.parquet hook on one chunk, one thread.

    python benchmarks/bench_band_hook.py [--scenarios scenarios/reference-2048.toml ...]
        [--chunk N] [--repeats 5] [--against /path/to/another/checkout]

For each scenario one chunk (--chunk scenarios, default: the run's default chunk) is simulated
by the Numba backend with its node times kept; then, on the calling thread (thread time,
best of --repeats):
  * bands     BandCollector._add_strategy for every strategy (what the hook's tasks do),
              split into the capacity part and the hall peaks
  * metrics   MetricsWriter on the chunk (metrics_batch, then the Parquet row group)
With --against, the same band hook of that checkout's mcrisk/results/bands.py,
band_chunks.py and band_histograms.py runs on the same chunk, and both collectors' bands and
hall power are compared bit for bit (exit 1 on a difference).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
import time
import types
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from mcrisk.backends import select_backend  # noqa: E402
from mcrisk.backends.chunks import default_chunk  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.report.tables import MetricsWriter  # noqa: E402
from mcrisk.results import bands  # noqa: E402
from mcrisk.results.jobs import scenario_job_columns  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402


def thread_seconds(task, repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        task()
        best = min(best, time.thread_time() - start)
    return best


def other_bands(checkout: Path) -> types.ModuleType:
    """`checkout`'s results.bands, with its own band_chunks and band_histograms, loaded
    beside this one's (as mcrisk.results.*_other)."""
    folder = checkout / "mcrisk" / "results"
    renames = {"from . import band_chunks": "from . import band_chunks_other as band_chunks",
               "from .band_histograms import": "from .band_histograms_other import"}
    for name in ("band_chunks", "band_histograms", "bands"):
        module = types.ModuleType(f"mcrisk.results.{name}_other")
        module.__package__ = "mcrisk.results"
        module.__file__ = str(folder / f"{name}.py")
        sys.modules[module.__name__] = module
        text = (folder / f"{name}.py").read_text()
        for old, new in renames.items():
            text = text.replace(old, new)
        exec(compile(text, module.__file__, "exec"), module.__dict__)
    return module


def hall_rows(collector) -> dict:
    return {s: [dataclasses.astuple(row) for row in rows]
            for s, rows in collector.hall_power().items()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="+", default=["scenarios/reference-2048.toml"])
    parser.add_argument("--chunk", type=int)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--against", type=Path)
    args = parser.parse_args()
    backend = select_backend("numba")
    different = False
    for path in args.scenarios:
        scenario = load_scenario(path)
        plan = compile_scenario(scenario)
        chunk = args.chunk or default_chunk(plan)
        metrics, world, nodes = backend.simulate_chunk(plan, 1, 0, chunk, True)[:3]
        nodes = np.ascontiguousarray(nodes)
        print(f"{path}: chunk {chunk} x {plan.n_strategies} strategies x {plan.n_nodes} nodes "
              f"(compiled loops: {nodes.size >= bands.COMPILED_FROM_NODE_TIMES})")
        modules = [("this", bands)]
        if args.against:
            modules.append((str(args.against), other_bands(args.against)))
        collectors = []
        for label, module in modules:
            collector = module.BandCollector(plan)
            collector(0, metrics[:64], world[:64], nodes[:64])        # compiled, warm
            strategies = range(plan.n_strategies)
            compiled = nodes.size >= module.COMPILED_FROM_NODE_TIMES
            whole = thread_seconds(lambda: [collector._add_strategy(s, world, nodes)
                                            for s in strategies], args.repeats)
            capacity = thread_seconds(lambda: [collector._add_capacity(s, s, world, nodes,
                                                                       compiled)
                                               for s in strategies], args.repeats)
            peaks = thread_seconds(lambda: [collector._peak(s, nodes, compiled)
                                            for s in strategies], args.repeats)
            print(f"  bands ({label}): {whole:.3f} s (capacity {capacity:.3f}, "
                  f"hall peaks {peaks:.3f})")
            collectors.append(collector)
        if len(collectors) == 2:
            a, b = (c.bands() for c in collectors)
            same = (all(np.array_equal(getattr(a, f), getattr(b, f))
                        for f in ("total", "largest", "p_below_baseline"))
                    and hall_rows(collectors[0]) == hall_rows(collectors[1])
                    and np.array_equal(collectors[0].over, collectors[1].over))
            print(f"  bands and hall power equal: {same}")
            different |= not same
        with tempfile.TemporaryDirectory() as folder:
            writer = MetricsWriter(plan, Path(folder) / "metrics.parquet",
                                   scenario_job_columns(scenario))
            seconds = thread_seconds(lambda: writer(0, metrics, world, nodes), args.repeats)
            writer.abort()
        print(f"  metrics.parquet: {seconds:.3f} s")
    return 1 if different else 0


if __name__ == "__main__":
    sys.exit(main())
