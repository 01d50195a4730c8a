"""[costs]: what the migration costs (docs/costs.md), and power reservations as steps.

A price is a number (money per unit, certain) or a distribution table, read like a duration
but in money: parameters >= 0 (no price can be drawn negative) and at most MAX_MONEY, a
lognormal's largest draw included. Reservations are steps { day, kw }, ascending from day 0,
with the hall's notice (a step up not before notice_days) and minimum term (a step down not
sooner than minimum_term_days after the step up before it; the reservation at day 0 starts a
term too); a hall's own (`reserved_kw` or `reservations`) and a strategy's
(`[[strategies]] reservations`, read in strategies.py with `read_reservation_steps`) are
checked alike. A step may start on an event instead of a day (`after = "arrival:S3"`,
`notice_days` after it, in each world at that world's time of it): then what the file
cannot order (an event's step against a day's or another event's) is ordered per world by
the kernels (docs/costs.md, Reservations on an event), and what it can is checked here.
Read after the fleets and the halls, before the strategies, which check their reservations
against the contracts recorded on the reader (`r.power_contracts`) and the events of the
halls' steps against their own plans (`r.hall_step_events`).
"""
from __future__ import annotations

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import ZERO, Costs, PowerContract, Reservation

from .distributions import Measure, as_distribution, largest_draw
from .limits import DAYS, MAX_ENTRIES, MAX_MONEY, MAX_PUE, TOTAL_KW, Limit
from .reader import (Reader, Spec, Table, as_name, as_number, check_ref, check_unique,
                     count_ok, did_you_mean, format_number, format_limit, type_name)

_MONEY = Limit(MAX_MONEY, "a trillion is beyond any migration's budget")
_PRICE_SPECS = {
    "value": ("150", "a price"),
    "min": ("140", "the lowest price"),
    "mode": ("150", "the most likely price"),
    "max": ("170", "the highest price"),
    "median": ("150", "the median price"),
    "p90": ("190", "the 90th percentile of the price"),
    "then": "the price drawn with probability p",
}
PRICE = Measure(_MONEY, _PRICE_SPECS, "a number")
PRICE_EXAMPLE = '{ dist = "triangular", min = 140, mode = 150, max = 170 }'

_COSTS_KEYS = ("currency", "power", "running", "waiting", "shortfall", "crews", "integration")
_POWER_KEYS = ("hall", "reserved_kw", "reservations", "price_per_kw_month", "over_per_kw_month",
               "energy_per_kwh", "pue", "load_factor", "notice_days", "minimum_term_days")
_STEP_KEYS = ("day", "after", "notice_days", "kw")
STEPS_EXAMPLE = "[{ day = 0, kw = 0 }, { day = 150, kw = 1650 }]"
EVENT_EXAMPLE = '"arrival:S3"'
# The events a reservation step may start after, by kind: what the id names. The keys of
# summary.json's milestones (docs/metrics.md: "accepted:N01"; `--fail-if milestone.<key>`),
# of which "arrival:S2" and "energized:B" are also how a risk names its target.
EVENT_KINDS = {"arrival": "shipment", "energized": "hall", "island": "island",
               "drain": "existing unit", "removed": "existing unit", "ready": "row",
               "install": "incoming unit", "burned_in": "incoming unit",
               "accepted": "incoming unit"}


def as_price(r, key, value, spec: Spec):
    """A price: a number >= 0 (certain) or a distribution of one; None if bad (reported).

    Every distribution's parameters are >= 0, so no draw is negative; a lognormal's largest
    draw (its quantile at 8.2 sigma) must stay within MAX_MONEY."""
    price = as_distribution(r, key, value, spec, measure=PRICE)
    if price is not None and largest_draw(price) > MAX_MONEY:
        # only a lognormal (or a chance of one) gets here: other parameters are within it
        at, shown = (f"{key}.p90", price.params[1]) if price.kind == "lognormal" \
            else (f"{key}.then.p90", price.inner.params[1])
        r.report(at, shown,
                 f"lets a draw reach {largest_draw(price):,.4g}, more than "
                 f"{format_limit(MAX_MONEY)}", "the generator reaches 8.2 sigma; narrow the "
                 "lognormal, its p90 closer to the median, or use pert or triangular")
        return None
    return price


