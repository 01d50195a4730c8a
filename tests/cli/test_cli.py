"""The command line: every shipped scenario validates and runs; errors are one clear line."""
import json
import re
import subprocess
import sys

import pytest

import mcrisk.backends.chunks as simulate_module
from mcrisk.cli import build_parser, main
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..conftest import MINIMAL, REFERENCE, ROOT, SCENARIOS

SCENARIO_FILES = sorted(SCENARIOS.glob("*.toml"))
# the scenarios proper: scenarios/ also holds optimize's search files (a [search] table)
RUNNABLE_FILES = [p for p in SCENARIO_FILES if "\n[search]" not in "\n" + p.read_text()]
SUMMARY_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                   "completion_day")


@pytest.mark.parametrize("path", SCENARIO_FILES, ids=lambda p: p.name)
def test_every_scenario_file_validates(path, capsys):
    assert main(["validate", str(path)]) == 0
    assert "ok" in capsys.readouterr().out


def test_validate_counts_in_the_right_number(tmp_path, capsys):
    lines = MINIMAL.read_text().splitlines(keepends=True)
    second = [i for i, line in enumerate(lines) if line.startswith("[[strategies]]")][1]
    one = tmp_path / "one-strategy.toml"
    one.write_text("".join(lines[:second]))          # the file's first strategy only
    assert main(["validate", str(one)]) == 0
    assert "ok (1 strategy, 2 existing units, 2 incoming units)" in capsys.readouterr().out


