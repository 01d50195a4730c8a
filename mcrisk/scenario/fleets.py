"""The units and what happens to them: [[existing]] and [[incoming]] fleets (unit ids unique
across both, totals within limits), [[shipments]] (each incoming unit delivered once) and the
[[risks]] register (targets checked against the ids read before).
"""
from __future__ import annotations

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import ExistingUnit, IncomingUnit, Risk, Shipment

from .costs import as_price
from .distributions import DIST_EXAMPLE, as_date, as_distribution, largest_draw
from .limits import MAX_ENTRIES, MAX_UNITS, TOTAL_H100_EQ, TOTAL_KW, Limit
from .reader import (Reader, Spec, Table, as_ids, as_probability, as_string, check_ref,
                     check_unique, count_text, count_ok, format_limit, type_name, did_you_mean)
from .sections import read_description, read_entries, read_id


def read_existing(root: Table):
    """[[existing]] units, type, rows: units in service at day 0, each standing in a row."""
    tables = root.tables("existing", ("units", "type", "rows"), "", "the units in service at "
                         "day 0", default=[])
    units = [unit for t in filter(None, tables or ()) for unit in _read_existing_entry(t)]
    complete = tables is not None and None not in tables and None not in units
    root.r.existing = {unit.id: unit for unit in units} if complete else None
    return None if tables is None else tuple(units)


