"""report.html's cost section and the cost findings (mcrisk.report.html.costs,
report.figures.costs, report.findings.costs) on runs built by hand, where every number is
known: money in the table against NumPy on the raw arrays, the dominated strategy named with
its dominator, and the findings' claims only beyond noise (a paired median of completion, not
P50 minus P50; the horizon cut said). Without costs: no section, no findings, the page
unchanged."""
from __future__ import annotations

import math
from types import SimpleNamespace

import numpy as np
import pytest

from mcrisk.results.statistics import metric_summary
from mcrisk.results.compare import money_text
from mcrisk.core.definitions import COST, COSTS, METRICS, N_COSTS, N_METRICS
from mcrisk.report import _cost_parts
from mcrisk.report.figures.costs import pareto_of

from ..helpers import SVG, svg_panels, svg_root, svg_texts
from mcrisk.report.findings.costs import (completion_clause, cost_clause, cost_findings,
                                         depth_ties, pairs_that_matter)
from mcrisk.report.html.costs import (component_table, cost_report, cost_section, cost_table,
                                 pareto_table)
from mcrisk.report.figures.data import Figures, pareto_data, strategy_colors

N = 4000
H = 540.0


def fake_run(depth, completion, costs_by_component, names, ranking=None, currency="USD"):
    """A RunResult-like object: metrics [N, s, 6] with the given trough depth and completion
    (shortfall = depth x 10), costs [N, s, 9] from {column: [per-strategy arrays]} with
    cost_total their sum, and the summary the report reads (the metrics' own summaries)."""
    s = len(names)
    metrics = np.zeros((N, s, N_METRICS))
    costs = np.zeros((N, s, N_COSTS))
    for k in range(s):
        metrics[:, k, METRICS.index("trough_depth")] = depth[k]
        metrics[:, k, METRICS.index("shortfall_gpu_days")] = np.asarray(depth[k]) * 10.0
        metrics[:, k, METRICS.index("completion_day")] = completion[k]
        for column, values in costs_by_component.items():
            costs[:, k, COST[column]] = values[k]
        costs[:, k, 0] = costs[:, k, 1:].sum(axis=1)
    strategies = {name: {"trough_depth": metric_summary(metrics[:, k, 0]),
                         "shortfall_gpu_days": metric_summary(metrics[:, k, 2]),
                         "costs": {c: metric_summary(costs[:, k, j]) for j, c in enumerate(COSTS)}}
                  for k, name in enumerate(names)}
    summary = {"ranking": list(ranking or names), "strategies": strategies,
               "costs": {"currency": currency, "window_days": [0.0, H]}}
    return SimpleNamespace(plan=SimpleNamespace(strategy_names=tuple(names), horizon=H),
                           result=SimpleNamespace(metrics=metrics, costs=costs),
                           summary=summary)


def trade_run():
    """'gated' has no trough, costs $2M more (plus noise) and completes 100 days earlier in
    every world; 'rush' has a trough of 2048 in every world; 'waste' is as deep as rush and
    dearer than gated: dominated by both."""
    rng = np.random.default_rng(4)
    base = rng.uniform(4e6, 6e6, N)
    done = rng.uniform(300, 400, N)
    return fake_run(
        depth=[np.zeros(N), np.full(N, 2048.0), np.full(N, 2048.0)],
        completion=[done, done + 100.0, done + 50.0],
        costs_by_component={"cost_power_reserved": [base + 2e6 + rng.normal(0, 1e5, N), base,
                                                    base + 3e6],
                            "cost_energy": [np.full(N, 1e5)] * 3},
        names=("gated", "rush", "waste"), ranking=("gated", "rush", "waste"))


def test_no_costs_no_section_no_findings_no_chart():
    run = trade_run()
    run.result.costs = None
    pictures = Figures({})
    assert cost_report(run) is None
    drawn = {}
    assert _cost_parts(run, drawn, strategy_colors(run.plan.strategy_names)) == (None, [])
    assert drawn == {}
    assert cost_section(run, pictures, {}) == []
    assert cost_findings(run, None) == []


