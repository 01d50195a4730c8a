"""The report's figures say what the data say: whole scenarios replayed as exact paths, the
1-in-10 line's label off the curves, strategies at one value named instead of hidden, the
completion axis cut with the cut stated, and a power table with headroom
(mcrisk.report.figures.paths and charts, report.html.figures and tables).

Paths are checked against the metrics the kernel computed on its own: a replayed scenario's
lowest capacity is B minus its trough depth, its time below B is its trough days, and so on.
"""
from __future__ import annotations

import re

import matplotlib
import matplotlib.pyplot
import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import METRICS, N_METRICS
from mcrisk.report.figures import charts as figures_module
from mcrisk.report.figures import data
from mcrisk.results.bands import BandCollector, HallPower
from mcrisk.report.findings.sentences import fmt
from mcrisk.report.html.figures import completion_caption, fan_figure, island_figure
from mcrisk.report.html.tables import power_table
from mcrisk.report.figures.paths import (SEVERITY, ReplayMismatch, capacity_paths,
                                 nearest_rank_scenario, representative_paths)
from mcrisk.scenario import load_scenario
from mcrisk.backends.chunks import simulate

from ..helpers import (SVG, completion_chart, exceedance_chart, layout_problems, panel_points,
                      svg_layout_problems, svg_panels, svg_root, svg_texts)


def time_below(path, level: float) -> float:
    """Total length of a capacity path's pieces with value < level."""
    return float(path.width[path.value < level].sum())

M = {name: k for k, name in enumerate(METRICS)}
CPU = select_backend("cpu")


def replayer(plan, seed):
    """What RunResult.replay is for a run of `plan` with `seed` on the Numba backend: the
    six metrics (a plan with costs has its cost columns after them), world and node times."""
    def replay(index):
        metrics, world, nodes = CPU.simulate_chunk(plan, seed, index, 1, keep_nodes=True)
        return metrics[..., :N_METRICS], world, nodes
    return replay
SEED = 3


@pytest.fixture(scope="module")
def reference_run(reference_plan):
    """(plan, metrics[400, s, 6], bands collector) of the reference, seed 3."""
    collector = BandCollector(reference_plan)
    result = simulate(reference_plan, 400, SEED, CPU, chunk_size=128, chunk_hooks=(collector,))
    return reference_plan, result.metrics, collector


# -- picking the scenario ---------------------------------------------------------------------

def test_nearest_rank_picks_the_lowest_index_among_ties():
    values = np.array([5.0, 1.0, 3.0, 3.0, 3.0, 9.0])
    # sorted 1 3 3 3 5 9; nearest rank at q: position ceil(6 q) - 1
    assert nearest_rank_scenario(values, 0.5) == 2       # position 2: a 3; first 3 is index 2
    assert nearest_rank_scenario(values, 0.9) == 5       # position 5: the 9
    assert nearest_rank_scenario(values, 0.1) == 1       # position 0: the 1
    assert nearest_rank_scenario(np.zeros(7), 0.9) == 0


def test_nearest_rank_is_numpys_inverted_cdf_then_the_first_index():
    rng = np.random.default_rng(0)
    for n in (1, 2, 10, 37, 1000):
        values = rng.integers(0, 6, n).astype(float)      # many ties
        for q in (0.5, 0.9, 0.99):
            value = np.quantile(values, q, method="inverted_cdf")
            expected = min(i for i in range(n) if values[i] == value)
            assert nearest_rank_scenario(values, q) == expected


# -- exact paths ------------------------------------------------------------------------------

def test_a_path_is_the_hand_calculated_step_function(tiny):
    # swap-on-day: E1, E2 (128 each) drain at day 10; both racks (180 each) accepted at 27.
    # swap-gated: each E drains as its rack is accepted: both at 27, together (no dip).
    plan = compile_scenario(load_scenario(tiny()))
    _, world, nodes = CPU.simulate_chunk(plan, 1, 0, 1, keep_nodes=True)
    total, largest = capacity_paths(plan, 0, nodes[0, 0], world[0])
    assert total.start.tolist() == [0.0, 10.0, 27.0] and total.end == 100.0
    assert total.value.tolist() == [256.0, 0.0, 360.0]
    assert largest.value.tolist() == [256.0, 0.0, 360.0]   # old island, none, new island
    total, largest = capacity_paths(plan, 1, nodes[0, 1], world[0])
    assert total.start.tolist() == [0.0, 27.0] and total.value.tolist() == [256.0, 360.0]
    x, y = total.xy()
    assert x.tolist() == [0.0, 27.0, 100.0] and y.tolist() == [256.0, 360.0, 360.0]


