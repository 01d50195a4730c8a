"""Rank correlation between named quantities: a Gaussian copula on their addressed draws.

`[[correlations]]` (docs/scenario-format.md) asks for Spearman rank correlations rho_S between
pairs of SAMPLE quantities. The pairs, joined where they share a quantity, form groups; a
group's members are ordered by their first mention in the file. Its Pearson matrix R has
R_ij = 2 sin(pi rho_S / 6) (the Pearson correlation of two standard normals whose ranks
correlate rho_S) for each pair and 0 elsewhere; it must be positive definite; L is its lower
Cholesky factor.

Every member j of a group keeps its address and its first uniform u_j; its normal score is
n_j = ndtri(u_j). Member i draws from the copula uniform

    v_i = Phi(sum over j <= i of L_ij n_j),   clamped into [U_LOW, U_HIGH]

(Phi(z) = erfc(-z / sqrt 2) / 2, the weights added in order from 0.0), so v_i is a fixed
function of addressed words: common random numbers and chunk-size independence hold, and a
scenario without correlations draws exactly as before. A row with one weight (the first
member, or one uncorrelated with every earlier member: L_ii = 1) uses u_i as it is. The
clamp keeps the random stream's reach (ndtri(U_LOW) = -8.2): the largest draw validation
assumes stays the largest. Each v_i is uniform, so every marginal is unchanged, and ranks of
(v_i, v_j) correlate rho_S.

A correlated quantity is drawn from v alone, increasing in it (a larger normal score, a
larger value): ppf(v) for a distribution, and for a `chance` p of a distribution its
quantile as a mixture, 0 when v <= 1 - p, else ppf((v - (1 - p)) / p) (clamped the same
way): zero with probability 1 - p and the inner distribution otherwise, as before, but from
one uniform (an uncorrelated `chance` tosses u1 and draws from u2; a correlated one's draws
differ from its uncorrelated ones scenario by scenario, not in distribution). A fixed value
has no draw to correlate and is refused.

Given a status (docs/status.md), a group where it conditions exactly one member X, on its own
(X alone in its facts' unknowns), is exact: X is drawn as conditioning draws it (the copula
leaves its marginal unchanged), and the others from the copula given X. The group is ordered
with X first (the joint is symmetric), so every other member's row weighs X's normal score
n_X = ndtri(F_X(x)) of X's conditioned value x: X's own uniform mapped into the range of F_X
the facts leave it (copula_score), or, where x varies with another conditioned quantity, F_X
of x itself (the kernels evaluate X first). Every other entry keeps (0, 1): ndtri(u_j) as
before, except where a status conditions both members of a group of two (mcrisk/plan/
copula.py): the second's own entry, the last of its row, then carries its range, and its
score is the standard normal truncated so that the row's sum lies in ndtri of that range
given the entries before it (truncated_score).

This module is the NumPy specification
(numpy/distributions.py's draw_correlated uses it); correlated_lanes (numba/world.py,
kernels/world.cuh) with copula_uniform and draw_correlated_lanes (numba/distributions.py,
kernels/distributions.cuh) mirror it.
"""
from __future__ import annotations

import math

import numpy as np
from scipy import special

from .distributions import SQRT2, ppf

U_LOW = 2.0 ** -53          # the smallest and largest uniforms of mcrisk/core/rng.py
U_HIGH = 1.0 - 2.0 ** -53
MIN_EIGENVALUE = 1e-9       # a Pearson matrix's smallest eigenvalue must be above it


def pearson_of_spearman(rank: float) -> float:
    """The Pearson correlation of a bivariate normal whose Spearman rank correlation is
    `rank`: 2 sin(pi rank / 6)."""
    return 2.0 * math.sin(math.pi * rank / 6.0)


def groups(pairs: list[tuple[str, str, float]]) -> list[list[str]]:
    """The members of each group (pairs joined where they share a name), groups ordered by
    their first member and members by first mention in `pairs`."""
    order: dict[str, int] = {}
    parent: dict[str, str] = {}

    def root(name: str) -> str:
        while parent[name] != name:
            name = parent[name]
        return name

    for a, b, _ in pairs:
        for name in (a, b):
            if name not in order:
                order[name] = len(order)
                parent[name] = name
        ra, rb = root(a), root(b)
        if ra != rb:
            first, second = sorted((ra, rb), key=order.get)
            parent[second] = first
    found: dict[str, list[str]] = {}
    for name in order:                      # in first-mention order
        found.setdefault(root(name), []).append(name)
    return list(found.values())


def pearson_matrix(members: list[str], pairs: list[tuple[str, str, float]]) -> np.ndarray:
    """R of one group: 1 on the diagonal, 2 sin(pi rho_S / 6) for each pair of members."""
    index = {name: i for i, name in enumerate(members)}
    matrix = np.eye(len(members))
    for a, b, rank in pairs:
        if a in index and b in index:
            matrix[index[a], index[b]] = matrix[index[b], index[a]] = pearson_of_spearman(rank)
    return matrix


def smallest_eigenvalue(pairs: list[tuple[str, str, float]]) -> float:
    """The smallest eigenvalue of the Pearson matrices of every group (1.0 with no pairs)."""
    values = [np.linalg.eigvalsh(pearson_matrix(g, pairs)).min() for g in groups(pairs)]
    return float(min(values, default=1.0))


