"""Issue 26, "Sentences that were wrong or misleading": every sentence a planner found wrong
in report.html / summary.md, reproduced on a small case, and the kind of each elsewhere.

1. the definitions state the scenario's own values, never a rounded or default one;
2. the joint trough sentence says what holds jointly and cannot be read as one trough's length;
3. drivers are ranked by |rank correlation| with their sign, for every ranked strategy;
4. what gating costs in completion says which milestone moves;
5. a plan whose waves drain on different triggers is described per trigger;
6. the value of mitigation gives no verdict below the nightly's materiality floor;
7. a driver's shift is in its own unit, and the drivers say which metric they explain and why;
8. a driver whose sign runs against the obvious direction is said to, and not explained away.
"""
from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from mcrisk.core.definitions import METRICS
from mcrisk.report.findings.sentences import findings, why
from mcrisk.results.statistics import summarize
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE, variant

FULL_TEXT = (REFERENCE.parent / "reference-2048-full.toml").read_text()


def _load(tmp_path, text: str, name: str = "s.toml"):
    path = tmp_path / name
    path.write_text(text)
    return load_scenario(str(path))


def _metrics(n: int, **columns) -> np.ndarray:
    out = np.zeros((n, len(columns), len(METRICS)))
    for s, per in enumerate(columns.values()):
        for metric, values in per.items():
            out[:, s, METRICS.index(metric)] = values
    return out


# ---- 1. the definitions read every assumption from the scenario run ------------------------

def test_the_definitions_state_the_scenarios_own_values_unrounded(tmp_path):
    from mcrisk.plan.compile import compile_scenario
    from mcrisk.report.html.definitions import definitions_html

    text = variant(("chance = 0.10", "chance = 0.08"),
                   ("chance_after_burnin_failure = 0.30", "chance_after_burnin_failure = 0.25"),
                   ("days_out = 3", "days_out = 2.25"),
                   ("points_every_days = 30", "points_every_days = 7.5"),
                   text=FULL_TEXT)
    scenario = _load(tmp_path, text)
    page = definitions_html(SimpleNamespace(summary={"samples": 10}, scenario=scenario,
                                            plan=compile_scenario(scenario)))
    # fmt rounded these to one decimal: 0.08 -> 0.1, 0.25 -> 0.2, 2.25 -> 2.2
    assert "with chance 0.08 (0.25 if its burn-in failed before)" in page
    assert "× 2.25 days" in page
    assert "taken every 7.5 days" in page


# ---- 2. the joint sentence ----------------------------------------------------------------

def test_the_joint_sentence_cannot_be_read_as_the_length_of_one_trough(tmp_path):
    scenario = load_scenario(str(REFERENCE))
    n = 1000
    # the deepest tenth is short (0.1 day); the long troughs (20 days) are shallow
    depth = np.where(np.arange(n) < 100, 99.4, 10.0)
    days = np.where(np.arange(n) < 100, 0.1, 20.0)
    m = _metrics(n, a={"completion_day": np.full(n, 50.0)},
                 b={"trough_depth": depth, "trough_days": days,
                    "completion_day": np.full(n, 50.0)})
    names = ["hybrid-gated", "big-bang"]
    summary = {"ranking": names, "strategies": summarize(m, tuple(names)),
               "baseline_h100_eq": 2048.0, "horizon_days": 540.0}
    text = " ".join(findings(scenario, summary, 1024.0, metrics=m, names=names))
    assert "stays below the baseline for at least" not in text, text
    assert ("In 100 of 1,000 scenarios (10.0%) both hold: its trough is at least 99.4 H100-eq "
            "below the baseline at its deepest, and its time below the baseline adds up to at "
            "least 0.1 days.") in text, text
    # the P90 trough days (20) come from other scenarios: said, not left to be guessed
    assert ("Of the 900 scenarios with at least 20 days below the baseline (its P90 trough "
            "days), 900 have a trough less than 99.4 H100-eq deep: the two P90s are separate "
            "percentiles.") in text, text


