"""Nightly runs (mcrisk.app.nightly, mcrisk.report.nightly.diff): history folders, the index,
diffs, safety."""
from __future__ import annotations

import builtins
import datetime as dt
import hashlib
import io
import json
import os
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from mcrisk.app import nightly as nightly_module
from mcrisk.results.statistics import summarize
from mcrisk.cli import main
from mcrisk.core.definitions import METRICS
from mcrisk.app.nightly import HistoryError, prune_large_files, read_index, run_nightly
from mcrisk.report import tables as tables_module
from mcrisk.report.nightly.alerts import AlertOutcome, evaluate, parse_condition
from mcrisk.report.nightly.diff import (INTERVALS_FILE, Materiality, Night, compare_nights, diff_markdown,
                                intervals_document, night_intervals, parse_materiality,
                                read_night, toml_changes)
from mcrisk.report.html.page import alerts_html, trend_html
from mcrisk.report.markdown import summary_markdown
from mcrisk.report.nightly.trend import changed_nights, read_trend, trend_chart
from ..helpers import ROOT

MINIMAL = ROOT / "scenarios" / "minimal.toml"
REFERENCE = MINIMAL.parent / "reference-2048.toml"
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
    conditions = [parse_condition("swap-gated.completion_day.p50.delta > 10"),
                  parse_condition("any.completion_day.p90.delta > 100")]
    second = night(scenario_copy(base / "b", arrival_day=45), history, hours=24,
                   conditions=conditions)
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


# -- issue 9: noise and materiality, unpaired fallback, --keep-large, trend, alerts box --------


N = 2000
COMPLETION = METRICS.index("completion_day")
DEPTH = METRICS.index("trough_depth")


def values(seed: int = 0, completion: float = 300.0, depth: float = 100.0) -> np.ndarray:
    """values[scenario, metric] of one strategy: completion ~ Normal(completion, 20), a fixed
    trough depth, days and shortfall from the completion, homeless 0, no power violation."""
    rng = np.random.default_rng(seed)
    out = np.zeros((N, len(METRICS)))
    out[:, COMPLETION] = rng.normal(completion, 20.0, N)
    out[:, DEPTH] = depth
    out[:, METRICS.index("trough_days")] = out[:, COMPLETION] / 10
    out[:, METRICS.index("shortfall_gpu_days")] = out[:, COMPLETION] * 7
    return out


def synthetic_night(run_id: str, per_strategy: dict, seed: int = 1, keys=None,
                    keep_values: bool = True) -> Night:
    names = tuple(per_strategy)
    metrics = np.stack([per_strategy[n] for n in names], axis=1)
    summary = {"seed": seed, "samples": N, "scenario_sha256": "0" * 64,
               "strategies": summarize(metrics, names)}
    per = {n: (np.arange(N), v) for n, v in per_strategy.items()}
    if keep_values:
        return Night(run_id, summary, keys or {"a": 1}, per)
    return Night(run_id, summary, keys or {"a": 1}, None, night_intervals(per_strategy),
                 "its intervals from intervals.json")


def test_materiality_thresholds_by_hand():
    m = Materiality()
    # 1% of the larger value, at least one unit of the metric
    assert m.threshold("completion_day", 600.0, 606.0) == pytest.approx(6.06)
    assert not m.is_material("completion_day", 600.0, 605.99)
    assert m.is_material("completion_day", 600.0, 606.1)
    assert not m.is_material("trough_depth", 0.0, 0.99) and m.is_material("trough_depth", 0.0, 1.0)
    assert not m.is_material("power_violation", 0.010, 0.0109)      # floor 0.001
    assert m.is_material("power_violation", 0.010, 0.0111)
    assert not m.is_material("trough_days", 5.0, 5.0)                # no change is no change
    assert m.is_material("trough_days", float("nan"), 1.0) is None


