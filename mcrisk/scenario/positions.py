"""Islands by position: an [[islands]] entry's `halls` and `rows` (docs/scenario-format.md,
[[islands]]).

A unit standing in a row that a positional island covers joins that island, whatever its
type; anywhere else it joins its type's `island`. So a unit type's `island` may be left out
only when every row its units stand in (an existing unit's row, every row a strategy places
a new one in) is covered. Two islands covering one row would make a unit's island a matter
of file order: refused, on the second one's key.
"""
from __future__ import annotations

from mcrisk.core.errors import NO_VALUE

from .reader import Reader, check_ref, compact_ids


def check_island_positions(r: Reader, islands) -> None:
    """The halls and rows each island names exist, and no row is covered by two islands
    (reported on the later island's `halls` or `rows`, with the first island and the rows)."""
    if islands is None or r.halls is None or r.rows is None:
        return
    covered: dict[str, tuple[str, str]] = {}     # row -> (island, its key) that covers it
    for i, island in enumerate(islands):
        for part, names, registry in (("halls", island.halls, r.halls),
                                      ("rows", island.rows, r.rows)):
            key = f"islands[{i}].{part}"
            for name in names or ():
                if not check_ref(r, key, name, registry, part[:-1]):
                    continue
                rows = [row.id for row in r.halls[name].rows] if part == "halls" else [name]
                taken = [row for row in rows
                         if covered.get(row, (island.id,))[0] != island.id]
                if taken:
                    other, where = covered[taken[0]]
                    r.report(key, name, f"covers {_rows(taken)}, already in island {other!r} "
                             f"({where}): a row belongs to one island",
                             "remove it from one of the two islands; to split a hall between "
                             "islands, name its rows in rows instead of the hall")
                for row in rows:
                    covered.setdefault(row, (island.id, key))


def check_type_islands(r: Reader, parts: dict) -> None:
    """A unit type without `island` has every unit of it in a covered row: its existing
    units' rows and every row a strategy places one of its new units in (reported once per
    type, on its missing `island`, with the first unit found standing elsewhere)."""
    types, islands, halls = parts.get("unit_types"), parts.get("islands"), parts.get("halls")
    if r.unit_types is None or islands is None or r.halls is None or r.rows is None \
            or all(kind.island is not None for kind in types):
        return
    covered = {row.id for island in islands
               for hall in halls or () if hall.rows is not None
               for row in hall.rows if row.id in island.rows or hall.id in island.halls}
    type_of = {u.id: u.type for u in (*(parts.get("existing") or ()),
                                      *(parts.get("incoming") or ())) if u is not None}
    stands = [(u.type, u.row, f"existing unit {u.id}")
              for u in parts.get("existing") or () if u is not None]
    for strategy in parts.get("strategies") or ():
        stands += [(type_of.get(unit), row, f"{unit} in strategy {strategy.name!r}")
                   for unit, row in strategy.placement or ()]
    for t, kind in enumerate(types):
        if kind.island is not None or kind.id is None:
            continue
        where = next(((row, who) for type_id, row, who in stands
                      if type_id == kind.id and row is not None and row not in covered), None)
        if where is not None:
            r.report(f"unit_types[{t}].island", NO_VALUE,
                     f"missing: {where[1]} stands in row {where[0]}, which no [[islands]] "
                     "entry covers (halls, rows)",
                     f'give the type an island = "..." (its units\' island wherever no '
                     f"positional island covers their row), or add row {where[0]} or its hall "
                     "to an [[islands]] entry's rows or halls")


def _rows(rows: list[str]) -> str:
    return f"row {rows[0]}" if len(rows) == 1 else f"rows {compact_ids(rows)}"
