"""Demand from a forecast ([demand] forecast = {...}, issue 15 part 1): the curve it compiles
to, the draws of its growth shared by every strategy, and the shortfall it gives on every
backend, checked against fixed curves and hand-integrated closed forms."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import METRICS
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE_TEXT, SCENARIOS, problems, variant

SHORTFALL = METRICS.index("shortfall_gpu_days")
GROWTH = "demand.forecast.growth_per_year"


def forecast_scenario(tiny, forecast: str, horizon: int = 100):
    """A TINY scenario whose [demand] is `forecast = {forecast}` over `horizon` days."""
    path = tiny()
    text = path.read_text().replace("points = [[0, 256]]", f"forecast = {forecast}")
    path.write_text(text.replace("horizon_days = 100", f"horizon_days = {horizon}"))
    return path


def run(path, backend, samples=1, seed=1):
    plan = compile_scenario(load_scenario(path))
    metrics, world, _ = backend.simulate_chunk(plan, seed, 0, samples, False)
    return plan, metrics, world


def test_a_certain_forecast_is_the_fixed_curve_of_its_values(tiny, backend):
    # growth 0.4 a year, a point every 30 days to the horizon 100: days 0, 30, 60, 90, 100,
    # values 256 x 1.4^(day / 365) H100-eq; same metrics, bit for bit, as those points.
    forecast = "{ workload_at_day0 = 512, per_h100 = 2, growth_per_year = 0.4, " \
               "points_every_days = 30 }"
    days = [0, 30, 60, 90, 100]
    values = [256.0 * 1.4 ** (day / 365) for day in days]
    fixed = tiny(demand="[" + ", ".join(f"[{d}, {v!r}]" for d, v in zip(days, values)) + "]")
    plan, metrics, _ = run(forecast_scenario(tiny, forecast), backend)
    fixed_plan, fixed_metrics, _ = run(fixed, backend)
    assert plan.demand_day.tolist() == days
    assert plan.demand_value.tolist() == values
    assert plan.demand_growth_q.tolist() == [-1] * 5
    assert GROWTH not in plan.quantity_names
    np.testing.assert_array_equal(metrics, fixed_metrics)
    assert fixed_plan.demand_growth_q.tolist() == [-1] * 5


def test_an_uncertain_forecast_is_in_each_scenario_the_curve_of_its_draw(tiny, backend):
    # Each scenario's shortfall is that of the fixed curve 256 x (1 + g)^(day / 365) for its
    # drawn g (libm's pow, as Python's **), in every strategy: bit for bit on the CPU backends
    # and the host build of the CUDA sources.
    forecast = "{ workload_at_day0 = 256, growth_per_year = { dist = \"uniform\", " \
               "min = 0.1, max = 0.9 }, points_every_days = 45 }"
    plan, metrics, world = run(forecast_scenario(tiny, forecast), backend, samples=3)
    g = world[:, plan.quantity_names.index(GROWTH)]
    assert len(set(g)) == 3 and all(0.1 <= x <= 0.9 for x in g)
    assert plan.demand_day.tolist() == [0, 45, 90, 100]
    for i, draw in enumerate(g.tolist()):
        points = ", ".join(f"[{d}, {256.0 * (1.0 + draw) ** (d / 365)!r}]"
                           for d in (0, 45, 90, 100))
        _, fixed, _ = run(tiny(demand=f"[{points}]"), backend)
        if backend.name == "cuda":  # the device's pow is within 2 ulp of libm's, not equal
            np.testing.assert_allclose(metrics[i, :, SHORTFALL], fixed[0, :, SHORTFALL],
                                       rtol=1e-12)
        else:
            np.testing.assert_array_equal(metrics[i, :, SHORTFALL], fixed[0, :, SHORTFALL])


def test_mean_shortfall_matches_the_integral_by_hand(tiny, backend):
    # Horizon 365 and one segment: D(t) = 360 (1 + g t / 365), linear in t. swap-gated has
    # capacity 256 on [0, 27) and 360 from then (tests/backends/test_closed_forms.py), so
    # shortfall = 104 x 27 + 360 g 365 / 2 (the 360 g t / 365 part integrates over all of
    # [0, 365]); with g ~ U(0.2, 0.6) the mean is 2808 + 360 x 182.5 x 0.4.
    forecast = "{ workload_at_day0 = 360, growth_per_year = { dist = \"uniform\", " \
               "min = 0.2, max = 0.6 }, points_every_days = 365 }"
    samples = 2000 if backend.name != "numpy" else 400
    plan, metrics, world = run(forecast_scenario(tiny, forecast, horizon=365), backend,
                               samples=samples)
    g = world[:, plan.quantity_names.index(GROWTH)]
    shortfall = metrics[:, plan.strategy_names.index("swap-gated"), SHORTFALL]
    np.testing.assert_allclose(shortfall, 104 * 27 + 360 * g * 365 / 2, rtol=1e-12)
    mean = 2808 + 360 * 182.5 * 0.4
    sd = 360 * 182.5 * 0.4 / math.sqrt(12)
    assert abs(shortfall.mean() - mean) < 4 * sd / math.sqrt(samples)


def test_the_reference_keeps_its_fixed_curve():
    plan = compile_scenario(load_scenario(SCENARIOS / "reference-2048.toml"))
    assert (plan.demand_growth_q == -1).all()
    assert not any(name.startswith("demand.") for name in plan.quantity_names)


_POINTS = "points = [[0, 2048], [150, 2048], [360, 2816]]"


def _demand_variant(new: str) -> str:
    assert _POINTS in REFERENCE_TEXT
    return variant((_POINTS, new))


def test_forecast_errors_are_located(in_tmp):
    both = _demand_variant(_POINTS + "\nforecast = { workload_at_day0 = 1, "
                           "growth_per_year = 0.1 }")
    assert problems(both) == [
        "x.toml: demand.points = [[0, 2048], [150, 2048], [360, 2816]]: given with demand.forecast "
        "(give either points (a fixed curve) or forecast, not both)"]
    missing = problems(_demand_variant("forecast = { growth_per_year = 0.1 }"))
    assert len(missing) == 1 and missing[0].startswith(
        "x.toml: demand.forecast.workload_at_day0: missing")
    negative = problems(_demand_variant(
        "forecast = { workload_at_day0 = 2048, growth_per_year = -0.1 }"))
    assert len(negative) == 1 and negative[0].startswith(
        "x.toml: demand.forecast.growth_per_year = -0.1:")
    zero = problems(_demand_variant(
        "forecast = { workload_at_day0 = 2048, per_h100 = 0, growth_per_year = 0.1 }"))
    assert len(zero) == 1 and zero[0].startswith("x.toml: demand.forecast.per_h100 = 0:")
    unknown = problems(_demand_variant(
        "forecast = { workload_at_day0 = 2048, growth = 0.1, growth_per_year = 0.1 }"))
    assert len(unknown) == 1 and unknown[0].startswith(
        "x.toml: demand.forecast.growth = 0.1: unknown key")


@pytest.mark.parametrize("growth, median", [
    ('{ dist = "uniform", min = 0.2, max = 0.6 }', 0.4),
    ('{ dist = "triangular", min = 0.0, mode = 1.0, max = 1.0 }', math.sqrt(0.5)),
    # with probability 0.8 a uniform draw on [0, 1]: P(G <= x) = 0.2 + 0.8 x = 1/2 at 0.375
    ('{ dist = "chance", p = 0.8, then = { dist = "uniform", min = 0, max = 1 } }', 0.375),
    ('{ dist = "chance", p = 0.4, then = { dist = "uniform", min = 0, max = 1 } }', 0.0),
])
def test_the_report_draws_the_median_demand_and_says_so(tiny, growth, median):
    # D(day) rises with g, so its median is the curve at g's median; the chart's line is that
    # curve and is labelled P50. A fixed curve keeps its values and the plain label.
    from mcrisk.core.definitions import demand_at, demand_label
    forecast = f"{{ workload_at_day0 = 100, growth_per_year = {growth}, points_every_days = 50 }}"
    plan = compile_scenario(load_scenario(forecast_scenario(tiny, forecast)))
    expected = [100.0 * (1.0 + median) ** (day / 365) for day in (0, 50, 100)]
    np.testing.assert_allclose(plan.demand_p50, expected, rtol=1e-12)
    assert plan.demand_value.tolist() == [100.0] * 3
    assert demand_at(plan, 25.0) == pytest.approx((expected[0] + expected[1]) / 2, rel=1e-12)
    assert demand_label(plan) == "demand (P50)"
    fixed = compile_scenario(load_scenario(tiny(demand="[[0, 256], [50, 300]]")))
    assert fixed.demand_p50.tolist() == [256.0, 300.0] and demand_label(fixed) == "demand"


def test_the_growth_draw_is_a_column_of_metrics_parquet(tiny):
    # the planner slices shortfall by the drawn growth: it is kept as an input column
    from mcrisk.report.tables import input_quantities
    forecast = '{ workload_at_day0 = 256, growth_per_year = { dist = "uniform", min = 0.1, ' \
               'max = 0.9 } }'
    plan = compile_scenario(load_scenario(forecast_scenario(tiny, forecast)))
    kept = [plan.quantity_names[q] for q in input_quantities(plan)]
    assert GROWTH in kept


def test_the_growth_draw_reads_as_words_among_drivers():
    from mcrisk.results.drivers import _label
    from mcrisk.core.quantities import QuantityLabel
    assert _label(QuantityLabel("demand", "forecast", "growth_per_year")) == \
        "demand growth per year"


def test_parity_scales_the_shortfall_by_the_grown_peak_not_the_base(tiny):
    # tests/parity.py's tolerance for the shortfall is relative to horizon x peak demand; for
    # a forecast the peak is the base grown by the largest drawn g, not the day-0 base.
    from ..parity import metric_scales, peak_demand
    forecast = "{ workload_at_day0 = 256, growth_per_year = { dist = \"uniform\", " \
               "min = 0.1, max = 0.9 }, points_every_days = 45 }"
    plan = compile_scenario(load_scenario(forecast_scenario(tiny, forecast)))
    q = plan.quantity_names.index(GROWTH)
    world = np.zeros((2, plan.n_quantities))
    world[:, q] = [0.5, 0.8]
    assert peak_demand(plan) == 256.0
    assert peak_demand(plan, world) == pytest.approx(256.0 * 1.8 ** (100 / 365))
    shortfall = metric_scales(plan, world)[SHORTFALL]
    assert shortfall == pytest.approx(100 * max(plan.baseline, 256.0 * 1.8 ** (100 / 365)))
