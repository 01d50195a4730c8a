"""The facility sections of a scenario: [scenario], [shared_delays], [[islands]],
[[unit_types]] (performance, ramp, burn-in), [[halls]] with their rows, and [retrofit]
([demand] is demand.py's); and the pieces every entry shares (id, description, an array of entries with unique ids). Each
records what it read on the reader, for the sections read after it to check against.
"""
from __future__ import annotations

import datetime as _dt
import math

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import (ZERO, BurnIn, Hall, Integration, Island, Ramp, Retrofit, Row,
                               UnitType)

from .distributions import DIST_EXAMPLE, as_date, as_distribution, largest_draw
from .failures import ATTRITION_KEYS, EARLY_FAILURE_KEYS, read_attrition, read_early_failures
from .limits import (DAYS, MAX_BURN_IN_ATTEMPTS, MAX_ENTRIES, MAX_GPUS, MAX_H100_EQ_PER_GPU,
                     MAX_HORIZON_DAYS, MAX_RAMP_STEPS, MAX_RMA_AFTER_FAILURES, MAX_UNITS,
                     TOTAL_KW, Limit)
from .reader import (REQUIRED, Spec, Table, as_choice, as_ids, as_integer, as_name, as_number,
                     as_probability, as_string, check_name, check_ref, check_unique,
                     count_text, count_ok, format_limit, format_number, type_name)

COOLINGS = ("air", "liquid")
NO_RETROFIT = Retrofit(crews=1, days=ZERO)  # stands in when the file has no [retrofit]; never used


_DESCRIPTION = ('"..."', "one line for people")


def read_description(t: Table) -> str:
    return t.read("description", _as_description, *_DESCRIPTION, default="")


def _as_description(r, key, value, spec: Spec):
    """One line of text for people: any printable characters and spaces, no control
    characters (a newline or an ESC would reach terminals, HTML and Markdown tables)."""
    text = as_string(r, key, value, spec, empty_ok=True)
    bad = next((c for c in text or "" if not c.isprintable() and not c.isspace()
                or c in "\t\n\r\v\f\x1c\x1d\x1e\x1f\x85\u2028\u2029"), None)
    if bad is not None:
        r.report(key, value, f"contains the control character {bad!r}",
                 "a description is one line of printable text")
        return None
    return text


def read_id(t: Table, example: str, why: str):
    """An entry's id: a name (printable, one line, short) without '..' (which id lists read as
    a range)."""
    ident = t.read("id", as_name, example, why)
    if ident is not None and ".." in ident:
        t.r.report(t.at("id"), ident, "must not contain '..', which marks a range in id lists",
                   f"for example id = {example}")
        return None
    return ident



def read_header(root: Table) -> dict:
    """[scenario]: name, description, horizon_days (> 0, the days metrics are taken over)."""
    t = root.table("scenario", ("name", "description", "horizon_days", "start_date",
                                "executing"), "with name and horizon_days")
    if t is None:
        return dict(name=None, description="", horizon_days=None)
    header = dict(
        name=t.read("name", as_name, '"reference-2048"', "how reports name this scenario"),
        description=read_description(t),
        horizon_days=t.read("horizon_days", as_number, "540",
                            "the days to evaluate metrics over", above=0, at_most=_HORIZON),
        start_date=t.read("start_date", _as_calendar_date, "2027-01-04",
                          "the calendar date of day 0 (outputs then show dates)",
                          default=None),
        executing=t.read("executing", as_name, '"hybrid-gated"',
                         "the strategy being executed (reports lead with it)", default=None))
    if not _dates_fit_the_calendar(t, header["start_date"], header["horizon_days"]):
        header["start_date"] = None
    return header


def _dates_fit_the_calendar(t: Table, start: _dt.date | None, horizon: float | None) -> bool:
    """Whether every day from day 0 to DAYS (100 years) after the horizon has a date in
    Python's calendar, which ends on 9999-12-31 (reports if not): the outputs date the
    horizon, and milestones and completions, which may fall after it (a date or a duration
    is at most DAYS). A later day is shown without a date; days before day 0 are never
    dated (an axis that reaches back past 0001-01-01 has no date ticks there)."""
    if start is None or horizon is None:
        return True
    reach = math.floor(horizon + DAYS.value)
    if (_dt.date.max - start).days >= reach:
        return True
    latest = _dt.date.max - _dt.timedelta(days=reach)
    written = t.data["start_date"]
    t.r.report(t.at("start_date"), written if isinstance(written, str) else
               _AsWritten(start.isoformat()),
               f"is too late to date the plan: the horizon (day {format_number(horizon)}) "
               f"and the {format_limit(DAYS.value)} days (100 years) after it, where milestones and "
               f"completions may fall, must end by {_dt.date.max.isoformat()}, the last day "
               "of the calendar", f"start on {latest.isoformat()} or earlier")
    return False


