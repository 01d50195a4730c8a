"""Nightly runs (mcrisk.report.nightly, .diff): history folders, the index, diffs, safety."""
from __future__ import annotations

import datetime as dt
import hashlib
import json
from pathlib import Path

import pytest

from mcrisk.cli import main
from mcrisk.report import nightly as nightly_module
from mcrisk.report import tables as tables_module
from mcrisk.report.diff import toml_changes
from mcrisk.report.nightly import HistoryError, read_index, run_nightly

MINIMAL = Path(__file__).resolve().parents[1] / "scenarios" / "minimal.toml"
NOW = dt.datetime(2026, 12, 2, 3, 15, 0, tzinfo=dt.timezone.utc)
SAMPLES = 1500


def scenario_copy(folder: Path, arrival_day: int = 30) -> Path:
    """minimal.toml, with shipment S1 promised on `arrival_day` instead of 30."""
    text = MINIMAL.read_text()
    old = "arrival = { day = 30,"
    assert old in text
    path = folder / "minimal.toml"
    path.write_text(text.replace(old, f"arrival = {{ day = {arrival_day},"))
    return path


def night(scenario: Path, history: Path, hours: int = 0, **kwargs):
    return run_nightly(str(scenario), history, samples=kwargs.pop("samples", SAMPLES),
                       seed=kwargs.pop("seed", 1), backend="cpu",
                       now=NOW + dt.timedelta(hours=hours), **kwargs)


