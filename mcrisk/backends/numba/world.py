"""The worlds of a lane group (Numba): quantities drawn or derived once, in dependency order.

world[q, l] is quantity q of scenario scenario0 + l for the n scenarios of a lane group
(driver.py): each quantity is drawn for every lane at once, so the loops over lanes are the
ones the compiler vectorizes. Pairs: numpy/world.py (the reference, vectorized over
scenarios) and kernels/world.cuh.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.definitions import (BURNIN_ATTEMPT, BURNIN_FIX, BURNIN_RMA, EARLY_SURVIVED,
                                 MAX_BURNIN_ATTEMPTS, Q_ABOVE, Q_ATTEMPTS, Q_BURNIN, Q_EARLY,
                                 Q_OUT, Q_REST, Q_SAMPLE, Q_SOAK, Q_SUM)
from .distributions import (cdf, copula_score, copula_uniform, draw, draw_above,
                            draw_correlated_lanes, draw_lanes, truncated_score)
from ...core.jit import jit, jit_inline
from .random import uniforms, uniforms_lanes


@jit_inline
def burn_in_days(p, q, seed_lo, seed_hi, scenario):
    """The burn-in days and attempts of quantity q in one scenario (inlined: called lane by
    lane, and a call would pass the record p by value: core/jit.py); conditioned on a status,
    from its recorded state (numpy/world.py's burn_in_days)."""
    b = p.q_burnin[q]
    attempt_dist, fix_dist = p.burnin_dist[b, 0], p.burnin_dist[b, 1]
    rma_dist = p.burnin_dist[b, 2]
    fail_first, fail_retry = p.burnin_fail[b, 0], p.burnin_fail[b, 1]
    rma_after = p.burnin_rma_after[b]
    a_attempt, a_outcome = p.q_address[q, 0], p.q_address[q, 1]
    a_fix, a_rma = p.q_address[q, 2], p.q_address[q, 3]
    piece, elapsed = p.q_status[q], p.q_const[q]
    days = p.q_state[q, 0]
    k0 = int(p.q_state[q, 1])
    fails_in_row = int(p.q_state[q, 2])
    rma_count = int(p.q_state[q, 3])
    if piece == BURNIN_FIX:                       # the fix after attempt k0 is running
        days += draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, fix_dist,
                           seed_lo, seed_hi, scenario, a_fix, k0, elapsed)
        k0 += 1
    elif piece == BURNIN_RMA:                     # the RMA after attempt k0 is running
        days += draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, rma_dist,
                           seed_lo, seed_hi, scenario, a_rma, rma_count, elapsed)
        rma_count += 1
        k0 += 1
    for k in range(k0, MAX_BURNIN_ATTEMPTS):
        if piece == BURNIN_ATTEMPT and k == k0:   # attempt k0 is running
            days += draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table,
                               attempt_dist, seed_lo, seed_hi, scenario, a_attempt, k, elapsed)
        else:
            days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, attempt_dist,
                         seed_lo, seed_hi, scenario, a_attempt, k)
        u_outcome, _ = uniforms(seed_lo, seed_hi, scenario, a_outcome, k)
        p_fail = fail_first if fails_in_row == 0 else fail_retry
        if u_outcome >= p_fail:
            return days, k + 1.0
        fails_in_row += 1
        if fails_in_row == rma_after:
            days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, rma_dist,
                         seed_lo, seed_hi, scenario, a_rma, rma_count)
            rma_count += 1
            fails_in_row = 0
        else:
            days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, fix_dist,
                         seed_lo, seed_hi, scenario, a_fix, k)
    return math.inf, float(MAX_BURNIN_ATTEMPTS)


@jit
def burn_in_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2):
    """world[q, l], world[q + 1, l] = burn_in_days(..., scenario0 + l) for l < n.

    Performance: the first attempt, which passes in most scenarios, for every lane at once;
    a lane whose first attempt fails is redone by burn_in_days from the start (the same
    draws at the same addresses, so the same days). Conditioned on a status: burn_in_days in
    every lane.
    """
    if p.q_status[q] != 0:
        for l in range(n):
            world[q, l], world[q + 1, l] = burn_in_days(p, q, seed_lo, seed_hi,
                                                        scenario0 + np.uint64(l))
        return
    b = p.q_burnin[q]
    draw_lanes(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.burnin_dist[b, 0],
               seed_lo, seed_hi, scenario0, n, p.q_address[q, 0], 0, u1, u2, world[q])
    for l in range(n):
        world[q, l] = 0.0 + world[q, l]         # burn_in_days' days = 0.0; days += draw
        world[q + 1, l] = 1.0
    uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.q_address[q, 1], 0, u1, u2)
    fail_first = p.burnin_fail[b, 0]
    for l in range(n):
        if u1[l] < fail_first:
            world[q, l], world[q + 1, l] = burn_in_days(p, q, seed_lo, seed_hi,
                                                        scenario0 + np.uint64(l))


