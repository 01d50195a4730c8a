"""The command line: every shipped scenario validates and runs; errors are one clear line."""
import json
import subprocess
import sys

import pytest

from mcrisk.cli import main

from .conftest import MINIMAL, REFERENCE, ROOT, SCENARIOS

SCENARIO_FILES = sorted(SCENARIOS.glob("*.toml"))
SUMMARY_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                   "completion_day")


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
def test_every_scenario_file_validates(path, capsys):
    assert main(["validate", str(path)]) == 0
    assert "ok" in capsys.readouterr().out


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
@pytest.mark.slow
def test_every_scenario_file_runs_every_strategy(path, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(path), "--samples", "400", "--seed", "3", "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["samples"] == 400 and summary["seed"] == 3
    assert summary["rng"] == "philox4x32-10" and summary["backend"] in ("cpu", "gpu")
    assert len(summary["scenario_sha256"]) == 64 and summary["mcrisk_version"]
    assert set(summary["ranking"]) == set(summary["strategies"])
    for name, metrics in summary["strategies"].items():
        assert name in printed
        for metric in SUMMARY_METRICS:
            stats = metrics[metric]
            assert set(stats) >= {"mean", "p50", "p90", "p99", "p90_ci"}
            assert stats["p50"] <= stats["p90"] <= stats["p99"]
            assert stats["p90_ci"][0] <= stats["p90"] <= stats["p90_ci"][1]
        assert 0.0 <= metrics["power_violation"]["probability"] <= 1.0


@pytest.mark.slow
def test_reference_run_reports_the_five_contract_strategies(tmp_path):
    assert main(["run", str(REFERENCE), "--samples", "2000", "--out", str(tmp_path),
                 "--quiet"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert set(summary["strategies"]) == {"big-bang", "rolling-on-delivery", "swing-gated",
                                          "hybrid-on-delivery", "hybrid-gated"}
    gated = summary["strategies"]["hybrid-gated"]
    assert gated["trough_depth"]["p90"] == 0.0          # gating on acceptance: no trough
    assert summary["strategies"]["big-bang"]["trough_depth"]["p50"] == 2048.0


@pytest.mark.slow
def test_backends_give_the_same_summary(tmp_path):
    docs = {}
    for backend in ("numpy", "cpu"):
        out = tmp_path / backend
        assert main(["run", str(MINIMAL), "--samples", "300", "--backend", backend,
                     "--out", str(out), "--quiet"]) == 0
        docs[backend] = json.loads((out / "summary.json").read_text())["strategies"]
    for name in docs["cpu"]:
        for metric in SUMMARY_METRICS:
            for key in ("p50", "p90", "p99", "mean"):
                assert docs["cpu"][name][metric][key] == pytest.approx(
                    docs["numpy"][name][metric][key], rel=1e-9, abs=1e-9)


@pytest.mark.slow
def test_reference_percentiles_are_stable_across_seeds(tmp_path):
    p90s = []
    for seed in (1, 2):
        out = tmp_path / str(seed)
        assert main(["run", str(REFERENCE), "--samples", "20000", "--seed", str(seed),
                     "--out", str(out), "--quiet"]) == 0
        p90s.append(json.loads((out / "summary.json").read_text())["strategies"])
    for name in p90s[0]:
        for metric in SUMMARY_METRICS:
            a, b = p90s[0][name][metric], p90s[1][name][metric]
            # two 95% intervals of the same quantile overlap unless something is wrong
            assert a["p90_ci"][0] <= b["p90_ci"][1] and b["p90_ci"][0] <= a["p90_ci"][1], \
                (name, metric, a["p90_ci"], b["p90_ci"])


def test_bad_scenario_exits_2_with_located_errors_and_no_traceback(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text(REFERENCE.read_text().replace("horizon_days = 540", "horizon_days = -5")
                   .replace('p90 = 45 }', 'p90 = 4 }'))
    result = subprocess.run([sys.executable, "-m", "mcrisk", "run", str(bad), "--samples", "10"],
                            capture_output=True, text=True, cwd=ROOT)
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    assert any(line.startswith(f"{bad}: scenario.horizon_days = -5:") for line in lines)
    assert any("p90 = 4:" in line for line in lines)


def test_missing_file_is_a_clear_error(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "nope.toml")]) == 2
    assert "nope.toml" in capsys.readouterr().err


def test_gpu_backend_without_a_gpu_fails_cleanly(capsys):
    from mcrisk.backends import gpu_unavailable_reason
    if gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present here")
    assert main(["run", str(MINIMAL), "--samples", "10", "--backend", "gpu", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "--backend gpu cannot run here" in err and "Traceback" not in err


def test_bad_flags_are_usage_errors(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["run", str(MINIMAL), "--samples", "0"])
    assert exit_info.value.code == 2
    assert "must be >= 1" in capsys.readouterr().err


@pytest.mark.slow
def test_run_prints_the_drivers_of_each_strategys_p90_trough(tmp_path, capsys):
    assert main(["run", str(REFERENCE), "--samples", "5000", "--out", str(tmp_path),
                 "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(l for l in out.splitlines() if l.strip().startswith("hybrid-on-delivery ["))
    assert "hall B energization slip" in line.split(";")[0]     # its first driver
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["drivers"]["scenarios"] == 5000
    assert summary["paired"]["leader"] == summary["ranking"][0]


@pytest.mark.slow
def test_risk_modes_from_the_command_line(tmp_path, capsys):
    done = {}
    for mode in ("file", "pre", "post"):
        out = tmp_path / mode
        assert main(["run", str(REFERENCE), "--samples", "3000", "--risks", mode,
                     "--out", str(out), "--quiet"]) == 0
        summary = json.loads((out / "summary.json").read_text())
        done[mode] = summary["strategies"]["hybrid-gated"]["completion_day"]["mean"]
        assert (summary["risks"]["enabled"] == []) == (mode == "file")
    assert done["pre"] > done["post"] > done["file"]
    assert main(["run", str(REFERENCE), "--samples", "10", "--disable-risk", "nope",
                 "--out", str(tmp_path / "x"), "--quiet"]) == 2
    assert "unknown risk ids ['nope']" in capsys.readouterr().err


def test_compare_prints_the_paired_difference(capsys):
    assert main(["compare", str(REFERENCE), "hybrid-on-delivery", "hybrid-gated",
                 "--samples", "4000", "--quiet"]) == 0
    out = capsys.readouterr().out
    row = next(l for l in out.splitlines() if l.startswith("trough_depth"))
    assert "100.0%" in row                         # on-delivery is never better on depth
    assert main(["compare", str(REFERENCE), "hybrid-gated", "nope", "--samples", "10",
                 "--quiet"]) == 2
    assert "no strategy 'nope'" in capsys.readouterr().err


@pytest.mark.slow
def test_precision_run_reports_how_many_scenarios_it_took(tmp_path, capsys):
    assert main(["run", str(MINIMAL), "--precision", "5%", "--samples", "2000",
                 "--out", str(tmp_path), "--quiet"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert summary["precision"]["met"] and summary["samples"] >= 2000
    assert summary["samples"] == summary["precision"]["samples"]
    assert "precision 5.0%" in capsys.readouterr().out
