"""The [costs] section (docs/costs.md): reading it, every mistake a planner makes as a located
problem `file: key.path = value: what is wrong (hint)`, and the plan's cost arrays compiled
from it, checked field by field against values worked out by hand from
tests/data/costs-small.toml (every duration fixed; the node times are in its comments).
"""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from mcrisk.plan.compile import compile_scenario
from mcrisk.core.risks import select_risks
from mcrisk.plan.costs import no_cost_arrays
from mcrisk.core.definitions import COST, DAYS_PER_MONTH, N_COSTS
from mcrisk.core.model import Distribution, Reservation
from mcrisk.plan.record import FIELD
from mcrisk.scenario import load_scenario

from ..helpers import DATA, MINIMAL, MINIMAL_TEXT, REFERENCE, ROOT, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in messages

COSTS_SMALL = DATA / "costs-small.toml"
COSTS_TEXT = COSTS_SMALL.read_text()


def costs(*edits: tuple[str, str]) -> str:
    return variant(*edits, text=COSTS_TEXT)


# --------------------------------------------------------------------------------------------
# Reading


def test_the_small_cost_scenario_reads_as_written():
    s = load_scenario(COSTS_SMALL)
    c = s.costs
    assert c.currency == "EUR"
    a, b = c.power
    assert (a.hall, a.reservations, a.pue, a.load_factor) == \
        ("A", (Reservation(0.0, 25.0),), 1.25, 0.75)
    assert a.price_per_kw_month == Distribution("triangular", (140.0, 150.0, 170.0))
    assert (a.over_per_kw_month, a.energy_per_kwh) == (Distribution.fixed(60.875),
                                                       Distribution.fixed(0.125))
    assert (a.notice_days, a.minimum_term_days) == (0.0, 0.0)
    assert b.reservations == (Reservation(0.0, 0.0), Reservation(30.0, 20.0))
    assert (b.over_per_kw_month, b.pue, b.load_factor) == (Distribution.fixed(0.0), 1.0, 1.0)
    assert (b.notice_days, b.minimum_term_days) == (30.0, 50.0)
    assert c.running == (("old", Distribution.fixed(100.0)),)
    assert c.waiting == (("new", Distribution("uniform", (10.0, 20.0))),)
    assert c.shortfall_per_h100_eq_hour == Distribution.fixed(0.5)
    assert c.crew_per_day == Distribution.fixed(1000.0)
    swap, hall_b = s.strategies
    assert swap.reservations == () and swap.reservation_of("B") is None
    assert hall_b.reservation_of("B") == (Reservation(0.0, 0.0), Reservation(40.0, 40.0))
    assert [r.mitigation_cost for r in s.risks] == [
        Distribution.fixed(5000.0), Distribution("uniform", (100.0, 300.0))]


def test_defaults_and_a_scenario_without_costs():
    assert load_scenario(ROOT / "scenarios" / "minimal.toml"
                         ).costs is None
    text = costs(('currency = "EUR"\n', ''), ('pue = 1.25\n', ''), ('load_factor = 0.75\n', ''),
                 ('[costs.crews]\nper_crew_day = 1000\n', ''))
    Path("x.toml").write_text(text)
    c = load_scenario("x.toml").costs
    assert (c.currency, c.power[0].pue, c.power[0].load_factor) == ("USD", 1.0, 1.0)
    assert c.crew_per_day == Distribution.fixed(0.0)
    Path("x.toml").write_text(MINIMAL_TEXT + '\n[costs]\n')
    c = load_scenario("x.toml").costs
    assert (c.currency, c.power, c.running, c.waiting) == ("USD", (), (), ())


# --------------------------------------------------------------------------------------------
# Mistakes: each a located problem naming the file, the key and the fix

STEPS_B = "reservations = [{ day = 0, kw = 0 }, { day = 30, kw = 20 }]"


