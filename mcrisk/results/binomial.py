"""The binomial distribution's few functions mcrisk needs, without importing scipy.stats.

A default `mcrisk run` needs binomial quantiles (the distribution-free interval of every P90,
results.statistics.quantile_ci_ranks) and exact binomial tests (McNemar's test of the
ranking and the atom guard, results.paired and results.ranking). scipy.stats gives both but
takes ~0.8 s to import (issue 12); this module gives the same numbers from scipy.special,
which the distributions import anyway.

Definitions are scipy.stats' (scipy.stats.binom and scipy.stats.binomtest), for B ~
Binomial(n, p):
  cdf(k) = P(B <= k) and sf(k) = P(B > k), from Boost's regularized incomplete beta (the
      library and the formula scipy.stats.binom uses: cdf = ibetac(k + 1, n - k, p)). Not
      scipy.special.bdtr/bdtrc: Cephes' versions lose accuracy with n (0.3% relative at
      n = 10^7, p = 1/2, near the median). Agrees with scipy.stats to ~1e-11 relative at
      n = 10^7 and better below (the two build Boost with different precision policies).
  ppf(q) = the smallest k with cdf(k) >= q (-1 at q = 0, as scipy.stats says);
  isf(q) = the smallest k with sf(k) <= q (-1 at q = 1);
  test_less(k, n, p) = cdf(k) and test_greater(k, n, p) = P(B >= k): the one-sided exact
      binomial test's p-values;
  test_two_sided_half(k, n): the two-sided exact test at p = 1/2 (McNemar's): the
      probability of an outcome as unlikely as k or less, which is both tails from
      min(k, n - k) out, with scipy's tolerance of 1e-7 relative for "as unlikely".
"""
from __future__ import annotations

import math

from scipy import special

TWO_SIDED_TOLERANCE = 1e-7      # scipy.stats.binomtest's rerr - 1: "as unlikely" within it


def cdf(k: int, n: int, p: float) -> float:
    """P(B <= k) for B ~ Binomial(n, p), as scipy.stats.binom.cdf."""
    if k < 0:
        return 0.0
    if k >= n or p == 0.0:
        return 1.0
    if p == 1.0:
        return 0.0
    return float(special.betaincc(k + 1, n - k, p))


def sf(k: int, n: int, p: float) -> float:
    """P(B > k) for B ~ Binomial(n, p), as scipy.stats.binom.sf."""
    if k < 0:
        return 1.0
    if k >= n or p == 0.0:
        return 0.0
    if p == 1.0:
        return 1.0
    return float(special.betainc(k + 1, n - k, p))


def _smallest(holds, n: int) -> int:
    """The smallest k in [0, n] for which holds(k), given that holds(n) and that holds is
    monotone (false, then true): a bisection, ~log2(n) evaluations."""
    low, high = -1, n            # holds(low) is false (or low is -1), holds(high) is true
    while high - low > 1:
        middle = (low + high) // 2
        if holds(middle):
            high = middle
        else:
            low = middle
    return high


def ppf(q: float, n: int, p: float) -> int:
    """The smallest k with P(B <= k) >= q, as scipy.stats.binom.ppf (-1 at q = 0, n at
    q = 1: the ends of the support, whatever rounding says of cdf)."""
    if q <= 0.0:
        return -1
    if q >= 1.0:
        return n
    return _smallest(lambda k: cdf(k, n, p) >= q, n)


def isf(q: float, n: int, p: float) -> int:
    """The smallest k with P(B > k) <= q, as scipy.stats.binom.isf (-1 at q = 1, n at
    q = 0)."""
    if q >= 1.0:
        return -1
    if q <= 0.0:
        return n
    return _smallest(lambda k: sf(k, n, p) <= q, n)


def test_less(k: int, n: int, p: float) -> float:
    """p-value of the exact binomial test of k successes in n against the alternative that
    the success probability is below p: P(B <= k) (scipy.stats.binomtest, 'less')."""
    return cdf(k, n, p)


def test_greater(k: int, n: int, p: float) -> float:
    """p-value of the exact binomial test of k successes in n against the alternative that
    the success probability is above p: P(B >= k) (scipy.stats.binomtest, 'greater')."""
    return sf(k - 1, n, p)


def _as_unlikely_beyond_mirror(m: int, n: int) -> int:
    """How many outcomes next to the mirror n - m of m (m < n / 2), toward the middle, scipy's
    two-sided test at p = 1/2 also counts as no more likely than m: those whose probability is
    within TWO_SIDED_TOLERANCE of m's. Zero unless n is in the tens of millions (the first,
    n - m - 1, is (n - m) / (m + 1) times as likely as m)."""
    extra, ratio, j = 0, 1.0, n - m          # ratio: P(B = j) / P(B = m)
    while j - 1 >= math.ceil(n / 2):
        ratio *= j / (n - j + 1)              # P(B = j - 1) / P(B = j) at p = 1/2
        if ratio > 1.0 + TWO_SIDED_TOLERANCE:
            break
        extra, j = extra + 1, j - 1
    return extra


def test_two_sided_half(k: int, n: int) -> float:
    """p-value of the two-sided exact binomial test of k successes in n trials at p = 1/2
    (scipy.stats.binomtest(k, n, 0.5).pvalue): both tails from m = min(k, n - k) out, 1.0 at
    k = n / 2."""
    if 2 * k == n:
        return 1.0
    m = min(k, n - k)
    extra = _as_unlikely_beyond_mirror(m, n)
    if k < n - k:
        pvalue = cdf(k, n, 0.5) + sf(n - m - 1 - extra, n, 0.5)
    else:
        pvalue = cdf(m + extra, n, 0.5) + sf(k - 1, n, 0.5)
    return min(1.0, pvalue)


def proportion_interval(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The exact (Clopper-Pearson) interval of a proportion seen k times in n trials, as
    scipy.stats.binomtest(k, n).proportion_ci(confidence, method="exact"): the beta
    quantiles of the binomial's tails, 0 at k = 0 and 1 at k = n."""
    if not 0 <= k <= n or n < 1:
        raise ValueError(f"need 0 <= k <= n and n >= 1, got k = {k}, n = {n}")
    alpha = 1.0 - confidence
    low = 0.0 if k == 0 else float(special.betaincinv(k, n - k + 1, alpha / 2))
    high = 1.0 if k == n else float(special.betaincinv(k + 1, n - k, 1 - alpha / 2))
    return low, high
