"""Scenario files that are valid TOML with valid-looking values, but would crash, exhaust memory
or hang a run, or reach a terminal, HTML or Markdown raw: each is refused by validation with one
located problem (`file: key.path = value: what is wrong (hint)`), never another exception.

Like tests/scenario/test_validation.py, bad files are scenarios/minimal.toml with a textual
edit, written to a temporary folder as x.toml.
"""
from __future__ import annotations

import hashlib
import os
import re
import sys
from pathlib import Path

import pytest

from mcrisk.cli import main
from mcrisk.core.errors import Problem, ScenarioError
from mcrisk.report.nightly.alerts import parse_condition
from mcrisk.scenario import (MAX_ENTRIES, MAX_FILE_BYTES, MAX_STRATEGIES, MAX_UNITS,
                             expected_burn_in_attempts, largest_draw, load_scenario,
                             scenario_sha256)

from ..helpers import MINIMAL_TEXT, ROOT, load_text, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in messages


def minimal(*edits: tuple[str, str]) -> str:
    return variant(*edits, text=MINIMAL_TEXT)


# A new unit type with a ramp, for edits of ramp values
RAMP = ("install_days = 2\n",
        "install_days = 2\nramp = { start_fraction = 0.5, days = 30, steps = 4 }\n")


# --------------------------------------------------------------------------------------------
# Item 5: upper bounds on every number that reaches the kernels


@pytest.mark.parametrize("edits, expected", [
    ([("horizon_days = 200", "horizon_days = 1e7")],
     "scenario.horizon_days = 10000000: must be <= 7,300 (20 years: capacity bands keep every "
     "day of the horizon for every strategy)"),
    ([("horizon_days = 200", "horizon_days = 1e308")],
     "scenario.horizon_days = 1e+308: must be <= 7,300"),
    ([("crews = 1", "crews = 1e18")],
     "retrofit.crews = 1e+18: must be <= 3 (one crew per row, 3 rows: more crews than rows "
     "never work at once)"),
    ([("rma_after_failures = 3", "rma_after_failures = 9223372036854775807")],
     "unit_types[1].burn_in.rma_after_failures = 9223372036854775807: must be <= 100"),
    ([RAMP, ("steps = 4", "steps = 100_000")], "unit_types[1].ramp.steps = 100000: must be <= 100"),
    ([RAMP, ("steps = 4", "steps = 1e9")], "unit_types[1].ramp.steps = 1000000000: must be <= 100"),
    ([RAMP, ("days = 30", "days = 1e300")], "unit_types[1].ramp.days = 1e+300: must be <= 36,500"),
    ([("gpus = 72", "gpus = 1e300")], "unit_types[1].gpus = 1e+300: must be <= 1,000,000"),
    ([("gpus = 72", "gpus = 0x" + "f" * 4000)],
     "unit_types[1].gpus = <an integer of about 4817 digits>: is too large for a number"),
    ([("h100_eq_per_gpu = 2.5", "h100_eq_per_gpu = 1e4")],
     "unit_types[1].h100_eq_per_gpu = 10000: must be <= 1,000"),
    ([("h100_eq_per_gpu = 2.5",
       'h100_eq_per_gpu = { dist = "triangular", min = 2, mode = 2.5, max = 5000 }')],
     "unit_types[1].h100_eq_per_gpu.max = 5000: must be <= 1,000"),
    ([("h100_eq_per_gpu = 2.5", 'h100_eq_per_gpu = { dist = "lognormal", median = 2.5, p90 = 10 }')],
     "unit_types[1].h100_eq_per_gpu.p90 = 10: lets a draw reach 1.798e+04 H100-eq per GPU, more "
     "than 1,000"),
    ([("power_kw = 135", "power_kw = 1e300")], "unit_types[1].power_kw = 1e+300: must be <= 1,000,000,000"),
    ([("power_cap_kw = 500", "power_cap_kw = 1e300")],
     "halls[0].power_cap_kw = 1e+300: must be <= 1,000,000,000"),
    ([("positions = 2 }", "positions = 1e300 }")],
     "halls[0].rows[0].positions = 1e+300: must be <= 10,000"),
    ([("[120, 360]", "[120, 1e300]")], "demand.points[2][1] = 1e+300: must be <= 1,000,000,000"),
    ([("[120, 360]", "[1e300, 360]")], "demand.points[2][0] = 1e+300: must be <= 36,500"),
    ([("largest_job = 64", "largest_job = 1e300")], "demand.largest_job = 1e+300: must be <= 1,000,000,000"),
    ([("drain_days = 1", "drain_days = 1e308")],
     "unit_types[0].drain_days = 1e+308: must be <= 36,500 (100 years: a migration's dates and "
     "durations are far shorter, and every sum of times stays finite)"),
    ([("min = 7, max = 14", "min = 7, max = 1e300")], "retrofit.days.max = 1e+300: must be <= 36,500"),
    ([("delivery = { day = 20 }", "delivery = { day = 1e300 }")],
     "islands[1].delivery.day = 1e+300: must be <= 36,500"),
    ([('{ dist = "triangular", min = 0, mode = 3, max = 10 }',
       '{ dist = "lognormal", median = 1e-300, p90 = 5 }')],
     "shipments[0].arrival.delay.p90 = 5: must be <= 1,000 x median (1e-297) (a wider "
     "lognormal's far tail"),
    ([("mode = 3, max = 10 }", "mode = 3, max = 10, lambda = 1e300 }"),
      ('"triangular", min = 0', '"pert", min = 0')],
     "shipments[0].arrival.delay.lambda = 1e+300: must be <= 1,000"),
    ([("units = \"E1..E2\", day = 30", "units = \"E1..E2\", day = 1e300")],
     "strategies[1].drain[0].day = 1e+300: must be <= 36,500"),
    ([("units = \"E1..E2\", day = 30", "units = \"E1..E2\", day = 30, lag_days = 1e300")],
     "strategies[1].drain[0].lag_days = 1e+300: must be <= 36,500"),
    ([("fail_first = 0.3", "fail_first = 0.9999"), ("fail_retry = 0.1", "fail_retry = 0.9999")],
     "unit_types[1].burn_in: a unit needs 10,000 attempts on average (fail_first = 0.9999, "
     "fail_retry = 0.9999, rma_after_failures = 3), more than 1,000"),
])
def test_values_past_a_limit_are_located_errors(edits, expected):
    found = problems(minimal(*edits))
    assert len(found) == 1, found
    assert found[0].startswith("x.toml: " + expected), found[0]