def test_materiality_option_parses_relative_and_absolute_parts_and_names_every_bad_one():
    m = parse_materiality(["2%", "trough_days=3, completion_day=0"])
    assert m.relative == pytest.approx(0.02)
    assert m.floor("trough_days") == 3.0 and m.floor("completion_day") == 0.0
    assert m.floor("trough_depth") == 1.0                             # default kept
    assert not m.is_material("trough_days", 100.0, 102.9)             # 3 > 2.9
    assert m.is_material("completion_day", 100.0, 102.1)              # 2% of 102.1
    with pytest.raises(ValueError) as info:
        parse_materiality(["2", "x=1", "trough_days=-1,trough_days=abc", "5%"])
    message = str(info.value)
    for bad in ("'2': write a relative amount", "'x=1': unknown metric 'x'",
                "'trough_days=-1': must be a number >= 0", "'trough_days=abc': 'abc' is not"):
        assert bad in message


def test_cli_rejects_a_bad_materiality_before_running(tmp_path, capsys):
    history = tmp_path / "h"
    code = main(["nightly", str(MINIMAL), "--history", str(history), "--samples", "100",
                 "--materiality", "1", "--materiality", "homeless=2"])
    assert code == 2
    err = capsys.readouterr().err
    assert "--materiality" in err and "'1'" in err and "unknown metric 'homeless'" in err
    assert not history.exists()
    with pytest.raises(SystemExit) as stop:                           # argparse: usage
        main(["nightly", str(MINIMAL), "--history", str(history), "--keep-large", "0"])
    assert stop.value.code == 2 and "must be >= 1" in capsys.readouterr().err


def test_a_change_of_a_hundredth_of_a_day_is_never_reported_nor_alerted():
    """completion P50 +0.015 days was 'a change' that breached `delta >= 0`."""
    x = values(0)
    for label, y in (("shift", x + [0, 0, 0, 0, 0.015, 0]),
                     ("noise", x + np.c_[np.zeros((N, 4)),
                                         np.random.default_rng(7).normal(0, 0.5, N),
                                         np.zeros(N)])):
        diff = compare_nights(synthetic_night("b", {"a": y}), synthetic_night("a", {"a": x}))
        p50 = diff.change("a", "completion_day", "p50")
        assert abs(p50.delta) < 0.1 and not p50.reported, label
        if label == "shift":          # every scenario moved: the mean beyond noise, immaterial
            mean = diff.change("a", "completion_day", "mean")
            assert mean.significant and mean.material is False and not mean.reported
            assert p50.material is False
        breaches, notes = evaluate([parse_condition("a.completion_day.p50.delta >= 0")],
                                   diff_summary(y), diff)
        assert breaches == [], label
        assert diff.reported == [], label


def diff_summary(per: np.ndarray) -> dict:
    return {"strategies": summarize(per[:, None, :], ("a",))}


def test_a_real_change_is_reported_and_changes_are_ordered_by_relative_size():
    x_a, x_b = values(0), values(1, depth=100.0)
    y_a = x_a + [0, 0, 0, 0, 15.0, 0]                # completion +15 of ~315: about 4.8%
    y_b = x_b + [50.0, 0, 0, 0, 0, 0]                # depth 100 -> 150: 50/150 = 33%
    diff = compare_nights(synthetic_night("b", {"a": y_a, "b": y_b}),
                          synthetic_night("a", {"a": x_a, "b": x_b}))
    assert diff.paired
    reported = diff.reported
    assert [(c.strategy, c.metric) for c in reported[:4]] == [("b", "trough_depth")] * 4
    assert reported[0].relative == pytest.approx(1 / 3)
    p50 = diff.change("a", "completion_day", "p50")
    assert p50.reported and p50.delta == pytest.approx(15.0)
    assert p50.relative == pytest.approx(15.0 / p50.new)
    assert p50.relative == pytest.approx(15.0 / np.quantile(y_a[:, COMPLETION], 0.5))
    relatives = [c.relative for c in reported]
    assert relatives == sorted(relatives, reverse=True)
    md = diff_markdown(diff)
    listed = md.split("## Changes beyond Monte Carlo noise")[1].split("## All")[0]
    assert listed.index("b trough_depth") < listed.index("a completion_day P50")
    assert "+50, +50%" in listed and "b trough_depth MEAN: 100 -> 150" in listed


