"""CPU seconds of the milestone chunk hook (MilestoneCollector.__call__) on one chunk past the
exact scenarios, one thread, best of --repeat: this checkout's, and with --old a checkout of an
older version's compiled loops (its mcrisk/results/milestone_chunks.py, loaded under another
name and called by this checkout's collector with a new array of milestone times every chunk,
as that version's did) in the same process, on the same chunk:

    .venv/bin/python benchmarks/bench_milestone_chunk.py [--scenario scenarios/reference-2048.toml]
        [--old /work/main] [--repeat 3]

The chunk is the Numba kernel's (seed 1, the plan's default chunk size). Prints the hook's CPU
seconds and, apart, the compiled loop's (chunk_milestones, every strategy) and the store's
(_StrategyTimes.add of the same times).
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from pathlib import Path

import numba
import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcrisk.backends import select_backend  # noqa: E402
from mcrisk.backends.chunks import default_chunk  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.results import milestone_chunks, milestone_store, milestones  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402


def best(repeat: int, function) -> float:
    spent = []
    for _ in range(repeat):
        started = time.process_time()
        function()
        spent.append(time.process_time() - started)
    return min(spent)


def old_loops(checkout: Path):
    """The compiled loops of another checkout, imported under another name."""
    text = (checkout / "mcrisk/results/milestone_chunks.py").read_text()
    text = text.replace("from ..core.jit import", "from mcrisk.core.jit import")
    file = Path("/tmp") / f"old_milestone_chunks_{abs(hash(text))}.py"
    file.write_text(text)
    spec = importlib.util.spec_from_file_location(file.stem, file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def hook_seconds(plan, scenario, world, node_times, repeat: int) -> float:
    collector = milestones.MilestoneCollector(plan, scenario)
    collector(0, None, world[:64], node_times[:64])         # compiled, then past the exact
    collector(64, None, world, node_times)
    return best(repeat, lambda: collector(0, None, world, node_times))


def parts(plan, scenario, world, node_times, repeat: int) -> tuple[float, float]:
    collector = milestones.MilestoneCollector(plan, scenario)
    collector(0, None, world, node_times)
    rows = []

    def loops():
        rows.clear()
        for s, (items, path) in enumerate(zip(collector.items, collector.paths)):
            values = np.empty((len(items), node_times.shape[0]))
            critical = np.zeros(len(items), np.int64)
            milestone_chunks.chunk_milestones(
                node_times, world, s, path.member_ptr, path.members, path.first,
                path.is_ancestor, plan.dep_ptr, plan.dep_idx, path.is_crew, path.crew_rows,
                plan.node_base_const, plan.node_base_q, plan.node_add_const,
                plan.node_add_q, plan.completion_node.astype(np.int64),
                milestones.CREW_TOLERANCE, values, critical)
            rows.append((values, critical))

    looped = best(repeat, loops)
    stored = best(repeat, lambda: [t.add(v, c) for t, (v, c) in zip(collector.times, rows)])
    return looped, stored


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--scenario", default=str(ROOT / "scenarios" / "reference-2048.toml"))
    parser.add_argument("--old", type=Path, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    numba.set_num_threads(1)
    scenario = load_scenario(args.scenario)
    plan = compile_scenario(scenario)
    chunk = default_chunk(plan)
    _, world, node_times = select_backend("numba").simulate_chunk(plan, 1, 0, chunk, True)[:3]
    node_times, world = np.ascontiguousarray(node_times), np.ascontiguousarray(world)
    print(f"{Path(args.scenario).name}: {chunk:,} scenarios a chunk, {plan.n_nodes} nodes, "
          f"one thread, CPU seconds, best of {args.repeat}")
    versions = [("this checkout", None)]
    if args.old is not None:
        versions.insert(0, (str(args.old), old_loops(args.old)))
    current, spare = milestone_chunks, milestones.MilestoneCollector._values
    for name, loops in versions:
        if loops is not None:                     # the old loops, a new array every chunk
            milestones.milestone_chunks = loops
            milestone_store.milestone_chunks = loops
            milestones.MilestoneCollector._values = lambda _, m, c, __: np.empty((m, c))
            globals()["milestone_chunks"] = loops
        hook = hook_seconds(plan, scenario, world, node_times, args.repeat)
        looped, stored = parts(plan, scenario, world, node_times, args.repeat)
        print(f"  {name:28s} hook {hook:6.3f}   chunk_milestones {looped:6.3f}   "
              f"store {stored:6.3f}")
        milestones.milestone_chunks = current
        milestone_store.milestone_chunks = current
        milestones.MilestoneCollector._values = spare
        globals()["milestone_chunks"] = current


if __name__ == "__main__":
    main()
