"""Distributions of the Numba backend: inverse CDFs of uniforms, and the draw at an address.

mcrisk/core/distributions.py is the specification and encoding (the NumPy backend draws with it,
numpy/distributions.py); kernels/distributions.cuh is the CUDA twin of this file.
ppf_lanes and draw_lanes are ppf and draw for every scenario of a lane group (driver.py).
"""
from __future__ import annotations

import math

from ...core.copula import U_HIGH, U_LOW
from ...core.distributions import (KIND_FIXED, KIND_LOGNORMAL, KIND_PERT, KIND_TABLE,
                                   KIND_TRIANGULAR, KIND_UNIFORM, PERT_TABLE_SIZE, SQRT2,
                                   TABLE_SIZE, TABLE_Z)
from ...core.jit import jit, jit_inline
from .random import uniforms, uniforms_lanes

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


@jit
def ndtri(p):
    """Standard normal quantile for p in (0, 1); the upper half by symmetry, since 1 - p is
    exact there and the Halley step is accurate only where erfc does not cancel."""
    if p > 0.5:
        return -ndtri_lower(1.0 - p)
    return ndtri_lower(p)


@jit
def lognormal_between(mu, sigma, low, high, u):
    """The quantile at u of a lognormal (mu, sigma) truncated to [low, high] (low 0: none,
    high 0: none): u mapped into [F(low), F(high)], through the survival function when low
    lies above the median, then clamped into [low, high] (core.distributions.lognormal_between)."""
    scale = sigma * SQRT2
    z_low = -math.inf
    if low > 0.0:
        z_low = (math.log(low) - mu) / scale
    z_high = math.inf
    if high > 0.0:
        z_high = (math.log(high) - mu) / scale
    if z_low > 0.0:
        s_low = 0.5 * math.erfc(z_low)
        s_high = 0.0
        if high > 0.0:
            s_high = 0.5 * math.erfc(z_high)
        x = math.exp(mu - sigma * ndtri(s_high + (1.0 - u) * (s_low - s_high)))
    else:
        f_low = 0.0
        if low > 0.0:
            f_low = 0.5 * math.erfc(-z_low)
        f_high = 1.0
        if high > 0.0:
            f_high = 0.5 * math.erfc(-z_high)
        x = math.exp(mu + sigma * ndtri(f_low + u * (f_high - f_low)))
    if low > 0.0 and x < low:
        x = low
    if high > 0.0 and x > high:
        x = high
    return x


@jit
def ppf(kind, dist_param, d, pert_table, u):
    """Inverse CDF of distribution d (not `chance`) at u; rows are indexed, never sliced
    (performance: a slice is an array view with reference counting in the hot loop).

    Compiled once and called, not inlined: the kernel draws most quantities through
    ppf_lanes' own triangular loop, and four inlined copies of ppf cost a third of the
    kernel's compile time (42 s against 30 s) for 2% of its speed."""
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
        if dist_param[d, 2] > 0.0 or dist_param[d, 3] > 0.0:
            return lognormal_between(dist_param[d, 0], dist_param[d, 1], dist_param[d, 2],
                                     dist_param[d, 3], u)
        return math.exp(dist_param[d, 0] + dist_param[d, 1] * ndtri(u))
    if kind == KIND_TABLE:
        offset = int(dist_param[d, 0])
        last = TABLE_SIZE - 1
        position = (ndtri(u) + TABLE_Z) / (2.0 * TABLE_Z) * last
        position = min(max(position, 0.0), float(last))
        knot = min(int(position), last - 1)
        frac = position - knot
        lo = pert_table[offset + knot]
        return lo + frac * (pert_table[offset + knot + 1] - lo)
    return math.nan


