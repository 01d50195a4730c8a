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
      LOGNORMAL   (ln median, sigma, min, max)         value = exp(mu + sigma * ndtri(u))
                  min, max: a bounded lognormal's (0: no such bound), below
      TABLE       (table offset, -, -, -)              value = table(ndtri(u)), a posterior
  dist_chance[d]   probability that the draw is non-zero (1.0: not a `chance` distribution)

A TABLE is a posterior quantile function computed at compile time (mcrisk/plan/posterior.py):
TABLE_SIZE knots at normal scores z_k = -TABLE_Z + 2 TABLE_Z k / (TABLE_SIZE - 1), linear in
z between them; the draw is at z = ndtri(u), which never leaves [-TABLE_Z, TABLE_Z] for the
uniforms of mcrisk/core/rng.py (ndtri(2**-53) = -8.2). Knots in normal scores rather than in u
keep both tails resolved: a posterior's quantile function is smooth in z.

A draw conditioned to exceed a bound b (`sample_above`: a date not reached by the status date,
an activity running for longer than b) maps its uniform into [F(b), 1), F the CDF of the
distribution as drawn (`cdf`: a PERT's is the inverse of its table's interpolation), and
takes the quantile there; a lognormal's from its survival function, which keeps the upper
tail's precision; a `chance` draws its inner distribution above b when b >= 0 (0 is not
above b), else as usual. The draw stays at its address.

A bounded lognormal (`min` / `max` in the scenario, param 2 and 3 non-zero) is truncated to
[min, max]: its uniform is mapped into [F(min), F(max)] and the quantile taken there
(`lognormal_between`), at the same address, so common random numbers hold. With min above
the median the map goes through the survival function, S(max) + (1 - u) (S(min) - S(max)),
which keeps the upper tail's precision, else through the CDF, F(min) + u (F(max) - F(min));
either way the draw is then clamped into [min, max], so rounding never puts it outside. An
unbounded lognormal (params 2 and 3 zero) is drawn by the plain formula above, bit for bit
as before bounds existed. A conditioned draw of a bounded one (`ppf_above`) is the same map
with min raised to the conditioning bound.

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
KIND_TABLE = 5
KIND_CODES = {"fixed": KIND_FIXED, "uniform": KIND_UNIFORM, "triangular": KIND_TRIANGULAR,
              "pert": KIND_PERT, "lognormal": KIND_LOGNORMAL}

Z90 = float(special.ndtri(0.9))  # 1.2815515655446004; the contract rounds it to 1.2815516
PERT_TABLE_SIZE = 4097            # knots at u = 0, 1/4096, ..., 1
PERT_TABLE_STRIDE = PERT_TABLE_SIZE + 2
TABLE_SIZE = 4097                 # a posterior table's knots, at normal scores -TABLE_Z .. TABLE_Z
TABLE_Z = 8.5
SQRT2 = 1.4142135623730951        # math.sqrt(2.0)


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
        low, high = dist.bounds or (0.0, math.inf)
        return KIND_LOGNORMAL, (math.log(p[0]), lognormal_sigma(p[0], p[1]), float(low),
                                float(high) if math.isfinite(high) else 0.0), chance
    raise ValueError(f"unknown distribution kind {dist.kind!r}")


def encode_table(table: np.ndarray, chance: float, tables: list[np.ndarray]) -> tuple:
    """(KIND_TABLE, params, chance) of a posterior quantile table of TABLE_SIZE knots (a
    `chance` one when chance < 1: the table is then its non-zero part's); the table is appended
    to `tables`, the plan's quantile tables end to end."""
    if len(table) != TABLE_SIZE:
        raise ValueError(f"a posterior table has {TABLE_SIZE} knots, not {len(table)}")
    offset = sum(len(t) for t in tables)
    tables.append(np.asarray(table, dtype=np.float64))
    return KIND_TABLE, (float(offset), 0.0, 0.0, 0.0), float(chance)


