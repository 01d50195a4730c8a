"""Backend parity in one place: which backends compute the same floats as which, how close the
others must come and why (PARITY, one table), and the one check that applies it
(assert_parity).

Every backend runs the same stages in the same order; they differ only where a transcendental
function comes from another library. Where a pair is not bit-identical, its tolerance `rtol`
holds world quantities and node times relative to themselves, and each metric relative to the
larger of its value and its scale (metric_scales: a trough's days are a difference of times
near the horizon, so they are held to the horizon, not to themselves); power_violation is 0 or
1 and always equal. The table is the guarantee docs/backends.md states.
"""
from __future__ import annotations

import platform
from dataclasses import dataclass

import numpy as np

from mcrisk.core.definitions import METRICS, N_METRICS
from mcrisk.core.distributions import KIND_LOGNORMAL, KIND_PERT, KIND_TABLE

from .slow_costs import cost_scales

# Where the same compiler and libm evaluate the same operations (x86-64, glibc): the host build
# of the CUDA sources rounds exactly as the Numba kernel (measured: words, uniforms, ndtri,
# world quantities, node times and metrics bit-identical).
BIT_IDENTICAL_PLATFORM = (platform.machine() in ("x86_64", "AMD64")
                          and platform.libc_ver()[0] == "glibc")


@dataclass(frozen=True)
class Tolerance:
    """How close two backends' results must be: rtol 0 is bit for bit. A pair that differs
    only in draws of `exact_without` kinds is bit-identical on a plan that has none."""
    rtol: float
    exact_without: tuple[int, ...] = ()

    def on(self, plan) -> Tolerance:
        """This tolerance for one plan: bit for bit when the plan draws none of the kinds
        that make the difference, and correlates nothing (a copula takes ndtri and erfc of
        every correlated draw: mcrisk/core/copula.py)."""
        if self.exact_without and not np.isin(plan.dist_kind, self.exact_without).any() \
                and plan.q_copula_ptr[-1] == 0:
            return EXACT
        return self


EXACT = Tolerance(0.0)
# NumPy reference against the kernels: the same operations in the same order, except that a
# lognormal draw's exp and ndtri, and the power in a PERT table's outermost intervals
# (u < 1/4096 or u >= 4095/4096), come from NumPy and SciPy (another ndtri algorithm) rather
# than libm and the kernels' own ndtri: an ulp or a few; so do a posterior table's normal score
# (ndtri) and a conditioned draw's erfc (a status's plans, mcrisk/plan/conditioning.py), and a
# correlated draw's normal scores and Phi (ndtri, erfc: mcrisk/core/copula.py).
# Measured under 2e-15 (world, node times and metrics against their scales, on the reference
# and the random scenarios), under 6e-15 on conditioned plans.
NUMPY_MATH = Tolerance(1e-12, exact_without=(KIND_LOGNORMAL, KIND_PERT, KIND_TABLE))
# The kernels' own code under another maths library: the GPU's exp, log, erfc and pow (NVRTC,
# --fmad=false) or, off x86-64/glibc, the host's libm may differ from glibc by an ulp or two;
# the algorithms (ndtri included) are the same, so an order of magnitude under NUMPY_MATH,
# whose larger differences measure under 2e-15. Not yet measured on a device
# (tests/backends/test_cuda.py, marked gpu). Tightened from metrics within 1e-9 relative plus 1e-6
# absolute (and world within 1e-12 for the host build elsewhere): at a metric of 0 the bound is
# now 1e-13 x its scale, under 1e-6 for scales up to 1e7 (the reference's shortfall: 1.5e6).
KERNEL_MATH = Tolerance(1e-13)
# The kernels' ndtri alone, probed at single points: the same algorithm (Acklam and one Halley
# step), with erfc, exp and log from another library (the GPU's, or another libm).
NDTRI_RTOL = 1e-14

# Every pair of backends (either order). numba and cuda-host are one code and one libm here.
PARITY = {
    frozenset({"numba", "cuda-host"}): EXACT if BIT_IDENTICAL_PLATFORM else KERNEL_MATH,
    frozenset({"numpy", "numba"}): NUMPY_MATH,
    frozenset({"numpy", "cuda-host"}): NUMPY_MATH if BIT_IDENTICAL_PLATFORM
    else Tolerance(NUMPY_MATH.rtol),
    frozenset({"numpy", "cuda"}): Tolerance(NUMPY_MATH.rtol),   # both differences, each tiny
    frozenset({"numba", "cuda"}): KERNEL_MATH,
    frozenset({"cuda-host", "cuda"}): KERNEL_MATH,
}
POWER_VIOLATION = METRICS.index("power_violation")


def tolerance(pair: tuple[str, str], plan) -> Tolerance:
    """The table's tolerance for two backends (by name, either order) on `plan`."""
    first, second = pair
    if first == second:
        return EXACT
    return PARITY[frozenset(pair)].on(plan)