@pytest.mark.parametrize("old, new, expected", [
    ('hall = "A"', 'hall = "C"',
     "x.toml: costs.power[0].hall = 'C': unknown hall (known halls: A, B)"),
    ("old = 100", "olde = 100",
     "x.toml: costs.running.olde = 'olde': unknown unit type (did you mean 'old'?)"),
    ("new = { dist", "nwe = { dist",
     "x.toml: costs.waiting.nwe = 'nwe': unknown unit type (did you mean 'new'?)"),
    ("over_per_kw_month = 60.875", "over_per_kwmonth = 60.875",
     "x.toml: costs.power[0].over_per_kwmonth = 60.875: unknown key "
     "(did you mean 'over_per_kw_month'?)"),
    ("[costs.crews]", "[costs.crew]",
     "x.toml: costs.crew = {'per_crew_day': 1000}: unknown key (did you mean 'crews'?)"),
    ("per_h100_eq_hour = 0.5", "per_h100_eq_hours = 0.5",
     ["x.toml: costs.shortfall.per_h100_eq_hours = 0.5: unknown key "
      "(did you mean 'per_h100_eq_hour'?)",
      'x.toml: costs.shortfall.per_h100_eq_hour: missing (add per_h100_eq_hour = { dist = '
      '"triangular", min = 2.0, mode = 2.35, max = 3.5 }, the backfill price of one H100-eq '
      'for an hour)']),
    ("over_per_kw_month = 60.875", "over_per_kw_month = -60.875",
     "x.toml: costs.power[0].over_per_kw_month = -60.875: must be >= 0 (the price of one kW "
     "drawn above the reservation for a month)"),
    ("per_crew_day = 1000", "per_crew_day = -1000",
     "x.toml: costs.crews.per_crew_day = -1000: must be >= 0 "
     "(what one retrofit crew costs per day)"),
    ("min = 140, mode = 150", "min = -140, mode = 150",
     "x.toml: costs.power[0].price_per_kw_month.min = -140: must be >= 0 (the lowest price)"),
    ("min = 10, max = 20", "min = -10, max = 20",
     "x.toml: costs.waiting.new.min = -10: must be >= 0 (the lowest price)"),
    ("price_per_kw_month = 30.4375",
     'price_per_kw_month = { dist = "lognormal", median = 1e9, p90 = 9e11 }',
     "x.toml: costs.power[1].price_per_kw_month.p90 = 900000000000: lets a draw reach "
     "8.408e+27, more than 1,000,000,000,000 (the generator reaches 8.2 sigma; narrow the "
     "lognormal, its p90 closer to the median, or use pert or triangular)"),
    ("pue = 1.25", "pue = 0.9",
     "x.toml: costs.power[0].pue = 0.9: must be >= 1 (facility power / IT power, >= 1)"),
    ("pue = 1.25", "pue = 12",
     "x.toml: costs.power[0].pue = 12: must be <= 10 (a building that spends 9 kW cooling "
     "each kW of IT is no data hall)"),
    ("load_factor = 0.75", "load_factor = 0",
     "x.toml: costs.power[0].load_factor = 0: must be > 0 "
     "(average draw / planned draw, in (0, 1])"),
    ("load_factor = 0.75", "load_factor = 1.5",
     "x.toml: costs.power[0].load_factor = 1.5: must be <= 1 "
     "(average draw / planned draw, in (0, 1])"),
    (STEPS_B, "reservations = [{ day = 5, kw = 0 }, { day = 30, kw = 20 }]",
     "x.toml: costs.power[1].reservations[0].day = 5: must be 0: reservations start at day 0 "
     "(begin with { day = 0, kw = 0 } if nothing is reserved before day 5)"),
    (STEPS_B, "reservations = [{ day = 0, kw = 0 }, { day = 30, kw = 20 }, { day = 30, kw = 0 }]",
     "x.toml: costs.power[1].reservations[2].day = 30: must be > the previous step's day (30) "
     "(list reservation steps with days strictly ascending)"),
    (STEPS_B, "reservations = [{ day = 0, kw = 0 }, { day = 30, kw = -20 }]",
     "x.toml: costs.power[1].reservations[1].kw = -20: must be >= 0 "
     "(the kW reserved from that day)"),
    (STEPS_B, "reservations = []",
     "x.toml: costs.power[1].reservations = []: must have at least one step "
     "(for example [{ day = 0, kw = 0 }, { day = 150, kw = 1650 }])"),
    (STEPS_B, "reservations = [{ day = 0, kw = 0 }, { day = 20, kw = 20 }]",
     "x.toml: costs.power[1].reservations[1].day = 20: a step up (0 to 20 kW) before "
     "notice_days (30) (start it on day 30 or later, or lower the hall's notice_days)"),
    (STEPS_B, "reservations = [{ day = 0, kw = 0 }, { day = 30, kw = 20 }, { day = 70, kw = 5 }]",
     "x.toml: costs.power[1].reservations[2].day = 70: a step down (20 to 5 kW) 40 days after "
     "the step up on day 30, sooner than minimum_term_days (50) (step down on day 80 or "
     "later, or lower the hall's minimum_term_days)"),
    (STEPS_B, "reservations = [{ day = 0, kw = 10 }, { day = 20, kw = 0 }]",
     "x.toml: costs.power[1].reservations[1].day = 20: a step down (10 to 0 kW) 20 days after "
     "the step up on day 0, sooner than minimum_term_days (50) (step down on day 50 or "
     "later, or lower the hall's minimum_term_days)"),
    (STEPS_B, "reserved_kw = 20\n" + STEPS_B,
     "x.toml: costs.power[1].reservations = [{'day': 0, 'kw': 0}, {'day': 30, 'kw': 20}]: "
     "given with reserved_kw: a hall's reservation is one or the other (keep reserved_kw for "
     "one amount from day 0, or reservations for steps)"),
    (STEPS_B, "",
     "x.toml: costs.power[1].reserved_kw: missing (add reserved_kw = 3000 (from day 0) or "
     "reservations = [{ day = 0, kw = 0 }, { day = 150, kw = 1650 }])"),
    ("reserved_kw = 25", "reserved_kw = -25",
     "x.toml: costs.power[0].reserved_kw = -25: must be >= 0 (the kW reserved from day 0)"),
    ('hall = "B"', 'hall = "A"',
     "x.toml: costs.power[1].hall = 'A': duplicate hall of a power contract, also at "
     "costs.power[0].hall (give each its own contract)"),
    ('{ hall = "B", day = 40, kw = 40 }', '{ hall = "B", day = 20, kw = 40 }',
     "x.toml: strategies[1].reservations[1].day = 20: a step up (0 to 40 kW) before "
     "notice_days (30) (start it on day 30 or later, or lower the hall's notice_days)"),
    ('{ hall = "B", day = 0, kw = 0 }, ', '',
     "x.toml: strategies[1].reservations[0].day = 40: must be 0: reservations start at day 0 "
     "(begin with { day = 0, kw = 0 } if nothing is reserved before day 40)"),
    ('{ hall = "B", day = 40, kw = 40 }', '{ hall = "C", day = 40, kw = 40 }',
     "x.toml: strategies[1].reservations[1].hall = 'C': unknown hall (known halls: A, B)"),
    ('{ hall = "B", day = 40, kw = 40 }', '{ hall = "B", day = 40, kwh = 40 }',
     ["x.toml: strategies[1].reservations[1].kwh = 40: unknown key (did you mean 'kw'?)",
      "x.toml: strategies[1].reservations[1].kw: missing "
      "(add kw = 1650, the kW reserved from that day)"]),
    # issue 24 item 13: a price that no unit would ever pay was silently 0
    ("old = 100", "old = 100\nnew = 50",
     "x.toml: costs.running.new = 50: no existing unit is of type new, so nothing would pay "
     "it: a running price counts per existing unit from day 0 to its removal (to price new "
     "units from arrival to acceptance, move it to [costs.waiting]; else remove it)"),
    ("new = { dist", "old = 7\nnew = { dist",
     "x.toml: costs.waiting.old = 7: no incoming unit is of type old, so nothing would pay "
     "it: a waiting price counts per incoming unit from its shipment's arrival to its "
     "acceptance (to price the old fleet until its removal, move it to [costs.running]; "
     "else remove it)"),
    ('reservations = [{ hall = "B", day = 0, kw = 0 }, { hall = "B", day = 40, kw = 40 }]',
     "reservations = []",
     "x.toml: strategies[1].reservations = []: must have at least one step (leave "
     "reservations out to use the halls' [[costs.power]] reservations; to reserve nothing "
     'in a hall, give its step from day 0: [{ hall = "B", day = 0, kw = 0 }])'),
    ("cost = 5000", "cost = -5000",
     "x.toml: risks[0].mitigated.cost = -5000: must be >= 0 (what the mitigation costs, once)"),
    ('currency = "EUR"', "currency = 5",
     "x.toml: costs.currency = 5: must be a string, not a number "
     "(for example currency = \"USD\")"),
])
def test_each_mistake_is_one_located_problem(old, new, expected):
    assert problems(costs((old, new))) == (expected if isinstance(expected, list)
                                           else [expected])