def shortfall_by_hand(plan, path) -> float:
    """Integral of max(0, D - C) over the path: C constant per piece, D linear between its
    knots; each linear stretch's positive part integrated as a triangle or trapezoid."""
    knots = list(plan.demand_day)
    total = 0.0
    for a, b, c in zip(path.start, np.append(path.start[1:], path.end), path.value):
        cuts = sorted({a, b, *[k for k in knots if a < k < b]})
        for lo, hi in zip(cuts[:-1], cuts[1:]):
            f = [float(np.interp(t, plan.demand_day, plan.demand_value)) - c for t in (lo, hi)]
            if min(f) >= 0:
                total += (f[0] + f[1]) / 2 * (hi - lo)
            elif max(f) > 0:
                total += 0.5 * max(f) * (hi - lo) * max(f) / (max(f) - min(f))
    return total


def check_path_against_metrics(plan, path):
    m = path.metrics
    baseline, job = plan.baseline, plan.largest_job
    lowest = path.total.minimum()
    assert max(0.0, baseline - lowest) == pytest.approx(m["trough_depth"], abs=1e-9 * baseline)
    assert time_below(path.total, baseline * (1 - 1e-9)) == pytest.approx(m["trough_days"],
                                                                       abs=1e-9)
    assert time_below(path.largest, job - 1e-9 * max(job, 1)) == pytest.approx(
        m["homeless_days"], abs=1e-9)
    assert shortfall_by_hand(plan, path.total) == pytest.approx(m["shortfall_gpu_days"],
                                                                rel=1e-9, abs=1e-9)
    assert path.total.start[0] == 0.0 and path.total.end == plan.horizon
    assert (np.diff(path.total.start) > 0).all()


@pytest.mark.parametrize("severity", sorted(set(SEVERITY.values())))
def test_replayed_reference_paths_have_the_metrics_the_kernel_computed(reference_run, severity):
    plan, metrics, _ = reference_run
    paths = representative_paths(plan, replayer(plan, SEED), metrics, severity)
    assert list(paths) == list(plan.strategy_names)
    k = M[severity]
    for s, name in enumerate(plan.strategy_names):
        assert [p.quantile for p in paths[name]] == [0.5, 0.9]
        for path in paths[name]:
            column = metrics[:, s, k]
            value = np.quantile(column, path.quantile, method="inverted_cdf")
            assert path.scenario == int(np.flatnonzero(column == value)[0])
            assert path.metrics == {key: float(v) for key, v in
                                    zip(METRICS, metrics[path.scenario, s])}
            check_path_against_metrics(plan, path)


def test_a_replay_that_is_not_the_runs_scenario_is_refused(reference_run):
    """The report draws a scenario only if the replay it is handed gives the run's metrics:
    a replay with another seed (another world) must not pass for the run's scenario."""
    plan, metrics, _ = reference_run
    with pytest.raises(ReplayMismatch, match="replaying scenario"):
        representative_paths(plan, replayer(plan, SEED + 1), metrics, "shortfall_gpu_days")


def test_paths_reach_below_the_band_the_p50_line_hides(reference_run):
    """The defect this replaces: rolling-on-delivery's per-day P50 stays far above the lowest
    point of the scenario at the P50 of its shortfall."""
    plan, metrics, collector = reference_run
    s = plan.strategy_names.index("rolling-on-delivery")
    path = representative_paths(plan, replayer(plan, SEED), metrics, "shortfall_gpu_days")[
        "rolling-on-delivery"][0]
    assert path.total.minimum() < collector.bands().total[s, :, 1].min() - 100


