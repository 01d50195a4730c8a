"""A status in words and numbers (issue 25): the dated facts in order, what has happened in a
line per kind of fact, a history figure that is a fact or is not, and the outputs' pieces that
show them (the history table, the executing block, the Gantt's and the schedule's actuals)."""
from __future__ import annotations

import datetime as dt

import numpy as np

from mcrisk.core.status import Attempt, RowStatus, Status, UnitStatus
from mcrisk.report.html.gantt import gantt_svg
from mcrisk.report.status import executing_words, history_rows, status_markdown, status_words
from mcrisk.results import facts
from mcrisk.results.history import figure, same_for_every_strategy

START = dt.date(2027, 1, 4)

# the day-150 state of the reference, as issue 25 tells it
DAY_150 = Status(
    path="status-150.toml", sha256="cd" * 32, as_of=150.0, as_of_date=START + dt.timedelta(150),
    arrived=(("S1", 102.0), ("S2", 130.0)), promised=(("S3", 160.0),),
    energized=(("B", 140.0),), ready=(("xdr", 120.0),),
    risks=(("utility-slip", 12.0), ("cdu-recall", None)), performance=(("gb300-nvl72", 2.35),),
    units=(UnitStatus("N01", row="B1", install_start=104.0, install_end=108.0,
                      attempts=(Attempt(108.0, 113.0, True),), accepted=121.0),
           UnitStatus("N03", row="B1", install_start=118.0, install_end=122.0,
                      attempts=(Attempt(122.0, 127.0, False, 131.0), Attempt(131.0))),
           UnitStatus("SU3", drained=140.0, removed=146.0), UnitStatus("SU4", drained=140.0)),
    rows=(RowStatus("A3", retrofit_started=141.0, retrofit_done=149.0),
          RowStatus("A4", retrofit_started=147.0)))


def test_events_are_every_dated_fact_in_time_order(reference_scenario):
    got = facts.events(DAY_150, START)
    assert [e["day"] for e in got] == sorted(e["day"] for e in got)
    assert got[0] == {"day": 102.0, "date": "2027-04-16", "kind": "shipment", "id": "S1",
                      "event": "arrived"}
    said = [(e["day"], e["id"], e["event"]) for e in got]
    assert (127.0, "N03", "burn-in attempt 1 failed") in said
    assert (131.0, "N03", "repair after attempt 1 done") in said
    assert (131.0, "N03", "burn-in attempt 2 started") in said
    assert (113.0, "N01", "burn-in attempt 1 passed") in said
    assert (104.0, "N01", "install started in row B1") in said
    # a tie: the hall before the units (KIND_ORDER), then the order the status lists them
    ties = [(e["kind"], e["id"]) for e in got if e["day"] == 140.0]
    assert ties == [("hall", "B"), ("unit", "SU3"), ("unit", "SU4")]
    assert "date" not in facts.events(DAY_150)[0]           # no start date, no dates


def test_what_has_happened_is_a_line_per_kind_of_fact(reference_scenario):
    lines = facts.happened(reference_scenario, DAY_150)
    assert lines == [
        "2 of 4 shipments arrived (S1 on day 102 and S2 on day 130); revised promises: S3 for "
        "day 160",
        "Halls energized: B on day 140",
        "Fabric islands ready: xdr on day 120",
        "New units: 2 of 16 installed or installing, 1 accepted; 3 burn-in attempts, 1 failed",
        "Old units: 2 of 8 drained, 1 removed",
        "Row retrofits: done: A3 on day 149; in progress: A4",
        "Risks: occurred: utility-slip (12 days); can no longer occur: cdu-recall",
        "Measured performance: gb300-nvl72 2.35 H100-eq per GPU"]
    empty = Status(path="s.toml", sha256="0" * 64, as_of=10.0)
    assert facts.happened(reference_scenario, empty) == [
        "Nothing recorded yet: every event of the plan lies after as_of"]
    assert facts.events(empty) == []