class _AsWritten(str):
    """A value shown in a problem as the file writes it (a TOML date unquoted)."""

    def __repr__(self) -> str:
        return str(self)


def _as_calendar_date(r, key, value, spec: Spec):
    """A calendar date: a TOML local date (2027-01-04) or an ISO string "2027-01-04";
    a date-time or anything else is reported."""
    if isinstance(value, _dt.datetime) or isinstance(value, _dt.time):
        r.report(key, value, "must be a date without a time of day",
                 f"for example {spec.name} = {spec.example}")
        return None
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            pass
    r.report(key, value, "must be an ISO date YYYY-MM-DD",
             f"for example {spec.name} = {spec.example}")
    return None


_HORIZON = Limit(MAX_HORIZON_DAYS, "20 years: capacity bands keep every day of the horizon "
                  "for every strategy")



def read_shared_delays(root: Table):
    """[shared_delays] name = distribution: drawn once per scenario, added to every date that
    names it in `shared`."""
    value = root.data.get("shared_delays", {})
    if not isinstance(value, dict):
        root.r.report("shared_delays", value, f"must be a table, not {type_name(value)}",
                      f"write [shared_delays] with lines like vendor = {DIST_EXAMPLE}")
        root.r.shared_delays = None
        return None
    if not count_ok(root.r, "shared_delays", len(value), MAX_ENTRIES, "shared delays"):
        root.r.shared_delays = None
        return None
    delays = {name: as_distribution(root.r, f"shared_delays.{name}", dist,
                                     Spec(name, DIST_EXAMPLE, "a delay in days"))
              for name, dist in value.items()
              if check_name(root.r, f"shared_delays.{name}", name)}
    root.r.shared_delays = delays if len(delays) == len(value) else None
    return tuple(delays.items())


def read_entries(root: Table, name: str, allowed, read_entry, what: str, why: str,
                  default=REQUIRED):
    """An array of tables with unique ids: read_entry(table) -> an object with `.id`.

    Returns (objects, registry by id); the registry is None unless every entry and id was read.
    """
    tables = root.tables(name, allowed, "", why, default=default)
    if tables is None:
        return None, None
    objects, seen, registry = [], {}, {}
    for t in filter(None, tables):
        objects.append(read_entry(t))
        if check_unique(root.r, seen, objects[-1].id, t.at("id"), what):
            registry[objects[-1].id] = objects[-1]
    complete = None not in tables and all(obj.id is not None for obj in objects)
    return tuple(objects), (registry if complete else None)


def read_islands(root: Table):
    islands, root.r.islands = read_entries(
        root, "islands", ("id", "description", "delivery", "install_days", "halls", "rows"),
        _read_island,
        "island id", "one per fabric island, each a job pool")
    return islands


def _read_island(t: Table) -> Island:
    """An island is ready at day 0, or at its delivery plus install_days. Its halls and rows
    (positions, checked once the halls are read: positions.py) are ids as written."""
    island_id = read_id(t, '"xdr"', "the name unit types give in island")
    description = read_description(t)
    delivery = t.read("delivery", as_date, "{ day = 90 }", "when the fabric arrives",
                      default=None)
    install = t.read("install_days", as_distribution, "14", "days to install after delivery",
                     default=ZERO)
    if "install_days" in t.data and "delivery" not in t.data:
        t.r.report(t.at("install_days"), t.data["install_days"],
                   "install_days without delivery: an island without delivery is ready at day 0",
                   "add delivery = { day = ... } or remove install_days")
    halls = t.read("halls", as_ids, '["B"]', "the halls whose units join the island, "
                   "whatever their type", default=())
    rows = t.read("rows", as_ids, '["A5..A8"]', "the rows whose units join the island, "
                  "whatever their type", default=())
    return Island(island_id, delivery, install, description, halls, rows)


_UNIT_TYPE_KEYS = ("id", "description", "gpus", "h100_eq_per_gpu", "power_kw", "cooling",
                   "island", "install_days", "drain_days", "removal_days", "burn_in", "ramp",
                   "attrition", "early_failures")