def test_paths_use_the_drawn_performance_and_the_ramp(tiny):
    path = tiny(delay='{ dist = "uniform", min = 0, max = 20 }',
                attempt='{ dist = "triangular", min = 3, mode = 5, max = 9 }', fail_first=0.3)
    path.write_text(path.read_text().replace(
        "h100_eq_per_gpu = 2.5", 'h100_eq_per_gpu = { dist = "uniform", min = 1, max = 3 }')
        .replace("[[islands]]", "[unit_types.ramp]\nstart_fraction = 0.5\ndays = 20\n"
                 "steps = 4\n\n[[islands]]", 1))
    plan = compile_scenario(load_scenario(path))
    result = simulate(plan, 200, 7, CPU)
    perf = plan.quantity_names.index("unit_type.new.h100_eq_per_gpu")
    for severity in ("shortfall_gpu_days", "trough_days"):
        picked_paths = representative_paths(plan, replayer(plan, 7), result.metrics, severity)
        for name, picked in picked_paths.items():
            for p in picked:
                check_path_against_metrics(plan, p)
                # fully ramped by the horizon in this scenario? then C = 144 GPUs x perf
                world = CPU.simulate_chunk(plan, 7, p.scenario, 1)[1][0]
                if p.metrics["completion_day"] + 20 < plan.horizon:
                    assert p.total.value[-1] == pytest.approx(144 * world[perf], rel=1e-12)


# -- figures ----------------------------------------------------------------------------------

def classed(panel, tag: str, css: str) -> list:
    return [e for e in panel.iter(f"{SVG}{tag}") if (e.get("class") or "").split()[0] == css]


def test_fan_and_island_charts_draw_the_replayed_paths_and_the_bands(reference_run):
    """Read back from the SVG: per strategy the band is the run's P10-P90 of each day, the two
    lines are the replayed scenarios' exact step functions (to a pixel), nothing else."""
    plan, metrics, collector = reference_run
    bands = collector.bands()
    colors = data.strategy_colors(plan.strategy_names)
    for chart, which, band in ((figures_module.fan_chart, "total", bands.total),
                               (figures_module.largest_island_chart, "largest", bands.largest)):
        severity = SEVERITY["fan" if which == "total" else "island"]
        paths = representative_paths(plan, replayer(plan, SEED), metrics, severity)
        root = svg_root(chart(plan, bands, colors, paths))
        panels = svg_panels(root)
        assert len(panels) == len(plan.strategy_names)
        for s, (panel, name) in enumerate(zip(panels, plan.strategy_names)):
            assert panel.get("data-xlim") == f"0.0 {float(plan.horizon)!r}"
            lines = classed(panel, "polyline", "scenario")
            assert len(lines) == 2                         # the two scenarios, nothing else
            for line, path in zip(lines, paths[name]):
                x, y = getattr(path, which).xy()
                px, py, dx, dy = panel_points(panel, line)
                corners_x = np.repeat(x, 2)[1:]
                corners_y = np.repeat(y, 2)[:-1]
                np.testing.assert_allclose(px, corners_x, atol=dx)
                np.testing.assert_allclose(py, corners_y, atol=dy)
            assert lines[0].get("stroke") == colors[name]
            (polygon,) = classed(panel, "polygon", "band")
            bx, by, dx, dy = panel_points(panel, polygon)
            days = len(bands.days)
            upper = by[:2 * days - 1]
            lower = by[2 * days - 1:][::-1]
            np.testing.assert_allclose(upper[::2], band[s, :, 2], atol=dy)
            np.testing.assert_allclose(lower[::2], band[s, :, 0], atol=dy)
            np.testing.assert_allclose(bx[:2 * days - 1:2], bands.days, atol=dx)
        legend = " ".join(svg_texts(root, "legend"))
        words = {"shortfall_gpu_days": "shortfall", "homeless_days": "homeless days"}[severity]
        assert f"scenario at the P50 of {words}" in legend and "P90" in legend
        assert "P10–P90 of each day" in legend
        titles = svg_texts(root, "panel-title")
        assert titles == list(plan.strategy_names)


