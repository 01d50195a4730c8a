"""The NumPy reference backend: the readable specification of the simulation.

Vectorized over scenarios, written to read like docs/metrics.md and the
compiled-plan description in mcrisk/compile.py. The Numba kernel (backends/cpu.py) and the
CUDA kernel (kernels/simulate.cu) mirror its stage names and loop structure:

    sample_world      -> world[scenario, quantity]
    schedule_nodes    -> node_time[scenario, node]   (one strategy)
    capacity_metrics  -> trough depth/days, shortfall, homeless days
    power_violation, completion_day

Sums are added in the kernels' order, one term at a time (`sum_in_order`; NumPy's `sum`
adds pairwise, and float addition is not associative), and every other operation is the
kernels' too, so this backend's numbers are theirs bit for bit, except where a draw goes
through a transcendental function that NumPy and SciPy compute with their own routines: the
lognormal's exp(mu + sigma * ndtri(u)) and the power law of PERT's outermost table intervals.
Those differ from the kernels' libm and Acklam ndtri by an ulp or so, which moves metrics by
about 1e-15 of their scale (tests/test_backends.py holds them to 1e-12).
"""
from __future__ import annotations

import numpy as np

from .. import rng
from ..compile import CompiledScenario
from ..definitions import (MAX_BURNIN_ATTEMPTS, NODE_CREW, Q_ATTEMPTS, Q_BURNIN, Q_SAMPLE, Q_SUM,
                           REL_EPS, demand_at, event_deltas)
from ..distributions import KIND_FIXED, sample


def sum_in_order(terms: np.ndarray) -> np.ndarray:
    """Sum over the last axis strictly left to right, as the kernels' loops add."""
    if terms.shape[-1] == 0:
        return np.zeros(terms.shape[:-1])
    return np.add.accumulate(terms, axis=-1)[..., -1]


def draw(plan: CompiledScenario, d: int, seed: int, scenario: np.ndarray, address: int,
         index) -> np.ndarray:
    """Draws of distribution d at (seed, scenario, address, index) for each scenario."""
    if plan.dist_kind[d] == KIND_FIXED and plan.dist_chance[d] >= 1.0:
        return np.full(scenario.shape, plan.dist_param[d, 0])
    u1, u2 = rng.uniforms(seed, scenario, address, index)
    return sample(int(plan.dist_kind[d]), plan.dist_param[d], float(plan.dist_chance[d]),
                  plan.pert_table, u1, u2)


def burn_in_days(plan: CompiledScenario, q: int, seed: int, scenario: np.ndarray):
    """Days from install end to a passed burn-in, and attempts, per scenario.

    Attempt k (counted over the unit's whole life) lasts attempt_days drawn at
    (attempt, k) and fails when the uniform at (outcome, k) is below fail_first for a
    first attempt (also the first after an RMA), else fail_retry. A failure is fixed
    (fix_days at (fix, k)) unless it is the rma_after-th in a row: then the unit is replaced
    (rma_days at (rma, r) for the unit's r-th RMA) and counts restart.
    """
    b = plan.q_burnin[q]
    attempt_dist, fix_dist, rma_dist = plan.burnin_dist[b]
    fail_first, fail_retry = plan.burnin_fail[b]
    rma_after = plan.burnin_rma_after[b]
    a_attempt, a_outcome, a_fix, a_rma = (int(a) for a in plan.q_address[q])
    n = scenario.shape[0]
    days = np.zeros(n)
    attempts = np.zeros(n)
    fails_in_row = np.zeros(n, dtype=np.int64)
    rma_count = np.zeros(n, dtype=np.int64)
    active = np.arange(n)
    for k in range(MAX_BURNIN_ATTEMPTS):
        if active.size == 0:
            break
        s = scenario[active]
        days[active] += draw(plan, attempt_dist, seed, s, a_attempt, k)
        attempts[active] += 1
        u_outcome, _ = rng.uniforms(seed, s, a_outcome, k)
        p_fail = np.where(fails_in_row[active] == 0, fail_first, fail_retry)
        failed = active[u_outcome < p_fail]
        fails_in_row[failed] += 1
        replaced = failed[fails_in_row[failed] == rma_after]
        fixed = failed[fails_in_row[failed] < rma_after]
        days[fixed] += draw(plan, fix_dist, seed, scenario[fixed], a_fix, k)
        days[replaced] += draw(plan, rma_dist, seed, scenario[replaced], a_rma, rma_count[replaced])
        rma_count[replaced] += 1
        fails_in_row[replaced] = 0
        active = failed
    else:
        days[active] = np.inf
    return days, attempts