_RAMP_KEYS = ("start_fraction", "days", "steps")
_BURN_IN_KEYS = ("attempt_days", "fail_first", "fail_retry", "fix_days", "rma_after_failures",
                 "rma_days")


def read_unit_types(root: Table):
    types, root.r.unit_types = read_entries(root, "unit_types", _UNIT_TYPE_KEYS,
                                             _read_unit_type, "unit type id",
                                             "one per kind of unit")
    return types


def _read_unit_type(t: Table) -> UnitType:
    """What a unit is (GPUs, H100-eq, kW, cooling, island) and how long work on it takes."""
    fields = dict(
        id=read_id(t, '"gb300-nvl72"', "the name fleets give in type"),
        description=read_description(t),
        gpus=t.read("gpus", as_integer, "72", "GPUs per unit", at_least=1, at_most=_GPUS),
        h100_eq_per_gpu=(performance := _read_performance(t))[0],
        power_kw=t.read("power_kw", as_number, "135", "the power one unit draws, in kW",
                        at_least=0, at_most=TOTAL_KW),
        cooling=t.read("cooling", as_choice, '"liquid"', "what the unit needs from its row",
                       options=COOLINGS),
        island=t.read("island", as_string, '"xdr"', "the fabric island the unit joins where "
                      "no positional island covers its row", default=None))
    if fields["island"] is not None:
        check_ref(t.r, t.at("island"), fields["island"], t.r.islands, "island")
    for name, why in (("install_days", "days to install a new unit"),
                      ("drain_days", "days from drain start to removal start"),
                      ("removal_days", "days to remove a drained unit")):
        fields[name] = t.read(name, as_distribution, "2", why, default=ZERO)
    fields["performance"] = performance[1]
    burn_in = t.table("burn_in", _BURN_IN_KEYS, "", default=None)
    ramp = t.table("ramp", _RAMP_KEYS, "", default=None)
    fields["attrition"] = read_attrition(t.table("attrition", ATTRITION_KEYS, "", default=None))
    fields["early_failures"] = read_early_failures(
        t.table("early_failures", EARLY_FAILURE_KEYS, "", default=None))
    return UnitType(burn_in=burn_in and _read_burn_in(burn_in), ramp=ramp and _read_ramp(ramp),
                    **fields)


_GPUS = Limit(MAX_GPUS, "a unit is a rack, a pod or a scalable unit; no cluster has more GPUs")
_PERFORMANCE = Limit(MAX_H100_EQ_PER_GPU, "H100-eq per GPU: far beyond any roadmap; it keeps "
                      "capacities exact in the bands")


def _read_performance(t: Table):
    """h100_eq_per_gpu: a number, or a distribution drawn once per scenario for the type.

    Returns (nominal value, the distribution or None); nominal is the median.
    """
    value = t.data.get("h100_eq_per_gpu")
    if not isinstance(value, dict):
        return t.read("h100_eq_per_gpu", as_number, "2.5",
                      "performance of one GPU relative to one H100", above=0,
                      at_most=_PERFORMANCE), None
    dist = t.read("h100_eq_per_gpu", as_distribution, '{ dist = "triangular", min = 2.0, '
                  'mode = 2.5, max = 2.6 }', "performance of one GPU relative to one H100",
                  limit=_PERFORMANCE)
    if dist is None:
        return None, None
    if dist.kind == "chance":
        t.r.report(t.at("h100_eq_per_gpu.dist"), "chance",
                   "performance cannot be a chance (it would be 0 otherwise)",
                   "use triangular, pert, uniform or lognormal")
        return None, None
    from mcrisk.core.distributions import median
    nominal = median(dist)
    if not nominal > 0:
        t.r.report(t.at("h100_eq_per_gpu"), value, "must have a median above 0",
                   "performance relative to one H100 is a positive number")
        return None, None
    # only a lognormal can pass here: the other distributions' parameters are within the limit
    if largest_draw(dist) > MAX_H100_EQ_PER_GPU:
        t.r.report(t.at("h100_eq_per_gpu.p90"), dist.params[1],
                   f"lets a draw reach {largest_draw(dist):,.4g} H100-eq per GPU, more than "
                   f"{MAX_H100_EQ_PER_GPU:,}", "the generator reaches 8.2 sigma; narrow the "
                   "lognormal, its p90 closer to the median, or use pert or triangular")
        return None, None
    return nominal, dist



