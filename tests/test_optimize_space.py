"""The search file of `mcrisk optimize` (mcrisk.optimize.space): the example space on the
reference reads as written, every mistake is a located problem (file, key, value, what is
wrong, a hint), never a traceback, and candidates.py turns a space into candidate plans.
"""
from __future__ import annotations

import pytest

from mcrisk.errors import ScenarioError
from mcrisk.model import Trigger
from mcrisk.optimize.space import read_search

from .helpers import MINIMAL, REFERENCE, SCENARIOS

EXAMPLE = SCENARIOS / "reference-search.toml"

BASE = f'''
[search]
scenario = "{REFERENCE}"
template = "hybrid-gated"

[[search.drain_groups]]
units = "SU3..SU4"
triggers = ["on_accepted:N01..N04", "on_arrival:S1"]
lag_days = {{ min = 0, max = 14, step = 7 }}

[[search.waves]]
units = "N01..N02"
rows = ["B1", "A9"]

[search.objective]
minimize = "p90:shortfall_gpu_days"
'''


def problems_of(tmp_path, *edits: tuple[str, str], text: str = BASE) -> list[str]:
    """The problems read_search reports on BASE with each (old, new) edit applied once."""
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / "search.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        read_search(path)
    return [str(p) for p in info.value.problems]


def test_the_example_space_reads_as_written():
    space = read_search(EXAMPLE)
    assert space.template == "hybrid-gated" and space.scenario.name
    assert space.scenario_path == str(REFERENCE)
    assert [g.units for g in space.drain_groups] == [("SU3", "SU4"), ("SU5", "SU6"),
                                                     ("SU7", "SU8"), ("SU1", "SU2")]
    first = space.drain_groups[0]
    assert first.triggers[0] == Trigger(on_accepted=("N01", "N02", "N03", "N04"))
    assert first.triggers[2] == Trigger(on_arrival=("S1",))
    assert first.lags == (0.0, 7.0, 14.0)
    assert [(w.units, w.rows) for w in space.waves] == [(("N01", "N02"), ("B1", "A9")),
                                                        (("N15", "N16"), ("A2", "A9"))]
    assert space.crews == (1, 2, 3)
    assert space.objective.terms == (("p90:shortfall_gpu_days", 1.0),)
    assert [c.statistic for c in space.constraints] == [
        "p90:trough_depth", "p90:completion_day", "p:power_violation", "mean:cost_total"]
    assert space.race.scenarios == (500, 2000, 20000) and space.race.seed == 1
    assert space.evaluate.seed == 2 and space.evaluate.top == 5
    # 3 triggers x 3 lags, then 2 x 2 three times; 2 rows twice; 3 crew counts
    assert space.size == 9 * 4 * 4 * 4 * 2 * 2 * 3 == 6912


def test_the_example_contains_hybrid_gateds_shape():
    space = read_search(EXAMPLE)
    gated = dict(space.template_strategy.drains)
    for group in space.drain_groups:
        written = {gated[u] for u in group.units}
        assert len(written) == 1 and written.pop() in group.triggers
        assert 0.0 in group.lags
    placed = dict(space.template_strategy.placement)
    for wave in space.waves:
        assert {placed[u] for u in wave.units} <= set(wave.rows)
    assert space.scenario.retrofit.crews in space.crews


def test_defaults_race_on_the_search_seed_and_evaluate_on_the_next(tmp_path):
    path = tmp_path / "search.toml"
    path.write_text(BASE.replace('template = "hybrid-gated"',
                                 'template = "hybrid-gated"\nseed = 7'))
    space = read_search(path)
    assert space.race.seed == 7 and space.evaluate.seed == 8
    assert space.race.scenarios == (500, 2000, 20000) and space.race.keep == 0.25
    assert space.crews == (space.scenario.retrofit.crews,)
    assert space.max_candidates == 1000 and space.constraints == ()


