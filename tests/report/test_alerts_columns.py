"""--fail-if on every column the run reports (issue 26): costs, job columns and milestones,
days and calendar dates; checked against the scenario before running, with the valid names;
a breach said in words (the column, the value, the threshold)."""
from __future__ import annotations

import pytest

from mcrisk.cli import main
from mcrisk.report.nightly.alerts import (AlertError, check_conditions, evaluate,
                                          parse_condition, parse_conditions)
from mcrisk.scenario import load_scenario

from ..helpers import ROOT, SCENARIOS, variant

FULL = SCENARIOS / "reference-2048-full.toml"
FULL_TEXT = FULL.read_text()


def summary(start_date=None) -> dict:
    """A summary.json-shaped dict with a cost, a job column and two milestones."""
    stats = {"mean": 1.0, "p50": 1.0, "p90": 1.0, "p99": 1.0}
    return {
        "costs": {"currency": "USD"},
        "strategies": {
            "big-bang": {"trough_depth": dict(stats),
                         "costs": {"cost_total": {**stats, "p90": 7.9e7}},
                         "jobs": {"homeless_days.frontier": {**stats, "p90": 194.0},
                                  "unservable_gpu_days": dict(stats)}},
            "hybrid-gated": {"trough_depth": dict(stats),
                             "costs": {"cost_total": {**stats, "p90": 5.0e7}},
                             "jobs": {"homeless_days.frontier": {**stats, "p90": 3.0},
                                      "unservable_gpu_days": dict(stats)}}},
        "milestones": {"start_date": start_date, "strategies": {
            name: [{"key": "completion", "name": "completion", "mean": 400.0, "p10": 380.0,
                    "p50": 410.0, "p90": p90},
                   {"key": "arrival:S1", "name": "shipment S1 arrives", "mean": 100.0,
                    "p10": 80.0, "p50": 98.0, "p90": 134.2}]
            for name, p90 in (("big-bang", 460.4), ("hybrid-gated", 290.0))}}}


@pytest.mark.parametrize("text, parts", [
    ("big-bang.cost_total.p90 > 6e7", ("big-bang", "cost_total", "p90", None, 6e7)),
    ("any.cost_shortfall.mean >= 1_000_000", ("any", "cost_shortfall", "mean", None, 1e6)),
    ("all.homeless_days.frontier.p90 > 10", ("all", "homeless_days.frontier", "p90", None, 10.0)),
    ("a.b.unservable_gpu_days.p99 > 0", ("a.b", "unservable_gpu_days", "p99", None, 0.0)),
    ("hybrid-gated.milestone.completion.p90 > 300",
     ("hybrid-gated", "milestone.completion", "p90", None, 300.0)),
    ("hybrid-gated.milestone.wave:drain:SU1,SU2.p10 < 50",
     ("hybrid-gated", "milestone.wave:drain:SU1,SU2", "p10", None, 50.0)),
    ("hybrid-gated.milestone.completion.p90.date > 2027-11-30",
     ("hybrid-gated", "milestone.completion", "p90", "2027-11-30", 0.0)),
    ("any.completion_day.p50.date <= 2028-01-01",
     ("any", "completion_day", "p50", "2028-01-01", 0.0)),
    # the existing forms read as before
    ("x.homeless_days.p90 > 10", ("x", "homeless_days", "p90", None, 10.0)),
])
def test_every_reported_column_parses(text, parts):
    c = parse_condition(text)
    assert (c.target, c.metric, c.stat, c.date, c.threshold) == parts


@pytest.mark.parametrize("text, message", [
    ("big-bang.cost_totl.p90 > 6e7", "unknown metric or column 'cost_totl'; did you mean "
                                     "'cost_total'"),
    ("big-bang.cost_total.p10 > 6e7", "unknown statistic 'p10' for cost_total"),
    ("big-bang.milestone.completion.p99 > 1", "choose one of mean, p10, p50, p90"),
    ("big-bang.milestone.completion > 1", "a milestone is milestone.<key>.STAT"),
    ("big-bang.cost_total.p90.delta > 0", ".delta compares night over night only the metrics"),
    ("big-bang.cost_total.p90.date > 2027-01-01", "cost_total is not a day"),
    ("big-bang.milestone.completion.p90 > 2027-11-30", "add .date"),
    ("big-bang.milestone.completion.p90.date > 300", "give one as YYYY-MM-DD"),
    ("big-bang.milestone.completion.p90.date > 2027-02-30", "is not a calendar date"),
])
def test_a_bad_column_condition_names_the_bad_part(text, message):
    with pytest.raises(AlertError, match=message.replace("(", r"\(").replace(".", r"\.")):
        parse_condition(text)