def test_cost_table_money_against_numpy_beside_trough_with_intervals():
    run = trade_run()
    report = cost_report(run)
    html = cost_table(run.summary, report, strategy_colors(run.plan.strategy_names))
    total = run.result.costs[:, :, 0]
    for k in range(3):
        mean, half = total[:, k].mean(), 1.959963984540054 * total[:, k].std(ddof=1) / math.sqrt(N)
        assert (f"<b>{money_text(mean)}</b><br><span class='ci'>[{money_text(mean - half)}, "
                f"{money_text(mean + half)}]</span>") in html
        assert f"<b>{money_text(float(np.quantile(total[:, k], 0.9)))}</b>" in html
    assert "2,048" in html and "20,480" in html                # P90 depth and shortfall
    assert "reserved power" not in html                        # the components: their own table


def test_component_table_money_against_numpy_total_first_zero_columns_left_out():
    run = trade_run()
    report = cost_report(run)
    html = component_table(run.summary, report, strategy_colors(run.plan.strategy_names))
    costs = run.result.costs
    for k in range(3):
        assert money_text(float(np.mean(costs[:, k, 0]))) in html
        assert f"P90 {money_text(float(np.quantile(costs[:, k, 0], 0.9)))}" in html
        assert money_text(float(np.mean(costs[:, k, COST["cost_power_reserved"]]))) in html
    assert "$100k" in html                                     # energy, the same for all
    assert html.index("total") < html.index("reserved power") < html.index("energy")
    assert "left out: power over the reservation, old fleet running" in html
    assert ">old fleet running<" not in html                   # not a column


def test_pareto_table_names_the_dominated_and_by_whom():
    run = trade_run()
    report = cost_report(run)
    f = report.frontier()
    assert f.frontier == ("rush", "gated")
    assert f.dominated_by["waste"] == ("gated", "rush")
    html = pareto_table(run.summary, report, strategy_colors(run.plan.strategy_names))
    assert html.count("dominated by gated, rush") == 4          # on all four frontiers
    assert html.count("<td><b>frontier</b></td>") == 8


def test_pareto_chart_is_an_svg_with_a_dollar_in_a_name_and_every_point():
    run = trade_run()
    run.plan.strategy_names = names = ("$gated$", "rush", "waste")
    run.summary["strategies"] = dict(zip(names, run.summary["strategies"].values()))
    run.summary["ranking"] = list(names)
    report = cost_report(run)
    chart = pareto_of(pareto_data(report, run.summary), strategy_colors(names))
    root = svg_root(chart)
    assert "$gated$" in svg_texts(root, "legend") and "$gated$" in svg_texts(root, "name")
    for panel in svg_panels(root):                      # a point per strategy, each named
        assert len([g for g in panel.iter(f"{SVG}g") if g.get("class") == "point"]) == 3
        assert sorted(svg_texts(panel, "name")) == sorted(names)
        assert svg_texts(panel, "xticks")[0].startswith("$")


def test_section_in_order_with_chart_and_nav(tmp_path):
    run = trade_run()
    colors = strategy_colors(run.plan.strategy_names)
    drawn = {}
    report, paragraphs = _cost_parts(run, drawn, colors)
    pictures = Figures(drawn, costs=report)
    assert pictures["pareto"].startswith("<svg") and pictures.costs is not None
    html = "".join(cost_section(run, pictures, colors))
    assert html.index('id="costs"') < html.index("<svg") < html.index("dominated by")
    assert "Dominated on P90 trough depth against mean cost: waste (by gated, rush)." in html
    assert paragraphs[0] == ("On P90 trough depth against mean cost, the Pareto frontier is "
                             "rush, gated (cheapest first); dominated beyond Monte Carlo noise: "
                             "waste (by gated and rush).")


def test_trade_sentence_paired_interval_and_paired_median():
    run = trade_run()
    report = cost_report(run)
    assert pairs_that_matter(report, run.summary["ranking"]) == [("gated", "rush")]
    sentences = cost_findings(run, report)
    assert len(sentences) == 2
    total = run.result.costs[:, :, 0]
    diff = total[:, 0] - total[:, 1]
    half = 1.959963984540054 * diff.std(ddof=1) / math.sqrt(N)
    expected = (f"gated costs {money_text(diff.mean())} more than rush on average (paired 95% "
                f"interval {money_text(diff.mean() - half)} to {money_text(diff.mean() + half)}), "
                "for a P90 trough depth of 0 against 2,048 H100-eq, and completes 100 days "
                "earlier at the median of the per-world difference (95% interval 100 to 100 days).")
    assert sentences[1] == expected


