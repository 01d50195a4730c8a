"""Inverse CDFs against scipy.stats: the encoded distributions sample what the file says."""
import numpy as np
import pytest
from scipy import special, stats

from mcrisk.backends.numba import distributions as numba_distributions
from mcrisk.core.distributions import (PERT_TABLE_SIZE, Z90, encode, lognormal_sigma,
                                  pert_alpha_beta, sample)
from mcrisk.core.model import Distribution

U = np.linspace(1e-6, 1 - 1e-6, 2001)


def _encoded(dist):
    tables = []
    kind, params, chance = encode(dist, tables)
    table = np.concatenate(tables) if tables else np.zeros(1)
    return kind, np.array(params), chance, table


def _numpy_and_numba(dist, u1, u2=None):
    kind, params, chance, table = _encoded(dist)
    u2 = u1 if u2 is None else u2
    ours = sample(kind, params, chance, table, u1, u2)
    dist_param = params.reshape(1, 4)
    numba = (np.array([numba_distributions.ppf(kind, dist_param, 0, table, u) for u in u1])
             if chance >= 1 else None)
    return ours, numba


@pytest.mark.parametrize("dist, reference", [
    (Distribution("uniform", (3.0, 9.0)), stats.uniform(3, 6)),
    (Distribution("triangular", (21.0, 35.0, 70.0)), stats.triang(14 / 49, loc=21, scale=49)),
    (Distribution("triangular", (2.0, 2.0, 10.0)), stats.triang(0.0, loc=2, scale=8)),
    (Distribution("triangular", (2.0, 10.0, 10.0)), stats.triang(1.0, loc=2, scale=8)),
    (Distribution("lognormal", (14.0, 45.0)),
     stats.lognorm(lognormal_sigma(14.0, 45.0), scale=14.0)),
])
def test_ppf_matches_scipy(dist, reference):
    ours, numba = _numpy_and_numba(dist, U)
    np.testing.assert_allclose(ours, reference.ppf(U), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(numba, reference.ppf(U), rtol=1e-10, atol=1e-10)


def test_lognormal_by_median_and_p90():
    ref = stats.lognorm(lognormal_sigma(30.0, 60.0), scale=30.0)
    assert ref.median() == pytest.approx(30.0)
    assert ref.ppf(0.9) == pytest.approx(60.0)
    assert Z90 == pytest.approx(1.2815516, abs=1e-7)


def test_pert_table_is_close_to_the_beta_quantile():
    low, mode, high, lam = 2.0, 4.0, 10.0, 4.0
    alpha, beta = pert_alpha_beta(low, mode, high, lam)
    exact = low + (high - low) * stats.beta(alpha, beta).ppf(U)
    ours, numba = _numpy_and_numba(Distribution("pert", (low, mode, high, lam)), U)
    core = (U >= 0.01) & (U <= 0.99)
    assert np.max(np.abs(ours - exact)[core]) < 1e-5 * (high - low)
    assert np.max(np.abs(ours - exact)) < 3e-3 * (high - low)
    np.testing.assert_allclose(numba, ours, rtol=0, atol=1e-12)
    assert PERT_TABLE_SIZE == 4097


@pytest.mark.parametrize("low, mode, high", [(0, 1, 100), (0, 50, 100), (0, 99, 100), (3, 5, 9)])
def test_pert_tails_follow_the_beta_quantile(low, mode, high):
    alpha, beta = pert_alpha_beta(low, mode, high, 4.0)
    u = np.concatenate([np.geomspace(1e-12, 0.01, 400), 1 - np.geomspace(1e-12, 0.01, 400)])
    exact = low + (high - low) * stats.beta(alpha, beta).ppf(u)
    ours, numba = _numpy_and_numba(Distribution("pert", (low, mode, high, 4.0)), u)
    assert np.max(np.abs(ours - exact)) < 3e-3 * (high - low)
    np.testing.assert_allclose(numba, ours, rtol=0, atol=1e-12 * (high - low))


def test_pert_mean_is_the_classic_formula():
    u = (np.arange(200_000) + 0.5) / 200_000
    ours, _ = _numpy_and_numba(Distribution("pert", (3.0, 5.0, 9.0, 4.0)), u)
    assert ours.mean() == pytest.approx((3 + 4 * 5 + 9) / 6, rel=1e-4)


def test_chance_draws_inner_with_probability_p():
    gen = np.random.default_rng(3)
    u1, u2 = gen.random(100_000), gen.random(100_000)
    inner = Distribution("lognormal", (45.0, 120.0))
    ours, _ = _numpy_and_numba(Distribution("chance", (0.35,), inner), u1, u2)
    nonzero = ours > 0
    assert nonzero.mean() == pytest.approx(0.35, abs=0.01)
    ref = stats.lognorm(lognormal_sigma(45.0, 120.0), scale=45.0)
    assert stats.kstest(ours[nonzero], ref.cdf).pvalue > 1e-3


def test_numba_ndtri_matches_scipy():
    p = np.concatenate([np.geomspace(1e-300, 0.02, 500), np.linspace(0.02, 0.98, 2000),
                        1 - np.geomspace(1e-16, 0.02, 500)])
    got = np.array([numba_distributions.ndtri(x) for x in p])
    np.testing.assert_allclose(got, special.ndtri(p), rtol=1e-12, atol=1e-12)
