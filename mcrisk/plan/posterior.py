"""The posterior of one quantity given facts, on a grid, as a quantile table (KIND_TABLE).

mcrisk/plan/conditioning.py reduces every fact of a status to a likelihood of at most one
unknown quantity V of each group of facts (a shared delay, or the one quantity a fact's date
has two of): p(V | facts) is prior(V) x the product of the facts' likelihoods L_f(V). This
module computes that posterior and turns it into the quantile table the kernels draw V from,
at V's own address (so every world stays equally weighted and every draw keeps its address).

The grid is in V's prior normal scores: V = F^-1(Phi(z)), F its prior as the kernels draw it
(a lognormal's exp(mu + sigma z) exactly), so the prior's density in z is phi(z) whatever the
prior's kind and the posterior's density is phi(z) L(V(z)): no prior density is ever needed
and both tails are resolved. A first pass over z in [-10, 10] (widened while mass sits at an
edge) on COARSE points finds where the posterior lives (log density within LOG_RANGE of its
peak); a second pass puts GRID points there. The posterior's CDF (trapezoid masses, summed
from the left for the lower half and from the right for the upper half, so both tails keep
their relative precision) is inverted at the table's knots, the posterior's own normal scores
-TABLE_Z .. TABLE_Z (mcrisk/core/distributions.py), linearly within a grid cell.

A `chance` prior (a risk: 0 with probability 1 - p) keeps its atom: the posterior is a
`chance` again, with probability p' = p int phi L / (p int phi L + (1 - p) L(0)) of a non-zero
draw, which is drawn from the table of the non-zero part.

Numerical error (measured against a grid twice as fine, `table_error`, against closed forms
and against quadrature, tests/plan/test_posterior.py): on the reference's vendor delay given
the example statuses, under 1e-4 days between the 0.1% and 99.9% quantiles (measured 1.6e-5
to 5.4e-5) and under 1e-2 days at the table's ends (|z| = 8.5, probability 1e-17; measured
1.9e-3 to 5.5e-3); the kernels' linear interpolation between knots adds under 1e-3 days in
the bulk (measured 9e-6 to 4.7e-4, the most on day 100's wide posterior). docs/status.md
states it.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

import numpy as np
from scipy import special

from ..core.distributions import (KIND_FIXED, KIND_LOGNORMAL, KIND_PERT, KIND_TRIANGULAR,
                                  KIND_UNIFORM, PERT_TABLE_SIZE, PERT_TABLE_STRIDE, SQRT2,
                                  TABLE_SIZE, TABLE_Z, cdf, is_bounded, ppf)

COARSE = 65537          # first pass: where the posterior lives
GRID = 65537            # second pass: the grid the table is read from
LOG_RANGE = 60.0        # log density below the peak that counts as no mass (e**-60 ~ 1e-26)
Z_START, Z_LIMIT = 10.0, 60.0


@dataclass(frozen=True)
class Encoded:
    """An encoded distribution as the kernels draw it: kind, four params, chance, and the
    plan's quantile tables end to end (mcrisk/core/distributions.py)."""

    kind: int
    param: np.ndarray
    chance: float
    tables: np.ndarray

    @property
    def fixed(self) -> bool:
        return self.kind == KIND_FIXED and self.chance >= 1.0


class NoPosterior(ValueError):
    """The facts have zero likelihood at every value the prior allows."""


def values_at(prior: Encoded, z: np.ndarray) -> np.ndarray:
    """V at prior normal scores z (the non-zero part's, for a `chance`)."""
    if prior.kind == KIND_LOGNORMAL and not is_bounded(prior.kind, prior.param):
        return np.exp(prior.param[0] + prior.param[1] * z)
    return ppf(prior.kind, prior.param, prior.tables, special.ndtr(z))


