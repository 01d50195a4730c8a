"""The [costs] section (docs/costs.md): reading it, every mistake a planner makes as a located
problem `file: key.path = value: what is wrong (hint)`, and the plan's cost arrays compiled
from it, checked field by field against values worked out by hand from
tests/data/costs-small.toml (every duration fixed; the node times are in its comments).
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mcrisk.model import Distribution, Reservation
from mcrisk.scenario import load_scenario

from .helpers import MINIMAL_TEXT, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in messages

COSTS_SMALL = Path(__file__).resolve().parent / "data" / "costs-small.toml"
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
    assert load_scenario(Path(__file__).resolve().parents[1] / "scenarios" / "minimal.toml"
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
