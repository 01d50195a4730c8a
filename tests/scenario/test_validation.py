"""Loading and validating scenario files: mcrisk.scenario.

Bad files are the reference (or minimal) scenario with a textual edit, written to a temporary
folder as x.toml; each class of bad input has its own test asserting the exact located message
`file: key.path = value: what is wrong (hint)`.
"""
from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from mcrisk.core.errors import Problem, ScenarioError
from mcrisk.core.model import DateSpec, Distribution, Retrofit, Trigger
from mcrisk.scenario import load_scenario, scenario_sha256

from ..helpers import MINIMAL_TEXT, REFERENCE_TEXT, SCENARIOS, load_text, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in messages


# --------------------------------------------------------------------------------------------
# Good files


def test_reference_loads_into_the_contract():
    s = load_scenario(str(SCENARIOS / "reference-2048.toml"))
    assert s.path == str(SCENARIOS / "reference-2048.toml")
    assert s.sha256 == scenario_sha256(SCENARIOS / "reference-2048.toml")
    assert (s.name, s.horizon_days) == ("reference-2048", 540.0)
    assert s.demand.points == ((0.0, 2048.0), (150.0, 2048.0), (360.0, 2816.0))
    assert s.demand.largest_job == 1024.0
    assert [t.capacity for t in s.unit_types] == [256.0, 180.0]
    assert [u.id for u in s.existing] == [f"SU{k}" for k in range(1, 9)]
    assert [u.row for u in s.existing] == [f"A{k}" for k in range(1, 9)]
    assert [u.id for u in s.incoming] == [f"N{k:02d}" for k in range(1, 17)]
    assert [r.id for r in s.rows()] == [f"A{k}" for k in range(1, 10)] + ["B1"]
    assert [t.name for t in s.strategies] == [
        "big-bang", "rolling-on-delivery", "swing-gated", "hybrid-on-delivery", "hybrid-gated"]


def test_reference_exact_values():
    s = load_scenario(SCENARIOS / "reference-2048.toml")
    rack = s.unit_type("gb300-nvl72")
    assert rack.install_days == Distribution("triangular", (2.0, 4.0, 10.0))
    assert rack.burn_in.rma_days == Distribution("lognormal", (30.0, 60.0))
    assert (rack.burn_in.fail_first, rack.burn_in.rma_after_failures) == (0.3, 3)
    assert s.unit_type("hgx-h100-su").drain_days == Distribution.fixed(2)
    assert s.unit_type("hgx-h100-su").burn_in is None
    assert s.islands[0].delivery is None
    assert s.islands[1].delivery == DateSpec(90.0, Distribution("lognormal", (21.0, 90.0)))
    assert s.islands[1].install_days == Distribution.fixed(14)
    assert s.halls[0].energized is None
    assert s.halls[1].energized.delay == Distribution(
        "chance", (0.35,), Distribution("lognormal", (45.0, 120.0)))
    assert s.retrofit == Retrofit(1, Distribution("triangular", (21.0, 35.0, 70.0)))
    assert s.shared_delays == (("vendor", Distribution("lognormal", (14.0, 45.0))),)
    assert s.shipments[1].units == ("N05", "N06", "N07", "N08")
    assert s.shipments[1].arrival == DateSpec(
        105.0, Distribution("lognormal", (5.0, 20.0)), ("vendor",))


def test_reference_strategies_placement_and_triggers():
    s = load_scenario(SCENARIOS / "reference-2048.toml")
    hybrid = dict(s.strategy("hybrid-gated").placement)
    assert hybrid["N13"] == "A1" and hybrid["N12"] == "B1" and len(hybrid) == 16
    assert s.strategy("hybrid-gated").drains[-1] == (
        "SU2", Trigger(on_accepted=tuple(f"N{k:02d}" for k in range(1, 13))))
    swing = s.strategy("swing-gated")
    assert swing.placement[:3] == (("N01", "A9"), ("N02", "A9"), ("N03", "A1"))
    assert swing.drains[0] == ("SU1", Trigger(on_accepted=("N01", "N02")))
    assert s.strategy("rolling-on-delivery").drains[2] == ("SU3", Trigger(on_arrival=("S2",)))
    assert s.strategy("big-bang").drains[7] == ("SU8", Trigger(day=60.0))
    assert all(len(t.drains) == 8 and len(t.placement) == 16 for t in s.strategies)


