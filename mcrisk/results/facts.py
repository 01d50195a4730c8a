"""What a status says has happened, in the scenario's terms: a timeline of dated events and a
line per kind of fact ("2 of 4 shipments arrived ..."), for summary.json's `status` block and
every output that shows it (the terminal, report.html, summary.md).

Pure functions of the validated scenario and its Status (mcrisk.core.status): nothing here
simulates. Days are days of the plan; with the scenario's start_date each also gets its date.
"""
from __future__ import annotations

import datetime as _dt
import math

from ..core.model import Scenario
from ..core.status import Status

KIND_ORDER = ("shipment", "hall", "island", "row", "unit")


def day_date(start: _dt.date | None, day: float | None) -> str | None:
    """The ISO date day `day` falls on (start + floor(day)), None without a start date."""
    if start is None or day is None or not math.isfinite(day):
        return None
    try:
        return (start + _dt.timedelta(days=math.floor(day))).isoformat()
    except OverflowError:
        return None


def day_text(day: float, start: _dt.date | None = None) -> str:
    """'day 102' or, with a start date, 'day 102 (2027-04-13)'; a whole day without '.0'."""
    number = f"{day:,.0f}" if float(day).is_integer() else f"{day:,.1f}"
    iso = day_date(start, day)
    return f"day {number}" + (f" ({iso})" if iso else "")


def events(status: Status, start: _dt.date | None = None) -> list[dict]:
    """Every dated fact of the status, in time order (ties: shipments, halls, islands, rows,
    units, then the order the status lists them): {day, date (with a start date), kind, id,
    event}."""
    out: list[tuple[float, int, int, str, str, str]] = []

    def add(day, kind: str, ident: str, what: str) -> None:
        if day is not None:
            out.append((float(day), KIND_ORDER.index(kind), len(out), kind, ident, what))

    for ident, day in status.arrived:
        add(day, "shipment", ident, "arrived")
    for ident, day in status.energized:
        add(day, "hall", ident, "energized")
    for ident, day in status.ready:
        add(day, "island", ident, "fabric ready")
    for row in status.rows:
        add(row.retrofit_started, "row", row.id, "retrofit started")
        add(row.retrofit_done, "row", row.id, "retrofit done")
    for unit in status.units:
        add(unit.drained, "unit", unit.id, "drain started")
        add(unit.removed, "unit", unit.id, "removed")
        where = f" in row {unit.row}" if unit.row else ""
        add(unit.install_start, "unit", unit.id, f"install started{where}")
        add(unit.install_end, "unit", unit.id, "installed")
        for k, attempt in enumerate(unit.attempts, start=1):
            add(attempt.start, "unit", unit.id, f"burn-in attempt {k} started")
            if attempt.end is not None:
                add(attempt.end, "unit", unit.id,
                    f"burn-in attempt {k} {'passed' if attempt.passed else 'failed'}")
            if attempt.passed is False:
                add(attempt.repair_end, "unit", unit.id, f"repair after attempt {k} done")
        add(unit.accepted, "unit", unit.id, "accepted")
        add(unit.failed_out, "unit", unit.id, "failed after acceptance")
        add(unit.failed_back, "unit", unit.id, "back in service")
    out.sort(key=lambda e: e[:3])
    return [{"day": day, **({"date": day_date(start, day)} if start is not None else {}),
             "kind": kind, "id": ident, "event": what}
            for day, _, _, kind, ident, what in out]


def _listed(items: list[str], most: int = 6) -> str:
    """'a, b and c', or the first `most` and 'and N more'."""
    if len(items) > most:
        return ", ".join(items[:most]) + f" and {len(items) - most} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def happened(scenario: Scenario, status: Status) -> list[str]:
    """What has happened by as_of, a line per kind of fact, in words (every count out of the
    scenario's own); 'nothing recorded yet' when the status records no fact."""
    start = scenario.start_date
    lines = []
    if status.arrived or status.promised:
        arrived = [f"{i} on {day_text(d, start)}" for i, d in status.arrived]
        line = (f"{len(status.arrived)} of {len(scenario.shipments)} shipments arrived"
                + (f" ({_listed(arrived)})" if arrived else ""))
        promised = [f"{i} for {day_text(d, start)}" for i, d in status.promised]
        lines.append(line + (f"; revised promises: {_listed(promised)}" if promised else ""))
    for facts, noun, verb in ((status.energized, "halls", "energized"),
                              (status.ready, "fabric islands", "ready")):
        if facts:
            lines.append(f"{noun.capitalize()} {verb}: "
                         + _listed([f"{i} on {day_text(d, start)}" for i, d in facts]))
    incoming = {u.id for u in scenario.incoming}
    new = [u for u in status.units if u.id in incoming]
    if new:
        attempts = [a for u in new for a in u.attempts]
        failed = sum(a.passed is False for a in attempts)
        outs = sum(u.failed_out is not None for u in new)
        lines.append(
            f"New units: {sum(u.install_start is not None for u in new)} of {len(incoming)} "
            f"installed or installing, {sum(u.accepted is not None for u in new)} accepted; "
            f"{len(attempts)} burn-in attempt{'s' if len(attempts) != 1 else ''}, {failed} failed"
            + (f"; {outs} failed after acceptance" if outs else ""))
    existing = {u.id for u in scenario.existing}
    old = [u for u in status.units if u.id in existing]
    if old:
        lines.append(f"Old units: {sum(u.drained is not None for u in old)} of {len(existing)} "
                     f"drained, {sum(u.removed is not None for u in old)} removed")
    if status.rows:
        done = [f"{r.id} on {day_text(r.retrofit_done, start)}" for r in status.rows
                if r.retrofit_done is not None]
        running = [r.id for r in status.rows
                   if r.retrofit_started is not None and r.retrofit_done is None]
        lines.append("Row retrofits: " + "; ".join(
            part for part in (f"done: {_listed(done)}" if done else "",
                              f"in progress: {_listed(running)}" if running else "") if part))
    if status.risks:
        occurred = [f"{i} ({impact:,.3g} days)" for i, impact in status.risks
                    if impact is not None]
        ruled_out = [i for i, impact in status.risks if impact is None]
        lines.append("Risks: " + "; ".join(
            part for part in (f"occurred: {_listed(occurred)}" if occurred else "",
                              f"can no longer occur: {_listed(ruled_out)}" if ruled_out else "")
            if part))
    if status.performance:
        lines.append("Measured performance: " + _listed(
            [f"{t} {value:,.4g} H100-eq per GPU" for t, value in status.performance]))
    return lines or ["Nothing recorded yet: every event of the plan lies after as_of"]
