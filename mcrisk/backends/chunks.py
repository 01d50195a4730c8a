"""The chunked driver: runs a backend over scenario indices in fixed-size chunks.

Every draw is addressed by its scenario index, so the result is the same for any chunk size.
Memory per chunk is bounded; what is kept is the per-scenario metrics (samples x strategies x
6 float64: 240 bytes a scenario for 5 strategies, 2.4 GB at 10^7), with a [costs] section the
per-scenario costs (samples x strategies x plan.n_costs float64, 360 bytes more a scenario for
5 strategies), and the drawn inputs of the first `keep_world` scenarios only (drivers analysis
needs no more; hooks see every chunk's).

A backend returns one array per chunk, [count, strategies, N_METRICS + plan.n_costs +
plan.n_job_cols]: the metrics, then the cost columns (definitions.COSTS), then with a job mix
the job columns (definitions.job_columns). The chunk hooks get it whole; the kept arrays
split it (`metrics`, `costs`, `jobs`), so everything that reads the metrics sees six columns
with or without costs and jobs.
A run that could not keep that in this machine's memory is refused before it starts
(`check_memory`), and no run takes more than MAX_SAMPLES scenarios.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import Callable

import numpy as np

from . import Backend
from .buffers import ChunkBuffers
from .contingency import branches_taken
from .kept import check_disk, kept_array, kept_bytes, small_enough
from ..plan.record import CompiledScenario
from ..core.definitions import N_METRICS
from ..core.errors import McriskError
from ..core.progress import SCENARIOS, SIMULATE, Progress, as_progress

DEFAULT_CHUNK = 65_536
# With a job mix each scenario packs its jobs into the islands every packing cell, about 5-8
# times the work of one without (the reference with a three-class mix: 0.34 s for 4,000
# scenarios against 0.04-0.07 s), so its default chunk is 8 times smaller: a stop (Ctrl-C,
# SIGTERM), a progress step or a Dask task then comes about as often. No number depends on it.
JOB_MIX_CHUNK = 8_192
DEFAULT_KEEP_WORLD = 250_000     # drawn inputs kept for drivers analysis (at most)
# Budgets that keep memory bounded by the chunk as plans grow (the reference is far inside
# them: 65,536 scenarios of node times take 215 MB, 250,000 of inputs 122 MB). Constants, not
# a share of this machine's memory: no number may depend on the machine. The reference scaled
# 64 times at 20,000 scenarios (benchmarks/RESULTS.md): node times at 256 MB a chunk, 63.6 s
# and 2.99 GB at the peak; at 512 MB, 55.1 s and 3.45 GB (fewer, larger kernel calls).
NODE_TIMES_BYTES = 512_000_000   # a chunk's node times (scenarios x strategies x nodes x 8)
KEPT_WORLD_BYTES = 512_000_000   # the drawn inputs kept for the drivers analysis
MIN_CHUNK = 256                  # the default chunk never goes below this
MAX_SAMPLES = 100_000_000        # hard cap: 24 GB of kept metrics for 5 strategies
MEMORY_SHARE = 0.9               # refuse a run whose estimate exceeds this share of the RAM
# memory_needed's model, measured on the reference (benchmarks/memory.py):
RUNTIME_BYTES = 170_000_000      # the interpreter with NumPy, Numba and mcrisk, before a run
MILESTONES_PER_NODE = 1.25       # milestones per node and strategy (reference: 476 for 5 x 82)
# results.milestones' store (this floor cannot import it; tests/backends/test_memory.py
# holds them equal): KEEP_EXACT, EXACT_BYTES, BINS_BYTES, MAX_BINS, MIN_BINS
MILESTONES_KEPT_EXACT = 25_000
MILESTONE_EXACT_BYTES = 256_000_000
MILESTONE_BINS_BYTES = 768_000_000
MILESTONE_MAX_BINS = 32_768
MILESTONE_MIN_BINS = 256


@dataclass(frozen=True)
class SimulationResult:
    plan: CompiledScenario
    seed: int
    samples: int
    backend: str
    metrics: np.ndarray        # float64[samples, strategies, metrics]
    world: np.ndarray          # float64[min(samples, keep_world), quantities]
    wall_seconds: float
    costs: np.ndarray | None = None    # float64[samples, strategies, plan.n_costs]
                                       # (definitions.COSTS); None without [costs]
    jobs: np.ndarray | None = None     # float64[samples, strategies, plan.n_job_cols]
                                       # (definitions.job_columns); None without a job mix
    branches: np.ndarray | None = None  # bool[samples, contingencies]: each world meets
                                        # each decision (mcrisk.plan.contingency); None
                                        # without contingent strategies


ChunkHook = Callable[[int, np.ndarray, np.ndarray, np.ndarray], None]


def simulate(plan: CompiledScenario, samples: int, seed: int, backend: Backend,
             chunk_size: int = DEFAULT_CHUNK, first: int = 0,
             progress: Progress | Callable[[int, int], None] | None = None,
             chunk_hooks: tuple[ChunkHook, ...] = (),
             keep_world: int | None = None, note: str = "",
             column_major: bool = False) -> SimulationResult:
    """Simulate scenarios first .. first + samples - 1 of `plan` for every strategy.

    Each hook is called once per chunk, in scenario order, as
    hook(first_scenario, metrics[c, s, N_METRICS + plan.n_costs + plan.n_job_cols], world[c, q],
    node_times[c, s, v]) so that per-scenario detail (capacity over time, say) can be reduced
    by streaming without keeping it for all scenarios: the chunk's metrics as the backend
    returned them, the cost columns (definitions.COSTS) after the six metrics when the plan
    has costs, the job columns after those with a job mix. Node times are only computed when
    a hook is given. A hook's arrays are valid during its call only (the next chunk reuses
    them: mcrisk.backends.buffers): a hook copies whatever it keeps.
    `column_major`: the kept metrics, costs and jobs in memory laid out column by column
    (kept.kept_array), as a run's analysis reads them, instead of copied so afterwards.
    `progress` sees a `simulate` phase counted in scenarios (mcrisk.core.progress), with `note`.
    """
    if samples < 1:
        raise ValueError(f"samples must be >= 1, got {samples}")
    keep_world = default_keep_world(plan) if keep_world is None else keep_world
    in_file = not results_in_memory(plan, samples, chunk_size, keep_nodes=bool(chunk_hooks),
                                    keep_world=keep_world)
    metrics = kept_array(samples, plan.n_strategies, N_METRICS, in_file, column_major)
    world = np.empty((min(samples, keep_world), plan.n_quantities))
    costs = cost_array(plan, samples, in_file, column_major)
    jobs = job_array(plan, samples, in_file, column_major)
    branches = branch_array(plan, samples)
    wall = simulate_into(plan, seed, backend, first, metrics, world, chunk_size, progress,
                         chunk_hooks, note, costs=costs, jobs=jobs, branches=branches)
    return SimulationResult(plan, seed, samples, backend.name, metrics, world, wall, costs,
                            jobs, branches)


def branch_array(plan: CompiledScenario, samples: int) -> np.ndarray | None:
    """The kept branches of `samples` scenarios, bool[samples, contingencies] (unfilled), or
    None for a plan without contingent strategies."""
    if not plan.contingencies:
        return None
    return np.empty((samples, len(plan.contingencies)), dtype=bool)


def cost_array(plan: CompiledScenario, samples: int, in_file: bool = False,
               column_major: bool = False) -> np.ndarray | None:
    """The kept costs of `samples` scenarios, [samples, strategies, plan.n_costs] (unfilled;
    with `in_file` file-backed, mcrisk.backends.kept), or None for a plan without costs."""
    if plan.n_costs == 0:
        return None
    return kept_array(samples, plan.n_strategies, plan.n_costs, in_file, column_major)


def default_chunk(plan: CompiledScenario, chunk_size: int | None = None) -> int:
    """The scenarios per kernel call: `chunk_size` when one is asked for, else DEFAULT_CHUNK,
    or JOB_MIX_CHUNK for a plan with a job mix (a kernel call is not interrupted: a smaller
    chunk keeps a stop prompt), or fewer for a plan so large that a chunk's node times would
    take more than NODE_TIMES_BYTES (at least MIN_CHUNK): memory is bounded by the chunk, not
    by the scenarios. No number depends on the chunk size."""
    if chunk_size is not None:
        return chunk_size
    default = JOB_MIX_CHUNK if plan.n_job_cols else DEFAULT_CHUNK
    per_scenario = plan.n_strategies * plan.n_nodes * 8
    return int(min(default, max(MIN_CHUNK, NODE_TIMES_BYTES // max(per_scenario, 1))))


def default_keep_world(plan: CompiledScenario) -> int:
    """The scenarios whose drawn inputs a run keeps for the drivers analysis: the first
    DEFAULT_KEEP_WORLD, or fewer where they would take more than KEPT_WORLD_BYTES (a plan
    with thousands of quantities), at least 1,000."""
    per_scenario = plan.n_quantities * 8
    return int(min(DEFAULT_KEEP_WORLD, max(1_000, KEPT_WORLD_BYTES // max(per_scenario, 1))))


def job_array(plan: CompiledScenario, samples: int, in_file: bool = False,
              column_major: bool = False) -> np.ndarray | None:
    """The kept job columns of `samples` scenarios, [samples, strategies, plan.n_job_cols]
    (unfilled; with `in_file` file-backed), or None for a plan without a job mix."""
    if plan.n_job_cols == 0:
        return None
    return kept_array(samples, plan.n_strategies, plan.n_job_cols, in_file, column_major)


def simulate_into(plan: CompiledScenario, seed: int, backend: Backend, first: int,
                  metrics: np.ndarray, world: np.ndarray, chunk_size: int = DEFAULT_CHUNK,
                  progress: Progress | Callable[[int, int], None] | None = None,
                  chunk_hooks: tuple[ChunkHook, ...] = (), note: str = "",
                  costs: np.ndarray | None = None, jobs: np.ndarray | None = None,
                  branches: np.ndarray | None = None) -> float:
    """Simulate scenarios first .. first + len(metrics) - 1 into the given arrays (the first
    len(world) of them into world; their costs into `costs`, [len(metrics), strategies,
    plan.n_costs], which a plan with costs needs and one without must not be given; their
    job columns into `jobs`, [len(metrics), strategies, plan.n_job_cols], when given: a
    caller that reads only the metrics and costs may leave them to the chunk hooks; which
    branch each world takes of each contingent strategy into `branches`, [len(metrics),
    contingencies], when given); returns the seconds it took.

    Writing into the caller's arrays lets a growing run (--precision) keep one buffer instead
    of parts that it would have to concatenate.
    """
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be >= 1, got {chunk_size}")
    samples = metrics.shape[0]
    _check_costs(plan, samples, costs)
    _check_jobs(plan, samples, jobs)
    first_job = N_METRICS + plan.n_costs     # the job columns follow the cost columns
    started = time.perf_counter()
    with as_progress(progress).phase(SIMULATE, samples, SCENARIOS, note) as phase:
        for start, (chunk_metrics, chunk_world, node_times) in _chunks(
                plan, seed, backend, first, samples, chunk_size,
                bool(chunk_hooks) or branches is not None):
            offset, count = start - first, chunk_metrics.shape[0]
            _check_width(plan, backend, chunk_metrics)
            for hook in chunk_hooks:
                hook(first + offset, chunk_metrics, chunk_world, node_times)
            metrics[offset:offset + count] = chunk_metrics[:, :, :N_METRICS]
            if costs is not None:
                costs[offset:offset + count] = chunk_metrics[:, :, N_METRICS:first_job]
            if jobs is not None:
                jobs[offset:offset + count] = chunk_metrics[:, :, first_job:]
            if branches is not None:
                branches[offset:offset + count] = branches_taken(plan, node_times)
            kept = max(0, min(count, world.shape[0] - offset))
            world[offset:offset + kept] = chunk_world[:kept]
            phase.advance(count)
    return time.perf_counter() - started


def _chunks(plan: CompiledScenario, seed: int, backend: Backend, first: int, samples: int,
            chunk_size: int, keep_nodes: bool):
    """(first scenario, (metrics, world, node_times)) of each chunk of scenarios
    first .. first + samples - 1, in scenario order: from a backend that runs chunks
    elsewhere its own `chunks` (mcrisk.backends.dask), else simulate_chunk chunk by chunk."""
    remote = getattr(backend, "chunks", None)
    if remote is not None:
        yield from remote(plan, seed, first, samples, chunk_size, keep_nodes)
        return
    # valid until the next chunk: hooks copy what they keep (a backend of another kind, a
    # test's stand-in say, takes none)
    reuse = {"buffers": ChunkBuffers()} if isinstance(backend, Backend) else {}
    for offset in range(0, samples, chunk_size):
        count = min(chunk_size, samples - offset)
        yield first + offset, backend.simulate_chunk(plan, seed, first + offset, count,
                                                     keep_nodes=keep_nodes, **reuse)


def _check_costs(plan: CompiledScenario, samples: int, costs: np.ndarray | None) -> None:
    """simulate_into's `costs` must match the plan: an array of the right shape exactly
    when the plan has costs (a caller's mistake: ValueError)."""
    wanted = (samples, plan.n_strategies, plan.n_costs)
    if plan.n_costs == 0 and costs is not None:
        raise ValueError("costs given for a plan without costs (plan.n_costs = 0)")
    if plan.n_costs > 0 and (costs is None or costs.shape != wanted):
        got = None if costs is None else costs.shape
        raise ValueError(f"a plan with costs needs costs of shape {wanted}, got {got}")


def _check_jobs(plan: CompiledScenario, samples: int, jobs: np.ndarray | None) -> None:
    """simulate_into's `jobs`, when given, must match the plan's job columns (a caller's
    mistake: ValueError)."""
    wanted = (samples, plan.n_strategies, plan.n_job_cols)
    if jobs is not None and (plan.n_job_cols == 0 or jobs.shape != wanted):
        raise ValueError(f"jobs of shape {jobs.shape} given; the plan has "
                         f"{plan.n_job_cols} job columns (shape {wanted})")


def _check_width(plan: CompiledScenario, backend: Backend, chunk_metrics: np.ndarray) -> None:
    """A backend's chunk has N_METRICS + plan.n_costs + plan.n_job_cols columns (a backend
    that does not compute the plan's costs or job columns would otherwise leave them
    unfilled)."""
    wanted = chunk_columns(plan)
    if chunk_metrics.shape[-1] != wanted:
        raise ValueError(f"backend {backend.name} returned {chunk_metrics.shape[-1]} columns "
                         f"per scenario and strategy, the plan needs {wanted} "
                         f"({N_METRICS} metrics, {plan.n_costs} costs and "
                         f"{plan.n_job_cols} job columns)")


def chunk_columns(plan: CompiledScenario) -> int:
    """Columns of a backend's chunk per scenario and strategy: the metrics, the cost columns,
    the job columns."""
    return N_METRICS + plan.n_costs + plan.n_job_cols


def memory_needed(plan: CompiledScenario, samples: int, chunk_size: int = DEFAULT_CHUNK,
                  keep_nodes: bool = True, keep_world: int | None = None,
                  in_memory: bool | None = None, available: int | None = None) -> int:
    """Bytes a run of `samples` scenarios needs at its peak, about (within a few percent of
    the peak resident set measured on the reference: benchmarks/memory.py):

    * the runtime (RUNTIME_BYTES) and what the run keeps: the metrics of every scenario and
      strategy (with costs, their plan.n_costs cost columns too) unless they are so many that
      they live in a file (mcrisk.backends.kept: the page cache's, not the run's; a run that
      `in_memory`: where they are, by default as results_in_memory decides on `available`
      bytes of RAM; a --precision run keeps them in memory whatever their size), the drawn
      inputs of the first keep_world scenarios, and with keep_nodes (a run that writes its outputs) the
      milestone store (milestone_store_bytes);
    * the larger of what is in flight while it simulates (one chunk's results and inputs
      from the backend, its cost columns included, copied into the kept arrays; with
      keep_nodes also its node times and the hooks' copies of them, chunk_output_bytes) and
      what the analysis after it holds (the drivers' inputs and their ranks: two arrays the
      size of the kept inputs; the ranking's pooled copy of two metric columns);
    * with contingent strategies, the branch each world takes (a byte per world and
      decision) and, when nothing else keeps them, the chunk's node times it is read from.
    """
    chunk = min(samples, chunk_size)
    keep_world = default_keep_world(plan) if keep_world is None else keep_world
    kept_world = min(samples, keep_world)
    columns = chunk_columns(plan)
    results = kept_bytes(samples, plan.n_strategies, columns)
    if in_memory is None:
        in_memory = results_in_memory(plan, samples, chunk_size, keep_nodes, keep_world,
                                      available)
    in_file = not in_memory
    kept = (0 if in_file else results) \
        + kept_world * plan.n_quantities * 8
    simulating = chunk * (plan.n_strategies * columns + plan.n_quantities) * 8
    analysis = max(2 * kept_world * plan.n_quantities * 8, 2 * samples * 8)
    if keep_nodes:
        kept += milestone_store_bytes(plan, samples)
        simulating += chunk_output_bytes(plan, chunk)
    if plan.contingencies:      # each world's branch is read off the chunk's node times
        kept += samples * len(plan.contingencies)
        simulating += 0 if keep_nodes else chunk * plan.n_strategies * plan.n_nodes * 8
    return int(RUNTIME_BYTES + kept + max(simulating, analysis))


def _milestones_per_strategy(plan: CompiledScenario) -> float:
    return MILESTONES_PER_NODE * plan.n_nodes


# Chunks whose metrics.parquet rows may be in the writer's hands behind the chunk loop
# (mcrisk.app.collect), each a copy of the chunk's metrics and world. One: the writer keeps
# pace with the loop (~0.3 CPU-s a reference chunk against ~1 s of the loop's), and a second
# set cost the 64x plan 0.27 GB of its peak (3.54 -> 3.81 GB at 20,000 scenarios) for no
# time measured (1e6 reference: 16.3 s with one, 16.9 with two).
WRITER_DEPTH = 1


def chunk_output_bytes(plan: CompiledScenario, chunk: int) -> int:
    """Bytes the streaming outputs (mcrisk.app.collect's hooks) hold for one chunk of
    `chunk` scenarios, about: its node times; their milestone times, copied and sorted once
    per strategy reduced at a time (as many as Numba's threads), each with the histogram
    table it makes; and metrics.parquet's writer, WRITER_DEPTH sets of a chunk's copied
    metrics and world with the chunk's rows built from them (the cost columns too, with
    costs; every quantity counted as an input, at 8 bytes: an upper bound)."""
    node_times = chunk * plan.n_strategies * plan.n_nodes * 8
    at_once = min(plan.n_strategies, _output_threads())
    milestone_rows = at_once * chunk * _milestones_per_strategy(plan) * 8 * 2
    rows = chunk * plan.n_strategies * (chunk_columns(plan) + plan.n_quantities) * 8
    copies = chunk * (plan.n_strategies * chunk_columns(plan) + plan.n_quantities) * 8
    return int(node_times + milestone_rows + WRITER_DEPTH * (rows + copies))


def _output_threads() -> int:
    """The threads the chunk hooks reduce on: Numba's (core.tasks), or, where Numba
    cannot be imported (the NumPy backend needs none), the CPUs, as many as Numba would use."""
    try:
        import numba
    except ImportError:
        return os.cpu_count() or 1
    return numba.get_num_threads()


def milestone_store_bytes(plan: CompiledScenario, samples: int) -> int:
    """Bytes of the milestone store after `samples` scenarios, about: every time of the
    first exact_up_to scenarios (MILESTONES_KEPT_EXACT, fewer for a large plan), then each
    milestone's bounded histogram (24 bytes a bin), whatever the number of scenarios."""
    milestones = plan.n_strategies * _milestones_per_strategy(plan)
    exact = min(MILESTONES_KEPT_EXACT,
                max(1_000, MILESTONE_EXACT_BYTES // (8 * max(int(milestones), 1))))
    if samples <= exact:
        return int(samples * milestones * 8)
    bins = min(MILESTONE_MAX_BINS,
               max(MILESTONE_MIN_BINS, MILESTONE_BINS_BYTES // (24 * max(int(milestones), 1))))
    return int(bins * milestones * 24)


def results_in_memory(plan: CompiledScenario, samples: int, chunk_size: int = DEFAULT_CHUNK,
                      keep_nodes: bool = True, keep_world: int | None = None,
                      available: int | None = None) -> bool:
    """Whether a run keeps its per-scenario results in memory: when they take at most
    kept.IN_MEMORY_BYTES and the run fits in MEMORY_SHARE of the RAM (`available` bytes,
    else this machine's) with them there; else they go in a file (mcrisk.backends.kept).
    Where they are changes no number."""
    if not small_enough(kept_bytes(samples, plan.n_strategies, chunk_columns(plan))):
        return False
    available = physical_memory() if available is None else available
    if available is None:
        return True
    return memory_needed(plan, samples, chunk_size, keep_nodes, keep_world, in_memory=True,
                         available=available) <= MEMORY_SHARE * available


def physical_memory() -> int | None:
    """This machine's RAM in bytes, or None where the OS does not say."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_memory(plan: CompiledScenario, samples: int, chunk_size: int = DEFAULT_CHUNK,
                 option: str = "--samples", available: int | None = None,
                 grows: bool = False) -> None:
    """Refuse, before anything runs, a sample count above MAX_SAMPLES or one whose results
    would not fit in this machine's memory (McriskError naming the option and what fits);
    `grows`: a --precision run, which keeps its results in memory whatever their size."""
    if samples > MAX_SAMPLES:
        raise McriskError(f"{option} = {samples:,}: more than mcrisk's cap of "
                          f"{MAX_SAMPLES:,} scenarios (use at most {MAX_SAMPLES:,})")
    columns = chunk_columns(plan)
    available = physical_memory() if available is None else available
    in_memory = True if grows else results_in_memory(plan, samples, chunk_size,
                                                     available=available)
    if not in_memory:
        check_disk(kept_bytes(samples, plan.n_strategies, columns), f"{option} = {samples:,}")
    if available is None:
        return
    needed = memory_needed(plan, samples, chunk_size, in_memory=in_memory, available=available)
    allowed = MEMORY_SHARE * available
    if needed <= allowed:
        return
    fits = _largest_that_fits(plan, chunk_size, allowed, grows, available)
    raise McriskError(
        f"{option} = {samples:,}: this run would need about {needed / 1e9:,.1f} GB of memory "
        f"({_what_is_kept(plan, samples, in_memory)}) and this machine has "
        f"{available / 1e9:,.1f} GB, of which a run may use {MEMORY_SHARE:.0%} (use at most "
        f"about {fits:,} scenarios here, or a machine with more memory)")


def _what_is_kept(plan: CompiledScenario, samples: int, in_memory: bool) -> str:
    """What the memory estimate is made of, in words."""
    if not in_memory:
        return ("the milestones, the drawn inputs and working memory; the per-scenario "
                "results are in a temporary file")
    return (f"{samples:,} scenarios x {plan.n_strategies} strategies x {_columns_text(plan)} "
            "x 8 bytes, plus drawn inputs and working memory")


def _columns_text(plan: CompiledScenario) -> str:
    """What a run keeps per scenario and strategy, in words: '6 metrics' (+ 'and 9 costs')."""
    text = f"{N_METRICS} metrics"
    text += f" and {plan.n_costs} costs" if plan.n_costs else ""
    return text + (f" and {plan.n_job_cols} job columns" if plan.n_job_cols else "")


def _largest_that_fits(plan: CompiledScenario, chunk_size: int, allowed: float,
                       grows: bool = False, available: int | None = None) -> int:
    """The largest sample count whose memory_needed is within `allowed` (bisection: the
    counts that fit are those up to it, since the results leave memory for a file only where
    they would not fit there, and a file needs less)."""
    low, high = 0, MAX_SAMPLES
    while low < high:
        mid = (low + high + 1) // 2
        if memory_needed(plan, mid, chunk_size, in_memory=True if grows else None,
                         available=available) <= allowed:
            low = mid
        else:
            high = mid - 1
    return low