def read_costs(root: Table) -> Costs | None:
    """[costs], or None when the scenario has none (then it has no cost outputs)."""
    r = root.r
    r.power_contracts = {}
    if "costs" not in root.data:
        return None
    t = root.table("costs", _COSTS_KEYS, "")
    if t is None:
        r.power_contracts = None
        return None
    currency = t.read("currency", as_name, '"USD"', "the currency's label in reports",
                      default="USD")
    power = _read_power(t)
    running = _read_prices_by_type(t, "running", "per existing unit-day until its removal")
    waiting = _read_prices_by_type(t, "waiting", "per new unit-day from its shipment's "
                                   "arrival to its acceptance")
    running = running and _paid_by_some_unit(t, "running", running)
    waiting = waiting and _paid_by_some_unit(t, "waiting", waiting)
    shortfall = t.table("shortfall", ("per_h100_eq_hour",), "", default=None)
    crews = t.table("crews", ("per_crew_day",), "", default=None)
    parts = dict(
        currency=currency, power=power, running=running, waiting=waiting,
        shortfall_per_h100_eq_hour=shortfall.read(
            "per_h100_eq_hour", as_price, '{ dist = "triangular", min = 2.0, mode = 2.35, '
            'max = 3.5 }', "the backfill price of one H100-eq for an hour")
        if shortfall is not None else ZERO,
        crew_per_day=crews.read(
            "per_crew_day", as_price, "8000", "what one retrofit crew costs per day")
        if crews is not None else ZERO,
        **_read_integration_prices(t))
    return None if None in parts.values() else Costs(**parts)


def _read_integration_prices(t: Table) -> dict:
    """[costs.integration]: what an install team and a burn-in bay cost per day (each 0 when
    absent)."""
    prices = t.table("integration", ("per_team_day", "per_bay_day"), "", default=None)
    if prices is None:
        return {}
    return {"team_per_day": prices.read("per_team_day", as_price, "6000", "what one install "
                                        "team costs per day", default=ZERO),
            "bay_per_day": prices.read("per_bay_day", as_price, "1500", "what one burn-in bay "
                                       "costs per day", default=ZERO)}


def _read_power(t: Table):
    """[[costs.power]]: one contract per hall; records them on the reader by hall."""
    r = t.r
    tables = t.tables("power", _POWER_KEYS, '[{ hall = "A", reserved_kw = 3000, '
                      'price_per_kw_month = 150 }]', "", default=[])
    if tables is None:
        r.power_contracts = None
        return None
    seen: dict[str, str] = {}
    contracts = []
    for entry in filter(None, tables):
        contract = _read_contract(entry)
        contracts.append(contract)
        unique = contract is None or check_unique(r, seen, contract.hall, entry.at("hall"),
                                                   "hall of a power contract")
        if contract is not None and unique:
            r.power_contracts[contract.hall] = contract
        contracts[-1] = contract if unique else None
    if None in tables or None in contracts:
        r.power_contracts = None
        return None
    return tuple(contracts)


def _read_contract(t: Table) -> PowerContract | None:
    """One [[costs.power]] entry; None if any key is bad (reported)."""
    hall = t.read("hall", as_name, '"A"', "the hall whose power this prices")
    if hall is not None and not check_ref(t.r, t.at("hall"), hall, t.r.halls, "hall"):
        hall = None
    terms = dict(
        pue=t.read("pue", as_number, "1.3", "facility power / IT power, >= 1", default=1.0,
                   at_least=1, at_most=_PUE),
        load_factor=t.read("load_factor", _as_load_factor, "0.8",
                           "average draw / planned draw, in (0, 1]", default=1.0),
        notice_days=t.read("notice_days", as_number, "90",
                           "days' notice a step up needs: none starts before this day",
                           default=0.0, at_least=0, at_most=DAYS),
        minimum_term_days=t.read("minimum_term_days", as_number, "365",
                                 "days a step up is held before a step down", default=0.0,
                                 at_least=0, at_most=DAYS))
    prices = dict(
        price_per_kw_month=t.read("price_per_kw_month", as_price, PRICE_EXAMPLE,
                                  "the price of one reserved kW for a month"),
        over_per_kw_month=t.read("over_per_kw_month", as_price, "300", "the price of one "
                                 "kW drawn above the reservation for a month", default=ZERO),
        energy_per_kwh=t.read("energy_per_kwh", as_price, "0.08",
                              "the price of one kWh metered", default=ZERO))
    reservations = _read_hall_reservations(t, terms)
    values = [hall, reservations, *terms.values(), *prices.values()]
    if None in values:
        return None
    t.r.hall_step_events[hall] = [(f"{t.at('reservations')}[{i}].after", step.after)
                                  for i, step in enumerate(reservations) if step.after]
    return PowerContract(hall, reservations, **prices, **terms)