def sample_world(plan: CompiledScenario, seed: int, first: int, count: int) -> np.ndarray:
    """world[i, q] for scenarios first .. first + count - 1."""
    scenario = np.arange(first, first + count, dtype=np.uint64)
    world = np.zeros((count, plan.n_quantities))
    for q in range(plan.n_quantities):
        kind = plan.q_kind[q]
        if kind == Q_SAMPLE:
            world[:, q] = draw(plan, plan.q_dist[q], seed, scenario, int(plan.q_address[q, 0]), 0)
        elif kind == Q_SUM:
            terms = plan.q_terms[plan.q_terms_ptr[q]:plan.q_terms_ptr[q + 1]]
            constant = np.full((count, 1), plan.q_const[q])
            world[:, q] = sum_in_order(np.concatenate([constant, world[:, terms]], axis=1))
        elif kind == Q_BURNIN:
            world[:, q], world[:, q + 1] = burn_in_days(plan, q, seed, scenario)
        elif kind != Q_ATTEMPTS:
            raise ValueError(f"unknown quantity kind {kind}")
    return world


def _node_time(plan: CompiledScenario, s: int, v: int, world: np.ndarray,
               start: np.ndarray) -> np.ndarray:
    """t[v] given the max of its base and deps (`start`), plus its additive terms."""
    t = start + plan.node_add_const[s, v]
    for q in plan.node_add_q[s, v]:
        if q >= 0:
            t = t + world[:, q]
    return t


def _node_start(plan: CompiledScenario, s: int, v: int, world: np.ndarray,
                node_time: np.ndarray) -> np.ndarray:
    start = np.full(world.shape[0], plan.node_base_const[s, v])
    if plan.node_base_q[v] >= 0:
        start = np.maximum(start, world[:, plan.node_base_q[v]])
    for d in plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]:
        start = np.maximum(start, node_time[:, d])
    return start


def schedule_nodes(plan: CompiledScenario, s: int, world: np.ndarray) -> np.ndarray:
    """node_time[i, v] of strategy s: max-plus propagation, crews taking rows by ready time."""
    n, n_nodes = world.shape[0], plan.n_nodes
    node_time = np.full((n, n_nodes), np.nan)
    computed = np.zeros((n, n_nodes), dtype=bool)
    crew_free = np.zeros((n, plan.n_crews))
    crew_nodes = [v for v in range(n_nodes) if plan.node_kind[s, v] == NODE_CREW]
    rows = np.arange(n)
    for _ in range(len(crew_nodes) + 1):
        for v in plan.topo[s]:
            if plan.node_kind[s, v] == NODE_CREW:
                continue
            deps = plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]
            can = ~computed[:, v] & computed[:, deps].all(axis=1)
            if can.any():
                start = _node_start(plan, s, v, world[can], node_time[can])
                node_time[can, v] = _node_time(plan, s, v, world[can], start)
                computed[can, v] = True
        if not crew_nodes:
            break
        # The next row for a crew: the earliest-ready among rows whose deps are all known.
        ready = np.full((n, len(crew_nodes)), np.inf)
        for j, v in enumerate(crew_nodes):
            deps = plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]
            can = ~computed[:, v] & computed[:, deps].all(axis=1)
            ready[can, j] = _node_start(plan, s, v, world[can], node_time[can])
        pick = np.argmin(ready, axis=1)          # ties: the lower node id
        picked_ready = ready[rows, pick]
        go = np.isfinite(picked_ready)
        crew = np.argmin(crew_free, axis=1)
        begin = np.maximum(picked_ready, crew_free[rows, crew])
        for j, v in enumerate(crew_nodes):
            sel = go & (pick == j)
            if sel.any():
                node_time[sel, v] = _node_time(plan, s, v, world[sel], begin[sel])
                computed[sel, v] = True
                crew_free[rows[sel], crew[sel]] = node_time[sel, v]
    if not computed.all():
        raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
    return node_time


def positive_area(lo, hi, f_lo, f_hi):
    """Integral of max(0, f) over [lo, hi] for f linear from f_lo to f_hi."""
    width = hi - lo
    both = (f_lo >= 0) & (f_hi >= 0)
    area = np.where(both, 0.5 * (f_lo + f_hi) * width, 0.0)
    up = (f_lo < 0) & (f_hi > 0)
    down = (f_lo > 0) & (f_hi < 0)
    with np.errstate(divide="ignore", invalid="ignore"):
        area = np.where(up, 0.5 * width * f_hi * f_hi / (f_hi - f_lo), area)
        area = np.where(down, 0.5 * width * f_lo * f_lo / (f_lo - f_hi), area)
    return area


def demand_on_segment(plan: CompiledScenario, k: int, t):
    """D(t) for t in demand segment k: k = 0 before the first point, k = n after the last,
    else the line from point k - 1 to point k (the kernels' formula, so their floats)."""
    day, value = plan.demand_day, plan.demand_value
    n = day.shape[0]
    if k == 0 or k == n:
        return np.full(np.shape(t), value[0] if k == 0 else value[n - 1])
    slope = (value[k] - value[k - 1]) / (day[k] - day[k - 1])
    return value[k - 1] + (t - day[k - 1]) * slope