@jit
def cdf(kind, dist_param, d, pert_table, x):
    """P(X <= x) of distribution d (not `chance`, not a table) as ppf draws it: the inverse
    of ppf (a PERT's by a binary search of its table)."""
    if kind == KIND_FIXED:
        return 1.0 if x >= dist_param[d, 0] else 0.0
    if kind == KIND_UNIFORM:
        if dist_param[d, 1] <= 0.0:
            return 1.0 if x >= dist_param[d, 0] else 0.0
        return min(max((x - dist_param[d, 0]) / dist_param[d, 1], 0.0), 1.0)
    if kind == KIND_TRIANGULAR:
        low, mode, high = dist_param[d, 0], dist_param[d, 1], dist_param[d, 2]
        span = high - low
        if span <= 0.0:
            return 1.0 if x >= low else 0.0
        if x <= low:
            return 0.0
        if x >= high:
            return 1.0
        if x < mode:
            return (x - low) * (x - low) / (span * (mode - low))
        return 1.0 - (high - x) * (high - x) / (span * (high - mode))
    if kind == KIND_PERT:
        offset = int(dist_param[d, 2])
        last = PERT_TABLE_SIZE - 1
        y = (x - dist_param[d, 0]) / dist_param[d, 1]
        if y <= 0.0:
            return 0.0
        if y >= 1.0:
            return 1.0
        lo, hi = 0, last                  # table[lo] <= y < table[hi]
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if pert_table[offset + mid] <= y:
                lo = mid
            else:
                hi = mid
        if lo == 0:
            position = (y / pert_table[offset + 1]) ** (1.0 / pert_table[offset + last + 1])
        elif lo == last - 1:
            position = last - ((1.0 - y) / (1.0 - pert_table[offset + last - 1])) ** (
                1.0 / pert_table[offset + last + 2])
        else:
            below = pert_table[offset + lo]
            position = lo + (y - below) / (pert_table[offset + lo + 1] - below)
        return position / last
    if kind == KIND_LOGNORMAL:
        if x <= 0.0:
            return 0.0
        scale = dist_param[d, 1] * SQRT2
        f = 0.5 * math.erfc(-(math.log(x) - dist_param[d, 0]) / scale)
        low, high = dist_param[d, 2], dist_param[d, 3]
        if low > 0.0 or high > 0.0:     # bounded: the truncated CDF
            f_low = 0.0
            if low > 0.0:
                f_low = 0.5 * math.erfc(-(math.log(low) - dist_param[d, 0]) / scale)
            f_high = 1.0
            if high > 0.0:
                f_high = 0.5 * math.erfc(-(math.log(high) - dist_param[d, 0]) / scale)
            return min(max((f - f_low) / (f_high - f_low), 0.0), 1.0)
        return f
    return math.nan


@jit
def ppf_above(kind, dist_param, d, pert_table, bound, u):
    """The quantile at u of distribution d (not `chance`) truncated to above `bound`: u
    mapped into [F(bound), 1); a lognormal's through its survival function (a bounded one's
    into [F(max(bound, min)), F(max)], lognormal_between)."""
    if kind == KIND_LOGNORMAL and (dist_param[d, 2] > 0.0 or dist_param[d, 3] > 0.0):
        return lognormal_between(dist_param[d, 0], dist_param[d, 1],
                                 max(bound, dist_param[d, 2]), dist_param[d, 3], u)
    if kind == KIND_LOGNORMAL:
        survival = 1.0
        if bound > 0.0:
            z = (math.log(bound) - dist_param[d, 0]) / (dist_param[d, 1] * SQRT2)
            survival = 0.5 * math.erfc(z)
        return math.exp(dist_param[d, 0] - dist_param[d, 1] * ndtri(survival * (1.0 - u)))
    f = cdf(kind, dist_param, d, pert_table, bound)
    return ppf(kind, dist_param, d, pert_table, f + u * (1.0 - f))


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
def draw_above(dist_kind, dist_param, dist_chance, pert_table, d, seed_lo, seed_hi, scenario,
               address, index, bound):
    """draw(...) conditioned to exceed `bound`, from the same uniforms: a `chance` draws its
    inner distribution above a bound >= 0, and as usual below 0."""
    kind = dist_kind[d]
    chance = dist_chance[d]
    if kind == KIND_FIXED and chance >= 1.0:
        return dist_param[d, 0]
    u1, u2 = uniforms(seed_lo, seed_hi, scenario, address, index)
    if chance >= 1.0:
        return ppf_above(kind, dist_param, d, pert_table, bound, u1)
    if bound < 0.0:
        if u1 < chance:
            return ppf(kind, dist_param, d, pert_table, u2)
        return 0.0
    return ppf_above(kind, dist_param, d, pert_table, bound, u2)


