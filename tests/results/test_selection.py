"""Order statistics without a sort (results.selection, results.quantiles) against their
specification, numpy itself: numpy.sort(values)[ranks], numpy.quantile's 'linear' and
'inverted_cdf' methods, on columns built to trip a bucketing selection (atoms at both ends
and inside, infinities, NaN, a range too wide or too narrow to scale, pooled pairs)."""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.results import quantiles, selection
from mcrisk.results.quantiles import (
    inverted_cdf_quantiles,
    linear_quantile,
    order_statistics,
)


def _columns() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    n = 5_000
    smooth = rng.gamma(2.0, 50.0, n)
    atoms = np.where(rng.random(n) < 0.6, 0.0, smooth)
    atoms[rng.random(n) < 0.1] = smooth.max()                         # an atom at the top
    inner = np.where(rng.random(n) < 0.5, 1012.44928, rng.uniform(0, 2048, n))
    steps = np.round(smooth)                                           # integers: many ties
    infinite = np.where(rng.random(n) < 0.1, np.inf, smooth)
    infinite[rng.random(n) < 0.05] = -np.inf
    nan = smooth.copy()
    nan[rng.integers(0, n, 30)] = np.nan
    wide = np.concatenate([rng.normal(0, 1, n - 2), [-1.7e308, 1.7e308]])   # hi - lo: inf
    narrow = 1e-310 * rng.integers(1, 4, n)                            # subnormal range
    heavy = rng.pareto(0.5, n)                                         # most in one bucket
    return {"smooth": smooth, "atoms": atoms, "inner atom": inner, "steps": steps,
            "infinite": infinite, "nan": nan, "wide": wide, "narrow": narrow,
            "heavy": heavy, "constant": np.full(n, 3.25), "one": np.array([2.5])}


COLUMNS = _columns()


