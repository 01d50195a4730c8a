"""Islands by position and existing units by the row (issue 28, 4): an [[islands]] entry's
`halls` and `rows` (a unit standing there joins it, whatever its type; anywhere else its type's
`island`), and [[existing]] `rows` as a block of rows the units fill in order. Every mistake
is a located problem."""
from __future__ import annotations

import pytest

from mcrisk.scenario import load_scenario

from ..helpers import MINIMAL_TEXT, SCENARIOS, load_text, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")
POSITIONS_TEXT = (SCENARIOS / "positions.toml").read_text()


def test_128_racks_fill_rows_a1_to_a8_sixteen_each():
    scenario = load_scenario(SCENARIOS / "positions.toml")
    rows = {u.id: u.row for u in scenario.existing}
    assert len(rows) == 128
    for n in range(1, 129):
        assert rows[f"H{n:03d}"] == f"A{(n - 1) // 16 + 1}"


def test_one_row_for_all_and_one_per_unit_are_blocks_too():
    one = load_text(variant(('rows = "R1..R2"', 'rows = "R1"'), text=MINIMAL_TEXT))
    assert [(u.id, u.row) for u in one.existing] == [("E1", "R1"), ("E2", "R1")]
    each = load_text(MINIMAL_TEXT)
    assert [(u.id, u.row) for u in each.existing] == [("E1", "R1"), ("E2", "R2")]
    # four units in two rows, in order; an array of rows works as the range does
    four = load_text(variant(('units = "E1..E2"\ntype = "h100-pod"\nrows = "R1..R2"',
                              'units = "E1..E4"\ntype = "h100-pod"\nrows = ["R2", "R1"]'),
                             ('units = "E1..E2", on_accepted', 'units = "E1..E4", on_accepted'),
                             ('units = "E1..E2", day', 'units = "E1..E4", day'),
                             ("power_cap_kw = 500", "power_cap_kw = 700"), text=MINIMAL_TEXT))
    assert [(u.id, u.row) for u in four.existing] == [
        ("E1", "R2"), ("E2", "R2"), ("E3", "R1"), ("E4", "R1")]


def test_a_block_that_does_not_fill_its_rows_evenly_is_located():
    text = variant(('rows = "A1..A8"', 'rows = "A1..A7"'), text=POSITIONS_TEXT)
    assert problems(text) == [
        ("x.toml: existing[0].rows = 'A1..A7': names 7 rows for 128 units, which they do not "
         "fill evenly (give one row for all units, one row per unit in the same order, or a "
         "block of rows the units fill evenly in order (128 units in 8 rows: 16 in each))")]


def test_block_ids_stay_unique_across_fleets():
    again = variant(('[[incoming]]\nunits = "G01..G08"',
                     ('[[existing]]\nunits = "H127..H128"\ntype = "hgx-h100-rack"\nrows = "A9"\n'
                      '\n[[incoming]]\nunits = "G01..G08"')), text=POSITIONS_TEXT)
    assert problems(again) == [
        f"x.toml: existing[1].units = 'H{n}': duplicate unit id, also at existing[0].units "
        "(give each its own id)" for n in (127, 128)]


def test_a_unit_joins_the_positional_island_of_its_row_whatever_its_type():
    scenario = load_scenario(SCENARIOS / "positions.toml")
    for kind in ("gb200-nvl72", "gb300-nvl72"):
        assert scenario.island_of(kind, "B3") == "xdr-b"      # hall B: by position
        assert scenario.island_of(kind, "A9") == "xdr-a"      # the type's island
    assert scenario.island_of("hgx-h100-rack", "B1") == "xdr-b"
    assert scenario.island_of("hgx-h100-rack", "A1") == "ndr"
    assert scenario.positional_islands == {f"B{i}": "xdr-b" for i in range(1, 5)}


def test_rows_split_a_hall_between_islands():
    text = variant(('halls = ["B"]', 'rows = ["B1..B2"]'),
                   ('id = "xdr-a"\n', 'id = "xdr-a"\nrows = ["B3", "B4", "A10"]\n'),
                   text=POSITIONS_TEXT)
    scenario = load_text(text)
    assert [scenario.island_of("gb300-nvl72", r) for r in ("B1", "B2", "B3", "B4", "A10")] \
        == ["xdr-b", "xdr-b", "xdr-a", "xdr-a", "xdr-a"]


def _without_island(text: str, kind: str) -> str:
    """`text` without the `island = ...` line of unit type `kind`."""
    line = text.index("island = ", text.index(f'id = "{kind}"'))
    return text[:line] + text[text.index("\n", line) + 1:]


