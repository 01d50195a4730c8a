"""mcrisk.results.binomial gives scipy.stats' binomial quantiles and exact binomial tests (issue 12:
a run no longer imports scipy.stats, ~0.8 s, for them).

Ranks (ppf, isf and the intervals they make) must be scipy's exactly, on a grid of n from 1 to
10^7 with the edges of p and q. p-values agree to P_VALUE_RTOL: both take Boost's
incomplete beta, which scipy.special and scipy.stats build with different precision policies
(measured at most 4.5e-12 relative on this grid, at n = 10^7; Cephes' bdtr, the obvious other
choice, is 0.3% off there), and below TINY they underflow differently (scipy's cdf says 0 where
ours says 3.5e-289).
"""
from __future__ import annotations

import itertools
import json
import subprocess
import sys

import numpy as np
import pytest
from scipy import stats

from mcrisk.results import binomial
from mcrisk.results.statistics import quantile_ci_ranks

from ..helpers import MINIMAL, ROOT

NS = (1, 2, 3, 5, 6, 10, 35, 36, 37, 100, 367, 368, 1000, 4000, 12345, 20000, 10**5,
      10**6, 10**7)
PS = (0.0, 0.01, 0.025, 0.1, 0.5, 0.9, 0.975, 0.99, 1.0)
QS = (0.0, 1e-12, 0.005, 0.025, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.975, 0.995, 1 - 1e-12, 1.0)
P_VALUE_RTOL = 1e-11
TINY = 1e-280
TIE = 1e-9     # q this close to cdf(k): the rank is decided by the last bit of either's cdf


def _is_tie(q: float, k: int, n: int, p: float, tail) -> bool:
    """Whether q equals tail(k) up to rounding, so that scipy's Boost and ours may each put
    the boundary on its own side (P(B <= 17) = 1/2 exactly for n = 35, p = 1/2; scipy's cdf
    says 0.4999999999999999)."""
    return 0 <= k <= n and abs(tail(k, n, p) - q) <= TIE * max(q, 1e-300)


def test_ppf_and_isf_are_scipys_on_a_grid_including_the_edges():
    ties = 0
    for n, p, q in itertools.product(NS, PS, QS):
        for ours, theirs, tail in ((binomial.ppf, stats.binom.ppf, binomial.cdf),
                                   (binomial.isf, stats.binom.isf, binomial.sf)):
            expected, got = int(theirs(q, n, p)), ours(q, n, p)
            if got != expected and _is_tie(q, min(got, expected), n, p, tail):
                ties += 1
                continue
            assert got == expected, (ours.__name__, n, p, q)
    assert ties <= 3         # (1, 0.9, 0.1), (35, 0.5, 0.5), (12345, 0.5, 0.5): exact ties


def test_quantile_interval_ranks_are_scipys_for_every_n_up_to_2000_and_large_ones():
    def scipy_ranks(n, q, confidence):
        binom = stats.binom(n, q)
        low = int(binom.ppf((1 - confidence) / 2)) - 1
        high = int(binom.isf((1 - confidence) / 2))
        return (low, high) if 0 <= low and high < n else None

    cases = [(n, 0.9, 0.95) for n in range(1, 200)]          # every n around the first, 36
    cases += [(n, q, c) for n in range(1, 2001, 37) for q in (0.5, 0.9, 0.99)
              for c in (0.9, 0.95, 0.99)]
    cases += [(n, q, 0.95) for n in (20_000, 123_457, 10**6, 10**7) for q in (0.5, 0.9, 0.99)]
    for n, q, confidence in cases:
        assert quantile_ci_ranks.__wrapped__(n, q, confidence) == \
            scipy_ranks(n, q, confidence), (n, q, confidence)


def _grid_of_k(n: int, count: int = 25) -> list[int]:
    return sorted({int(k) for k in np.linspace(0, n, count)} | {0, 1, n - 1, n})


def _assert_p_value(got: float, expected: float, where) -> None:
    if expected < TINY:
        assert got < TINY, where
    else:
        assert abs(got - expected) <= P_VALUE_RTOL * expected, (where, got, expected)


def test_cdf_and_sf_are_scipys_including_outside_the_support():
    for n, p in itertools.product(NS, PS):
        for k in [-1, *_grid_of_k(n), n + 1]:
            _assert_p_value(binomial.cdf(k, n, p), stats.binom.cdf(k, n, p), (n, p, k))
            _assert_p_value(binomial.sf(k, n, p), stats.binom.sf(k, n, p), (n, p, k))


def test_one_sided_tests_are_scipys_binomtest():
    for n, p in itertools.product(NS, (0.0, 0.025, 0.1, 0.5, 0.9, 1.0)):
        for k in _grid_of_k(n, 12):
            for ours, alternative in ((binomial.test_less, "less"),
                                      (binomial.test_greater, "greater")):
                expected = stats.binomtest(k, n, p, alternative=alternative).pvalue
                _assert_p_value(ours(k, n, p), expected, (n, p, k, alternative))


def test_two_sided_test_at_one_half_is_scipys_binomtest():
    for n in NS:
        for k in _grid_of_k(n, 40) + [n // 2 - 1, n // 2, (n + 1) // 2, n // 2 + 1]:
            if 0 <= k <= n:
                _assert_p_value(binomial.test_two_sided_half(k, n),
                                stats.binomtest(k, n, 0.5).pvalue, (n, k))


def test_two_sided_test_counts_outcomes_within_scipys_tolerance_as_unlikely():
    # at n = 4e7 the outcome next to k's mirror is within 1e-7 as likely as k, and scipy's
    # binomtest counts it: the p-value of n/2 - 1 is 1, not 1 - P(B = n/2) = 0.99987
    n = 40_000_000
    for k in (n // 2 - 1, n // 2 - 2, n // 2 - 5, n // 2 + 1, n // 2 + 3):
        _assert_p_value(binomial.test_two_sided_half(k, n), stats.binomtest(k, n).pvalue, k)
    assert binomial.test_two_sided_half(n // 2 - 1, n) == 1.0


NO_SCIPY_STATS_RUN = """
import contextlib, io, json, sys
from mcrisk.cli import main
with contextlib.redirect_stdout(io.StringIO()):
    code = main(["run", {scenario!r}, "--samples", "200", "--backend", "numpy", "--quiet",
                 "--out", {out!r}])
print(json.dumps({{"code": code, "scipy.stats": "scipy.stats" in sys.modules}}))
"""


@pytest.mark.slow
def test_a_default_run_with_every_output_does_not_import_scipy_stats(tmp_path):
    probe = NO_SCIPY_STATS_RUN.format(scenario=str(MINIMAL), out=str(tmp_path / "out"))
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen == {"code": 0, "scipy.stats": False}
    assert (tmp_path / "out" / "report.html").is_file()