def test_values_at_the_limits_load():
    s = load_text(minimal(("horizon_days = 200", "horizon_days = 7300"),
                          ("crews = 1", "crews = 3"),
                          ("rma_after_failures = 3", "rma_after_failures = 100"), RAMP,
                          ("steps = 4", "steps = 100"), ("gpus = 72", "gpus = 1_000_000")))
    rack = s.unit_type("gb300-rack")
    assert (s.horizon_days, s.retrofit.crews, rack.burn_in.rma_after_failures,
            rack.ramp.steps, rack.gpus) == (7300, 3, 100, 100, 1_000_000)
    s = load_text(minimal(("h100_eq_per_gpu = 2.5", "h100_eq_per_gpu = 1000")))
    assert s.unit_type("gb300-rack").capacity == 72_000


def test_total_capacity_is_bounded_so_the_bands_count_exactly():
    # two pods of 64 H100-eq, then racks of 1e6 GPUs x 1000 H100-eq: past 1e9 at the first rack
    text = minimal(("gpus = 72", "gpus = 1_000_000"), ("h100_eq_per_gpu = 2.5",
                                                       "h100_eq_per_gpu = 1000"))
    assert problems(text) == [
        "x.toml: incoming[0].units = 'N1': takes the capacity of all units to 1,000,000,128 H100-eq, "
        "more than 1,000,000,000 (1e9 H100-eq is a thousand times the largest cluster; capacity "
        "bands count in millionths of an H100-eq within 2**53; check gpus, h100_eq_per_gpu and "
        "power_kw of its type)"]


def test_largest_draw_of_a_performance_distribution():
    from mcrisk.core.model import Distribution
    assert largest_draw(Distribution("pert", (2.0, 2.5, 3.0, 4.0))) == 3.0
    assert largest_draw(Distribution.fixed(2.0)) == 2.0
    # lognormal: median x (p90 / median) ** (8.2095 / 1.28155)
    assert largest_draw(Distribution("lognormal", (2.0, 4.0))) == pytest.approx(
        2.0 * 2.0 ** (8.209536151601387 / 1.2815515655446004))