def test_the_1_in_10_label_is_in_the_legend_not_over_the_curves(reference_run):
    plan, metrics, _ = reference_run
    colors = data.strategy_colors(plan.strategy_names)
    root = svg_root(exceedance_chart(metrics, plan.strategy_names, colors,
                                     (("trough_depth", "depth"), ("trough_days", "days")), "t"))
    for panel in svg_panels(root):
        assert not [t for t in svg_texts(panel) if "1 in 10" in t]
        (level,) = [e for e in panel.iter(f"{SVG}line") if e.get("class") == "level"]
        y_lo, y_hi = map(float, panel.get("data-ylim").split())
        top, height = (float(v) for v in panel.get("data-box").split()[1::2])
        at = y_lo + (top + height - float(level.get("y1"))) / height * (y_hi - y_lo)
        assert abs(at - 0.10) < 0.01                                    # the line stays
        assert svg_texts(panel, "yticks") == ["0%", "20%", "40%", "60%", "80%", "100%"]
    assert any("1 in 10" in t for t in svg_texts(root, "legend"))


def test_strategies_at_one_value_in_every_scenario_are_named_and_dashed(reference_run):
    plan, metrics, _ = reference_run
    names = plan.strategy_names
    colors = data.strategy_colors(names)
    root = svg_root(exceedance_chart(metrics, names, colors, (("trough_depth", "depth"),), "t"))
    (panel,) = svg_panels(root)
    at_zero = [n for s, n in enumerate(names) if (metrics[:, s, M["trough_depth"]] == 0).all()]
    assert at_zero == ["swing-gated", "hybrid-gated"]            # from the metrics themselves
    label = " ".join(svg_texts(panel, "xlabel"))
    assert f"{len(at_zero)} strategies at 0 in every scenario" in label
    assert all(name in label for name in at_zero)
    depth = metrics[:, names.index("big-bang"), M["trough_depth"]]
    assert (depth == plan.baseline).all()              # alone at B = 2,048: named too
    assert "1 strategy at 2,048 in every scenario: big-bang" in label
    # each of them drawn, dashed with a different offset, so that both colours show
    curves = classed(panel, "polyline", "curve")
    assert len(curves) == len(names)
    dashed = [c for c in curves if c.get("stroke-dasharray")]
    assert sorted(c.get("stroke") for c in dashed) == sorted(colors[n] for n in at_zero)
    assert len({c.get("stroke-dashoffset", "0") for c in dashed}) == 2


def synthetic_completion(n=10_000):
    """Two strategies: A completes on days 300..399; B likewise but 5 scenarios on day 5,000
    and, with `never`, one that never completes."""
    metrics = np.zeros((n, 2, len(METRICS)))
    metrics[:, :, M["completion_day"]] = (300 + np.arange(n) % 100)[:, None]
    metrics[:5, 1, M["completion_day"]] = 5000.0
    return metrics


def test_completion_axis_is_cut_at_the_largest_p999_and_the_caption_says_so():
    metrics = synthetic_completion()
    names = ("A", "B")
    axis = data.completion_axis(metrics, names, horizon=540.0)
    # P99.9 by nearest rank: position ceil(10,000 x 0.999) - 1 = 9,989 of the sorted days;
    # B's sorted days: 9,995 values 300..399, then 5 x 5,000: position 9,989 is 399
    assert axis.p999 == {"A": 399.0, "B": 399.0}
    assert axis.widest is None                      # both below the horizon: axis to H
    assert 540.0 < axis.right < 560.0
    assert axis.cut and axis.latest == 5000.0 and axis.latest_strategy == "B"
    assert axis.beyond == {"A": 0.0, "B": 5 / 10_000}
    root = svg_root(completion_chart(metrics, names, {"A": "#000000", "B": "#111111"}, 540.0,
                                     axis))
    (panel,) = svg_panels(root)
    assert float(panel.get("data-xlim").split()[1]) == axis.right
    label = " ".join(svg_texts(panel, "xlabel"))
    assert "axis cut at day" in label and "5,000" in label
    caption = completion_caption(axis)
    assert f"ends at day {fmt(axis.right)}, just past the horizon" in caption
    assert "up to 0.05% of a strategy's scenarios complete later, the latest on day 5,000 (B)" \
        in caption

    metrics[:, 1, M["completion_day"]] += 700          # B: days 1,000..1,099 and 5,700
    axis = data.completion_axis(metrics, names, horizon=540.0)
    assert axis.widest == "B" and axis.p999["B"] == 1099.0
    assert 1099.0 < axis.right < 1099.0 + 0.02 * (1099 - 300) + 1e-9
    assert "just past the largest P99.9 of any strategy (B: day 1,099)" in completion_caption(axis)