def test_a_strategy_reserving_in_a_hall_without_a_contract():
    start = COSTS_TEXT.index('[[costs.power]]\nhall = "B"')
    text = COSTS_TEXT[:start] + COSTS_TEXT[COSTS_TEXT.index("[costs.running]"):]
    assert problems(text) == [
        "x.toml: strategies[1].reservations[0].hall = 'B': hall B has no [[costs.power]] "
        "entry: nothing prices its reservation (add [[costs.power]] with hall = \"B\", its "
        "reservation and price_per_kw_month)",
        "x.toml: strategies[1].reservations[1].hall = 'B': hall B has no [[costs.power]] "
        "entry: nothing prices its reservation (add [[costs.power]] with hall = \"B\", its "
        "reservation and price_per_kw_month)"]


def test_a_mitigation_cost_or_reservation_needs_a_costs_section():
    text = COSTS_TEXT[:COSTS_TEXT.index("\n[costs]\n")] + COSTS_TEXT[COSTS_TEXT.index('# "swap"'):]
    assert problems(text) == [
        "x.toml: risks[0].mitigated.cost = 5000: a mitigation cost without a [costs] section "
        "is never counted (add a [costs] section (currency = \"USD\" is enough), or remove "
        "cost)",
        "x.toml: risks[1].mitigated.cost = {'dist': 'uniform', 'min': 100, 'max': 300}: a "
        "mitigation cost without a [costs] section is never counted (add a [costs] section "
        "(currency = \"USD\" is enough), or remove cost)",
        "x.toml: strategies[1].reservations[0].hall = 'B': hall B has no [[costs.power]] "
        "entry: nothing prices its reservation (add [[costs.power]] with hall = \"B\", its "
        "reservation and price_per_kw_month)",
        "x.toml: strategies[1].reservations[1].hall = 'B': hall B has no [[costs.power]] "
        "entry: nothing prices its reservation (add [[costs.power]] with hall = \"B\", its "
        "reservation and price_per_kw_month)"]