def _all_ranks(n: int) -> np.ndarray:
    rng = np.random.default_rng(n)
    picked = {0, n - 1, n // 2, (9 * n) // 10} | set(rng.integers(0, n, 40).tolist())
    return np.array(sorted(picked), dtype=np.int64)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_select_ranks_reads_the_sorted_column(name):
    values = COLUMNS[name]
    ranks = _all_ranks(values.size)
    out = np.empty(ranks.size)
    selection.select_ranks(values, np.empty(0), ranks, out)
    np.testing.assert_array_equal(out, np.sort(values)[ranks])
    every = np.arange(values.size, dtype=np.int64)                     # every rank at once
    out = np.empty(values.size)
    selection.select_ranks(values, np.empty(0), every, out)
    np.testing.assert_array_equal(out, np.sort(values))


@pytest.mark.parametrize("name", ["smooth", "atoms", "nan", "infinite"])
def test_select_ranks_reads_two_arrays_as_one(name):
    x = COLUMNS[name]
    y = COLUMNS["steps"][::-1][:3_000]
    ranks = _all_ranks(x.size + y.size)
    out = np.empty(ranks.size)
    selection.select_ranks(x, y, ranks, out)
    np.testing.assert_array_equal(out, np.sort(np.concatenate([x, y]))[ranks])


@pytest.fixture(params=["sorted", "compiled"])
def path(request, monkeypatch):
    """order_statistics' two ways: the sort (small columns) and the compiled selection,
    with a spy that says whether the selection ran."""
    calls = []
    real = selection.select_ranks

    def spy(*args):
        calls.append(args[0].size)
        return real(*args)

    monkeypatch.setattr(selection, "select_ranks", spy)
    threshold = 1 if request.param == "compiled" else 10 ** 12
    monkeypatch.setattr(quantiles, "compiled_from", lambda: threshold)
    yield request.param
    assert bool(calls) == (request.param == "compiled")       # the fast path really ran


@pytest.mark.parametrize("name", list(COLUMNS))
def test_order_statistics_is_numpy_sort(path, name):
    values = COLUMNS[name]
    ranks = _all_ranks(values.size)
    np.testing.assert_array_equal(order_statistics(values, ranks), np.sort(values)[ranks])
    strided = np.stack([values, -values], axis=1)[:, 0]                 # a column of a table
    np.testing.assert_array_equal(order_statistics(strided, ranks), np.sort(values)[ranks])


def test_order_statistics_with_overwrite_leaves_no_wrong_answer(path):
    values = COLUMNS["atoms"].copy()
    ranks = _all_ranks(values.size)
    assert np.array_equal(order_statistics(values, ranks, overwrite=True),
                          np.sort(COLUMNS["atoms"])[ranks])


@pytest.mark.parametrize("name", list(COLUMNS))
def test_linear_quantile_is_numpy_quantile_to_the_bit(path, name):
    values = COLUMNS[name]
    with np.errstate(invalid="ignore", over="ignore"):
        for q in (0.0, 0.1, 0.5, 0.9, 0.99, 0.999, 1.0):
            expected = float(np.quantile(values, q))
            got = linear_quantile(values, q)
            assert got == expected or (np.isnan(got) and np.isnan(expected)), (q, got, expected)
            other = COLUMNS["steps"][:777]
            pooled = float(np.quantile(np.concatenate([values, other]), q))
            got = linear_quantile(values, q, other=other)
            assert got == pooled or (np.isnan(got) and np.isnan(pooled)), (q, got, pooled)


@pytest.mark.parametrize("name", list(COLUMNS))
def test_inverted_cdf_quantiles_are_numpy_quantile(path, name):
    values = COLUMNS[name]
    levels = np.linspace(0.0, 1.0, 401)                 # the report's curves
    for n in (values.size, max(1, values.size - 1), max(1, values.size // 7)):
        part = values[:n]
        np.testing.assert_array_equal(inverted_cdf_quantiles(part, levels),
                                      np.quantile(part, levels, method="inverted_cdf"))
        assert (float(inverted_cdf_quantiles(part, 0.999))
                == float(np.quantile(part, 0.999, method="inverted_cdf"))
                or np.isnan(part).any())


def _orderings() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(11)
    n = 4_000
    signed_zeros = np.where(rng.random(n) < 0.5, -0.0, 0.0)
    signed_zeros[rng.random(n) < 0.2] = 1.5
    return {**COLUMNS, "signed zeros": signed_zeros,
            "flags": (rng.random(n) < 0.1) * 1.0,
            "negative": -COLUMNS["smooth"][:n],
            "nan payloads": np.where(rng.random(n) < 0.1, -np.nan, rng.normal(size=n))}


ORDERINGS = _orderings()


@pytest.mark.parametrize("name", list(ORDERINGS))
def test_stable_argsort_is_numpys_stable_argsort(name):
    values = ORDERINGS[name]
    order = np.empty(values.size, np.int64)
    selection.stable_argsort(values, order)
    np.testing.assert_array_equal(order, np.argsort(values, kind="stable"))


@pytest.mark.parametrize("name", list(ORDERINGS))
def test_compiled_average_ranks_are_scipys_rankdata(name):
    from scipy import stats

    from mcrisk.results import drivers

    values = ORDERINGS[name]
    expected = stats.rankdata(values)          # scipy: all NaN where a value is NaN
    if np.isnan(values).any():
        expected = np.full(values.size, np.nan)
    for order in (np.argsort(values), np.argsort(values, kind="stable")):
        ranks = np.empty(values.size)
        selection.average_ranks(values, order, ranks)
        np.testing.assert_array_equal(ranks, expected)
    np.testing.assert_array_equal(drivers.average_ranks(values, np.argsort(values)), expected)


def test_drivers_are_the_same_through_the_compiled_loops(monkeypatch, reference_plan):
    """drivers_summary with every column ranked by the compiled loops (results.selection)
    equals the NumPy specification's, and the loops really ran."""
    from mcrisk.backends.numpy.driver import simulate_chunk
    from mcrisk.results import drivers

    metrics, world = simulate_chunk(reference_plan, 3, 0, 600)[:2]
    monkeypatch.setattr(drivers, "compiled_from", lambda: 10 ** 12)
    expected = drivers.drivers_summary(reference_plan, metrics, world)
    calls = []
    real = selection.stable_argsort
    monkeypatch.setattr(selection, "stable_argsort", lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(drivers, "compiled_from", lambda: 1)
    assert drivers.drivers_summary(reference_plan, metrics, world) == expected
    assert calls


@pytest.mark.parametrize("name", ["smooth", "atoms", "inner atom", "nan", "infinite"])
def test_compiled_crossings_are_the_numpy_counts(monkeypatch, name):
    from mcrisk.results import paired

    x = COLUMNS[name]
    y = np.roll(COLUMNS["steps"], 3)[:x.size]
    y[::7] = x[::7]                                          # ties across the pair
    strided = np.stack([x, y], axis=1)                       # columns of a table
    for q in (0.0, float(np.median(x[np.isfinite(x)])), 1012.44928, np.inf, np.nan):
        monkeypatch.setattr(paired, "compiled_from", lambda: 10 ** 12)
        expected = paired.crossings(x, y, q)
        brute = tuple((sum(1 for a, b in zip(x, y) if not above(a) and above(b)),
                       sum(1 for a, b in zip(x, y) if above(a) and not above(b)))
                      for above in (lambda v, q=q: v > q, lambda v, q=q: v >= q))
        assert expected == brute
        monkeypatch.setattr(paired, "compiled_from", lambda: 1)
        assert paired.crossings(x, y, q) == expected
        assert paired.crossings(strided[:, 0], strided[:, 1], q) == expected


def test_order_statistics_takes_ranks_in_any_order_as_numpy_does(path):
    values = COLUMNS["smooth"]
    ranks = np.array([[17, -1, 3], [3, 4_999, 0]])
    np.testing.assert_array_equal(order_statistics(values, ranks), np.sort(values)[ranks])
    with pytest.raises(IndexError):
        order_statistics(values, [values.size])