@pytest.mark.parametrize("edit, where, what", [
    (('template = "hybrid-gated"', 'template = "hybrid-gatd"'),
     'search.template = "hybrid-gatd"', "unknown strategy (did you mean 'hybrid-gated'?)"),
    (('units = "SU3..SU4"', 'units = "SU4..SU3"'), "search.drain_groups[0].units",
     "malformed range"),
    (('units = "SU3..SU4"', 'units = "SU3..SU9"'), 'search.drain_groups[0].units = "SU9"',
     "SU9 is not one of the template's drained units (did you mean 'SU8'?)"),
    (('units = "SU3..SU4"', 'units = "N03"'), 'search.drain_groups[0].units = "N03"',
     "N03 is not one of the template's drained units"),
    (('"on_arrival:S1"]', '"on_arrival:S9"]'), 'search.drain_groups[0].triggers[1] = "S9"',
     "unknown shipment"),
    (('"on_arrival:S1"]', '"on_delivery:S1"]'),
     'search.drain_groups[0].triggers[1] = "on_delivery:S1"',
     "'on_delivery:S1' is not a trigger the format knows"),
    (('"on_arrival:S1"]', '"day:sixty"]'), 'search.drain_groups[0].triggers[1] = "day:sixty"',
     "the day must be a number"),
    (('"on_arrival:S1"]', '"on_accepted:N04..N01"]'), "search.drain_groups[0].triggers[1]",
     "malformed range: the end (1) is before the start (4)"),
    (('"on_arrival:S1"]', '"on_accepted:N01..N04"]'),
     'search.drain_groups[0].triggers[1] = "on_accepted:N01..N04"', "the same trigger as"),
    (("min = 0, max = 14", "min = 14, max = 0"), "search.drain_groups[0].lag_days.max = 0",
     "is below min (14)"),
    (("step = 7", "step = 0"), "search.drain_groups[0].lag_days.step = 0", "must be > 0"),
    (("step = 7", "step = 0.001"), "search.drain_groups[0].lag_days", "spans 14,001 lags"),
    (("lag_days = { min = 0, max = 14, step = 7 }", "lag_days = [0, -7]"),
     "search.drain_groups[0].lag_days[1] = -7", "must be >= 0"),
    (('rows = ["B1", "A9"]', 'rows = ["B1", "A99"]'), 'search.waves[0].rows = "A99"',
     "unknown row"),
    (('units = "N01..N02"', 'units = "SU1"'), 'search.waves[0].units = "SU1"',
     "SU1 is not one of the incoming units"),
    (('minimize = "p90:shortfall_gpu_days"', 'minimize = "p95:shortfall_gpu_days"'),
     'search.objective.minimize = "p95:shortfall_gpu_days"', "is not a statistic"),
    (('minimize = "p90:shortfall_gpu_days"', 'minimize = "p90:shortfall"'),
     'search.objective.minimize = "p90:shortfall"', "unknown column 'shortfall'"),
    (('minimize = "p90:shortfall_gpu_days"', 'pareto = ["p90:trough_depth"]'),
     "search.objective.pareto", "at least two statistics"),
    (('minimize = "p90:shortfall_gpu_days"',
      'minimize = "p90:trough_depth"\npareto = ["p90:trough_depth", "p90:trough_days"]'),
     "search.objective", "exactly one of minimize, weights, pareto (it gives minimize, pareto)"),
    (('minimize = "p90:shortfall_gpu_days"', 'weights = { "p90:trough_depth" = -1 }'),
     'search.objective.weights.p90:trough_depth = -1', "must be > 0"),
    (("[search.objective]", '[search.constraints]\n"p90:trough_dept" = { max = 0 }\n'
                            "[search.objective]"),
     "search.constraints.p90:trough_dept", "unknown column 'trough_dept'"),
    (("[search.objective]", '[search.constraints]\n"p90:trough_depth" = { min = 0 }\n'
                            "[search.objective]"),
     "search.constraints.p90:trough_depth.min", "unknown key"),
    (("[search.objective]", "[search.crews]\nvalues = [0, 2]\n[search.objective]"),
     "search.crews.values[0] = 0", "must be >= 1"),
    (("[search.objective]", "[search.race]\nscenarios = [2000, 500]\n[search.objective]"),
     "search.race.scenarios", "must be ascending"),
    (("[search.objective]", "[search.race]\nkeep = 1.5\n[search.objective]"),
     "search.race.keep = 1.5", "must be <= 1"),
    (("[search.objective]", "[search.evaluate]\nseed = 1\n[search.objective]"),
     "search.evaluate.seed = 1", "is the race's seed"),
    (('template = "hybrid-gated"', 'template = "hybrid-gated"\ncolour = "red"'),
     'search.colour = "red"', "unknown key"),
    (('scenario = "', 'scenario = "missing/'), "search.scenario", "no such file"),
])
def test_a_mistake_is_located(tmp_path, edit, where, what):
    found = problems_of(tmp_path, edit)
    where = where.replace('"', "'")      # values render as repr writes them
    matching = [p for p in found if f": {where}" in p and what in p]
    assert matching, found
    assert all(p.startswith(str(tmp_path / "search.toml")) for p in found)


def test_overlapping_groups_and_waves_are_refused(tmp_path):
    found = problems_of(tmp_path, ("[[search.waves]]", '''[[search.drain_groups]]
units = "SU4..SU5"
triggers = ["day:60"]
[[search.waves]]
units = "N02..N03"
rows = ["A9"]
[[search.waves]]'''))
    assert any("search.drain_groups[1].units = 'SU4': SU4 is in two drain groups, also at "
               "search.drain_groups[0].units" in p for p in found), found
    assert any("search.waves[1].units = 'N02': N02 is in two waves" in p for p in found), found


def test_costs_need_a_scenario_with_costs(tmp_path):
    search = f'''[search]
scenario = "{MINIMAL}"
template = "swap-gated"
[search.objective]
weights = {{ "p90:trough_days" = 1, "mean:cost_energy" = 1e-4 }}
[search.constraints]
"p90:cost_total" = {{ max = 1e6 }}
'''
    found = problems_of(tmp_path, text=search)
    for where in ("search.objective.weights.mean:cost_energy", "search.constraints.p90:cost_total"):
        assert any(f"{where}: cost_{where.split('cost_')[1]} is a cost, and the scenario has no "
                   "[costs] section" in p for p in found), found
    assert len(found) == 2, found


def test_not_toml_and_no_search_section_are_located(tmp_path):
    assert any("invalid TOML" in p for p in problems_of(tmp_path, ("[search]", "[search")))
    found = problems_of(tmp_path, text="[other]\n")
    assert any("search: missing" in p for p in found) and any("other" in p for p in found)
