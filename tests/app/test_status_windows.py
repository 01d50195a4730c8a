"""run_scenario and run_comparison with a status file count the future (issue 25): the plan's
window starts at the status's as_of, and a run's summary.json has its status block. Before,
both conditioned the worlds on the status but counted [0, horizon) and wrote no status."""
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
