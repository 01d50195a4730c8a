"""mcrisk optimize beside contingent strategies: a contingent written strategy keeps its
branches when the plans are renamed for simulation (plan_scenario), and a contingent
template with a plan's knobs is refused with a located problem (the search varies its
decision's threshold only: tests/optimize/test_threshold.py)."""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.chunks import simulate
from mcrisk.core.errors import ScenarioError
from mcrisk.optimize.race import plan_scenario
from mcrisk.optimize.space import read_search
from mcrisk.plan.compile import compile_scenario

from ..helpers import MINIMAL_TEXT, load_text

TINY = MINIMAL_TEXT + """
[[strategies]]
name = "swap-late"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 40 }]

[[strategies]]
name = "contingent"
decision = { day = 35, arrived = "S1", met = "swap-gated", unmet = "swap-late" }
"""


def test_renamed_plans_keep_the_decision(tmp_path, monkeypatch):
    """The written strategies first, then a candidate sharing a written name (as the template
    as written does): the decision names its written branches' new names, and the renamed
    plan gives the run's contingent rows exactly."""
    monkeypatch.chdir(tmp_path)
    scenario = load_text(TINY)
    own = [(s, s.crews_in(scenario.retrofit)) for s in scenario.strategies]
    renamed = plan_scenario(scenario, [*own, own[0]])
    decision = renamed.strategies[3].decision
    assert (decision.met, decision.unmet) == ("plan-0", "plan-2")
    backend = select_backend("numba")
    written = simulate(compile_scenario(scenario), 200, 3, backend)
    planned = simulate(compile_scenario(renamed), 200, 3, backend)
    np.testing.assert_array_equal(planned.metrics[:, :4], written.metrics)
    np.testing.assert_array_equal(planned.branches, written.branches)


def test_contingent_template_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "x.toml").write_text(TINY)
    (tmp_path / "search.toml").write_text('''
[search]
scenario = "x.toml"
template = "contingent"

[[search.drain_groups]]
units = "E1..E2"
triggers = ["on_accepted:N1..N2", "day:30"]
lag_days = [0]

[search.objective]
minimize = "p90:shortfall_gpu_days"
''')
    with pytest.raises(ScenarioError) as info:
        read_search(tmp_path / "search.toml")
    message = str(info.value)
    assert ("search.drain_groups: the template 'contingent' is contingent: the search varies "
            "its decision's threshold ([search.decision]), not a plan (remove drain_groups, or "
            "name a branch ('swap-gated' or 'swap-late') as the template to vary its plan)"
            ) in message
    assert ("search.template = 'contingent': is contingent, and the search has no "
            "[search.decision]: a contingent template's knob is its decision's threshold (add "
            "[search.decision] with days = [120, 150] or at_least = [4, 8], or name a branch "
            "('swap-gated' or 'swap-late') as the template to vary its plan)") in message