def peak_demand(plan, world: np.ndarray | None = None) -> float:
    """The largest demand point's H100-eq: for a forecast (demand_growth_q >= 0) the point
    grown by the largest growth drawn in `world` (its base value, day 0's, understates it)."""
    peak = float(plan.demand_value.max())
    grown = plan.demand_growth_q >= 0
    if world is not None and world.shape[0] and grown.any():
        growth = world[:, plan.demand_growth_q[grown]].max(axis=0)
        peak = max(peak, float((plan.demand_value[grown]
                                * (1.0 + growth) ** (plan.demand_day[grown] / 365.0)).max()))
    return peak


def metric_scales(plan, world: np.ndarray | None = None) -> np.ndarray:
    """Per metric, the size of the numbers it is computed from: the baseline for depths, the
    horizon for days, their product with the larger of baseline and peak demand (in `world`,
    for a forecast) for the shortfall; power_violation is 0 or 1 (and must be equal)."""
    peak = max(plan.baseline, peak_demand(plan, world))
    scale = {"trough_depth": plan.baseline, "trough_days": plan.horizon,
             "shortfall_gpu_days": plan.horizon * peak, "homeless_days": plan.horizon,
             "completion_day": plan.horizon, "power_violation": 0.0}
    return np.array([scale[m] for m in METRICS])


def assert_parity(got: tuple, expected: tuple, pair: tuple[str, str], plan) -> None:
    """Two backends' (metrics, world, node times or None) for the same plan, seed and
    scenarios, to the table's tolerance for `pair` (got's backend, expected's backend); with
    costs, the cost columns after the metrics, and with a job mix the job columns after
    those, to the same tolerance of their scale."""
    rtol = tolerance(pair, plan).rtol
    (g_metrics, g_world, g_nodes), (e_metrics, e_world, e_nodes) = got, expected
    assert (g_nodes is None) == (e_nodes is None), f"{pair}: node times kept by one only"
    where = f"{pair[0]} against {pair[1]}"
    if rtol == 0.0:
        for name, a, b in (("metrics", g_metrics, e_metrics), ("world", g_world, e_world),
                           ("node times", g_nodes, e_nodes)):
            np.testing.assert_array_equal(a, b, err_msg=f"{where}, bit for bit: {name}")
        return
    np.testing.assert_allclose(g_world, e_world, rtol=rtol, atol=0, err_msg=f"{where}: world")
    if g_nodes is not None:
        np.testing.assert_allclose(g_nodes, e_nodes, rtol=rtol, atol=0,
                                   err_msg=f"{where}: node times")
    assert g_metrics.shape == e_metrics.shape, where
    jobs = N_METRICS + int(plan.n_costs)      # the job columns follow the cost columns
    assert g_metrics.shape[-1] == jobs + int(getattr(plan, "n_job_cols", 0)), where
    if plan.n_costs:
        _assert_cost_parity(g_metrics[..., N_METRICS:jobs], e_metrics[..., N_METRICS:jobs],
                            e_world, rtol, where, plan)
    if g_metrics.shape[-1] > jobs:
        _assert_job_parity(g_metrics[..., jobs:], e_metrics[..., jobs:], e_world, rtol, where,
                           plan)
    g_metrics, e_metrics = g_metrics[..., :N_METRICS], e_metrics[..., :N_METRICS]
    both_inf = np.isinf(g_metrics) & (g_metrics == e_metrics)
    scales = metric_scales(plan, e_world)
    bound = rtol * np.maximum(np.maximum(abs(g_metrics), abs(e_metrics)), scales)
    outside = ~(both_inf | (abs(g_metrics - e_metrics) <= bound))
    assert not outside.any(), (f"{where}: metrics beyond {rtol:g} of their scale at "
                               f"[scenario, strategy, metric] {np.argwhere(outside)[:5].tolist()}")
    np.testing.assert_array_equal(g_metrics[..., POWER_VIOLATION],
                                  e_metrics[..., POWER_VIOLATION],
                                  err_msg=f"{where}: power_violation")


def _assert_job_parity(g_jobs, e_jobs, world, rtol: float, where: str, plan) -> None:
    """Job columns within rtol of the larger of their value and their scale: horizon x peak
    demand for unservable_gpu_days (a packing's demand), the horizon for homeless days."""
    scale = np.full(g_jobs.shape[-1], float(plan.horizon))
    scale[0] *= max(plan.baseline, peak_demand(plan, world))
    bound = rtol * np.maximum(np.maximum(abs(g_jobs), abs(e_jobs)), scale)
    outside = ~(abs(g_jobs - e_jobs) <= bound)
    assert not outside.any(), (f"{where}: job columns beyond {rtol:g} of their scale at "
                               f"[scenario, strategy, column] {np.argwhere(outside)[:5].tolist()}")


def _assert_cost_parity(g_costs, e_costs, world, rtol: float, where: str, plan) -> None:
    """Cost columns within rtol of the larger of their value and their scale in each scenario
    and strategy (tests/slow_costs.cost_scales: what each cost is computed from)."""
    scale = np.array([[cost_scales(plan, s, w) for s in range(plan.n_strategies)]
                      for w in world])
    bound = rtol * np.maximum(np.maximum(abs(g_costs), abs(e_costs)), scale)
    outside = ~(abs(g_costs - e_costs) <= bound)
    assert not outside.any(), (f"{where}: costs beyond {rtol:g} of their scale at "
                               f"[scenario, strategy, cost] {np.argwhere(outside)[:5].tolist()}")
