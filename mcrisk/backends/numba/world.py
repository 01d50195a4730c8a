"""The world of one scenario (Numba): quantities drawn or derived once, in dependency order.

Pairs: numpy/world.py (the reference, vectorized over scenarios) and kernels/world.cuh.
"""
from __future__ import annotations

import math

from ...definitions import MAX_BURNIN_ATTEMPTS, Q_ATTEMPTS, Q_BURNIN, Q_SAMPLE, Q_SUM
from .distributions import draw
from .jit import jit, jit_inline
from .random import uniforms



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
