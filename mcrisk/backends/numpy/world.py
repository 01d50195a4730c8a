"""world[scenario, quantity]: the quantities drawn or derived once per scenario (NumPy reference).

Pairs: numba/world.py and kernels/world.cuh.
"""
from __future__ import annotations

import numpy as np

from ...core import rng
from ...core.definitions import (BURNIN_ATTEMPT, BURNIN_FIX, BURNIN_RMA, EARLY_SURVIVED,
                                 MAX_BURNIN_ATTEMPTS, Q_ABOVE, Q_ATTEMPTS, Q_BURNIN, Q_EARLY,
                                 Q_OUT, Q_REST, Q_SAMPLE, Q_SOAK, Q_SUM)
from ...plan.record import CompiledScenario
from .distributions import draw, draw_above, draw_correlated
from .sums import sum_in_order


def burn_in_days(plan: CompiledScenario, q: int, seed: int, scenario: np.ndarray):
    """Days from install end to a passed burn-in, and attempts, per scenario.

    Attempt k (counted over the unit's whole life) lasts attempt_days drawn at
    (attempt, k) and fails when the uniform at (outcome, k) is below fail_first for a
    first attempt (also the first after an RMA), else fail_retry. A failure is fixed
    (fix_days at (fix, k)) unless it is the rma_after-th in a row: then the unit is replaced
    (rma_days at (rma, r) for the unit's r-th RMA) and counts restart.

    Conditioned on a status (q_status[q], mcrisk/plan/activities.py), the loop continues from
    the recorded state q_state[q] (days so far, the attempt it resumes at, failures in a row,
    RMAs done): the piece running at the status date (an attempt, or the fix or RMA after
    attempt `resume`) is drawn at its own address above its elapsed days q_const[q], and the
    attempts count from the unit's first.
    """
    b = plan.q_burnin[q]
    attempt_dist, fix_dist, rma_dist = plan.burnin_dist[b]
    fail_first, fail_retry = plan.burnin_fail[b]
    rma_after = plan.burnin_rma_after[b]
    a_attempt, a_outcome, a_fix, a_rma = (int(a) for a in plan.q_address[q])
    n = scenario.shape[0]
    piece, elapsed = plan.q_status[q], plan.q_const[q]
    days0, resume, fails0, rmas0 = plan.q_state[q]
    days = np.full(n, days0)
    fails_in_row = np.full(n, int(fails0), dtype=np.int64)
    rma_count = np.full(n, int(rmas0), dtype=np.int64)
    k0 = int(resume)
    if piece == BURNIN_FIX:                       # the fix after attempt k0 is running
        days += draw_above(plan, fix_dist, seed, scenario, a_fix, k0, elapsed)
        k0 += 1
    elif piece == BURNIN_RMA:                     # the RMA after attempt k0 is running
        days += draw_above(plan, rma_dist, seed, scenario, a_rma, rma_count, elapsed)
        rma_count += 1
        k0 += 1
    attempts = np.full(n, float(k0))
    active = np.arange(n)
    for k in range(k0, MAX_BURNIN_ATTEMPTS):
        if active.size == 0:
            break
        s = scenario[active]
        if piece == BURNIN_ATTEMPT and k == k0:   # attempt k0 is running
            days[active] += draw_above(plan, attempt_dist, seed, s, a_attempt, k, elapsed)
        else:
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


def early_failure_age(plan: CompiledScenario, q: int, seed: int, scenario: np.ndarray,
                      world: np.ndarray) -> np.ndarray:
    """Q_EARLY: the unit's service age at its early failure, +inf when it has none.

    terms: chance, chance after a burn-in failure (, burn-in attempts: without them the unit
    never failed one). It fails when the uniform at address 0 is below the chance that
    applies; its age is drawn at address 1 (always, so each draw stays at its address).
    EARLY_SURVIVED (an accepted unit with no failure by the status date): the chance is
    q_state[q, 1] and the age is drawn above q_state[q, 0]."""
    if plan.q_status[q] == EARLY_SURVIVED:        # none by the status date: q_state[q]
        u, _ = rng.uniforms(seed, scenario, int(plan.q_address[q, 0]), 0)
        age = draw_above(plan, plan.q_dist[q], seed, scenario, int(plan.q_address[q, 1]), 0,
                         plan.q_state[q, 0])
        return np.where(u < plan.q_state[q, 1], age, np.inf)
    terms = plan.q_terms[plan.q_terms_ptr[q]:plan.q_terms_ptr[q + 1]]
    failures = world[:, terms[2]] - 1.0 if len(terms) == 3 else np.zeros(len(scenario))
    chance = np.where(failures == 0.0, world[:, terms[0]], world[:, terms[1]])
    u, _ = rng.uniforms(seed, scenario, int(plan.q_address[q, 0]), 0)
    age = draw(plan, plan.q_dist[q], seed, scenario, int(plan.q_address[q, 1]), 0)
    return np.where(u < chance, age, np.inf)