_PUE = Limit(MAX_PUE, "a building that spends 9 kW cooling each kW of IT is no data hall")


def _as_load_factor(r, key, value, spec: Spec):
    """A number in (0, 1]."""
    number = as_number(r, key, value, spec, above=0)
    if number is not None and number > 1:
        r.report(key, value, "must be <= 1", spec.why)
        return None
    return number


def _read_hall_reservations(t: Table, terms: dict) -> tuple[Reservation, ...] | None:
    """A hall's reservation steps: `reserved_kw` (from day 0) or `reservations`, not both."""
    given = [name for name in ("reserved_kw", "reservations") if name in t.data]
    if not given:
        t.r.report(t.at("reserved_kw"), NO_VALUE, "missing",
                   f"add reserved_kw = 3000 (from day 0) or reservations = {STEPS_EXAMPLE}")
        return None
    if len(given) == 2:
        t.r.report(t.at("reservations"), t.data["reservations"],
                   "given with reserved_kw: a hall's reservation is one or the other",
                   "keep reserved_kw for one amount from day 0, or reservations for steps")
        return None
    if given == ["reserved_kw"]:
        kw = t.read("reserved_kw", as_number, "3000", "the kW reserved from day 0",
                    at_least=0, at_most=TOTAL_KW)
        return None if kw is None else (Reservation(0.0, kw),)
    tables = t.tables("reservations", _STEP_KEYS, STEPS_EXAMPLE, "the reserved kW over time")
    if tables is None or None in tables:
        return None
    return read_reservation_steps(t.r, t.at("reservations"), tables, terms)


def read_reservation_steps(r: Reader, key: str, tables: list[Table], terms: dict | None,
                            keys: list[str] | None = None) -> tuple[Reservation, ...] | None:
    """Steps { day, kw } or { after, notice_days, kw } in order: the first at day 0, and
    (when the contract's `terms` are known) no step up before notice_days and no step down
    sooner than minimum_term_days after the step up before it, where the file decides it
    (_steps_in_order, _steps_within_terms). `keys`: each step's key path (a strategy's list
    mixes halls), else key[i]. None if any is bad (reported)."""
    if not tables:
        r.report(key, [], "must have at least one step", f"for example {STEPS_EXAMPLE}")
        return None
    keys = keys or [f"{key}[{i}]" for i in range(len(tables))]
    steps = [_read_step(step, terms) for step in tables]
    if None in steps or not _steps_in_order(r, keys, steps):
        return None
    if terms is not None and None not in (terms["notice_days"], terms["minimum_term_days"]) \
            and not _steps_within_terms(r, keys, steps, terms):
        return None
    return tuple(steps)


def _read_step(step: Table, terms: dict | None) -> Reservation | None:
    """One step: `day` (a fixed day) or `after` (an event) with `notice_days` (the days from
    the event to the step; default the hall's notice_days, the least a step up may give)."""
    kw = step.read("kw", as_number, "1650", "the kW reserved from that day",
                   at_least=0, at_most=TOTAL_KW)
    if "day" in step.data and "after" in step.data:
        step.r.report(step.at("after"), step.data["after"], "given with day: a step starts "
                      "on a day or after an event, not both", "keep day for a fixed day, or "
                      "after (with notice_days) for an event")
        return None
    if "after" not in step.data:
        if "notice_days" in step.data:
            step.r.report(step.at("notice_days"), step.data["notice_days"], "needs after: "
                          "notice_days counts from the event the step starts after",
                          f"add after = {EVENT_EXAMPLE}, or remove notice_days (a step on a "
                          "day starts on that day)")
            return None
        day = step.read("day", as_number, "150", "the day the step starts (or after = "
                        f"{EVENT_EXAMPLE} for an event)", at_least=0, at_most=DAYS)
        return None if None in (day, kw) else Reservation(day, kw)
    after = step.read("after", as_event, EVENT_EXAMPLE, "the event the step starts after")
    notice = step.read("notice_days", as_number, "30", "days from the event to the step",
                       default=(terms or {}).get("notice_days") or 0.0, at_least=0,
                       at_most=DAYS)
    return None if None in (after, notice, kw) else Reservation(notice, kw, after)


