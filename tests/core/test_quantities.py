"""Structured quantity labels: every quantity's label spells its name (the random-number
address and metrics.parquet column), and the drivers analysis labels and groups inputs from
the labels, so ids with dots read and group like any other (the regular expressions it used
before split "unit.SU.1.drain" after "SU": SU.1's drain fell out of "every unit's drain")."""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.core import rng
from mcrisk.results.drivers import driver_inputs
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import Q_BURNIN, Q_SAMPLE
from mcrisk.core.errors import ScenarioError
from mcrisk.core.quantities import QuantityLabel
from mcrisk.scenario import load_scenario

from ..conftest import MINIMAL, REFERENCE

# Every kind of draw a scenario has, each uncertain, with the ids as parameters.
EVERY_DRAW = """
[scenario]
name = "every-draw"
horizon_days = 300

[demand]
points = [[0, 128]]
largest_job = 64

[shared_delays]
"{vendor}" = {{ dist = "uniform", min = 0, max = 5 }}

[[unit_types]]
id = "{old}"
gpus = 64
h100_eq_per_gpu = 1.0
power_kw = 80
cooling = "air"
island = "{old_ib}"
drain_days = {{ dist = "uniform", min = 1, max = 2 }}
removal_days = {{ dist = "uniform", min = 2, max = 4 }}

[[unit_types]]
id = "{new}"
gpus = 72
h100_eq_per_gpu = {{ dist = "triangular", min = 2.0, mode = 2.5, max = 2.6 }}
power_kw = 135
cooling = "liquid"
island = "{new_ib}"
install_days = {{ dist = "uniform", min = 1, max = 3 }}

[unit_types.burn_in]
attempt_days = {{ dist = "uniform", min = 3, max = 5 }}
fail_first = 0.3
fail_retry = 0.1
fix_days = 3
rma_after_failures = 3
rma_days = 30

[[islands]]
id = "{old_ib}"

[[islands]]
id = "{new_ib}"
delivery = {{ day = 20, delay = {{ dist = "uniform", min = 0, max = 4 }} }}
install_days = {{ dist = "uniform", min = 3, max = 6 }}

[[halls]]
id = "{old_hall}"
power_cap_kw = 1000
rows = [{{ id = "{row}1", cooling = "air", positions = 1 }},
        {{ id = "{row}2", cooling = "air", positions = 1 }}]

[[halls]]
id = "{hall}"
power_cap_kw = 1000
energized = {{ day = 5, delay = {{ dist = "uniform", min = 0, max = 9 }} }}
rows = [{{ id = "{row}3", cooling = "air", positions = 1 }},
        {{ id = "{row}4", cooling = "air", positions = 1 }}]

[retrofit]
days = {{ dist = "uniform", min = 7, max = 14 }}

[[existing]]
units = "{unit}1..{unit}2"
type = "{old}"
rows = "{row}1..{row}2"

[[incoming]]
units = "{new_unit}1..{new_unit}2"
type = "{new}"

[[shipments]]
id = "{ship}"
units = "{new_unit}1..{new_unit}2"
arrival = {{ day = 10, delay = {{ dist = "uniform", min = 0, max = 3 }}, shared = ["{vendor}"] }}

[[risks]]
id = "{risk}"
probability = 0.5
impact = {{ dist = "uniform", min = 1, max = 5 }}
applies_to = ["install"]

[[strategies]]
name = "side-by-side"
place = [{{ units = "{new_unit}1", row = "{row}3" }}, {{ units = "{new_unit}2", row = "{row}4" }}]
drain = [{{ units = "{unit}1..{unit}2", day = 50 }}]
"""
PLAIN_IDS = dict(vendor="vendor", old="h100", new="gb300", old_ib="ib", new_ib="xdr",
                 old_hall="A", hall="B", row="R", unit="SU", new_unit="N", ship="S1",
                 risk="cdu-recall")
DOTTED_IDS = dict(vendor="vendor.eu", old="h100.pod", new="gb.300", old_ib="ib.old",
                  new_ib="xdr.2", old_hall="hall.A", hall="hall.B", row="R.", unit="SU.",
                  new_unit="N.", ship="S.1", risk="cdu.recall")


def expected_inputs(ids: dict) -> dict[str, str]:
    """Driver input -> label, written out as the analysis has always labelled them."""
    i = ids
    inputs = {
        f"shared.{i['vendor']}": f"shared delay '{i['vendor']}'",
        f"risk.{i['risk']}": f"risk '{i['risk']}'",
        f"shipment.{i['ship']}.arrival.delay": f"shipment {i['ship']}'s own delay",
        f"hall.{i['hall']}.energized.delay": f"hall {i['hall']} energization slip",
        f"island.{i['new_ib']}.install": f"{i['new_ib']} fabric install",
        f"island.{i['new_ib']}.ready.delay": f"{i['new_ib']} fabric delivery delay",
        f"unit_type.{i['new']}.h100_eq_per_gpu": f"{i['new']} performance per GPU",
        "unit.*.drain": "drain days of every unit (sum over 2)",
        "unit.*.removal": "removal days of every unit (sum over 2)",
        "unit.*.install": "install days of every unit (sum over 2)",
        "unit.*.burn_in": "burn-in days of every unit (sum over 2)",
        "row.*.retrofit": "retrofit days of every row (sum over 2)",
    }
    for k in (1, 2):
        unit, new, row = f"{i['unit']}{k}", f"{i['new_unit']}{k}", f"{i['row']}{k + 2}"
        inputs |= {f"unit.{unit}.drain": f"{unit} drain days",
                   f"unit.{unit}.removal": f"{unit} removal days",
                   f"unit.{new}.install": f"{new} install days",
                   f"unit.{new}.burn_in": f"{new} burn-in days",
                   f"row.{row}.retrofit": f"row {row} retrofit days"}
    return inputs