def test_unpaired_against_a_night_without_metrics_parquet_says_so_and_still_judges():
    x = values(0)
    previous = synthetic_night("a", {"a": x}, keep_values=False)
    later = values(3, completion=315.0)               # independent draws, 15 days later
    same = values(4)                                  # independent draws, same distribution
    moved = compare_nights(synthetic_night("b", {"a": later}), previous)
    assert not moved.paired and "a has no metrics.parquet" in moved.pairing_note
    assert "intervals.json" in moved.pairing_note
    for stat in ("mean", "p50", "p90"):
        assert moved.change("a", "completion_day", stat).reported, stat
    still = compare_nights(synthetic_night("b", {"a": same}), previous)
    assert [c for c in still.reported if c.metric == "completion_day"] == []
    assert "Welch" in still.change("a", "completion_day", "mean").method


def write_night_folder(folder: Path, per: dict[str, np.ndarray], intervals: bool = True):
    names = tuple(per)
    metrics = np.stack([per[n] for n in names], axis=1)
    folder.mkdir(parents=True)
    summary = {"seed": 1, "samples": N, "scenario_sha256": "0" * 64,
               "scenario_name": "s", "strategies": summarize(metrics, names)}
    (folder / "summary.json").write_text(json.dumps(summary))
    (folder / "scenario.toml").write_text("a = 1\n")
    if intervals:
        (folder / INTERVALS_FILE).write_text(json.dumps(intervals_document(metrics, names)))
    return summary


def test_read_night_without_metrics_parquet_uses_intervals_json_or_the_summary(tmp_path):
    x = values(0)
    write_night_folder(tmp_path / "n1", {"a": x})
    night = read_night("n1", tmp_path / "n1")
    assert night.per_scenario is None
    assert night.intervals["a"]["completion_day"]["n"] == N
    assert night.intervals["a"]["completion_day"]["mean"] == pytest.approx(x[:, COMPLETION].mean())
    assert night.intervals["a"]["power_violation"] == {"n": N, "count": 0}
    tonight = synthetic_night("b", {"a": values(3, completion=315.0)})
    assert compare_nights(tonight, night).change("a", "completion_day", "p50").reported
    (tmp_path / "n1" / INTERVALS_FILE).unlink()
    bare = read_night("n1", tmp_path / "n1")
    assert "no intervals.json" in bare.intervals_source
    diff = compare_nights(tonight, bare)
    assert "only the P90s and the power probability" in diff.pairing_note
    p50, p90 = (diff.change("a", "completion_day", s) for s in ("p50", "p90"))
    assert p50.significant is None and not p50.reported and "no 95% interval" in p50.method
    assert p90.reported                                # summary.json's p90_ci suffices
    (tmp_path / "n1" / INTERVALS_FILE).write_text('{"schema": 1, "strategies": {"a": 5}}')
    assert "unusable" in read_night("n1", tmp_path / "n1").intervals_source


def fake_history(history: Path, nights: list[tuple[str, str]]) -> None:
    """index.json and folders with small stand-ins for the large files: (id, scenario name)."""
    history.mkdir()
    runs = []
    for run_id, name in nights:
        folder = history / run_id
        folder.mkdir()
        for file in ("metrics.parquet", "capacity_bands.parquet", "summary.json", "report.html",
                     "scenario.toml"):
            (folder / file).write_text(file)
        runs.append({"id": run_id, "folder": run_id, "status": "ok", "scenario_name": name})
    (history / "index.json").write_text(json.dumps({"schema": 1, "runs": runs}))