def _read_ramp(t: Table) -> Ramp | None:
    """[unit_types.ramp]: start_fraction of capacity at acceptance, all of it after days."""
    start = t.read("start_fraction", as_probability, "0.7",
                   "the fraction of capacity a unit delivers when accepted")
    days = t.read("days", as_number, "90", "days from acceptance to full capacity", above=0,
                  at_most=DAYS)
    steps = t.read("steps", as_integer, "4", "steps the ramp is taken in", default=4,
                   at_least=1, at_most=_RAMP_STEPS)
    return None if None in (start, days, steps) else Ramp(start, days, steps)


_RAMP_STEPS = Limit(MAX_RAMP_STEPS, "100 steps are within 1% of a linear ramp, and every step "
                     "is a capacity event of every unit in every scenario")
_RMA_AFTER = Limit(MAX_RMA_AFTER_FAILURES, "a rack is replaced after a handful of failed "
                    "attempts, and every attempt is drawn in every scenario")


def _read_burn_in(t: Table) -> BurnIn:
    """Attempts until one passes; after `rma_after_failures` failures in a row, an RMA."""
    burn_in = BurnIn(
        attempt_days=t.read("attempt_days", as_distribution, DIST_EXAMPLE,
                            "days one attempt takes"),
        fail_first=t.read("fail_first", as_probability, "0.3",
                          "the failure probability of a unit's first attempt"),
        fail_retry=t.read("fail_retry", as_probability, "0.1",
                          "the failure probability of every later attempt"),
        fix_days=t.read("fix_days", as_distribution, DIST_EXAMPLE,
                        "days to fix a unit after a failed attempt"),
        rma_after_failures=t.read("rma_after_failures", as_integer, "3",
                                  "failures in a row after which the unit is replaced",
                                  at_least=1, at_most=_RMA_AFTER),
        rma_days=t.read("rma_days", as_distribution, DIST_EXAMPLE,
                        "days to replace a unit (RMA)"))
    if _check_burn_in_ends(t, burn_in):
        _check_burn_in_attempts(t, burn_in)
    return burn_in


def _check_burn_in_ends(t: Table, b: BurnIn) -> bool:
    """Burn-in ends with probability 1 unless a whole round (first attempt, then retries until
    the RMA) fails surely: fail_first = 1 and (no retries, or fail_retry = 1). Whether it can
    end (reports if not)."""
    if None in (b.fail_first, b.fail_retry, b.rma_after_failures) or b.fail_first < 1:
        return True
    if b.rma_after_failures == 1:
        t.r.report(t.at("fail_first"), b.fail_first,
                   "must be < 1 when rma_after_failures = 1: burn-in would never end",
                   "every first attempt fails, and every RMA restarts with a first attempt")
    elif b.fail_retry == 1:
        t.r.report(t.at("fail_retry"), b.fail_retry,
                   "must be < 1 when fail_first = 1: burn-in would never end",
                   "every attempt fails; lower fail_retry or fail_first")
    else:
        return True
    return False


def _check_burn_in_attempts(t: Table, b: BurnIn) -> None:
    """A unit's expected number of attempts stays within MAX_BURN_IN_ATTEMPTS: burn-in that
    fails almost surely ends in theory but not in a run's time (every attempt is drawn)."""
    if None in (b.fail_first, b.fail_retry, b.rma_after_failures):
        return
    expected = expected_burn_in_attempts(b.fail_first, b.fail_retry, b.rma_after_failures)
    if expected > MAX_BURN_IN_ATTEMPTS:
        t.r.report(t.key, NO_VALUE, f"a unit needs {expected:,.0f} attempts on average "
                   f"(fail_first = {format_number(b.fail_first)}, fail_retry = {format_number(b.fail_retry)}, "
                   f"rma_after_failures = {b.rma_after_failures}), more than "
                   f"{MAX_BURN_IN_ATTEMPTS:,}", "lower fail_first or fail_retry: every attempt "
                   "is drawn in every scenario")


def expected_burn_in_attempts(fail_first: float, fail_retry: float, rma_after: int) -> float:
    """Mean attempts until a unit passes burn-in (inf if it never can).

    A round is a first attempt and up to rma_after - 1 retries; it fails (and restarts after an
    RMA) with probability fail_first * fail_retry**(rma_after - 1)."""
    per_round = 1 + fail_first * sum(fail_retry ** j for j in range(rma_after - 1))
    round_fails = fail_first * fail_retry ** (rma_after - 1)
    return math.inf if round_fails >= 1 else per_round / (1 - round_fails)


