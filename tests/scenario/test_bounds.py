"""`min` / `max` on a distribution (issue 28, 3a): read into Distribution.bounds for a
lognormal, refused with located problems where they cannot hold (min >= max, min above the
largest value the lognormal draws, max below its smallest, not finite, on a fixed or a
chance), and scenarios/bounded.toml, the example, loads."""
from __future__ import annotations

import math

import pytest

from mcrisk.core.model import Distribution
from mcrisk.scenario import largest_draw, load_scenario

from ..helpers import MINIMAL_TEXT, SCENARIOS, load_text, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")

DELAY = 'delay = { dist = "triangular", min = 0, mode = 3, max = 10 }'
KEY = "x.toml: shipments[0].arrival.delay"


def with_delay(table: str) -> str:
    return variant((DELAY, f"delay = {table}"), text=MINIMAL_TEXT)


def test_a_lognormal_reads_its_bounds():
    cases = {'max = 60': (0.0, 60.0), 'min = 1': (1.0, math.inf),
             'min = 1, max = 60': (1.0, 60.0)}
    for keys, bounds in cases.items():
        s = load_text(with_delay(f'{{ dist = "lognormal", median = 5, p90 = 20, {keys} }}'))
        assert s.shipments[0].arrival.delay == Distribution("lognormal", (5.0, 20.0),
                                                            bounds=bounds)
    s = load_text(with_delay('{ dist = "lognormal", median = 5, p90 = 20 }'))
    assert s.shipments[0].arrival.delay.bounds is None


def test_a_capped_lognormals_largest_draw_is_its_max():
    assert largest_draw(Distribution("lognormal", (5.0, 20.0), bounds=(0.0, 60.0))) == 60.0
    assert largest_draw(Distribution("lognormal", (5.0, 20.0))) > 1000.0


@pytest.mark.parametrize("keys, expected", [
    ("min = 30, max = 20",
     f"{KEY}.max = 20: must be > min (30) (a bounded draw lies in [min, max], min < max; for "
     "a certain value write the number alone)"),
    ("min = 20, max = 20", f"{KEY}.max = 20: must be > min (20)"),
    ("min = 36000", f"{KEY}.min = 36000: is above the largest value this lognormal draws "
                    "(35,952.3, its quantile at 8.2 standard deviations) (lower min, or raise median or p90)"),
    ("max = 0.0005", f"{KEY}.max = 0.0005: is below the smallest value this lognormal draws "
                     "(0.000695365, its"),
    ("max = 0", f"{KEY}.max = 0: must be > 0"),
    ("min = -1", f"{KEY}.min = -1: must be >= 0"),
    ("max = inf", f"{KEY}.max = inf: must be a finite number"),
    ("min = nan", f"{KEY}.min = nan: must be a finite number"),
    ('max = "60"', f"{KEY}.max = '60': must be a number, not a string"),
    ("max = 40000", f"{KEY}.max = 40000: must be <= 36,500"),
])
def test_bad_bounds_are_located(keys, expected):
    found = problems(with_delay(f'{{ dist = "lognormal", median = 5, p90 = 20, {keys} }}'))
    assert len(found) == 1 and found[0].startswith(expected), found


def test_bounds_on_a_fixed_or_a_chance_are_refused_with_a_hint():
    assert problems(with_delay('{ dist = "fixed", value = 5, max = 8 }')) == [
        f"{KEY}.max = 8: a fixed distribution cannot be bounded (a fixed value is its own "
        "bound: remove min and max)"]
    found = problems(with_delay('{ dist = "chance", p = 0.3, max = 8, then = '
                                '{ dist = "lognormal", median = 5, p90 = 20 } }'))
    assert len(found) == 1 and found[0].startswith(
        f"{KEY}.max = 8: a chance distribution cannot be bounded (bound the distribution it "
        "draws: write min and max in `then`")
    s = load_text(with_delay('{ dist = "chance", p = 0.3, then = '
                             '{ dist = "lognormal", median = 5, p90 = 20, max = 8 } }'))
    assert s.shipments[0].arrival.delay.inner.bounds == (0.0, 8.0)


def test_the_bounded_example_loads():
    s = load_scenario(SCENARIOS / "bounded.toml")
    assert s.shipments[0].arrival.delay.bounds == (1.0, 60.0)
    assert s.unit_type("gb300-rack").burn_in.rma_days.bounds == (0.0, 90.0)
