"""Rank correlation through a Gaussian copula (issue 28, 3b), held to statistics that can fail:
over 200,000 worlds of tests/data/copula-group.toml drawn by the NumPy reference, each pair's
empirical Spearman correlation lies within four standard errors of the rank its entry asks for
(and a copula fed the ranks as Pearson correlations fails that), each correlated marginal
passes a Kolmogorov-Smirnov test against its own closed-form CDF (scipy.stats, not the code's
inverse CDFs), the first quantity of a group is drawn bit for bit as without correlations,
and a correlated `chance` is an increasing function of its normal score: its occurrence with
a correlated partner above its median matches the bivariate normal's orthant probability.
The Pearson matrix and its Cholesky rows are checked against their definitions."""
from __future__ import annotations

import dataclasses
import math
from functools import cache

import numpy as np
import pytest
from scipy import stats

from mcrisk.backends.numpy.world import sample_worlds
from mcrisk.core.copula import (
    cholesky_rows,
    groups,
    pearson_of_spearman,
    smallest_eigenvalue,
)
from mcrisk.core.distributions import Z90, pert_alpha_beta
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import DATA

N = 200_000
SEED = 2028
GROUP = DATA / "copula-group.toml"
NAMES = ("shared.a", "shared.b", "shared.c", "shared.d", "risk.cdu", "row.R3.retrofit")


@cache
def columns(correlated: bool = True) -> dict[str, np.ndarray]:
    """The correlated quantities of N worlds (NumPy reference), by name; without the
    correlations when `correlated` is False."""
    scenario = load_scenario(GROUP)
    if not correlated:
        scenario = dataclasses.replace(scenario, correlations=())
    plan = compile_scenario(scenario)
    index = [plan.quantity_names.index(n) for n in NAMES]
    world = sample_worlds(plan, SEED, np.arange(N, dtype=np.uint64), only=sorted(index))
    return {n: world[:, q] for n, q in zip(NAMES, index)}


def rank_of(name_a: str, name_b: str) -> float:
    scenario = load_scenario(GROUP)
    return next(c.rank for c in scenario.correlations if set(c.between) == {name_a, name_b})


def lognormal(median: float, p90: float):
    return stats.lognorm(s=math.log(p90 / median) / Z90, scale=median)


MARGINALS = {
    "shared.a": lognormal(10, 30),
    "shared.b": stats.triang(c=5 / 20, loc=0, scale=20),
    "shared.c": stats.beta(*pert_alpha_beta(0, 3, 10, 4.0), loc=0, scale=10),
    "row.R3.retrofit": stats.uniform(loc=7, scale=7),
}


@pytest.mark.parametrize("pair", [("shared.a", "shared.b"), ("shared.b", "shared.c"),
                                  ("shared.a", "shared.c"), ("row.R3.retrofit", "shared.a")])
def test_spearman_is_the_rank_asked_for_within_its_sampling_error(pair):
    """Fisher's z of Spearman's rho has standard error sqrt(1.06 / (n - 3)) (Fieller, Hartley
    and Pearson 1957); four of them is 0.0092 in z, about 0.007 in rho at 0.6. A copula given
    the ranks as Pearson correlations draws rho_S = 6/pi asin(rho / 2): 0.0175 short at 0.6."""
    got = stats.spearmanr(*(columns()[n] for n in pair)).statistic
    target = rank_of(*pair) if "row.R3.retrofit" not in pair else 0.0
    error = math.sqrt(1.06 / (N - 3))
    assert abs(math.atanh(got) - math.atanh(target)) < 4 * error, (pair, got, target)