def cholesky_rows(pairs: list[tuple[str, str, float]]) -> dict[str, list[tuple[str, float]]]:
    """Each member's weights: {name: [(member j, L_ij) for j <= i with L_ij != 0]}, from the
    Cholesky factor of its group's Pearson matrix (positive definite: checked on reading)."""
    rows: dict[str, list[tuple[str, float]]] = {}
    for members in groups(pairs):
        rows.update(group_rows(members, pairs))
    return rows


def group_rows(order: list[str], pairs: list[tuple[str, str, float]]
               ) -> dict[str, list[tuple[str, float]]]:
    """The weights of one group's members in `order` (the first member's row is [itself]):
    {name: [(member j, L_ij) for j <= i with L_ij != 0]} of the Cholesky factor of the group's
    Pearson matrix in that order."""
    lower = np.linalg.cholesky(pearson_matrix(order, pairs))
    return {name: [(order[j], float(lower[i, j])) for j in range(i + 1) if lower[i, j] != 0.0]
            for i, name in enumerate(order)}


def copula_score(u: np.ndarray, low: float, high: float) -> np.ndarray:
    """A row entry's normal score: ndtri of its uniform u mapped into [low, high], clamped into
    [U_LOW, U_HIGH]. (low, high) = (0, 1) is ndtri(u) bit for bit (0.0 + u * 1.0 is u). A
    status gives the one member it conditions its conditioned uniform's range: (F(b), 1) above
    a bound b (the kernels draw it from F(b) + u (1 - F(b))), (F(x), F(x)) pinned to x
    (mcrisk/plan/copula.py)."""
    t = low + u * (high - low)
    return special.ndtri(np.minimum(np.maximum(t, U_LOW), U_HIGH))


def truncated(low: float, high: float) -> bool:
    """Whether a row's own (last) entry is truncated given the entries before it: a range
    other than (0, 1) there (a member a status conditions with its partner, plan.copula.
    joint_status; a conditioned member's own row is otherwise dropped)."""
    return low > 0.0 or high < 1.0


def truncated_score(u: np.ndarray, low: float, high: float, partial: np.ndarray,
                    weight: float) -> np.ndarray:
    """A row's own entry's normal score n when its copula uniform is conditioned into
    [low, high] given the row's earlier entries, whose weighted scores sum to `partial`:
    z = partial + weight n must lie in [lo, hi] = [ndtri(low), ndtri(high)], so n is a standard
    normal truncated to [a, b], a = (lo - partial) / weight, b = (hi - partial) / weight, drawn
    from the entry's own uniform u: copula_score(u, Phi(a), Phi(b)) (Phi(a) = 0 for low = 0,
    Phi(b) = 1 for high = 1). Where a > 0 (the range in the upper tail given the others) it is
    taken through the upper tail's probabilities Q(x) = Phi(-x), which keep their precision
    there: -copula_score(1 - u, Q(b), Q(a)), the same draw, increasing in u (exact while
    a < ndtri(U_HIGH) = 8.2; beyond it, a world whose earlier entries contradict the range by
    over 8 standard deviations, n is 8.2)."""
    partial = np.asarray(partial, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        a = np.full(np.shape(partial), -np.inf) if low <= 0.0 else \
            (special.ndtri(low) - partial) / weight
        b = np.full(np.shape(partial), np.inf) if high >= 1.0 else \
            (special.ndtri(high) - partial) / weight
        upper = a > 0.0
        below = np.where(np.isinf(a), 0.0, 0.5 * special.erfc(-a / SQRT2))
        above = np.where(np.isinf(b), 1.0, 0.5 * special.erfc(-b / SQRT2))
        q_a = 0.5 * special.erfc(a / SQRT2)
        q_b = np.where(np.isinf(b), 0.0, 0.5 * special.erfc(b / SQRT2))
        t = np.where(upper, q_b + (1.0 - u) * (q_a - q_b), below + u * (above - below))
        n = special.ndtri(np.minimum(np.maximum(t, U_LOW), U_HIGH))
    return np.where(upper, -n, n)


def copula_uniform(normals: list[np.ndarray], weights: np.ndarray, u_own: np.ndarray):
    """v of one member from its group's addressed normals (in its row's order) and weights;
    a row of one weight is its own uniform u_own, unchanged."""
    if len(weights) == 1:
        return np.asarray(u_own, dtype=np.float64)
    z = np.zeros(np.shape(u_own))
    for weight, normal in zip(weights, normals):
        z = z + weight * normal
    v = 0.5 * special.erfc(-z / SQRT2)
    return np.minimum(np.maximum(v, U_LOW), U_HIGH)


def sample_correlated(kind: int, param: np.ndarray, chance: float, knots: np.ndarray,
                      v: np.ndarray) -> np.ndarray:
    """A correlated draw from its copula uniform v: ppf(v), a `chance` as a mixture."""
    if chance >= 1.0:
        return ppf(kind, param, knots, v)
    none = 1.0 - chance
    inner = np.minimum(np.maximum((v - none) / chance, U_LOW), U_HIGH)
    return np.where(v <= none, 0.0, ppf(kind, param, knots, inner))