def as_event(r, key, value, spec: Spec):
    """An event, "kind:id" as summary.json's milestones key it (EVENT_KINDS); None if bad."""
    if not isinstance(value, str):
        r.report(key, value, f"must be a string, not {type_name(value)}",
                 f"for example {spec.name} = {spec.example}")
        return None
    kind, _, ident = value.partition(":")
    if kind not in EVENT_KINDS:
        r.report(key, value, "unknown event", did_you_mean(kind, tuple(EVENT_KINDS), "events",
                                                           compact=False)
                 + f'; write "<event>:<id>", for example {spec.example}')
        return None
    noun = EVENT_KINDS[kind]
    if not ident:
        r.report(key, value, f"names no {noun}", f'write "{kind}:<{noun}>", for example '
                 f'"{kind}:{_EVENT_ID_EXAMPLE[noun]}"')
        return None
    registry = _event_registry(r, kind)
    if registry is not None and ident not in registry:
        r.report(key, value, f"unknown {noun} {ident!r}", did_you_mean(ident, registry,
                                                                       f"known {noun}s"))
        return None
    return value


_EVENT_ID_EXAMPLE = {"shipment": "S3", "hall": "B", "island": "xdr", "existing unit": "SU3",
                     "row": "A1", "incoming unit": "N07"}


def _event_registry(r: Reader, kind: str):
    """The reader's registry of what an event of `kind` names (None: unknowable)."""
    return {"arrival": r.shipments, "energized": r.halls, "island": r.islands,
            "drain": r.existing, "removed": r.existing, "ready": r.rows,
            "install": r.incoming, "burned_in": r.incoming, "accepted": r.incoming}[kind]


def _when(step: Reservation) -> str:
    """A step's start in words: 'day 150', '30 days after arrival:S3'."""
    if step.after is None:
        return f"day {format_number(step.day)}"
    return f"{format_number(step.day)} days after {step.after}"


def _steps_in_order(r: Reader, keys: list[str], steps: list[Reservation]) -> bool:
    """The first step at day 0; each later one after the one before it wherever the file
    decides it: two days, or two steps after one event (reports if not). A step after an
    event against a day or another event is ordered per world by the kernels (it starts
    no sooner than the step listed before it)."""
    if steps[0].after is not None or steps[0].day != 0:
        at, value = (f"{keys[0]}.after", steps[0].after) if steps[0].after is not None \
            else (f"{keys[0]}.day", steps[0].day)
        r.report(at, value, "must be 0: reservations start at day 0" if steps[0].after is None
                 else "the first step must be on day 0, not after an event: reservations "
                 "start at day 0",
                 f"begin with {{ day = 0, kw = 0 }} if nothing is reserved before "
                 f"{_when(steps[0])}")
        return False
    for i in range(1, len(steps)):
        step = steps[i]
        before = next((k for k in range(i - 1, -1, -1) if steps[k].after == step.after), None)
        if before is None or step.day > steps[before].day:
            continue
        if step.after is None:
            what = "the previous step's day" if before == i - 1 else \
                f"the day of {keys[before]}, listed before it"
            r.report(f"{keys[i]}.day", step.day, f"must be > {what} "
                     f"({format_number(steps[before].day)})", "list reservation steps with "
                     "days strictly ascending")
        else:
            r.report(f"{keys[i]}.notice_days", step.day, f"must be > the notice_days of "
                     f"{keys[before]} ({format_number(steps[before].day)}), the step before "
                     f"it after {step.after}", "list the steps after one event with "
                     "notice_days strictly ascending")
        return False
    return True