def test_top_ranked_against_the_cheapest_when_not_neighbours():
    rng = np.random.default_rng(8)
    base = rng.uniform(1e6, 2e6, N)
    run = fake_run(depth=[np.full(N, 100.0), np.zeros(N), np.full(N, 50.0)],
                   completion=[np.full(N, 300.0)] * 3,
                   costs_by_component={"cost_crews": [base, base + 5e6, base + 1e6]},
                   names=("cheap", "top", "middle"), ranking=("top", "middle", "cheap"))
    report = cost_report(run)
    assert report.frontier().frontier == ("cheap", "middle", "top")
    assert pairs_that_matter(report, run.summary["ranking"]) == [
        ("middle", "cheap"), ("top", "middle"), ("top", "cheap")]


def test_cost_within_noise_is_said_so():
    rng = np.random.default_rng(10)
    base = rng.lognormal(14, 0.5, N)
    a, b = base + rng.normal(0, 1e4, N), base + rng.normal(0, 1e4, N)
    text = cost_clause("a", "b", a, b, money_text)
    assert text.startswith("a and b show no cost difference beyond noise (a minus b: ")
    assert "more" not in text and "less" not in text


def test_cheaper_says_less_with_the_interval_turned():
    text = cost_clause("a", "b", np.full(N, 1e6) + np.arange(N), np.full(N, 3e6) + np.arange(N),
                       money_text)
    assert text == "a costs $2.00M less than b on average (paired 95% interval $2.00M to $2.00M)"


def test_completion_is_the_paired_median_not_p50_minus_p50():
    """b is 0..N-1, a the same values moved 10 places round: their P50s are equal, yet a
    completes 10 days later in all but 10 worlds."""
    b = np.arange(N, dtype=np.float64)
    a = (b + 10.0) % N
    assert np.median(a) - np.median(b) == 0.0
    text = completion_clause(a, b)
    assert text.startswith("and completes 10 days later at the median of the per-world difference")
    same = completion_clause(b, b[::-1].copy())         # a mirror: median difference 0
    assert same.startswith("and no completion difference beyond noise")


def test_a_strategy_completing_after_the_horizon_has_its_cost_cut_said():
    rng = np.random.default_rng(6)
    base = rng.uniform(1e6, 2e6, N)
    run = fake_run(depth=[np.zeros(N), np.full(N, 2048.0)],
                   completion=[rng.uniform(500, 700, N), np.full(N, 300.0)],
                   costs_by_component={"cost_old_fleet": [base + 1e6, base]},
                   names=("slow", "fast"))
    late = int(np.count_nonzero(run.result.metrics[:, 0, METRICS.index("completion_day")] > H))
    sentence = cost_findings(run, cost_report(run))[1]
    assert sentence.endswith(f"; slow completes after the 540-day horizon in "
                             f"{100 * late / N:.1f}% of scenarios, and costs count only to the "
                             "horizon, so its costs are cut there.")


def test_both_late_are_named_in_one_clause():
    from mcrisk.report.findings.costs import horizon_clause
    a = np.where(np.arange(N) < 60, 600.0, 300.0)                 # 1.5% after the horizon
    b = np.where(np.arange(N) < 3000, 700.0, 300.0)               # 75%
    assert horizon_clause(("a", "b"), (a, b), H) == (
        "; a completes after the 540-day horizon in 1.5% of scenarios and b in 75.0%, and "
        "costs count only to the horizon, so their costs are cut there")
    assert horizon_clause(("a", "b"), (np.full(N, 300.0), np.where(np.arange(N) < 40, 600.0,
                                                                     300.0)), H) == ""   # 1.0%