# ---- 3, 7, 8. the drivers --------------------------------------------------------------------

def _driver(input_, label, rho, shift=1.0):
    return {"input": input_, "label": label, "spearman": rho, "mean": 0.0,
            "near_p90_mean": shift, "shift": shift}


def _drivers_summary():
    n = 400
    m = _metrics(n, a={"shortfall_gpu_days": np.linspace(0, 100, n),
                       "completion_day": np.full(n, 50.0)},
                 b={"trough_depth": np.linspace(0, 500, n), "trough_days": np.linspace(0, 30, n),
                    "completion_day": np.full(n, 50.0)})
    names = ["hybrid-gated", "big-bang"]
    perf = _driver("unit_type.gb300.h100_eq_per_gpu", "gb300 performance per GPU", -0.75, -0.2)
    slip = _driver("hall.B.energized.delay", "hall B energization slip", +0.40, 30.0)
    late = _driver("hall.C.energized.delay", "hall C energization slip", -0.30, -12.0)
    empty = {k: [] for k in ("trough_depth", "trough_days", "homeless_days", "completion_day")}
    drivers = {"scenarios": n, "strategies": {
        "hybrid-gated": {**empty, "shortfall_gpu_days": [slip, perf]},
        "big-bang": {**empty, "shortfall_gpu_days": [], "trough_days": [slip, perf, late]}}}
    summary = {"ranking": names, "strategies": summarize(m, tuple(names)),
               "baseline_h100_eq": 2048.0, "horizon_days": 540.0, "drivers": drivers,
               "ranks": {"hybrid-gated": {"rank": 1, "decided_by": "trough_depth",
                                          "tied_with": []},
                         "big-bang": {"rank": 2, "decided_by": "trough_depth",
                                      "tied_with": []}}}
    return summary, m, names


def test_every_ranked_strategy_gets_its_drivers_strongest_first_with_their_sign():
    scenario = load_scenario(str(REFERENCE))
    summary, m, names = _drivers_summary()
    paragraphs = findings(scenario, summary, 1024.0, metrics=m, names=names)
    leader = next(p for p in paragraphs if p.startswith("hybrid-gated ranks first"))
    other = next(p for p in paragraphs if p.startswith("big-bang"))
    # the leader had none; the other named only drivers that push the metric up
    assert "gb300 performance per GPU (rank correlation -0.75" in leader, leader
    assert leader.index("performance per GPU") < leader.index("hall B energization slip")
    assert other.index("performance per GPU (rank correlation -0.75") \
        < other.index("hall B energization slip (+0.40")
    assert "a higher gb300 performance per GPU goes with lower shortfall" in leader, leader


def test_a_delay_that_goes_with_a_shallower_trough_is_said_to_run_against_intuition():
    scenario = load_scenario(str(REFERENCE))
    summary, m, names = _drivers_summary()
    other = next(p for p in findings(scenario, summary, 1024.0, metrics=m, names=names)
                 if p.startswith("big-bang"))
    assert "hall C energization slip (-0.30)" in other, other
    assert ("a higher gb300 performance per GPU and hall C energization slip go with lower "
            "trough days, the other with higher") in other, other
    assert "runs against intuition" in other and "this run does not show why" in other, other


def test_the_drivers_table_gives_each_drivers_own_unit_and_the_metric_it_explains():
    from mcrisk.report.html.tables import drivers_table

    summary, _, _ = _drivers_summary()
    table = drivers_table(summary, {"hybrid-gated": "#000000", "big-bang": "#111111"})
    assert "-0.2 H100-eq per GPU vs mean near P90" in table, table
    assert "+30.0 days vs mean near P90" in table, table
    # which metric the drivers explain, beside the one that decided the rank, and why
    assert "decided by" in table and "trough depth" in table, table
    assert "its trough days vary between worlds" in table, table          # big-bang
    assert "its trough days are the same in every world" in table, table  # hybrid-gated


# ---- 4. what gating costs, from the milestones --------------------------------------------

