"""The draw of a distribution at an address, for many scenarios at once (NumPy reference).

The inverse CDFs are mcrisk/core/distributions.py and the random stream mcrisk/core/rng.py, used as
they are. Pairs: numba/distributions.py and kernels/distributions.cuh.
"""
from __future__ import annotations

import numpy as np

from ...core import rng
from ...core.distributions import KIND_FIXED, sample, sample_above
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