def test_minimal_loads():
    s = load_scenario(str(SCENARIOS / "minimal.toml"))
    assert (s.name, len(s.halls), len(s.rows()), len(s.existing), len(s.incoming)) == \
        ("minimal", 1, 3, 2, 2)
    assert [(u.id, u.row) for u in s.existing] == [("E1", "R1"), ("E2", "R2")]
    assert [(sh.id, sh.units) for sh in s.shipments] == [("S1", ("N1", "N2"))]
    assert s.shipments[0].arrival.delay == Distribution("triangular", (0.0, 3.0, 10.0))
    assert s.islands[1].delivery == DateSpec(20.0)
    assert s.retrofit == Retrofit(1, Distribution("uniform", (7.0, 14.0)))
    gated, on_day = s.strategies
    assert gated.placement == (("N1", "R3"), ("N2", "R3"))
    assert gated.drains[1] == ("E2", Trigger(on_accepted=("N1", "N2")))
    assert on_day.placement == (("N1", "R1"), ("N2", "R2"))
    assert on_day.drains == (("E1", Trigger(day=30.0)), ("E2", Trigger(day=30.0)))


@pytest.mark.parametrize("ids, expected", [
    ("N1..N2", ("N1", "N2")),
    ("N09..N10", ("N09", "N10")),        # zero padding kept by the width of the first
    ("SU9..SU10", ("SU9", "SU10")),      # no padding: the number grows
    ("rack-007..rack-008", ("rack-007", "rack-008")),
])
def test_range_expansion(ids, expected):
    first, second = expected
    text = MINIMAL_TEXT.replace('"N1..N2"', f'"{ids}"')
    text = variant(('units = "N1", row', f'units = "{first}", row'),
                   ('units = "N2", row', f'units = "{second}", row'), text=text)
    s = load_text(text)
    assert tuple(u.id for u in s.incoming) == expected
    assert s.shipments[0].units == expected
    assert s.strategies[0].drains[0][1].on_accepted == expected


def test_empty_fleets_give_empty_tuples():
    # minimal.toml without its new racks: no incoming units, no shipments, nothing to place.
    text = variant(('[[incoming]]\nunits = "N1..N2"\ntype = "gb300-rack"\n', ""), text=MINIMAL_TEXT)
    text = text[:text.index("[[shipments]]")] + (
        '[[strategies]]\nname = "retire"\nplace = []\n'
        'drain = [{ units = "E1..E2", day = 10, lag_days = 1.5 }]\n')
    s = load_text(text)
    assert (s.incoming, s.shipments, s.strategies[0].placement) == ((), (), ())
    assert s.strategies[0].drains[1] == ("E2", Trigger(day=10.0, lag_days=1.5))


def test_id_list_mixes_ids_and_ranges():
    s = load_text(variant(('units = "N01..N16"', 'units = ["N01..N09", "N10", "N11..N16"]')))
    assert [u.id for u in s.incoming] == [f"N{k:02d}" for k in range(1, 17)]


def test_scenario_sha256_is_of_the_bytes():
    Path("x.toml").write_bytes(REFERENCE_TEXT.encode())
    assert scenario_sha256("x.toml") == hashlib.sha256(REFERENCE_TEXT.encode()).hexdigest()
    assert load_scenario(Path("x.toml")).path == "x.toml"


# --------------------------------------------------------------------------------------------
# The error format


def test_problem_renders_file_key_value_message_hint():
    assert str(Problem("scenarios/x.toml", "shipments[2].arrival.delay.p90", 3,
                       "must be >= median (5)")) == \
        "scenarios/x.toml: shipments[2].arrival.delay.p90 = 3: must be >= median (5)"


def test_missing_key_names_the_key_and_how_to_add_it():
    text = variant(("horizon_days = 540\n", ""))
    assert problems(text, "scenarios/x.toml") == [
        "scenarios/x.toml: scenario.horizon_days: missing "
        "(add horizon_days = 540, the days to evaluate metrics over)"]


def test_unreadable_file():
    with pytest.raises(ScenarioError) as info:
        load_scenario("nowhere.toml")
    assert [str(p) for p in info.value.problems] == [
        "nowhere.toml: cannot read the file: No such file or directory (check the path)"]