def _steps_within_terms(r: Reader, keys: list[str], steps: list[Reservation],
                        terms: dict) -> bool:
    """No step up before notice_days; no step down sooner than minimum_term_days after the
    latest step up before it (the reservation at day 0 starts a term). Reports each.

    A step up after an event gives its own notice_days from the event, which must be the
    hall's notice_days or more (the event is at day 0 or later, so it is never before that
    day either). A step down is checked when it and the step up are on days or after one
    event; else its term is kept per world by the kernels."""
    notice, term = terms["notice_days"], terms["minimum_term_days"]
    ok, term_start = True, steps[0]
    for i in range(1, len(steps)):
        step, before = steps[i], steps[i - 1]
        change = f"({format_number(before.kw)} to {format_number(step.kw)} kW)"
        if step.kw > before.kw:
            term_start = step
            if step.after is None and step.day < notice:
                r.report(f"{keys[i]}.day", step.day, f"a step up {change} before notice_days "
                         f"({format_number(notice)})", f"start it on day "
                         f"{format_number(notice)} or later, or lower the hall's notice_days")
                ok = False
            elif step.after is not None and step.day < notice:
                r.report(f"{keys[i]}.notice_days", step.day, f"a step up {change} "
                         f"{_when(step)}, with less than the hall's notice_days "
                         f"({format_number(notice)})", f"give notice_days = "
                         f"{format_number(notice)} or more, or lower the hall's notice_days")
                ok = False
        elif step.kw < before.kw and step.after == term_start.after \
                and step.day < term_start.day + term:
            at = f"{keys[i]}.day" if step.after is None else f"{keys[i]}.notice_days"
            up = f"on {_when(term_start)}" if step.after is None else f"({_when(term_start)})"
            r.report(at, step.day, f"a step down {change} "
                     f"{format_number(step.day - term_start.day)} days after the step up "
                     f"{up}, sooner than "
                     f"minimum_term_days ({format_number(term)})", f"step down "
                     f"{'on ' if step.after is None else ''}"
                     f"{_when(Reservation(term_start.day + term, 0.0, step.after))} or later, "
                     "or lower the hall's minimum_term_days")
            ok = False
    return ok


def _read_prices_by_type(t: Table, name: str, why: str):
    """[costs.running] or [costs.waiting]: unit type id = price; a tuple of (type, price)."""
    r = t.r
    value = t.data.get(name, {})
    if not isinstance(value, dict):
        r.report(t.at(name), value, f"must be a table, not {type_name(value)}",
                 f"write [costs.{name}] with lines like gb300-nvl72 = 3000, the price {why}")
        return None
    if not count_ok(r, t.at(name), len(value), MAX_ENTRIES, "prices"):
        return None
    prices = []
    for type_id, price_value in value.items():
        key = f"{t.at(name)}.{type_id}"
        if not check_ref(r, key, type_id, r.unit_types, "unit type"):
            prices.append(None)
            continue
        prices.append((type_id, as_price(r, key, price_value,
                                          Spec(type_id, "3000", f"the price {why}"))))
    if any(p is None or p[1] is None for p in prices):
        return None
    return tuple(prices)


# Who pays a price of [costs.running] or [costs.waiting], in words: the fleet (the reader's
# registry of it), what the price counts, and the other table, for a price put in the wrong one.
_PAYERS = {
    "running": ("existing", "a running price counts per existing unit from day 0 to its "
                "removal", "to price new units from arrival to acceptance, move it to "
                "[costs.waiting]"),
    "waiting": ("incoming", "a waiting price counts per incoming unit from its shipment's "
                "arrival to its acceptance", "to price the old fleet until its removal, move "
                "it to [costs.running]"),
}


def _paid_by_some_unit(t: Table, name: str, prices: tuple):
    """`prices` if every one is paid by some unit, else None (each reported): a running
    price on a type no existing unit has (or a waiting price on a type no incoming unit
    has) would count nothing, silently 0. Not checked when the fleet was not read whole."""
    fleet_name, counts, fix = _PAYERS[name]
    fleet = getattr(t.r, fleet_name)
    types = {unit.type for unit in (fleet or {}).values()}
    if fleet is None or t.r.unit_types is None or not types <= set(t.r.unit_types):
        return prices           # a unit's unknown type is reported: not again, here
    ok = True
    for type_id, _ in prices:
        if type_id not in types:
            t.r.report(f"{t.at(name)}.{type_id}", t.data[name][type_id],
                       f"no {fleet_name} unit is of type {type_id}, so nothing would pay it: "
                       f"{counts}", f"{fix}; else remove it")
            ok = False
    return prices if ok else None
