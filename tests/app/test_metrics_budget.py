"""metrics.parquet, one row per scenario x strategy, is written by default up to a row budget
(mcrisk.core.outputs.METRICS_ROW_BUDGET); above it only when asked (--scenarios-out), and
the run says what it kept: summary.json's `metrics_parquet`, the terminal, report.html. A
nightly without it is compared unpaired, from its intervals.json."""
import datetime as dt
import json

import pytest

import mcrisk.core.outputs as outputs
from mcrisk.app.nightly import run_nightly
from mcrisk.cli import main

from ..conftest import MINIMAL
from ..helpers import schema_errors

NOW = dt.datetime(2026, 12, 2, 3, 15, 0, tzinfo=dt.timezone.utc)


def _run(out, *extra):
    return main(["run", str(MINIMAL), "--samples", "300", "--backend", "numpy",
                 "--out", str(out), "--quiet", "--no-mitigation", *extra])


def test_the_budget_decides_and_the_options_override():
    assert outputs.metrics_parquet_entry(5_000_000) == (True, None)
    assert outputs.metrics_parquet_entry(5_000_001)[0] is False
    assert outputs.metrics_parquet_entry(10, scenarios_out=False)[0] is False
    written, entry = outputs.metrics_parquet_entry(10, scenarios_out=True, budget=5)
    assert written and entry == {"written": True, "rows": 10, "budget": 5,
                                 "why": "--scenarios-out"}


def test_a_run_over_the_budget_writes_no_metrics_parquet_and_says_so(tmp_path, monkeypatch,
                                                                      capsys):
    monkeypatch.setattr(outputs, "METRICS_ROW_BUDGET", 100)
    out = tmp_path / "out"
    assert _run(out) == 0
    assert not (out / "metrics.parquet").exists()
    assert (out / "capacity_bands.parquet").exists() and (out / "report.html").exists()
    summary = json.loads((out / "summary.json").read_text())
    entry = summary["metrics_parquet"]
    assert entry["written"] is False and entry["budget"] == 100
    assert entry["rows"] == 300 * len(summary["strategies"])
    assert schema_errors(summary) == []
    printed = capsys.readouterr().out
    assert "metrics.parquet not written" in printed and "--scenarios-out" in printed
    assert "metrics.parquet not written" in (out / "report.html").read_text()


def test_scenarios_out_writes_it_anyway_and_the_budget_option_too(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "METRICS_ROW_BUDGET", 100)
    assert _run(tmp_path / "a", "--scenarios-out") == 0
    assert (tmp_path / "a" / "metrics.parquet").exists()
    summary = json.loads((tmp_path / "a" / "summary.json").read_text())
    assert summary["metrics_parquet"]["written"] is True
    assert schema_errors(summary) == []
    assert _run(tmp_path / "b", "--scenarios-budget", "10000") == 0
    assert (tmp_path / "b" / "metrics.parquet").exists()
    assert "metrics_parquet" not in json.loads((tmp_path / "b" / "summary.json").read_text())


def test_the_default_run_writes_it_and_no_key(tmp_path):
    assert _run(tmp_path / "out") == 0
    assert (tmp_path / "out" / "metrics.parquet").exists()
    assert "metrics_parquet" not in json.loads((tmp_path / "out" / "summary.json").read_text())


def test_no_scenarios_out_never_writes_it(tmp_path, capsys):
    assert _run(tmp_path / "out", "--no-scenarios-out") == 0
    assert not (tmp_path / "out" / "metrics.parquet").exists()
    assert "--no-scenarios-out" in capsys.readouterr().out


@pytest.mark.parametrize("which", ["tonight", "last night"])
def test_a_nightly_without_metrics_parquet_compares_unpaired_from_intervals_json(tmp_path,
                                                                                 which):
    history = tmp_path / "history"

    def night(hours, scenarios_out):
        return run_nightly(str(MINIMAL), history, samples=400, seed=1, backend="cpu",
                           now=NOW + dt.timedelta(hours=hours), scenarios_out=scenarios_out)

    first = night(0, False if which == "last night" else None)
    second = night(24, False if which == "tonight" else None)
    assert (first.folder / "metrics.parquet").exists() == (which == "tonight")
    assert (second.folder / "metrics.parquet").exists() == (which == "last night")
    diff = second.diff
    assert diff is not None and not diff.paired
    assert "has no metrics.parquet" in diff.pairing_note
    assert "intervals.json" in diff.pairing_note
    assert diff.changes and not diff.reported        # the same inputs: nothing beyond noise