def test_expected_burn_in_attempts_by_hand():
    assert expected_burn_in_attempts(0.0, 0.5, 3) == 1.0
    # fail_first 0.5, no retries before an RMA: geometric, 2 attempts on average
    assert expected_burn_in_attempts(0.5, 0.9, 1) == pytest.approx(2.0)
    # 1 + 0.5 (second attempt) + 0.5 * 0.5 (third), the round fails with 0.5 * 0.5 ** 2
    assert expected_burn_in_attempts(0.5, 0.5, 3) == pytest.approx(1.75 / 0.875)
    assert expected_burn_in_attempts(1.0, 1.0, 3) == float("inf")


def test_too_many_units_strategies_rows_or_points():
    units = minimal(('units = "N1..N2"\ntype', f'units = "N1..N{MAX_UNITS - 1}"\ntype'))
    found = problems(units)
    assert found[0] == (
        f"x.toml: incoming[0].units = 'N{MAX_UNITS - 1}': is unit 10,001: at most 10,000 existing "
        "and incoming units together (model larger units (a rack or a scalable unit, not a node): "
        "every unit is work drawn in every scenario)")
    text = MINIMAL_TEXT
    strategy = text[text.index("[[strategies]]"):text.index('[[strategies]]\nname = "drain')]
    many = text + "".join(strategy.replace('"swap-gated"', f'"s{k}"')
                          for k in range(MAX_STRATEGIES))
    assert problems(many) == [
        f"x.toml: strategies: has {MAX_STRATEGIES + 2} strategies, more than {MAX_STRATEGIES} "
        "(every strategy is simulated in every scenario and keeps its own capacity bands; "
        "compare fewer at a time)"]
    points = ", ".join(f"[{k}, 128]" for k in range(MAX_ENTRIES + 1))
    assert problems(minimal(("[[0, 128], [60, 128], [120, 360]]", f"[{points}]"))) == [
        "x.toml: demand.points: has 10,001 points, more than 10,000 (every scenario walks the "
        "demand curve: a point a day for 20 years is 7,300; drop points on straight stretches)"]


# --------------------------------------------------------------------------------------------
# Item 6: nothing to migrate


def test_no_units_at_all_is_refused():
    text = minimal(('[[incoming]]\nunits = "N1..N2"\ntype = "gb300-rack"\n', ""),
                   ('[[existing]]\nunits = "E1..E2"\ntype = "h100-pod"\nrows = "R1..R2"', ""))
    text = text[:text.index("[[shipments]]")] + (
        '[[strategies]]\nname = "nothing"\nplace = []\ndrain = []\n')
    assert problems(text) == [
        "x.toml: no units: [[existing]] and [[incoming]] name none (add the units in service at "
        "day 0 as [[existing]] and the new ones as [[incoming]]: there is nothing to migrate)"]


def _existing_only() -> str:
    text = minimal(('[[incoming]]\nunits = "N1..N2"\ntype = "gb300-rack"\n', ""))
    return text[:text.index("[[shipments]]")] + (
        '[[strategies]]\nname = "retire"\nplace = []\ndrain = [{ units = "E1..E2", day = 10 }]\n')


def _incoming_only() -> str:
    text = minimal(('[[existing]]\nunits = "E1..E2"\ntype = "h100-pod"\nrows = "R1..R2"', ""))
    return text[:text.index("[[strategies]]")] + (
        '[[strategies]]\nname = "grow"\nplace = [{ units = "N1..N2", row = "R3" }]\ndrain = []\n')


@pytest.mark.slow
@pytest.mark.parametrize("text", [_existing_only(), _incoming_only()],
                         ids=["existing-only", "incoming-only"])
def test_one_fleet_only_runs_end_to_end(text, tmp_path, capsys):
    Path("x.toml").write_text(text)
    assert main(["run", "x.toml", "--samples", "200", "--backend", "numpy", "--out",
                 str(tmp_path / "out"), "--quiet"]) == 0
    assert (tmp_path / "out" / "capacity_bands.parquet").is_file()
    assert (tmp_path / "out" / "report.html").is_file()


# --------------------------------------------------------------------------------------------
# Item 7: what the TOML reader itself cannot take