def test_all_problems_in_one_pass():
    text = variant(("horizon_days = 540", "horizon_days = -1"),
                   ("gpus = 72", 'gpus = "72"'),
                   ('{ units = "N01..N02", row = "A9" }', '{ units = "N01..N02", row = "A99" }'))
    assert problems(text) == [
        "x.toml: scenario.horizon_days = -1: must be > 0 (the days to evaluate metrics over)",
        "x.toml: unit_types[1].gpus = '72': must be a number, not a string "
        "(for example gpus = 72)",
        "x.toml: strategies[2].place[0].row = 'A99': unknown row (did you mean 'A9'?)",
    ]


# --------------------------------------------------------------------------------------------
# One test per class of bad input


def test_toml_syntax_error_is_one_problem_with_line_and_column():
    found = problems(variant(("horizon_days = 540", "horizon_days = [540")))
    assert len(found) == 1
    assert re.fullmatch(r"x\.toml: invalid TOML: .+ \(at line 11, column 1\) "
                        r"\(fix the syntax at that line and column\)", found[0])


def test_unknown_keys_with_did_you_mean():
    text = variant(("horizon_days = 540", "horizon_day = 540"),
                   ("[retrofit]", "[shared_delay]\nfoo = 1\n\n[retrofit]"),
                   ("min = 3, mode = 5, max = 10", "min = 3, mode = 5, maxi = 10"),
                   ("day = 90,", "dya = 90,"))
    assert problems(text) == [
        "x.toml: shared_delay = {'foo': 1}: unknown key (did you mean 'shared_delays'?)",
        "x.toml: scenario.horizon_day = 540: unknown key (did you mean 'horizon_days'?)",
        "x.toml: scenario.horizon_days: missing "
        "(add horizon_days = 540, the days to evaluate metrics over)",
        "x.toml: islands[1].delivery.dya = 90: unknown key (did you mean 'day'?)",
        "x.toml: islands[1].delivery.day: missing (add day = 75, the planned day, from day 0)",
        "x.toml: unit_types[0].removal_days.maxi = 10: unknown key (did you mean 'max'?)",
        "x.toml: unit_types[0].removal_days.max: missing "
        "(add max = 10, the longest duration in days)",
    ]


def test_unknown_key_lists_allowed_keys_when_none_is_close():
    text = variant(('{ units = "N01..N02", row = "A1" }',
                    '{ units = "N01..N02", row = "A1", zzz = 1 }'))
    assert problems(text) == [
        "x.toml: strategies[0].place[0].zzz = 1: unknown key (allowed keys: units, row)"]


def test_wrong_types():
    text = variant(("gpus = 256", 'gpus = "256"'),
                   ("power_kw = 135", "power_kw = true"),
                   ("h100_eq_per_gpu = 2.5", "h100_eq_per_gpu = [2.5]"),
                   ("drain_days = 2", 'drain_days = "2"'),
                   ("[[halls]]\nid = \"A\"", "[[halls]]\nid = 1"),
                   ('rows = [{ id = "B1", cooling = "liquid", positions = 12 }]',
                    'rows = { id = "B1", cooling = "liquid", positions = 12 }'),
                   ('arrival = { day = 75,', 'arrival = { day = "75",'),
                   ('units = "N01..N16"', "units = 16"))
    assert problems(text) == [
        "x.toml: unit_types[0].gpus = '256': must be a number, not a string "
        "(for example gpus = 72)",
        "x.toml: unit_types[0].drain_days = '2': must be a number of days or a distribution "
        'table, not a string (for example drain_days = { dist = "triangular", min = 2, '
        "mode = 4, max = 10 })",
        "x.toml: unit_types[1].h100_eq_per_gpu = [2.5]: must be a number, not an array "
        "(for example h100_eq_per_gpu = 2.5)",
        "x.toml: unit_types[1].power_kw = True: must be a number, not a boolean "
        "(for example power_kw = 135)",
        "x.toml: halls[0].id = 1: must be a string, not a number (for example id = \"A\")",
        "x.toml: halls[1].rows = {'id': 'B1', 'cooling': 'liquid', 'positions': 12}: "
        'must be an array of tables, not a table '
        '(write rows = [{ id = "A1", cooling = "air", positions = 2 }])',
        "x.toml: incoming[0].units = 16: must be an id or an array of ids, not a number "
        '(for example units = "N01..N16")',
        "x.toml: shipments[0].arrival.day = '75': must be a number, not a string "
        "(for example day = 75)",
    ]


