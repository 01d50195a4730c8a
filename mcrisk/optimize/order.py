"""The order of waves, a knob of `mcrisk optimize`: [[search.orders]] in a search file.

An order names waves of incoming units (each lands together, in one row) and as many rows;
each candidate takes one permutation of the rows, and the wave listed i-th lands in the
permutation's i-th row. Which wave goes first into the row that is ready first is the choice:
the waves arrive when their shipments do, the rows are ready when the template's drains and
the retrofit free them, and a wave whose row is not ready waits.

The permutations are itertools.permutations of the rows in file order, so the first is the
order as written and the list is the same on every machine. `read_orders` reads and checks
the tables with the scenario reader's helpers (located errors, all at once): known incoming
units in one wave of one order at most and in no [[search.waves]], known rows, distinct, one
per wave. A permutation that overfills a row is not an error: the candidate is rejected
before simulation and counted (`row positions`), like any plan that overfills a row; only an
order that no permutation can fit (every one overfills some row with the wave alone, beside
the template's units that no knob moves) is an error, since it would reject every plan.
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from functools import cached_property

from ..core.model import Scenario
from ..scenario.reader import Spec, Table, as_ids, compact_ids, count_text, type_name, did_you_mean

MAX_ORDER_WAVES = 8            # 8! = 40,320 permutations: every one is a value of the knob
KNOB = "order"                 # the knob's label in a candidate's knobs


@dataclass(frozen=True)
class Order:
    """Waves (incoming units that land together, in file order) and the rows they take: the
    knob's values are the permutations of `rows`, wave i landing in a permutation's row i."""

    waves: tuple[tuple[str, ...], ...]
    rows: tuple[str, ...]              # one per wave, distinct, in file order

    @cached_property
    def permutations(self) -> tuple[tuple[str, ...], ...]:
        """The knob's values: itertools.permutations of the rows (the written order first)."""
        return tuple(itertools.permutations(self.rows))

    @property
    def size(self) -> int:
        return math.factorial(len(self.rows))

    def placement(self, rows: tuple[str, ...]) -> dict[str, str]:
        """unit -> row when wave i lands in rows[i]."""
        return {unit: row for wave, row in zip(self.waves, rows) for unit in wave}

    def words(self, rows: tuple[str, ...]) -> str:
        """'N01..N04 -> A9, N05..N08 -> B1': which row each wave takes, waves in file order."""
        return ", ".join(f"{compact_ids(list(wave))} -> {row}" for wave, row in zip(self.waves, rows))

    def written_words(self, placement: dict[str, str]) -> str:
        """The template's rows of each wave, in words ('B1 + A9' when it splits a wave)."""
        parts = []
        for wave in self.waves:
            rows = sorted({placement[unit] for unit in wave})
            parts.append(f"{compact_ids(list(wave))} -> {' + '.join(rows)}")
        return ", ".join(parts)


_ORDER_HINT = 'waves = ["N01..N04", "N05..N08"], rows = ["B1", "A9"]'


def read_orders(search: Table, scenario: Scenario | None, template,
                waves) -> tuple[Order, ...] | None:
    """[[search.orders]]: each order's waves and rows, checked against the scenario, the
    template and [[search.waves]] (`waves`, None when unreadable: that check is skipped).
    None when any order is bad (reported)."""
    tables = search.tables("orders", ("waves", "rows"), f"[{{ {_ORDER_HINT} }}]",
                           "the order in which waves take rows", default=[])
    if tables is None:
        return None
    incoming = None if scenario is None else [u.id for u in scenario.incoming]
    known_rows = None if scenario is None else {row.id: row for row in scenario.rows()}
    in_waves = {} if waves is None else {
        unit: f"search.waves[{i}].units" for i, wave in enumerate(waves) for unit in wave.units}
    seen: dict[str, str] = {}
    orders, ok = [], True
    for t in tables:
        if t is None:
            ok = False
            continue
        order_waves = t.read("waves", _as_waves, '["N01..N04", "N05..N08"]',
                             "the waves whose order the search varies")
        rows = t.read("rows", as_ids, '["B1", "A9"]', "the rows the waves take, one each")
        if order_waves is not None and incoming is not None:
            order_waves = _check_units(t, order_waves, incoming, seen, in_waves)
        if rows is not None and known_rows is not None:
            rows = _check_rows(t, rows, known_rows)
        if order_waves is not None and rows is not None and len(rows) != len(order_waves):
            t.r.report(t.at("rows"), list(rows), f"gives {count_text(len(rows), 'row')} for "
                       f"{count_text(len(order_waves), 'wave')}", "give one row per wave: each "
                       "plan puts every wave in a row of its own")
            rows = None
        ok = ok and None not in (order_waves, rows)
        if None not in (order_waves, rows):
            orders.append((t, Order(order_waves, rows)))
    if ok and scenario is not None and template is not None:
        moved = set(in_waves) | set(seen)
        ok = all([_fits(t, order, scenario, template, moved) for t, order in orders])
    return tuple(order for _, order in orders) if ok else None


