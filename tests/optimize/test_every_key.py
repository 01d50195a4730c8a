"""Every plan `mcrisk optimize` writes back runs as the plan it evaluated, whatever keys its
template uses (issue 24, items 3 and 4).

tests/data/optimize-every-key.toml's template uses every key a [[strategies]] entry has:
place, drain (a day, an acceptance and a lag together), keep, reservations, its own crews, an
acceptance policy whose soak is a distribution, and a description. The search of
tests/data/optimize-every-key-search.toml varies its drains, its row and its crews; each block
of strategies.toml, appended to the scenario and run by `mcrisk run` on the evaluation's seed
and sample count, must give optimize.json's figures exactly. A block that dropped a key (the
acceptance policy once was) runs another plan and fails here; a template key the candidates'
reader did not know (keep once was) rejected every other plan as "unknown key", which fails
here too.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from mcrisk.cli import main
from mcrisk.core.model import Acceptance, Distribution
from mcrisk.optimize.candidates import WRITTEN_KEYS, Candidate, strategy_toml
from mcrisk.scenario import load_scenario
from mcrisk.scenario.strategies import STRATEGY_KEYS
from ..helpers import DATA

SCENARIO = DATA / "optimize-every-key.toml"
SEARCH = DATA / "optimize-every-key-search.toml"


def test_the_writer_knows_every_key_the_reader_takes():
    """A key added to [[strategies]] must be written back too (or a plan drops it)."""
    assert sorted(WRITTEN_KEYS) == sorted(STRATEGY_KEYS)


def _appended(text: str, folder: Path) -> Path:
    path = folder / SCENARIO.name
    path.write_text(SCENARIO.read_text() + "\n" + text + "\n")
    return path


@pytest.mark.parametrize("soak", [
    Distribution.fixed(7.0), Distribution.fixed(0.1),
    Distribution("uniform", (1.0, 2.5)), Distribution("triangular", (1.0, 2.0, 6.0)),
    Distribution("pert", (1.0, 2.0, 6.0, 3.5)), Distribution("lognormal", (2.0, 5.0)),
    Distribution("chance", (0.25,), Distribution("triangular", (1.0, 2.0, 6.0))),
    Distribution("chance", (0.5,), Distribution.fixed(3.0))], ids=lambda d: d.kind)
def test_an_acceptance_policy_of_every_distribution_reads_back_as_itself(soak, tmp_path):
    import dataclasses

    scenario = load_scenario(SCENARIO)
    template = scenario.strategy("every-key")
    strategy = dataclasses.replace(template, name="again", acceptance=Acceptance(3, soak))
    block = strategy_toml(Candidate("again", strategy, 2, ()), scenario)
    again = load_scenario(_appended(block, tmp_path)).strategies[-1]
    assert again == dataclasses.replace(strategy, crews=2), block


def _statistic(summary: dict, label: str):
    """A statistic of optimize.json ('p90:trough_depth', 'mean:cost_total',
    'p:power_violation') as `mcrisk run`'s summary.json gives it."""
    kind, _, column = label.partition(":")
    if kind == "p":
        assert column == "power_violation", "summary.json gives that share only"
        return summary["power_violation"]["probability"]
    entry = summary[column] if column in summary else summary["costs"][column]
    return entry[kind]


def test_every_plan_written_back_runs_as_the_plan_with_optimize_jsons_figures(tmp_path):
    out = tmp_path / "out"
    assert main(["optimize", str(SEARCH), "--out", str(out), "--backend", "numpy",
                 "--quiet"]) == 0
    document = json.loads((out / "optimize.json").read_text())
    # the template's keep made no plan an "unknown key": every combination was raced
    space = document["space"]
    assert space["rejected"] == {}, space["rejected"]
    assert space["candidates"] + space["duplicates"] == space["size"] + 1   # + the template
    plans = document["plans"]
    assert len(plans) == document["evaluation"]["top"]
    blocks = (out / "strategies.toml").read_text()
    for key in ("keep = ", "reservations = ", "acceptance = { soak_after_failures = 1, "
                "soak_days = { dist = \"triangular\", min = 1, mode = 2, max = 6 } }",
                "install_teams = 1\n", "burn_in_bays = 1\n"):
        assert blocks.count(key) == len(plans), key
    scenario = _appended(blocks, tmp_path)
    evaluation = document["evaluation"]
    assert main(["run", str(scenario), "--samples", str(evaluation["samples"]), "--seed",
                 str(evaluation["seed"]), "--backend", "numpy", "--out",
                 str(tmp_path / "run"), "--quiet"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    template = load_scenario(SCENARIO).strategy("every-key")
    for plan in plans:
        strategy = load_scenario(scenario).strategy(plan["name"])
        assert (strategy.keep, strategy.acceptance, strategy.reservations,
                strategy.install_teams, strategy.burn_in_bays) == \
            (template.keep, template.acceptance, template.reservations, 1, 1)
        ran = summary["strategies"][plan["name"]]
        for label, estimate in plan["statistics"].items():
            assert _statistic(ran, label) == estimate["value"], (plan["name"], label)


def test_a_second_round_names_its_plans_apart_from_the_first(tmp_path):
    """A second search on the scenario with the first round's strategies.toml appended once
    named its plans plan-0000, ... again, so appending its own strategies.toml made the
    scenario fail (duplicate strategy name; issue 24, item 6). Its plans are plan2-...; a
    third round's plan3-...; every round's blocks append and run beside the others."""
    from mcrisk.optimize.run import run_optimize

    scenario = tmp_path / SCENARIO.name
    scenario.write_text(SCENARIO.read_text())
    search = tmp_path / SEARCH.name
    search.write_text(SEARCH.read_text())
    names = []
    for round_number in (1, 2, 3):
        found = run_optimize(search, tmp_path / f"round-{round_number}", backend="numpy")
        plans = [plan["name"] for plan in found.document["plans"]]
        prefix = "plan" if round_number == 1 else f"plan{round_number}"
        assert plans and all(name.startswith(f"{prefix}-") for name in plans), plans
        scenario.write_text(scenario.read_text() + "\n" + found.strategies_toml)
        loaded = [s.name for s in load_scenario(scenario).strategies]   # no duplicate name
        names += plans
        assert loaded == ["every-key", "plain", *names]