@pytest.mark.parametrize("old, new, expected", [
    ("median = 5, p90 = 20", "median = 5, p90 = 3",
     "shipments[0].arrival.delay.p90 = 3: must be > median (5) (the 90th percentile lies "
     "above the median; for a certain duration write the number alone)"),
    ("median = 14, p90 = 45", "median = 0, p90 = 45",
     "shared_delays.vendor.median = 0: must be > 0 (the median duration in days)"),
    ("min = 3, mode = 5, max = 10", "min = 6, mode = 5, max = 10",
     "unit_types[0].removal_days.mode = 5: must be >= min (6) "
     "(min <= mode <= max, with min < max)"),
    ("min = 2, mode = 4, max = 10", "min = 2, mode = 12, max = 10",
     "unit_types[1].install_days.mode = 12: must be <= max (10) "
     "(min <= mode <= max, with min < max)"),
    ("min = 3, mode = 5, max = 10", "min = 5, mode = 5, max = 5",
     "unit_types[0].removal_days.max = 5: must be > min (5) "
     "(for a certain duration write the number alone)"),
    ("p = 0.35", "p = 1.5",
     "halls[1].energized.delay.p = 1.5: must be a probability in [0, 1] "
     "(the probability that the duration is drawn, else it is 0)"),
    ("fail_first = 0.30", "fail_first = -0.1",
     "unit_types[1].burn_in.fail_first = -0.1: must be a probability in [0, 1] "
     "(the failure probability of a unit's first attempt)"),
    ("min = 1, mode = 4, max = 14", "min = -1, mode = 4, max = 14",
     "unit_types[1].burn_in.fix_days.min = -1: must be >= 0 (the shortest duration in days)"),
    ("install_days = 14", "install_days = -14",
     "islands[1].install_days = -14: must be >= 0 (days to install after delivery)"),
    ('dist = "lognormal", median = 30', 'dist = "lognormall", median = 30',
     "unit_types[1].burn_in.rma_days.dist = 'lognormall': unknown distribution "
     "(did you mean 'lognormal'?)"),
    ('dist = "lognormal", median = 30', 'dist = "gamma", median = 30',
     "unit_types[1].burn_in.rma_days.dist = 'gamma': unknown distribution "
     "(known distributions: fixed, uniform, triangular, pert, lognormal, chance)"),
    ('then = { dist = "lognormal", median = 45, p90 = 120 }',
     'then = { dist = "chance", p = 0.5, then = 3 }',
     "halls[1].energized.delay.then.dist = 'chance': a chance cannot draw from another "
     "chance (multiply the two probabilities into one chance)"),
])
def test_impossible_distributions(old, new, expected):
    assert problems(variant((old, new))) == [f"x.toml: {expected}"]


def test_pert_and_uniform_and_fixed_tables():
    s = load_text(variant(
        ("days = { dist = \"triangular\", min = 21, mode = 35, max = 70 }",
         "days = { dist = \"pert\", min = 21, mode = 35, max = 70 }"),
        ("drain_days = 2", 'drain_days = { dist = "uniform", min = 1, max = 3 }'),
        ("install_days = 14", 'install_days = { dist = "fixed", value = 14 }')))
    assert s.retrofit.days == Distribution("pert", (21.0, 35.0, 70.0, 4.0))
    assert s.unit_types[0].drain_days == Distribution("uniform", (1.0, 3.0))
    assert s.islands[1].install_days == Distribution.fixed(14)


