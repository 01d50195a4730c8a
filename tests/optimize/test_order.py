"""The order of waves as a knob of `mcrisk optimize` ([[search.orders]], mcrisk.optimize.order):
n waves multiply the space by n!, the permutations come in itertools order, a permutation's
plan is the strategy a planner would write by hand, mistakes are located errors, an order
that overfills a row is a counted rejection, and a tiny search finds the order known best.
"""
from __future__ import annotations

import itertools
from collections import Counter

import pytest

from mcrisk.core.errors import ScenarioError
from mcrisk.optimize.candidates import generate, strategy_toml
from mcrisk.optimize.space import read_search
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE

HEADER = f'''
[search]
scenario = "{REFERENCE}"
template = "hybrid-gated"

[search.objective]
minimize = "p90:shortfall_gpu_days"
'''

# On the reference, SU k stands in row A k; hybrid-gated drains SU3..SU4 on the acceptance of
# N01..N04, SU5..SU6 of N05..N08, SU7..SU8 of N09..N12, SU1..SU2 of N01..N12. Three waves of
# two racks into A3, A4 and A9 (2 positions each) fit in every order, and none makes a
# drain wait for racks in its own row.
THREE = '''
[[search.drain_groups]]
units = "SU5..SU6"
triggers = ["on_accepted:N05..N08", "on_arrival:S2"]
lag_days = [0, 14]

[[search.orders]]
waves = ["N13..N14", "N15..N16", "N11..N12"]
rows = ["A3", "A4", "A9"]

[search.crews]
values = [1, 2]
'''
WAVES = (("N13", "N14"), ("N15", "N16"), ("N11", "N12"))


def space_of(tmp_path, text: str):
    path = tmp_path / "search.toml"
    path.write_text(text)
    return read_search(path)


def problems_of(tmp_path, text: str) -> list[str]:
    path = tmp_path / "search.toml"
    path.write_text(text)
    with pytest.raises(ScenarioError) as info:
        read_search(path)
    return [str(p) for p in info.value.problems]


def rows_of(candidate, waves=WAVES) -> tuple[str, ...]:
    """The row each wave's units take in the candidate's placement (one row per wave)."""
    placement = dict(candidate.strategy.placement)
    rows = []
    for wave in waves:
        taken = {placement[unit] for unit in wave}
        assert len(taken) == 1, taken
        rows.append(taken.pop())
    return tuple(rows)


def test_n_waves_multiply_the_space_by_n_factorial_in_itertools_order(tmp_path):
    space = space_of(tmp_path, HEADER + THREE)
    assert [o.waves for o in space.orders] == [WAVES]
    assert space.size == 6 * (2 * 2) * 2 == 48   # 3! orders x (2 triggers x 2 lags) x 2 crews
    generated = generate(space)
    assert generated.space_size == 48 and not generated.rejected
    # hybrid-gated puts N11..N12 in B1, so it is none of the 48: 49 candidates, no repeat
    assert generated.duplicates == 0 and len(generated.candidates) == 49
    plans = generated.candidates[1:]
    # file order, the first knob slowest: drain, then order, then crews fastest
    permutations = list(itertools.permutations(("A3", "A4", "A9")))
    expected = [rows for _ in range(4) for rows in permutations for _ in range(2)]
    assert [rows_of(c) for c in plans] == expected
    assert [c.crews for c in plans] == [1, 2] * 24
    assert Counter(rows_of(c) for c in plans) == {rows: 8 for rows in permutations}
    # the knob in words: which row each wave takes, waves as the file lists them
    assert plans[2].knobs[1] == ("order", "N13..N14 -> A3, N15..N16 -> A9, N11..N12 -> A4")
    assert "order N13..N14 -> A3, N15..N16 -> A9, N11..N12 -> A4" in \
        plans[2].strategy.description
    # the template's own rows, also in words
    assert generated.candidates[0].knobs[1] == (
        "order", "N13..N14 -> A1, N15..N16 -> A2, N11..N12 -> B1")


HAND_WRITTEN = '''
[[strategies]]
name = "by-hand"
place = [
  { units = "N01..N10", row = "B1" },
  { units = "N11..N12", row = "A3" },
  { units = "N13..N14", row = "A9" },
  { units = "N15..N16", row = "A4" },
]
drain = [
  { units = "SU3..SU4", on_accepted = "N01..N04" },
  { units = "SU5..SU6", on_arrival = "S2", lag_days = 14 },
  { units = "SU7..SU8", on_accepted = "N09..N12" },
  { units = "SU1..SU2", on_accepted = "N01..N12" },
]
crews = 2
'''