def test_keep_large_deletes_only_the_large_files_of_older_nights_of_the_scenario(tmp_path):
    history = tmp_path / "h"
    fake_history(history, [("n1", "s"), ("n2", "other"), ("n3", "s"), ("n4", "s")])
    pruned, notes = prune_large_files(history, "s", keep=2)
    assert pruned == ["n1"] and notes == []
    assert sorted(p.name for p in (history / "n1").iterdir()) == \
        ["report.html", "scenario.toml", "summary.json"]
    for kept in ("n2", "n3", "n4"):
        assert (history / kept / "metrics.parquet").is_file()
        assert (history / kept / "capacity_bands.parquet").is_file()
    assert prune_large_files(history, "s", keep=2) == ([], [])       # nothing left to delete
    assert prune_large_files(history, "s", keep=1)[0] == ["n3"]
    with pytest.raises(Exception, match="at least 1"):
        run_nightly(str(MINIMAL), history, samples=100, keep_large=0)


def test_nightly_passes_risks_and_precision_to_the_run(tmp_path, monkeypatch):
    seen = {}

    class Stop(Exception):
        pass

    def fake_run(register, **kwargs):
        seen.update(kwargs, register=register)
        raise Stop

    monkeypatch.setattr(nightly_module, "run_scenario", fake_run)
    with pytest.raises(Stop):
        main(["nightly", str(REFERENCE), "--history", str(tmp_path / "h"), "--quiet",
              "--risks", "pre", "--disable-risk", "cdu-recall", "--disable-risk",
              "allocation-cut", "--disable-risk", "cdu-recall",
              "--precision", "5%", "--precision-floor", "2", "--max-samples", "50000"])
    register = seen["register"]              # the scenario as loaded, its register set
    assert register.mode == "pre" and register.disabled_by_cli == ("cdu-recall", "allocation-cut")
    assert [r.id for r in register.scenario.risks if r.enabled] == ["utility-slip"]
    assert register.scenario.path == str(REFERENCE)
    target = seen["precision"]
    assert (target.relative, target.floor, target.max_samples) == (0.05, 2.0, 50_000)
    assert not list((tmp_path / "h").glob(".partial-*"))


def test_an_unknown_disable_risk_fails_before_a_night_is_claimed(tmp_path, capsys):
    code = main(["nightly", str(MINIMAL), "--history", str(tmp_path / "h"), "--quiet",
                 "--disable-risk", "nosuch"])
    assert code == 2 and f"mcrisk: {MINIMAL}: " in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []      # no .partial folder, nor the history it made


def test_a_night_reads_its_scenario_file_once(tmp_path, monkeypatch):
    """Parsed, hashed into summary.json and copied into the night's folder from one read:
    the file is opened once (it was opened three times), and the copy is the bytes whose
    hash summary.json records."""
    scenario = scenario_copy(tmp_path)
    data = scenario.read_bytes()
    opened = []

    def counting(real):
        def open_(file, *args, **kwargs):
            if isinstance(file, (str, bytes, os.PathLike)) and \
                    os.path.realpath(file) == os.path.realpath(scenario):
                opened.append(real.__name__)
            return real(file, *args, **kwargs)
        return open_

    for module, name in ((os, "open"), (io, "open"), (builtins, "open")):
        monkeypatch.setattr(module, name, counting(getattr(module, name)))
    result = night(scenario, tmp_path / "h", samples=100)
    monkeypatch.undo()
    assert len(opened) == 1, opened
    assert (result.folder / "scenario.toml").read_bytes() == data
    assert result.run.summary["scenario_sha256"] == hashlib.sha256(data).hexdigest()
    assert result.run.summary["scenario"] == str(scenario)


def trend_summary(p90: float, sha: str = "a" * 64) -> dict:
    stats = {"mean": p90, "p50": p90, "p90": p90, "p99": p90, "p90_ci": [p90 - 1, p90 + 1]}
    return {"scenario_sha256": sha, "seed": 1, "samples": 100,
            "strategies": {"x": {m: dict(stats) for m in METRICS[:-1]} | {
                "power_violation": {"probability": 0.0}}}}