def test_unknown_references_with_did_you_mean():
    text = variant(('island = "ndr"', 'island = "nd"'),
                   ('type = "gb300-nvl72"', 'type = "gb300"'),
                   ('rows = "A1..A8"', 'rows = ["A1..A7", "A08"]'),
                   ('shared = ["vendor"]', 'shared = ["vendr"]'),
                   ('units = "N13..N16"', 'units = ["N13..N15", "N61"]'),
                   ('{ units = "N01..N02", row = "A9" }', '{ units = "N01..N02", row = "A10" }'),
                   ('on_arrival = "S1"', 'on_arrival = "S5"'),
                   ('{ units = "SU1", on_accepted = "N01..N02" }',
                    '{ units = ["SU1", "SU9"], on_accepted = "N01..N02" }'))
    assert problems(text) == [
        "x.toml: unit_types[0].island = 'nd': unknown island (did you mean 'ndr'?)",
        "x.toml: existing[0].rows = 'A08': unknown row (did you mean 'A8'?)",
        "x.toml: incoming[0].type = 'gb300': unknown unit type (did you mean 'gb300-nvl72'?)",
        "x.toml: shipments[0].arrival.shared = 'vendr': unknown shared delay "
        "(did you mean 'vendor'?)",
        "x.toml: shipments[3].units = 'N61': unknown unit (did you mean 'N16'?)",
        "x.toml: incoming[0].units = 'N16': N16 is not delivered by any shipment "
        "(add it to the units of a [[shipments]] entry)",
        "x.toml: strategies[1].drain[0].on_arrival = 'S5': unknown shipment "
        "(known shipments: S1..S4)",
        "x.toml: strategies[2].place[0].row = 'A10': unknown row (did you mean 'A1'?)",
        "x.toml: strategies[2].drain[0].units = 'SU9': unknown unit (did you mean 'SU8'?)",
    ]


@pytest.mark.parametrize("edit, expected", [
    (('[[incoming]]', '[[incoming]]\nunits = "N05"\ntype = "gb300-nvl72"\n\n[[incoming]]'),
     "incoming[1].units = 'N05': duplicate unit id, also at incoming[0].units "
     "(give each its own id)"),
    (('[[incoming]]\nunits = "N01..N16"', '[[incoming]]\nunits = ["N01..N16", "SU3"]'),
     "incoming[0].units = 'SU3': duplicate unit id, also at existing[0].units "
     "(give each its own id)"),
    (('{ id = "B1", cooling = "liquid", positions = 12 }',
      '{ id = "B1", cooling = "liquid", positions = 12 }, '
      '{ id = "A9", cooling = "air", positions = 2 }'),
     "halls[1].rows[1].id = 'A9': duplicate row id, also at halls[0].rows[8].id "
     "(give each its own id)"),
    (('[retrofit]', '[[halls]]\nid = "A"\npower_cap_kw = 1\nrows = []\n\n[retrofit]'),
     "halls[2].id = 'A': duplicate hall id, also at halls[0].id (give each its own id)"),
    (('id = "S4"\nunits = "N13..N16"',
      'id = "S4"\nunits = "N13..N14"\narrival = { day = 170 }\n\n'
      '[[shipments]]\nid = "S4"\nunits = "N15..N16"'),
     "shipments[4].id = 'S4': duplicate shipment id, also at shipments[3].id "
     "(give each its own id)"),
    (('name = "hybrid-gated"', 'name = "big-bang"'),
     "strategies[4].name = 'big-bang': duplicate strategy name, also at strategies[0].name "
     "(give each its own name)"),
    (('[[islands]]', '[[unit_types]]\nid = "gb300-nvl72"\ngpus = 72\nh100_eq_per_gpu = 2.5\n'
      'power_kw = 135\ncooling = "liquid"\nisland = "xdr"\n\n[[islands]]'),
     "unit_types[2].id = 'gb300-nvl72': duplicate unit type id, also at unit_types[1].id "
     "(give each its own id)"),
    (('[[halls]]', '[[islands]]\nid = "xdr"\n\n[[halls]]'),
     "islands[2].id = 'xdr': duplicate island id, also at islands[1].id "
     "(give each its own id)"),
    (('units = "N01..N16"', 'units = ["N01..N16", "N07"]'),
     "incoming[0].units = 'N07': names N07 more than once (list each id once)"),
])
def test_duplicate_ids(edit, expected):
    assert problems(variant(edit)) == [f"x.toml: {expected}"]


def test_unit_placed_twice_or_never():
    text = variant(('{ units = "N15..N16", row = "A8" }', '{ units = "N14..N15", row = "A8" }'))
    assert problems(text) == [
        "x.toml: strategies[0].place[7].units = 'N14': N14 is placed twice in strategy "
        "'big-bang', also at strategies[0].place[6].units (place each incoming unit once)",
        "x.toml: strategies[0].place: N16 is never placed in strategy 'big-bang' "
        '(add { units = "N16", row = "..." } to place)',
    ]