def test_deeply_nested_arrays_are_a_located_error():
    text = minimal(("[scenario]", "a = " + "[" * 2000 + "]" * 2000 + "\n[scenario]"))
    line = text.split("\n").index("a = " + "[" * 2000 + "]" * 2000) + 1
    assert problems(text) == [
        f"x.toml: arrays, tables or dotted keys nested too deeply to read (at line {line}) (a "
        "scenario nests them a few levels deep; look for a run of [, { or .)"]


@pytest.mark.parametrize("where", ["", "[scenario]\n"], ids=["top", "in a table"])
def test_deeply_nested_dotted_keys_are_a_located_error(where):
    text = minimal((where + "name", where + ".".join(["a"] * 2000) + " = 1\nname"))
    found = problems(text)
    assert len(found) == 1
    assert re.fullmatch(r"x\.toml: (arrays, tables or dotted keys nested too deeply to read "
                        r"\(at line \d+\)|scenario(\.a){32}: nested more than 32 levels deep) .*",
                        found[0])


def test_nesting_the_reader_takes_is_still_bounded():
    # 100 levels: tomllib reads them, but a scenario never nests so deep
    found = problems(minimal(("[scenario]", "a = " + "[" * 100 + "]" * 100 + "\n[scenario]")))
    assert found == ["x.toml: a" + "[0]" * 32 + ": nested more than 32 levels deep (a scenario "
                     "nests arrays and tables a few levels deep; look for a run of [ or {)"]


def test_a_5000_digit_range_is_a_located_error():
    found = problems(minimal(('units = "N1..N2"', 'units = "N1..N' + "9" * 5000 + '"')))
    assert found[0] == (
        "x.toml: incoming[0].units = 'N" + "9" * 55 + "...: is 5,001 characters long, more than "
        "100 (give a shorter id: it labels tables and charts)")


def test_a_5000_digit_integer_is_a_located_error():
    text = minimal(("gpus = 72", "gpus = " + "9" * 5000))
    line = text.split("\n").index("gpus = " + "9" * 5000) + 1
    found = problems(text)
    assert found == ["x.toml: invalid TOML: Exceeds the limit (4300 digits) for integer string "
                     f"conversion: value has 5000 digits (at line {line}) (a number in a "
                     "scenario has a few digits)"]


