"""A planner's read of the nightly at 7 a.m. (issue 26, "Done when"): the change log groups the
units whose night reads alike and keeps its own line for a unit with news (a failed burn-in);
a risk the status records as occurred is what happened, as the attribution counts it, not a
model change; the run settings it causes are worded, not key paths; the changes at the top
are few and grouped, the full list below; the hall energized before day 0 is not news; a
shipment's lateness names the day it was promised; the burn-down's caption does not call a
cost that falls because its window shrinks risk burned down."""
from __future__ import annotations

from mcrisk.app.attribution import given_at_day_0
from mcrisk.report.html.nightly import trend_html
from mcrisk.report.nightly.change_log import (GROUPS, HAPPENED, MODEL, change_log,
                                              run_setting_lines, unit_ids)
from mcrisk.report.nightly.diff_text import TOP_CHANGES, diff_markdown, top_change_lines
from mcrisk.report.nightly.input_changes import key_changes, run_settings
from mcrisk.report.nightly.lead import MilestoneActual, milestone_terminal_lines, milestones_line
from mcrisk.report.nightly.metric_changes import MetricChange, NightDiff


def _routine(unit: str, day: float) -> list[dict]:
    return [{"day": day - 4, "kind": "unit", "id": unit, "event": "install started in row B1"},
            {"day": day, "kind": "unit", "id": unit, "event": "installed"},
            {"day": day, "kind": "unit", "id": unit, "event": "burn-in attempt 1 started"},
            {"day": day + 5, "kind": "unit", "id": unit, "event": "burn-in attempt 1 passed"},
            {"day": day + 5, "kind": "unit", "id": unit, "event": "accepted"}]


def _log(events, happened=()):
    after = {"status": {"as_of": 210, "events": events, "happened": list(happened)}}
    log = change_log({}, {}, {"status": {"as_of": 150, "events": [], "happened": []}}, after)
    return {g: [line.text for line in log if line.group == g] for g in GROUPS}


def test_units_whose_night_reads_alike_share_a_line_and_a_failed_burn_in_keeps_its_own():
    events = [e for unit, day in (("N01", 175), ("N02", 176), ("N04", 178), ("N05", 186))
              for e in _routine(unit, day)]
    events += [{"day": 177, "kind": "unit", "id": "N03", "event": "installed"},
               {"day": 183, "kind": "unit", "id": "N03", "event": "burn-in attempt 1 failed"},
               {"day": 192, "kind": "unit", "id": "N03", "event": "burn-in attempt 2 failed"}]
    lines = _log(events)[HAPPENED]
    assert lines == [
        "N01, N02, N04, N05 (4 units): installed in row B1 between day 175 and day 186; passed "
        "burn-in at the first attempt between day 180 and day 191; accepted between day 180 "
        "and day 191",
        "N03 installed on day 177; failed burn-in on day 183; failed burn-in a second time on "
        "day 192"]
    assert unit_ids(["N01", "N02", "N04", "N05", "N06", "N07", "N10"]) == "N01, N02, N04..N07, N10"


def test_a_risk_the_status_records_is_what_happened_as_the_attribution_counts_it():
    by = _log([], ["Risks: occurred: utility-slip (30 days); can no longer occur: allocation-cut"])
    assert "risk utility-slip occurred (30 days)" in by[HAPPENED]
    assert "risk allocation-cut can no longer occur" in by[HAPPENED]
    assert by[MODEL] == []          # 'model changes: nothing changed' in the lead says the same


def test_a_shipments_lateness_names_the_day_it_was_promised():
    log = change_log({}, {"shipments[S1].arrival.day": 75}, {"status": {"events": []}},
                     {"status": {"events": [{"day": 102.0, "kind": "shipment", "id": "S1",
                                             "event": "arrived"}]}})
    assert log[0].text == "S1 arrived on day 102, 27 days late (promised day 75)"


