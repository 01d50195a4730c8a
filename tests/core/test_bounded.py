"""Bounded distributions (issue 28, 3a): a lognormal written with `min` / `max` is truncated to
[min, max], its uniform mapped into [F(min), F(max)] before the quantile, at the same address.

Checked against an independent calculation: scipy.stats' lognormal, truncated by hand
((F(x) - F(min)) / (F(max) - F(min))): a KS test of draws from the random stream, and the
quantiles at a grid of uniforms; a capped lognormal never exceeds its cap, even at the
random stream's largest uniform; the draw is a monotone function of the same uniform as the
unbounded one (common random numbers); and an unbounded lognormal encodes exactly as before.
"""
from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from mcrisk.backends.numba import distributions as numba_dist
from mcrisk.core import rng
from mcrisk.core.distributions import (KIND_LOGNORMAL, Z90, cdf, encode, ppf, ppf_above,
                                       sample_above)
from mcrisk.core.model import Distribution

TABLES = np.zeros(1)
CASES = [(0.0, 30.0), (20.0, math.inf), (5.0, 40.0), (40.0, 60.0), (0.0, 3.0), (200.0, 400.0)]
U_TOP = 1.0 - 2.0 ** -53          # the random stream's largest uniform
U_BOTTOM = 2.0 ** -53


def bounded(low: float, high: float, median: float = 14.0, p90: float = 45.0):
    kind, param, _ = encode(Distribution("lognormal", (median, p90), bounds=(low, high)), [])
    return kind, np.array(param)


def scipy_truncated(low: float, high: float, median: float = 14.0, p90: float = 45.0):
    """(cdf, ppf) of the lognormal truncated to [low, high], from scipy.stats."""
    law = stats.lognorm(s=(math.log(p90) - math.log(median)) / Z90, scale=median)
    f_low, f_high = law.cdf(low), law.cdf(high) if math.isfinite(high) else 1.0
    return (lambda x: np.clip((law.cdf(x) - f_low) / (f_high - f_low), 0.0, 1.0),
            lambda u: law.ppf(f_low + u * (f_high - f_low)))


def stream_uniforms(n: int) -> np.ndarray:
    u1, _ = rng.uniforms(11, np.arange(n, dtype=np.uint64), rng.address_id("shipment.S1.delay"), 0)
    return u1


@pytest.mark.parametrize("low, high", CASES)
def test_draws_follow_scipys_truncated_lognormal(low, high):
    kind, param = bounded(low, high)
    x = ppf(kind, param, TABLES, stream_uniforms(20_000))
    truncated_cdf, _ = scipy_truncated(low, high)
    assert stats.kstest(x, truncated_cdf).pvalue > 0.01
    assert x.min() >= low and x.max() <= high


@pytest.mark.parametrize("low, high", CASES)
def test_quantiles_inside_the_bounds_are_scipys(low, high):
    kind, param = bounded(low, high)
    u = np.concatenate([[1e-9, 1e-4], np.linspace(0.001, 0.999, 999), [1 - 1e-4]])
    _, truncated_ppf = scipy_truncated(low, high)
    np.testing.assert_allclose(ppf(kind, param, TABLES, u), truncated_ppf(u), rtol=1e-7)
    np.testing.assert_allclose(cdf(kind, param, TABLES, ppf(kind, param, TABLES, u)), u,
                               rtol=1e-9, atol=1e-13)


@pytest.mark.parametrize("high", [3.0, 30.0, 45.0, 1000.0])
def test_a_capped_lognormal_never_exceeds_its_cap(high):
    kind, param = bounded(0.0, high)
    u = np.concatenate([stream_uniforms(100_000), [U_BOTTOM, 0.5, U_TOP]])
    for x in (ppf(kind, param, TABLES, u),
              np.array([numba_dist.ppf(kind, param[None, :], 0, TABLES, v) for v in u[-1000:]])):
        assert x.max() <= high and x.min() > 0.0
    assert ppf(kind, param, TABLES, np.array([U_TOP]))[0] == pytest.approx(high, rel=1e-6)


def test_the_draw_keeps_its_uniform():
    # common random numbers: the bounded draw is an increasing function of the same uniform
    # as the unbounded draw at that address, so both rank the worlds alike
    u = stream_uniforms(5000)
    kind, free = encode(Distribution("lognormal", (14.0, 45.0)), [])[:2]
    plain = ppf(kind, np.array(free), TABLES, u)
    capped = ppf(*bounded(5.0, 40.0), TABLES, u)
    order = np.argsort(plain, kind="stable")
    assert np.all(np.diff(capped[order]) >= 0.0)
    assert stats.spearmanr(plain, capped).statistic == pytest.approx(1.0)


def test_an_unbounded_lognormal_encodes_as_before():
    assert encode(Distribution("lognormal", (14.0, 45.0)), [])[1][2:] == (0.0, 0.0)
    assert bounded(0.0, math.inf)[1][2:].tolist() == [0.0, 0.0]
    assert bounded(5.0, math.inf)[1][2:].tolist() == [5.0, 0.0]


@pytest.mark.parametrize("low, high", CASES)
@pytest.mark.parametrize("bound", [-1.0, 0.0, 10.0, 50.0, 250.0])
def test_a_conditioned_draw_is_truncated_to_both(low, high, bound):
    # Q_ABOVE on a bounded lognormal: u into [F(max(bound, min)), F(max)]
    kind, param = bounded(low, high)
    if bound >= high:
        return                        # impossible: refused by the conditioning
    u = stream_uniforms(20_000)
    x = ppf_above(kind, param, TABLES, bound, u)
    floor = max(low, bound)
    assert x.min() >= floor and x.max() <= high
    truncated_cdf, _ = scipy_truncated(max(floor, 0.0), high)
    assert stats.kstest(x, truncated_cdf).pvalue > 0.01
    numba = [numba_dist.ppf_above(kind, param[None, :], 0, TABLES, bound, v) for v in u[:500]]
    np.testing.assert_allclose(numba, x[:500], rtol=1e-12)
    chance = sample_above(kind, param, 0.3, TABLES, bound, u, u[::-1])
    assert np.all((chance == 0.0) | ((chance >= floor) & (chance <= high))) or bound < 0.0


@pytest.mark.parametrize("low, high", CASES)
def test_numba_draws_the_specification(low, high):
    kind, param = bounded(low, high)
    u = np.concatenate([stream_uniforms(2000), [U_BOTTOM, U_TOP]])
    numba = np.array([numba_dist.ppf(kind, param[None, :], 0, TABLES, v) for v in u])
    np.testing.assert_allclose(numba, ppf(kind, param, TABLES, u), rtol=1e-13)
    numba_cdf = np.array([numba_dist.cdf(kind, param[None, :], 0, TABLES, v) for v in numba])
    np.testing.assert_allclose(numba_cdf, cdf(kind, param, TABLES, numba), rtol=1e-12,
                               atol=1e-15)
    assert kind == KIND_LOGNORMAL