@pytest.mark.parametrize("edit", [
    ("[scenario]", "a = " + "[" * 2000 + "]" * 2000 + "\n[scenario]"),
    ('units = "N1..N2"', 'units = "N1..N' + "9" * 5000 + '"'),
    ("horizon_days = 200", "horizon_days = 1e308"),
], ids=["nested", "digits", "horizon"])
def test_cli_exits_2_with_one_line_and_no_traceback(edit, capsys):
    Path("x.toml").write_text(minimal(edit))
    assert main(["validate", "x.toml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("x.toml: ") and "Traceback" not in err and err.count("\n") == 1


# --------------------------------------------------------------------------------------------
# Item 13: strategy names that --fail-if cannot target


@pytest.mark.parametrize("name", ["any", "all"])
def test_strategy_names_any_and_all_are_reserved(name):
    assert problems(minimal(('name = "swap-gated"', f'name = "{name}"'))) == [
        f"x.toml: strategies[0].name = '{name}': is reserved: --fail-if reads '{name}' as every "
        f'strategy (give the strategy another name, for example "{name}-units")']


def test_strategy_names_with_spaces_at_the_ends_are_refused():
    assert problems(minimal(('name = "swap-gated"', 'name = " swap-gated"'))) == [
        "x.toml: strategies[0].name = ' swap-gated': starts or ends with a space (remove it: "
        "names are compared exactly and --fail-if strips spaces)"]


@pytest.mark.parametrize("name", ["a.b", "gate>=2", "x.delta", "big bang", "p90"])
def test_names_with_dots_operators_and_inner_spaces_stay_targetable(name):
    s = load_text(minimal(('name = "swap-gated"', f'name = "{name}"')))
    assert s.strategies[0].name == name
    for text, delta in ((f"{name}.trough_depth.p90 > 0", False),
                        (f"{name}.trough_days.p50.delta >= 1.5", True)):
        condition = parse_condition(text)
        assert (condition.target, condition.delta) == (name, delta)


# --------------------------------------------------------------------------------------------
# Item 15: what reaches the terminal, and files that are not scenarios


def test_long_values_are_cut_at_60_characters_with_an_ellipsis():
    found = problems(minimal(('cooling = "air"', 'cooling = "' + "x" * 80 + '"')))
    assert found == ["x.toml: unit_types[0].cooling = '" + "x" * 56 + "...: must be 'air' or "
                     "'liquid' (cooling values: air, liquid)"]
    assert str(Problem("f", "k", list(range(40)), "m")) == \
        "f: k = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16...: m"


@pytest.mark.parametrize("value, shown", [
    ("\x1b[31mred", r"'\x1b[31mred'"), ("a\nb", r"'a\nb'"), ("nul\x00", r"'nul\x00'")])
def test_control_characters_in_values_are_escaped(value, shown):
    line = str(Problem("x.toml", "k", value, "must be a number"))
    assert line == f"x.toml: k = {shown}: must be a number" and line.isprintable()


def test_control_characters_in_keys_and_messages_are_escaped():
    found = problems(minimal(("[scenario]\n", '[scenario]\n"bad\\u001b[2Jkey\\nx" = 1\n')))
    assert found == [r"x.toml: scenario.bad\x1b[2Jkey\nx = 1: unknown key (allowed keys: name, "
                     "description, horizon_days, start_date, executing)"]
    assert str(Problem("a\nb.toml", "k", 1, "bad\x07", "hint\u202e")) == \
        r"a\nb.toml: k = 1: bad\x07 (hint\u202e)"


@pytest.mark.parametrize("edit, expected", [
    (('name = "swap-gated"', 'name = "swap\\u001bgated"'),
     r"strategies[0].name = 'swap\x1bgated': contains the control or unprintable character "
     r"'\x1b' (ids and names are one line of printable characters)"),
    (('units = "N1..N2"\ntype', 'units = ["N1", "N2\\n"]\ntype'),
     r"incoming[0].units[1] = 'N2\n': contains the control or unprintable character '\n'"),
    (('id = "H"', 'id = "H\\u0000"'), r"halls[0].id = 'H\x00': contains the control"),
    (('id = "ib-old"', 'id = "ib\\u202eold"'), r"islands[0].id = 'ib\u202eold': contains the"),
    (('name = "minimal"', 'name = "mini\\tmal"'), r"scenario.name = 'mini\tmal': contains"),
    (('description = "2 H100', 'description = "line\\nbreak 2 H100'),
     r"scenario.description = 'line\nbreak 2 H100 pods in rows R1, R2 replaced by 2 GB3...: "
     r"contains the control character '\n' (a description is one line of printable text)"),
], ids=["strategy", "unit", "hall", "bidi", "scenario", "description"])
def test_control_characters_in_ids_names_and_descriptions_are_refused(edit, expected):
    found = problems(minimal(edit))
    assert found[0].startswith("x.toml: " + expected), found


def test_shared_delay_names_are_checked_too():
    text = minimal(("[[shipments]]", '[shared_delays]\n"v\\u001b" = 3\n\n[[shipments]]'))
    assert problems(text) == [
        r"x.toml: shared_delays.v\x1b = 'v\x1b': contains the control or unprintable character "
        r"'\x1b' (ids and names are one line of printable characters)"]


def test_unknown_row_lists_the_rows_in_file_order():
    found = problems(minimal(('rows = "R1..R2"', 'rows = "R1..R2"\n'), ('row = "R3"', 'row = "Q"')))
    assert found == ["x.toml: strategies[0].place[0].row = 'Q': unknown row "
                     "(known rows: R1..R3)"]
    found = problems(minimal(('{ id = "R3"', '{ id = "B7"'), ('row = "R3"', 'row = "Q"')))
    assert found[0].endswith("(known rows: R1..R2, B7)")


def test_plurals_of_one():
    found = problems(minimal(('{ id = "R3", cooling = "air", positions = 2 }',
                              '{ id = "R3", cooling = "air", positions = 1 }')))
    assert found == ["x.toml: strategies[0].place[0].row = 'R3': 2 new units are placed in row "
                     "R3, which has 1 position (place 1 of them in another row, or raise "
                     "positions of row R3)"]
    found = problems(minimal(('units = "E1..E2"\ntype = "h100-pod"', 'units = "E1"\ntype = '
                              '"h100-pod"'), ('units = "E1..E2", on_accepted', 'units = "E1", '
                              'on_accepted'), ('units = "E1..E2", day', 'units = "E1", day')))
    assert found == ["x.toml: existing[0].rows = 'R1..R2': names 2 rows for 1 unit, which they "
                     "do not fill evenly (give one row for all units, one row per unit in the "
                     "same order, or a block of rows the units fill evenly in order (128 units "
                     "in 8 rows: 16 in each))"]


def test_a_utf8_byte_order_mark_is_accepted_and_hashed_with_the_file():
    data = b"\xef\xbb\xbf" + MINIMAL_TEXT.encode()
    Path("x.toml").write_bytes(data)
    s = load_scenario("x.toml")
    assert s.name == "minimal"
    assert s.sha256 == scenario_sha256("x.toml") == hashlib.sha256(data).hexdigest()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_is_refused_without_blocking():
    os.mkfifo("x.toml")   # nothing ever writes to it: opening it plainly would block
    with pytest.raises(ScenarioError) as info:
        load_scenario("x.toml")
    assert str(info.value) == ("x.toml: not a regular file (a named pipe) (give the path "
                               "of a scenario's .toml file)")


@pytest.mark.parametrize("path, kind", [(".", "directory"), ("/dev/zero", "character device")])
def test_directories_and_devices_are_refused(path, kind):
    if not os.path.exists(path) or sys.platform == "win32":
        pytest.skip(f"no {path} here")
    with pytest.raises(ScenarioError) as info:
        load_scenario(path)
    assert str(info.value) == (f"{path}: not a regular file (a {kind}) (give the path of a "
                               "scenario's .toml file)")


def test_a_file_over_16_mib_is_refused():
    Path("x.toml").write_bytes(MINIMAL_TEXT.encode() + b"#" * MAX_FILE_BYTES)
    with pytest.raises(ScenarioError) as info:
        load_scenario("x.toml")
    assert str(info.value) == ("x.toml: larger than 16 MiB (a scenario file is a few kB; check "
                               "that this is the scenario)")


# --------------------------------------------------------------------------------------------
# Capacity bands (mcrisk.results.bands) past validation: what they refuse or still handle


def _minimal_plan(**unit_type_changes):
    """minimal.toml compiled, its rack type changed past validation by `unit_type_changes`."""
    import dataclasses

    from mcrisk.plan.compile import compile_scenario

    Path("x.toml").write_text(MINIMAL_TEXT)
    s = load_scenario("x.toml")
    types = tuple(dataclasses.replace(t, **unit_type_changes) if t.id == "gb300-rack" else t
                  for t in s.unit_types)
    return compile_scenario(dataclasses.replace(s, unit_types=types))


def test_bands_refuse_capacities_their_integers_cannot_hold():
    from mcrisk.results.bands import BandCollector, BandsOverflow

    # 1e11 GPUs x 2.5: 2.5e11 H100-eq per rack is 2.5e17 micro-units, past 2**53 (and totals
    # near 2**63 wrapped to nonsense before); validation stops this at 1e9 H100-eq in all
    with pytest.raises(BandsOverflow, match=r"capacity bands: a capacity change of 2\.5e\+11 is "
                                            r"beyond 9,007,199,255"):
        BandCollector(_minimal_plan(gpus=100_000_000_000))
    BandCollector(_minimal_plan(gpus=1_000_000))      # 2 x 2.5e6: fine


def test_bands_of_a_plan_without_units_are_flat():
    import dataclasses

    import numpy as np

    from mcrisk.plan.compile import compile_scenario
    from mcrisk.core.model import Strategy
    from mcrisk.results.bands import BandCollector

    Path("x.toml").write_text(MINIMAL_TEXT)
    s = load_scenario("x.toml")     # validation refuses no units; bands must not crash anyway
    empty = dataclasses.replace(s, existing=(), incoming=(), shipments=(),
                                strategies=(Strategy("nothing", (), ()),))
    plan = compile_scenario(empty)
    collector = BandCollector(plan)
    collector(0, None, None, np.zeros((20, 1, plan.n_nodes)))   # no capacity or power events
    bands = collector.bands()
    assert (bands.total == 0).all() and (bands.p_below_baseline == 0).all()
    assert [row.peak_max_kw for row in collector.hall_power()["nothing"]] == [0.0]


def test_every_limit_is_documented_with_its_value():
    import mcrisk.scenario as scenario

    docs = (ROOT / "docs" / "scenario-format.md").read_text()
    section = docs[docs.index("## Limits"):docs.index("## Error format")]
    shown = {"MAX_FILE_BYTES": "16 MiB", "MAX_TOTAL": "1e9", "MAX_NESTING": "32 levels",
             "MAX_LOGNORMAL_SPREAD": "1,000 x `median`"}
    for name in dir(scenario):
        if name.startswith("MAX_"):
            value = getattr(scenario, name)
            assert shown.get(name, f"| {value:,} ") in section, name


def test_an_id_list_stops_at_10000_ids():
    ranges = ", ".join(f'"X{k}_1..X{k}_9000"' for k in range(1000))   # 9 million ids
    found = problems(minimal(('units = "E1..E2", on_accepted = "N1..N2"',
                              f'units = "E1..E2", on_accepted = [{ranges}]')))
    assert found == ["x.toml: strategies[0].drain[0].on_accepted: names more than 10,000 ids (no "
                     "scenario has more than 10,000 units; see Limits in the scenario format)"]


# --------------------------------------------------------------------------------------------
# Issue 24 item 16: a forecast's growth is bounded like demand points

MINIMAL_POINTS = "points = [[0, 128], [60, 128], [120, 360]]"


def forecast(text: str, horizon: int = 200) -> str:
    return minimal((MINIMAL_POINTS, f"forecast = {text}"),
                   ("horizon_days = 200", f"horizon_days = {horizon}"))


@pytest.mark.parametrize("horizon, workload, growth, at, grown", [
    # 1e9 x 11^20: the red team's 6.7e29 H100-eq (a 40-digit shortfall)
    (7300, "1e9", "10", "demand.forecast.growth_per_year = 10", "6.727e+29"),
    # a distribution's largest value decides, not its mode: 1e8 x 3^(730 / 365) = 9e8 passes
    (730, "1e8", '{ dist = "triangular", min = 0, mode = 2, max = 3 }',
     "demand.forecast.growth_per_year = {'dist': 'triangular', 'min': 0, 'mode': 2, 'max': 3}",
     "1.6e+09"),
])
def test_a_forecast_grown_past_the_demand_limit_is_a_located_error(horizon, workload, growth,
                                                                   at, grown):
    """A forecast's demand was bounded at day 0 only: its growth reached 6.7e29 H100-eq by
    the horizon (1e9 is the limit of every demand point) and a run printed 40-digit
    shortfalls."""
    found = problems(forecast(f"{{ workload_at_day0 = {workload}, growth_per_year = {growth} }}",
                              horizon))
    assert len(found) == 1, found
    assert found[0].startswith(f"x.toml: {at}: lets demand grow to {grown} H100-eq by the "
                               f"horizon (day {horizon:,}): "), found[0]
    assert "more than 1,000,000,000 (lower the growth or workload_at_day0, or shorten the " \
        "horizon; demand points have the same limit: 1e9 H100-eq" in found[0]


def test_a_lognormal_growth_is_bounded_by_its_largest_draw():
    """Its parameters were within 10 (1000% a year) but its far tail, which the generator
    reaches, was 1.7e17: (1 + g)^(day / 365) overflowed to inf in the kernels, and 0 x inf
    demand is nan."""
    found = problems(forecast('{ workload_at_day0 = 0, growth_per_year = { dist = '
                              '"lognormal", median = 0.01, p90 = 10 } }', horizon=7300))
    assert found == [
        "x.toml: demand.forecast.growth_per_year.p90 = 10: lets a draw reach 1.651e+17, more "
        "than 10 (a growth of 1000% a year is beyond any forecast, and the generator reaches "
        "8.2 sigma: narrow the lognormal, its p90 closer to the median, or use pert or "
        "triangular)"]


def test_a_forecast_that_reaches_the_demand_limit_at_the_horizon_loads():
    # 5e8 x (1 + 1)^(365 / 365) = 1e9 exactly, at the horizon
    s = load_text(forecast("{ workload_at_day0 = 5e8, growth_per_year = 1 }", horizon=365))
    assert s.demand.forecast.workload_at_day0 == 5e8


def test_validate_refuses_a_grown_forecast_with_exit_2_and_one_line(capsys):
    Path("x.toml").write_text(forecast("{ workload_at_day0 = 1e9, growth_per_year = 10 }",
                                       horizon=7300))
    assert main(["validate", "x.toml"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("x.toml: demand.forecast.growth_per_year = 10: ")
    assert "Traceback" not in err and err.count("\n") == 1
