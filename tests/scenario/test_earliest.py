"""A strategy's best case (issue 28, 4; mcrisk/scenario/earliest.py) and the sanity check on
it: a best case past 3 x the horizon is a warning with both days, a strategy that can never
complete an error.

The best case is checked three ways: by hand on the minimal example; against the kernels, on
each shipped scenario with every distribution pinned to its smallest value and every chance
of failure or risk at 0 (the simulated completion of that one world is the best case, which
the event pass computes without the compiled plan); and at the warning's edge.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.core.definitions import COMPLETION_DAY
from mcrisk.core.model import Distribution, Trigger
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import completion_problems, load_scenario, scenario_warnings
from mcrisk.scenario.earliest import earliest_completion, smallest

from ..helpers import MINIMAL_TEXT, SCENARIOS, load_text, variant

pytestmark = pytest.mark.usefixtures("in_tmp")


def test_smallest_values_by_hand():
    assert smallest(Distribution("fixed", (5.0,))) == 5.0
    assert smallest(Distribution("uniform", (7.0, 14.0))) == 7.0
    assert smallest(Distribution("triangular", (2.0, 4.0, 10.0))) == 2.0
    assert smallest(Distribution("pert", (3.0, 5.0, 9.0, 4.0))) == 3.0
    assert smallest(Distribution("lognormal", (5.0, 20.0))) == 0.0
    assert smallest(Distribution("lognormal", (5.0, 20.0), bounds=(1.5, 60.0))) == 1.5
    inner = Distribution("uniform", (3.0, 4.0))
    assert smallest(Distribution("chance", (0.99,), inner)) == 0.0
    assert smallest(Distribution("chance", (1.0,), inner)) == 3.0


def test_the_minimal_example_by_hand():
    """swap-gated: R3's retrofit 0 -> 7 (min of 7..14); S1 arrives on day 30 (delay min 0);
    install 2 and a 4-day burn-in: accepted on day 36 (its island is ready on day 25); the pods
    drain then, 1 + 3 days: 40. drain-on-day: drains on day 30, rows empty on day 34, one crew
    retrofits R1 (34 -> 41) then R2 (41 -> 48); N2 installs on day 48 and is accepted 6 days
    later: 54."""
    scenario = load_scenario(SCENARIOS / "minimal.toml")
    assert [earliest_completion(scenario, s) for s in scenario.strategies] == [40.0, 54.0]
    two_crews = load_text(variant(("crews = 1", "crews = 2"), text=MINIMAL_TEXT))
    assert earliest_completion(two_crews, two_crews.strategies[1]) == 47.0  # both 34 -> 41


def _lowest(dist: Distribution) -> Distribution:
    """The distribution pinned to its smallest value (the docs' rule, written again here)."""
    if dist.kind == "chance":
        return _lowest(dist.inner) if dist.params[0] >= 1 else Distribution("fixed", (0.0,))
    if dist.kind == "lognormal":
        return Distribution("fixed", (dist.bounds[0] if dist.bounds else 0.0,))
    return Distribution("fixed", (dist.params[0],))


def _best_world(obj):
    """A copy of the scenario in which everything goes as well as it can: every distribution
    pinned, burn-ins passing at once, no risk and no early failure."""
    if isinstance(obj, Distribution):
        return _lowest(obj)
    if isinstance(obj, tuple):
        return tuple(_best_world(x) for x in obj)
    if not dataclasses.is_dataclass(obj) or isinstance(obj, type):
        return obj
    changes = {f.name: _best_world(getattr(obj, f.name))
               for f in dataclasses.fields(obj) if f.init}
    for name in ("fail_first", "fail_retry", "probability", "chance",
                 "chance_after_burnin_failure"):
        if name in changes and changes[name] is not None:
            changes[name] = 0.0
    return dataclasses.replace(obj, **changes)


@pytest.mark.parametrize("name", ["minimal", "reference-2048", "reference-2048-full",
                                  "positions"])
def test_the_best_case_is_the_simulated_completion_of_the_best_world(name):
    scenario = load_scenario(SCENARIOS / f"{name}.toml")
    plan = compile_scenario(_best_world(scenario))
    metrics, _, _ = select_backend("numpy").simulate_chunk(plan, 1, 0, 2)
    expected = [earliest_completion(scenario, s) for s in scenario.strategies]
    np.testing.assert_array_equal(metrics[0, :, COMPLETION_DAY], expected)
    np.testing.assert_array_equal(metrics[1, :, COMPLETION_DAY], expected)


def test_a_best_case_past_three_horizons_is_a_warning_with_both_days():
    """drain-on-day's best case is day 54: a horizon of 18 puts it at 3 x; 17.9 past it."""
    at_edge = load_text(variant(("horizon_days = 200", "horizon_days = 18"),
                                text=MINIMAL_TEXT))
    assert [w for w in scenario_warnings(at_edge) if "strategies[" in w] == []
    past = load_text(variant(("horizon_days = 200", "horizon_days = 17.9"), text=MINIMAL_TEXT))
    late = [w for w in scenario_warnings(past) if "strategies[" in w]
    assert late == [
        ("x.toml: strategies[1]: strategy 'drain-on-day' completes on day 54 at the earliest "
         "(every duration and delay at its smallest value, no risk or failure happening), past "
         "3 x the horizon (day 53.7): it never completes within the horizon; check its "
         "triggers and the dates it waits for, or lengthen horizon_days")]


def test_the_cli_prints_the_late_best_case(capsys):
    from mcrisk.cli import main
    past = variant(("horizon_days = 200", "horizon_days = 10"), text=MINIMAL_TEXT)
    load_text(past)
    assert main(["validate", "x.toml"]) == 0
    err = capsys.readouterr().err
    assert "warning: x.toml: strategies[0]: strategy 'swap-gated' completes on day 40" in err
    assert "warning: x.toml: strategies[1]: strategy 'drain-on-day' completes on day 54" in err


def test_a_strategy_waiting_for_itself_can_never_complete():
    """Validation refuses such a plan before (its deadlock check); the best case's pass
    finds it on its own: E1 drains once N1 is accepted, and N1 stands in E1's row."""
    scenario = load_scenario(SCENARIOS / "minimal.toml")
    stuck = dataclasses.replace(scenario.strategies[1], drains=(
        ("E1", Trigger(on_accepted=("N1",))), ("E2", Trigger(day=30.0))))
    scenario = dataclasses.replace(scenario, strategies=(scenario.strategies[0], stuck))
    assert earliest_completion(scenario, stuck) == float("inf")
    [problem] = completion_problems(scenario)
    assert str(problem) == (
        f"{scenario.path}: strategies[1]: strategy 'drain-on-day' can never complete: even "
        "with every duration and delay at its smallest, some of its work waits, through other "
        "work, for itself (check its drain triggers (on_accepted) against the rows it places "
        "those units in)")
    assert completion_problems(load_scenario(SCENARIOS / "minimal.toml")) == []
