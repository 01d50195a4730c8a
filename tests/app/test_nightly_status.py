"""The nightly with a status (issue 25): each night keeps the very status file it was run with
(written through a temporary name and a rename), records its sha256 and as_of in summary.json
and index.json, and the night-over-night comparison says how the status changed."""
from __future__ import annotations

import datetime as dt
import hashlib
import json

import pytest

from mcrisk.app import nightly as nightly_module
from mcrisk.app.nightly import read_index, run_nightly
from mcrisk.cli import main
from mcrisk.report.text import md_text

from ..helpers import ROOT

REFERENCE = ROOT / "scenarios" / "reference-2048.toml"
STATUSES = REFERENCE.parent / "reference-2048-status"
NOW = dt.datetime(2026, 12, 2, 3, 15, 0, tzinfo=dt.timezone.utc)
SAMPLES = 200


def night(history, status, hours=0):
    return run_nightly(str(REFERENCE), history, samples=SAMPLES, seed=1, backend="cpu",
                       now=NOW + dt.timedelta(hours=hours), status=status)


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory):
    history = tmp_path_factory.mktemp("history")
    first = night(history, STATUSES / "day150.toml")
    second = night(history, STATUSES / "day210.toml", hours=24)
    return history, first, second


@pytest.mark.slow
def test_each_night_keeps_the_status_file_it_ran_with_byte_for_byte(two_nights):
    _, first, second = two_nights
    for result, name in ((first, "day150.toml"), (second, "day210.toml")):
        copy = result.folder / "status.toml"
        assert copy.read_bytes() == (STATUSES / name).read_bytes()
        assert copy in result.files
        summary = json.loads((result.folder / "summary.json").read_text())
        assert summary["status"]["sha256"] == hashlib.sha256(copy.read_bytes()).hexdigest()


@pytest.mark.slow
def test_the_index_records_each_nights_status_sha256_and_as_of(two_nights):
    history, _, _ = two_nights
    runs = read_index(history)["runs"]
    assert [r["status_as_of"] for r in runs] == [150.0, 210.0]
    assert [r["status_sha256"] for r in runs] == [
        hashlib.sha256((STATUSES / n).read_bytes()).hexdigest()
        for n in ("day150.toml", "day210.toml")]


@pytest.mark.slow
def test_the_nights_count_the_future_from_their_as_of(two_nights):
    _, first, second = two_nights
    assert first.run.plan.window_start == 150.0 and second.run.plan.window_start == 210.0
    assert first.run.summary["status"]["window_days"] == [150.0, 540.0]


@pytest.mark.slow
def test_the_comparison_says_how_the_status_changed_in_every_output(two_nights):
    _, _, second = two_nights
    sentence = second.diff.status_change
    assert sentence.startswith("The status changed (as_of moved from day 150 to day 210")
    assert "2 shipments arrived (S3, S4)" in sentence and "1 hall energized (B)" in sentence
    assert md_text(sentence) in (second.folder / "diff.md").read_text()
    # summary.md, one screen, keeps the windows (the whole sentence is in the report)
    summary_md = " ".join((second.folder / "summary.md").read_text().split())
    assert ("The status changed (as\\_of moved from day 150 to day 210, so tonight's metrics "
            "and costs count from day 210 and last night's from day 150).") in summary_md
    assert "as_of moved from day 150 to day 210" in (second.folder / "report.html").read_text()


def test_the_status_copy_is_written_through_a_temporary_name(tmp_path, monkeypatch):
    written = []
    real = nightly_module.write_atomic

    def spy(path, data):
        written.append(path.name)
        return real(path, data)

    monkeypatch.setattr(nightly_module, "write_atomic", spy)
    status = tmp_path / "today.json"          # a JSON status: its copy keeps the suffix
    status.write_text(json.dumps({"status": {"as_of": 100}}))
    result = night(tmp_path / "history", status)
    assert "status.json" in written
    assert (result.folder / "status.json").read_bytes() == status.read_bytes()


@pytest.mark.slow
def test_the_terminal_says_how_the_status_changed(tmp_path, capsys):
    history = tmp_path / "h"
    for name in ("day100.toml", "day150.toml"):
        assert main(["nightly", str(REFERENCE), "--history", str(history), "--status",
                     str(STATUSES / name), "--samples", str(SAMPLES), "--backend", "cpu"]) == 0
    out = capsys.readouterr().out
    assert ("The status changed (as_of moved from day 100 to day 150, so tonight's metrics "
            "and costs count from day 150 and last night's from day 100): new dated facts: "
            "2 shipments arrived (S1, S2); 1 island fabric ready (xdr).") in out


@pytest.mark.slow
def test_summary_md_leads_with_the_executing_plan_and_what_happened(two_nights):
    _, _, second = two_nights
    text = (second.folder / "summary.md").read_text()
    lead = text.index("**The executing plan, hybrid-gated, since last night:**")
    assert lead < text.index("What happened since last night:") < text.index("Ranking, best")
    assert "- S3 arrived on day 166, 31 days late (promised day 135)" in text
    assert "- completion (P90): " in text and "from status facts" in text
    assert max(len(line) for line in text.splitlines()[2:]) <= 100
