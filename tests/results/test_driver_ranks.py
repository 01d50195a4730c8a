"""The drivers' column ranks by the compiled loops equal scipy's average ranks, also for the
short columns (fewer than COMPILED_FROM values) that a plan with thousands of inputs sends
them; and many columns ranked side by side equal one by one."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from mcrisk.results.drivers import centred_ranks, column_ranks


@pytest.mark.parametrize("kind", ["continuous", "ties", "nan"])
def test_compiled_column_ranks_are_scipys_average_ranks(kind):
    rng = np.random.default_rng(11)
    values = {"continuous": rng.normal(size=3_000),
              "ties": rng.integers(1, 4, size=3_000).astype(float),
              "nan": np.where(rng.random(3_000) < 0.01, np.nan, rng.normal(size=3_000))}[kind]
    expected = rankdata(values) if kind != "nan" else np.full(values.size, np.nan)
    np.testing.assert_array_equal(column_ranks(values, compiled=True), expected)
    np.testing.assert_array_equal(column_ranks(values, compiled=False), expected)


def test_many_columns_side_by_side_equal_one_by_one():
    rng = np.random.default_rng(12)
    values = np.column_stack([rng.normal(size=(500, 40)),
                              rng.integers(0, 3, size=(500, 40)).astype(float)])
    ranks = centred_ranks(values)
    for j in range(values.shape[1]):
        column = rankdata(values[:, j])
        np.testing.assert_array_equal(ranks[:, j], column - column.mean())
