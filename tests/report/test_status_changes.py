"""How the status changed between two nights (mcrisk.report.nightly.status_changes): the one
sentence the night-over-night comparison says about it, checked word for word against
summary.json status blocks built here."""
from __future__ import annotations

from mcrisk.report.nightly.status_changes import new_facts, status_change


def event(day, kind, ident, what):
    return {"day": day, "kind": kind, "id": ident, "event": what}


DAY150 = [event(102.0, "shipment", "S1", "arrived"), event(131.0, "island", "xdr", "fabric ready")]
DAY210 = [*DAY150, event(171.0, "hall", "B", "energized"),
          event(172.0, "shipment", "S3", "arrived"),
          event(173.0, "unit", "N03", "install started in row B1"),
          event(177.0, "unit", "N03", "burn-in attempt 1 started"),
          event(183.0, "unit", "N03", "burn-in attempt 1 failed"),
          event(187.0, "unit", "N03", "burn-in attempt 2 started"),
          *(event(190.0 + k, "unit", f"N{k:02d}", "accepted") for k in range(4, 10))]


def summary(as_of, events, sha="a"):
    return {"status": {"path": "s.toml", "sha256": sha * 64, "as_of": as_of, "events": events}}


def test_no_status_on_either_night_says_nothing():
    assert status_change({}, {}) is None


def test_the_same_status_file_is_said_to_be_unchanged():
    assert status_change(summary(150.0, DAY150), summary(150.0, DAY150)) == (
        "Status unchanged since last night (same sha256, as of day 150).")


def test_a_moved_as_of_and_the_new_facts_counted_by_kind_named_where_few():
    text = status_change(summary(150.0, DAY150), summary(210.0, DAY210, "b"))
    assert text == (
        "The status changed (as_of moved from day 150 to day 210, so tonight's metrics and "
        "costs count from day 210 and last night's from day 150): new dated facts: "
        "1 hall energized (B); 1 shipment arrived (S3); 1 unit install started (N03); "
        "burn-in attempt started: 2 times, on 1 unit (N03); "
        "burn-in attempt failed: once, on 1 unit (N03); 6 units accepted.")


def test_a_fact_recorded_differently_is_counted_apart_and_nothing_is_said_to_be_caused():
    fixed = [event(101.0, "shipment", "S1", "arrived"), DAY150[1]]      # S1 corrected
    text = status_change(summary(150.0, DAY150), summary(150.0, fixed, "b"))
    assert text == ("The status changed (still as of day 150): new dated facts: 1 shipment "
                    "arrived (S1); 1 dated fact of last night's status is not in tonight's "
                    "as recorded then.")
    assert "because" not in text and "caus" not in text


def test_a_status_added_or_dropped_says_which_days_each_night_counts():
    assert status_change({}, summary(150.0, DAY150)) == (
        "Tonight is conditioned on a status as of day 150 and last night on none, so tonight "
        "counts its metrics and costs from that day and last night from day 0.")
    assert status_change(summary(150.0, DAY150), {}) == (
        "Last night was conditioned on a status as of day 150 and tonight on none, so tonight "
        "counts its metrics and costs from day 0.")


def test_no_new_dated_fact_is_said_so():
    assert new_facts(DAY150, DAY150) == []
    text = status_change(summary(150.0, DAY150), summary(160.0, DAY150, "b"))
    assert text.endswith("no new dated facts.")