def _as_waves(r, key, value, spec: Spec):
    """An array of 2 to MAX_ORDER_WAVES waves, each an id or an array of ids (ranges
    expanded) -> tuple of unit tuples; None (reported) when any is bad."""
    if not isinstance(value, list) or len(value) < 2:
        what = type_name(value) if not isinstance(value, list) else f"{len(value)} wave(s)"
        r.report(key, value, f"must be an array of at least two waves, not {what}",
                 "an order of one wave is no choice: put it in [[search.waves]] instead")
        return None
    if len(value) > MAX_ORDER_WAVES:
        r.report(key, value, f"has {len(value)} waves, more than {MAX_ORDER_WAVES}",
                 f"{MAX_ORDER_WAVES} waves already have {math.factorial(MAX_ORDER_WAVES):,} "
                 "orders: split them into several orders, or fix some in the template")
        return None
    waves = [as_ids(r, f"{key}[{i}]", item, spec) for i, item in enumerate(value)]
    return None if None in waves else tuple(waves)


def _check_units(t: Table, waves, incoming: list[str], seen: dict[str, str],
                 in_waves: dict[str, str]):
    """`waves` if every unit is incoming, in no earlier wave of an order and in no
    [[search.waves]]; else None (reported at the wave's key). Records the units in `seen`."""
    ok = True
    for i, wave in enumerate(waves):
        key = f"{t.at('waves')}[{i}]"
        for unit in wave:
            if unit not in incoming:
                t.r.report(key, unit, f"{unit} is not one of the incoming units",
                           did_you_mean(unit, incoming, "the incoming units"))
                ok = False
            elif unit in in_waves:
                t.r.report(key, unit, f"{unit} is also in {in_waves[unit]}: the wave would "
                           "choose its row and the order another", "put the unit in the order "
                           "or in [[search.waves]], not both")
                ok = False
            elif unit in seen:
                t.r.report(key, unit, f"{unit} is in two waves, also at {seen[unit]}",
                           "put each unit in one wave of one order")
                ok = False
            else:
                seen[unit] = key
    return waves if ok else None


def _check_rows(t: Table, rows: tuple[str, ...], known: dict) -> tuple[str, ...] | None:
    """`rows` if every one is a row of the scenario; else None (reported)."""
    unknown = [row for row in rows if row not in known]
    for row in unknown:
        t.r.report(t.at("rows"), row, "unknown row", did_you_mean(row, list(known), "known rows"))
    return None if unknown else rows


def _fits(t: Table, order: Order, scenario: Scenario, template, moved: set[str]) -> bool:
    """Whether some permutation puts every wave in a row with positions enough for it
    beside the template's units that no knob moves (not in `moved`); reported when none does
    (every plan would be rejected). Permutations that overfill a row, also with units other
    knobs move there, are rejected plan by plan and counted."""
    positions = {row.id: row.positions for row in scenario.rows()}
    fixed: dict[str, int] = {}
    for unit, row in template.placement:
        if unit not in moved:
            fixed[row] = fixed.get(row, 0) + 1
    free = {row: None if positions[row] is None else positions[row] - fixed.get(row, 0)
            for row in order.rows}

    def fits(rows) -> bool:
        return all(free[row] is None or len(wave) <= free[row]
                   for wave, row in zip(order.waves, rows))

    if any(fits(rows) for rows in order.permutations):
        return True
    room = ", ".join(f"{row} {free[row]}" for row in order.rows)
    sizes = ", ".join(str(len(wave)) for wave in order.waves)
    t.r.report(t.at("rows"), list(order.rows), "no order of the waves fits: every one puts "
               f"a wave in a row without positions enough (waves of {sizes} units; free "
               f"positions {room}, beside the template's units no knob moves)",
               "give rows with more positions, or smaller waves")
    return False
