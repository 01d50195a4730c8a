"""Distributions as functions of uniforms: encoding for the kernels and the NumPy specification.

Every distribution is sampled by its inverse CDF from one uniform u in (0, 1), so a draw is a
monotone function of its address's words (common random numbers couple strategies tightly, and
drivers analysis sees monotone effects). `chance` uses its first uniform for the coin and its
second for the inner distribution.

Encoded form (what the kernels see), per distribution d:
  dist_kind[d]     one of the KIND_* codes (the inner kind for `chance`)
  dist_param[d, :] four float64 parameters, by kind:
      FIXED       (value, -, -, -)
      UNIFORM     (min, max - min, -, -)
      TRIANGULAR  (min, mode, max, -)
      PERT        (min, max - min, table offset, -)   value = min + span * table(u)
      LOGNORMAL   (ln median, sigma, -, -)             value = exp(mu + sigma * ndtri(u))
  dist_chance[d]   probability that the draw is non-zero (1.0: not a `chance` distribution)

BetaPERT has no closed-form inverse CDF. Its quantile function is tabulated at compile time
from the Beta quantile (scipy.special.betaincinv: what scipy.stats.beta.ppf gives, bit for
bit, without importing scipy.stats) on PERT_TABLE_SIZE evenly spaced probabilities and
interpolated linearly, except in the outermost interval at each end, where the Beta
quantile's power-law asymptote (u^(1/alpha) at 0, (1-u)^(1/beta) at 1) is scaled to the
knot. Measured error (tests/core/test_distributions.py): under 1e-5 of the range for u in
[0.01, 0.99], under 3e-3 of the range elsewhere. A table is PERT_TABLE_SIZE knots followed
by 1/alpha and 1/beta.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from .model import Distribution

KIND_FIXED = 0
KIND_UNIFORM = 1
KIND_TRIANGULAR = 2
KIND_PERT = 3
KIND_LOGNORMAL = 4
KIND_CODES = {"fixed": KIND_FIXED, "uniform": KIND_UNIFORM, "triangular": KIND_TRIANGULAR,
              "pert": KIND_PERT, "lognormal": KIND_LOGNORMAL}

Z90 = float(special.ndtri(0.9))  # 1.2815515655446004; the contract rounds it to 1.2815516
PERT_TABLE_SIZE = 4097            # knots at u = 0, 1/4096, ..., 1
PERT_TABLE_STRIDE = PERT_TABLE_SIZE + 2


def lognormal_sigma(median: float, p90: float) -> float:
    """sigma of ln X for a lognormal given by its median and P90."""
    return (math.log(p90) - math.log(median)) / Z90


def pert_alpha_beta(low: float, mode: float, high: float, lam: float) -> tuple[float, float]:
    span = high - low
    return 1.0 + lam * (mode - low) / span, 1.0 + lam * (high - mode) / span


def pert_table(low: float, mode: float, high: float, lam: float) -> np.ndarray:
    """Quantiles of the standard Beta of a BetaPERT at u = k / (PERT_TABLE_SIZE - 1)."""
    alpha, beta = pert_alpha_beta(low, mode, high, lam)
    u = np.linspace(0.0, 1.0, PERT_TABLE_SIZE)
    table = special.betaincinv(alpha, beta, u)
    table[0], table[-1] = 0.0, 1.0
    return np.concatenate([table, [1.0 / alpha, 1.0 / beta]])


def encode(dist: Distribution, pert_tables: list[np.ndarray]) -> tuple[int, tuple, float]:
    """(kind code, four params, chance probability) of a distribution.

    A PERT's table is appended to `pert_tables`; its offset (in knots) goes into the params.
    """
    chance = 1.0
    if dist.kind == "chance":
        chance, dist = dist.params[0], dist.inner
    p = dist.params
    if dist.kind == "fixed":
        return KIND_FIXED, (p[0], 0.0, 0.0, 0.0), chance
    if dist.kind == "uniform":
        return KIND_UNIFORM, (p[0], p[1] - p[0], 0.0, 0.0), chance
    if dist.kind == "triangular":
        return KIND_TRIANGULAR, (p[0], p[1], p[2], 0.0), chance
    if dist.kind == "pert":
        if p[2] == p[0]:  # degenerate: a point mass
            return KIND_FIXED, (p[0], 0.0, 0.0, 0.0), chance
        offset = sum(len(t) for t in pert_tables)   # in table entries
        pert_tables.append(pert_table(*p))
        return KIND_PERT, (p[0], p[2] - p[0], float(offset), 0.0), chance
    if dist.kind == "lognormal":
        return KIND_LOGNORMAL, (math.log(p[0]), lognormal_sigma(p[0], p[1]), 0.0, 0.0), chance
    raise ValueError(f"unknown distribution kind {dist.kind!r}")


def median(dist: Distribution) -> float:
    """The median of a (non-chance) distribution, from its own encoding."""
    kind, params, _ = encode(dist, tables := [])
    table = np.concatenate(tables) if tables else np.zeros(1)
    return float(ppf(kind, np.array(params), table, np.array(0.5)))


def ppf(kind: int, param: np.ndarray, pert_table_knots: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Inverse CDF of an encoded (non-chance) distribution at uniforms u (any shape)."""
    u = np.asarray(u, dtype=np.float64)
    if kind == KIND_FIXED:
        return np.full_like(u, param[0])
    if kind == KIND_UNIFORM:
        return param[0] + u * param[1]
    if kind == KIND_TRIANGULAR:
        low, mode, high = param[0], param[1], param[2]
        span = high - low
        if span <= 0.0:
            return np.full_like(u, low)
        cut = (mode - low) / span
        left = low + np.sqrt(u * span * (mode - low))
        right = high - np.sqrt((1.0 - u) * span * (high - mode))
        return np.where(u < cut, left, right)
    if kind == KIND_PERT:
        offset = int(param[2])
        table = pert_table_knots[offset:offset + PERT_TABLE_STRIDE]
        last = PERT_TABLE_SIZE - 1
        position = u * last
        knot = np.minimum(position.astype(np.int64), last - 1)
        frac = position - knot
        y = table[knot] + frac * (table[knot + 1] - table[knot])
        y = np.where(knot == 0, table[1] * np.power(position, table[last + 1]), y)
        y = np.where(knot == last - 1,
                     1.0 - (1.0 - table[last - 1]) * np.power(last - position, table[last + 2]), y)
        return param[0] + param[1] * y
    if kind == KIND_LOGNORMAL:
        return np.exp(param[0] + param[1] * special.ndtri(u))
    raise ValueError(f"unknown distribution kind code {kind}")


def sample(kind: int, param: np.ndarray, chance: float, pert_table_knots: np.ndarray,
           u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """A draw from its two uniforms: `chance` tosses u1 and draws from u2, others use u1."""
    if chance >= 1.0:
        return ppf(kind, param, pert_table_knots, u1)
    return np.where(u1 < chance, ppf(kind, param, pert_table_knots, u2), 0.0)