def test_completion_axis_without_a_tail_and_with_scenarios_that_never_complete():
    metrics = synthetic_completion()
    metrics[:5, 1, M["completion_day"]] = 350.0
    axis = data.completion_axis(metrics, ("A", "B"), horizon=540.0)
    assert not axis.cut and axis.latest == 399.0
    assert "Every completion lies on the axis (the latest: day 399)" in completion_caption(axis)
    metrics[0, 0, M["completion_day"]] = np.inf
    axis = data.completion_axis(metrics, ("A", "B"), horizon=540.0)
    assert axis.never == {"A": 1, "B": 0}
    assert "Never complete (a burn-in that never passes): A in 1 scenario." in \
        completion_caption(axis)


# -- captions and tables in report.html -------------------------------------------------------

def test_captions_name_each_drawn_scenario_with_its_own_numbers(reference_run):
    plan, metrics, _ = reference_run
    colors = data.strategy_colors(plan.strategy_names)
    paths = {chart: representative_paths(plan, replayer(plan, SEED), metrics, severity)
             for chart, severity in SEVERITY.items()}
    figures = data.Figures({"fan": b"png", "island": b"png"}, paths=paths)
    summary = {"samples": 400}
    fan = fan_figure(figures, summary, plan, colors)
    assert "per-day" not in fan and "percentiles taken day by day, not scenarios" in fan
    assert "P50 (thick, strategy colour)" in fan and "P90 (thin, black) of shortfall" in fan
    assert "The day axis ends at the horizon, day 540, where the metrics stop counting" in fan
    cells = lambda html: re.findall(r"<tr>(.*?)</tr>", html)[1:]          # noqa: E731
    rows = cells(fan)
    assert len(rows) == sum(len({p.scenario for p in v}) for v in paths["fan"].values())
    for name, picked in paths["fan"].items():
        s = plan.strategy_names.index(name)
        for p in picked:
            own = metrics[p.scenario, s]
            expected = (f"<td class='n'>{p.scenario:,}</td>"
                        f"<td class='n'>{fmt(own[M['shortfall_gpu_days']])}</td>"
                        f"<td class='n'>{fmt(own[M['trough_depth']])}</td>"
                        f"<td class='n'>{fmt(plan.baseline - own[M['trough_depth']])}</td>"
                        f"<td class='n'>{fmt(own[M['trough_days']])}</td>")
            assert any(expected in row for row in rows), (name, p.scenario)
    island = island_figure(figures, summary, plan, colors)
    assert "of homeless days" in island
    for name, picked in paths["island"].items():
        if picked[0].scenario == picked[1].scenario:     # equal values: one row, one scenario
            assert "P50 and P90 <span class='ci'>(both lines, on each other)" in island


def test_power_table_merges_equal_statistics_and_shows_headroom(reference_run):
    plan, _, collector = reference_run
    power = collector.hall_power()
    colors = data.strategy_colors(plan.strategy_names)
    html = power_table(power, colors)
    rows = re.findall(r"<tr>(.*?)</tr>", html)[2:]
    by_row = {}
    for row, (name, hall) in zip(rows, [(n, h.hall) for n in power for h in power[n]]):
        by_row[name, hall] = row
    # hall A, cap 3,000 kW: 8 SUs x 326.4 kW until removed; swing-gated installs 2 racks of
    # 135 kW in the empty row A9 first: 2,881.2 kW. Hall B, cap 1,650: 12 racks x 135 = 1,620.
    hand = {("big-bang", "A"): (2611.2, "388.8", "13.0%"),
            ("swing-gated", "A"): (2881.2, "118.8", "4.0%"),
            ("hybrid-gated", "B"): (1620.0, "30.0", "1.8%"),
            ("big-bang", "B"): (0.0, "1,650.0", "100.0%")}
    for (name, hall), (peak, kw, share) in hand.items():
        row = by_row[name, hall]
        assert (f"<td class='n' colspan='3' style='text-align:center'>{peak:,.1f} "
                "<span class='ci'>(in every scenario)</span></td>") in row
        assert f"<td class='n'>{kw}</td><td class='n'>{share}</td>" in row
    assert "headroom" in html