def test_conditions_are_checked_against_the_scenario_with_the_valid_names(tmp_path):
    scenario = load_scenario(FULL)
    check_conditions(parse_conditions([
        "big-bang.cost_total.p90 > 6e7", "any.homeless_days.frontier.p90 > 10",
        "any.unservable_gpu_days.p90 > 0", "hybrid-gated.milestone.completion.p90 > 300",
        "hybrid-gated.milestone.wave:hall:B.p90 > 300", "big-bang.milestone.arrival:S1.p50 > 1",
        "hybrid-gated.trough_depth.p90 > 0"]), scenario)
    with pytest.raises(AlertError) as info:
        check_conditions(parse_conditions([
            "any.homeless_days.fronteir.p90 > 10", "hybrid-gated.milestone.completon.p90 > 1",
            "big-bang.milestone.completion.p90.date > 2027-11-30"]), scenario)
    message = str(info.value)
    assert "3 --fail-if conditions cannot be used with this scenario" in message
    assert "did you mean 'homeless_days.frontier'" in message
    assert "homeless_days.mid, homeless_days.small" in message          # the valid names
    assert "no milestone 'completon'; did you mean 'completion'" in message
    assert "wave:hall:B" in message
    assert "sets no start_date" in message
    minimal = load_scenario(SCENARIOS / "minimal.toml")
    with pytest.raises(AlertError, match=r"needs a \[costs\] section"):
        check_conditions(parse_conditions(["any.cost_total.p90 > 1"]), minimal)
    reference = load_scenario(SCENARIOS / "reference-2048.toml")
    with pytest.raises(AlertError, match=r"needs a job mix"):
        check_conditions(parse_conditions(["any.homeless_days.frontier.p90 > 1"]), reference)
    path = tmp_path / "dated.toml"
    path.write_text(variant(("horizon_days = 540", 'horizon_days = 540\nstart_date = "2027-01-04"'),
                            text=FULL_TEXT))
    check_conditions(parse_conditions(["big-bang.milestone.completion.p90.date > 2027-11-30"]),
                     load_scenario(path))


def test_breaches_say_the_column_the_value_and_the_threshold_in_words():
    conditions = parse_conditions(["big-bang.cost_total.p90 > 6e7",
                                   "any.homeless_days.frontier.p90 > 10",
                                   "all.milestone.completion.p90 > 300",
                                   "any.milestone.arrival:S1.p90 >= 134"])
    breaches, notes = evaluate(conditions, summary(), None)
    said = [str(b) for b in breaches]
    assert not notes
    # all: hybrid-gated's completion at 290 holds; arrival:S1 breaches for both
    assert [(b.condition.metric, b.strategy) for b in breaches] == [
        ("cost_total", "big-bang"), ("homeless_days.frontier", "big-bang"),
        ("milestone.arrival:S1", "big-bang"), ("milestone.arrival:S1", "hybrid-gated")]
    assert ("big-bang's P90 total cost (cost_total, USD) is 7.9e+07 USD, above the threshold "
            "6e+07 USD") in said[0]
    assert ("big-bang's P90 homeless days frontier (homeless_days.frontier) is 194 days, above "
            "the threshold 10 days") in said[1]
    assert ("big-bang's P90 day of milestone 'shipment S1 arrives' (arrival:S1) is day 134.2, "
            "at or above day 134") in said[2]


def test_a_date_condition_compares_calendar_dates():
    # day 460.4 falls on 2027-01-04 + 460 days = 2028-04-08; day 290 on 2027-10-21
    c = parse_conditions(["any.milestone.completion.p90.date > 2027-11-30"])
    breaches, _ = evaluate(c, summary("2027-01-04"), None)
    assert [b.strategy for b in breaches] == ["big-bang"]
    assert "= 2028-04-08 > 2027-11-30" in str(breaches[0])
    assert ("big-bang's P90 date of milestone 'completion' is 2028-04-08 (day 460.4), after "
            "2027-11-30") in str(breaches[0])
    breaches, notes = evaluate(c, summary(None), None)
    assert not breaches and "no start_date" in notes[0]


def test_a_milestone_a_strategy_does_not_have_is_skipped_with_a_note():
    doc = summary()
    doc["milestones"]["strategies"]["hybrid-gated"] = doc["milestones"]["strategies"]["hybrid-gated"][:1]
    breaches, notes = evaluate(parse_conditions(["any.milestone.arrival:S1.p90 > 0"]), doc, None)
    assert [b.strategy for b in breaches] == ["big-bang"]
    assert "skipped for hybrid-gated, its schedule has no milestone 'arrival:S1'" in notes[0]


def test_cli_nightly_breaches_on_a_cost_a_job_column_and_a_milestone(tmp_path, capsys):
    code = main(["nightly", str(FULL), "--history", str(tmp_path / "h"), "--samples", "200",
                 "--quiet", "--fail-if", "big-bang.cost_total.p90 > 1",
                 "--fail-if", "any.homeless_days.frontier.p90 > 0",
                 "--fail-if", "hybrid-gated.milestone.completion.p90 > 1",
                 "--fail-if", "hybrid-gated.milestone.completion.p90 < 0"])
    err = capsys.readouterr().err
    assert code == 3
    assert "BREACH big-bang.cost_total.p90 = " in err
    assert "big-bang's P90 total cost (cost_total, USD) is" in err
    assert "hybrid-gated's P90 day of milestone 'completion' is day" in err


def test_cli_a_column_the_scenario_lacks_exits_2_before_running(tmp_path, capsys):
    history = tmp_path / "h"
    code = main(["nightly", str(ROOT / "scenarios" / "minimal.toml"), "--history", str(history),
                 "--samples", "100", "--fail-if", "any.cost_total.p90 > 1"])
    assert code == 2
    assert "needs a [costs] section" in capsys.readouterr().err
    assert not history.exists()