def test_unit_drained_twice_or_never():
    text = variant(('drain = [{ units = "SU1..SU8", day = 60 }]',
                    'drain = [{ units = "SU1..SU7", day = 60 }, { units = "SU7", day = 70 }]'))
    assert problems(text) == [
        "x.toml: strategies[0].drain[1].units = 'SU7': SU7 is drained twice in strategy "
        "'big-bang', also at strategies[0].drain[0].units (drain each existing unit once)",
        "x.toml: strategies[0].drain: SU8 is never drained in strategy 'big-bang' "
        '(add { units = "SU8", day = ... } to drain, or keep = ["SU8"] to keep it in service)',
    ]


def test_existing_unit_in_place_and_incoming_unit_in_drain():
    text = variant(('{ units = "N01..N12", row = "B1" },', '{ units = "N01..N12", row = "B1" }, '
                    '{ units = "SU1", row = "B1" },'),
                   ('{ units = "SU3..SU4", on_arrival = "S1" },',
                    '{ units = ["SU3..SU4", "N01"], on_arrival = "S1" },'),
                   ('{ units = "SU3..SU4", on_accepted = "N01..N04" }',
                    '{ units = "SU3..SU4", on_accepted = ["N01..N04", "SU8"] }'))
    assert problems(text) == [
        "x.toml: strategies[3].place[1].units = 'SU1': SU1 is an existing unit; "
        "place takes incoming units (list existing units under drain)",
        "x.toml: strategies[3].drain[0].units = 'N01': N01 is an incoming unit; "
        "drain takes existing units (list incoming units under place)",
        "x.toml: strategies[4].drain[0].on_accepted = 'SU8': SU8 is an existing unit; "
        "on_accepted waits for incoming units (name new units, or use day)",
    ]


def test_row_over_capacity():
    text = variant(('{ units = "N01..N02", row = "A1" },\n  { units = "N03..N04", row = "A2" },',
                    '{ units = "N01..N03", row = "A1" },\n  { units = "N04", row = "A2" },'))
    assert problems(text) == [
        "x.toml: strategies[0].place[0].row = 'A1': 3 new units are placed in row A1, which "
        "has 2 positions (place 1 of them in another row, or raise positions of row A1)"]


def test_liquid_unit_in_air_row_needs_retrofit_once_per_strategy():
    start = REFERENCE_TEXT.index("[retrofit]")
    retrofit = REFERENCE_TEXT[start:REFERENCE_TEXT.index("# ----", start)]
    hint = ("and there is no [retrofit] to convert the row (add a [retrofit] table with crews "
            "and days, or place liquid units in liquid-cooled rows)")
    assert problems(variant((retrofit, ""))) == [
        f"x.toml: strategies[0].place[0].row = 'A1': row A1 is air-cooled, N01 is "
        f"liquid-cooled, {hint}",
        f"x.toml: strategies[1].place[0].row = 'A1': row A1 is air-cooled, N01 is "
        f"liquid-cooled, {hint}",
        f"x.toml: strategies[2].place[0].row = 'A9': row A9 is air-cooled, N01 is "
        f"liquid-cooled, {hint}",
        f"x.toml: strategies[3].place[1].row = 'A1': row A1 is air-cooled, N13 is "
        f"liquid-cooled, {hint}",
        f"x.toml: strategies[4].place[1].row = 'A1': row A1 is air-cooled, N13 is "
        f"liquid-cooled, {hint}",
    ]


def test_air_unit_in_liquid_row_needs_no_retrofit():
    text = MINIMAL_TEXT.replace('cooling = "air", positions', 'cooling = "liquid", positions')
    text = variant(("[retrofit]\ncrews = 1\ndays = { dist = \"uniform\", min = 7, max = 14 }\n",
                    ""), text=text)
    assert len(load_text(text).strategies) == 2


def test_incoming_unit_delivered_by_no_shipment_or_by_two():
    text = variant(('units = "N13..N16"', 'units = "N12..N15"'))
    assert problems(text) == [
        "x.toml: shipments[3].units = 'N12': N12 is already delivered by shipment 'S3' "
        "(each incoming unit arrives in one shipment)",
        "x.toml: incoming[0].units = 'N16': N16 is not delivered by any shipment "
        "(add it to the units of a [[shipments]] entry)",
    ]