def snapshot(folder: Path) -> dict[str, str]:
    """Every file under folder (hidden ones too) -> sha256 of its bytes."""
    return {str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def two_nights(tmp_path_factory):
    """Night 1 on minimal.toml; night 2 with shipment S1 promised 15 days later."""
    base = tmp_path_factory.mktemp("nightly")
    history = base / "history"
    (base / "a").mkdir()
    (base / "b").mkdir()
    first = night(scenario_copy(base / "a"), history)
    second = night(scenario_copy(base / "b", arrival_day=45), history, hours=24)
    return history, first, second


@pytest.mark.slow
def test_first_night_is_registered_without_a_diff(two_nights):
    history, first, _ = two_nights
    assert first.run_id == "2026-12-02T031500Z"
    assert first.diff is None and first.previous is None
    folder = history / first.run_id
    for name in ("scenario.toml", "summary.json", "metrics.parquet", "capacity_bands.parquet",
                 "report.html", "summary.md", "alerts.json"):
        assert (folder / name).is_file()
    assert not (folder / "diff.md").exists()


@pytest.mark.slow
def test_index_lists_both_nights_oldest_first(two_nights):
    history, first, second = two_nights
    runs = read_index(history)["runs"]
    assert [r["id"] for r in runs] == [first.run_id, second.run_id] == \
        ["2026-12-02T031500Z", "2026-12-03T031500Z"]
    assert runs[1]["previous"] == first.run_id
    assert all(r["status"] == "ok" and r["samples"] == SAMPLES for r in runs)
    assert not list(history.glob(".partial-*"))


@pytest.mark.slow
def test_a_changed_shipment_date_is_found_in_the_inputs(two_nights):
    history, _, second = two_nights
    changes = second.diff.input_changes
    assert [(c.key, c.kind, c.old, c.new) for c in changes] == \
        [("shipments[S1].arrival.day", "changed", 30, 45)]
    diff_md = (history / second.run_id / "diff.md").read_text()
    assert "changed `shipments[S1].arrival.day`: 30 -> 45" in diff_md


@pytest.mark.slow
def test_a_changed_shipment_date_moves_the_metrics_beyond_noise(two_nights):
    _, first, second = two_nights
    diff = second.diff
    assert diff.paired
    by_key = {(c.strategy, c.metric, c.stat): c for c in diff.changes}
    # drain-on-day drains on day 30 whatever the racks do: 15 days later racks mean a longer
    # trough in (nearly) every scenario
    trough = by_key[("drain-on-day", "trough_days", "p90")]
    assert trough.delta > 0 and trough.significant
    # swap-gated's racks go to the empty row R3 (ready long before day 30): every date after
    # the arrival moves by exactly 15 days, so completion does too
    completion = by_key[("swap-gated", "completion_day", "p50")]
    assert completion.delta == pytest.approx(15.0, abs=1e-9)
    assert completion.significant
    # swap-gated never dips below baseline: nothing to report there
    assert not by_key[("swap-gated", "trough_depth", "p90")].significant
    assert diff.delta("swap-gated", "completion_day", "p90") == pytest.approx(15.0, abs=1e-9)
    page = (second.folder / "report.html").read_text()
    assert "Night over night" in page and "shipments[S1].arrival.day" in page


@pytest.mark.slow
def test_the_same_inputs_again_show_no_change_beyond_noise(tmp_path):
    history = tmp_path / "h"
    scenario = scenario_copy(tmp_path)
    night(scenario, history, samples=600)
    paired = night(scenario, history, hours=1, samples=600)
    assert paired.diff.paired and paired.diff.same_file
    assert paired.diff.significant == []
    assert all(c.delta == 0 for c in paired.diff.changes)
    unpaired = night(scenario, history, hours=2, samples=800, seed=2)
    assert not unpaired.diff.paired
    assert unpaired.diff.significant == []


@pytest.mark.slow
def test_two_runs_in_the_same_second_get_distinct_folders(tmp_path):
    history = tmp_path / "h"
    scenario = scenario_copy(tmp_path)
    a = night(scenario, history, samples=200)
    b = night(scenario, history, samples=200)
    assert (a.run_id, b.run_id) == ("2026-12-02T031500Z", "2026-12-02T031500Z-2")
    assert [r["id"] for r in read_index(history)["runs"]] == [a.run_id, b.run_id]


@pytest.mark.parametrize("where", ["mid-simulation", "report", "interrupt"])
@pytest.mark.slow
def test_a_failed_night_leaves_the_history_as_it_was(tmp_path, monkeypatch, where):
    history = tmp_path / "h"
    scenario = scenario_copy(tmp_path)
    first = night(scenario, history, samples=300)
    before = snapshot(history)

    def crash(*args, **kwargs):
        raise KeyboardInterrupt if where == "interrupt" else RuntimeError("disk full")

    if where == "mid-simulation":
        monkeypatch.setattr(tables_module, "metrics_batch", crash)
    elif where == "report":
        monkeypatch.setattr(nightly_module, "write_report", crash)
    else:
        monkeypatch.setattr(nightly_module, "compare_nights", crash)
    with pytest.raises((RuntimeError, KeyboardInterrupt)):
        night(scenario, history, hours=24, samples=300)
    assert snapshot(history) == before                 # index, first folder, nothing added
    assert sorted(p.name for p in history.iterdir()) == [".index.lock", first.run_id,
                                                         "index.json"]


def test_a_corrupt_index_is_an_error_that_says_what_to_do(tmp_path):
    history = tmp_path / "h"
    history.mkdir()
    (history / "index.json").write_text("{not json")
    with pytest.raises(HistoryError, match="move index.json aside"):
        night(scenario_copy(tmp_path), history, samples=100)
    assert list(history.iterdir()) == [history / "index.json"]


@pytest.mark.slow
def test_nightly_cli_reports_the_comparison(tmp_path, capsys):
    history = tmp_path / "h"
    scenario = scenario_copy(tmp_path)
    args = ["nightly", str(scenario), "--history", str(history), "--samples", "300", "--quiet"]
    assert main(args) == 0
    assert "nothing to compare with" in capsys.readouterr().out
    scenario_copy(tmp_path, arrival_day=45)
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "1 scenario input(s) changed" in out
    assert "beyond Monte Carlo noise" in out
    runs = json.loads((history / "index.json").read_text())["runs"]
    assert len(runs) == 2 and (history / runs[1]["folder"] / "diff.md").is_file()


def test_toml_changes_key_arrays_of_tables_by_id():
    old = 'a = 1\nb = [1, 2]\n[[s]]\nid = "x"\nv = 1\n[[s]]\nid = "y"\nv = 2\n'
    new = 'a = 1\nb = [1, 3]\nc = "new"\n[[s]]\nid = "y"\nv = 5\n'
    changes = [(c.key, c.kind, c.old, c.new) for c in toml_changes(old, new)]
    assert changes == [("b", "changed", [1, 2], [1, 3]), ("c", "added", None, "new"),
                       ("s[y].v", "changed", 2, 5), ("s[x].id", "removed", "x", None),
                       ("s[x].v", "removed", 1, None)]
