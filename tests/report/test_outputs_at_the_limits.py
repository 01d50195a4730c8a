"""Every output of a run at the validation limits (issue 24 item 10): as many strategies as a
scenario may have (MAX_STRATEGIES), each name as long as a name may be (MAX_ID_LENGTH), the
names differing only at their ends (as numbered plans do), a currency label as long, a start
date, costs and a mitigated risk: every file is written and every figure is laid out (its
legend and axes inside the canvas, clear of each other), each strategy told apart.

`mcrisk run` crashed at about 25 strategies (ValueError: figure too small for its labels): a
figure kept its height while its legend grew a row for every few strategies.
"""
from __future__ import annotations

import re

import matplotlib
import matplotlib.pyplot
import pytest

from mcrisk.cli import main
from mcrisk.report.figures import charts
from mcrisk.scenario import MAX_ID_LENGTH, MAX_STRATEGIES

from ..helpers import (DATA, SVG, layout_problems, svg_layout_problems, svg_panels, svg_root,
                      svg_texts)

RUN_FILES = ["capacity_bands.parquet", "metrics.parquet", "milestones.csv",
             "milestones.parquet", "ranking.csv", "report.html", "strategies.csv",
             "summary.json", "summary.md"]


def longest_name(k: int) -> str:
    """A name of MAX_ID_LENGTH characters that differs from the others only at its end."""
    number = f"-{k:04d}"
    return ("a-very-long-strategy-name-" * 4)[:MAX_ID_LENGTH - len(number)] + number


def scenario_at_the_limits() -> str:
    """tests/data/costs-small.toml with MAX_STRATEGIES strategies (two plans, with different
    drain days and lags, so that their numbers differ), the longest names and currency, a
    start date and its first risk enabled (the value of mitigation, per risk and strategy)."""
    text = (DATA / "costs-small.toml").read_text()
    text = text[:text.index('# "swap"')]
    for old, new in (("horizon_days = 100", "horizon_days = 100\nstart_date = 2027-01-04"),
                     ('currency = "EUR"', f'currency = "{"CHF-label-" * 10}"'[:-2] + '"'),
                     ("enabled = false\nmitigated = { probability = 0.25",
                      "mitigated = { probability = 0.25")):
        assert old in text
        text = text.replace(old, new, 1)
    for k in range(MAX_STRATEGIES):
        if k % 2:
            plan = (f'place = [{{ units = "N1..N2", row = "B1" }}]\ndrain = [{{ units = '
                    f'"E1..E2", on_accepted = "N1..N2", lag_days = {k % 17} }}]')
        else:
            plan = (f'place = [{{ units = "N1..N2", row = "A1" }}]\n'
                    f'drain = [{{ units = "E1..E2", day = {k % 23} }}]')
        text += f'\n[[strategies]]\nname = "{longest_name(k)}"\n{plan}\n'
    return text


def strategy_labels(root) -> list[str]:
    """How a figure names the strategies: its key (the legend with an entry for each), else
    its panels' titles (a panel per strategy), else its first panel's y labels (a bar per
    strategy)."""
    key = svg_texts(root, "legend")
    if len(key) >= MAX_STRATEGIES:
        return key[:MAX_STRATEGIES]
    titles = svg_texts(root, "panel-title")
    return titles or svg_texts(svg_panels(root)[0], "yticks")


def figure_labels(fig) -> list[str]:
    """How a matplotlib figure (the nightly trend chart) names the strategies: its key (the legend with an entry for each), else
    its panels' titles (a panel per strategy), else its first panel's y labels (a bar per
    strategy)."""
    keys = [[t.get_text() for t in legend.get_texts()] for legend in fig.legends]
    key = next((k for k in keys if len(k) >= MAX_STRATEGIES), None)
    if key is not None:
        return key[:MAX_STRATEGIES]
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    return titles or [t.get_text() for t in fig.axes[0].get_yticklabels()]