def test_power_cells_differ_where_the_statistics_differ():
    spread = HallPower("H", 100.0, 0.2, peak_p50_kw=90.0, peak_p90_kw=90.0, peak_max_kw=120.0,
                       peak_min_kw=40.0)
    html = power_table({"s": [spread]}, {"s": "#000000"})
    assert ("<td class='n' colspan='2' style='text-align:center'>90.0 "
            "<span class='ci'>(P50 = P90)</span></td><td class='n'>120.0</td>") in html
    assert "<td class='n yes'>-20.0</td><td class='n yes'>-20.0%</td>" in html
    assert "<td class='n yes'>20.00%</td>" in html
    distinct = HallPower("H", 100.0, 0.0, 50.0, 60.0, 70.0, 10.0)
    html = power_table({"s": [distinct]}, {"s": "#000000"})
    assert ("<td class='n'>50.0</td><td class='n'>60.0</td><td class='n'>70.0</td>"
            "<td class='n'>30.0</td><td class='n'>30.0%</td>") in html


# -- layout: computed once, nothing outside the canvas or over a plot -------------------------

@pytest.fixture(scope="module")
def reference_paths(reference_run):
    plan, metrics, _ = reference_run
    return {chart: representative_paths(plan, replayer(plan, SEED), metrics, severity)
            for chart, severity in SEVERITY.items()}


def report_figures(plan, metrics, bands, power, paths, start=None) -> list[str]:
    """The six figures as report_parts makes them (SVG)."""
    names = plan.strategy_names
    colors = data.strategy_colors(names)
    return [figures_module.fan_chart(plan, bands, colors, paths["fan"], start),
            figures_module.largest_island_chart(plan, bands, colors, paths["island"], start),
            exceedance_chart(metrics, names, colors, (
                ("trough_depth", "trough depth (H100-eq below baseline)"),
                ("trough_days", "days below baseline"),
                ("shortfall_gpu_days", "shortfall against demand (H100-eq × days)")), "Trough"),
            completion_chart(metrics, names, colors, plan.horizon, None, start),
            exceedance_chart(metrics, names, colors, (
                ("homeless_days", "days with no island big enough"),), "Homeless time"),
            figures_module.power_chart(power, colors)]


@pytest.mark.browser
@pytest.mark.parametrize("start", [None, "2027-01-04"])
def test_every_text_and_legend_of_the_report_figures_is_inside_and_clear(
        reference_run, reference_paths, start, tmp_path):
    """Both with and without a date axis (which adds a row of labels above every panel),
    measured in a browser with its own fonts."""
    import datetime as dt

    plan, metrics, collector = reference_run
    start = None if start is None else dt.date.fromisoformat(start)
    charts = report_figures(plan, metrics, collector.bands(), collector.hall_power(),
                            reference_paths, start)
    for chart in charts:
        root = svg_root(chart)
        assert root.get("width") == "1200"                 # every figure the column's width
        assert svg_texts(root, "xticks") and svg_texts(root, "title")
        if start is not None and root.get("id") in ("fig-fan", "fig-island", "fig-completion"):
            assert re.fullmatch(r"[A-Z][a-z]{2} 20\d\d", svg_texts(root, "dates")[0])
    problems = svg_layout_problems(charts, tmp_path)
    if problems is None:
        pytest.skip("no headless Chromium here")
    assert problems == []