def every_draw_plan(tmp_path, ids):
    path = tmp_path / "every-draw.toml"
    path.write_text(EVERY_DRAW.format(**ids))
    return compile_scenario(load_scenario(path))


def varying_world(plan, n=50):
    """A world whose every quantity varies (driver_inputs keeps only varying ones)."""
    return np.random.default_rng(0).uniform(size=(n, plan.n_quantities))


@pytest.mark.parametrize("ids", [PLAIN_IDS, DOTTED_IDS], ids=["plain ids", "dotted ids"])
def test_driver_labels_and_groups_come_from_the_labels(tmp_path, ids):
    plan = every_draw_plan(tmp_path, ids)
    world = varying_world(plan)
    names, labels, values = driver_inputs(plan, world)
    assert dict(zip(names, labels)) == expected_inputs(ids)
    assert len(names) == len(set(names)) == values.shape[1]
    # a group's column is the sum of its members' columns
    members = [q for q, label in enumerate(plan.quantity_labels)
               if label.section == "unit" and label.part == "burn_in"]
    assert len(members) == 2 and plan.q_kind[members[0]] == Q_BURNIN
    np.testing.assert_array_equal(values[:, names.index("unit.*.burn_in")],
                                  world[:, members].sum(axis=1))


@pytest.mark.parametrize("ids", [PLAIN_IDS, DOTTED_IDS], ids=["plain ids", "dotted ids"])
def test_every_label_spells_its_quantitys_name(tmp_path, ids):
    plan = every_draw_plan(tmp_path, ids)
    assert len(plan.quantity_labels) == plan.n_quantities
    assert [label.name for label in plan.quantity_labels] == list(plan.quantity_names)
    # the labels say what the name says, where the name can be read unambiguously
    labels = dict(zip(plan.quantity_names, plan.quantity_labels))
    assert labels[f"unit.{ids['new_unit']}2.install.with_risks"] == QuantityLabel(
        "unit", f"{ids['new_unit']}2", "install.with_risks")
    assert labels[f"shipment.{ids['ship']}.arrival"] == QuantityLabel("shipment", ids["ship"],
                                                                      "arrival")
    assert labels[f"unit.{ids['new_unit']}1.burn_in.attempts"].part == "burn_in.attempts"


@pytest.mark.parametrize("path", [REFERENCE, MINIMAL], ids=["reference", "minimal"])
def test_shipped_scenarios_label_every_quantity(path):
    plan = compile_scenario(load_scenario(path))
    assert [label.name for label in plan.quantity_labels] == list(plan.quantity_names)
    sampled = [plan.quantity_labels[q] for q in range(plan.n_quantities)
               if plan.q_kind[q] in (Q_SAMPLE, Q_BURNIN)]
    assert {label.section for label in sampled} <= {"shared", "risk", "shipment", "hall",
                                                    "island", "unit_type", "unit", "row",
                                                    "cost"}


def test_a_label_is_checked_and_derived():
    label = QuantityLabel("unit", "N.1", "install")
    assert label.name == "unit.N.1.install"
    assert label.derived("with_risks") == QuantityLabel("unit", "N.1", "install.with_risks")
    assert QuantityLabel("risk", "a.b").name == "risk.a.b"
    assert QuantityLabel("risk", "a.b").derived("x").name == "risk.a.b.x"
    with pytest.raises(ValueError, match="unknown quantity section"):
        QuantityLabel("units", "N1", "install")


def test_a_collision_is_located_at_the_owner_the_label_names(tmp_path, monkeypatch):
    # Incoming unit 'a' (its install is 'unit.a.install') next to a unit with the id
    # 'a.install': the name alone reads as either; the label says it is unit a's. Matching
    # names against id prefixes blamed 'a.install'.
    text = (MINIMAL.read_text().replace('units = "N1..N2"\ntype', 'units = ["a", "a.install"]\ntype')
            .replace('units = "N1..N2"\narrival', 'units = ["a", "a.install"]\narrival')
            .replace('place = [{ units = "N1..N2", row = "R3" }]',
                     'place = [{ units = ["a", "a.install"], row = "R3" }]')
            .replace('on_accepted = "N1..N2"', 'on_accepted = ["a", "a.install"]')
            .replace('{ units = "N1", row = "R1" }', '{ units = "a", row = "R1" }')
            .replace('{ units = "N2", row = "R2" }', '{ units = "a.install", row = "R2" }'))
    path = tmp_path / "dotted.toml"
    path.write_text(text)
    scenario = load_scenario(path)
    real = rng.address_id
    clash = {"shipment.S1.arrival.delay", "unit.a.install"}
    monkeypatch.setattr(rng, "address_id", lambda name: 7 if name in clash else real(name))
    with pytest.raises(ScenarioError) as caught:
        compile_scenario(scenario)
    (problem,) = caught.value.problems
    assert (problem.key, problem.value) == ("incoming.units", "a")
    assert "'unit.a.install' would be those of 'shipment.S1.arrival.delay'" in problem.message
    assert problem.hint == "rename 'a' or 'S1'"