def test_a_permutations_plan_is_the_hand_written_strategy(tmp_path):
    space = space_of(tmp_path, HEADER + THREE)
    generated = generate(space)
    chosen = [c for c in generated.candidates[1:]
              if rows_of(c) == ("A9", "A4", "A3") and c.crews == 2
              and dict(c.strategy.drains)["SU5"].on_arrival == ("S2",)
              and dict(c.strategy.drains)["SU5"].lag_days == 14]
    assert len(chosen) == 1
    candidate = chosen[0]
    path = tmp_path / "scenario.toml"
    path.write_text(REFERENCE.read_text() + HAND_WRITTEN)
    scenario = load_scenario(path)
    by_hand = scenario.strategy("by-hand")
    assert dict(candidate.strategy.placement) == dict(by_hand.placement)
    assert dict(candidate.strategy.drains) == dict(by_hand.drains)
    assert candidate.strategy.crews_in(scenario.retrofit) == by_hand.crews_in(scenario.retrofit)
    # and its block (strategy_toml, unchanged in form) reads back as the candidate
    path.write_text(REFERENCE.read_text() + "\n" + strategy_toml(candidate, space.scenario))
    assert load_scenario(path).strategy(candidate.name) == candidate.strategy


def test_an_order_that_overfills_a_row_is_a_counted_rejection(tmp_path):
    # B1 keeps N01..N08 (12 positions, 4 free): N09..N12 fit there, not in A9 (2 positions)
    space = space_of(tmp_path, HEADER + '''
[[search.orders]]
waves = ["N09..N12", "N13..N14"]
rows = ["B1", "A9"]
''')
    generated = generate(space)
    assert generated.space_size == 2
    assert generated.rejected == Counter({"row positions": 1})
    assert [rows_of(c, (("N09", "N12"), ("N13", "N14"))) for c in generated.candidates] == \
        [("B1", "A1"), ("B1", "A9")]                      # the template, then the order that fits


def test_a_wave_into_its_own_drains_row_is_a_counted_deadlock(tmp_path):
    # SU1 (row A1) drains once N01..N12 are accepted: N11..N12 cannot wait for A1 to empty
    space = space_of(tmp_path, HEADER + '''
[[search.orders]]
waves = ["N11..N12", "N13..N14"]
rows = ["A9", "A1"]
''')
    generated = generate(space)
    assert generated.rejected == Counter({"deadlock": 1})
    assert len(generated.candidates) == 2


@pytest.mark.parametrize("order, where, what", [
    ('waves = ["N01..N02", "X9"]\nrows = ["A9", "A1"]', "search.orders[0].waves[1] = 'X9'",
     "not one of the incoming units"),
    ('waves = ["N01..N02", "N03..N04"]\nrows = ["A9", "Z1"]', "search.orders[0].rows = 'Z1'",
     "unknown row"),
    ('waves = ["N01..N02", "N03..N04"]\nrows = ["A9"]', "search.orders[0].rows",
     "gives 1 row for 2 waves"),
    ('waves = ["N01..N02"]\nrows = ["A9"]', "search.orders[0].waves",
     "at least two waves"),
    ('waves = ["N01", "N02", "N03", "N04", "N05", "N06", "N07", "N08", "N09"]\n'
     'rows = "A1..A9"', "search.orders[0].waves", "more than 8"),
    ('waves = ["N01..N02", "N02..N03"]\nrows = ["A9", "A1"]',
     "search.orders[0].waves[1] = 'N02'", "in two waves"),
    ('waves = ["N01..N02", "N03..N04"]\nrows = ["A9", "A1"]\ncolour = 1',
     "search.orders[0].colour = 1", "unknown key"),
    ('waves = ["N01..N02", "N03..N04"]', "search.orders[0].rows", "missing"),
    # the issue's own example: waves of four racks, and only B1 holds four
    ('waves = ["N01..N04", "N05..N08", "N09..N12"]\nrows = ["B1", "A9", "A1"]',
     "search.orders[0].rows", "no order of the waves fits"),
])
def test_a_mistake_in_an_order_is_located(tmp_path, order, where, what):
    found = problems_of(tmp_path, HEADER + "[[search.orders]]\n" + order + "\n")
    assert [p for p in found if f": {where}" in p and what in p], found
    assert all(p.startswith(str(tmp_path / "search.toml")) for p in found)


