"""The Numba CPU backend: backends/reference.py as scalar loops, one scenario at a time.

Same stage names, loop structure and constants as the NumPy reference, so the two can be read
side by side; kernels/simulate.cu mirrors this file. Parallel over blocks of scenarios
(`prange`), each block with its own scratch arrays so the hot loop never allocates.
"""
from __future__ import annotations

import math

import numba as nb
import numpy as np

from ..compile import CompiledScenario
from ..definitions import (MAX_BURNIN_ATTEMPTS, N_METRICS, NODE_CREW, Q_ATTEMPTS, Q_BURNIN,
                           Q_SAMPLE, Q_SUM, REL_EPS)
from ..distributions import (KIND_FIXED, KIND_LOGNORMAL, KIND_PERT, KIND_TRIANGULAR,
                             KIND_UNIFORM, PERT_TABLE_SIZE)
from ..rng import PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1, check_scenarios, split_seed

_M0 = np.uint64(PHILOX_M0)
_M1 = np.uint64(PHILOX_M1)
_W0 = np.uint64(PHILOX_W0)
_W1 = np.uint64(PHILOX_W1)
_MASK32 = np.uint64(0xFFFFFFFF)
_TWO_POW_M52 = 2.0 ** -52

# Performance: the hot functions run without Numba's reference counting (`_nrt=False`): they
# never allocate, and counting every array passed between them (atomic updates on counters
# shared by both threads) cost 3-5x in throughput. Only simulate_chunk_kernel allocates.
jit = nb.njit(cache=True, nogil=True, _nrt=False, error_model="numpy")
# Performance: helpers called per draw, per node, per event or per strategy are inlined
# where they are called (Numba IR inlining; LLVM left them as calls, each passing every
# array as a dozen words): sample_world took 35% less time, the metrics 15% less.
jit_inline = nb.njit(cache=True, nogil=True, _nrt=False, error_model="numpy", inline="always")