def test_a_figure_is_a_fact_only_when_every_world_agrees():
    assert figure(np.array([5.0, 5.0, 5.0])) == {"value": 5.0, "certain": True, "min": 5.0,
                                                 "max": 5.0}
    assert figure(np.array([1.0, 2.0, 6.0])) == {"value": 3.0, "certain": False, "min": 1.0,
                                                 "max": 6.0}
    assert figure(np.array([np.inf, np.inf]))["value"] is None


def _summary(history: dict, executing=None, ranking=("a", "b")) -> dict:
    row = {m: {"value": 0.0, "certain": True, "min": 0.0, "max": 0.0}
           for m in ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days")}
    metric = {"mean": 1.0, "p50": 1.0, "p90": 2.0, "p99": 3.0, "p90_ci": None}
    strategies = {n: {"trough_depth": metric, "trough_days": metric,
                      "shortfall_gpu_days": metric, "homeless_days": metric,
                      "completion_day": metric} for n in ranking}
    return {"ranking": list(ranking), "strategies": strategies, "executing": executing,
            "ranks": {n: {"rank": k + 1, "tied_with": [], "decided_by": "trough_depth"}
                      for k, n in enumerate(ranking)},
            "status": {"path": "s.toml", "sha256": "0" * 64, "as_of": 50.0, "as_of_date": None,
                       "window_days": [50.0, 100.0], "happened": ["x"], "events": [],
                       "history": {"window_days": [0.0, 50.0], "worlds": 64, "certain": True,
                                   "strategies": {n: dict(row) for n in history}}}}


def test_the_history_table_has_one_row_when_every_strategy_s_past_is_the_same():
    s = _summary(["a", "b"])
    assert same_for_every_strategy(s["status"]["history"]["strategies"])
    headers, rows = history_rows(s)
    assert headers[0] == "trough depth (H100-eq)" and rows == [("every strategy", ["0"] * 4)]
    s["status"]["history"]["strategies"]["b"]["trough_days"] = {
        "value": 3.5, "certain": False, "min": 1.0, "max": 6.0}
    _, rows = history_rows(s)
    assert rows == [("a", ["0"] * 4), ("b", ["0", "~3.5 (1-6)", "0", "0"])]
    assert "marked ~ is not a fact" not in status_words(s)["history"]   # history.certain
    assert status_markdown(s)[0] == "## A migration in flight"


def test_the_executing_block_says_where_it_ranks_and_who_leads():
    s = _summary(["a", "b"], executing="b")
    text = executing_words(s)
    assert text.startswith("Executing: b, ranked 2 of 2; the leader is a. P90 trough depth 2")
    assert text.endswith("(over days 50 to 100, what is still at risk).")
    assert executing_words({**s, "executing": None}) is None


def test_the_gantt_draws_a_reached_milestone_as_a_diamond_on_its_day():
    items = [{"key": "a", "name": "SU1 drain starts", "kind": "drain", "group": "drain wave x",
              "level": "wave", "mean": 40.0, "p10": 40.0, "p50": 40.0, "p90": 40.0,
              "criticality": 1.0, "actual": True, "actual_day": 40.0},
             {"key": "b", "name": "S1 arrives", "kind": "arrival", "group": "shipment S1",
              "level": "wave", "mean": 80.0, "p10": 75.0, "p50": 80.0, "p90": 95.0,
              "criticality": 0.5, "actual": False}]
    svg = gantt_svg("s", items, np.arange(101), np.zeros(101), None, as_of=50.0)
    assert "SU1 drain starts (actual)</text>" in svg and "SU1 drain starts: actual, day 40.0" in svg
    assert "S1 arrives: P10 75.0" in svg and "status date: day 50.0" in svg
    plain = gantt_svg("s", items[1:], np.arange(101), np.zeros(101), None)
    assert "actual" not in plain and "status date" not in plain