@pytest.mark.parametrize("path", RUNNABLE_FILES, ids=lambda p: p.name)
@pytest.mark.slow
def test_every_scenario_file_runs_every_strategy(path, tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["run", str(path), "--samples", "400", "--seed", "3", "--out", str(out),
                 "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert summary["samples"] == 400 and summary["seed"] == 3
    assert summary["rng"] == "philox4x32-10" and summary["backend"] in ("numba", "cuda")
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


@pytest.mark.parametrize("text, value", [("20000", 20000), ("20,000", 20000), ("1,000,000", 10**6),
                                         ("20_000", 20000), (" 300 ", 300)])
def test_sample_counts_may_be_grouped_by_thousands(text, value):
    assert build_parser().parse_args(["run", "x.toml", "--samples", text]).samples == value


@pytest.mark.parametrize("text", ["1,0,0", "10,00", "1_0_0", "1,000_000", "1e6", "-5", ""])
def test_badly_grouped_sample_counts_are_errors_not_other_numbers(text, capsys):
    with pytest.raises(SystemExit) as stop:
        build_parser().parse_args(["run", "x.toml", "--samples", text])
    assert stop.value.code == 2
    assert "is not a whole number (write e.g. 20000, 20,000 or 20_000)" in capsys.readouterr().err


def test_sample_counts_beyond_the_cap_or_the_memory_are_refused(tmp_path, monkeypatch, capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["run", "x.toml", "--samples", "100000000000000"])
    assert "must be at most 100,000,000" in capsys.readouterr().err
    monkeypatch.setattr(simulate_module, "physical_memory", lambda: 2 * 10**9)   # a 2 GB machine
    # kept in memory up to a quarter of the RAM (0.5 GB: 5,208,333 scenarios x 2 x 6 x 8
    # bytes), past it in a file: 50,000,000 scenarios keep 4.8 GB there, and what is left
    # (the analysis's two columns of 8 bytes a scenario, ...) still fits in 1.8 GB
    assert simulate_module.memory_needed(compile_scenario(load_scenario(MINIMAL)), 50_000_000,
                                         available=2 * 10**9) < 1.8e9
    monkeypatch.setattr(simulate_module, "physical_memory", lambda: 10**9)       # a 1 GB machine
    assert main(["run", str(MINIMAL), "--samples", "50,000,000", "--out", str(tmp_path / "o"),
                 "--quiet"]) == 2
    err = capsys.readouterr().err
    assert re.match(r"mcrisk: --samples = 50,000,000: this run would need about 1\.0 GB of "
                    r"memory \(the milestones, the drawn inputs and working memory; the "
                    r"per-scenario results are in a temporary file\) and this machine has "
                    r"1\.0 GB, of which a run may use 90% \(use at most about 4\d,\d{3},\d{3} "
                    r"scenarios here", err)
    assert not (tmp_path / "o").exists()
    monkeypatch.setattr(simulate_module, "physical_memory", lambda: 2 * 10**9)   # a 2 GB machine
    assert main(["run", str(MINIMAL), "--precision", "2%", "--max-samples", "30,000,000",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2    # it might grow that far
    assert "mcrisk: --max-samples = 30,000,000: this run would need" in capsys.readouterr().err


def test_compare_suggests_the_strategy_meant(capsys):
    assert main(["compare", str(REFERENCE), "hybrid-gatd", "big-bang", "--samples", "10",
                 "--quiet"]) == 2
    assert ("strategy A = 'hybrid-gatd': no strategy 'hybrid-gatd' in this file (did you mean "
            "'hybrid-gated'?") in capsys.readouterr().err


def test_compare_with_too_few_scenarios_gives_no_zero_width_interval(capsys):
    assert main(["compare", str(MINIMAL), "drain-on-day", "swap-gated", "--samples", "1",
                 "--backend", "numpy", "--quiet"]) == 0
    rows = [l for l in capsys.readouterr().out.splitlines() if l.startswith("trough_days")]
    assert "n/a (needs >= 2 scenarios)" in rows[0] and "n/a (needs >= 36 scenarios)" in rows[0]
    assert "[" not in rows[0]


def test_summary_json_is_strict_with_too_few_scenarios_for_an_interval(tmp_path):
    def no_constants(name):
        raise AssertionError(f"summary.json holds {name}")

    assert main(["run", str(MINIMAL), "--samples", "20", "--backend", "numpy",
                 "--out", str(tmp_path), "--quiet"]) == 0
    summary = json.loads((tmp_path / "summary.json").read_text(), parse_constant=no_constants)
    depth = summary["strategies"]["drain-on-day"]["trough_days"]
    assert depth["p90_ci"] is None and "needs at least 36" in depth["p90_ci_unavailable"]
    assert "[n/a]" in (tmp_path / "report.html").read_text()


def test_precision_that_could_never_be_met_is_refused(tmp_path, capsys):
    assert main(["run", str(MINIMAL), "--precision", "1%", "--max-samples", "1",
                 "--out", str(tmp_path / "o"), "--quiet"]) == 2
    assert ("--max-samples = 1: --precision can never be met, since a 95% interval of the P90 "
            "needs at least 36 scenarios") in capsys.readouterr().err


@pytest.mark.parametrize("floor", ["0", "-1", "nan", "inf"])
def test_a_precision_floor_that_no_interval_could_meet_is_a_usage_error(floor, capsys):
    # With a floor of 0, a P90 of 0 had to be known to within 0: a ZeroDivisionError
    # traceback (or a run that could never end) instead of a message.
    with pytest.raises(SystemExit) as stop:
        main(["run", str(MINIMAL), "--precision", "2%", "--precision-floor", floor,
              "--max-samples", "2000", "--quiet"])
    assert stop.value.code == 2
    err = capsys.readouterr().err
    assert "--precision-floor: must be a number > 0" in err and "Traceback" not in err


def test_run_on_a_search_file_says_to_optimize_it(capsys):
    """A search file handed to `mcrisk run` is one located error that names the command to
    use, not a page of missing scenario sections."""
    search = SCENARIOS / "reference-search.toml"
    assert main(["run", str(search), "--samples", "100", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert "search space for `mcrisk optimize`" in err and "mcrisk optimize" in err
    assert "missing" not in err


@pytest.mark.parametrize("value, text", [(-1e-6, "0.0"), (-0.0, "0.0"), (-0.04, "0.0"),
                                         (-0.05, "-0.1"), (0.0, "0.0"), (-250.0, "-250"),
                                         (1234.5, "1,234"), (None, "n/a")])
def test_the_terminal_never_prints_a_negative_zero(value, text):
    from mcrisk.cli.text import _fmt
    assert _fmt(value) == text
