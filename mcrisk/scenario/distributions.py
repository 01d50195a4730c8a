"""Distributions and dates as a scenario writes them: a bare number of days or a table with
`dist` (fixed, uniform, triangular, pert, lognormal, chance), each parameter checked against
its bounds and the others (min <= mode <= max, ...); a lognormal's optional `min` / `max`
(a truncation to [min, max]: Distribution.bounds); a date { day, delay, shared }; and the
smallest and largest values the random stream can draw from a distribution.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from mcrisk.core.errors import NO_VALUE
from mcrisk.core.model import DISTRIBUTION_KINDS, ZERO, DateSpec, Distribution

from .limits import DAYS, MAX_LOGNORMAL_SPREAD, MAX_PERT_LAMBDA, Limit
from .reader import (Spec, Table, as_ids, as_number, as_probability, as_table,
                     check_ref, format_number, is_number, type_name, did_you_mean)


_DIST_PARAMS = {
    "fixed": ("value", "min", "max"),      # min, max: refused with a hint (_refuse_bounds)
    "uniform": ("min", "max"),
    "triangular": ("min", "mode", "max"),
    "pert": ("min", "mode", "max", "lambda"),
    "lognormal": ("median", "p90", "min", "max"),
    "chance": ("p", "then", "min", "max"),
}
_PARAM_SPECS = {                       # example, meaning
    "value": ("5", "a duration in days"),
    "min": ("2", "the shortest duration in days"),
    "mode": ("4", "the most likely duration in days"),
    "max": ("10", "the longest duration in days"),
    "lambda": ("4", "the weight of the mode; 4 is classic PERT"),
    "median": ("14", "the median duration in days"),
    "p90": ("45", "the 90th percentile in days"),
    "p": ("0.35", "the probability that the duration is drawn, else it is 0"),
}
DIST_EXAMPLE = '{ dist = "triangular", min = 2, mode = 4, max = 10 }'


@dataclass(frozen=True)
class Measure:
    """What a distribution is of, for its bounds and hints: the largest parameter, the hints
    of each parameter and how a bare number is described ("a number of days")."""

    limit: Limit
    specs: dict        # parameter -> (example, meaning); "then": a chance's inner meaning
    bare: str


_DAYS_MEASURE = Measure(DAYS, _PARAM_SPECS, "a number of days")


def as_distribution(r, key, value, spec: Spec, inner: bool = False, limit: Limit = DAYS,
                     measure: Measure | None = None):
    """A Distribution of days: a bare number (fixed) or a table with `dist`; None if bad.

    Every parameter but lambda and p is at most `limit` (DAYS unless the distribution is of
    something else, such as performance). `measure` replaces limit and the hints for a
    distribution of something other than days (a price: mcrisk/scenario/costs.py)."""
    measure = measure or Measure(limit, _PARAM_SPECS, _DAYS_MEASURE.bare)
    if is_number(value):
        number = as_number(r, key, value, spec, at_least=0, at_most=measure.limit)
        return None if number is None else Distribution.fixed(number)
    if not isinstance(value, dict):
        r.report(key, value, f"must be {measure.bare} or a distribution table, not "
                             f"{type_name(value)}", f"for example {spec.name} = {DIST_EXAMPLE}")
        return None
    kind = _dist_kind(r, key, value, inner)
    if kind is None:
        return None
    t = Table(r, key, value, ("dist",) + _DIST_PARAMS[kind])
    return _DIST_READERS[kind](t, measure)


def _dist_kind(r, key, table: dict, inner: bool) -> str | None:
    kinds = ", ".join(DISTRIBUTION_KINDS)
    kind = table.get("dist", NO_VALUE)
    if kind is NO_VALUE:
        r.report(f"{key}.dist", NO_VALUE, "missing", f'add dist = "...", one of {kinds}')
    elif not isinstance(kind, str) or kind not in DISTRIBUTION_KINDS:
        r.report(f"{key}.dist", kind, "unknown distribution",
                 did_you_mean(kind, DISTRIBUTION_KINDS, "known distributions", compact=False))
    elif inner and kind == "chance":
        r.report(f"{key}.dist", kind, "a chance cannot draw from another chance",
                 "multiply the two probabilities into one chance")
    else:
        return kind
    return None


def _param(t: Table, name: str, measure: Measure, **bounds):
    """A distribution parameter in days (or lambda), in [0, measure.limit] unless bounds say
    otherwise."""
    example, why = measure.specs.get(name, _PARAM_SPECS[name])
    return t.read(name, as_number, example, why,
                  **({"at_least": 0, "at_most": measure.limit} | bounds))


def _compare(t: Table, name: str, value, relation: str, other_name: str, other,
             hint: str) -> bool:
    """Whether `value relation other` holds (True when either failed to read); reports on
    `name` if it does not."""
    if value is None or other is None:
        return True
    holds = {">": value > other, ">=": value >= other, "<=": value <= other}[relation]
    if not holds:
        t.r.report(t.at(name), value, f"must be {relation} {other_name} ({format_number(other)})", hint)
    return holds


_ORDER_HINT = "min <= mode <= max, with min < max"
_CERTAIN_HINT = "for a certain duration write the number alone"


def _refuse_bounds(t: Table, kind: str, hint: str) -> bool:
    """Whether `min` / `max` are absent from a fixed or chance table (reports each if not)."""
    clean = True
    for name in ("min", "max"):
        if name in t.data:
            t.r.report(t.at(name), t.data[name], f"a {kind} distribution cannot be bounded",
                       hint)
            clean = False
    return clean


def _read_fixed(t: Table, measure: Measure):
    value = _param(t, "value", measure)
    clean = _refuse_bounds(t, "fixed", "a fixed value is its own bound: remove min and max")
    return None if value is None or not clean else Distribution.fixed(value)


def _read_uniform(t: Table, measure: Measure):
    low, high = _param(t, "min", measure), _param(t, "max", measure)
    ordered = _compare(t, "max", high, ">", "min", low,
                       _CERTAIN_HINT if low == high else "min < max")
    return Distribution("uniform", (low, high)) if ordered and None not in (low, high) else None


_LAMBDA = Measure(Limit(MAX_PERT_LAMBDA, "beyond it a PERT is its mode to within 0.1%: write "
                          "the mode alone; far beyond, its quantiles cannot be computed"),
                   _PARAM_SPECS, "")


def _read_triangular(t: Table, measure: Measure, kind: str = "triangular"):
    """triangular (min, mode, max) or pert (min, mode, max, lambda = 4).

    A degenerate one (min == max) is refused: a fixed number says the same more plainly.
    """
    low, mode, high = (_param(t, name, measure) for name in ("min", "mode", "max"))
    params = [low, mode, high]
    if kind == "pert":
        params.append(_param(t, "lambda", _LAMBDA, default=4.0, at_least=None, above=0))
    ordered = all([
        _compare(t, "max", high, ">", "min", low, _CERTAIN_HINT if low == high else _ORDER_HINT),
        _compare(t, "mode", mode, ">=", "min", low, _ORDER_HINT),
        _compare(t, "mode", mode, "<=", "max", high, _ORDER_HINT)])
    return Distribution(kind, tuple(params)) if ordered and None not in params else None


def _read_lognormal(t: Table, measure: Measure):
    median = _param(t, "median", measure, at_least=None, above=0)
    p90 = _param(t, "p90", measure)
    ordered = _compare(t, "p90", p90, ">", "median", median,
                       "the 90th percentile lies above the median; " + _CERTAIN_HINT)
    if ordered and None not in (median, p90) and p90 > MAX_LOGNORMAL_SPREAD * median:
        t.r.report(t.at("p90"), p90, f"must be <= {MAX_LOGNORMAL_SPREAD:,} x median "
                   f"({format_number(MAX_LOGNORMAL_SPREAD * median)})",
                   "a wider lognormal's far tail (the generator reaches 8.2 sigma) passes "
                   "1e19 x the median; for 'usually nothing, sometimes long' use a chance")
        return None
    bounds = _read_bounds(t, measure, median, p90 if ordered else None)
    if not ordered or None in (median, p90) or bounds is False:
        return None
    return Distribution("lognormal", (median, p90), bounds=bounds)


def _read_bounds(t: Table, measure: Measure, median, p90):
    """A lognormal's optional `min` / `max`: (min, max) with 0.0 / inf for the one not given,
    None when neither is, False when either is bad (reported): not a number in [0, limit],
    min >= max, min above the largest value the lognormal draws or max below its smallest
    (its quantiles at 8.2 standard deviations: the bound would leave nothing to draw)."""
    if "min" not in t.data and "max" not in t.data:
        return None
    low = t.read("min", as_number, "1", "the smallest value a draw may take", default=0.0,
                 at_least=0, at_most=measure.limit)
    high = t.read("max", as_number, "120", "the largest value a draw may take (a cap)",
                  default=math.inf, above=0, at_most=measure.limit)
    if low is None or high is None:
        return False
    if not _compare(t, "max", high, ">", "min", low, "a bounded draw lies in [min, max], "
                    "min < max; for a certain value write the number alone"):
        return False
    if median is None or p90 is None:
        return False
    smallest, largest = (median * math.exp(z * _lognormal_sigma(median, p90))
                         for z in (-_Z_LARGEST, _Z_LARGEST))
    if low > largest:
        t.r.report(t.at("min"), low, f"is above the largest value this lognormal draws "
                   f"({largest:,.6g}, its quantile at 8.2 standard deviations)",
                   "lower min, or raise median or p90")
        return False
    if high < smallest:
        t.r.report(t.at("max"), high, f"is below the smallest value this lognormal draws "
                   f"({smallest:,.6g}, its quantile at -8.2 standard deviations)",
                   "raise max, or lower median")
        return False
    return (low, high)


def _lognormal_sigma(median: float, p90: float) -> float:
    from mcrisk.core.distributions import lognormal_sigma
    return lognormal_sigma(median, p90)


def _read_chance(t: Table, measure: Measure):
    p = t.read("p", as_probability, *_PARAM_SPECS["p"])
    why = measure.specs.get("then", "the duration drawn with probability p")
    then = t.read("then", as_distribution, DIST_EXAMPLE, why, inner=True, measure=measure)
    clean = _refuse_bounds(t, "chance", "bound the distribution it draws: write min and max "
                           "in `then`, e.g. then = { dist = \"lognormal\", median = 14, "
                           "p90 = 45, max = 120 }")
    return None if p is None or then is None or not clean else \
        Distribution("chance", (p,), then)


_DIST_READERS = {
    "fixed": _read_fixed,
    "uniform": _read_uniform,
    "triangular": _read_triangular,
    "pert": lambda t, measure: _read_triangular(t, measure, "pert"),
    "lognormal": _read_lognormal,
    "chance": _read_chance,
}


def as_date(r, key, value, spec: Spec):
    """A DateSpec from { day, delay?, shared? }, days from day 0; None if bad."""
    t = as_table(r, key, value, ("day", "delay", "shared"))
    if t is None:
        return None
    day = t.read("day", as_number, "75", "the planned day, from day 0", at_least=0,
                 at_most=DAYS)
    delay = t.read("delay", as_distribution, DIST_EXAMPLE, "the date's own slip in days",
                   default=ZERO)
    shared = t.read("shared", as_ids, '["vendor"]', "names of [shared_delays] added to it",
                    default=(), empty_ok=True)
    known = all([check_ref(r, t.at("shared"), name, r.shared_delays, "shared delay")
                 for name in shared or ()])
    return DateSpec(day, delay, shared) if known and None not in (day, delay, shared) else None


def largest_draw(dist: Distribution) -> float:
    """The largest value the random stream can draw from `dist`: the maximum of a bounded
    distribution; a lognormal's quantile at the largest uniform, 1 - 2**-53 (8.2 sigma), or
    its `max` when that is lower."""
    if dist.kind == "chance":
        return largest_draw(dist.inner)
    if dist.kind != "lognormal":
        return max(dist.params[:3] if dist.kind == "pert" else dist.params)
    median, p90 = dist.params
    largest = median * math.exp(_Z_LARGEST * _lognormal_sigma(median, p90))
    return min(largest, dist.bounds[1]) if dist.bounds else largest


_Z_LARGEST = 8.209536151601387   # -ndtri(2**-53): the standard normal at the largest uniform