def test_validate_reports_cost_mistakes(capsys):
    from mcrisk.cli import main
    Path("x.toml").write_text(costs(("pue = 1.25", "pue = 0.9")))
    assert main(["validate", "x.toml"]) == 2
    assert "x.toml: costs.power[0].pue = 0.9: must be >= 1" in capsys.readouterr().err


# --------------------------------------------------------------------------------------------
# The compiled plan's cost arrays, worked out by hand from tests/data/costs-small.toml

INF = float("inf")


def small_plan(mode: str = "file"):
    return compile_scenario(select_risks(load_scenario(COSTS_SMALL), mode))


def node_of(plan, name: str) -> int:
    return plan.node_names.index(name)


def test_prices_given_as_distributions_are_world_quantities_and_only_they():
    plan = small_plan()
    cost_names = [n for n in plan.quantity_names if n.startswith("cost.")]
    assert cost_names == ["cost.A.price_per_kw_month", "cost.B.energy_per_kwh",
                          "cost.new.waiting"]
    # after every other quantity, so that no other quantity moves
    assert plan.quantity_names[-3:] == tuple(cost_names)
    labels = [plan.quantity_labels[plan.quantity_names.index(n)] for n in cost_names]
    assert [(l.section, l.subject, l.part) for l in labels] == [
        ("cost", "A", "price_per_kw_month"), ("cost", "B", "energy_per_kwh"),
        ("cost", "new", "waiting")]
    post = small_plan("post")
    assert post.quantity_names[-1] == "cost.slow-install.mitigation"