def median(dist: Distribution) -> float:
    """The median of a (non-chance) distribution, from its own encoding."""
    kind, params, _ = encode(dist, tables := [])
    table = np.concatenate(tables) if tables else np.zeros(1)
    return float(ppf(kind, np.array(params), table, np.array(0.5)))


def is_bounded(kind: int, param) -> bool:
    """Whether an encoded distribution is a bounded lognormal (min or max given)."""
    return kind == KIND_LOGNORMAL and (param[2] > 0.0 or param[3] > 0.0)


def lognormal_between(mu: float, sigma: float, low, high: float, u: np.ndarray) -> np.ndarray:
    """The quantile at u of a lognormal (mu, sigma) truncated to [low, high] (low 0: none,
    high 0: none; low may be an array, a conditioning bound per draw): u mapped into
    [F(low), F(high)], through the survival function when low lies above the median, and
    clamped into [low, high]. The kernels' lognormal_between does the same operations."""
    u = np.asarray(u, dtype=np.float64)
    low = np.broadcast_to(np.asarray(low, dtype=np.float64), u.shape)
    scale = sigma * SQRT2
    with np.errstate(divide="ignore"):
        z_low = np.where(low > 0.0, (np.log(np.where(low > 0.0, low, 1.0)) - mu) / scale,
                         -np.inf)
    z_high = (math.log(high) - mu) / scale if high > 0.0 else math.inf
    s_low = np.where(low > 0.0, 0.5 * special.erfc(z_low), 1.0)
    s_high = 0.5 * special.erfc(z_high) if high > 0.0 else 0.0
    f_low = np.where(low > 0.0, 0.5 * special.erfc(-z_low), 0.0)
    f_high = 0.5 * special.erfc(-z_high) if high > 0.0 else 1.0
    upper = z_low > 0.0
    with np.errstate(divide="ignore", over="ignore"):
        by_survival = np.exp(mu - sigma * special.ndtri(s_high + (1.0 - u) * (s_low - s_high)))
        by_cdf = np.exp(mu + sigma * special.ndtri(f_low + u * (f_high - f_low)))
    x = np.where(upper, by_survival, by_cdf)
    x = np.where((low > 0.0) & (x < low), low, x)
    return np.where((high > 0.0) & (x > high), high, x) if high > 0.0 else x


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
        if is_bounded(kind, param):
            return lognormal_between(param[0], param[1], param[2], param[3], u)
        return np.exp(param[0] + param[1] * special.ndtri(u))
    if kind == KIND_TABLE:
        offset = int(param[0])
        table = pert_table_knots[offset:offset + TABLE_SIZE]
        last = TABLE_SIZE - 1
        position = (special.ndtri(u) + TABLE_Z) / (2.0 * TABLE_Z) * last
        position = np.minimum(np.maximum(position, 0.0), float(last))
        knot = np.minimum(position.astype(np.int64), last - 1)
        frac = position - knot
        return table[knot] + frac * (table[knot + 1] - table[knot])
    raise ValueError(f"unknown distribution kind code {kind}")


