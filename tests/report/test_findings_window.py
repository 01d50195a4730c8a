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


def test_an_earlier_completion_is_stated_with_the_interval_of_its_size():
    """'completes 16.6 days earlier ... (95% CI -17.7 to -15.6)' read as a negative number of
    days earlier: the interval is of the size the sentence states, as elsewhere (_of_size)."""
    from mcrisk.report.findings.sentences import _other

    rng = np.random.default_rng(0)
    n = 400
    done = 300 + rng.normal(0, 5, n)
    values = {("a", "completion_day"): done - 16 + rng.normal(0, 1, n),
              ("b", "completion_day"): done}
    zero = np.zeros(n)

    def col(name, metric):
        return values.get((name, metric), zero)

    text = _other(None, {}, "a", "b", col, n, 2048, 540)
    assert "days earlier than b on average (95% CI 15." in text and "CI -" not in text
