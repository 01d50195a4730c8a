"""Read and validate a status file: what has happened in a migration by its status date.

    load_status(path, scenario) -> Status     raises ScenarioError carrying every Problem

The file (docs/status.md) is TOML, or the same document as JSON (`.json`), or a flat export of
a tracking system as CSV (`.csv`: `section,id,field,value` rows, status_csv.py). Every fact
names the scenario's own ids; every day is a day of the plan or, when the scenario has a
start_date, a calendar date. The status is complete as of `as_of`: what it does not record
has not happened by then (core/status.py).

Validation is as strict as the scenario's, in one pass: known ids and keys, days on or before
as_of, events in a possible order (a unit installed after its shipment arrived, in a row that
was ready; accepted after its burn-in passed and its fabric was ready; removed after it was
drained), facts that agree with each other (an attempt after a passed one, a failure the
scenario's burn-in sends to RMA recorded as a fix). Each problem is located by file, line and
key path, with the fix. Whether a fact is possible under the scenario's distributions is the
plan stage's to say (mcrisk.plan), where they are evaluated.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os

from mcrisk.core.errors import NO_VALUE, Problem, ScenarioError
from mcrisk.core.model import Scenario
from mcrisk.core.status import Attempt, RowStatus, Status, UnitStatus

from .document import parse_toml, read_file_bytes, too_deep
from .limits import MAX_NESTING
from .reader import (Reader, Spec, Table, as_name, as_number, did_you_mean, is_number,
                     type_name)
from .status_csv import csv_document
from .status_lines import KeyLines

_TOP_KEYS = ("status", "shipments", "halls", "islands", "units", "rows", "risks", "unit_types")
_UNIT_KEYS = ("installed", "burn_in", "accepted", "failed", "drained", "removed")
_INCOMING_KEYS = ("installed", "burn_in", "accepted", "failed")
_EXISTING_KEYS = ("drained", "removed")
_ATTEMPT_KEYS = ("start", "end", "passed", "repair_end", "rma")
_DAY_EXAMPLE = "150 (a day of the plan) or 2027-06-01 (with the scenario's start_date)"


def load_status(path: str | os.PathLike, scenario: Scenario,
                data: bytes | None = None) -> Status:
    """Read, validate and build the status at `path` against `scenario`; with `data`, those
    bytes are the file's (read once by a caller that keeps a copy of them: the nightly).

    Raises ScenarioError with every Problem found (file, line, key path, value, what is
    wrong, hint); never another exception for a bad file."""
    file = os.fsdecode(path)
    data = read_file_bytes(file) if data is None else data
    document, lines = _document(file, data)
    reader = _StatusReader(file, scenario, lines)
    fields = reader.read(document)
    if reader.problems:      # in the file's order, as a reader goes through it
        raise ScenarioError(sorted(reader.problems, key=lambda p: p.line or 0))
    return Status(path=file, sha256=hashlib.sha256(data).hexdigest(), **fields)


def status_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of a status file's bytes, as Status.sha256 records it."""
    return hashlib.sha256(read_file_bytes(os.fsdecode(path))).hexdigest()


