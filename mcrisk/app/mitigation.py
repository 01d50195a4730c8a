"""The value of mitigation, simulated: the other side of a run's risk register on the run's
own scenarios, one more simulation, and the value of each mitigation, one more simulation per
risk (the statistics are mcrisk.results.mitigation's).

`run` and `compare` call mitigation_entry with the run's result; it simulates the other side
(pre for a post run, post otherwise) and, per risk, the pre side with only that risk mitigated,
when they fit in memory beside the run, and returns summary.json's `mitigation`.
"""
from __future__ import annotations

import time

from ..results.mitigation import (Counterpart, counterpart_entry, each_risk_entry, risk_value,
                                  skipped_entry)
from ..backends import Backend
from ..plan.record import CompiledScenario
from ..plan.compile import compile_scenario
from ..plan.window import with_window
from ..core.progress import SUMMARIZE, as_progress
from ..backends.chunks import (MEMORY_SHARE, SimulationResult, memory_needed, physical_memory,
                               simulate)


def mitigation_entry(side: Counterpart | None, other_plan: CompiledScenario | None,
                     result: SimulationResult, backend: Backend, chunk_size: int,
                     strategies=None, progress=None) -> dict | None:
    """summary.json's `mitigation`: the other side of the register simulated on the run's
    scenarios and paired with them, and `each_risk` (each_risk), or why neither was
    (memory); None when it does not apply. `strategies` limits the analysis to some strategy
    names (compare's A and B); `progress` (mcrisk.core.progress) sees each simulation as a
    `simulate` phase and the paired statistics as `summarize` ones."""
    if side is None:
        return None
    # the run's window (a status's future): both sides count the same days
    other_plan = with_window(other_plan, result.plan.window_start)
    alone = side.each_risk_alone()
    sides = 2 if any(scenario is not None for scenario in alone.values()) else 1
    reason = fits_in_memory(result.plan, other_plan, result.samples, chunk_size, sides=sides)
    if reason is not None:
        return skipped_entry(side, reason)
    started = time.perf_counter()
    note = f"{side.simulated} mitigation, for the value of mitigation"
    other = simulate(other_plan, result.samples, result.seed, backend, chunk_size=chunk_size,
                     keep_world=0, progress=progress, note=note)
    seconds = time.perf_counter() - started
    with as_progress(progress).phase(SUMMARIZE, note="the value of mitigation"):
        entry = counterpart_entry(side, result.metrics, other.metrics,
                                  other_plan.strategy_names, result.seed, seconds, strategies)
    pre, post = (result, other) if side.run_is == "pre" else (other, result)
    entry["each_risk"] = each_risk(side, alone, pre, post, backend, chunk_size, strategies,
                                   progress)
    return entry


def each_risk(side: Counterpart, alone: dict, pre: SimulationResult, post: SimulationResult,
              backend: Backend, chunk_size: int, strategies=None, progress=None) -> dict:
    """summary.json's `mitigation.each_risk`: per risk of side.risks, the pre side against the
    pre side with only that risk mitigated (alone[risk]: Counterpart.each_risk_alone),
    simulated on the same scenarios, or the post side itself where that is the same register.
    `pre` and `post`: the two sides' results."""
    names = list(pre.plan.strategy_names)
    keep = [names.index(n) for n in (strategies or names)]
    kept = [names[k] for k in keep]
    values, seconds = {}, {}
    for risk, scenario in alone.items():
        started = time.perf_counter()
        mitigated = post if scenario is None else simulate(
            with_window(compile_scenario(scenario), pre.plan.window_start), pre.samples,
            pre.seed, backend, chunk_size=chunk_size,
            keep_world=0, progress=progress,
            note=f"only {risk} mitigated, for the value of each mitigation")
        seconds[risk] = 0.0 if scenario is None else time.perf_counter() - started
        with as_progress(progress).phase(SUMMARIZE, note=f"the value of mitigating {risk}"):
            values[risk] = risk_value(pre.metrics[:, keep], mitigated.metrics[:, keep],
                                      _kept(pre.costs, keep), _kept(mitigated.costs, keep), kept)
    currency = side.pre.costs.currency if pre.costs is not None else None
    return each_risk_entry(values, seconds, currency)


def _kept(costs, keep):
    return None if costs is None else costs[:, keep]


def fits_in_memory(run_plan: CompiledScenario, other_plan: CompiledScenario, samples: int,
                   chunk_size: int, available: int | None = None, sides: int = 1) -> str | None:
    """None when the run and `sides` more simulations of the register fit together in memory
    (every kept array at once: a post run keeps the pre side while each risk's is
    simulated, sides 2), else why not, as a sentence."""
    available = physical_memory() if available is None else available
    if available is None:
        return None
    needed = (memory_needed(run_plan, samples, chunk_size) + sides * memory_needed(
        other_plan, samples, chunk_size, keep_nodes=False, keep_world=0))
    if needed <= MEMORY_SHARE * available:
        return None
    return (f"not computed: simulating the other side of the register (and each risk "
            f"mitigated alone) too would need about "
            f"{needed / 1e9:,.1f} GB with {samples:,} scenarios, and a run may use "
            f"{MEMORY_SHARE:.0%} of this machine's {available / 1e9:,.1f} GB (run fewer "
            f"scenarios, or compare a pre and a post run with mcrisk compare's risk modes)")
