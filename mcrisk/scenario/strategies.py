"""[[strategies]]: where each incoming unit is placed, when each existing unit drains (or that
the strategy keeps it in service: `keep`), how many retrofit crews the strategy hires (`crews`,
default [retrofit] crews), and the checks across them: every unit placed once, every existing
unit drained once or kept, no new unit in a kept unit's row, rows not overfilled, liquid units only where
a [retrofit] can make the row liquid, and no cycle of waits (deadlock) between drains that
wait on acceptances and rows that wait on drains. The top of mcrisk.scenario.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import Row, Strategy, Trigger

from .costs import read_reservation_steps
from .decisions import is_contingent, read_contingent, resolve_decisions
from .failures import ACCEPTANCE_KEYS, check_acceptance, read_acceptance
from .fleets import check_fleet
from .limits import DAYS, MAX_ENTRIES, MAX_STRATEGIES, Limit
from .reader import (Reader, Spec, Table, as_ids, as_integer, as_name, as_number,
                     as_string, check_ref, check_unique, count_text, count_ok)
from .sections import read_description, read_integration_keys

RESERVED_STRATEGY_NAMES = ("any", "all")   # --fail-if targets meaning every strategy
# Every key a [[strategies]] entry may have: whoever writes a strategy back (mcrisk optimize)
# reads it with these, so a key added here is a key the writer must know.
STRATEGY_KEYS = ("name", "description", "place", "drain", "keep", "reservations", "crews",
                 "acceptance", "install_teams", "burn_in_bays")


@dataclass(frozen=True)
class _Place:
    """One `place` entry, with its key path for later checks."""

    key: str
    units: tuple[str, ...] | None
    row: str | None


@dataclass(frozen=True)
class _Drain:
    """One `drain` entry, with its key path for later checks; trigger None if unreadable."""

    key: str
    units: tuple[str, ...] | None
    trigger: Trigger | None


def read_strategies(root: Table):
    """[[strategies]] name, description, place, drain: at least one, names unique."""
    tables = root.tables("strategies", STRATEGY_KEYS + ("decision",), "",
                         "the plans to compare")
    if tables == []:
        root.r.report("strategies", [], "must have at least one strategy",
                      "add [[strategies]] tables, the plans to compare")
    if tables and not count_ok(root.r, "strategies", len(tables), MAX_STRATEGIES,
                                "strategies", "every strategy is simulated in every scenario "
                                "and keeps its own capacity bands; compare fewer at a time"):
        return None
    seen: dict[str, str] = {}
    strategies, pending = [], {}
    for t in filter(None, tables or ()):
        if is_contingent(t):     # a decision between two written strategies (decisions.py)
            name = t.read("name", _as_strategy_name, '"hybrid-contingent"', "the strategy's "
                          "name in reports")
            pending[len(strategies)] = read_contingent(t, name, read_description(t))
            strategies.append(None)
        else:
            strategies.append(read_strategy(t))
            name = strategies[-1].name
        check_unique(root.r, seen, name, t.at("name"), "strategy name")
    if tables is None:
        return None
    resolved = resolve_decisions(strategies, pending) if pending else strategies
    return None if resolved is None else tuple(resolved)


def read_strategy(t: Table) -> Strategy:
    name = t.read("name", _as_strategy_name, '"big-bang"', "the strategy's name in reports")
    description = read_description(t)
    place = _read_list(t, "place", _PLACE_KEYS, _read_place, '[{ units = "N01..N02", row = '
                       '"A1" }]', "where each incoming unit goes")
    drain = _read_list(t, "drain", _DRAIN_KEYS, _read_drain, '[{ units = "SU1", day = 60 }]',
                       "when each existing unit starts to drain")
    keep = t.read("keep", as_ids, '["SU1..SU2"]', "existing units the strategy keeps in "
                  "service (never drained)", default=())
    label = name if name is not None else t.key
    if place is not None:
        _check_placement(t, label, place)
    if keep is not None:
        _check_kept(t, label, keep, place or (), drain or ())
    if drain is not None:
        _check_drains(t, label, drain, keep or ())
    if place is not None and drain is not None:
        _check_deadlocks(t.r, place, drain)
    # None stays None (the strategy is not built then); an empty tuple stays a tuple
    placement = place and tuple((u, e.row) for e in place for u in e.units or ())
    drains = drain and tuple((u, e.trigger) for e in drain for u in e.units or ())
    reservations = _read_strategy_reservations(t)
    if None not in (reservations, keep, place):
        _check_step_events(t, label, reservations, keep, place)
    acceptance = read_acceptance(t.table("acceptance", ACCEPTANCE_KEYS, "", default=None))
    check_acceptance(t, acceptance)
    teams, bays = read_integration_keys(t, "the site's")
    return Strategy(name, placement, drains, description, reservations, _read_crews(t),
                    keep or (), acceptance, install_teams=teams, burn_in_bays=bays)


def _read_crews(t: Table) -> int | None:
    """`crews`: the retrofit crews this strategy hires (hiring is a plan's choice), an integer
    from 1 to one per row; None when absent (the scenario's [retrofit] crews). Needs a
    [retrofit] section, which says how long a crew takes per row."""
    if "crews" not in t.data:
        return None
    if not t.r.has_retrofit:
        t.r.report(t.at("crews"), t.data["crews"], "the scenario has no [retrofit]: crews "
                   "retrofit rows, and there is nothing that says how long a row takes",
                   "add a [retrofit] table with crews and days, or remove crews")
        return None
    rows = MAX_ENTRIES if t.r.rows is None else max(1, len(t.r.rows))
    most = Limit(rows, f"one crew per row, {count_text(rows, 'row')}: more crews than rows never "
                  "work at once")
    return t.read("crews", as_integer, "2", "the retrofit crews this strategy hires "
                  "(default: [retrofit] crews)", at_least=1, at_most=most)


def _read_strategy_reservations(t: Table):
    """`reservations = [{ hall, day, kw }, ...]`: the strategy's own reservation steps, hall
    by hall, each hall's replacing its [[costs.power]] reservations for this strategy and
    checked against that contract's notice and minimum term. () when absent; None if bad
    (an empty list too: as for a hall, whose `reservations = []` is an error, it would
    otherwise mean the halls' contracts, which leaving the key out says)."""
    tables = t.tables("reservations", ("hall", "day", "after", "notice_days", "kw"),
                      '[{ hall = "B", day = 0, kw = 0 }]', "the strategy's own power "
                      "reservations", default=[])
    if tables is None or None in tables:
        return None
    key = t.at("reservations")
    if "reservations" in t.data and not tables:     # as a hall's []: no silent default
        t.r.report(key, [], "must have at least one step", "leave reservations out to use "
                   "the halls' [[costs.power]] reservations; to reserve nothing in a hall, "
                   'give its step from day 0: [{ hall = "B", day = 0, kw = 0 }]')
        return None
    by_hall: dict[str, list[tuple[str, Table]]] = {}
    ok = True
    for i, step in enumerate(tables):
        hall = step.read("hall", as_string, '"B"', "the hall the step reserves power in")
        if hall is None or not check_ref(t.r, step.at("hall"), hall, t.r.halls, "hall"):
            ok = False
            continue
        if t.r.power_contracts is not None and hall not in t.r.power_contracts:
            t.r.report(step.at("hall"), hall, f"hall {hall} has no [[costs.power]] entry: "
                       "nothing prices its reservation", f'add [[costs.power]] with hall = '
                       f'"{hall}", its reservation and price_per_kw_month')
            ok = False
            continue
        by_hall.setdefault(hall, []).append((f"{key}[{i}]", step))
    reservations = []
    for hall, steps in by_hall.items():
        contract = (t.r.power_contracts or {}).get(hall)
        terms = contract and {"notice_days": contract.notice_days,
                              "minimum_term_days": contract.minimum_term_days}
        read = read_reservation_steps(t.r, key, [step for _, step in steps], terms,
                                       [step_key for step_key, _ in steps])
        ok = ok and read is not None
        reservations.append((hall, read))
    return tuple(reservations) if ok else None


def _check_step_events(t: Table, name: str, reservations, keep: tuple[str, ...],
                       place: tuple[_Place, ...]) -> None:
    """Every reservation step of the strategy that starts after an event (its own, and its
    halls' where it keeps them) names an event of its plan: not the drain or removal of a
    unit it keeps (never), nor the readiness of a row it places no new unit in."""
    own = {hall for hall, _ in reservations}
    steps = [(f"{t.at('reservations')}[{i}].after", entry["after"])
             for i, entry in enumerate(t.data.get("reservations", ()))
             if isinstance(entry, dict) and "after" in entry]
    steps += [(key, event) for hall, events in t.r.hall_step_events.items() if hall not in own
              for key, event in events]
    rows = {entry.row for entry in place if entry.units}
    for key, event in steps:
        kind, _, ident = event.partition(":")
        if kind in ("drain", "removed") and ident in keep:
            t.r.report(key, event, f"strategy {name!r} keeps {ident}: it never drains, so a "
                       "step after its drain or removal never starts", "start the step after "
                       f"another event or on a day, or drain {ident} in strategy {name!r}")
        elif kind == "ready" and ident not in rows:
            t.r.report(key, event, f"strategy {name!r} places no new unit in row {ident}: "
                       "its readiness is no event of that plan", "start the step after an "
                       "event of the strategy's plan, or on a day")


def _as_strategy_name(r, key, value, spec: Spec):
    """A name (see as_name) that --fail-if can target: not `any` or `all`, which mean every
    strategy there. (--fail-if reads the last two dotted parts as metric and statistic, so
    dots and operators in a name are fine; spaces at either end are not, and as_name refuses
    them.)"""
    name = as_name(r, key, value, spec)
    if name in RESERVED_STRATEGY_NAMES:
        r.report(key, name, f"is reserved: --fail-if reads '{name}' as every strategy",
                 f'give the strategy another name, for example "{name}-units"')
        return None
    return name


def _read_list(t: Table, name, allowed, read_entry, example, why):
    """The entries of an inline array of tables; None unless all of them are tables."""
    tables = t.tables(name, allowed, example, why)
    entries = tuple(read_entry(entry) for entry in filter(None, tables or ()))
    return None if tables is None or None in tables else entries


_PLACE_KEYS = ("units", "row")
_DRAIN_KEYS = ("units", "day", "on_arrival", "on_accepted", "lag_days")


def _read_place(t: Table) -> _Place:
    units = t.read("units", as_ids, '"N01..N02"', "the incoming units to place")
    row = t.read("row", as_string, '"A1"', "the row they go in")
    if row is not None and not check_ref(t.r, t.at("row"), row, t.r.rows, "row"):
        row = None
    return _Place(t.key, units, row)


def _read_drain(t: Table) -> _Drain:
    units = t.read("units", as_ids, '"SU1..SU2"', "the existing units to drain")
    return _Drain(t.key, units, _read_trigger(t))


def _read_trigger(t: Table) -> Trigger | None:
    """When a drain starts: the latest of day, on_arrival and on_accepted given, + lag_days."""
    day = t.read("day", as_number, "60", "the earliest day the drain starts", default=None,
                 at_least=0, at_most=DAYS)
    on_arrival = t.read("on_arrival", as_ids, '"S1"', "shipments whose arrival starts it",
                        default=())
    on_accepted = t.read("on_accepted", as_ids, '"N01..N02"',
                         "incoming units whose acceptance starts it", default=())
    lag_days = t.read("lag_days", as_number, "0", "days to wait after the conditions",
                      default=0.0, at_least=0, at_most=DAYS)
    for shipment in on_arrival or ():
        check_ref(t.r, t.at("on_arrival"), shipment, t.r.shipments, "shipment")
    for unit in on_accepted or ():
        check_fleet(t.r, t.at("on_accepted"), unit, "incoming",
                     "on_accepted waits for incoming units", "name new units, or use day")
    if not any(name in t.data for name in ("day", "on_arrival", "on_accepted")):
        t.r.report(t.key, NO_VALUE, "no trigger: a drain needs day, on_arrival or on_accepted",
                   'add day = 60, on_arrival = "S1" or on_accepted = "N01"')
        return None
    if None in (on_arrival, on_accepted, lag_days) or (day is None and "day" in t.data):
        return None
    return Trigger(day, on_arrival, on_accepted, lag_days)


def _check_placement(t: Table, name: str, place: tuple[_Place, ...]) -> None:
    """Each incoming unit placed exactly once; rows hold what they can, cooled as needed."""
    r, placed_at = t.r, {}
    units_by_row: dict[str, list[tuple[_Place, str]]] = defaultdict(list)
    for entry in place:
        key = f"{entry.key}.units"
        for unit in entry.units or ():
            if not check_fleet(r, key, unit, "incoming", "place takes incoming units",
                                "list existing units under drain"):
                continue
            if unit in placed_at:
                r.report(key, unit, f"{unit} is placed twice in strategy {name!r}, also at "
                         f"{placed_at[unit]}", "place each incoming unit once")
                continue
            placed_at[unit] = key
            if entry.row is not None:
                units_by_row[entry.row].append((entry, unit))
    if r.incoming is not None and all(entry.units is not None for entry in place):
        for unit in r.incoming:
            if unit not in placed_at:
                r.report(t.at("place"), NO_VALUE, f"{unit} is never placed in strategy {name!r}",
                         f'add {{ units = "{unit}", row = "..." }} to place')
    retrofit_reported = False  # once per strategy: the same fix serves every row
    for row_id, entries in units_by_row.items():
        if r.rows is not None and row_id in r.rows:
            _check_row_fits(r, r.rows[row_id], entries)
            retrofit_reported = retrofit_reported or _needs_retrofit(r, r.rows[row_id], entries)


def _check_row_fits(r: Reader, row: Row, entries: list[tuple[_Place, str]]) -> None:
    """At most `positions` new units in a row; reported on the entry that overfills it."""
    if row.positions is None or len(entries) <= row.positions:
        return
    entry = entries[row.positions][0]
    placed = f"{count_text(len(entries), 'new unit')} {'is' if len(entries) == 1 else 'are'}"
    r.report(f"{entry.key}.row", row.id, f"{placed} placed in row {row.id}, which has "
             f"{count_text(row.positions, 'position')}",
             f"place {len(entries) - row.positions} of them in another row, or raise positions "
             f"of row {row.id}")


def _needs_retrofit(r: Reader, row: Row, entries: list[tuple[_Place, str]]) -> bool:
    """Whether a liquid unit is placed in air row `row` while there is no [retrofit] (which
    converts empty air rows to liquid); reports it on the first such entry. An air unit in a
    liquid row needs nothing."""
    if r.has_retrofit or row.cooling != "air":
        return False
    for entry, unit in entries:
        if _cooling_of(r, unit) == "liquid":
            r.report(f"{entry.key}.row", row.id, f"row {row.id} is air-cooled, {unit} is "
                     "liquid-cooled, and there is no [retrofit] to convert the row",
                     "add a [retrofit] table with crews and days, or place liquid units in "
                     "liquid-cooled rows")
            return True
    return False


def _cooling_of(r: Reader, unit: str) -> str | None:
    incoming = (r.incoming or {}).get(unit)
    unit_type = incoming and (r.unit_types or {}).get(incoming.type)
    return unit_type.cooling if unit_type else None


def _check_kept(t: Table, name: str, keep: tuple[str, ...], place: tuple[_Place, ...],
                drain: tuple[_Drain, ...]) -> None:
    """Kept units are existing units, not drained too, and in rows that take no new unit of
    the strategy (a kept unit never leaves its row, so the row is never ready)."""
    r, key = t.r, t.at("keep")
    kept = [unit for unit in keep if check_fleet(r, key, unit, "existing", "keep takes "
                                                  "existing units", "place incoming units")]
    drained_at = {unit: f"{entry.key}.units" for entry in drain for unit in entry.units or ()}
    for unit in kept:
        if unit in drained_at:
            r.report(key, unit, f"{unit} is both kept and drained in strategy {name!r} (at "
                     f"{drained_at[unit]})", f"keep {unit} or drain it, not both")
    row_of = {unit: r.existing[unit].row for unit in kept if r.existing is not None}
    kept_in = defaultdict(list)
    for unit, row in row_of.items():
        kept_in[row].append(unit)
    for entry in place:
        if entry.row in kept_in:
            units = ", ".join(kept_in[entry.row])
            r.report(f"{entry.key}.row", entry.row, f"row {entry.row} holds {units}, which "
                     f"strategy {name!r} keeps: the row is never emptied for new units",
                     f"place them in another row, or drain {units} instead of keeping")


def _check_drains(t: Table, name: str, drain: tuple[_Drain, ...],
                  keep: tuple[str, ...] = ()) -> None:
    """Each existing unit drained exactly once, or kept."""
    r, drained_at = t.r, {}
    for entry in drain:
        key = f"{entry.key}.units"
        for unit in entry.units or ():
            if not check_fleet(r, key, unit, "existing", "drain takes existing units",
                                "list incoming units under place"):
                continue
            if unit in drained_at:
                r.report(key, unit, f"{unit} is drained twice in strategy {name!r}, also at "
                         f"{drained_at[unit]}", "drain each existing unit once")
            drained_at.setdefault(unit, key)
    if r.existing is not None and all(entry.units is not None for entry in drain):
        for unit in r.existing:
            if unit not in drained_at and unit not in keep:
                r.report(t.at("drain"), NO_VALUE, f"{unit} is never drained in strategy "
                         f"{name!r}", f'add {{ units = "{unit}", day = ... }} to drain, or '
                         f'keep = ["{unit}"] to keep it in service')


def _check_deadlocks(r: Reader, place: tuple[_Place, ...], drain: tuple[_Drain, ...]) -> None:
    """Report each cycle of waits, once, on the drain entry of its first unit.

    Wait-for graph: drain(u) waits on accepted(n) for n in u's on_accepted; accepted(n) on
    ready(row of n); ready(row) on drain(v) of every existing unit v standing in that row.
    Arrivals and days wait on nothing, so only on_accepted can close a cycle.
    """
    if r.existing is None:
        return
    row_of_new = {u: e.row for e in place for u in e.units or () if e.row is not None}
    units_in_row: dict[str, list[str]] = defaultdict(list)
    for unit in r.existing.values():
        units_in_row[unit.row].append(unit.id)
    entry_of = {}
    for entry in drain:
        for unit in entry.units or ():
            if unit in r.existing and entry.trigger is not None:
                entry_of.setdefault(unit, entry)

    def waits(unit: str):
        """(new unit, its row, existing unit in that row) for each wait of drain(unit)."""
        for new in entry_of[unit].trigger.on_accepted if unit in entry_of else ():
            row = row_of_new.get(new)
            for blocker in units_in_row.get(row, ()) if row is not None else ():
                yield new, row, blocker

    on_a_cycle: set[str] = set()
    for unit, entry in entry_of.items():
        cycle = None if unit in on_a_cycle else _shortest_cycle(unit, waits)
        if cycle:
            on_a_cycle.update(step[0] for step in cycle)
            r.report(f"{entry.key}.on_accepted", list(entry.trigger.on_accepted),
                     "deadlock: " + _describe_cycle(cycle),
                     f"drain on units placed elsewhere, or place {cycle[0][1]} in an empty row")


def _shortest_cycle(start: str, waits) -> list[tuple[str, str, str, str]] | None:
    """Breadth-first: the shortest chain of waits from drain(start) back to itself, as steps
    (unit, new unit it waits for, that unit's row, existing unit in the row); None if none."""
    came_from: dict[str, tuple[str, str, str, str]] = {}
    frontier = [start]
    while frontier:
        next_frontier = []
        for unit in frontier:
            for new, row, blocker in waits(unit):
                step = (unit, new, row, blocker)
                if blocker == start:
                    steps = [step]
                    while steps[-1][0] != start:
                        steps.append(came_from[steps[-1][0]])
                    return steps[::-1]
                if blocker not in came_from:
                    came_from[blocker] = step
                    next_frontier.append(blocker)
        frontier = next_frontier
    return None


def _describe_cycle(cycle: list[tuple[str, str, str, str]]) -> str:
    return ", ".join(f"{unit} drains after {new} is accepted, {new} is placed in row {row}, "
                     f"row {row} is free only after {blocker} drains"
                     for unit, new, row, blocker in cycle)