def log_density(dist: Encoded, x: np.ndarray) -> np.ndarray:
    """log of the density at x of a continuous (non-chance) encoded distribution; -inf
    outside its support."""
    x = np.asarray(x, dtype=np.float64)
    p = dist.param
    with np.errstate(divide="ignore", invalid="ignore"):
        if dist.kind == KIND_UNIFORM:
            inside = (x >= p[0]) & (x <= p[0] + p[1])
            return np.where(inside, -math.log(p[1]), -np.inf)
        if dist.kind == KIND_TRIANGULAR:
            low, mode, high = p[0], p[1], p[2]
            span = high - low
            up = 2.0 * (x - low) / (span * (mode - low))
            down = 2.0 * (high - x) / (span * (high - mode))
            density = np.where(x < mode, up, down)
            return np.where((x > low) & (x < high), np.log(density), -np.inf)
        if dist.kind == KIND_PERT:
            table = dist.tables[int(p[2]):int(p[2]) + PERT_TABLE_STRIDE]
            alpha, beta = 1.0 / table[PERT_TABLE_SIZE], 1.0 / table[PERT_TABLE_SIZE + 1]
            y = (x - p[0]) / p[1]
            inside = (y > 0.0) & (y < 1.0)
            yc = np.where(inside, y, 0.5)
            log_pdf = ((alpha - 1.0) * np.log(yc) + (beta - 1.0) * np.log1p(-yc)
                       - special.betaln(alpha, beta) - math.log(p[1]))
            return np.where(inside, log_pdf, -np.inf)
        if dist.kind == KIND_LOGNORMAL:
            positive = x > 0.0
            xc = np.where(positive, x, 1.0)
            z = (np.log(xc) - p[0]) / p[1]
            log_pdf = -0.5 * z * z - np.log(xc * p[1] * math.sqrt(2.0 * math.pi))
            if is_bounded(dist.kind, p):      # truncated to [min, max]: renormalized
                unbounded = np.array([p[0], p[1], 0.0, 0.0])
                f_low, f_high = (float(cdf(KIND_LOGNORMAL, unbounded, dist.tables, b))
                                 if b > 0.0 else default
                                 for b, default in ((p[2], 0.0), (p[3], 1.0)))
                inside = positive & (x >= p[2]) & ((x <= p[3]) | (p[3] <= 0.0))
                return np.where(inside, log_pdf - math.log(f_high - f_low), -np.inf)
            return np.where(positive, log_pdf, -np.inf)
    raise ValueError(f"no density for distribution kind code {dist.kind}")


def log_survival(dist: Encoded, b: np.ndarray) -> np.ndarray:
    """log P(X > b) of an encoded distribution as the kernels draw it (a `chance` included:
    1 below 0, p P(inner > b) from 0 on)."""
    b = np.asarray(b, dtype=np.float64)
    with np.errstate(divide="ignore"):
        if dist.kind == KIND_LOGNORMAL and not is_bounded(dist.kind, dist.param):
            positive = b > 0.0
            z = (np.log(np.where(positive, b, 1.0)) - dist.param[0]) / (dist.param[1] * SQRT2)
            inner = np.where(positive, np.log(0.5 * special.erfc(z)), 0.0)
        else:
            inner = np.log1p(-cdf(dist.kind, dist.param, dist.tables, b))
    if dist.chance >= 1.0:
        return inner
    return np.where(b < 0.0, 0.0, math.log(dist.chance) + inner)


def _log_posterior(prior: Encoded, log_likelihood: Callable, z: np.ndarray) -> np.ndarray:
    with np.errstate(invalid="ignore"):
        log_p = -0.5 * z * z + log_likelihood(values_at(prior, z))
    return np.where(np.isnan(log_p), -np.inf, log_p)


def _where_it_lives(prior: Encoded, log_likelihood: Callable) -> tuple[float, float]:
    """The range of prior normal scores that holds the posterior's mass."""
    low, high = -Z_START, Z_START
    while True:
        z = np.linspace(low, high, COARSE)
        log_p = _log_posterior(prior, log_likelihood, z)
        peak = log_p.max()
        if not np.isfinite(peak):
            raise NoPosterior("the facts have zero likelihood wherever the prior has mass")
        alive = np.flatnonzero(log_p > peak - LOG_RANGE)
        widen_low = alive[0] == 0 and low > -Z_LIMIT
        widen_high = alive[-1] == COARSE - 1 and high < Z_LIMIT
        if not (widen_low or widen_high):
            break
        low, high = low - 10.0 * widen_low, high + 10.0 * widen_high
    first, last = max(alive[0] - 2, 0), min(alive[-1] + 2, COARSE - 1)
    finite = np.isfinite(log_p)
    low, high = float(z[first]), float(z[last])
    if not finite[first]:             # a hard edge (a support's end) below the mass
        inside = first + int(np.argmax(finite[first:]))
        low = _edge(prior, log_likelihood, float(z[inside - 1]), float(z[inside]))
    if not finite[last]:              # and above it
        inside = last - int(np.argmax(finite[last::-1]))
        high = _edge(prior, log_likelihood, float(z[inside + 1]), float(z[inside]))
    return low, high


def _edge(prior: Encoded, log_likelihood: Callable, outside: float, inside: float) -> float:
    """The last z with a positive posterior density between `outside` (none) and `inside`
    (some), by bisection: the grid then ends inside the support, so no knot leaves it."""
    for _ in range(80):
        middle = 0.5 * (outside + inside)
        if middle in (outside, inside):
            break
        if np.isfinite(_log_posterior(prior, log_likelihood, np.array([middle]))[0]):
            inside = middle
        else:
            outside = middle
    return inside