def soak_and_out(plan: CompiledScenario, q: int, world: np.ndarray) -> np.ndarray:
    """Q_SOAK / Q_OUT of a unit under an acceptance policy (q_const: soak_after_failures N;
    terms: attempts, soak days S (, early age x (, repair days R))). A unit with failures < N
    does not soak (0) and fails x after acceptance; one that soaks adds S + R when it fails
    in the soak (x < S: repaired before acceptance, no failure after it), else S, and then
    fails x - S after acceptance. Without x the unit never fails early (x = +inf)."""
    terms = plan.q_terms[plan.q_terms_ptr[q]:plan.q_terms_ptr[q + 1]]
    soaks = world[:, terms[0]] - 1.0 >= plan.q_const[q]
    days = world[:, terms[1]]
    early = world[:, terms[2]] if len(terms) > 2 else np.full(len(days), np.inf)
    in_soak = early < days
    if plan.q_kind[q] == Q_OUT:
        return np.where(soaks, np.where(in_soak, np.inf, early - days), early)
    added = np.where(in_soak, days + world[:, terms[3]], days) if len(terms) > 3 else days
    return np.where(soaks, added, 0.0)


def sample_world(plan: CompiledScenario, seed: int, first: int, count: int) -> np.ndarray:
    """world[i, q] for scenarios first .. first + count - 1."""
    return sample_worlds(plan, seed, np.arange(first, first + count, dtype=np.uint64))


def sample_worlds(plan: CompiledScenario, seed: int, scenario: np.ndarray,
                  only=None) -> np.ndarray:
    """world[i, q] of the scenarios numbered `scenario` (uint64, each below 2**32); given
    `only`, just those quantities (ascending, with every quantity they depend on, a correlated
    one's copula_quantity included; the others stay 0): a test's rejection sampling draws groups of quantities apart."""
    count = scenario.shape[0]
    world = np.zeros((count, plan.n_quantities))
    for q in range(plan.n_quantities) if only is None else only:
        kind = plan.q_kind[q]
        terms = plan.q_terms[plan.q_terms_ptr[q]:plan.q_terms_ptr[q + 1]]
        if kind == Q_SAMPLE and plan.q_copula_ptr[q + 1] > plan.q_copula_ptr[q]:
            world[:, q] = draw_correlated(plan, q, seed, scenario, world)
        elif kind == Q_SAMPLE:
            world[:, q] = draw(plan, plan.q_dist[q], seed, scenario, int(plan.q_address[q, 0]), 0)
        elif kind == Q_SUM:
            constant = np.full((count, 1), plan.q_const[q])
            world[:, q] = sum_in_order(np.concatenate([constant, world[:, terms]], axis=1))
        elif kind in (Q_REST, Q_ABOVE):           # q_const minus the terms, in order
            rest = np.full(count, plan.q_const[q])
            for t in terms:
                rest = rest - world[:, t]
            world[:, q] = rest if kind == Q_REST else draw_above(
                plan, plan.q_dist[q], seed, scenario, int(plan.q_address[q, 0]), 0, rest)
        elif kind == Q_BURNIN:
            world[:, q], world[:, q + 1] = burn_in_days(plan, q, seed, scenario)
        elif kind == Q_EARLY:
            world[:, q] = early_failure_age(plan, q, seed, scenario, world)
        elif kind in (Q_SOAK, Q_OUT):
            world[:, q] = soak_and_out(plan, q, world)
        elif kind != Q_ATTEMPTS:
            raise ValueError(f"unknown quantity kind {kind}")
    return world