def test_span_arrays_field_by_field():
    plan = small_plan()
    q = {name: plan.quantity_names.index(name) for name in plan.quantity_names}
    e1, e2 = node_of(plan, "E1 removed"), node_of(plan, "E2 removed")
    n1, n2 = node_of(plan, "N1 install starts"), node_of(plan, "N2 install starts")
    a1, a2 = node_of(plan, "N1 accepted"), node_of(plan, "N2 accepted")
    arrival = node_of(plan, "shipment S1 arrives")
    energy_a = 0.75 * 1.25 * 24 * 0.125       # per kW-day in hall A: load x pue x 24 x price
    # (start node, start day, end node, end day, cost column, rate swap, rate hall-b,
    #  q swap, q hall-b), one row per span, in the order plan.costs lists them
    expected = [
        # (reserved power is no span: its steps, res_*, below)
        # energy: hall A's 20 kW at day 0 (hall B draws nothing then), then each power event
        (-1, 0.0, -1, INF, "cost_energy", 20 * energy_a, 20 * energy_a, -1, -1),
        (e1, 0.0, -1, INF, "cost_energy", -10 * energy_a, -10 * energy_a, -1, -1),
        (e2, 0.0, -1, INF, "cost_energy", -10 * energy_a, -10 * energy_a, -1, -1),
        # a new unit's 20 kW: in hall A for swap, in hall B (price a quantity) for hall-b
        (n1, 0.0, -1, INF, "cost_energy", 20 * energy_a, 20 * 1.0 * 1.0 * 24 * 1.0, -1,
         q["cost.B.energy_per_kwh"]),
        (n2, 0.0, -1, INF, "cost_energy", 20 * energy_a, 20 * 1.0 * 1.0 * 24 * 1.0, -1,
         q["cost.B.energy_per_kwh"]),
        # the old fleet from day 0 to each removal, 100 a day
        (-1, 0.0, e1, 0.0, "cost_old_fleet", 100.0, 100.0, -1, -1),
        (-1, 0.0, e2, 0.0, "cost_old_fleet", 100.0, 100.0, -1, -1),
        # new units waiting from their shipment's arrival to acceptance, price a quantity
        (arrival, 0.0, a1, 0.0, "cost_new_waiting", 1.0, 1.0, q["cost.new.waiting"],
         q["cost.new.waiting"]),
        (arrival, 0.0, a2, 0.0, "cost_new_waiting", 1.0, 1.0, q["cost.new.waiting"],
         q["cost.new.waiting"]),
    ]
    columns = list(zip(*expected))
    assert plan.span_start_node.tolist() == list(columns[0])
    assert plan.span_start_day.tolist() == list(columns[1])
    assert plan.span_end_node.tolist() == list(columns[2])
    assert plan.span_end_day.tolist() == list(columns[3])
    assert plan.span_cost.tolist() == [COST[c] for c in columns[4]]
    assert plan.span_rate.tolist() == [list(columns[5]), list(columns[6])]
    assert plan.span_price_q.tolist() == [list(columns[7]), list(columns[8])]
    assert energy_a == 2.8125 and 20 * energy_a == 56.25      # exact, as the file says


def test_reservations_over_shortfall_crews_and_no_lumps_before_mitigation():
    plan = small_plan()
    assert plan.n_costs == N_COSTS
    # each strategy's steps hall by hall: A (the contract's), then B (swap: the contract's;
    # hall-b: its own)
    assert plan.res_ptr.tolist() == [[0, 1, 3], [0, 1, 3]]
    assert plan.res_day.tolist() == [[0.0, 0.0, 30.0], [0.0, 0.0, 40.0]]
    assert plan.res_kw.tolist() == [[25.0, 0.0, 20.0], [25.0, 0.0, 40.0]]
    assert plan.res_node.tolist() == [[-1, -1, -1], [-1, -1, -1]]   # on days, not events
    # reserved power per step: kW / DAYS_PER_MONTH x a certain price (hall B: 30.4375, one
    # per kW-day), x 1 where the price is a quantity (hall A's), 0 kW steps 0
    assert plan.res_rate.tolist() == [[25 / DAYS_PER_MONTH, 0.0, 20 / DAYS_PER_MONTH * 30.4375],
                                      [25 / DAYS_PER_MONTH, 0.0, 40 / DAYS_PER_MONTH * 30.4375]]
    assert plan.res_price_q.tolist() == [plan.quantity_names.index("cost.A.price_per_kw_month"),
                                         -1]
    assert plan.res_term.tolist() == [0.0, 50.0]
    assert plan.over_rate.tolist() == [2.0, 0.0]          # 60.875 a kW-month; B: not priced
    assert plan.over_price_q.tolist() == [-1, -1]
    assert (plan.shortfall_rate, plan.shortfall_price_q) == (24 * 0.5, -1)
    assert (plan.crew_rate.tolist(), plan.crew_price_q) == ([2 * 1000.0] * 2, -1)
    # no risk is in effect with its mitigation in mode file: a placeholder of amount 0
    assert (plan.lump_amount.tolist(), plan.lump_price_q.tolist()) == ([0.0], [-1])