def test_trigger_problems():
    text = variant(('drain = [{ units = "SU1..SU8", day = 60 }]',
                    'drain = [{ units = "SU1..SU8", day = -60 }]'),
                   ('{ units = "SU1", on_accepted = "N01..N02" }',
                    '{ units = "SU1", lag_days = -1 }'),
                   ('{ units = "SU1..SU2", on_arrival = "S1" }',
                    '{ units = "SU1..SU2", on_arrival = [] }'))
    assert problems(text) == [
        "x.toml: strategies[0].drain[0].day = -60: must be >= 0 "
        "(the earliest day the drain starts)",
        "x.toml: strategies[1].drain[0].on_arrival = []: must name at least one id "
        '(for example on_arrival = "S1")',
        "x.toml: strategies[2].drain[0].lag_days = -1: must be >= 0 "
        "(days to wait after the conditions)",
        "x.toml: strategies[2].drain[0]: no trigger: a drain needs day, on_arrival or "
        'on_accepted (add day = 60, on_arrival = "S1" or on_accepted = "N01")',
    ]


def test_deadlock_in_one_row():
    text = variant(('{ units = "SU1", on_accepted = "N01..N02" }',
                    '{ units = "SU1", on_accepted = ["N03", "N04"] }'))
    assert problems(text) == [
        "x.toml: strategies[2].drain[0].on_accepted = ['N03', 'N04']: deadlock: SU1 drains "
        "after N03 is accepted, N03 is placed in row A1, row A1 is free only after SU1 drains "
        "(drain on units placed elsewhere, or place N03 in an empty row)"]


def test_deadlock_across_rows_is_reported_once():
    text = variant(('{ units = "SU1", on_accepted = "N01..N02" }',
                    '{ units = "SU1", on_accepted = "N05..N06" }'))
    assert problems(text) == [
        "x.toml: strategies[2].drain[0].on_accepted = ['N05', 'N06']: deadlock: SU1 drains "
        "after N05 is accepted, N05 is placed in row A2, row A2 is free only after SU2 drains, "
        "SU2 drains after N03 is accepted, N03 is placed in row A1, row A1 is free only after "
        "SU1 drains (drain on units placed elsewhere, or place N05 in an empty row)"]


def test_gating_on_units_in_other_rows_is_no_deadlock():
    # hybrid-gated drains SU1, SU2 (rows A1, A2) on N01..N12 (hall B): waits, but no cycle.
    s = load_scenario(SCENARIOS / "reference-2048.toml")
    assert s.strategy("hybrid-gated").drains[6][1].on_accepted[-1] == "N12"


