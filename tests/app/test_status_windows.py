"""run_scenario, run_comparison and optimize's simulations with a status count the future
(issue 25): the plan's window starts at the status's as_of, and a run's summary.json has its
status block. Before, all three conditioned the worlds on the status but counted [0, horizon)
(and a run wrote no status), against docs/metrics.md's Windows."""
from __future__ import annotations

import pytest

from mcrisk.app import compare as compare_module
from mcrisk.app.run import load_for_run, run_scenario

from ..helpers import ROOT

REFERENCE = ROOT / "scenarios" / "reference-2048.toml"
DAY150 = REFERENCE.parent / "reference-2048-status" / "day150.toml"


def test_a_run_with_a_status_file_counts_from_as_of_and_records_the_status():
    run = run_scenario(load_for_run(REFERENCE, status=DAY150), samples=100, backend="cpu",
                       mitigation=False)
    assert run.plan.window_start == 150.0
    assert run.summary["status"]["as_of"] == 150.0
    assert run.summary["status"]["window_days"] == [150.0, 540.0]


class Simulated(Exception):
    pass


def test_a_comparison_with_a_status_file_counts_from_as_of(monkeypatch):
    seen = []

    def simulate(plan, *args, **kwargs):
        seen.append(plan.window_start)
        raise Simulated

    monkeypatch.setattr(compare_module, "simulate", simulate)
    with pytest.raises(Simulated):
        compare_module.run_comparison(REFERENCE, "hybrid-gated", "big-bang", 100, 1,
                                      backend="cpu", status=DAY150)
    assert seen == [150.0]


def test_every_plan_optimize_simulates_with_a_status_counts_from_as_of(monkeypatch):
    from mcrisk.core.facts import with_facts
    from mcrisk.optimize import race as race_module
    from mcrisk.scenario import load_scenario, load_status

    seen = []

    def simulate(plan, *args, **kwargs):
        seen.append(plan.window_start)
        raise Simulated

    monkeypatch.setattr(race_module, "simulate", simulate)
    raw = load_scenario(REFERENCE)
    scenario = with_facts(raw, load_status(DAY150, raw))
    backend = type("Backend", (), {"prepare": lambda self, plan: None})()
    with pytest.raises(Simulated):
        race_module.simulate_plans(scenario, [(scenario.strategies[0], 1)], backend, 1, 0, 10)
    assert seen == [150.0]