def tie_run(rule_alpha=None):
    """'top' (ranked first, also the cheapest) and 'level' are as deep in every world (an
    equal P90: a tie without a test); 'close' is 300 deeper than top in a dozen worlds (a
    different P90 estimate, a difference the ranking's test cannot see at 4,000 worlds);
    'deep' is 2,048 deep in every world (clearly deeper). 'level' completes 200 days after top and
    costs $5M more, in every world give or take noise."""
    rng = np.random.default_rng(12)
    base = rng.uniform(1e7, 2e7, N)
    done = rng.uniform(250, 350, N)
    spread = rng.uniform(0, 1000, N)
    close = spread.copy()
    close[rng.permutation(N)[:12]] += 300.0               # a dozen worlds a little deeper
    run = fake_run(depth=[spread, spread, close, np.full(N, 2048.0)],
                   completion=[done, done + 200.0, done, done],
                   costs_by_component={"cost_energy": [base, base + 5e6 + rng.normal(0, 1e5, N),
                                                       base + 1e6, base + 2e6]},
                   names=("top", "level", "close", "deep"),
                   ranking=("top", "close", "level", "deep"))
    if rule_alpha is not None:
        run.summary["ranking_rule"] = {"test_alpha": rule_alpha}
    return run


def test_the_top_ranked_against_every_strategy_as_deep_at_p90():
    """The pair rule the frontier alone misses: top is the frontier's only member and the
    cheapest, so no neighbour or cheapest pair exists; top against each strategy whose P90
    trough depth the ranking's test cannot tell from its own is said, in ranking order."""
    run = tie_run()
    depth = run.result.metrics[:, :, METRICS.index("trough_depth")]
    p90 = np.quantile(depth, 0.9, axis=0)
    assert p90[0] == p90[1] != p90[2] and p90[3] == 2048.0   # close: a different estimate
    report = cost_report(run)
    assert report.frontier().frontier == ("top",)
    assert depth_ties(run, run.summary["ranking"]) == ["close", "level"]
    sentences = cost_findings(run, report)
    assert len(sentences) == 3
    total = run.result.costs[:, :, 0]
    diff = total[:, 0] - total[:, 1]
    half = 1.959963984540054 * diff.std(ddof=1) / math.sqrt(N)
    late = int(np.count_nonzero(run.result.metrics[:, 1, METRICS.index("completion_day")] > H))
    assert 0.01 * N < late < 0.2 * N                       # level is cut by the horizon
    assert sentences[2] == (
        f"top costs {money_text(-diff.mean())} less than level on average (paired 95% interval "
        f"{money_text(-diff.mean() - half)} to {money_text(-diff.mean() + half)}), with the "
        f"same P90 trough depth ({p90[0]:,.0f} H100-eq), and completes 200 days earlier at the "
        "median of the per-world difference (95% interval 200 to 200 days); level completes "
        f"after the 540-day horizon in {100 * late / N:.1f}% of scenarios, and costs count only "
        "to the horizon, so its costs are cut there.")
    assert sentences[1].startswith("top costs $1.00M less than close on average")
    assert "(no difference beyond noise)" in sentences[1]


def test_the_tie_is_the_rankings_own_test_at_its_level():
    """The level comes from summary.json's ranking_rule: at a lax 0.5 the dozen deeper worlds
    of 'close' are a difference, so it is no longer a tie; 'deep' never is."""
    run = tie_run()
    assert "close" in depth_ties(run, run.summary["ranking"])
    lax = tie_run(rule_alpha=0.5)
    assert "close" not in depth_ties(lax, lax.summary["ranking"])
    assert "deep" not in depth_ties(lax, lax.summary["ranking"])
    assert pairs_that_matter(cost_report(lax), lax.summary["ranking"],
                             depth_ties(lax, lax.summary["ranking"])) == [("top", "level")]


def test_dominated_strategies_and_their_dominators_in_ranking_order():
    run = trade_run()
    run.summary["ranking"] = ["rush", "gated", "waste"]
    sentence = cost_findings(run, cost_report(run))[0]
    assert sentence.endswith("dominated beyond Monte Carlo noise: waste (by rush and gated).")


@pytest.mark.parametrize("currency, mark", [("EUR", "€"), ("CHF", " CHF")])
def test_currency_is_the_scenarios(currency, mark):
    run = trade_run()
    run.summary["costs"]["currency"] = currency
    report = cost_report(run)
    assert mark in cost_table(run.summary, report, strategy_colors(run.plan.strategy_names))


def test_y_ticks_keep_their_decimals():
    from mcrisk.report.figures.costs import _tick
    assert [_tick(v) for v in (2.5, 2.0, 12.25, 1500.0)] == ["2.5", "2", "12.25", "1,500"]
