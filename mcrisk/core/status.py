"""The validated status of a migration in flight: what has happened by a status date.

`mcrisk.scenario.load_status` builds a Status from a status file (TOML, the same document as
JSON, or a flat CSV export) after validating it against its scenario; nothing here does I/O.
Every day is a day of the plan (day 0 = the scenario's start_date), as in the scenario.

The status is complete as of `as_of`: an event it does not record has not happened by then.
So a shipment with no `arrived` arrives after `as_of`, a unit with no `drained` still runs, an
attempt with no `end` is still running. docs/status.md says how each fact conditions the model.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass


@dataclass(frozen=True)
class Attempt:
    """One burn-in attempt of a new unit, so far. `end` None: running at as_of. `passed`
    None while running. After a failed attempt, `repair_end` is when its fix ended (or, after
    the type's rma_after_failures failures in a row, when the replacement unit came back);
    None: the repair is still running (or, for a passed attempt, not applicable)."""

    start: float
    end: float | None = None
    passed: bool | None = None
    repair_end: float | None = None


@dataclass(frozen=True)
class UnitStatus:
    """What has happened to one unit. An incoming unit: where and when it was installed
    (`install_end` None: installing at as_of), its burn-in attempts so far, its acceptance,
    and an early failure after acceptance (`failed_back` None: still out). An existing unit:
    its drain start (its capacity gone) and its removal end (its row empty, its power free)."""

    id: str
    row: str | None = None
    install_start: float | None = None
    install_end: float | None = None
    attempts: tuple[Attempt, ...] = ()
    accepted: float | None = None
    failed_out: float | None = None
    failed_back: float | None = None
    drained: float | None = None
    removed: float | None = None

    @property
    def passed(self) -> float | None:
        """The day its burn-in passed (the end of the attempt that passed), or None."""
        last = self.attempts[-1] if self.attempts else None
        return last.end if last is not None and last.passed else None


@dataclass(frozen=True)
class RowStatus:
    """A row's retrofit: started (None: not yet) and done (None: running or not started)."""

    id: str
    retrofit_started: float | None = None
    retrofit_done: float | None = None


@dataclass(frozen=True)
class Status:
    """Every fact as of `as_of` (a day of the plan; `as_of_date` its calendar date when the
    scenario has a start_date), by the scenario's ids:

      arrived      shipment -> day it arrived
      promised     shipment -> the vendor's revised promise of a shipment not arrived yet
      energized    hall -> day it was energized
      ready        island -> day its fabric was ready
      risks        risk -> the days of its impact (it occurred), or None (it can no longer
                   occur)
      performance  unit type -> its measured H100-eq per GPU
      units, rows  what happened to each unit and row the status names
    `executing`: the strategy being executed, when the status names it (else the scenario's
    [scenario] executing, if any).
    """

    path: str
    sha256: str
    as_of: float
    as_of_date: _dt.date | None = None
    executing: str | None = None
    arrived: tuple[tuple[str, float], ...] = ()
    promised: tuple[tuple[str, float], ...] = ()
    energized: tuple[tuple[str, float], ...] = ()
    ready: tuple[tuple[str, float], ...] = ()
    risks: tuple[tuple[str, float | None], ...] = ()
    performance: tuple[tuple[str, float], ...] = ()
    units: tuple[UnitStatus, ...] = ()
    rows: tuple[RowStatus, ...] = ()

    def unit(self, unit_id: str) -> UnitStatus | None:
        return next((u for u in self.units if u.id == unit_id), None)

    def row(self, row_id: str) -> RowStatus | None:
        return next((r for r in self.rows if r.id == row_id), None)

