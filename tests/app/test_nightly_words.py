"""The night in words (issue 26): the diff as a change log a person reads, the executing plan
leading with what moved its figures (attribution by group, paired on the same worlds), cost
columns compared like the metrics, each reached milestone's actual day against the plan, and
a risk burn-down chart over the history."""
from __future__ import annotations

import datetime as dt
import json
import math

import pytest

from mcrisk.app.nightly import run_nightly
from mcrisk.report.nightly.change_log import GROUPS, HAPPENED, MODEL, PLAN, change_log, when
from mcrisk.report.nightly.input_changes import scenario_keys

from ..helpers import ROOT

REFERENCE = ROOT / "scenarios" / "reference-2048.toml"
STATUSES = REFERENCE.parent / "reference-2048-status"
NOW = dt.datetime(2026, 12, 2, 3, 15, 0, tzinfo=dt.timezone.utc)
SAMPLES = 400

PRICE_A = 'price_per_kw_month = { dist = "triangular", min = 140, mode = 150, max = 170 }'


def edited_reference(folder):
    """The reference with hall A's power price tripled (a model change), big-bang removed and
    hybrid-gated's last drain waiting for N01..N10 (plan changes)."""
    text = REFERENCE.read_text()
    assert PRICE_A in text
    text = text.replace(PRICE_A, PRICE_A.replace("140", "420").replace("150", "450")
                        .replace("170", "510"))
    start = text.index('[[strategies]]\nname = "big-bang"')
    end = text.index("[[strategies]]", start + 5)
    text = text[:start] + text[end:]
    old = '{ units = "SU1..SU2", on_accepted = "N01..N12" },\n]'
    assert old in text
    text = text.replace(old, '{ units = "SU1..SU2", on_accepted = "N01..N10" },\n]')
    path = folder / "reference-edited.toml"
    path.write_text(text)
    return path


def night(history, scenario, status, hours=0):
    return run_nightly(str(scenario), history, samples=SAMPLES, seed=1, backend="cpu",
                       now=NOW + dt.timedelta(hours=hours), status=status)


@pytest.fixture(scope="module")
def series(tmp_path_factory):
    base = tmp_path_factory.mktemp("words")
    history = base / "history"
    first = night(history, REFERENCE, STATUSES / "day100.toml")
    second = night(history, edited_reference(base), STATUSES / "day150.toml", hours=24)
    third = night(history, edited_reference(base), STATUSES / "day210.toml", hours=48)
    return history, first, second, third


def test_the_change_log_words_status_plan_and_model_changes():
    old = scenario_keys(REFERENCE.read_text())
    text = REFERENCE.read_text().replace(PRICE_A, PRICE_A.replace("150", "450"))
    new = scenario_keys(text.replace('name = "big-bang"', 'name = "big-bang-2"'))
    before = {"status": {"as_of": 100, "events": [], "happened": []}}
    after = {"start_date": "2027-01-01", "status": {"as_of": 150, "events": [
        {"day": 102.0, "kind": "shipment", "id": "S1", "event": "arrived"},
        {"day": 171.0, "kind": "hall", "id": "B", "event": "energized"},
        {"day": 183.0, "kind": "unit", "id": "N03", "event": "burn-in attempt 1 failed"},
        {"day": 192.0, "kind": "unit", "id": "N03", "event": "burn-in attempt 2 failed"},
        {"day": 193.0, "kind": "unit", "id": "N03", "event": "something new"}],
        "happened": ["Risks: occurred: utility-slip (30 days); can no longer occur: "
                     "allocation-cut", "Measured performance: gb300-nvl72 2.35 H100-eq per GPU"]}}
    log = change_log(old, new, before, after)
    by = {g: [line.text for line in log if line.group == g] for g in GROUPS}
    assert "S1 arrived on Tue 2027-04-13, 27 days late (promised Wed 2027-03-17)" in by[HAPPENED]
    assert ("hall B energized on Mon 2027-06-21, 51 days late (promised Sat 2027-05-01)"
            in by[HAPPENED])
    n03 = next(t for t in by[HAPPENED] if t.startswith("N03"))
    assert "failed burn-in a second time on" in n03 and "something new on" in n03
    assert "strategy big-bang-2 added" in by[PLAN] and "strategy big-bang removed" in by[PLAN]
    assert ("hall A's power price per kW-month: triangular 140 / 450 / 170 "
            "(was triangular 140 / 150 / 170)") in by[MODEL]
    assert "per-GPU performance of gb300-nvl72 measured at 2.35 (was 2.5)" in by[HAPPENED]
    assert "risk utility-slip occurred (30 days)" in by[HAPPENED]
    assert when(102, None) == "day 102"


def test_a_change_it_cannot_word_keeps_a_fallback_line():
    old = {"mystery.knob": 1}
    log = change_log(old, {"mystery.knob": 2}, {}, {})
    assert [line.text for line in log] == ["mystery.knob: 2 (was 1) [not worded: key mystery.knob]"]


@pytest.mark.slow
def test_diff_md_and_the_report_carry_the_change_log(series):
    history, _, second, _ = series
    diff_md = (second.folder / "diff.md").read_text()
    assert "## The night in words" in diff_md
    assert "S1 arrived on day 102, 27 days late" in diff_md
    assert "strategy big-bang removed" in diff_md
    assert "strategy hybrid-gated: drain of SU1..SU2: on acceptance of N01..N10" in diff_md
    assert "hall A's power price per kW-month: triangular 420 / 450 / 510" in diff_md
    report = (second.folder / "report.html").read_text()
    assert "The night in words" in report and "27 days late" in report


@pytest.mark.slow
def test_the_nightly_compares_cost_columns_like_the_metrics(series):
    _, _, second, _ = series
    change = second.diff.change("hybrid-gated", "cost_power_reserved", "mean")
    assert change is not None and change.reported
    assert "cost_power_reserved" in (second.folder / "diff.md").read_text()


@pytest.mark.slow
def test_the_executing_plan_leads_with_an_attribution_that_adds_up(series):
    _, _, second, third = series
    lead = second.lead
    assert lead is not None and lead.strategy == "hybrid-gated"
    assert [f.key for f in lead.figures] == ["trough_depth.p90", "completion_day.p90",
                                            "shortfall_gpu_days.p90", "cost_total.mean",
                                            "cost_total.p90"]
    groups = {g.name for g in lead.groups}
    assert groups == {"status facts", "plan changes", "model changes"}
    for figure in lead.figures:
        parts = [g.contributions[figure.key] for g in lead.groups if g.applied]
        assert math.isclose(sum(parts) + lead.interaction[figure.key], lead.total[figure.key],
                            rel_tol=1e-9, abs_tol=1e-6)
    text = (second.folder / "diff.md").read_text()
    assert "## The executing plan: hybrid-gated" in text
    assert "paired on the same worlds" in text
    assert third.lead is not None and not any(g.applied for g in third.lead.groups
                                              if g.name != "status facts")


@pytest.mark.slow
def test_reached_milestones_show_actual_against_plan(series):
    _, _, _, third = series
    text = (third.folder / "diff.md").read_text()
    assert "## Milestones reached: actual against plan" in text
    line = next(t for t in text.splitlines() if t.startswith("| S1 racks: first install starts"))
    assert "day 171.5" in line and "late against its P50" in line


@pytest.mark.slow
def test_the_report_has_a_risk_burn_down_over_the_history(series):
    history, _, _, third = series
    report = (third.folder / "report.html").read_text()
    start = report.index('id="burndown"')
    assert "<svg" in report[start:start + 200_000]
    index = json.loads((history / "index.json").read_text())
    assert len(index["runs"]) == 3