def _milestone(key, kind, mean):
    return {"key": key, "name": key, "kind": kind, "group": "", "level": "wave", "mean": mean,
            "p10": mean, "p50": mean, "p90": mean, "p90_ci": None, "criticality": 0.0}


def test_the_completion_cost_of_gating_says_which_milestone_moves():
    from mcrisk.report.findings.sentences import gating

    n = 400
    rng = np.random.default_rng(3)
    done = rng.uniform(300, 320, n)
    m = _metrics(n, a={"trough_depth": np.full(n, 500.0), "completion_day": done},
                 b={"completion_day": done + 4.5})
    names = ["hybrid-on-delivery", "hybrid-gated"]
    milestones = {"strategies": {
        "hybrid-on-delivery": [_milestone("wave:accepted:S4", "rollup", 310.0),
                               _milestone("wave:removed:SU1,SU2", "rollup", 200.0)],
        "hybrid-gated": [_milestone("wave:accepted:S4", "rollup", 310.0),
                         _milestone("wave:removed:SU1,SU2", "rollup", 314.5)]}}
    text = gating(names[0], names[1], m, names, milestones)
    assert "Gating costs 4.5 days of completion" in text
    assert "last acceptance" in text and "last removal" in text, text
    assert "the last rack is accepted on the same day on average (day 310)" in text, text
    assert "the last removal ends 114 days later (day 314 against 200)" in text, text


# ---- 5. mixed triggers ----------------------------------------------------------------------

def test_a_plan_whose_waves_drain_on_different_triggers_is_described_per_wave(tmp_path):
    text = variant(('  { units = "SU1..SU2", on_accepted = "N01..N12" },\n]',
                    '  { units = "SU1..SU2", day = 200 },\n]'))
    scenario = _load(tmp_path, text)
    words = why(scenario, scenario.strategy("hybrid-gated"))
    assert not words.startswith("it drains old capacity on a fixed date"), words
    assert ("3 of its 4 drain waves wait for their replacements' acceptance; 1 (SU1, SU2) "
            "drains on a fixed date (day 200), whatever the new racks' state") in words, words


# ---- 6. the value of mitigation: no verdict below materiality -------------------------------

def test_mitigation_below_materiality_gets_no_verdict_word_or_colour():
    from mcrisk.report.html.tables import mitigation_section
    from mcrisk.results.mitigation import mitigation_sentences, mitigation_value

    n = 2000
    rng = np.random.default_rng(5)
    post = np.zeros((n, 1, len(METRICS)))
    post[:, 0, METRICS.index("trough_depth")] = rng.uniform(100, 200, n)
    post[:, 0, METRICS.index("trough_days")] = rng.uniform(10, 20, n)
    pre = post.copy()
    pre[:, 0, METRICS.index("trough_depth")] -= 0.077 + rng.normal(0, 0.01, n)  # post +0.077
    pre[:, 0, METRICS.index("trough_days")] += 5.0                               # helps, material
    value = mitigation_value(pre, post, ["a"], which=("trough_depth", "trough_days"))
    assert value["a"]["trough_depth"]["verdict"] == "hurts"       # beyond noise, as recorded
    m = {"risks": ["r"], "samples": n, "seed": 1, "run_is": "pre", "simulated": "post",
         "wall_seconds": 0.1, "strategies": value}
    words = " ".join(mitigation_sentences(m))
    assert "hurts" not in words and "raises" not in words, words
    assert "below the materiality floor" in words, words
    html = "".join(mitigation_section({"mitigation": m, "ranking": ["a"]}, {"a": "#000000"}))
    assert "<span class='yes'>hurts</span>" not in html, html
    assert "<b>helps</b>" in html


def test_a_number_that_shows_as_zero_has_no_minus_sign():
    from mcrisk.report.findings.words import fmt
    assert [fmt(v) for v in (-0.0, -0.04, 0.0, -0.05, -12.0)] == ["0", "0.0", "0", "-0.1", "-12"]
