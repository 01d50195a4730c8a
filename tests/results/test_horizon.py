"""The horizon is never cut silently (mcrisk.results.horizon).

Per strategy summary.json gives P(completion beyond H) and the P99 completion day; where that
probability is over 1% the terminal, report.html and summary.md warn and name a horizon (a
multiple of 30 days) that covers the P99 completion.
"""
from __future__ import annotations

import json

import numpy as np
import pytest

from mcrisk.results.horizon import (BEYOND_HORIZON_NOTABLE, beyond_horizon, covering_horizon,
                                     horizon_warnings)
from mcrisk.cli import format_horizon_warnings, main
from mcrisk.core.definitions import METRICS
from mcrisk.app.run import run_scenario

# TINY (tests/conftest.py, horizon 100 days, fixed durations) with the shipment at day 60 plus
# a Uniform(0, 100) delay d. swap-gated: install 2 + one burn-in attempt 5 -> acceptance at
# 67 + d, then each old unit drains (2) and is removed (3): completion 72 + d, beyond day 100
# when d > 28: P = 0.72. swap-on-day: its old units are gone by day 15, completion 67 + d,
# beyond when d > 33: P = 0.67.
LATE = dict(arrival=60, delay='{ dist = "uniform", min = 0, max = 100 }')


def test_beyond_horizon_by_hand():
    # sorted 100 200 600 700: P99 at position 3 x 0.99 = 2.97 -> 600 + 0.97 x 100 = 697
    out = beyond_horizon(np.array([600.0, 100.0, 700.0, 200.0]), 540.0)
    assert out == {"probability": 0.5, "completion_p99": pytest.approx(697.0)}
    # completion exactly at H is covered: the metrics count [0, H)
    assert beyond_horizon(np.array([540.0, 10.0]), 540.0)["probability"] == 0.0


def test_beyond_horizon_counts_nan_as_beyond_and_has_no_infinite_p99():
    out = beyond_horizon(np.array([10.0, np.inf, np.nan, 20.0]), 100.0)
    assert out["probability"] == 0.5 and out["completion_p99"] is None
    json.dumps(out, allow_nan=False)


@pytest.mark.parametrize("p99, horizon, expected", [
    (899.087, 540, 900), (561.99, 540, 570), (600.0, 540, 600), (594.87, 540, 600),
    (540.0, 540, 570),         # P99 at H: the next multiple beyond H
    (530.2, 540, 570),         # a P99 just under H (P just over 1%): still beyond H
    (None, 540, None)])
def test_covering_horizon_rounds_up_to_30_days_beyond_h(p99, horizon, expected):
    assert covering_horizon(p99, horizon) == expected


def _summary(probabilities: dict[str, float], p99: float | None = 899.087) -> dict:
    return {"horizon_days": 540.0, "ranking": list(probabilities),
            "strategies": {name: {"beyond_horizon": {"probability": p, "completion_p99": p99}}
                           for name, p in probabilities.items()}}


def test_warnings_only_above_one_percent_in_ranking_order():
    assert BEYOND_HORIZON_NOTABLE == 0.01
    summary = _summary({"late": 0.9894, "edge": 0.01, "ok": 0.0, "just": 0.0101})
    warnings = horizon_warnings(summary)
    assert len(warnings) == 2
    assert warnings[0] == (
        "late completes after the 540-day horizon in 98.9% of scenarios: its trough days, "
        "shortfall and homeless days count only what happens before day 540, and so does its "
        "rank. Its P99 completion is day 899; a horizon of 900 days would cover it.")
    assert warnings[1].startswith("just completes after the 540-day horizon in 1.0% of")


def test_warning_never_rounds_to_all_and_says_when_no_horizon_covers_p99():
    assert "in over 99.9% of scenarios" in horizon_warnings(_summary({"a": 0.99996}))[0]
    assert "in every scenario" in horizon_warnings(_summary({"a": 1.0}))[0]
    text = horizon_warnings(_summary({"a": 0.5}, p99=None))[0]
    assert "P99 completion day is not a finite number, so no horizon covers it" in text