def _risks(enabled: bool, probability: float, impact: dict) -> dict:
    return {"mode": "file", "enabled": ["utility-slip"] if enabled else [],
            "disabled": [] if enabled else ["utility-slip"], "disabled_by_cli": [],
            "register": [{"id": "utility-slip", "enabled": enabled, "probability": probability,
                          "impact": impact, "targets": ["energized:B"]}]}


def test_run_settings_a_status_risk_fact_causes_are_worded_not_key_paths():
    old = {"seed": 1, "samples": 4000,
           "risks": _risks(False, 0.2, {"kind": "lognormal", "median": 30.0, "p90": 90.0})}
    new = {"seed": 1, "samples": 4000, "risks": _risks(True, 1.0, {"kind": "fixed", "value": 30.0}),
           "status": {"happened": ["Risks: occurred: utility-slip (30 days)"]}}
    lines = run_setting_lines(old, new, key_changes(run_settings(old), run_settings(new)))
    assert lines == ["risk utility-slip on with probability 1 and impact 30 days tonight, as the "
                     "status records it occurred (30 days); last night off (as written: "
                     "probability 0.2, impact lognormal, median 30, P90 90 days)"]


def _many_changes() -> NightDiff:
    changes = [MetricChange(s, m, stat, 100.0, 100.0 * (1 + k / 10), True, "paired test", 1e-9)
               for k, (s, m) in enumerate((s, m) for s in ("a", "b", "c", "d")
                                          for m in ("trough_days", "cost_energy", "cost_total",
                                                    "homeless_days"))
               for stat in ("mean", "p50", "p90", "p99")]
    return NightDiff("tonight", "last", True, "paired", True, [], changes)


def test_the_top_of_the_changes_is_short_grouped_and_the_full_list_is_below():
    diff = _many_changes()
    lines = top_change_lines(diff)
    assert len(lines) == TOP_CHANGES + 1
    assert lines[0].startswith("d homeless_days: MEAN 100 -> 250, P50 100 -> 250")
    assert not any("cost_energy" in line for line in lines[:-1])   # headline columns first
    assert lines[-1] == "and 24 more reported changes: diff.md lists every one"
    text = diff_markdown(diff)
    top = text[:text.index("## Every reported change")]
    assert top.count("\n- ") <= TOP_CHANGES + 1
    assert text.count("paired test") >= 64                          # each one, below


def test_a_milestone_at_day_0_of_the_plan_is_not_news_and_the_terminal_has_a_short_version():
    assert given_at_day_0(0.0, {"p50": 0.0, "p90": 0.0})
    assert not given_at_day_0(131.0, {"p50": 124.8, "p90": 188.9})
    reached = [MilestoneActual("island xdr ready", 131.0, 124.8, 188.9),
               MilestoneActual("S1 racks: first install starts", 171.5, 120.0, 192.9),
               MilestoneActual("N03 accepted", 260.0, 153.2, 238.1),
               MilestoneActual("N02 accepted", 150.0, 153.8, 237.8),
               MilestoneActual("N05 accepted", 165.0, 164.5, 242.6)]
    assert milestones_line(reached).startswith(
        "milestones reached: 5, against the plan's P50 (tonight's scenario run without a "
        "status): 3 late, 1 early, 1 on time; 1 later than the plan's P90")
    lines = milestone_terminal_lines(reached)
    assert lines[0] == ("N03 accepted: day 260, 107 days late against its P50, later than its "
                        "P90 (plan P50 day 153.2, P90 day 238.1)")
    assert lines[-1].startswith("(2 more in diff.md")


def test_the_burn_down_caption_does_not_call_a_shrinking_cost_window_risk_burned_down():
    class Trend:
        nights, notes = (), ()
    html = trend_html(Trend(), None, burndown="<svg></svg>")
    assert "A falling line is risk burned down" not in html
    assert "a falling cost line is not by itself risk burned down" in html
