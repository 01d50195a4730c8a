"""The findings' trough sentence with a status says which days it is about: the trough counts
[as_of, horizon), so 'within the 540-day horizon' (days 0 to 540) would misstate it."""
from __future__ import annotations

import numpy as np

from mcrisk.report.findings.sentences import _dips, since


def column(depth, days):
    values = {"trough_depth": np.asarray(depth, float), "trough_days": np.asarray(days, float)}
    return lambda name, metric: values[metric]


def test_the_window_starts_at_the_status_as_of_and_at_day_0_without_one():
    assert since({}) == 0.0
    assert since({"status": {"as_of": 150.0, "window_days": [150.0, 540.0]}}) == 150.0


def test_with_a_status_the_trough_sentence_names_the_status_date():
    text = _dips(column([0, 0], [0, 0]), "a", 2, 2048, 540, first=150.0)
    assert text == ("never dips below the 2,048 H100-eq baseline between the status date, day "
                    "150, and the 540-day horizon in any of the 2 sampled scenarios.")


def test_without_a_status_the_sentence_is_as_before():
    text = _dips(column([0, 0], [0, 0]), "a", 2, 2048, 540)
    assert text == ("never dips below the 2,048 H100-eq baseline within the 540-day horizon in "
                    "any of the 2 sampled scenarios.")
