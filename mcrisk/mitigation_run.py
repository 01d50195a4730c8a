"""The value of mitigation, simulated: the other side of a run's risk register on the run's
own scenarios, one more simulation (the statistics are mcrisk.analysis.mitigation's).

`run` and `compare` call mitigation_entry with the run's result; it simulates the other side
(pre for a post run, post otherwise) when both fit in memory together, and returns
summary.json's `mitigation`.
"""
from __future__ import annotations

import time

from .analysis.mitigation import Counterpart, counterpart_entry, skipped_entry
from .backends import Backend
from .compile import CompiledScenario
from .progress import SUMMARIZE, as_progress
from .simulate import MEMORY_SHARE, SimulationResult, memory_needed, physical_memory, simulate


def mitigation_entry(side: Counterpart | None, other_plan: CompiledScenario | None,
                     result: SimulationResult, backend: Backend, chunk_size: int,
                     strategies=None, progress=None) -> dict | None:
    """summary.json's `mitigation`: the other side of the register simulated on the run's
    scenarios and paired with them, or why it was not (memory); None when it does not apply.
    `strategies` limits the analysis to some strategy names (compare's A and B); `progress`
    (mcrisk.progress) sees the simulation as a `simulate` phase and the paired statistics
    as a `summarize` one."""
    if side is None:
        return None
    reason = fits_in_memory(result.plan, other_plan, result.samples, chunk_size)
    if reason is not None:
        return skipped_entry(side, reason)
    started = time.perf_counter()
    note = f"{side.simulated} mitigation, for the value of mitigation"
    other = simulate(other_plan, result.samples, result.seed, backend, chunk_size=chunk_size,
                     keep_world=0, progress=progress, note=note).metrics
    seconds = time.perf_counter() - started
    with as_progress(progress).phase(SUMMARIZE, note="the value of mitigation"):
        return counterpart_entry(side, result.metrics, other, other_plan.strategy_names,
                                 result.seed, seconds, strategies)


def fits_in_memory(run_plan: CompiledScenario, other_plan: CompiledScenario, samples: int,
                   chunk_size: int, available: int | None = None) -> str | None:
    """None when the run and the other side's simulation fit together in memory (both
    kept metrics arrays at once), else why not, as a sentence."""
    available = physical_memory() if available is None else available
    if available is None:
        return None
    needed = (memory_needed(run_plan, samples, chunk_size)
              + memory_needed(other_plan, samples, chunk_size, keep_nodes=False, keep_world=0))
    if needed <= MEMORY_SHARE * available:
        return None
    return (f"not computed: simulating the other side of the register too would need about "
            f"{needed / 1e9:,.1f} GB with {samples:,} scenarios, and a run may use "
            f"{MEMORY_SHARE:.0%} of this machine's {available / 1e9:,.1f} GB (run fewer "
            f"scenarios, or compare a pre and a post run with mcrisk compare's risk modes)")