def test_a_unit_in_a_wave_and_an_order_is_located(tmp_path):
    found = problems_of(tmp_path, HEADER + '''
[[search.waves]]
units = "N13..N14"
rows = ["A9"]
[[search.orders]]
waves = ["N15..N16", "N13..N14"]
rows = ["A2", "A9"]
[[search.orders]]
waves = ["N15", "N01..N02"]
rows = ["A3", "A4"]
''')
    assert any("search.orders[0].waves[1] = 'N13': N13 is also in search.waves[0].units" in p
               for p in found), found
    assert any("search.orders[1].waves[0] = 'N15': N15 is in two waves, also at "
               "search.orders[0].waves[0]" in p for p in found), found


# ---- a tiny search whose best order is known

ORDER_KNOWN = '''
[scenario]
name = "order-known"
horizon_days = 100

[demand]
points = [[0, 16]]
largest_job = 8

[[unit_types]]
id = "old"
gpus = 8
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "ib"
drain_days = 1
removal_days = 2

[[unit_types]]
id = "new"
gpus = 4
h100_eq_per_gpu = 2.0
power_kw = 20
cooling = "liquid"
island = "ib"
install_days = { dist = "uniform", min = 4, max = 6 }

[[islands]]
id = "ib"

[[halls]]
id = "A"
power_cap_kw = 1000
rows = [{ id = "A1", cooling = "air", positions = 2 }]

[[halls]]
id = "B"
power_cap_kw = 1000
rows = [{ id = "B1", cooling = "liquid", positions = 2 }]

[retrofit]
crews = 1
days = 5

[[existing]]
units = "E1..E2"
type = "old"
rows = "A1"

[[incoming]]
units = "N1..N4"
type = "new"

[[shipments]]
id = "S1"
units = "N1..N2"
arrival = { day = 10 }

[[shipments]]
id = "S2"
units = "N3..N4"
arrival = { day = 60 }

[[strategies]]
name = "late-first"
place = [{ units = "N1..N2", row = "A1" }, { units = "N3..N4", row = "B1" }]
drain = [{ units = "E1..E2", day = 30 }]
'''

ORDER_SEARCH = '''
[search]
scenario = "order-known.toml"
template = "late-first"

[[search.orders]]
waves = ["N1..N2", "N3..N4"]
rows = ["A1", "B1"]

[search.objective]
minimize = "mean:shortfall_gpu_days"

[search.race]
scenarios = [20, 50]

[search.evaluate]
samples = 100
top = 2
'''


def test_the_search_puts_the_first_wave_into_the_row_ready_first(tmp_path):
    """Demand is 16 H100-eq; the old units (16) leave row A1 when they drain on day 30 (1 day,
    then 2 of removal), and the air row is retrofitted by day 38. The first wave (16 H100-eq)
    arrives on day 10, the second on day 60; each is accepted 4 to 6 days after its row is
    ready and it has arrived. First wave into the liquid row B1 (ready at once): accepted by
    day 16, so the drain leaves no shortfall. First wave into A1, as the template writes
    it: accepted on day 42 to 44, and from the drain (day 30 to 31) until then 16 H100-eq
    are missing: 16 x 11 to 16 x 14 H100-eq x days in every scenario."""
    from mcrisk.optimize.run import run_optimize

    (tmp_path / "order-known.toml").write_text(ORDER_KNOWN)
    (tmp_path / "search.toml").write_text(ORDER_SEARCH)
    found = run_optimize(tmp_path / "search.toml", tmp_path / "out", backend="numpy")
    document = found.document
    assert document["space"]["size"] == 2 and document["space"]["duplicates"] == 1
    best = document["plans"][0]
    assert best["knobs"][0] == {"knob": "order", "value": "N1..N2 -> B1, N3..N4 -> A1"}
    assert best["statistics"]["mean:shortfall_gpu_days"]["value"] == 0.0
    written = document["written"][0]
    assert written["name"] == "late-first"
    assert 16 * 11 <= written["statistics"]["mean:shortfall_gpu_days"]["value"] <= 16 * 14
    assert best["against_best_written"]["verdict"] == "better"
    block = best["strategy_toml"]
    assert '{ units = "N1..N2", row = "B1" }' in block and \
        '{ units = "N3..N4", row = "A1" }' in block