@jit_inline
def ppf_lanes(kind, dist_param, d, pert_table, u, n, out):
    """out[l] = ppf(kind, dist_param, d, pert_table, u[l]) for l < n, the same operations in
    every lane. Performance: triangular, most draws, as a loop the compiler vectorizes (both
    roots taken, one kept); the kinds that call exp, ndtri or pow lane by lane."""
    if kind == KIND_TRIANGULAR:
        low, mode, high = dist_param[d, 0], dist_param[d, 1], dist_param[d, 2]
        span = high - low
        if span <= 0.0:
            for l in range(n):
                out[l] = low
            return
        split = (mode - low) / span
        for l in range(n):
            x = u[l]
            below = low + math.sqrt(x * span * (mode - low))
            above = high - math.sqrt((1.0 - x) * span * (high - mode))
            out[l] = below if x < split else above
        return
    for l in range(n):
        out[l] = ppf(kind, dist_param, d, pert_table, u[l])


@jit
def draw_lanes(dist_kind, dist_param, dist_chance, pert_table, d, seed_lo, seed_hi,
               scenario0, n, address, index, u1, u2, out):
    """out[l] = draw(..., scenario0 + l, address, index) for the n scenarios of a lane group
    (u1, u2: scratch for their uniforms)."""
    kind = dist_kind[d]
    chance = dist_chance[d]
    if kind == KIND_FIXED and chance >= 1.0:
        for l in range(n):
            out[l] = dist_param[d, 0]
        return
    uniforms_lanes(seed_lo, seed_hi, scenario0, n, address, index, u1, u2)
    if chance >= 1.0:
        ppf_lanes(kind, dist_param, d, pert_table, u1, n, out)
        return
    ppf_lanes(kind, dist_param, d, pert_table, u2, n, out)
    for l in range(n):
        if not u1[l] < chance:
            out[l] = 0.0


@jit_inline
def copula_uniform(z):
    """A copula uniform from its weighted normal score: Phi(z), clamped into the random
    stream's [U_LOW, U_HIGH] (core.copula.copula_uniform)."""
    return min(max(0.5 * math.erfc(-z / SQRT2), U_LOW), U_HIGH)


@jit_inline
def copula_score(u, low, high):
    """A row entry's normal score: ndtri of u mapped into [low, high], clamped into the random
    stream's [U_LOW, U_HIGH] (core.copula.copula_score)."""
    return ndtri(min(max(low + u * (high - low), U_LOW), U_HIGH))


@jit_inline
def truncated_score(u, low, high, partial, weight):
    """A row's own entry's normal score given its earlier entries' weighted sum `partial`,
    its copula uniform conditioned into [low, high], through the upper tail where the range is
    there (core.copula.truncated_score)."""
    below, above = 0.0, 1.0
    if low > 0.0:
        a = (ndtri(low) - partial) / weight
        if a > 0.0:
            q_b = 0.5 * math.erfc((ndtri(high) - partial) / weight / SQRT2) if high < 1.0 else 0.0
            return -copula_score(1.0 - u, q_b, 0.5 * math.erfc(a / SQRT2))
        below = 0.5 * math.erfc(-a / SQRT2)
    if high < 1.0:
        above = 0.5 * math.erfc(-((ndtri(high) - partial) / weight) / SQRT2)
    return copula_score(u, below, above)


@jit_inline
def draw_correlated_lanes(kind, dist_param, chance, d, pert_table, v, n, out, scratch):
    """out[l]: the correlated draw of distribution d from its copula uniform v[l]: ppf, a
    `chance` as a mixture, 0 for v <= 1 - chance (core.copula.sample_correlated; scratch:
    n doubles)."""
    if chance >= 1.0:
        ppf_lanes(kind, dist_param, d, pert_table, v, n, out)
        return
    none = 1.0 - chance
    for l in range(n):
        scratch[l] = min(max((v[l] - none) / chance, U_LOW), U_HIGH)
    ppf_lanes(kind, dist_param, d, pert_table, scratch, n, out)
    for l in range(n):
        if v[l] <= none:
            out[l] = 0.0