@pytest.mark.slow
def test_a_run_with_the_most_strategies_and_longest_names_writes_and_lays_out_everything(
        tmp_path, capsys):
    path, out = tmp_path / "x.toml", tmp_path / "out"
    path.write_text(scenario_at_the_limits())
    names = [longest_name(k) for k in range(MAX_STRATEGIES)]
    assert len(names[0]) == MAX_ID_LENGTH
    assert main(["run", str(path), "--samples", "200", "--out", str(out), "--quiet",
                 "--csv"]) == 0
    terminal = capsys.readouterr().out
    assert sorted(p.name for p in out.iterdir() if p.name[0] != ".") == RUN_FILES
    # the terminal's tables show every name whole (a name cut short could be another's)
    assert all(f" {name} " in terminal for name in names)
    page = (out / "report.html").read_text()
    assert all(name in page for name in names)
    charts_drawn = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert len(charts_drawn) == 7
    for chart in charts_drawn:
        root = svg_root(chart)
        title = svg_texts(root, "title")[0]
        assert root.get("width") == "1200", title                   # the page's column
        assert len(set(strategy_labels(root))) == MAX_STRATEGIES, title
    power = svg_root(next(c for c in charts_drawn if 'id="fig-power"' in c))
    for panel in svg_panels(power):            # a bar's name clear of its neighbours'
        ys = sorted(float(t.get("y")) for t in panel.iter(f"{SVG}text")
                    if t.text in {charts.short_name(n, 24) for n in names})
        assert len(ys) == MAX_STRATEGIES and min(b - a for a, b in zip(ys, ys[1:])) >= 10
    problems = svg_layout_problems(charts_drawn, tmp_path)
    assert problems in (None, [])


@pytest.mark.parametrize("halls, drawn", [(8, 8), (20, 12)])
def test_the_power_chart_draws_many_halls_three_a_row(halls, drawn, tmp_path):
    """One panel per hall in one row left each less than nothing from about 6 halls on
    (figure too small for its labels); now three a row, at most the 12 halls nearest their
    caps (the report's power table lists every hall)."""
    from mcrisk.report.figures.data import PowerRow, strategy_colors

    names = [longest_name(k) for k in range(MAX_STRATEGIES)]
    power = {name: [PowerRow(f"hall-{h}", 1000.0, 10.0 * h + s, 10.0 * h + s + 5)
                    for h in range(halls)] for s, name in enumerate(names)}
    chart = charts.power_chart(power, strategy_colors(tuple(names)))
    shown = svg_panels(svg_root(chart))
    assert len(shown) == drawn
    assert len({p.get("data-box").split()[0] for p in shown}) == 3
    assert [svg_texts(p, "xlabel")[0].split(":")[0] for p in shown] == \
        [f"hall hall-{h}" for h in range(halls - drawn, halls)]    # the fullest, in order
    assert svg_layout_problems([chart], tmp_path) in (None, [])


def test_the_nightly_trend_chart_keys_the_most_strategies(monkeypatch):
    """The nightly's trend chart has a key of every strategy: at MAX_STRATEGIES it was
    taller than the figure (figure too small for its labels)."""
    from mcrisk.report.figures.data import strategy_colors
    from mcrisk.report.nightly import trend as trend_module

    names = tuple(longest_name(k) for k in range(MAX_STRATEGIES))
    nights = tuple(trend_module.TrendNight(
        f"2026-12-{1 + i:02d}T031500Z", "a",
        {name: {metric: (100.0 * i + s, [90.0 * i, 110.0 * i + s])
                for metric, _ in trend_module.TREND_METRICS}
         for s, name in enumerate(names)}) for i in range(5))
    with matplotlib.rc_context(trend_module.LITERAL_TEXT):
        fig = trend_module.trend_figure(trend_module.Trend(nights, ()), names,
                                        strategy_colors(names))
        try:
            assert layout_problems(fig, monkeypatch) == []
            assert len(set(figure_labels(fig))) == MAX_STRATEGIES
        finally:
            matplotlib.pyplot.close(fig)
