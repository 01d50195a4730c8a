"""mcrisk optimize and islands by position: a plan that moves a unit whose type names no
island into a row no positional island covers is rejected before simulation, counted as
'no island' (the scenario's own check, applied to plans the file never had)."""
from __future__ import annotations

import dataclasses

import pytest

from mcrisk.optimize.candidates import _Checker
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS, variant

pytestmark = pytest.mark.usefixtures("in_tmp")


def test_a_plan_that_leaves_a_unit_without_an_island_is_rejected(tmp_path):
    text = (SCENARIOS / "positions.toml").read_text()
    head, first = text.split("[[strategies]]\n")[:2]
    text = variant(('id = "xdr-a"\n', 'id = "xdr-a"\nrows = "A9..A10"\n'),
                   text=head + "[[strategies]]\n" + first)
    start = text.index("island = ", text.index('id = "gb300-nvl72"'))
    text = text[:start] + text[text.index("\n", start) + 1:]     # GB300s name no island
    path = tmp_path / "islands.toml"
    path.write_text(text)
    scenario = load_scenario(path)
    checker = _Checker(None, scenario)
    template = scenario.strategies[0]
    assert checker.reason(template) is None
    moved = dataclasses.replace(template, placement=tuple(
        (unit, "A1" if unit == "N17" else row) for unit, row in template.placement))
    assert checker.reason(moved) == "no island"
    gb200 = dataclasses.replace(template, placement=tuple(   # a GB200 names xdr-a: fine
        (unit, "A9" if unit == "G01" else "B1" if unit == "N17" else row)
        for unit, row in template.placement))
    assert checker.reason(gb200) is None