def test_a_mitigation_in_effect_carries_its_cost():
    plan = small_plan("post")
    assert plan.lump_amount.tolist() == [5000.0, 1.0]
    assert plan.lump_price_q.tolist() == [-1, plan.quantity_names.index(
        "cost.slow-install.mitigation")]
    assert plan.lump_cost.tolist() == [COST["cost_mitigation"]] * 2
    # disabled, a risk's mitigation is not in effect, whatever the mode
    one = compile_scenario(select_risks(load_scenario(COSTS_SMALL), "post", ("late-ship",)))
    assert one.lump_amount.tolist() == [1.0]
    # pre: every risk as assessed, no mitigation paid for
    assert small_plan("pre").lump_amount.tolist() == [0.0]


def test_distributed_prices_move_to_the_world_and_constants_into_the_rate():
    text = costs(("min = 140, mode = 150, max = 170", "min = 150, mode = 150, max = 151"),
                 ("over_per_kw_month = 60.875", 'over_per_kw_month = { dist = "uniform", '
                  'min = 50, max = 70 }'),
                 ("per_h100_eq_hour = 0.5", 'per_h100_eq_hour = { dist = "uniform", min = 2, '
                  'max = 3 }'),
                 ("per_crew_day = 1000", 'per_crew_day = { dist = "uniform", min = 1, max = 2 }'),
                 ("old = 100", 'old = { dist = "fixed", value = 64 }'))
    Path("x.toml").write_text(text)
    plan = compile_scenario(load_scenario("x.toml"))
    q = plan.quantity_names.index
    assert plan.over_rate.tolist() == [1.0 / DAYS_PER_MONTH, 0.0]
    assert plan.over_price_q.tolist() == [q("cost.A.over_per_kw_month"), -1]
    assert (plan.shortfall_rate, plan.shortfall_price_q) == (24.0, q("cost.shortfall."
                                                                     "per_h100_eq_hour"))
    assert (plan.crew_rate.tolist(), plan.crew_price_q) == \
        ([2.0] * plan.n_strategies, q("cost.crews.per_crew_day"))
    # a fixed distribution is a constant: in the rate, no quantity
    assert "cost.old.running" not in plan.quantity_names
    assert plan.span_rate[:, plan.span_cost == COST["cost_old_fleet"]].tolist() == \
        [[64.0, 64.0], [64.0, 64.0]]


def test_a_plan_without_costs_is_unchanged():
    plan = compile_scenario(load_scenario(MINIMAL))
    assert plan.n_costs == 0
    assert not any(n.startswith("cost.") for n in plan.quantity_names)
    for name, value in no_cost_arrays(plan.n_strategies, len(plan.hall_names)).items():
        got = getattr(plan, name)
        assert (got.tolist() if hasattr(got, "tolist") else got) == \
            (value.tolist() if hasattr(value, "tolist") else value), name


def without_costs(text: str) -> str:
    """A scenario's text with its [costs] section, strategy reservations and mitigation
    costs taken out."""
    text = re.sub(r"\n\[costs\]\n.*?(?=\n# -{20,}\n# Strategies|\n# \"swap\")", "\n", text,
                  flags=re.S)
    text = re.sub(r"^reservations = \[\{ hall.*\n", "", text, flags=re.M)
    return re.sub(r", cost = (\{[^}]*\}|\d+)", "", text)


@pytest.mark.parametrize("path", [COSTS_SMALL, REFERENCE])
def test_costs_change_no_other_field_of_the_plan(path):
    """A scenario with a [costs] section compiles to the same plan as without it but for
    the costs group and the price quantities (and their distributions) added after every
    other: the kernels see the same capacity problem, so the capacity metrics are the same
    bit for bit. In mode post, so that the mitigations' costs are in effect too."""
    text = Path(path).read_text()
    Path("without.toml").write_text(without_costs(text))
    Path("with.toml").write_text(text)
    without = compile_scenario(select_risks(load_scenario("without.toml"), "post"))
    with_costs = compile_scenario(select_risks(load_scenario("with.toml"), "post"))
    assert without.n_costs == 0
    n = without.n_quantities
    assert with_costs.quantity_names[:n] == without.quantity_names
    assert all(name.startswith("cost.") for name in with_costs.quantity_names[n:])
    for name, field in FIELD.items():
        if field.group == "costs":
            continue
        a, b = getattr(without, name), getattr(with_costs, name)
        if field.axes and field.axes[0] in ("q", "q + 1", "d", "knots"):   # grown at the end
            b = b[:len(a)]
        assert np.array_equal(a, b) and (not hasattr(a, "dtype") or a.dtype == b.dtype), name