@pytest.mark.parametrize("old, new, expected", [
    ("horizon_days = 540", "horizon_days = 0",
     "scenario.horizon_days = 0: must be > 0 (the days to evaluate metrics over)"),
    ("gpus = 256", "gpus = 0", "unit_types[0].gpus = 0: must be >= 1 (GPUs per unit)"),
    ("gpus = 256", "gpus = 25.5",
     "unit_types[0].gpus = 25.5: must be a whole number (for example gpus = 72)"),
    ("h100_eq_per_gpu = 1.0", "h100_eq_per_gpu = 0",
     "unit_types[0].h100_eq_per_gpu = 0: must be > 0 "
     "(performance of one GPU relative to one H100)"),
    ("power_cap_kw = 3000", "power_cap_kw = 0",
     "halls[0].power_cap_kw = 0: must be > 0 (the hall's IT power cap in kW)"),
    ('{ id = "A9", cooling = "air", positions = 2 }',
     '{ id = "A9", cooling = "air", positions = -2 }',
     "halls[0].rows[8].positions = -2: must be >= 0 "
     "(how many new units the row holds once empty)"),
    ('{ id = "A9", cooling = "air", positions = 2 }',
     '{ id = "A9", cooling = "gas", positions = 2 }',
     "halls[0].rows[8].cooling = 'gas': must be 'air' or 'liquid' "
     "(cooling values: air, liquid)"),
    ("crews = 1", "crews = 0",
     "retrofit.crews = 0: must be >= 1 (rows retrofitted at the same time)"),
    ("largest_job = 1024", "largest_job = -1",
     "demand.largest_job = -1: must be >= 0 (the H100-eq the largest job needs in one island)"),
    ("[150, 2048]", "[0, 2048]",
     "demand.points[1][0] = 0: must be > the previous point's day (0) "
     "(list points with days strictly increasing)"),
    ("[360, 2816]", "[360, -2816]", "demand.points[2][1] = -2816: must be >= 0 (H100-eq)"),
    ("[360, 2816]", "[360]", "demand.points[2] = [360]: must be a [day, H100-eq] pair "
     "(for example [150, 2048])"),
    ('id = "ndr"', 'id = "ndr"\ninstall_days = 3',
     "islands[0].install_days = 3: install_days without delivery: an island without "
     "delivery is ready at day 0 (add delivery = { day = ... } or remove install_days)"),
    ('rows = "A1..A8"', 'rows = "A1..A3"',
     "existing[0].rows = 'A1..A3': names 3 rows for 8 units, which they do not fill evenly "
     "(give one row for all units, one row per unit in the same order, or a block of rows "
     "the units fill evenly in order (128 units in 8 rows: 16 in each))"),
    ("horizon_days = 540", "horizon_days = inf",
     "scenario.horizon_days = inf: must be a finite number (for example horizon_days = 540)"),
    ("median = 14, p90 = 45", "median = 14, p90 = nan",
     "shared_delays.vendor.p90 = nan: must be a finite number (for example p90 = 45)"),
    ('id = "S1"', 'id = "S..1"',
     "shipments[0].id = 'S..1': must not contain '..', which marks a range in id lists "
     '(for example id = "S1")'),
])
def test_semantic_sanity(old, new, expected):
    assert problems(variant((old, new))) == [f"x.toml: {expected}"]


@pytest.mark.parametrize("edit, expected", [
    (("fail_retry = 0.10", "fail_retry = 1"),
     "unit_types[1].burn_in.fail_retry = 1: must be < 1 when fail_first = 1: burn-in would "
     "never end (every attempt fails; lower fail_retry or fail_first)"),
    (("rma_after_failures = 3", "rma_after_failures = 1"),
     "unit_types[1].burn_in.fail_first = 1: must be < 1 when rma_after_failures = 1: "
     "burn-in would never end (every first attempt fails, and every RMA restarts with a "
     "first attempt)"),
])
def test_burn_in_that_never_ends(edit, expected):
    assert problems(variant(("fail_first = 0.30", "fail_first = 1"), edit)) == \
        [f"x.toml: {expected}"]


def test_burn_in_ends_while_a_first_attempt_can_pass():
    # fail_retry = 1 alone: a failed first attempt fails every retry and is replaced (RMA),
    # but the replacement's first attempt passes with probability 0.7.
    s = load_text(variant(("fail_retry = 0.10", "fail_retry = 1")))
    assert s.unit_type("gb300-nvl72").burn_in.fail_retry == 1.0


@pytest.mark.parametrize("ids, expected", [
    ('"N01..X16"', "incoming[0].units = 'N01..X16': malformed range: the ends have different "
     "prefixes ('N' and 'X') (write a range like \"N01..N16\": same prefix, numbers counting "
     "up)"),
    ('["N16..N01"]', "incoming[0].units[0] = 'N16..N01': malformed range: the end (1) is "
     "before the start (16) (write the lower number first)"),
    ('"NA..NB"', "incoming[0].units = 'NA..NB': malformed range: both ends must end in a "
     "number (write a range like \"N01..N16\": same prefix, numbers counting up)"),
    ('["N01..N16", ""]', "incoming[0].units[1] = '': must be a non-empty id, not an empty "
     'string (for example units = "N01..N16")'),
])
def test_malformed_ranges(ids, expected):
    # The incoming fleet is then unknown, so nothing downstream is checked against it.
    assert problems(variant(('units = "N01..N16"', f"units = {ids}"))) == [f"x.toml: {expected}"]


def test_no_strategies():
    text = "strategies = []\n" + REFERENCE_TEXT[:REFERENCE_TEXT.index("[[strategies]]")]
    assert problems(text) == [
        "x.toml: strategies = []: must have at least one strategy "
        "(add [[strategies]] tables, the plans to compare)"]
