"""Reservation steps on an event (issue 28 §4; docs/costs.md, Reservations on an event): how
they read, and every mistake as one located problem, on tests/data/costs-small.toml (hall B:
notice_days 30, minimum_term_days 50; strategy "swap" places its new units in row A1 and
"hall-b" in row B1, with its own steps in hall B).
"""
from __future__ import annotations

import pytest

from mcrisk.core.model import Reservation
from mcrisk.plan.compile import compile_scenario

from ..helpers import DATA, load_text, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in messages

TEXT = (DATA / "costs-small.toml").read_text()
STEPS_B = "reservations = [{ day = 0, kw = 0 }, { day = 30, kw = 20 }]"
OWN = 'reservations = [{ hall = "B", day = 0, kw = 0 }, { hall = "B", day = 40, kw = 40 }]'


def hall_b(steps: str) -> str:
    return variant((STEPS_B, f"reservations = [{{ day = 0, kw = 0 }}, {steps}]"), text=TEXT)


def test_a_step_after_an_event_reads_with_the_halls_notice_by_default():
    s = load_text(hall_b('{ after = "arrival:S1", kw = 20 }, '
                         '{ after = "removed:E2", notice_days = 60, kw = 25 }'))
    assert s.costs.power[1].reservations == (
        Reservation(0.0, 0.0), Reservation(30.0, 20.0, "arrival:S1"),
        Reservation(60.0, 25.0, "removed:E2"))
    own = 'reservations = [{ hall = "B", day = 0, kw = 0 }, ' \
          '{ hall = "B", after = "accepted:N2", notice_days = 31, kw = 40 }]'
    s = load_text(variant((OWN, own), text=TEXT))
    assert s.strategies[1].reservation_of("B")[1] == Reservation(31.0, 40.0, "accepted:N2")


def test_the_plan_holds_each_steps_node_and_days_after_it():
    # the hall's steps in "swap", the strategy's own in "hall-b"; hall A (reserved_kw) first
    plan = compile_scenario(load_text(hall_b('{ after = "arrival:S1", notice_days = 35, '
                                             'kw = 20 }')))
    arrival = plan.node_names.index("shipment S1 arrives")
    assert plan.res_node[0, :3].tolist() == [-1, -1, arrival]
    assert plan.res_day[0, :3].tolist() == [0.0, 0.0, 35.0]
    assert plan.res_node[1, :3].tolist() == [-1, -1, -1]     # hall-b's own: days only
    assert plan.res_term.tolist() == [0.0, 50.0]


