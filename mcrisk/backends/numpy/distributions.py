"""The draw of a distribution at an address, for many scenarios at once (NumPy reference).

The inverse CDFs are mcrisk/core/distributions.py and the random stream mcrisk/core/rng.py, used as
they are. Pairs: numba/distributions.py and kernels/distributions.cuh.
"""
from __future__ import annotations

import numpy as np

from ...core import rng
from ...core.copula import (copula_score, copula_uniform, sample_correlated, truncated,
                            truncated_score)
from ...core.distributions import KIND_FIXED, cdf, sample, sample_above
from ...plan.record import CompiledScenario


def draw(plan: CompiledScenario, d: int, seed: int, scenario: np.ndarray, address: int,
         index) -> np.ndarray:
    """Draws of distribution d at (seed, scenario, address, index) for each scenario."""
    if plan.dist_kind[d] == KIND_FIXED and plan.dist_chance[d] >= 1.0:
        return np.full(scenario.shape, plan.dist_param[d, 0])
    u1, u2 = rng.uniforms(seed, scenario, address, index)
    return sample(int(plan.dist_kind[d]), plan.dist_param[d], float(plan.dist_chance[d]),
                  plan.pert_table, u1, u2)


def draw_above(plan: CompiledScenario, d: int, seed: int, scenario: np.ndarray, address: int,
               index, bound: np.ndarray) -> np.ndarray:
    """Draws of distribution d at (seed, scenario, address, index), each conditioned to exceed
    its scenario's bound (core.distributions.sample_above)."""
    if plan.dist_kind[d] == KIND_FIXED and plan.dist_chance[d] >= 1.0:
        return np.full(scenario.shape, plan.dist_param[d, 0])
    u1, u2 = rng.uniforms(seed, scenario, address, index)
    return sample_above(int(plan.dist_kind[d]), plan.dist_param[d], float(plan.dist_chance[d]),
                        plan.pert_table, bound, u1, u2)


def draw_correlated(plan: CompiledScenario, q: int, seed: int, scenario: np.ndarray,
                    world: np.ndarray) -> np.ndarray:
    """Draws of correlated SAMPLE q for each scenario, from its copula uniform: its row's
    normal scores weighted in order (core.copula): an entry's address's first uniform (index
    0) mapped into its range, or the rank under its distribution's CDF of an earlier
    quantity's value in world[:, copula_quantity] (a member a status conditions); the last
    (the member's own) entry with a range other than (0, 1) truncated given the others
    (core.copula.truncated_score: a member conditioned with its partner)."""
    rows = slice(plan.q_copula_ptr[q], plan.q_copula_ptr[q + 1])
    weights, addresses = plan.copula_weight[rows], plan.copula_address[rows]
    firsts = [rng.uniforms(seed, scenario, int(a), 0)[0] for a in addresses]
    normals = [copula_score(u, low, high) if x < 0 else copula_score(cdf(
                   int(plan.dist_kind[d]), plan.dist_param[d], plan.pert_table, world[:, x]),
                   0.0, 1.0)
               for u, low, high, x, d in zip(firsts, plan.copula_low[rows],
                                             plan.copula_high[rows], plan.copula_quantity[rows],
                                             plan.copula_dist[rows])] \
        if len(weights) > 1 else []
    low, high = plan.copula_low[rows][-1], plan.copula_high[rows][-1]
    if normals and truncated(low, high):     # its own entry, given the others (core.copula)
        partial = np.zeros(scenario.shape)
        for weight, normal in zip(weights[:-1], normals[:-1]):
            partial = partial + weight * normal
        normals[-1] = truncated_score(firsts[-1], low, high, partial, weights[-1])
    v = copula_uniform(normals, weights, firsts[-1])
    d = plan.q_dist[q]
    return sample_correlated(int(plan.dist_kind[d]), plan.dist_param[d],
                             float(plan.dist_chance[d]), plan.pert_table, v)
