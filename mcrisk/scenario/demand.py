"""[demand]: the demand curve the capacity is measured against, as fixed points or a forecast,
and optionally the job mix (docs/scenario-format.md, [demand]).

Read after [scenario], whose horizon bounds two things here: the packing cells of a job mix,
and how far a forecast's demand can grow. The horizon is taken from the file as written and
checked only where [scenario] would accept it (a bad horizon is [scenario]'s problem to
report, once).
"""
from __future__ import annotations

import math
import re

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import Demand, Forecast, JobClass

from .distributions import DIST_EXAMPLE, as_distribution, largest_draw
from .limits import DAYS, MAX_ENTRIES, MAX_HORIZON_DAYS, TOTAL_H100_EQ, Limit
from .reader import (Spec, Table, as_name, as_number, as_string, check_unique, count_ok,
                     format_limit, format_number, type_name)


_DEMAND_KEYS = ("points", "forecast", "largest_job", "jobs", "packing_step_days")


def read_demand(root: Table) -> Demand | None:
    """[demand]: largest_job (H100-eq in one island), either points [[day, H100-eq], ...]
    or a forecast (mcrisk/core/model.py's Forecast), not both, and optionally a job mix
    ([[demand.jobs]], with packing_step_days)."""
    t = root.table("demand", _DEMAND_KEYS, "with points (or forecast) and largest_job")
    if t is None:
        return None
    jobs = _read_jobs(t)
    step = t.read("packing_step_days", as_number, "1", "the width of the cells the "
                  "unservable demand is taken on (their midpoints)", above=0, at_most=DAYS,
                  default=1.0)
    largest_job = _read_largest_job(t, jobs)
    if jobs is None or step is None or jobs and not _packing_cells_ok(root, t, step):
        return None
    mix = dict(jobs=jobs, packing_step_days=step)
    if "forecast" in t.data:
        if "points" in t.data:
            t.r.report(t.at("points"), t.data["points"], "given with demand.forecast",
                       "give either points (a fixed curve) or forecast, not both")
            return None
        forecast = _read_forecast(t.table("forecast", _FORECAST_KEYS, ""))
        if forecast is None or not _grown_demand_ok(root, t.at("forecast"), forecast):
            return None
        return Demand((), largest_job, forecast, **mix)
    points = t.read("points", _as_points, "[[0, 2048], [150, 2048]]",
                    "[day, H100-eq] pairs, days increasing (or give forecast = { ... })")
    return Demand(points, largest_job, **mix)


MAX_PACKING_CELLS = 100_000


def horizon_as_written(root: Table) -> float | None:
    """scenario.horizon_days as the file gives it, where [scenario] accepts it; None where
    it does not (a horizon that is not a valid number is reported by [scenario], not again
    by what the horizon bounds)."""
    header = root.data.get("scenario")
    horizon = header.get("horizon_days") if isinstance(header, dict) else None
    if not isinstance(horizon, (int, float)) or isinstance(horizon, bool) \
            or not 0 < horizon <= MAX_HORIZON_DAYS:
        return None
    return float(horizon)


def _packing_cells_ok(root: Table, t: Table, step: float) -> bool:
    """Whether packing_step_days cuts the horizon into at most MAX_PACKING_CELLS cells
    (reports if not): every cell packs every class into every island, for every scenario
    and strategy."""
    horizon = horizon_as_written(root)
    if horizon is None:
        return True
    cells = math.ceil(horizon / step)
    if cells <= MAX_PACKING_CELLS:
        return True
    t.r.report(t.at("packing_step_days"), step, f"cuts the {format_number(horizon)}-day horizon into "
               f"{cells:,} cells, more than {MAX_PACKING_CELLS:,}",
               f"use at least {format_number(horizon / MAX_PACKING_CELLS)} days: every cell packs the "
               "job mix for every scenario and strategy")
    return False


def _read_largest_job(t: Table, jobs: tuple[JobClass, ...] | None) -> float | None:
    """demand.largest_job: required without a job mix; with one, it may be omitted (then the
    largest class size) and, given, must equal the largest class size. jobs None: the mix
    was reported, so a missing largest_job is not."""
    if jobs is None and "largest_job" not in t.data:
        return None
    jobs = jobs or ()
    largest = max((job.size for job in jobs if job.size is not None), default=None)
    if jobs and "largest_job" not in t.data:
        return largest
    value = t.read("largest_job", as_number, "1024",
                   "the H100-eq the largest job needs in one island", at_least=0,
                   at_most=TOTAL_H100_EQ)
    if jobs and value is not None and largest is not None and value != largest:
        t.r.report(t.at("largest_job"), value, f"differs from the largest job class's size "
                   f"({format_number(largest)})", f"set largest_job = {format_number(largest)} or leave it "
                   "out: with [[demand.jobs]] it is the largest size")
        return None
    return value