@jit
def early_failure_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2):
    """world[q, l]: Q_EARLY, the service age at the unit's early failure, +inf when none
    (numpy/world.py's early_failure_age)."""
    if p.q_status[q] == EARLY_SURVIVED:           # none by the status date: q_state[q]
        for l in range(n):
            world[q, l] = draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table,
                                     p.q_dist[q], seed_lo, seed_hi, scenario0 + np.uint64(l),
                                     p.q_address[q, 1], 0, p.q_state[q, 0])
        uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.q_address[q, 0], 0, u1, u2)
        for l in range(n):
            if not u1[l] < p.q_state[q, 1]:
                world[q, l] = math.inf
        return
    draw_lanes(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.q_dist[q], seed_lo,
               seed_hi, scenario0, n, p.q_address[q, 1], 0, u1, u2, world[q])
    uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.q_address[q, 0], 0, u1, u2)
    first = p.q_terms_ptr[q]
    has_attempts = p.q_terms_ptr[q + 1] - first == 3
    for l in range(n):
        failures = world[p.q_terms[first + 2], l] - 1.0 if has_attempts else 0.0
        chance = world[p.q_terms[first], l] if failures == 0.0 \
            else world[p.q_terms[first + 1], l]
        if not u1[l] < chance:
            world[q, l] = math.inf


@jit
def soak_and_out_lanes(p, q, n, world):
    """world[q, l]: Q_SOAK or Q_OUT of a unit under an acceptance policy (numpy/world.py's
    soak_and_out)."""
    first = p.q_terms_ptr[q]
    n_terms = p.q_terms_ptr[q + 1] - first
    for l in range(n):
        soaks = world[p.q_terms[first], l] - 1.0 >= p.q_const[q]
        days = world[p.q_terms[first + 1], l]
        early = world[p.q_terms[first + 2], l] if n_terms > 2 else math.inf
        in_soak = early < days
        if p.q_kind[q] == Q_OUT:
            world[q, l] = (math.inf if in_soak else early - days) if soaks else early
        elif soaks:
            world[q, l] = days + world[p.q_terms[first + 3], l] if n_terms > 3 and in_soak \
                else days
        else:
            world[q, l] = 0.0


@jit
def conditioned_lanes(p, q, seed_lo, seed_hi, scenario0, n, world):
    """world[q, l]: Q_REST, q_const minus its terms in order; Q_ABOVE, a draw of q_dist at
    its address conditioned to exceed that (numpy/world.py's sample_worlds)."""
    for l in range(n):
        world[q, l] = p.q_const[q]
    for j in range(p.q_terms_ptr[q], p.q_terms_ptr[q + 1]):
        term = p.q_terms[j]
        for l in range(n):
            world[q, l] -= world[term, l]
    if p.q_kind[q] == Q_ABOVE:
        for l in range(n):
            world[q, l] = draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table,
                                     p.q_dist[q], seed_lo, seed_hi, scenario0 + np.uint64(l),
                                     p.q_address[q, 0], 0, world[q, l])


@jit
def correlated_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2):
    """world[q, l]: correlated SAMPLE q from its copula uniform, the normal scores of its
    row's addresses (copula_score), or an earlier quantity's value ranked by its CDF, weighted
    in order from 0.0 (a row of one: its own first uniform; the last, its own, entry with a
    range other than (0, 1) truncated given the others: truncated_score;
    numpy/distributions.py's draw_correlated)."""
    first, last = p.q_copula_ptr[q], p.q_copula_ptr[q + 1]
    if last - first == 1:
        uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.copula_address[first], 0, u1, u2)
    else:
        for l in range(n):
            world[q, l] = 0.0
        for j in range(first, last):
            weight, x = p.copula_weight[j], p.copula_quantity[j]
            if x >= 0:                    # ranked by its value: a member a status conditions
                d = p.copula_dist[j]
                for l in range(n):
                    world[q, l] += weight * copula_score(
                        cdf(p.dist_kind[d], p.dist_param, d, p.pert_table, world[x, l]),
                        0.0, 1.0)
                continue
            uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.copula_address[j], 0, u1, u2)
            low, high = p.copula_low[j], p.copula_high[j]
            if j == last - 1 and (low > 0.0 or high < 1.0):   # its own entry, given the others
                for l in range(n):
                    world[q, l] += weight * truncated_score(u1[l], low, high, world[q, l],
                                                            weight)
                continue
            for l in range(n):
                world[q, l] += weight * copula_score(u1[l], low, high)
        for l in range(n):
            u1[l] = copula_uniform(world[q, l])
    d = p.q_dist[q]
    draw_correlated_lanes(p.dist_kind[d], p.dist_param, p.dist_chance[d], d, p.pert_table, u1,
                          n, world[q], u2)


@jit
def sample_world(p, seed_lo, seed_hi, scenario0, n, world, u1, u2):
    """world[q, l] of scenarios scenario0 + l, l < n (u1, u2: scratch of n uniforms)."""
    for q in range(p.q_kind.shape[0]):
        kind = p.q_kind[q]
        if kind == Q_SAMPLE and p.q_copula_ptr[q + 1] > p.q_copula_ptr[q]:
            correlated_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2)
        elif kind == Q_SAMPLE:
            draw_lanes(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.q_dist[q],
                       seed_lo, seed_hi, scenario0, n, p.q_address[q, 0], 0, u1, u2, world[q])
        elif kind == Q_SUM:
            for l in range(n):
                world[q, l] = p.q_const[q]
            for j in range(p.q_terms_ptr[q], p.q_terms_ptr[q + 1]):
                term = p.q_terms[j]
                for l in range(n):
                    world[q, l] += world[term, l]
        elif kind == Q_BURNIN:
            burn_in_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2)
        elif kind == Q_EARLY:
            early_failure_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2)
        elif kind == Q_SOAK or kind == Q_OUT:
            soak_and_out_lanes(p, q, n, world)
        elif kind == Q_REST or kind == Q_ABOVE:
            conditioned_lanes(p, q, seed_lo, seed_hi, scenario0, n, world)
        elif kind != Q_ATTEMPTS:
            for l in range(n):
                world[q, l] = math.nan