def test_a_type_without_island_is_fine_where_every_row_it_stands_in_is_covered():
    # hall-b-first's and split-by-generation's GB300s stand in hall B and the swing rows:
    # cover the swing rows, drop the other strategy, and the type needs no island
    head, *blocks = POSITIONS_TEXT.split("[[strategies]]\n")
    text = head + "[[strategies]]\n" + blocks[0]
    text = _without_island(variant(('id = "xdr-a"\n', 'id = "xdr-a"\nrows = "A9..A10"\n'),
                                   text=text), "gb300-nvl72")
    scenario = load_text(text)
    assert scenario.unit_type("gb300-nvl72").island is None
    assert scenario.island_of("gb300-nvl72", "A9") == "xdr-a"
    # with retrofit-in-place back, its GB300s stand in A1: located on the type
    full = text + "[[strategies]]\n" + blocks[1]
    assert problems(full) == [
        ("x.toml: unit_types[2].island: missing: N01 in strategy 'retrofit-in-place' stands in "
         "row A1, which no [[islands]] entry covers (halls, rows) (give the type an island = "
         "\"...\" (its units' island wherever no positional island covers their row), or add "
         "row A1 or its hall to an [[islands]] entry's rows or halls)")]
    # an existing unit in an uncovered row needs its type's island as well
    no_ndr = _without_island(text, "hgx-h100-rack")
    assert problems(no_ndr) == [
        ("x.toml: unit_types[0].island: missing: existing unit H001 stands in row A1, which no "
         "[[islands]] entry covers (halls, rows) (give the type an island = \"...\" (its "
         "units' island wherever no positional island covers their row), or add row A1 or its "
         "hall to an [[islands]] entry's rows or halls)")]


def test_two_islands_covering_one_row_are_refused_on_the_second():
    text = variant(('id = "xdr-a"\n', 'id = "xdr-a"\nrows = ["A9", "B2"]\n'), text=POSITIONS_TEXT)
    assert problems(text) == [
        ("x.toml: islands[2].halls = 'B': covers row B2, already in island 'xdr-a' "
         "(islands[1].rows): a row belongs to one island (remove it from one of the two "
         "islands; to split a hall between islands, name its rows in rows instead of the hall)")]
    both_halls = variant(('id = "xdr-a"\n', 'id = "xdr-a"\nhalls = "B"\n'), text=POSITIONS_TEXT)
    assert problems(both_halls) == [
        ("x.toml: islands[2].halls = 'B': covers rows B1..B4, already in island 'xdr-a' "
         "(islands[1].halls): a row belongs to one island (remove it from one of the two "
         "islands; to split a hall between islands, name its rows in rows instead of the hall)")]
    # one island naming a hall and one of its rows covers that row once: no ambiguity
    load_text(variant(('halls = ["B"]', 'halls = ["B"]\nrows = "B1"'), text=POSITIONS_TEXT))


def test_unknown_halls_and_rows_of_an_island_are_located():
    text = variant(('halls = ["B"]', 'halls = ["B", "C"]\nrows = ["A11"]'), text=POSITIONS_TEXT)
    assert problems(text) == [
        "x.toml: islands[2].halls = 'C': unknown hall (known halls: A, B)",
        "x.toml: islands[2].rows = 'A11': unknown row (did you mean 'A1'?)"]
    bad = variant(('halls = ["B"]', 'halls = 3'), text=POSITIONS_TEXT)
    assert problems(bad) == [
        ("x.toml: islands[2].halls = 3: must be an id or an array of ids, not a number "
         '(for example halls = ["B"])')]


def test_a_status_install_where_no_island_covers_is_located(tmp_path):
    """A status may put a new unit in another row than its plan: a type without `island` in
    a row no positional island covers would join no fabric. The minimal example with ib-new
    as row R3's island, the racks' type without one and the plan that uses R3 alone; the
    status installs N1 in R1, emptied and retrofitted (all else about it is right)."""
    from mcrisk.core.errors import ScenarioError
    from mcrisk.scenario import load_status
    text = variant(('island = "ib-new"\n', ''),
                   ('id = "ib-new"\n', 'id = "ib-new"\nrows = "R3"\n'), text=MINIMAL_TEXT)
    scenario = load_text(text[:text.rindex("[[strategies]]")])
    assert scenario.unit_type("gb300-rack").island is None
    status = tmp_path / "status.toml"
    facts = ('[status]\nas_of = 40\n\n[shipments.S1]\narrived = 30\n\n'
             '[units.E1]\ndrained = 5\nremoved = 8\n\n'
             '[rows.R1]\nretrofit_started = 8\nretrofit_done = 15\n\n'
             '[units.N1]\ninstalled = { row = "ROW", start = 31 }\n')
    status.write_text(facts.replace("ROW", "R1"))
    with pytest.raises(ScenarioError) as caught:
        load_status(status, scenario)
    assert [str(p) for p in caught.value.problems] == [
        (f"{status}:16: units.N1.installed.row = 'R1': no island covers row R1, and N1's type "
         "gb300-rack names none: it would join no fabric (add row R1 (or its hall) to an "
         "[[islands]] entry of the scenario, or give unit type gb300-rack an island)")]
    status.write_text(facts.replace("ROW", "R3") + "\n[rows.R3]\nretrofit_started = 0\n"
                      "retrofit_done = 10\n")
    assert load_status(status, scenario).unit("N1").row == "R3"