_JOB_KEYS = ("id", "size", "share")
_JOB_ID = re.compile(r"[A-Za-z0-9_-]+")
_SHARE_SUM_TOLERANCE = 1e-9
_SHARE = Limit(1.0, "a share is the fraction of demand the class makes up")


def _read_jobs(t: Table) -> tuple[JobClass, ...] | None:
    """[[demand.jobs]]: the job mix, at least one class with a unique id, a size (H100-eq on
    one island, > 0) and a share of demand (> 0, the shares summing to 1); () when absent,
    None when something was reported."""
    tables = t.tables("jobs", _JOB_KEYS, '[{ id = "frontier", size = 1024, share = 1 }]',
                      "the job mix", default=())
    if tables is None or tables == ():
        return tables
    if not tables:
        t.r.report(t.at("jobs"), [], "is empty: a job mix has at least one class",
                   'add [[demand.jobs]] with id = "frontier", size = 1024, share = 1, or '
                   "remove jobs")
        return None
    seen: dict[str, str] = {}
    jobs = []
    for job in filter(None, tables):
        jobs.append(_read_job(job))
        check_unique(t.r, seen, jobs[-1].id, job.at("id"), "job class id")
    if None in tables or any(None in (j.id, j.size, j.share) for j in jobs) \
            or len(seen) != len(jobs):
        return None
    total = math.fsum(j.share for j in jobs)
    if abs(total - 1.0) > _SHARE_SUM_TOLERANCE:
        t.r.report(t.at("jobs"), NO_VALUE, f"shares sum to {total:.12g}, not 1",
                   "give each class its share of demand, the shares adding up to 1")
        return None
    return tuple(jobs)


def _read_job(t: Table) -> JobClass:
    """One job class: id ([A-Za-z0-9_-], names a homeless_days.<id> column), size, share."""
    ident = t.read("id", as_name, '"frontier"', "names the class's homeless_days column")
    if ident is not None and not _JOB_ID.fullmatch(ident):
        t.r.report(t.at("id"), ident, "must be letters, digits, '_' or '-'",
                   'for example id = "frontier" (it names a column, homeless_days.<id>)')
        ident = None
    size = t.read("size", as_number, "1024", "the H100-eq one job needs on one island",
                  above=0, at_most=TOTAL_H100_EQ)
    share = t.read("share", as_number, "0.5", "the class's share of demand", above=0,
                   at_most=_SHARE)
    return JobClass(ident, size, share)


_FORECAST_KEYS = ("workload_at_day0", "unit", "per_h100", "growth_per_year",
                  "points_every_days")
_GROWTH = Limit(10.0, "a growth of 1000% a year is beyond any forecast")


def _read_forecast(t: Table | None) -> Forecast | None:
    """demand.forecast: the workload at day 0 in the planner's unit, what one H100 delivers
    of it (per_h100, default 1: the workload is in H100-eq), the yearly growth rate (a number
    or a distribution, >= 0), and the spacing of the points the curve is sampled at."""
    if t is None:
        return None
    workload = t.read("workload_at_day0", as_number, "2048",
                      "the workload at day 0, in `unit`", at_least=0, at_most=_WORKLOAD)
    unit = t.read("unit", as_string, '"H100-eq"', "the workload's unit", default="H100-eq")
    per_h100 = t.read("per_h100", as_number, "1", "the workload one H100 delivers at its "
                      "operating point, in `unit`", above=0, at_most=_WORKLOAD, default=1.0)
    growth = _largest_within(t, "growth_per_year", t.read(
        "growth_per_year", as_distribution, DIST_EXAMPLE.replace(
            "2, mode = 4, max = 10", "0.2, mode = 0.4, max = 0.8"),
        "the yearly growth rate (0.4: +40% a year)", limit=_GROWTH), _GROWTH)
    every = t.read("points_every_days", as_number, "30", "the days between the points the "
                   "curve is sampled at", at_least=1, at_most=DAYS, default=30.0)
    parts = (workload, unit, per_h100, growth, every)
    if None in parts:
        return None
    if workload / per_h100 > TOTAL_H100_EQ.value:
        t.r.report(t.at("workload_at_day0"), workload, f"is {format_number(workload / per_h100)} "
                   f"H100-eq at day 0 (workload / per_h100), more than "
                   f"{format_number(TOTAL_H100_EQ.value)}", TOTAL_H100_EQ.why)
        return None
    return Forecast(*parts)


