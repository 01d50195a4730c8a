"""--fail-if conditions (mcrisk.report.alerts): parsing without eval, checks, exit codes 2 and 3."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcrisk.cli import main
from mcrisk.report.alerts import AlertError, check_strategies, evaluate, parse_condition

MINIMAL = Path(__file__).resolve().parents[1] / "scenarios" / "minimal.toml"


def summary_of(**p90_depth) -> dict:
    """A summary.json-shaped dict: given P90 trough depths, power probability 0."""
    return {"strategies": {name: {"trough_depth": {"p90": value, "p50": 0.0, "mean": 0.0,
                                                   "p99": value},
                                  "power_violation": {"probability": 0.0}}
                           for name, value in p90_depth.items()}}


@pytest.mark.parametrize("text, parts", [
    ("hybrid-gated.trough_depth.p90 > 0", ("hybrid-gated", "trough_depth", "p90", False, ">", 0.0)),
    ("any.power_violation.probability>0", ("any", "power_violation", "probability", False, ">", 0.0)),
    ("hybrid-gated.trough_days.p90.delta >= 5", ("hybrid-gated", "trough_days", "p90", True, ">=", 5.0)),
    ("v1.2.rollout.completion_day.p50 <= 4.5e2", ("v1.2.rollout", "completion_day", "p50", False, "<=", 450.0)),
    ("  all.shortfall_gpu_days.mean != -1_000  ", ("all", "shortfall_gpu_days", "mean", False, "!=", -1000.0)),
    ("a<b>.homeless_days.p99 == .5", ("a<b>", "homeless_days", "p99", False, "==", 0.5)),
])
def test_conditions_parse(text, parts):
    c = parse_condition(text)
    assert (c.target, c.metric, c.stat, c.delta, c.op, c.threshold) == parts


@pytest.mark.parametrize("text, message", [
    ("hybrid-gated.trough_dept.p90 > 0", "did you mean 'trough_depth'"),
    ("hybrid-gated.trough_depth.p95 > 0", "unknown statistic 'p95'"),
    ("any.power_violation.p90 > 0", "choose one of probability"),
    ("trough_depth.p90 > 0", "is not STRATEGY.METRIC.STAT"),
    ("hybrid-gated.trough_depth.p90 > five", "cannot parse"),
    ("hybrid-gated.trough_depth.p90", "cannot parse"),
    ("__import__('os').system('touch pwned') > 0", "is not STRATEGY.METRIC.STAT"),
    ("__import__('os').system('touch pwned').p90 > 0", "unknown metric"),
])
def test_bad_conditions_say_what_is_wrong(text, message):
    with pytest.raises(AlertError, match=message.replace("(", r"\(")) as info:
        parse_condition(text)
    assert info.value.exit_code == 2


def test_unknown_strategy_names_are_rejected_with_a_suggestion():
    with pytest.raises(AlertError, match="did you mean 'swap-gated'"):
        check_strategies([parse_condition("swap-gate.trough_depth.p90 > 0")],
                         ["swap-gated", "drain-on-day"])
    check_strategies([parse_condition("any.trough_depth.p90 > 0")], ["swap-gated"])


def test_any_and_all_targets():
    summary = summary_of(a=0.0, b=128.0)
    any_ = parse_condition("any.trough_depth.p90 > 0")
    all_ = parse_condition("all.trough_depth.p90 > 0")
    breaches, notes = evaluate([any_, all_], summary, diff=None)
    assert [(b.strategy, b.value) for b in breaches] == [("b", 128.0)]
    assert notes == []
    breaches, _ = evaluate([all_], summary_of(a=1.0, b=2.0), diff=None)
    assert [b.strategy for b in breaches] == ["a", "b"]
    assert "b.trough_depth.p90 = 128 > 0" in str(evaluate([any_], summary, None)[0][0])


def test_delta_conditions_are_skipped_without_a_previous_run():
    breaches, notes = evaluate([parse_condition("a.trough_depth.p90.delta > 0")],
                               summary_of(a=5.0), diff=None)
    assert breaches == [] and "no previous run" in notes[0]


def test_cli_exit_2_for_a_bad_condition_before_running(tmp_path, capsys):
    history = tmp_path / "h"
    code = main(["nightly", str(MINIMAL), "--history", str(history), "--samples", "100",
                 "--fail-if", "swap-gated.trough_dept.p90 > 0"])
    assert code == 2
    assert "did you mean 'trough_depth'" in capsys.readouterr().err
    code = main(["nightly", str(MINIMAL), "--history", str(history), "--samples", "100",
                 "--fail-if", "swap-gate.trough_depth.p90 > 0"])
    assert code == 2
    assert "no strategy 'swap-gate'" in capsys.readouterr().err
    assert not history.exists()                        # nothing was run or written


@pytest.mark.slow
def test_cli_exit_3_lists_each_breach_and_still_registers_the_run(tmp_path, capsys):
    history = tmp_path / "h"
    base = ["nightly", str(MINIMAL), "--history", str(history), "--samples", "300", "--quiet"]
    # minimal.toml: drain-on-day drains both pods (128 H100-eq) on day 30, before any rack
    # can be accepted, so its trough is 128 deep in every scenario; swap-gated never dips.
    code = main(base + ["--fail-if", "drain-on-day.trough_depth.p90 > 0",
                        "--fail-if", "swap-gated.trough_depth.p90 > 0",
                        "--fail-if", "any.power_violation.probability > 0",
                        "--fail-if", "any.trough_days.p90 > 1"])
    assert code == 3
    err = capsys.readouterr().err
    breaches = [line for line in err.splitlines() if "BREACH" in line]
    assert len(breaches) == 2
    assert "drain-on-day.trough_depth.p90 = 128 > 0" in breaches[0]
    assert "drain-on-day.trough_days.p90" in breaches[1]
    runs = json.loads((history / "index.json").read_text())["runs"]
    assert len(runs) == 1 and len(runs[0]["breaches"]) == 2
    alerts = json.loads((history / runs[0]["folder"] / "alerts.json").read_text())
    assert [b["strategy"] for b in alerts["breaches"]] == ["drain-on-day", "drain-on-day"]
    # the next night: same inputs, so no delta is above 0
    assert main(base + ["--fail-if", "drain-on-day.trough_days.p90.delta > 0"]) == 0