def shortfall_area(plan: CompiledScenario, lo, hi, capacity):
    """Integral over [lo, hi] of max(0, D(t) - capacity), demand segment by segment."""
    cuts = [-np.inf] + list(plan.demand_day) + [np.inf]
    total = np.zeros(np.shape(lo))
    for k, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        seg_lo = np.maximum(lo, a)
        seg_hi = np.minimum(hi, b)
        ok = seg_hi > seg_lo
        seg_lo, seg_hi = np.where(ok, seg_lo, 0.0), np.where(ok, seg_hi, 0.0)
        f_lo = demand_on_segment(plan, k, seg_lo) - capacity
        f_hi = demand_on_segment(plan, k, seg_hi) - capacity
        total += np.where(ok, positive_area(seg_lo, seg_hi, f_lo, f_hi), 0.0)
    return total


def capacity_metrics(plan: CompiledScenario, node_time: np.ndarray, world: np.ndarray) -> tuple:
    """trough_depth, trough_days, shortfall_gpu_days, homeless_days per scenario.

    Capacity is piecewise constant between events; events at one instant apply together
    because the interval between them has zero length.
    """
    n = node_time.shape[0]
    horizon = plan.horizon
    times = node_time[:, plan.cap_event_node]
    order = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, order, axis=1)
    n_islands = plan.island_cap0.shape[0]
    # island capacity before and after each sorted event, added event by event: [n, k + 1, i]
    delta = np.zeros((n, times.shape[1], n_islands))
    island = plan.cap_event_island[order]
    event_delta = event_deltas(plan, world)
    np.put_along_axis(delta, island[:, :, None],
                      np.take_along_axis(event_delta, order, axis=1)[:, :, None], axis=2)
    island_cap = np.add.accumulate(
        np.concatenate([np.broadcast_to(plan.island_cap0, (n, 1, n_islands)), delta], axis=1),
        axis=1)
    bounds = np.concatenate([np.zeros((n, 1)), np.clip(times, 0.0, horizon),
                             np.full((n, 1), horizon)], axis=1)
    lo, hi = bounds[:, :-1], bounds[:, 1:]
    width = hi - lo
    capacity = sum_in_order(island_cap)
    baseline = plan.baseline
    below = capacity < baseline - REL_EPS * baseline
    depth = np.where(width > 0, np.maximum(0.0, baseline - capacity), 0.0).max(axis=1)
    depth = np.where(depth > REL_EPS * baseline, depth, 0.0)
    trough_days = sum_in_order(np.where(below, width, 0.0))
    shortfall = sum_in_order(shortfall_area(plan, lo, hi, capacity))
    job = plan.largest_job
    homeless = island_cap.max(axis=2) < job - REL_EPS * max(job, 1.0)
    homeless_days = sum_in_order(np.where(homeless, width, 0.0))
    return depth, trough_days, shortfall, homeless_days


def power_violation(plan: CompiledScenario, s: int, node_time: np.ndarray) -> np.ndarray:
    """1.0 where some hall's draw exceeds its cap at any time (not only before the horizon)."""
    n = node_time.shape[0]
    times = node_time[:, plan.power_event_node]
    order = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, order, axis=1)
    violated = np.zeros(n, dtype=bool)
    # a tie group's state is the one after its last event
    group_end = np.concatenate([times[:, 1:] != times[:, :-1], np.ones((n, 1), bool)], axis=1)
    for h, cap in enumerate(plan.hall_cap):
        limit = cap + REL_EPS * cap
        delta = np.where(plan.power_event_hall[s] == h, plan.power_event_delta, 0.0)[order]
        start = np.full((n, 1), plan.hall_draw0[h])
        draw = np.add.accumulate(np.concatenate([start, delta], axis=1), axis=1)[:, 1:]
        violated |= (plan.hall_draw0[h] > limit) | ((draw > limit) & group_end).any(axis=1)
    return violated.astype(np.float64)


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False):
    """metrics[i, s, m] (and world[i, q], and node_time[i, s, v] if keep_nodes) for scenarios
    first .. first + count - 1, all below 2**32 (count = 0: arrays with no scenario)."""
    rng.check_scenarios(first, count)
    world = sample_world(plan, seed, first, count)
    metrics = np.zeros((count, plan.n_strategies, 6))
    nodes = np.zeros((count, plan.n_strategies, plan.n_nodes)) if keep_nodes else None
    for s in range(plan.n_strategies):
        node_time = schedule_nodes(plan, s, world)
        metrics[:, s, 0:4] = np.stack(capacity_metrics(plan, node_time, world), axis=1)
        metrics[:, s, 4] = node_time[:, plan.completion_node].max(axis=1)
        metrics[:, s, 5] = power_violation(plan, s, node_time)
        if keep_nodes:
            nodes[:, s] = node_time
    return metrics, world, nodes