@pytest.mark.parametrize("steps, expected", [
    ('{ after = "arival:S1", kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 'arival:S1': unknown event (did you mean "
     "'arrival'?; write \"<event>:<id>\", for example \"arrival:S3\")"),
    ('{ after = "arrival:S9", kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 'arrival:S9': unknown shipment 'S9' "
     "(known shipments: S1)"),
    ('{ after = "removed:N1", kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 'removed:N1': unknown existing unit 'N1' "
     "(known existing units: E1..E2)"),
    ('{ after = "arrival", kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 'arrival': names no shipment (write "
     "\"arrival:<shipment>\", for example \"arrival:S3\")"),
    ('{ after = 5, kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 5: must be a string, not a number (for "
     "example after = \"arrival:S3\")"),
    ('{ day = 30, after = "arrival:S1", kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 'arrival:S1': given with day: a step "
     "starts on a day or after an event, not both (keep day for a fixed day, or after (with "
     "notice_days) for an event)"),
    ('{ day = 30, notice_days = 5, kw = 20 }',
     "x.toml: costs.power[1].reservations[1].notice_days = 5: needs after: notice_days counts "
     "from the event the step starts after (add after = \"arrival:S3\", or remove notice_days "
     "(a step on a day starts on that day))"),
    ('{ after = "arrival:S1", notice_days = -5, kw = 20 }',
     "x.toml: costs.power[1].reservations[1].notice_days = -5: must be >= 0 (days from the "
     "event to the step)"),
    ('{ after = "arrival:S1", notice_days = 1e9, kw = 20 }',
     "x.toml: costs.power[1].reservations[1].notice_days = 1000000000: must be <= 36,500 "
     "(100 years: a migration's dates and durations are far shorter, and every sum of times "
     "stays finite)"),
    # the hall asks 30 days' notice of a step up; given from the event, it must be 30 or more
    ('{ after = "arrival:S1", notice_days = 10, kw = 20 }',
     "x.toml: costs.power[1].reservations[1].notice_days = 10: a step up (0 to 20 kW) 10 days "
     "after arrival:S1, with less than the hall's notice_days (30) (give notice_days = 30 or "
     "more, or lower the hall's notice_days)"),
    # what the file orders is checked: two steps after one event, two days
    ('{ after = "accepted:N1", notice_days = 60, kw = 20 }, '
     '{ after = "accepted:N1", notice_days = 40, kw = 30 }',
     "x.toml: costs.power[1].reservations[2].notice_days = 40: must be > the notice_days of "
     "costs.power[1].reservations[1] (60), the step before it after accepted:N1 (list the "
     "steps after one event with notice_days strictly ascending)"),
    ('{ day = 40, kw = 20 }, { after = "arrival:S1", kw = 30 }, { day = 35, kw = 40 }',
     "x.toml: costs.power[1].reservations[3].day = 35: must be > the day of "
     "costs.power[1].reservations[1], listed before it (40) (list reservation steps with days "
     "strictly ascending)"),
    ('{ after = "arrival:S1", notice_days = 30, kw = 20 }, '
     '{ after = "arrival:S1", notice_days = 70, kw = 5 }',
     "x.toml: costs.power[1].reservations[2].notice_days = 70: a step down (20 to 5 kW) 40 "
     "days after the step up (30 days after arrival:S1), sooner than minimum_term_days (50) "
     "(step down 80 days after arrival:S1 or later, or lower the hall's minimum_term_days)"),
    # an event of no plan: "swap" places no new unit in row B1
    ('{ after = "ready:B1", kw = 20 }',
     "x.toml: costs.power[1].reservations[1].after = 'ready:B1': strategy 'swap' places no "
     "new unit in row B1: its readiness is no event of that plan (start the step after an "
     "event of the strategy's plan, or on a day)"),
])
def test_each_mistake_is_one_located_problem(steps, expected):
    assert problems(hall_b(steps)) == [expected]


def test_reservations_start_at_day_0_not_after_an_event():
    text = variant((STEPS_B, 'reservations = [{ after = "arrival:S1", kw = 0 }, '
                             '{ day = 30, kw = 20 }]'), text=TEXT)
    assert problems(text) == [
        "x.toml: costs.power[1].reservations[0].after = 'arrival:S1': the first step must be "
        "on day 0, not after an event: reservations start at day 0 (begin with { day = 0, kw = 0 } if nothing is reserved "
        "before 30 days after arrival:S1)"]


def test_a_step_after_the_removal_of_a_unit_the_strategy_keeps():
    text = variant(('drain = [{ units = "E1..E2", on_accepted = "N1..N2" }]\n' + OWN,
                    'drain = [{ units = "E1", on_accepted = "N1..N2" }]\nkeep = ["E2"]\n'
                    'reservations = [{ hall = "B", day = 0, kw = 0 }, '
                    '{ hall = "B", after = "removed:E2", kw = 40 }]'), text=TEXT)
    assert problems(text) == [
        "x.toml: strategies[1].reservations[1].after = 'removed:E2': strategy 'hall-b' keeps "
        "E2: it never drains, so a step after its drain or removal never starts (start the "
        "step after another event or on a day, or drain E2 in strategy 'hall-b')"]


def test_what_only_the_worlds_can_order_is_not_refused():
    # a step up after the arrival, then a step down on day 40: the term and the order are
    # kept in each world (the kernels), not refused here
    s = load_text(hall_b('{ after = "arrival:S1", kw = 20 }, { day = 40, kw = 0 }'))
    assert [step.after for step in s.costs.power[1].reservations] == [None, "arrival:S1", None]