def _read_existing_entry(t: Table) -> list[ExistingUnit | None]:
    unit_ids, unit_type = _read_fleet_entry(t, "existing")
    rows = t.read("rows", as_ids, '"A1..A8"', "the rows of the units: one for all, one per "
                  "unit in order, or a block of rows, filled in order, as many units in each")
    for row in rows or ():
        check_ref(t.r, t.at("rows"), row, t.r.rows, "row")
    if unit_ids is None:
        return [None]
    if rows is not None and len(unit_ids) % len(rows):
        t.r.report(t.at("rows"), t.data["rows"],
                   f"names {count_text(len(rows), 'row')} for {count_text(len(unit_ids), 'unit')}"
                   f", which they do not fill evenly", "give one row for all units, one row per "
                   "unit in the same order, or a block of rows the units fill evenly in order "
                   "(128 units in 8 rows: 16 in each)")
        rows = None
    # a block: units fill the rows in order, len(unit_ids) / len(rows) in each (one row for
    # all and one row per unit are its two ends)
    rows = [row for row in rows for _ in range(len(unit_ids) // len(rows))] if rows \
        else [None] * len(unit_ids)
    kind = (t.r.unit_types or {}).get(unit_type) if unit_type else None
    if kind is not None and (kind.performance is not None or kind.ramp is not None):
        t.r.report(t.at("type"), unit_type,
                   "units in service at day 0 need a fixed h100_eq_per_gpu and no ramp: "
                   "they define the baseline", "give existing units a unit type of their own")
    if kind is not None and kind.early_failures is not None:
        t.r.report(t.at("type"), unit_type,
                   "early_failures are failures after acceptance: units in service at day 0 "
                   "were accepted long ago", "give existing units a unit type without "
                   "early_failures (their steady failures are [unit_types.attrition])")
    return [ExistingUnit(unit, unit_type, row) for unit, row in zip(unit_ids, rows)]


def read_incoming(root: Table):
    """[[incoming]] units, type: new units that shipments deliver and strategies place."""
    tables = root.tables("incoming", ("units", "type"), "", "the new units", default=[])
    units = []
    for t in filter(None, tables or ()):
        unit_ids, unit_type = _read_fleet_entry(t, "incoming")
        units += [None] if unit_ids is None else [IncomingUnit(u, unit_type) for u in unit_ids]
    complete = tables is not None and None not in tables and None not in units
    root.r.incoming = {unit.id: unit for unit in units} if complete else None
    return None if tables is None else tuple(units)


def _read_fleet_entry(t: Table, fleet: str):
    """units and type of one [[existing]] or [[incoming]] entry; unit ids are unique across
    both fleets."""
    unit_ids = t.read("units", as_ids, '"N01..N16"', f"the ids of the {fleet} units")
    unit_type = t.read("type", as_string, '"gb300-nvl72"', "the id of their [[unit_types]]")
    if unit_type is not None:
        check_ref(t.r, t.at("type"), unit_type, t.r.unit_types, "unit type")
    if unit_ids is not None:  # a duplicate stays with the fleet that defined it first
        before = len(t.r.unit_keys)
        unit_ids = tuple(unit for unit in unit_ids
                         if check_unique(t.r, t.r.unit_keys, unit, t.at("units"), "unit id"))
        if before <= MAX_UNITS < len(t.r.unit_keys):
            t.r.report(t.at("units"), unit_ids[MAX_UNITS - before],
                       f"is unit {MAX_UNITS + 1:,}: at most {MAX_UNITS:,} existing and incoming "
                       "units together", "model larger units (a rack or a scalable unit, not "
                       "a node): every unit is work drawn in every scenario")
            unit_ids = None
    return unit_ids, unit_type


def check_fleets(r: Reader) -> None:
    """Some unit to migrate, and totals within limits: the capacity of every unit at its
    largest possible performance, and the power of every unit, at most MAX_TOTAL each (the
    capacity bands and power peaks count in millionths, exactly below 2**53)."""
    if r.existing is None or r.incoming is None:
        return
    if not r.existing and not r.incoming:
        r.report("", NO_VALUE, "no units: [[existing]] and [[incoming]] name none",
                 "add the units in service at day 0 as [[existing]] and the new ones as "
                 "[[incoming]]: there is nothing to migrate")
        return
    if r.unit_types is None:
        return
    units = [*r.existing.values(), *r.incoming.values()]
    kinds = [r.unit_types.get(unit.type) for unit in units]
    if None in kinds or any(k.gpus is None or k.h100_eq_per_gpu is None or k.power_kw is None
                            for k in kinds):
        return
    capacity = [k.gpus * (largest_draw(k.performance) if k.performance else k.h100_eq_per_gpu)
                for k in kinds]
    _check_total(r, units, capacity, "capacity", "H100-eq", TOTAL_H100_EQ)
    _check_total(r, units, [k.power_kw for k in kinds], "power draw", "kW", TOTAL_KW)


def _check_total(r: Reader, units, amounts: list[float], what: str, unit_name: str,
                 limit: Limit) -> None:
    """Reports, on the unit that takes the running total of `amounts` past the limit."""
    total = 0.0
    for unit, amount in zip(units, amounts):
        total += amount
        if total > limit.value:
            r.report(r.unit_keys[unit.id], unit.id, f"takes the {what} of all units to "
                     f"{total:,.0f} {unit_name}, more than {format_limit(limit.value)}",
                     f"{limit.why}; check gpus, h100_eq_per_gpu and power_kw of its type")
            return


def check_fleet(r: Reader, key: str, unit: str, fleet: str, role: str, hint: str) -> bool:
    """Whether `unit` is a unit of `fleet` ('existing' or 'incoming'); reports if not.

    True also when the fleet could not be read (nothing to check against).
    """
    mine, other, other_fleet = (r.incoming, r.existing, "existing") if fleet == "incoming" \
        else (r.existing, r.incoming, "incoming")
    if mine is None or unit in mine:
        return True
    if other is not None and unit in other:
        r.report(key, unit, f"{unit} is an {other_fleet} unit; {role}", hint)
    else:
        r.report(key, unit, "unknown unit", did_you_mean(unit, mine, f"known {fleet} units"))
    return False


def read_shipments(root: Table):
    """[[shipments]] id, units, arrival: each incoming unit arrives in exactly one shipment."""
    delivered_by: dict[str, str] = {}
    shipments, registry = read_entries(
        root, "shipments", ("id", "units", "arrival"),
        lambda t: _read_shipment(t, delivered_by), "shipment id", "what arrives when",
        default=[])
    root.r.shipments = registry
    if registry is not None and root.r.incoming is not None \
            and all(s.units is not None for s in shipments):
        for unit in root.r.incoming:
            if unit not in delivered_by:
                root.r.report(root.r.unit_keys[unit], unit,
                              f"{unit} is not delivered by any shipment",
                              "add it to the units of a [[shipments]] entry")
    return shipments


def _read_shipment(t: Table, delivered_by: dict[str, str]) -> Shipment:
    ship_id = read_id(t, '"S1"', "the name triggers give in on_arrival")
    units = t.read("units", as_ids, '"N01..N04"', "the incoming units it delivers")
    for unit in units or ():
        if not check_fleet(t.r, t.at("units"), unit, "incoming",
                            "shipments deliver incoming units", "remove it from the shipment"):
            continue
        if unit in delivered_by:
            t.r.report(t.at("units"), unit, f"{unit} is already delivered by shipment "
                       f"{delivered_by[unit]!r}", "each incoming unit arrives in one shipment")
        delivered_by.setdefault(unit, ship_id)
    arrival = t.read("arrival", as_date, "{ day = 75 }", "when the shipment arrives")
    return Shipment(ship_id, units, arrival)


# --------------------------------------------------------------------------------------------
# Risk register

_RISK_KEYS = ("id", "description", "probability", "impact", "applies_to", "enabled",
              "mitigated")
# target kind -> (what it names, example id)
RISK_TARGETS = {
    "retrofit": ("row", "A1"), "install": ("incoming unit", "N07"),
    "removal": ("existing unit", "SU3"), "burn_in": ("incoming unit", "N07"),
    "arrival": ("shipment", "S2"), "energized": ("hall", "B"), "fabric": ("island", "xdr"),
}


def read_risks(root: Table, halls):
    """[[risks]]: discrete events, each once per scenario with a probability, adding an
    impact in days to every activity or date it applies to."""
    hall_ids = {hall.id: hall for hall in halls or () if hall.id is not None}
    risks, _ = read_entries(root, "risks", _RISK_KEYS, lambda t: _read_risk(t, hall_ids),
                             "risk id", "one per risk", default=None)
    return risks or ()


def _read_risk(t: Table, hall_ids: dict) -> Risk:
    risk_id = read_id(t, '"cdu-recall"', "the name --disable-risk and reports use")
    description = read_description(t)
    probability = t.read("probability", as_probability, "0.1",
                         "the chance the risk occurs in a scenario")
    impact = _read_impact(t, "impact")
    applies_to = t.read("applies_to", _as_targets, '["retrofit"]',
                        "what the impact delays", hall_ids=hall_ids)
    enabled = t.read("enabled", _as_bool, "true", "whether runs include it", default=True)
    mitigated = t.table("mitigated", ("probability", "impact", "cost"), "", default=None)
    m_probability = m_impact = m_cost = None
    if mitigated is not None:
        m_probability = mitigated.read("probability", as_probability, "0.02",
                                       "the chance after mitigation", default=None)
        m_impact = _read_impact(mitigated, "impact", required=False)
        m_cost = _read_mitigation_cost(mitigated)
        if "probability" not in mitigated.data and "impact" not in mitigated.data:
            t.r.report(t.at("mitigated"), mitigated.data, "says nothing",
                       "give probability and/or impact after mitigation, or remove it")
    return Risk(risk_id, probability, impact, applies_to, enabled, m_probability, m_impact,
                description, m_cost)


def _read_mitigation_cost(mitigated: Table):
    """`mitigated.cost`: what the mitigation costs, once per scenario in which it is in
    effect (a price: mcrisk/scenario/costs.py); only with a [costs] section, which makes
    costs an output."""
    cost = mitigated.read("cost", as_price, "250000", "what the mitigation costs, once",
                          default=None)
    if cost is not None and not mitigated.r.has_costs:
        mitigated.r.report(mitigated.at("cost"), mitigated.data["cost"],
                           "a mitigation cost without a [costs] section is never counted",
                           'add a [costs] section (currency = "USD" is enough), or remove cost')
        return None
    return cost


def _read_impact(t: Table, name: str, required: bool = True):
    impact = t.read(name, as_distribution, DIST_EXAMPLE, "the days the risk adds",
                    **({} if required else {"default": None}))
    if impact is not None and impact.kind == "chance":
        t.r.report(t.at(f"{name}.dist"), "chance",
                   "an impact cannot be a chance: the risk's probability already is one",
                   "fold p into the risk's probability")
        return None
    return impact


def _as_bool(r, key, value, spec: Spec):
    if not isinstance(value, bool):
        r.report(key, value, f"must be true or false, not {type_name(value)}", spec.type_hint)
        return None
    return value


def _as_targets(r, key, value, spec: Spec, hall_ids: dict):
    """Risk targets: "retrofit" (all rows) or "retrofit:A1", and so on for RISK_TARGETS."""
    items = value if isinstance(value, list) else [value]
    if not count_ok(r, key, len(items), MAX_ENTRIES, "targets"):
        return None
    targets = []
    for i, item in enumerate(items):
        at = f"{key}[{i}]" if isinstance(value, list) else key
        if not isinstance(item, str):
            r.report(at, item, f"must be a string, not {type_name(item)}", spec.type_hint)
            return None
        kind, _, ident = item.partition(":")
        if kind not in RISK_TARGETS:
            r.report(at, item, "unknown risk target",
                     did_you_mean(kind, tuple(RISK_TARGETS), "targets", compact=False)
                     + '; add ":<id>" for one of them')
            return None
        if ident and not _target_known(r, at, kind, ident, hall_ids):
            return None
        targets.append(item)
    if not targets:
        r.report(key, value, "must name at least one target", spec.type_hint)
        return None
    return tuple(targets)


def _target_known(r, key, kind: str, ident: str, hall_ids: dict) -> bool:
    registry = {"retrofit": r.rows, "install": r.incoming, "burn_in": r.incoming,
                "removal": r.existing, "arrival": r.shipments, "energized": hall_ids,
                "fabric": r.islands}[kind]
    return check_ref(r, key, ident, registry, RISK_TARGETS[kind][0])