def _document(file: str, data: bytes) -> tuple[dict, KeyLines]:
    """The file's document (TOML, JSON or CSV by its suffix) and where its keys are."""
    suffix = os.path.splitext(file)[1].lower()
    if suffix == ".csv":
        return csv_document(file, data)
    if suffix == ".json":
        try:
            document = json.loads(data.decode("utf-8-sig"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise ScenarioError([Problem(file, "", NO_VALUE, f"not valid JSON: {exc}",
                                         "a status export is one JSON object, as the TOML "
                                         "status file's document")]) from None
        if not isinstance(document, dict):
            raise ScenarioError([Problem(file, "", NO_VALUE, "must be a JSON object",
                                         "write { \"status\": { \"as_of\": 150 }, ... }")])
    else:
        document = parse_toml(file, data)
    deep = too_deep(document)
    if deep is not None:
        raise ScenarioError([Problem(file, deep, NO_VALUE, f"nested more than {MAX_NESTING} "
                                     "levels deep", "a status nests tables a few levels deep")])
    return document, KeyLines.of_text(data.decode("utf-8", "replace"), suffix)


class _StatusReader(Reader):
    """The Reader of one status file against its scenario: every Problem carries the line of
    its key (KeyLines), and days are read as days or dates."""

    def __init__(self, file: str, scenario: Scenario, lines: KeyLines):
        super().__init__(file)
        self.scenario = scenario
        self.lines = lines
        self.as_of: float | None = None
        self.executing: str | None = None
        self.unreadable: set[str] = set()      # ids whose own fact was reported already

    def report(self, key: str, value: object, message: str, hint: str = "") -> None:
        self.problems.append(Problem(self.file, key, value, message, hint,
                                     line=self.lines.line_of(key)))

    # ---- the document ------------------------------------------------------------------
    def read(self, document: dict) -> dict:
        if "scenario" in document and "status" not in document:
            self.report("", NO_VALUE, "this is a scenario file, not a status file",
                        "give a status file (docs/status.md) after --status")
            return {}
        root = Table(self, "", document, _TOP_KEYS)
        self.as_of = self._as_of(root)
        s = self.scenario
        fields = dict(as_of=self.as_of, as_of_date=self._date_of(self.as_of),
                      executing=self.executing)
        fields["arrived"], fields["promised"] = self._shipments(root)
        fields["energized"] = self._dated(root, "halls", "energized", [h.id for h in s.halls],
                                          "hall", "the day the hall was energized")
        fields["ready"] = self._dated(root, "islands", "ready", [i.id for i in s.islands],
                                      "island", "the day the island's fabric was ready")
        fields["risks"] = self._risks(root)
        fields["performance"] = self._performance(root)
        fields["rows"] = self._rows(root)
        fields["units"] = self._units(root, fields)
        if not self.problems:
            self._check_rows_against_units(fields)
        return fields

    def _as_of(self, root: Table) -> float | None:
        t = root.table("status", ("as_of", "executing"), "with as_of, the status date")
        if t is None:
            return None
        self.executing = t.read("executing", as_name, '"hybrid-gated"', "the strategy being "
                                "executed", default=None)
        names = [x.name for x in self.scenario.strategies]
        if self.executing is not None and self.executing not in names:
            self.report(t.at("executing"), self.executing, "is not a strategy of the scenario",
                        did_you_mean(self.executing, names, "strategies"))
        as_of = t.read("as_of", self._day_value, _DAY_EXAMPLE, "the status date: what the file "
                       "records happened by then")
        if as_of is not None and as_of > self.scenario.horizon_days:
            self.report(t.at("as_of"), as_of, f"is after the horizon, day "
                        f"{self.scenario.horizon_days:g}: nothing of the plan is left to "
                        "simulate", "raise [scenario] horizon_days past the status date")
            return None
        return as_of

    # ---- days --------------------------------------------------------------------------
    def _day_value(self, r, key, value, spec: Spec):
        """A day of the plan from a number or, with the scenario's start_date, a date (a TOML
        date or an ISO string); None (reported) otherwise."""
        start = self.scenario.start_date
        if isinstance(value, (_dt.datetime, _dt.time)):
            self.report(key, value, "must be a day or a date without a time of day",
                        f"for example {spec.name} = {_DAY_EXAMPLE}")
            return None
        date = value if isinstance(value, _dt.date) else None
        if isinstance(value, str):
            try:
                date = _dt.date.fromisoformat(value)
            except ValueError:
                self.report(key, value, "must be a day (a number) or an ISO date YYYY-MM-DD",
                            f"for example {spec.name} = {_DAY_EXAMPLE}")
                return None
        if date is not None:
            if start is None:
                self.report(key, value, "is a date, but the scenario has no start_date to "
                            "count days from", "give the day of the plan instead, or add "
                            "start_date to the scenario's [scenario]")
                return None
            day = float((date - start).days)
        elif is_number(value):
            day = as_number(self, key, value, spec)
            if day is None:
                return None
        else:
            self.report(key, value, f"must be a day or a date, not {type_name(value)}",
                        f"for example {spec.name} = {_DAY_EXAMPLE}")
            return None
        if day < 0:
            self.report(key, value, "is before day 0 of the plan", "a status records what "
                        "happened during the migration, from day 0 on")
            return None
        return day

    def _day(self, t: Table, name: str, why: str, default=None, after=None,
             after_what: str = "") -> float | None:
        """The day at `name` of table t: on or before as_of, not before `after` (reported)."""
        day = t.read(name, self._day_value, _DAY_EXAMPLE, why, default=default)
        if day is None:
            return None
        if self.as_of is not None and day > self.as_of:
            self.report(t.at(name), self._shown(t.data.get(name)), f"is after the status date "
                        f"({self._day_text(self.as_of)})", "a status records only what has "
                        "happened by as_of; leave out what has not happened yet")
            return None
        if after is not None and day < after:
            self.report(t.at(name), self._shown(t.data.get(name)),
                        f"is before {after_what} ({self._day_text(after)})",
                        "events happen in order; check both days")
            return None
        return day

    def _date_of(self, day: float | None) -> _dt.date | None:
        start = self.scenario.start_date
        if start is None or day is None:
            return None
        return start + _dt.timedelta(days=int(day))

    def _day_text(self, day: float) -> str:
        date = self._date_of(day)
        return f"day {day:g}" + (f", {date.isoformat()}" if date is not None else "")

    @staticmethod
    def _shown(value):
        return value.isoformat() if isinstance(value, _dt.date) else value

    # ---- sections ----------------------------------------------------------------------
    def _entries(self, root: Table, section: str, known: list[str], noun: str, allowed):
        """(id, Table) of each entry of [section.<id>] whose id the scenario knows."""
        if section not in root.data:
            return []
        value = root.data[section]
        if not isinstance(value, dict):
            self.report(section, value, f"must be a table of {noun}s by id, not "
                        f"{type_name(value)}", f"write [{section}.<id>] tables")
            return []
        entries = []
        for ident, body in value.items():
            key = f"{section}.{ident}"
            if ident not in known:
                self.report(key, NO_VALUE, f"no {noun} {ident!r} in the scenario",
                            did_you_mean(ident, known, f"{noun}s"))
                continue
            if not isinstance(body, dict):
                self.report(key, body, f"must be a table, not {type_name(body)}",
                            f"allowed keys: {', '.join(allowed)}")
                continue
            entries.append((ident, Table(self, key, body, allowed)))
        return entries

    def _dated(self, root, section, field, known, noun, why) -> tuple:
        out = []
        for ident, t in self._entries(root, section, known, noun, (field,)):
            day = self._day(t, field, why)
            if day is not None:
                out.append((ident, day))
        return tuple(out)

    def _shipments(self, root: Table) -> tuple[tuple, tuple]:
        arrived, promised = [], []
        known = [s.id for s in self.scenario.shipments]
        for ident, t in self._entries(root, "shipments", known, "shipment",
                                      ("arrived", "promised")):
            if "arrived" in t.data and "promised" in t.data:
                self.report(t.at("promised"), self._shown(t.data["promised"]),
                            "is the revised promise of a shipment not arrived yet, but this "
                            "one arrived", "keep arrived and drop promised")
                continue
            day = self._day(t, "arrived", "the day the shipment arrived")
            if day is not None:
                arrived.append((ident, day))
            elif "arrived" in t.data:
                self.unreadable.add(ident)      # reported: facts that need it say nothing more
            if "promised" in t.data:
                revised = t.read("promised", self._day_value, _DAY_EXAMPLE,
                                 "the vendor's revised promise")
                if revised is not None:
                    promised.append((ident, revised))
        return tuple(arrived), tuple(promised)

    def _risks(self, root: Table) -> tuple:
        out = []
        known = [r.id for r in self.scenario.risks]
        for ident, t in self._entries(root, "risks", known, "risk", ("occurred",)):
            value = t.data.get("occurred", NO_VALUE)
            if value is False:
                out.append((ident, None))
            elif isinstance(value, dict):
                impact = Table(self, t.at("occurred"), value, ("impact",)).read(
                    "impact", as_number, "12", "the days the risk added", at_least=0)
                if impact is not None:
                    out.append((ident, impact))
            else:
                self.report(t.at("occurred"), value, "must be false (it can no longer occur) "
                            "or { impact = days } (it occurred)",
                            "for example occurred = { impact = 12 }")
        return tuple(out)

    def _performance(self, root: Table) -> tuple:
        out = []
        known = [k.id for k in self.scenario.unit_types]
        for ident, t in self._entries(root, "unit_types", known, "unit type",
                                      ("h100_eq_per_gpu",)):
            value = t.read("h100_eq_per_gpu", as_number, "2.35", "the measured H100-eq per "
                           "GPU", above=0)
            if value is not None:
                out.append((ident, value))
        return tuple(out)

    def _without(self, t: Table, later, later_key: str, earlier_key: str, hint: str) -> bool:
        """Whether a later day (a retrofit done, a removal) is given without the earlier one it
        follows (its start, its drain), reported at the later key."""
        if later is None or earlier_key in t.data:
            return False
        self.report(t.at(later_key), self._shown(t.data[later_key]),
                    f"is given without {earlier_key}", hint)
        return True

    def _rows(self, root: Table) -> tuple:
        out = []
        known = [row.id for row in self.scenario.rows()]
        for ident, t in self._entries(root, "rows", known, "row",
                                      ("retrofit_started", "retrofit_done")):
            started = self._day(t, "retrofit_started", "the day the row's retrofit started")
            done = self._day(t, "retrofit_done", "the day the row's retrofit was done",
                             after=started, after_what="its start")
            if self._without(t, done, "retrofit_done", "retrofit_started",
                             "add the day it started"):
                continue
            out.append(RowStatus(ident, started, done))
        return tuple(out)

    # ---- units -------------------------------------------------------------------------
    def _units(self, root: Table, fields: dict) -> tuple:
        s = self.scenario
        existing = {u.id: u for u in s.existing}
        incoming = {u.id: u for u in s.incoming}
        out = []
        for ident, t in self._entries(root, "units", [*existing, *incoming], "unit",
                                      _UNIT_KEYS):
            wrong = [k for k in t.data
                     if k not in (_EXISTING_KEYS if ident in existing else _INCOMING_KEYS)]
            for key in wrong:
                kind = "an existing unit" if ident in existing else "a new unit"
                self.report(t.at(key), NO_VALUE, f"does not apply to {ident}, {kind}",
                            "existing units are drained and removed; new units are "
                            "installed, burned in, accepted and may fail")
            if wrong:
                continue
            if ident in existing:
                drained = self._day(t, "drained", "the day its drain started")
                removed = self._day(t, "removed", "the day its removal ended",
                                    after=drained, after_what="its drain")
                if self._without(t, removed, "removed", "drained",
                                 "add the day its drain started"):
                    continue
                out.append(UnitStatus(ident, drained=drained, removed=removed))
            else:
                unit = self._incoming(ident, t, dict(fields["arrived"]), dict(fields["ready"]))
                if unit is not None:
                    out.append(unit)
        return tuple(out)

    def _incoming(self, ident: str, t: Table, arrived: dict, ready: dict) -> UnitStatus | None:
        s = self.scenario
        shipment = next(sh.id for sh in s.shipments if ident in sh.units)
        kind = s.unit_type(next(u.type for u in s.incoming if u.id == ident))
        row = start = end = None
        if "installed" in t.data:
            inst = t.table("installed", ("row", "start", "end"), "where and when", default=None)
            if inst is None:
                return None
            row = inst.read("row", lambda r, key, value, spec: value, '"B1"',
                            "the row it was installed in")
            rows = [x.id for x in s.rows()]
            if row is not None and row not in rows:
                self.report(inst.at("row"), row, "no such row in the scenario",
                            did_you_mean(row, rows, "rows"))
                return None
            if row is not None and s.island_of(kind.id, row) is None:
                self.report(inst.at("row"), row, f"no island covers row {row}, and {ident}'s "
                            f"type {kind.id} names none: it would join no fabric",
                            f"add row {row} (or its hall) to an [[islands]] entry of the "
                            f"scenario, or give unit type {kind.id} an island")
                return None
            if shipment in self.unreadable:
                return None
            if shipment not in arrived:
                self.report(inst.at("start"), NO_VALUE, f"{ident} is installed, but its "
                            f"shipment {shipment} has not arrived", f"add [shipments."
                            f"{shipment}] arrived = <day>")
                return None
            start = self._day(inst, "start", "the day its install started",
                              after=arrived[shipment], after_what=f"{shipment}'s arrival")
            end = self._day(inst, "end", "the day its install ended", after=start,
                            after_what="its start")
        attempts = self._attempts(ident, t, kind, end, "installed" in t.data)
        if attempts is None:
            return None
        passed = attempts[-1].end if attempts and attempts[-1].passed else None
        accepted = failed_out = failed_back = None
        if "accepted" in t.data:
            if passed is None and kind.burn_in is not None:
                self.report(t.at("accepted"), self._shown(t.data["accepted"]),
                            f"{ident} is accepted, but no burn-in attempt of it passed",
                            "record its burn_in attempts, the last with passed = true")
                return None
            island = s.island_of(kind.id, row) if row is not None else kind.island
            island_ready = ready.get(island)
            needs_island = island is not None and \
                next(i for i in s.islands if i.id == island).delivery is not None
            if needs_island and island_ready is None:
                self.report(t.at("accepted"), self._shown(t.data["accepted"]),
                            f"{ident} is accepted, but its island {island}'s fabric is not "
                            "ready", f"add [islands.{island}] ready = <day>")
                return None
            after = max(x for x in (passed, end, island_ready) if x is not None) \
                if (passed, end, island_ready) != (None, None, None) else None
            accepted = self._day(t, "accepted", "the day it was accepted", after=after,
                                 after_what="its burn-in pass and its fabric")
        if "failed" in t.data:
            f = t.table("failed", ("out", "back"), "when it failed", default=None)
            if f is None or accepted is None:
                if f is not None:
                    self.report(t.at("failed"), NO_VALUE, f"{ident} failed after acceptance, "
                                "but it is not accepted", "add accepted = <day>")
                return None
            failed_out = self._day(f, "out", "the day it failed", after=accepted,
                                   after_what="its acceptance")
            failed_back = self._day(f, "back", "the day it was back from repair",
                                    after=failed_out, after_what="its failure")
        if (accepted is not None or attempts) and start is None:
            self.report(t.at("burn_in" if attempts else "accepted"), NO_VALUE,
                        f"{ident} has a burn-in or an acceptance, but no install",
                        "add installed = { row = ..., start = <day>, end = <day> }")
            return None
        return UnitStatus(ident, row=row, install_start=start, install_end=end,
                          attempts=attempts, accepted=accepted, failed_out=failed_out,
                          failed_back=failed_back)

    def _attempts(self, ident, t: Table, kind, install_end, installed) -> tuple | None:
        """The burn-in attempts of t in order, each after the previous one's repair; a
        failure the type's burn-in sends to RMA (after rma_after_failures in a row) agrees
        with an `rma` given. None (reported) where one is wrong."""
        entries = t.tables("burn_in", _ATTEMPT_KEYS, "[{ start = 122, end = 127, passed = "
                           "true }]", "its burn-in attempts so far", default=[])
        if entries is None:
            return None
        if entries and kind.burn_in is None:
            self.report(t.at("burn_in"), NO_VALUE, f"{ident}'s type {kind.id} has no burn-in",
                        "leave out burn_in")
            return None
        if entries and install_end is None:
            self.report(t.at("burn_in"), NO_VALUE, f"{ident} has burn-in attempts, but its "
                        "install has not ended", "add the install's end")
            return None
        attempts, earliest, in_row = [], install_end, 0
        for i, a in enumerate(entries):
            if a is None:
                return None
            last = i == len(entries) - 1
            start = self._day(a, "start", "the day the attempt started", default=None,
                              after=earliest, after_what="the end of the install or of the "
                              "previous attempt's repair")
            if start is None:
                if "start" not in a.data:
                    self.report(a.at("start"), NO_VALUE, "missing", "add start = <day>")
                return None
            end = self._day(a, "end", "the day the attempt ended", after=start,
                            after_what="its start")
            passed = a.data.get("passed")
            if end is None:
                if "passed" in a.data or "repair_end" in a.data or not last:
                    self.report(a.at("end"), NO_VALUE, "missing: only the last attempt can "
                                "still be running", "add end = <day> and passed")
                    return None
                attempts.append(Attempt(start))
                break
            if not isinstance(passed, bool):
                self.report(a.at("passed"), passed if "passed" in a.data else NO_VALUE,
                            "must be true or false for an attempt that ended",
                            "passed = true or passed = false")
                return None
            if passed:
                if not last:
                    self.report(f"{t.at('burn_in')}[{i + 1}]", NO_VALUE, "an attempt after "
                                "one that passed", "burn-in ends when an attempt passes")
                    return None
                attempts.append(Attempt(start, end, True))
                break
            in_row += 1
            rma = in_row >= kind.burn_in.rma_after_failures
            if "rma" in a.data and a.data["rma"] is not rma:
                rule = kind.burn_in.rma_after_failures
                self.report(a.at("rma"), a.data["rma"], f"disagrees with the scenario: "
                            f"{kind.id}'s burn-in sends a unit to RMA after {rule} failures in "
                            f"a row, and this is failure {in_row} in a row",
                            "leave out rma; the scenario's rule decides fix or RMA")
                return None
            repair = self._day(a, "repair_end", "the day its fix or RMA ended", after=end,
                               after_what="the attempt's end")
            if repair is None and not last:
                self.report(a.at("repair_end"), NO_VALUE, "missing: only the last failure's "
                            "repair can still be running", "add repair_end = <day>")
                return None
            attempts.append(Attempt(start, end, False, repair))
            earliest = repair
            in_row = 0 if rma else in_row
        return tuple(attempts)

    def _check_rows_against_units(self, fields: dict) -> None:
        """Facts about rows and units agree: a row's retrofit starts after its units were
        removed; a new unit is installed in a row that was ready (its hall energized, its
        retrofit done when it needed one), no more units in a row than it holds."""
        s = self.scenario
        removed = {u.id: u.removed for u in fields["units"]}
        energized = dict(fields["energized"])
        retrofits = {r.id: r for r in fields["rows"]}
        for row in s.rows():
            started = retrofits[row.id].retrofit_started if row.id in retrofits else None
            units = [u.id for u in s.existing if u.row == row.id]
            if started is not None:
                for unit in units:
                    if removed.get(unit) is None or removed[unit] > started:
                        self.report(f"rows.{row.id}.retrofit_started", started,
                                    f"row {row.id}'s retrofit started before {unit} was "
                                    "removed from it", f"record [units.{unit}] removed = <day> "
                                    "on or before the retrofit's start")
        by_row: dict[str, list[str]] = {}
        for unit in fields["units"]:
            if unit.row is None:
                continue
            row = next(r for r in s.rows() if r.id == unit.row)
            by_row.setdefault(row.id, []).append(unit.id)
            hall = next(h for h in s.halls if h.id == row.hall)
            if hall.energized is not None and (energized.get(hall.id) is None
                                               or energized[hall.id] > unit.install_start):
                self.report(f"units.{unit.id}.installed.start", unit.install_start,
                            f"{unit.id} was installed in hall {hall.id} before it was "
                            "energized", f"record [halls.{hall.id}] energized = <day> on or "
                            "before the install")
            kind = s.unit_type(next(u.type for u in s.incoming if u.id == unit.id))
            if kind.cooling != row.cooling:
                done = retrofits[row.id].retrofit_done if row.id in retrofits else None
                if done is None or done > unit.install_start:
                    self.report(f"units.{unit.id}.installed.row", row.id,
                                f"{unit.id} needs a {kind.cooling}-cooled row and row {row.id} "
                                "had not been retrofitted when it was installed",
                                f"record [rows.{row.id}] retrofit_done = <day> on or before "
                                "the install")
        for row_id, units in by_row.items():
            row = next(r for r in s.rows() if r.id == row_id)
            if len(units) > row.positions:
                self.report(f"units.{units[-1]}.installed.row", row_id,
                            f"row {row_id} holds {row.positions} new units, and the status "
                            f"installs {len(units)} there ({', '.join(units)})",
                            "check the rows of the installs")