@jit_inline
def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Random123 philox4x32_R(10, ctr, key) on uint64 values holding 32-bit words."""
    for round_index in range(10):
        if round_index > 0:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
        p0 = _M0 * c0
        p1 = _M1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


@jit_inline
def words_to_uniform(word_a, word_b):
    k = ((word_a >> np.uint64(6)) << np.uint64(26)) | (word_b >> np.uint64(6))
    return (np.float64(k) + 0.5) * _TWO_POW_M52


@jit_inline
def uniforms(seed_lo, seed_hi, scenario, address, draw_index):
    """Counter (scenario, address_lo, address_hi, draw_index): scenario < 2**32 (checked by
    simulate_chunk), the 64-bit address in two words."""
    address = np.uint64(address)
    w0, w1, w2, w3 = philox4x32_10(scenario & _MASK32, address & _MASK32,
                                   address >> np.uint64(32), np.uint64(draw_index),
                                   seed_lo, seed_hi)
    return words_to_uniform(w0, w1), words_to_uniform(w2, w3)


# Acklam's rational approximation of the normal quantile, refined by one Halley step on
# erfc: full double precision (scipy.special.ndtri is the reference in the NumPy backend).
_A = (-3.969683028665376e+01, 2.209460984245205e+02, -2.759285104469687e+02,
      1.383577518672690e+02, -3.066479806614716e+01, 2.506628277459239e+00)
_B = (-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
      6.680131188771972e+01, -1.328068155288572e+01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
      -2.549732539343734e+00, 4.374664141464968e+00, 2.938163982698783e+00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
      3.754408661907416e+00)


@jit
def ndtri(p):
    """Standard normal quantile for p in (0, 1); the upper half by symmetry, since 1 - p is
    exact there and the Halley step is accurate only where erfc does not cancel."""
    if p > 0.5:
        return -ndtri_lower(1.0 - p)
    return ndtri_lower(p)


@jit
def ndtri_lower(p):
    """ndtri for p in (0, 0.5]."""
    if p < 0.02425:
        q = math.sqrt(-2.0 * math.log(p))
        x = ((((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5])
             / ((((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1.0))
    else:
        q = p - 0.5
        r = q * q
        x = ((((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q
             / (((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1.0))
    e = 0.5 * math.erfc(-x / math.sqrt(2.0)) - p
    u = e * math.sqrt(2.0 * math.pi) * math.exp(0.5 * x * x)
    return x - u / (1.0 + 0.5 * x * u)


@jit_inline
def ppf(kind, dist_param, d, pert_table, u):
    """Inverse CDF of distribution d (not `chance`) at u; rows are indexed, never sliced
    (performance: a slice is an array view with reference counting in the hot loop)."""
    if kind == KIND_FIXED:
        return dist_param[d, 0]
    if kind == KIND_UNIFORM:
        return dist_param[d, 0] + u * dist_param[d, 1]
    if kind == KIND_TRIANGULAR:
        low, mode, high = dist_param[d, 0], dist_param[d, 1], dist_param[d, 2]
        span = high - low
        if span <= 0.0:
            return low
        if u < (mode - low) / span:
            return low + math.sqrt(u * span * (mode - low))
        return high - math.sqrt((1.0 - u) * span * (high - mode))
    if kind == KIND_PERT:
        offset = int(dist_param[d, 2])
        last = PERT_TABLE_SIZE - 1
        position = u * last
        knot = min(int(position), last - 1)
        frac = position - knot
        if knot == 0:
            y = pert_table[offset + 1] * position ** pert_table[offset + last + 1]
        elif knot == last - 1:
            y = 1.0 - (1.0 - pert_table[offset + last - 1]) * (
                (last - position) ** pert_table[offset + last + 2])
        else:
            lo = pert_table[offset + knot]
            y = lo + frac * (pert_table[offset + knot + 1] - lo)
        return dist_param[d, 0] + dist_param[d, 1] * y
    if kind == KIND_LOGNORMAL:
        return math.exp(dist_param[d, 0] + dist_param[d, 1] * ndtri(u))
    return math.nan


@jit_inline
def draw(dist_kind, dist_param, dist_chance, pert_table, d, seed_lo, seed_hi, scenario,
         address, index):
    kind = dist_kind[d]
    chance = dist_chance[d]
    if kind == KIND_FIXED and chance >= 1.0:
        return dist_param[d, 0]
    u1, u2 = uniforms(seed_lo, seed_hi, scenario, address, index)
    if chance >= 1.0:
        return ppf(kind, dist_param, d, pert_table, u1)
    if u1 < chance:
        return ppf(kind, dist_param, d, pert_table, u2)
    return 0.0


@jit_inline
def burn_in_days(dist_kind, dist_param, dist_chance, pert_table, q_address, q_burnin,
                 burnin_dist, burnin_fail, burnin_rma_after, q, seed_lo, seed_hi, scenario):
    b = q_burnin[q]
    attempt_dist, fix_dist, rma_dist = burnin_dist[b, 0], burnin_dist[b, 1], burnin_dist[b, 2]
    fail_first, fail_retry = burnin_fail[b, 0], burnin_fail[b, 1]
    rma_after = burnin_rma_after[b]
    a_attempt, a_outcome = q_address[q, 0], q_address[q, 1]
    a_fix, a_rma = q_address[q, 2], q_address[q, 3]
    days = 0.0
    fails_in_row = 0
    rma_count = 0
    for k in range(MAX_BURNIN_ATTEMPTS):
        days += draw(dist_kind, dist_param, dist_chance, pert_table, attempt_dist,
                     seed_lo, seed_hi, scenario, a_attempt, k)
        u_outcome, _ = uniforms(seed_lo, seed_hi, scenario, a_outcome, k)
        p_fail = fail_first if fails_in_row == 0 else fail_retry
        if u_outcome >= p_fail:
            return days, k + 1.0
        fails_in_row += 1
        if fails_in_row == rma_after:
            days += draw(dist_kind, dist_param, dist_chance, pert_table, rma_dist,
                         seed_lo, seed_hi, scenario, a_rma, rma_count)
            rma_count += 1
            fails_in_row = 0
        else:
            days += draw(dist_kind, dist_param, dist_chance, pert_table, fix_dist,
                         seed_lo, seed_hi, scenario, a_fix, k)
    return math.inf, float(MAX_BURNIN_ATTEMPTS)


@jit
def sample_world(dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address,
                 q_const, q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail,
                 burnin_rma_after, seed_lo, seed_hi, scenario, world):
    for q in range(q_kind.shape[0]):
        kind = q_kind[q]
        if kind == Q_SAMPLE:
            world[q] = draw(dist_kind, dist_param, dist_chance, pert_table, q_dist[q],
                            seed_lo, seed_hi, scenario, q_address[q, 0], 0)
        elif kind == Q_SUM:
            total = q_const[q]
            for j in range(q_terms_ptr[q], q_terms_ptr[q + 1]):
                total += world[q_terms[j]]
            world[q] = total
        elif kind == Q_BURNIN:
            world[q], world[q + 1] = burn_in_days(
                dist_kind, dist_param, dist_chance, pert_table, q_address, q_burnin,
                burnin_dist, burnin_fail, burnin_rma_after, q, seed_lo, seed_hi, scenario)
        elif kind != Q_ATTEMPTS:
            world[q] = math.nan


@jit
def _node_start(node_base_q, node_base_const, dep_ptr, dep_idx, s, v, world, node_time):
    start = node_base_const[s, v]
    if node_base_q[v] >= 0:
        start = max(start, world[node_base_q[v]])
    for j in range(dep_ptr[s, v], dep_ptr[s, v + 1]):
        start = max(start, node_time[dep_idx[s, j]])
    return start


@jit
def _node_time(node_add_q, node_add_const, s, v, world, start):
    t = start + node_add_const[s, v]
    for j in range(2):
        q = node_add_q[s, v, j]
        if q >= 0:
            t += world[q]
    return t


@jit_inline
def _time_block(node_base_q, node_kind, node_base_const, node_add_q, node_add_const, dep_ptr,
                dep_idx, block_ptr, block_node, s, b, world, node_time, crew_ready_at):
    """Block b's deps are all timed: a crew row gets its ready time (fixed from now on) to
    compete for a crew; other nodes get their times, in order. Returns how many it timed."""
    first = block_ptr[s, b]
    v = block_node[s, first]
    if node_kind[s, v] == NODE_CREW:
        crew_ready_at[v] = _node_start(node_base_q, node_base_const, dep_ptr, dep_idx, s, v,
                                       world, node_time)
        return 0
    for j in range(first, block_ptr[s, b + 1]):
        v = block_node[s, j]
        start = _node_start(node_base_q, node_base_const, dep_ptr, dep_idx, s, v, world,
                            node_time)
        node_time[v] = _node_time(node_add_q, node_add_const, s, v, world, start)
    return block_ptr[s, b + 1] - first


@jit_inline
def schedule_nodes(node_base_q, node_kind, node_base_const, node_add_q, node_add_const,
                   dep_ptr, dep_idx, n_crews, block_ptr, block_node, block_wait,
                   n_ready_blocks, crew_node, n_crew_rows, unlock_ptr, unlock_block, s, world,
                   node_time, waiting, crew_ready_at, crew_free):
    """node_time[v] of strategy s; returns False on a deadlock (ruled out by validation).

    Same result as the NumPy reference's sweeps: nodes without a crew are timed as soon as
    their deps are, and only when none is left does the earliest-ready row get a crew.
    Performance shortcut: the blocks of the compiled crew schedule instead of sweeps. For
    s > 0, node_time must hold strategy s - 1's times on the same world: the nodes it shares
    with s are in no block.
    """
    n_rows = n_crew_rows[s]
    for r in range(n_rows):
        crew_ready_at[crew_node[s, r]] = math.inf
    for b in range(block_wait.shape[1]):
        waiting[b] = block_wait[s, b]
    n_done = 0
    for b in range(n_ready_blocks[s]):
        n_done += _time_block(node_base_q, node_kind, node_base_const, node_add_q,
                              node_add_const, dep_ptr, dep_idx, block_ptr, block_node, s, b,
                              world, node_time, crew_ready_at)
    for c in range(n_crews):
        crew_free[c] = 0.0
    while True:
        # The next row for a crew: the earliest-ready among rows whose deps are all timed.
        pick = -1
        picked_ready = math.inf
        for r in range(n_rows):
            ready = crew_ready_at[crew_node[s, r]]
            if ready < picked_ready:
                pick, picked_ready = r, ready
        if pick < 0:
            break
        v = crew_node[s, pick]
        crew_ready_at[v] = math.inf
        crew = 0
        for c in range(1, n_crews):
            if crew_free[c] < crew_free[crew]:
                crew = c
        begin = max(picked_ready, crew_free[crew])
        node_time[v] = _node_time(node_add_q, node_add_const, s, v, world, begin)
        crew_free[crew] = node_time[v]
        n_done += 1
        for j in range(unlock_ptr[s, pick], unlock_ptr[s, pick + 1]):
            b = unlock_block[s, j]
            waiting[b] -= 1
            if waiting[b] == 0:
                n_done += _time_block(node_base_q, node_kind, node_base_const, node_add_q,
                                      node_add_const, dep_ptr, dep_idx, block_ptr, block_node,
                                      s, b, world, node_time, crew_ready_at)
    return n_done == block_ptr[s, block_ptr.shape[1] - 1]   # every node in a block


@jit_inline
def _sort_events(times, order, n):
    """Sort the first n (time, event) pairs by time, ties by event index: the order a stable
    sort of the events by time gives. Insertion sort of a few dozen pairs (performance: they
    arrive in a likely time order, so it has little to move)."""
    for i in range(1, n):
        t = times[i]
        k = order[i]
        j = i
        while j > 0 and (times[j - 1] > t or (times[j - 1] == t and order[j - 1] > k)):
            times[j] = times[j - 1]
            order[j] = order[j - 1]
            j -= 1
        times[j] = t
        order[j] = k


@jit_inline
def positive_area(lo, hi, f_lo, f_hi):
    width = hi - lo
    if f_lo >= 0.0 and f_hi >= 0.0:
        return 0.5 * (f_lo + f_hi) * width
    if f_lo < 0.0 and f_hi > 0.0:
        return 0.5 * width * f_hi * f_hi / (f_hi - f_lo)
    if f_lo > 0.0 and f_hi < 0.0:
        return 0.5 * width * f_lo * f_lo / (f_lo - f_hi)
    return 0.0


@jit_inline
def demand_on_segment(demand_day, demand_value, k, t):
    """D(t) for t in demand segment k: k = 0 before the first point, k = n after the last,
    else the line from point k - 1 to point k."""
    n = demand_day.shape[0]
    if k == 0:
        return demand_value[0]
    if k == n:
        return demand_value[n - 1]
    slope = (demand_value[k] - demand_value[k - 1]) / (demand_day[k] - demand_day[k - 1])
    return demand_value[k - 1] + (t - demand_day[k - 1]) * slope


@jit_inline
def shortfall_area(demand_day, demand_value, lo, hi, capacity, k):
    """Integral over [lo, hi] of max(0, D(t) - capacity), splitting at demand knots.

    k is the demand segment holding lo or before it; returns (area, segment holding hi).
    Performance shortcut: intervals arrive in time order, so the segment only moves forward.
    """
    n = demand_day.shape[0]
    while k < n and demand_day[k] <= lo:
        k += 1
    total = 0.0
    a = lo
    while True:
        b = hi if k == n else min(hi, demand_day[k])
        f_a = demand_on_segment(demand_day, demand_value, k, a) - capacity
        f_b = demand_on_segment(demand_day, demand_value, k, b) - capacity
        total += positive_area(a, b, f_a, f_b)
        if b >= hi:
            return total, k
        a = b
        k += 1


@jit_inline
def capacity_metrics(cap_event_node, cap_event_island, cap_event_delta, cap_event_scale_q,
                     cap_event_order, island_cap0, baseline, horizon, largest_job, demand_day,
                     demand_value, s, world, node_time, times, order, island_cap, out):
    """out[0:4] = trough_depth, trough_days, shortfall_gpu_days, homeless_days."""
    n_events = cap_event_node.shape[0]
    for j in range(n_events):
        order[j] = cap_event_order[s, j]
        times[j] = node_time[cap_event_node[order[j]]]
    _sort_events(times, order, n_events)
    n_islands = island_cap0.shape[0]
    capacity = 0.0
    for i in range(n_islands):
        island_cap[i] = island_cap0[i]
        capacity += island_cap0[i]
    depth = 0.0
    trough_days = 0.0
    shortfall = 0.0
    homeless_days = 0.0
    lo = 0.0
    segment = 0
    below_limit = baseline - REL_EPS * baseline
    job_limit = largest_job - REL_EPS * max(largest_job, 1.0)
    for j in range(n_events + 1):
        hi = horizon if j == n_events else min(max(times[j], 0.0), horizon)
        width = hi - lo
        if width > 0.0:
            depth = max(depth, baseline - capacity)
            if capacity < below_limit:
                trough_days += width
            area, segment = shortfall_area(demand_day, demand_value, lo, hi, capacity,
                                           segment)
            shortfall += area
            largest = -math.inf
            for i in range(n_islands):
                largest = max(largest, island_cap[i])
            if largest < job_limit:
                homeless_days += width
            lo = hi
        if j < n_events:
            k = order[j]
            delta = cap_event_delta[k]
            if cap_event_scale_q[k] >= 0:
                delta *= world[cap_event_scale_q[k]]
            island_cap[cap_event_island[k]] += delta
            capacity = 0.0
            for i in range(n_islands):
                capacity += island_cap[i]
    out[0] = depth if depth > REL_EPS * baseline else 0.0
    out[1] = trough_days
    out[2] = shortfall
    out[3] = homeless_days


@jit_inline
def power_violation(power_event_node, power_event_hall, power_event_delta,
                    power_event_order, n_power_checked, hall_draw0, hall_cap, s, node_time,
                    times, order, draw):
    n_events = n_power_checked[s]
    for j in range(n_events):
        order[j] = power_event_order[s, j]
        times[j] = node_time[power_event_node[order[j]]]
    _sort_events(times, order, n_events)
    for h in range(hall_cap.shape[0]):
        draw[h] = hall_draw0[h]
        if draw[h] > hall_cap[h] + REL_EPS * hall_cap[h]:
            return 1.0
    for j in range(n_events):
        k = order[j]
        draw[power_event_hall[s, k]] += power_event_delta[k]
        group_end = j == n_events - 1 or times[j + 1] != times[j]
        if group_end:
            for h in range(hall_cap.shape[0]):
                if draw[h] > hall_cap[h] + REL_EPS * hall_cap[h]:
                    return 1.0
    return 0.0


@jit_inline
def completion_day(completion_node, node_time):
    last = -math.inf
    for k in range(completion_node.shape[0]):
        last = max(last, node_time[completion_node[k]])
    return last


@jit
def simulate_block(
        dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address, q_const,
        q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail, burnin_rma_after,
        node_base_q, node_kind, node_base_const, node_add_q, node_add_const, dep_ptr,
        dep_idx, n_crews, block_ptr, block_node, block_wait, n_ready_blocks, crew_node,
        n_crew_rows, unlock_ptr, unlock_block, cap_event_node, cap_event_island,
        cap_event_delta, cap_event_scale_q, island_cap0, power_event_node, power_event_hall,
        power_event_delta, cap_event_order, power_event_order, n_power_checked, hall_draw0,
        hall_cap, completion_node, baseline, horizon, largest_job, demand_day, demand_value,
        seed_lo, seed_hi, first, begin, end, metrics, world, node_times,
        keep_nodes, status, node_time, waiting, crew_ready_at, crew_free, times, order,
        island_cap, draw_kw):
    """Scenarios begin .. end - 1 of the chunk, every strategy, with the given scratch."""
    n_strategies = node_kind.shape[0]
    for i in range(begin, end):
        scenario = first + np.uint64(i)
        sample_world(dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist,
                     q_address, q_const, q_terms_ptr, q_terms, q_burnin, burnin_dist,
                     burnin_fail, burnin_rma_after, seed_lo, seed_hi, scenario, world[i])
        for s in range(n_strategies):
            ok = schedule_nodes(node_base_q, node_kind, node_base_const, node_add_q,
                                node_add_const, dep_ptr, dep_idx, n_crews, block_ptr,
                                block_node, block_wait, n_ready_blocks, crew_node,
                                n_crew_rows, unlock_ptr, unlock_block, s, world[i],
                                node_time, waiting, crew_ready_at, crew_free)
            if not ok:
                status[i] = 1
            capacity_metrics(cap_event_node, cap_event_island, cap_event_delta,
                             cap_event_scale_q, cap_event_order, island_cap0, baseline,
                             horizon, largest_job, demand_day, demand_value, s, world[i],
                             node_time, times, order, island_cap, metrics[i, s])
            metrics[i, s, 4] = completion_day(completion_node, node_time)
            metrics[i, s, 5] = power_violation(power_event_node, power_event_hall,
                                               power_event_delta, power_event_order,
                                               n_power_checked, hall_draw0, hall_cap, s,
                                               node_time, times, order, draw_kw)
            if keep_nodes:
                for v in range(node_time.shape[0]):
                    node_times[i, s, v] = node_time[v]


@nb.njit(cache=True, parallel=True)
def simulate_chunk_kernel(
        dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address, q_const,
        q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail, burnin_rma_after,
        node_base_q, node_kind, node_base_const, node_add_q, node_add_const, dep_ptr,
        dep_idx, n_crews, block_ptr, block_node, block_wait, n_ready_blocks, crew_node,
        n_crew_rows, unlock_ptr, unlock_block, cap_event_node, cap_event_island,
        cap_event_delta, cap_event_scale_q, island_cap0, power_event_node, power_event_hall,
        power_event_delta, cap_event_order, power_event_order, n_power_checked, hall_draw0,
        hall_cap, completion_node, baseline, horizon, largest_job, demand_day, demand_value,
        seed_lo, seed_hi, first, n_blocks, metrics, world, node_times,
        keep_nodes, status):
    """Fill metrics[i, s, m] and world[i, q] (node_times[i, s, v] if keep_nodes).

    Each block allocates its scratch once and hands it to simulate_block, which runs
    without reference counting (performance: see `jit`).
    """
    count = metrics.shape[0]
    n_nodes = node_base_q.shape[0]
    n_events = max(cap_event_node.shape[0], power_event_node.shape[0])
    block = (count + n_blocks - 1) // n_blocks
    for b in nb.prange(n_blocks):
        simulate_block(
            dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address,
            q_const, q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail,
            burnin_rma_after, node_base_q, node_kind, node_base_const, node_add_q,
            node_add_const, dep_ptr, dep_idx, n_crews, block_ptr, block_node, block_wait,
            n_ready_blocks, crew_node, n_crew_rows, unlock_ptr, unlock_block, cap_event_node,
            cap_event_island, cap_event_delta, cap_event_scale_q, island_cap0,
            power_event_node, power_event_hall, power_event_delta, cap_event_order,
            power_event_order, n_power_checked, hall_draw0, hall_cap, completion_node,
            baseline, horizon, largest_job, demand_day, demand_value, seed_lo, seed_hi,
            first, b * block, min(count, (b + 1) * block), metrics, world, node_times,
            keep_nodes, status,
            np.empty(n_nodes), np.empty(n_nodes, dtype=np.int32), np.empty(n_nodes),
            np.empty(max(n_crews, 1)),
            np.empty(n_events), np.empty(n_events, dtype=np.int64),
            np.empty(island_cap0.shape[0]), np.empty(hall_cap.shape[0]))


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False):
    """Same contract as backends.reference.simulate_chunk."""
    check_scenarios(first, count)
    seed_lo, seed_hi = split_seed(seed)
    metrics = np.zeros((count, plan.n_strategies, N_METRICS))
    world = np.zeros((count, plan.n_quantities))
    node_times = np.zeros((count if keep_nodes else 1, plan.n_strategies, plan.n_nodes))
    status = np.zeros(count, dtype=np.int8)
    n_blocks = max(1, min(count, nb.get_num_threads() * 8))
    simulate_chunk_kernel(*plan.kernel_args(), np.uint64(seed_lo), np.uint64(seed_hi),
                          np.uint64(first), n_blocks, metrics, world, node_times,
                          keep_nodes, status)
    if status.any():
        raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
    return metrics, world, (node_times if keep_nodes else None)
