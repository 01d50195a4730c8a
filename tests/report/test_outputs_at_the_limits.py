"""Every output of a run at the validation limits (issue 24 item 10): as many strategies as a
scenario may have (MAX_STRATEGIES), each name as long as a name may be (MAX_ID_LENGTH), the
names differing only at their ends (as numbered plans do), a currency label as long, a start
date, costs and a mitigated risk: every file is written and every figure is laid out (its
legend and axes inside the canvas, clear of each other), each strategy told apart.

`mcrisk run` crashed at about 25 strategies (ValueError: figure too small for its labels): a
figure kept its height while its legend grew a row for every few strategies.
"""
from __future__ import annotations

import matplotlib
import matplotlib.pyplot
import pytest

from mcrisk.cli import main
from mcrisk.report.figures import charts, costs as cost_charts
from mcrisk.scenario import MAX_ID_LENGTH, MAX_STRATEGIES

from ..helpers import DATA, layout_problems

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


def apart(boxes) -> bool:
    """Whether no two of the boxes (display coordinates) overlap."""
    return not any(a.x0 < b.x1 and b.x0 < a.x1 and a.y0 < b.y1 and b.y0 < a.y1
                   for i, a in enumerate(boxes) for b in boxes[i + 1:])


def strategy_labels(fig) -> list[str]:
    """How a figure names the strategies: its key (the legend with an entry for each), else
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
        tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("MCRISK_FIGURE_WORKER", "0")        # draw here, where they are kept
    kept = []
    save = charts.to_png

    def keep(fig):
        kept.append(fig)
        return save(fig)

    monkeypatch.setattr(charts, "to_png", keep)
    monkeypatch.setattr(cost_charts, "to_png", keep)
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
    try:
        assert len(kept) == 7
        for fig in kept:
            title = fig.texts[0].get_text()
            assert fig.get_size_inches()[0] == 12.0, title         # the page's column
            named = [t for ax in fig.axes for t in ax.texts]   # the Pareto points' names
            for text in named:                                 # lie on their plot: apart
                text.set_visible(False)
            assert layout_problems(fig, monkeypatch) == [], title
            for text in named:
                text.set_visible(True)
            assert apart([t.get_window_extent(fig.canvas.get_renderer()) for t in named])
            assert len(set(strategy_labels(fig))) == MAX_STRATEGIES, title
        power = next(f for f in kept if f.texts[0].get_text().startswith("Power check"))
        render = power.canvas.get_renderer()
        for ax in power.axes:                      # a bar's name clear of its neighbours'
            boxes = [t.get_window_extent(render) for t in ax.get_yticklabels()]
            assert len(boxes) == MAX_STRATEGIES and apart(boxes)
    finally:
        for fig in kept:
            matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("halls, drawn", [(8, 8), (20, 12)])
def test_the_power_chart_draws_many_halls_three_a_row(monkeypatch, halls, drawn):
    """One panel per hall in one row left each less than nothing from about 6 halls on
    (figure too small for its labels); now three a row, at most the 12 halls nearest their
    caps (the report's power table lists every hall)."""
    from mcrisk.report.figures.data import PowerRow, strategy_colors

    names = [longest_name(k) for k in range(MAX_STRATEGIES)]
    power = {name: [PowerRow(f"hall-{h}", 1000.0, 10.0 * h + s, 10.0 * h + s + 5)
                    for h in range(halls)] for s, name in enumerate(names)}
    kept = []
    monkeypatch.setattr(charts, "to_png", lambda fig: kept.append(fig) or b"")
    charts.power_chart(power, strategy_colors(tuple(names)))
    fig = kept[0]
    try:
        shown = [ax for ax in fig.axes if ax.get_visible()]
        assert len(shown) == drawn
        assert len({round(ax.get_position().x0, 3) for ax in shown}) == 3
        assert [ax.get_xlabel().split(":")[0] for ax in shown] == \
            [f"hall hall-{h}" for h in range(halls - drawn, halls)]    # the fullest, in order
        assert layout_problems(fig, monkeypatch) == []
    finally:
        matplotlib.pyplot.close(fig)


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
            assert len(set(strategy_labels(fig))) == MAX_STRATEGIES
        finally:
            matplotlib.pyplot.close(fig)