def test_the_figures_need_no_plotting_library():
    """The figures are text: a run's report imports neither matplotlib nor a worker."""
    import subprocess
    import sys

    code = ("import sys, mcrisk.report, mcrisk.report.figures.charts, "
            "mcrisk.report.figures.costs; print('matplotlib' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.browser
def test_long_names_fold_the_legend_and_long_labels_wrap_inside_the_canvas(tmp_path):
    """Eight strategies with 28-character names do not fit one legend row 1200 pixels wide,
    and the completion label with a date and a cut axis is longer than the axis: the legend
    takes more rows and the label more lines, every word kept, nothing past the canvas."""
    import datetime as dt

    rng = np.random.default_rng(1)
    names = tuple(f"strategy number {i} with $x^2$ <b>" for i in range(8))
    metrics = rng.gamma(2.0, 50.0, (5000, len(names), len(METRICS)))
    metrics[:3, 0, M["completion_day"]] = 9000.0
    colors = data.strategy_colors(names)
    charts = [completion_chart(metrics, names, colors, 200.0, None, dt.date(2027, 1, 4)),
              exceedance_chart(metrics, names, colors,
                               (("trough_depth", "depth " * 30), ("trough_days", "days")), "t")]
    roots = [svg_root(chart) for chart in charts]
    for root in roots:
        legend = svg_texts(root, "legend")
        assert len(legend) >= len(names) + 1 and "strategy number 0 …$x^2$ <b>" in legend
        rows = {e.get("y") for e in root.iter(f"{SVG}text")
                if e.text in legend and e.text.startswith("strategy")}
        assert len(rows) > 1                               # folded into more than one row
    label = svg_texts(svg_panels(roots[0])[0], "xlabel")
    assert len(label) > 1 and "later completions, up to day 9,000, are off the chart" in \
        " ".join(label)
    assert " ".join(svg_texts(svg_panels(roots[1])[0], "xlabel")).split() == ["depth"] * 30
    problems = svg_layout_problems(charts, tmp_path)
    if problems is not None:
        assert problems == []


def test_the_trend_chart_keeps_rotated_night_labels_and_its_legend_inside(monkeypatch):
    """Forty nights (labels at 60 degrees, reaching left of their tick), a scenario change and
    seven strategies with long names."""
    from mcrisk.report.nightly import trend as trend_module

    names = tuple(f"a long strategy name number {i}" for i in range(7))
    nights = []
    for i in range(40):
        stats = {name: {metric: (100.0 * i + s, [90.0 * i, 110.0 * i + s])
                        for metric, _ in trend_module.TREND_METRICS}
                 for s, name in enumerate(names)}
        nights.append(trend_module.TrendNight(f"2026-12-{1 + i % 28:02d}T0315{i:02d}Z",
                                              "a" if i < 20 else "b", stats))
    trend = trend_module.Trend(tuple(nights), ())
    with matplotlib.rc_context(trend_module.LITERAL_TEXT):
        fig = trend_module.trend_figure(trend, names, data.strategy_colors(names))
        try:
            assert layout_problems(fig, monkeypatch) == []
        finally:
            matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("compiled", [False, True])
def test_curve_constants_are_the_first_value_where_every_value_equals_it(monkeypatch, compiled):
    """metric_curves' constant of a column, read off its curve's ends, is what a pass over
    the column says: (column == column[0]).all() gives column[0] (its sign kept), else None."""
    from mcrisk.report.figures import data as figure_data
    from mcrisk.results import quantiles

    monkeypatch.setattr(quantiles, "compiled_from", lambda: 1 if compiled else 10 ** 12)
    n = 3_000
    rng = np.random.default_rng(5)
    columns = {
        "constant": np.full(n, 7.25),
        "zeros of both signs": np.where(rng.random(n) < 0.5, -0.0, 0.0),
        "infinite": np.full(n, np.inf),
        "one other": np.r_[np.full(n - 1, 2.0), 2.0000000000000004],
        "nan": np.r_[np.full(n - 1, 1.0), np.nan],
        "all nan": np.full(n, np.nan),
        "spread": rng.gamma(2.0, 3.0, n),
        "one value": np.array([4.5]),
    }
    table = np.stack(list(columns.values())[:-1], axis=1)               # [scenario, strategy]
    curves = figure_data.metric_curves(table)
    for s, (name, column) in enumerate(list(columns.items())[:-1]):
        expected = float(column[0]) if (column == column[0]).all() else None
        got = curves.constant[s]
        assert got == expected or (got is None and expected is None), name
        if expected is not None:
            assert np.signbit(got) == np.signbit(expected), name
    single = figure_data.metric_curves(columns["one value"][:, None])
    assert single.constant == (4.5,)