def test_a_correlated_risk_and_its_partner_correlate_through_the_risks_normal_score():
    """risk.cdu (p = 0.3, first of its group: its own uniform) and row R3's retrofit (rank 0.5):
    the risk occurs when its normal score is in its top 30%, so P(occurs, retrofit above its
    median) is the bivariate normal's orthant probability at ndtri(0.7) and 0, rho = 2 sin(pi
    0.5 / 6); within four binomial standard errors. The old coin (occurs when u1 < p, low
    scores) gives the mirror image, 0.3 - that, and fails."""
    risk, retrofit = columns()["risk.cdu"], columns()["row.R3.retrofit"]
    rho = pearson_of_spearman(0.5)
    z = stats.norm.ppf(0.7)
    below = stats.multivariate_normal(cov=[[1, rho], [rho, 1]]).cdf([z, 0.0])
    expected = 1.0 - 0.7 - 0.5 + below         # P(Z1 > z, Z2 > 0)
    got = np.mean((risk > 0) & (retrofit > 10.5))
    assert abs(got - expected) < 4 * math.sqrt(expected * (1 - expected) / N), (got, expected)
    assert abs(np.mean(risk > 0) - 0.3) < 4 * math.sqrt(0.21 / N)


def test_a_correlated_chance_keeps_its_chance_and_rises_with_its_partner():
    """shared.d (a `chance` p = 0.35 of a lognormal, last of its group): non-zero in 35% of
    worlds, and together with shared.a above its median as the bivariate normal says at
    rank 0.5; its non-zero draws are its inner lognormal (KS)."""
    a, d = columns()["shared.a"], columns()["shared.d"]
    assert abs(np.mean(d > 0) - 0.35) < 4 * math.sqrt(0.35 * 0.65 / N)
    rho = pearson_of_spearman(0.5)
    z = stats.norm.ppf(0.65)
    below = stats.multivariate_normal(cov=[[1, rho], [rho, 1]]).cdf([z, 0.0])
    expected = 1.0 - 0.65 - 0.5 + below
    got = np.mean((d > 0) & (a > 10.0))
    assert abs(got - expected) < 4 * math.sqrt(expected * (1 - expected) / N), (got, expected)
    assert stats.kstest(d[d > 0], lognormal(45, 120).cdf).pvalue > 1e-3


@pytest.mark.parametrize("name", sorted(MARGINALS))
def test_every_marginal_is_unchanged(name):
    """KS against the closed-form CDF at 200,000 draws: a marginal off by 1% in scale fails.
    (The PERT's quantile table is within 1e-5 of its range, far below KS's resolution.)"""
    assert stats.kstest(columns()[name], MARGINALS[name].cdf).pvalue > 1e-3


def test_the_first_of_a_group_draws_as_without_correlations():
    """shared.a leads its group and risk.cdu's partner is second: shared.a is bit for bit its
    uncorrelated draw; risk.cdu (a `chance`, drawn from one uniform when correlated) is not."""
    plain, correlated = columns(False), columns()
    np.testing.assert_array_equal(correlated["shared.a"], plain["shared.a"])
    assert not np.array_equal(correlated["shared.b"], plain["shared.b"])
    assert abs(np.mean(plain["risk.cdu"] > 0) - np.mean(correlated["risk.cdu"] > 0)) < 0.01


def test_groups_and_their_rows_follow_the_definition():
    pairs = [("x", "y", 0.6), ("p", "q", -0.2), ("y", "z", 0.3)]
    assert groups(pairs) == [["x", "y", "z"], ["p", "q"]]
    rows = cholesky_rows(pairs)
    assert rows["x"] == [("x", 1.0)] and rows["p"] == [("p", 1.0)]
    names = ["x", "y", "z"]
    lower = np.zeros((3, 3))
    for i, name in enumerate(names):
        for member, weight in rows[name]:
            lower[i, names.index(member)] = weight
    r_xy, r_yz = (2 * math.sin(math.pi * r / 6) for r in (0.6, 0.3))
    np.testing.assert_allclose(lower @ lower.T, [[1, r_xy, 0], [r_xy, 1, r_yz],
                                                 [0, r_yz, 1]], atol=1e-15)
    assert pearson_of_spearman(0.5) == 2 * math.sin(math.pi / 12)
    # x~y, y~z strongly positive and x~z strongly negative cannot hold together
    assert smallest_eigenvalue([("x", "y", 0.9), ("y", "z", 0.9), ("x", "z", -0.9)]) < 0