def read_halls(root: Table):
    seen_rows: dict[str, str] = {}
    halls, registry = read_entries(
        root, "halls", ("id", "description", "power_cap_kw", "energized", "rows",
                        "install_teams", "burn_in_bays"),
        lambda t: _read_hall(t, seen_rows), "hall id", "one per data hall")
    rows = [row for hall in halls or () for row in hall.rows or ()]
    complete = registry is not None and all(hall.rows is not None for hall in halls) \
        and all(row.id is not None for row in rows)
    complete = count_ok(root.r, "halls", len(rows), MAX_ENTRIES, "rows in all halls") \
        and complete
    rows_by_id: dict[str, Row] = {}
    for row in rows:                   # in file order; a duplicate id keeps its first row
        rows_by_id.setdefault(row.id, row)
    root.r.rows = rows_by_id if complete else None
    root.r.halls = registry
    return halls


def _read_hall(t: Table, seen_rows: dict[str, str]) -> Hall:
    """A hall: IT power cap (kW), when it is energized (day 0 if absent), and its rows."""
    hall_id = read_id(t, '"A"', "the hall's name")
    description = read_description(t)
    power_cap_kw = t.read("power_cap_kw", as_number, "3000", "the hall's IT power cap in kW",
                          above=0, at_most=TOTAL_KW)
    energized = t.read("energized", as_date, "{ day = 120 }", "when the hall has power",
                       default=None)
    tables = t.tables("rows", ("id", "cooling", "positions"),
                      '[{ id = "A1", cooling = "air", positions = 2 }]', "the hall's rows")
    rows = tuple(_read_row(row, hall_id, seen_rows) for row in filter(None, tables or ()))
    complete = tables is not None and None not in tables
    teams, bays = read_integration_keys(t, "the hall's own")
    return Hall(hall_id, power_cap_kw, rows if complete else None, energized, description,
                teams, bays)


INTEGRATION_KEYS = ("install_teams", "burn_in_bays")
_INTEGRATION_LIMIT = Limit(MAX_UNITS, "no scenario has more units")


def read_integration_keys(t: Table, whose: str) -> tuple[int | None, int | None]:
    """`install_teams` and `burn_in_bays` of a table: integers >= 1, None when absent
    (unlimited, or the next level's)."""
    return (t.read("install_teams", as_integer, "2", f"{whose} install teams: units installed "
                   "at the same time", default=None, at_least=1, at_most=_INTEGRATION_LIMIT),
            t.read("burn_in_bays", as_integer, "4", f"{whose} burn-in bays: units in burn-in at "
                   "the same time", default=None, at_least=1, at_most=_INTEGRATION_LIMIT))


def read_integration(root: Table) -> Integration:
    """[integration]: the site's install teams and burn-in bays (each unlimited when absent),
    shared by the units of every hall without its own."""
    t = root.table("integration", INTEGRATION_KEYS, "", default=None)
    if t is None:
        return Integration()
    return Integration(*read_integration_keys(t, "the site's"))


def _read_row(t: Table, hall_id, seen_rows: dict[str, str]) -> Row:
    row_id = read_id(t, '"A1"', "the name fleets and strategies give in row")
    check_unique(t.r, seen_rows, row_id, t.at("id"), "row id")
    return Row(
        id=row_id, hall=hall_id,
        cooling=t.read("cooling", as_choice, '"air"', "the cooling the row has now",
                       options=COOLINGS),
        positions=t.read("positions", as_integer, "2",
                         "how many new units the row holds once empty", at_least=0,
                         at_most=Limit(MAX_UNITS, "no scenario has more units")))


def read_retrofit(root: Table) -> Retrofit:
    """[retrofit]: crews (default 1) and days per row; NO_RETROFIT when absent."""
    root.r.has_retrofit = "retrofit" in root.data
    t = root.table("retrofit", ("crews", "days"), "", default=None)
    if t is None:
        return NO_RETROFIT
    rows = MAX_ENTRIES if root.r.rows is None else max(1, len(root.r.rows))
    crews = Limit(rows, f"one crew per row, {count_text(rows, 'row')}: more crews than rows never "
                   "work at once")
    return Retrofit(
        crews=t.read("crews", as_integer, "1", "rows retrofitted at the same time", default=1,
                     at_least=1, at_most=crews),
        days=t.read("days", as_distribution, DIST_EXAMPLE, "days to retrofit one empty row"))
