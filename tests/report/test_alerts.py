"""--fail-if conditions (mcrisk.report.nightly.alerts): parsing without eval, checks, exit
codes 2 and 3."""
from __future__ import annotations

import json

import pytest

from mcrisk.cli import main
from mcrisk.report.nightly.alerts import AlertError, check_strategies, evaluate, parse_condition

from ..helpers import ROOT

MINIMAL = ROOT / "scenarios" / "minimal.toml"


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
    ("trough_depth.p90 > 0", "is not STRATEGY.COLUMN.STAT"),
    ("hybrid-gated.trough_depth.p90 > five", "cannot parse"),
    ("hybrid-gated.trough_depth.p90", "cannot parse"),
    ("__import__('os').system('touch pwned') > 0", "is not STRATEGY.COLUMN.STAT"),
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


# -- issue 9: every malformed condition at once; .delta conditions respect noise ---------------

from mcrisk.report.nightly.alerts import parse_conditions  # noqa: E402
from mcrisk.report.nightly.diff import MetricChange, NightDiff  # noqa: E402


def test_every_malformed_condition_is_reported_not_only_the_first():
    texts = ["a.trough_dept.p90 > 0", "a.trough_depth.p90 > 0", "a.trough_depth.p95 > 0",
             "nonsense"]
    with pytest.raises(AlertError) as info:
        parse_conditions(texts)
    message = str(info.value)
    assert message.startswith("3 --fail-if conditions cannot be used:")
    assert "'a.trough_dept.p90 > 0'" in message and "did you mean 'trough_depth'" in message
    assert "unknown statistic 'p95'" in message and "'nonsense': cannot parse" in message
    assert "'a.trough_depth.p90 > 0'" not in message          # the good one is not blamed
    assert [c.text for c in parse_conditions(texts[1:2])] == ["a.trough_depth.p90 > 0"]


def test_every_unknown_strategy_is_named():
    with pytest.raises(AlertError) as info:
        check_strategies([parse_condition(t) for t in ("x.trough_depth.p90 > 0",
                                                       "swap-gated.trough_depth.p90 > 0",
                                                       "drain-on-dy.trough_days.p90 > 0")],
                         ["swap-gated", "drain-on-day"])
    message = str(info.value)
    assert "2 --fail-if conditions name no strategy" in message
    assert "no strategy 'x'" in message and "did you mean 'drain-on-day'" in message


def test_cli_lists_every_malformed_condition_and_exits_2_before_running(tmp_path, capsys):
    history = tmp_path / "h"
    code = main(["nightly", str(MINIMAL), "--history", str(history), "--samples", "100",
                 "--fail-if", "swap-gated.trough_dept.p90 > 0",
                 "--fail-if", "swap-gated.trough_depth.p90 > 0",
                 "--fail-if", "swap-gated.completion_day.p90 >> 3"])
    assert code == 2
    err = capsys.readouterr().err
    assert "2 --fail-if conditions cannot be used" in err
    assert "'swap-gated.trough_dept.p90 > 0': unknown metric" in err
    assert "'swap-gated.completion_day.p90 >> 3': unknown statistic 'p90 >'" in err
    assert not history.exists()


def one_change(**kwargs) -> NightDiff:
    """A diff whose only compared statistic is strategy a's completion_day P50."""
    change = MetricChange(**{"strategy": "a", "metric": "completion_day", "stat": "p50",
                             "old": 300.0, "new": 300.015, "significant": False,
                             "method": "paired test p=0.41", "p_value": 0.41, "material": False,
                             "threshold": 3.00015, **kwargs})
    return NightDiff("tonight", "last", True, "paired", True, [], [change])


def summary_with_completion(p50: float) -> dict:
    return {"strategies": {"a": {"completion_day": {"p50": p50, "p90": p50, "mean": p50,
                                                    "p99": p50}}}}


@pytest.mark.parametrize("text", ["a.completion_day.p50.delta >= 0",
                                  "a.completion_day.p50.delta > 0.01",
                                  "any.completion_day.p50.delta != 0"])
def test_a_delta_within_noise_never_breaches(text):
    """completion P50 +0.015 days breached `delta >= 0`: it is noise (and immaterial)."""
    breaches, notes = evaluate([parse_condition(text)], summary_with_completion(300.015),
                               one_change())
    assert breaches == []
    assert len(notes) == 1 and "not breached by a: its change +0.015 is within Monte Carlo " \
        "noise (paired test p=0.41)" in notes[0]


def test_a_delta_beyond_noise_but_below_materiality_never_breaches():
    diff = one_change(significant=True, method="paired test p=1e-09")
    breaches, notes = evaluate([parse_condition("a.completion_day.p50.delta > 0")],
                               summary_with_completion(300.015), diff)
    assert breaches == []
    assert "below the materiality threshold (|change| 0.015 < 3)" in notes[0]


def test_a_reported_delta_breaches_with_what_changed():
    diff = one_change(new=315.0, significant=True, method="paired test p=1e-30",
                      material=True, threshold=3.15)
    conditions = [parse_condition("a.completion_day.p50.delta >= 0"),
                  parse_condition("a.completion_day.p50.delta > 20"),      # +15 does not
                  parse_condition("a.completion_day.p50.delta == 0")]
    breaches, notes = evaluate(conditions, summary_with_completion(315.0), diff)
    assert [(b.condition.text, b.value) for b in breaches] == \
        [("a.completion_day.p50.delta >= 0", 15.0)]
    assert notes == []
    assert "300 -> 315 since last, paired test p=1e-30" in str(breaches[0])


def test_a_delta_that_is_not_testable_never_breaches():
    diff = one_change(new=330.0, significant=None, method="no 95% interval of last night's P50",
                      material=True)
    breaches, notes = evaluate([parse_condition("a.completion_day.p50.delta > 0")],
                               summary_with_completion(330.0), diff)
    assert breaches == [] and "not testable against noise" in notes[0]


def test_a_level_condition_on_a_null_statistic_is_skipped_with_a_note():
    summary = {"strategies": {"a": {"trough_depth": {"p90": None, "p50": 0.0}}}}
    breaches, notes = evaluate([parse_condition("a.trough_depth.p90 > 0")], summary, None)
    assert breaches == [] and "not computable (null in summary.json)" in notes[0]


def test_an_unchanged_statistic_never_breaches_a_delta_condition():
    diff = one_change(new=300.0, significant=False, method="paired: no scenario changed")
    breaches, notes = evaluate([parse_condition("a.completion_day.p50.delta >= 0")],
                               summary_with_completion(300.0), diff)
    assert breaches == [] and notes == []          # no change: nothing to explain
    assert diff.changes[0].why_not_reported() == "unchanged"