def test_trend_reads_the_history_skips_unreadable_nights_and_says_when_capped(tmp_path):
    history = tmp_path / "h"
    history.mkdir()
    entries = []
    for i, (p90, sha) in enumerate([(1.0, "a"), (2.0, "a"), (None, "a"), (4.0, "b")]):
        folder = history / f"n{i}"
        folder.mkdir()
        text = "{broken" if p90 is None else json.dumps(trend_summary(p90, sha * 64))
        (folder / "summary.json").write_text(text)
        entries.append({"id": f"n{i}", "folder": f"n{i}"})
    trend = read_trend(history, entries, "tonight", trend_summary(5.0, "b" * 64))
    assert [n.run_id for n in trend.nights] == ["n0", "n1", "n3", "tonight"]
    assert [n.p90["x"]["trough_days"][0] for n in trend.nights] == [1.0, 2.0, 4.0, 5.0]
    assert trend.nights[0].p90["x"]["trough_days"][1] == [0.0, 2.0]
    assert len(trend.notes) == 1 and "n2 left out" in trend.notes[0]
    assert changed_nights(trend) == [2]                # n1 (sha a) -> n3 (sha b)
    capped = read_trend(history, entries, "tonight", trend_summary(5.0), limit=2)
    assert [n.run_id for n in capped.nights] == ["n3", "tonight"]
    assert "the latest 2 nights are shown; 3 older nights of this history are not" in \
        capped.notes[-1]
    png = trend_chart(trend, ("x",), {"x": "#0072B2"})
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    page = trend_html(trend, png)
    assert "last 4 nights" in page and "n2 left out" in page
    assert "first readable night" in trend_html(read_trend(history, [], "t", trend_summary(1)),
                                                None)


def test_the_alerts_box_names_breaches_and_changed_inputs_in_html_and_markdown():
    x, y = values(0), values(0) + [0, 0, 0, 0, 15.0, 0]
    keys_old = {"shipments[S1].arrival.day": 30, "name": "<b>n</b>"}
    keys_new = {"shipments[S1].arrival.day": 45, "name": "<b>n</b>"}
    tonight = synthetic_night("b", {"a<i>": y}, keys=keys_new)
    diff = compare_nights(tonight, synthetic_night("a", {"a<i>": x}, keys=keys_old))
    diff = replace(diff, same_file=False)
    conditions = [parse_condition("any.completion_day.p50.delta > 10"),
                  parse_condition("any.trough_depth.p90 > 1000")]
    breaches, notes = evaluate(conditions, tonight.summary, diff)
    outcome = AlertOutcome(tuple(conditions), tuple(breaches), tuple(notes))
    page = alerts_html(outcome, diff)
    assert "1 --fail-if breach</b>" in page and "any.completion_day.p50.delta &gt; 10" in page
    assert "<b>a&lt;i&gt;</b> completion_day P50 change = <b>15</b> &gt; 10" in page
    assert "changed <code>shipments[S1].arrival.day</code>: 30 → 45" in page
    assert "<i>" not in page
    md = summary_markdown({**tonight.summary, "scenario": "s.toml", "scenario_name": "s",
                           "backend": "cpu", "mcrisk_version": "0", "ranking": ["a<i>"]},
                          [], diff, "b", alerts=outcome)
    top = md.split("| rank |")[0]
    assert "**1 --fail-if breach** (the nightly exits 3):" in top
    assert "**a&lt;i&gt;** completion_day P50 change = 15 &gt; 10" in top
    assert "- changed `shipments[S1].arrival.day`: 30 -> 45" in top
    quiet = alerts_html(AlertOutcome(tuple(conditions[1:]), (), ()), None)
    assert "No --fail-if condition breached (1 checked" in quiet


