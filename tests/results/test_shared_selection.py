"""The run-wide memory of order statistics and paired differences
(results.quantiles.shared_order_statistics): inside the block, what is read of a column of
the run's arrays is what numpy itself gives (numpy.sort, numpy.quantile, numpy.mean of the
difference), however the ranks are asked and in what order, each column is selected once per
new rank, and nothing is remembered of arrays outside it or after it."""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.results import quantiles, selection
from mcrisk.results.compare import paired_difference
from mcrisk.results.quantiles import (
    linear_quantile,
    order_statistics,
    shared_order_statistics,
)
from mcrisk.results.statistics import quantile_ci_ranks


def _table(n: int = 4_000) -> np.ndarray:
    """values[scenario, strategy, column] whose columns trip a bucketing selection: atoms at
    the ends and inside, infinities, NaN, -0.0 beside 0.0."""
    rng = np.random.default_rng(11)
    smooth = rng.gamma(2.0, 50.0, (n, 3))
    atoms = np.where(rng.random((n, 3)) < 0.6, 0.0, smooth)
    atoms[rng.random((n, 3)) < 0.05] = -0.0
    odd = np.where(rng.random((n, 3)) < 0.3, 17.5, smooth)
    odd[rng.random((n, 3)) < 0.05] = np.inf
    odd[rng.integers(0, n, 5), 2] = np.nan
    return np.ascontiguousarray(np.stack([smooth, atoms, odd], axis=2))


@pytest.fixture
def counted(monkeypatch):
    """Every column compiled (COMPILED_FROM 1), and a count of the selections made."""
    calls = []
    real = selection.select_ranks

    def spy(a, b, ranks, out):
        calls.append((a.size + b.size, ranks.size))
        return real(a, b, ranks, out)

    monkeypatch.setattr(selection, "select_ranks", spy)
    monkeypatch.setattr(quantiles, "compiled_from", lambda: 1)
    return calls


def test_every_column_reads_as_numpy_sort_however_asked(counted):
    table = _table()
    n = table.shape[0]
    asks = [[0, n // 2, n - 1], [n // 2, (9 * n) // 10], list(range(0, n, 97)), [-1, 3, -n]]
    with shared_order_statistics(table, None):
        for s in range(3):
            for k in range(3):
                column = table[:, s, k]
                expected = np.sort(column)
                for ranks in asks:
                    got = order_statistics(column, ranks)
                    np.testing.assert_array_equal(got, expected[ranks])
                    # -0.0 and 0.0 are ties; numpy.sort may give either, and so may the
                    # selection, but the same rank must read the same value every time
                    np.testing.assert_array_equal(np.signbit(got),
                                                  np.signbit(order_statistics(column, ranks)))
        for a, b in ((0, 1), (2, 0)):                          # pooled: two columns as one
            pooled = np.sort(np.concatenate([table[:, a, 1], table[:, b, 1]]))
            for q in (0.5, 0.9, 0.99):
                want = float(np.quantile(np.concatenate([table[:, a, 1], table[:, b, 1]]), q))
                assert linear_quantile(table[:, a, 1], q, table[:, b, 1]) == want
            np.testing.assert_array_equal(
                order_statistics(table[:, a, 1], [0, n, 2 * n - 1], table[:, b, 1]),
                pooled[[0, n, 2 * n - 1]])
    assert table.flags.writeable                       # writable again after the block


def test_a_rank_read_once_is_not_selected_again(counted):
    table = _table()
    n = table.shape[0]
    with shared_order_statistics(table):
        column = table[:, 1, 2]
        assert not column.flags.writeable               # read-only inside the block
        order_statistics(column, [0, n // 2, n - 1])
        assert len(counted) == 1
        order_statistics(column, [n - 1, 0])            # known: no selection
        order_statistics(table[:, 1, 2], [n // 2])      # the same column, another view
        assert len(counted) == 1
        order_statistics(column, [1, n // 2])           # one new rank: selected alone
        assert counted[-1] == (n, 1)
        order_statistics(table[:, 2, 1], [0])           # another column: selected
        assert len(counted) == 3
        copy = table[:, 1, 2].copy()                    # not a column of the table
        order_statistics(copy, [0])
        order_statistics(copy, [0])
        assert len(counted) == 5
    order_statistics(table[:, 1, 2], [0])               # after the block: selected again
    assert len(counted) == 6


def test_paired_difference_is_computed_once_and_handed_out_as_copies(counted):
    table = _table()
    a, b = table[:, 0, 0], table[:, 1, 0]
    diff = a - b
    with shared_order_statistics(table):
        first = paired_difference(table[:, 0, 0], table[:, 1, 0])
        selections = len(counted)
        first["p90_ci"][0] = -1.0                       # a caller's edit stays its own
        first["mean"] = None
        again = paired_difference(table[:, 0, 0], table[:, 1, 0])
        assert len(counted) == selections               # nothing selected again
        other_way = paired_difference(table[:, 1, 0], table[:, 0, 0])
        assert len(counted) > selections                # b - a is another difference
    assert again["mean"] == float(np.mean(diff))
    for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
        assert again[key] == float(np.quantile(diff, q))
        assert other_way[key] == float(np.quantile(-diff, q))
    low, high = quantile_ci_ranks(diff.size, 0.9)
    assert again["p90_ci"] == np.sort(diff)[[low, high]].tolist()
    assert again["p_a_worse"] == float(np.mean(diff > 0))
    assert again == paired_difference(a, b)             # as outside the block