def cdf(kind: int, param: np.ndarray, pert_table_knots: np.ndarray, x: np.ndarray) -> np.ndarray:
    """P(X <= x) of an encoded (non-chance, non-table) distribution as `ppf` draws it, at x
    (any shape): the inverse of ppf, a PERT's by searching its table."""
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        if kind == KIND_FIXED:
            return np.where(x >= param[0], 1.0, 0.0)
        if kind == KIND_UNIFORM:
            if param[1] <= 0.0:
                return np.where(x >= param[0], 1.0, 0.0)
            return np.minimum(np.maximum((x - param[0]) / param[1], 0.0), 1.0)
        if kind == KIND_TRIANGULAR:
            low, mode, high = param[0], param[1], param[2]
            span = high - low
            if span <= 0.0:
                return np.where(x >= low, 1.0, 0.0)
            left = (x - low) * (x - low) / (span * (mode - low))
            right = 1.0 - (high - x) * (high - x) / (span * (high - mode))
            return np.where(x <= low, 0.0, np.where(x >= high, 1.0,
                                                    np.where(x < mode, left, right)))
        if kind == KIND_PERT:
            offset = int(param[2])
            table = pert_table_knots[offset:offset + PERT_TABLE_STRIDE]
            last = PERT_TABLE_SIZE - 1
            y = (x - param[0]) / param[1]
            inside = (y > 0.0) & (y < 1.0)
            yc = np.where(inside, y, 0.5)
            knot = np.minimum(np.searchsorted(table[:last + 1], yc, side="right") - 1, last - 1)
            knot = np.maximum(knot, 0)
            lo, hi = table[knot], table[np.minimum(knot + 1, last)]
            position = knot + (yc - lo) / (hi - lo)
            position = np.where(knot == 0, np.power(yc / table[1], 1.0 / table[last + 1]),
                                position)
            position = np.where(knot == last - 1,
                                last - np.power((1.0 - yc) / (1.0 - table[last - 1]),
                                                1.0 / table[last + 2]), position)
            return np.where(y <= 0.0, 0.0, np.where(y >= 1.0, 1.0, position / last))
        if kind == KIND_LOGNORMAL:
            positive = x > 0.0
            z = (np.log(np.where(positive, x, 1.0)) - param[0]) / (param[1] * SQRT2)
            f = np.where(positive, 0.5 * special.erfc(-z), 0.0)
            if not is_bounded(kind, param):
                return f
            unbounded = np.array(param, dtype=np.float64)
            unbounded[2:] = 0.0
            f_low, f_high = (float(cdf(kind, unbounded, pert_table_knots, b)) if b > 0.0
                             else default for b, default in ((param[2], 0.0), (param[3], 1.0)))
            return np.minimum(np.maximum((f - f_low) / (f_high - f_low), 0.0), 1.0)
    raise ValueError(f"no CDF for distribution kind code {kind}")


def ppf_above(kind: int, param: np.ndarray, pert_table_knots: np.ndarray, bound: np.ndarray,
              u: np.ndarray) -> np.ndarray:
    """The quantile at u of an encoded (non-chance) distribution truncated to above `bound`:
    u mapped into [F(bound), 1); a lognormal's through its survival function (a bounded
    lognormal's into [F(max(bound, min)), F(max)], lognormal_between)."""
    u = np.asarray(u, dtype=np.float64)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), u.shape)
    if is_bounded(kind, param):
        return lognormal_between(param[0], param[1], np.maximum(bound, param[2]), param[3], u)
    if kind == KIND_LOGNORMAL:
        positive = bound > 0.0
        z = (np.log(np.where(positive, bound, 1.0)) - param[0]) / (param[1] * SQRT2)
        survival = np.where(positive, 0.5 * special.erfc(z), 1.0)
        return np.exp(param[0] - param[1] * special.ndtri(survival * (1.0 - u)))
    f = cdf(kind, param, pert_table_knots, bound)
    return ppf(kind, param, pert_table_knots, f + u * (1.0 - f))


def sample_above(kind: int, param: np.ndarray, chance: float, pert_table_knots: np.ndarray,
                 bound: np.ndarray, u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """A draw conditioned to exceed `bound`, from the same two uniforms as `sample`: a
    `chance` draws its inner distribution above a bound >= 0 from u2, and as usual below 0."""
    if chance >= 1.0:
        return ppf_above(kind, param, pert_table_knots, bound, u1)
    bound = np.broadcast_to(np.asarray(bound, dtype=np.float64), np.shape(u1))
    usual = np.where(u1 < chance, ppf(kind, param, pert_table_knots, u2), 0.0)
    return np.where(bound < 0.0, usual, ppf_above(kind, param, pert_table_knots, bound, u2))


def sample(kind: int, param: np.ndarray, chance: float, pert_table_knots: np.ndarray,
           u1: np.ndarray, u2: np.ndarray) -> np.ndarray:
    """A draw from its two uniforms: `chance` tosses u1 and draws from u2, others use u1."""
    if chance >= 1.0:
        return ppf(kind, param, pert_table_knots, u1)
    return np.where(u1 < chance, ppf(kind, param, pert_table_knots, u2), 0.0)