@pytest.mark.slow
def test_breaches_and_named_inputs_are_in_the_nights_report_and_summary(two_nights):
    history, _, second = two_nights
    assert [(b.strategy, b.value) for b in second.breaches] == \
        [("swap-gated", pytest.approx(15.0))]
    page = (second.folder / "report.html").read_text()
    top = page.split('id="findings"')[0]            # the box comes before the findings
    assert "Tonight: alerts and changes" in top and "1 --fail-if breach</b>" in top
    assert "<b>swap-gated</b> completion_day P50 change = <b>15</b> &gt; 10" in top
    assert "changed <code>shipments[S1].arrival.day</code>: 30 → 45" in top
    assert "No --fail-if" not in top
    md = (second.folder / "summary.md").read_text().split("| rank |")[0]
    assert "**swap-gated** completion_day P50 change = 15 &gt; 10" in md
    assert "- changed `shipments[S1].arrival.day`: 30 -> 45" in md
    alerts = json.loads((second.folder / "alerts.json").read_text())
    assert "since 2026-12-02T031500Z, paired test p<" in alerts["breaches"][0]["detail"]
    assert "material: at least 1% of" in alerts["materiality"]
    assert (second.folder / "intervals.json").is_file()
    assert "Trend across nights" in page and "last 2 nights" in page


@pytest.mark.slow
def test_keep_large_then_a_comparison_with_a_pruned_night_is_unpaired_and_says_so(tmp_path):
    history = tmp_path / "h"
    scenario = scenario_copy(tmp_path)
    first = night(scenario, history, keep_large=1)
    second = night(scenario, history, hours=24, keep_large=1)
    assert second.pruned == (first.run_id,)
    kept = {p.name for p in (history / first.run_id).iterdir()}
    assert not kept & {"metrics.parquet", "capacity_bands.parquet"}
    assert kept >= {"scenario.toml", "summary.json", "intervals.json", "alerts.json",
                    "report.html", "summary.md"}
    assert (history / second.run_id / "metrics.parquet").is_file()
    # the second night is damaged: the third is compared with the first, which has no
    # metrics.parquet any more, and its shipment now arrives 15 days later
    (history / second.run_id / "summary.json").write_text("{broken")
    scenario_copy(tmp_path, arrival_day=45)
    third = night(scenario, history, hours=48, keep_large=1)
    diff = third.diff
    assert diff.previous == first.run_id and not diff.paired
    assert f"{first.run_id} has no metrics.parquet" in diff.pairing_note
    assert "its intervals from intervals.json" in diff.pairing_note
    completion = diff.change("swap-gated", "completion_day", "p50")
    assert completion.reported and completion.delta == pytest.approx(15.0, abs=1e-9)
    assert not diff.change("swap-gated", "trough_depth", "p90").reported
    assert f"{first.run_id} has no metrics.parquet" in (third.folder / "diff.md").read_text()
    page = (third.folder / "report.html").read_text()
    assert f"trend: {second.run_id} left out" in page and "last 2 nights" in page
    assert not (history / second.run_id / "metrics.parquet").exists()    # pruned in turn


@pytest.mark.slow
def test_nightly_runs_the_risk_register_it_is_told_to(tmp_path, capsys):
    reference = MINIMAL.parent / "reference-2048.toml"
    args = ["nightly", str(reference), "--history", str(tmp_path / "h"), "--samples", "200",
            "--backend", "cpu", "--quiet", "--risks", "pre", "--disable-risk", "cdu-recall"]
    assert main(args) == 0
    runs = json.loads((tmp_path / "h" / "index.json").read_text())["runs"]
    summary = json.loads((tmp_path / "h" / runs[0]["folder"] / "summary.json").read_text())
    assert sorted(summary["risks"]["enabled"]) == ["allocation-cut", "utility-slip"]
    assert summary["risks"]["disabled"] == ["cdu-recall"]
    assert main(args[:-4] + ["--risks", "off"]) == 0
    out = capsys.readouterr().out
    assert "run setting: risk utility-slip off" in out and "run setting: risk mode off" in out
    assert "risks.register[" not in out