def _knots(z: np.ndarray, log_p: np.ndarray,
           zeta: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Prior normal scores at the table's knots (or at posterior normal scores `zeta`), and
    log of the posterior's total mass over the grid (in units of the prior's normal
    density)."""
    peak = log_p.max()
    w = np.exp(log_p - peak)
    mass = 0.5 * (w[1:] + w[:-1]) * (z[1] - z[0])
    left = np.concatenate([[0.0], np.cumsum(mass)])                 # mass below z[i]
    right = np.concatenate([np.cumsum(mass[::-1])[::-1], [0.0]])    # mass above z[i]
    total = left[-1]
    if not total > 0.0:
        raise NoPosterior("the facts leave no mass on the grid")
    zeta = np.linspace(-TABLE_Z, TABLE_Z, TABLE_SIZE) if zeta is None else zeta
    out = np.empty(len(zeta))
    lower = zeta <= 0.0
    out[lower] = _invert(z, left, total * special.ndtr(zeta[lower]))
    # the upper half through the mass above: z where right(z) = total * P(Z > zeta)
    out[~lower] = _invert(z[::-1], right[::-1], total * special.ndtr(-zeta[~lower]))
    return out, peak + math.log(total)


def _invert(z: np.ndarray, cumulative: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """z where the (non-decreasing) cumulative reaches each target, linear within a cell."""
    i = np.clip(np.searchsorted(cumulative, targets, side="left"), 1, len(z) - 1)
    c0, c1 = cumulative[i - 1], cumulative[i]
    frac = np.where(c1 > c0, (targets - c0) / np.where(c1 > c0, c1 - c0, 1.0), 0.0)
    return z[i - 1] + np.clip(frac, 0.0, 1.0) * (z[i] - z[i - 1])


@dataclass(frozen=True)
class Posterior:
    """V's posterior: `table` (TABLE_SIZE values at the posterior's normal scores) drawn
    with probability `chance`, else 0 (chance 1: not a `chance`)."""

    table: np.ndarray
    chance: float


def posterior(prior: Encoded, log_likelihood: Callable, grid: int = GRID) -> Posterior:
    """V's posterior given facts whose joint log-likelihood at values of V is
    `log_likelihood` (vectorized); raises NoPosterior when it is zero everywhere."""
    atom = -np.inf
    if prior.chance < 1.0:
        atom = math.log1p(-prior.chance) + float(log_likelihood(np.zeros(1))[0])
    try:
        low, high = _where_it_lives(prior, log_likelihood)
    except NoPosterior:
        if np.isfinite(atom):           # only the atom at 0 is left
            return Posterior(np.zeros(TABLE_SIZE), 0.0)
        raise
    z = np.linspace(low, high, grid)
    scores, log_mass = _knots(z, _log_posterior(prior, log_likelihood, z))
    table = values_at(prior, scores)
    if prior.chance >= 1.0:
        return Posterior(table, 1.0)
    # the non-zero part's mass: p x the integral of phi(z) L, phi's 1 / sqrt(2 pi) included
    log_nonzero = math.log(prior.chance) + log_mass - 0.5 * math.log(2.0 * math.pi)
    chance = 1.0 / (1.0 + math.exp(atom - log_nonzero)) if np.isfinite(atom) else 1.0
    return Posterior(table, chance)


def interpolation_error(prior: Encoded, log_likelihood: Callable) -> tuple[float, float]:
    """The kernels' linear interpolation between knots: the largest difference, in V's units,
    between the table interpolated halfway between its knots and the posterior's quantiles
    there (on the same grid), between the 0.1% and 99.9% quantiles and overall."""
    low, high = _where_it_lives(prior, log_likelihood)
    z = np.linspace(low, high, GRID)
    log_p = _log_posterior(prior, log_likelihood, z)
    knots = values_at(prior, _knots(z, log_p)[0])
    zeta = np.linspace(-TABLE_Z, TABLE_Z, TABLE_SIZE)
    middle = 0.5 * (zeta[1:] + zeta[:-1])
    exact = values_at(prior, _knots(z, log_p, middle)[0])
    difference = np.abs(0.5 * (knots[1:] + knots[:-1]) - exact)
    bulk = np.abs(middle) <= special.ndtri(0.999)
    return float(difference[bulk].max()), float(difference.max())


def table_error(prior: Encoded, log_likelihood: Callable) -> tuple[float, float]:
    """The table's numerical error: the largest difference, in V's units, between the table
    on GRID points and on a grid twice as fine, over the knots between the posterior's 0.1%
    and 99.9% quantiles, and over all knots."""
    coarse = posterior(prior, log_likelihood, GRID).table
    fine = posterior(prior, log_likelihood, 2 * GRID - 1).table
    zeta = np.linspace(-TABLE_Z, TABLE_Z, TABLE_SIZE)
    bulk = np.abs(zeta) <= special.ndtri(0.999)
    difference = np.abs(coarse - fine)
    return float(difference[bulk].max()), float(difference.max())