_WORKLOAD = Limit(1e15, "a workload is a finite number in the planner's unit")


def _largest_within(t: Table, name: str, dist, limit: Limit):
    """`dist` if its largest draw is within `limit`, else None (reported): its parameters
    are, but a lognormal's far tail (the generator reaches 8.2 sigma) is not."""
    if dist is None or largest_draw(dist) <= limit.value:
        return dist
    # only a lognormal (or a chance of one) gets here: other parameters are within the limit
    at, shown = (f"{name}.p90", dist.params[1]) if dist.kind == "lognormal" \
        else (f"{name}.then.p90", dist.inner.params[1])
    t.r.report(t.at(at), shown, f"lets a draw reach {largest_draw(dist):,.4g}, more than "
               f"{format_number(limit.value)}", f"{limit.why}, and the generator reaches 8.2 "
               "sigma: narrow the lognormal, its p90 closer to the median, or use pert or "
               "triangular")
    return None


def _grown_demand_ok(root: Table, key: str, forecast: Forecast) -> bool:
    """Whether the forecast's demand at the horizon, where it is largest, stays within the
    limit of demand points (reports if not): workload_at_day0 / per_h100 x (1 + g)^(H /
    365) at the growth's largest draw g. A bad horizon is [scenario]'s to report."""
    horizon = horizon_as_written(root)
    base = forecast.workload_at_day0 / forecast.per_h100
    if horizon is None or base == 0:
        return True
    growth = largest_draw(forecast.growth_per_year)
    grown = base * (1.0 + growth) ** (horizon / 365.0)     # <= 1e9 x 11^20: finite
    if grown <= TOTAL_H100_EQ.value:
        return True
    which = "its" if forecast.growth_per_year.is_fixed else "the largest value of its"
    root.r.report(f"{key}.growth_per_year", root.data["demand"]["forecast"]["growth_per_year"],
                  f"lets demand grow to {grown:,.4g} H100-eq by the horizon (day "
                  f"{format_limit(horizon)}): {base:,.4g} H100-eq at day 0 x (1 + "
                  f"{growth:.4g})^({format_number(horizon)} / 365) at {which} growth, more than "
                  f"{format_limit(TOTAL_H100_EQ.value)}", "lower the growth or "
                  "workload_at_day0, or shorten the horizon; demand points have the same "
                  f"limit: {TOTAL_H100_EQ.why}")
    return False


def _as_points(r, key, value, spec: Spec):
    """Demand points: [[day, H100-eq], ...], days >= 0 strictly increasing, values >= 0."""
    if not isinstance(value, list) or not value:
        what = "an empty array" if value == [] else type_name(value)
        r.report(key, value, f"must be an array of [day, H100-eq] pairs, not {what}",
                 spec.type_hint)
        return None
    if not count_ok(r, key, len(value), MAX_ENTRIES, "points", "every scenario walks the "
                     "demand curve: a point a day for 20 years is 7,300; drop points on "
                     "straight stretches"):
        return None
    points, previous = [], None
    for i, pair in enumerate(value):
        points.append(_as_point(r, f"{key}[{i}]", pair, previous))
        previous = points[-1][0] if points[-1] else previous
    return None if None in points else tuple(points)


def _as_point(r, key, pair, previous: float | None):
    if not isinstance(pair, list) or len(pair) != 2:
        r.report(key, pair, "must be a [day, H100-eq] pair", "for example [150, 2048]")
        return None
    day = as_number(r, f"{key}[0]", pair[0], Spec("day", "150", "days from day 0"),
                     at_least=0, at_most=DAYS)
    demand = as_number(r, f"{key}[1]", pair[1], Spec("demand", "2048", "H100-eq"),
                        at_least=0, at_most=TOTAL_H100_EQ)
    if day is not None and previous is not None and day <= previous:
        r.report(f"{key}[0]", pair[0], f"must be > the previous point's day ({format_number(previous)})",
                 "list points with days strictly increasing")
        return None
    return None if day is None or demand is None else (day, demand)