def test_terminal_warning_lines_escape_invisible_characters():
    lines = format_horizon_warnings(_summary({"a\x1b[31m": 0.5})).splitlines()
    assert len(lines) == 1 and lines[0].startswith("WARNING: a")
    assert "\x1b" not in lines[0]
    assert format_horizon_warnings(_summary({"a": 0.0})) == ""


def test_summary_gives_beyond_horizon_per_strategy(tiny):
    run = run_scenario(str(tiny(**LATE)), samples=2_000, seed=5, backend="numpy")
    summary, metrics = run.summary, run.result.metrics
    completion = METRICS.index("completion_day")
    expected = {"swap-gated": 0.72, "swap-on-day": 0.67}
    for s, name in enumerate(run.plan.strategy_names):
        beyond = summary["strategies"][name]["beyond_horizon"]
        days = metrics[:, s, completion]
        # against the closed form (binomial: 5 standard errors) and the per-scenario values
        assert beyond["probability"] == pytest.approx(expected[name], abs=5 * (0.25 / 2000) ** .5)
        assert beyond["probability"] == np.count_nonzero(days > 100) / 2_000
        assert beyond["completion_p99"] == pytest.approx(np.sort(days)[1979] + 0.01
                                                         * (np.sort(days)[1980] - np.sort(days)[1979]))
    json.dumps(summary, allow_nan=False)


def test_report_and_summary_md_warn_beside_the_ranking():
    from mcrisk.report.html.page import ranking_table
    from mcrisk.report.markdown import ranking_markdown

    summary = _summary({"<late>": 0.5, "ok": 0.0})
    for name in summary["strategies"]:
        summary["strategies"][name].update({m: {"p50": 1.0, "p90": 2.0, "p99": 3.0,
                                                "p90_ci": [1.0, 3.0]} for m in METRICS[:-1]})
        summary["strategies"][name]["power_violation"] = {"probability": 0.0}
    page = ranking_table(summary, {"<late>": "#000", "ok": "#111"})
    warning = ("WARNING: &lt;late&gt; completes after the 540-day horizon in 50.0% of scenarios")
    assert page.count('<div class="warn horizon">') == 1
    assert page.index("</table>") < page.index(warning)
    md = "\n".join(ranking_markdown(summary))
    assert md.count("WARNING") == 1
    assert "WARNING: &lt;late&gt; completes after the 540-day horizon in 50.0% of scenarios" in md
    assert "a horizon of 900 days would cover it" in md


@pytest.mark.slow
def test_a_cut_horizon_is_warned_in_terminal_report_and_summary_md(tiny, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(tiny(**LATE)), "--samples", "300", "--seed", "2", "--backend",
                 "numpy", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    table_end = printed.index("WARNING: ")
    assert printed.index("swap-gated", printed.index("rank")) < table_end  # after the table
    for name in ("swap-gated", "swap-on-day"):
        b = summary["strategies"][name]["beyond_horizon"]
        cover = covering_horizon(b["completion_p99"], 100)
        assert cover > b["completion_p99"] and cover % 30 == 0
        sentence = (f"{name} completes after the 100-day horizon in {b['probability']:.1%} of "
                    "scenarios")
        assert f"WARNING: {sentence}" in printed
        assert f"a horizon of {cover:,} days would cover it" in printed
        page = (out / "report.html").read_text()
        assert f'<div class="warn horizon"><p>WARNING: {sentence}' in page
        assert page.index('id="ranking"') < page.index(sentence) < page.index('id="drivers"')
        # summary.md (short, issue 26): one warning line naming each strategy and its share
        short = " ".join((out / "summary.md").read_text().split())
        assert "Warning: completion passes the 100-day horizon under" in short
        assert f"{name} ({b['probability']:.1%})" in short


def test_no_warning_when_completion_stays_within_the_horizon(tiny, capsys):
    run = run_scenario(str(tiny()), samples=50, seed=1, backend="numpy")
    # fixed durations: swap-on-day's racks are accepted on day 20 + 2 + 5 = 27; swap-gated
    # then drains and removes its old units, done on day 27 + 2 + 3 = 32
    for name, day in (("swap-on-day", 27.0), ("swap-gated", 32.0)):
        assert run.summary["strategies"][name]["beyond_horizon"] == {
            "probability": 0.0, "completion_p99": pytest.approx(day)}
    assert horizon_warnings(run.summary) == []
