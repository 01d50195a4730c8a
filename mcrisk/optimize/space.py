"""The search space of `mcrisk optimize` as data: what a search file says, validated.

A search file is a TOML file of its own (the scenario stays as it is) with one [search]
section: the scenario and the written strategy (the template) the knobs vary from, the knobs
(per drain group a set of triggers and a lag range, per wave a set of rows, the order of
waves (mcrisk.optimize.order), the crew counts),
the objective, the constraints, the race and the fresh-seed evaluation. `read_search` reads it
with the scenario reader's helpers, so every mistake is a located error
(`file: key = value: what is wrong (hint)`), all of them at once, never a traceback.
docs/optimize.md documents the format.

Statistics (objective terms, constraint keys) are kept as their labels ("p90:trough_depth"):
this module checks that each names a statistic and a column the scenario has;
mcrisk.optimize.objective turns the label into the computation.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass

from ..core.definitions import COSTS, METRICS
from ..core.errors import NO_VALUE, Problem, ScenarioError
from ..core.model import Scenario, Trigger
from ..scenario import load_scenario
from ..scenario.document import parse_toml, read_file_bytes
from ..scenario.limits import DAYS, MAX_DAYS, MAX_ENTRIES, MAX_STRATEGIES, Limit
from ..scenario.reader import (Reader, Spec, Table, as_ids, as_integer, as_number,
                               as_string, as_table, format_number, type_name, did_you_mean)
from ..scenario.sections import NO_RETROFIT
from .order import Order, read_orders
from .threshold import DecisionSearch, read_decision_search

STATISTIC_KINDS = ("p50", "p90", "p99", "mean", "p")
OBJECTIVE_KINDS = ("minimize", "weights", "pareto")


@dataclass(frozen=True)
class DrainGroup:
    """Existing units of the template's drains that drain together: each candidate gives all
    of them one of `triggers` (their lag replaced by one of `lags`)."""

    units: tuple[str, ...]
    triggers: tuple[Trigger, ...]      # lag_days 0; the lag is the separate knob
    trigger_labels: tuple[str, ...]    # each trigger as the file wrote it ("on_arrival:S1")
    lags: tuple[float, ...]            # days, ascending, distinct


@dataclass(frozen=True)
class Wave:
    """Incoming units that land together: each candidate puts all of them in one of `rows`."""

    units: tuple[str, ...]
    rows: tuple[str, ...]              # row ids, ranges expanded, in file order, distinct


@dataclass(frozen=True)
class Objective:
    """What the search minimizes. kind "minimize": one term of weight 1; "weights": the
    weighted sum of the terms; "pareto": every term is an objective of its own (weights 1)."""

    kind: str
    terms: tuple[tuple[str, float], ...]   # (statistic label, weight)

    @property
    def statistics(self) -> tuple[str, ...]:
        return tuple(label for label, _ in self.terms)


@dataclass(frozen=True)
class Constraint:
    """A statistic that must not exceed `max` (a plan is infeasible beyond noise when the
    statistic's 95% interval lies wholly above it)."""

    statistic: str                     # "p90:trough_depth"
    max: float


@dataclass(frozen=True)
class Race:
    """Successive halving: stage k runs every surviving candidate on `scenarios[k]` scenarios
    (seed `seed`, scenarios 0..n-1); `keep` of them (and every one tied with the worst kept
    within noise) go on to the next stage."""

    scenarios: tuple[int, ...]         # ascending
    keep: float                        # in (0, 1]
    seed: int                          # the race's seed ([search] seed unless given)


@dataclass(frozen=True)
class Evaluate:
    """The fresh-seed evaluation of the chosen plans (the top `top`, or the Pareto set)."""

    samples: int
    top: int
    seed: int                          # never the race seed (race seed + 1 unless given)


@dataclass(frozen=True)
class SearchSpace:
    """A validated search file. `scenario` is the loaded scenario it searches;
    `scenario_path` is absolute. The crews default to the scenario's own count."""

    path: str                          # the search file, as given
    scenario_path: str
    scenario: Scenario
    template: str                      # the name of one of the scenario's strategies
    max_candidates: int
    seed: int                          # the sample's seed, and the race's unless it gives one
    drain_groups: tuple[DrainGroup, ...]
    waves: tuple[Wave, ...]
    crews: tuple[int, ...]             # ascending, distinct
    objective: Objective
    constraints: tuple[Constraint, ...]
    race: Race
    evaluate: Evaluate
    orders: tuple[Order, ...] = ()     # [[search.orders]] (mcrisk.optimize.order)
    decision: DecisionSearch | None = None   # [search.decision] (mcrisk.optimize.threshold)

    @property
    def template_strategy(self):
        """The template as the scenario wrote it."""
        return next(s for s in self.scenario.strategies if s.name == self.template)

    @property
    def size(self) -> int:
        """How many plans the knobs span (every combination, before rejection and
        de-duplication)."""
        size = len(self.crews)
        for group in self.drain_groups:
            size *= len(group.triggers) * len(group.lags)
        for wave in self.waves:
            size *= len(wave.rows)
        for order in self.orders:
            size *= order.size
        return size * (len(self.decision.thresholds) if self.decision else 1)


# --------------------------------------------------------------------------------------------
# Reading a search file

MAX_CANDIDATES = 100_000       # plans one search may race: each is a strategy in every scenario
MAX_LAGS = 1_000               # lag values of one drain group
MAX_STAGES = 10                # race stages
MAX_SAMPLES = 100_000_000      # scenarios of one stage or of the evaluation
DEFAULT_STAGES = (500, 2_000, 20_000)

_SEARCH_KEYS = ("scenario", "template", "max_candidates", "seed", "drain_groups", "waves",
                "orders", "crews", "decision", "objective", "constraints", "race", "evaluate")
_SEED = Limit(2**63 - 1, "a seed is a 64-bit integer")
_WEIGHT = Limit(1e12, "a weight turns its statistic into the sum's unit, and 1e12 already makes "
                "one H100-eq day a trillion; only the weights' ratios rank the plans")
_SCENARIO_TABLES = ("scenario", "strategies", "halls", "unit_types")   # never a search's
_NOT_SEARCH = ("give mcrisk optimize a search file whose [search] scenario names this one, "
               "with a template, knobs and an objective (docs/optimize.md, "
               "scenarios/reference-search.toml); mcrisk run takes the scenario itself")


def read_search(path: str | os.PathLike) -> SearchSpace:
    """Read, validate and build the search space at `path` (and load the scenario it names).

    Raises ScenarioError with every Problem found in the search file, or the scenario's own
    problems when the scenario is bad; never another exception for a bad file.
    """
    file = os.fsdecode(path)
    document = parse_toml(file, read_file_bytes(file))
    r = Reader(file)
    if "search" not in document and any(table in document for table in _SCENARIO_TABLES):
        raise ScenarioError([Problem(file, "", NO_VALUE, "this is a scenario file, not a "
                                     "search file: it has no [search] section", _NOT_SEARCH)])
    root = Table(r, "", document, ("search",))
    search = root.table("search", _SEARCH_KEYS, "the scenario, the knobs and the objective")
    if search is None:
        raise ScenarioError(r.problems)
    scenario_path = search.read("scenario", as_string, '"reference-2048.toml"',
                                "the scenario to search, relative to this file")
    scenario = _load_scenario(search, scenario_path)
    parts = _read_search(search, scenario)
    if r.problems or scenario is None:
        raise ScenarioError(r.problems)
    return SearchSpace(path=file, scenario_path=scenario.path, scenario=scenario, **parts)


def _load_scenario(search: Table, relative: str | None) -> Scenario | None:
    """The scenario `relative` names (relative to the search file); None when it cannot be
    read (reported at search.scenario). Its own problems raise its own ScenarioError."""
    if relative is None:
        return None
    full = os.path.join(os.path.dirname(os.path.abspath(search.r.file)), relative)
    if not os.path.isfile(full):
        search.r.report(search.at("scenario"), relative, f"no such file: {full}",
                        "give the scenario's path relative to the search file")
        return None
    return load_scenario(full)


def _read_search(search: Table, scenario: Scenario | None) -> dict:
    """Every part of [search] but the scenario; values are None where unreadable."""
    template = _read_template(search, scenario)
    seed = search.read("seed", as_integer, "1", "the seed of the sample and the race",
                       default=1, at_most=_SEED)
    race = _read_race(search, seed)
    waves = _read_waves(search, scenario)
    return dict(
        template=template and template.name,
        max_candidates=search.read("max_candidates", as_integer, "1000", "enumerate up to "
                                   "this many plans, else sample this many", default=1000,
                                   at_least=1, at_most=Limit(MAX_CANDIDATES, "each plan is a "
                                   "strategy in every scenario of the race")),
        seed=seed,
        drain_groups=_read_drain_groups(search, scenario, template),
        waves=waves,
        orders=read_orders(search, scenario, template, waves),
        crews=_read_crews(search, scenario, template),
        decision=read_decision_search(search, template),
        objective=_read_objective(search, scenario),
        constraints=_read_constraints(search, scenario),
        race=race,
        evaluate=_read_evaluate(search, race),
    )


def _read_template(search: Table, scenario: Scenario | None):
    name = search.read("template", as_string, '"hybrid-gated"',
                       "the written strategy the knobs vary from")
    if name is None or scenario is None:
        return None
    if name not in (names := [s.name for s in scenario.strategies]):
        return search.r.report(search.at("template"), name, "unknown strategy", did_you_mean(
            name, names, "the scenario's strategies", compact=False))
    return scenario.strategy(name)     # a contingent one: mcrisk.optimize.threshold


def _read_drain_groups(search: Table, scenario: Scenario | None, template) -> tuple:
    """[[search.drain_groups]]: units of the template's drains (each in one group at most),
    their trigger choices and lag range."""
    tables = search.tables("drain_groups", ("units", "triggers", "lag_days"),
                           '[{ units = "SU1..SU2", triggers = ["day:60"] }]',
                           "which drains the search varies", default=[])
    drained = None if template is None else [unit for unit, _ in template.drains]
    seen: dict[str, str] = {}
    groups = []
    for t in tables or ():
        if t is None:
            continue
        units = t.read("units", as_ids, '"SU3..SU4"', "existing units that drain together")
        triggers = t.read("triggers", _as_triggers, '["on_accepted:N01..N04", "day:60"]',
                          "the triggers to try", scenario=scenario)
        lags = t.read("lag_days", _as_lags, "{ min = 0, max = 28, step = 7 }",
                      "the lags to try after the trigger", default=(0.0,))
        if units is not None and drained is not None:
            units = _check_members(t, units, drained, seen, "drain group",
                                   "the template's drained units")
        if None not in (units, triggers, lags):
            groups.append(DrainGroup(units, tuple(tr for tr, _ in triggers),
                                     tuple(label for _, label in triggers), lags))
    return None if tables is None else tuple(groups)


def _check_members(t: Table, units: tuple[str, ...], known: list[str], seen: dict[str, str],
                   what: str, noun: str) -> tuple[str, ...] | None:
    """`units` if each is in `known` and in no earlier entry (recorded in `seen`); else None
    (reported on t.units)."""
    ok = True
    for unit in units:
        if unit not in known:
            t.r.report(t.at("units"), unit, f"{unit} is not one of {noun}",
                       did_you_mean(unit, known, noun))
            ok = False
        elif unit in seen:
            t.r.report(t.at("units"), unit, f"{unit} is in two {what}s, also at {seen[unit]}",
                       f"put each unit in one {what}")
            ok = False
        else:
            seen[unit] = t.at("units")
    return units if ok else None


_CONDITIONS = ("day", "on_arrival", "on_accepted")
_TRIGGER_HINT = ('a trigger is "day:60", "on_arrival:S1", "on_accepted:N01..N04", or several '
                 'joined by "+" (the latest of them), as a drain\'s keys in the scenario')


def _as_triggers(r, key, value, spec: Spec, scenario: Scenario | None):
    """An array of trigger labels -> ((Trigger, label), ...); None if any is bad (reported).
    Duplicates (the same Trigger twice) are refused: they would only repeat candidates."""
    if not isinstance(value, list) or not value:
        what = "an empty array" if value == [] else type_name(value)
        r.report(key, value, f"must be a non-empty array of triggers, not {what}",
                 spec.type_hint)
        return None
    triggers, seen = [], {}
    for i, label in enumerate(value):
        trigger = _as_trigger(r, f"{key}[{i}]", label, spec, scenario)
        if trigger is not None and trigger in seen:
            r.report(f"{key}[{i}]", label, f"the same trigger as {seen[trigger]!r}",
                     "list each trigger once")
            trigger = None
        if trigger is not None:
            seen[trigger] = label
        triggers.append((trigger, label))
    return None if any(tr is None for tr, _ in triggers) else tuple(triggers)


def _as_trigger(r, key, value, spec: Spec, scenario: Scenario | None) -> Trigger | None:
    """'on_accepted:N01..N04+day:60' -> Trigger (lag 0), or None (reported)."""
    text = as_string(r, key, value, spec)
    if text is None:
        return None
    parts: dict[str, object] = {}
    for condition in text.split("+"):
        kind, colon, what = condition.strip().partition(":")
        if not colon or kind not in _CONDITIONS:
            r.report(key, value, f"{condition.strip()!r} is not a trigger the format knows",
                     _TRIGGER_HINT)
            return None
        if kind in parts:
            r.report(key, value, f"gives {kind} twice", _TRIGGER_HINT)
            return None
        parts[kind] = _condition(r, key, kind, what.strip(), scenario)
        if parts[kind] is None:
            return None
    return Trigger(day=parts.get("day"), on_arrival=parts.get("on_arrival", ()),
                   on_accepted=parts.get("on_accepted", ()))


def _condition(r, key, kind: str, what: str, scenario: Scenario | None):
    """The value of one condition: a day, or the shipments / incoming units it waits for."""
    if kind == "day":
        try:
            day = float(what)
        except ValueError:
            day = None
        if day is None or not math.isfinite(day) or not 0 <= day <= MAX_DAYS:
            r.report(key, f"day:{what}", f"the day must be a number in [0, {MAX_DAYS:,}]",
                     'for example "day:60"')
            return None
        return day
    spec = Spec(kind, '"S1"' if kind == "on_arrival" else '"N01..N04"', _TRIGGER_HINT)
    ids = as_ids(r, key, [item.strip() for item in what.split(",")], spec)
    if ids is None or scenario is None:
        return ids
    known = [s.id for s in scenario.shipments] if kind == "on_arrival" else \
        [u.id for u in scenario.incoming]
    noun = "shipments" if kind == "on_arrival" else "incoming units"
    unknown = [i for i in ids if i not in known]
    for ident in unknown:
        r.report(key, ident, f"unknown {noun[:-1]}", did_you_mean(ident, known, f"known {noun}"))
    return None if unknown else ids


def _as_lags(r, key, value, spec: Spec):
    """Lag days: a number, an array of numbers, or { min, max, step } -> ascending distinct
    floats in [0, MAX_DAYS], at most MAX_LAGS of them; or None (reported)."""
    if isinstance(value, dict):
        t = Table(r, key, value, ("min", "max", "step"))
        low = t.read("min", as_number, "0", "the shortest lag", at_least=0, at_most=DAYS)
        high = t.read("max", as_number, "28", "the longest lag", at_least=0, at_most=DAYS)
        step = t.read("step", as_number, "7", "the lags between min and max", above=0,
                      at_most=DAYS, default=None)
        if None in (low, high) or ("step" in value and step is None):
            return None
        if high < low:
            r.report(f"{key}.max", high, f"is below min ({format_number(low)})", "give max >= min")
            return None
        if step is None and high > low:
            r.report(key, value, "gives min < max but no step", "add step = 7, say")
            return None
        count = 1 if high == low else math.floor((high - low) / step + 1e-9) + 1
        if count > MAX_LAGS:
            r.report(key, value, f"spans {count:,} lags, more than {MAX_LAGS:,}",
                     "take a larger step: each lag multiplies the candidates")
            return None
        return tuple(low + i * step for i in range(count)) if count > 1 else (low,)
    items = value if isinstance(value, list) else [value]
    if not items:
        r.report(key, value, "must give at least one lag", spec.type_hint)
        return None
    lags = [as_number(r, f"{key}[{i}]" if isinstance(value, list) else key, item, spec,
                       at_least=0, at_most=DAYS) for i, item in enumerate(items)]
    if None in lags:
        return None
    if len(set(lags)) != len(lags):
        r.report(key, value, "gives a lag twice", "list each lag once")
        return None
    return tuple(sorted(lags))


def _read_waves(search: Table, scenario: Scenario | None) -> tuple | None:
    """[[search.waves]]: incoming units that land together (each in one wave at most) and the
    rows they may land in (ranges expand to choices)."""
    tables = search.tables("waves", ("units", "rows"), '[{ units = "N01..N04", rows = '
                           '["B1", "A1..A2"] }]', "where the search may place new units",
                           default=[])
    incoming = None if scenario is None else [u.id for u in scenario.incoming]
    rows = None if scenario is None else [row.id for row in scenario.rows()]
    seen: dict[str, str] = {}
    waves = []
    for t in tables or ():
        if t is None:
            continue
        units = t.read("units", as_ids, '"N01..N04"', "incoming units that land together")
        choices = t.read("rows", as_ids, '["B1", "A1..A2"]', "the rows the wave may take")
        if units is not None and incoming is not None:
            units = _check_members(t, units, incoming, seen, "wave", "the incoming units")
        if choices is not None and rows is not None:
            for row in choices:
                if row not in rows:
                    t.r.report(t.at("rows"), row, "unknown row",
                               did_you_mean(row, rows, "known rows"))
                    choices = None
                    break
        if units is not None and choices is not None:
            waves.append(Wave(units, choices))
    return None if tables is None else tuple(waves)


def _read_crews(search: Table, scenario: Scenario | None,
                template=None) -> tuple[int, ...] | None:
    """[search.crews] values: the retrofit crew counts to try; when absent the template's own
    count (its `crews`, else the scenario's [retrofit] crews). Each at least 1 and at most one
    per row, as [retrofit] crews."""
    t = search.table("crews", ("values",), "the crew counts to try", default=None)
    own = None if scenario is None else (
        (template.crews_in(scenario.retrofit) if template else scenario.retrofit.crews),)
    if t is None:
        return own
    rows = MAX_ENTRIES if scenario is None else max(1, len(scenario.rows()))
    limit = Limit(rows, f"one crew per row, {rows:,} rows: more crews than rows never work "
                   "at once")
    values = t.read("values", _as_integer_list, "[1, 2, 3]", "the crew counts to try",
                    at_least=1, at_most=limit)
    if values is not None and scenario is not None and not _has_retrofit(scenario):
        t.r.report(t.at("values"), list(values), "the scenario has no [retrofit]: crews "
                   "retrofit rows, and it has none to retrofit", "remove [search.crews], or "
                   "add [retrofit] to the scenario")
        return None
    return values


def _has_retrofit(scenario: Scenario) -> bool:
    """Whether the scenario has a [retrofit] section (NO_RETROFIT stands in when not)."""
    return scenario.retrofit is not NO_RETROFIT


def _as_integer_list(r, key, value, spec: Spec, at_least: int, at_most: Limit):
    """A non-empty array of distinct integers -> ascending tuple, or None (reported)."""
    if not isinstance(value, list) or not value:
        r.report(key, value, "must be a non-empty array of whole numbers", spec.type_hint)
        return None
    numbers = [as_integer(r, f"{key}[{i}]", item, spec, at_least=at_least, at_most=at_most)
               for i, item in enumerate(value)]
    if None in numbers:
        return None
    if len(set(numbers)) != len(numbers):
        r.report(key, value, "gives a value twice", "list each value once")
        return None
    return tuple(sorted(numbers))


def _statistic_ok(r, key, label, scenario: Scenario | None, value=None) -> bool:
    """Whether `label` is a statistic: 'p90:trough_depth', 'mean:cost_total', 'p:...'; a
    cost column only when the scenario has [costs] (reports if not)."""
    shown = label if value is None else value
    kind, colon, column = label.partition(":") if isinstance(label, str) else ("", "", "")
    if not colon or kind not in STATISTIC_KINDS:
        r.report(key, shown, "is not a statistic", 'write kind:column with kind one of '
                 f'{", ".join(STATISTIC_KINDS)}, for example "p90:trough_depth"')
        return False
    if column in COSTS:
        if scenario is not None and scenario.costs is None:
            r.report(key, shown, f"{column} is a cost, and the scenario has no [costs] section",
                     "add [costs] to the scenario (docs/costs.md), or use a metric")
            return False
        return True
    if column not in METRICS:
        r.report(key, shown, f"unknown column {column!r}",
                 did_you_mean(column, METRICS + COSTS, "metrics and costs", compact=False))
        return False
    return True


def _as_statistic(r, key, value, spec: Spec, scenario: Scenario | None):
    text = as_string(r, key, value, spec)
    return text if text is not None and _statistic_ok(r, key, text, scenario) else None


def _read_objective(search: Table, scenario: Scenario | None) -> Objective | None:
    """[search.objective]: exactly one of minimize, weights, pareto."""
    t = search.table("objective", OBJECTIVE_KINDS, 'what to minimize: minimize = '
                     '"p90:shortfall_gpu_days"')
    if t is None:
        return None
    given = [kind for kind in OBJECTIVE_KINDS if kind in t.data]
    if len(given) != 1:
        t.r.report(t.key, NO_VALUE, "must give exactly one of minimize, weights, pareto"
                   + (f" (it gives {', '.join(given)})" if given else ""),
                   'for example minimize = "p90:shortfall_gpu_days"')
        return None
    kind = given[0]
    if kind == "minimize":
        label = t.read("minimize", _as_statistic, '"p90:shortfall_gpu_days"',
                       "the statistic to minimize", scenario=scenario)
        return label and Objective("minimize", ((label, 1.0),))
    if kind == "weights":
        w = t.table("weights", tuple(t.data["weights"]) if isinstance(t.data["weights"], dict)
                    else (), "the weighted sum to minimize")
        terms = [(label, w.read(label, as_number, "1.0", "its weight in the sum", above=0,
                                at_most=_WEIGHT))
                 for label in (w.data if w is not None else ())]
        ok = w is not None and bool(terms) and all(
            _statistic_ok(t.r, w.at(label), label, scenario, NO_VALUE) for label, _ in terms)
        if w is not None and not terms:
            t.r.report(w.key, {}, "names no statistic", '{ "p90:shortfall_gpu_days" = 1.0 }')
        return Objective("weights", tuple(terms)) if ok and all(
            weight is not None for _, weight in terms) else None
    labels = t.read("pareto", _as_statistic_list, '["p90:trough_depth", "mean:cost_total"]',
                    "the objectives of the Pareto set", scenario=scenario)
    return labels and Objective("pareto", tuple((label, 1.0) for label in labels))


def _as_statistic_list(r, key, value, spec: Spec, scenario: Scenario | None):
    """At least two distinct statistics (a Pareto set of one objective is just its best)."""
    if not isinstance(value, list) or len(value) < 2:
        r.report(key, value, "must be an array of at least two statistics", spec.type_hint)
        return None
    labels = [_as_statistic(r, f"{key}[{i}]", item, spec, scenario)
              for i, item in enumerate(value)]
    if None in labels:
        return None
    if len(set(labels)) != len(labels):
        r.report(key, value, "names a statistic twice", "list each once")
        return None
    return tuple(labels)


def _read_constraints(search: Table, scenario: Scenario | None) -> tuple | None:
    """[search.constraints]: "statistic" = { max = bound }, in file order."""
    raw = search.data.get("constraints", {})
    t = search.table("constraints", tuple(raw) if isinstance(raw, dict) else (),
                     "bounds on statistics", default=None)
    constraints, ok = [], True
    for label in (t.data if t is not None else ()):
        bound = t.read(label, _as_bound, "{ max = 0 }", "the largest value allowed")
        ok = _statistic_ok(t.r, t.at(label), label, scenario, NO_VALUE) and ok
        ok = ok and bound is not None
        if ok:
            constraints.append(Constraint(label, bound))
    if "constraints" in search.data and t is None:
        return None
    return tuple(constraints) if ok else None


def _as_bound(r, key, value, spec: Spec):
    t = as_table(r, key, value, ("max",))
    return t and t.read("max", as_number, "0", "the largest value allowed")


def _read_race(search: Table, seed: int | None) -> Race | None:
    """[search.race]: scenarios per stage (ascending), the fraction kept, the race's seed."""
    t = search.table("race", ("scenarios", "keep", "seed"), "", default=None)
    if t is None:
        return None if seed is None else Race(DEFAULT_STAGES, 0.25, seed)
    stages = t.read("scenarios", _as_integer_list, "[500, 2000, 20000]",
                    "scenarios per stage of successive halving", default=DEFAULT_STAGES,
                    at_least=1, at_most=Limit(MAX_SAMPLES, "see Limits"))
    if stages is not None and len(stages) > MAX_STAGES:
        t.r.report(t.at("scenarios"), list(stages), f"has {len(stages)} stages, more than "
                   f"{MAX_STAGES}", "a few stages, each several times the last, are enough")
        stages = None
    if stages is not None and list(stages) != list(t.data.get("scenarios", stages)):
        t.r.report(t.at("scenarios"), t.data["scenarios"], "must be ascending",
                   "each stage runs the survivors on more scenarios than the last")
        stages = None
    keep = t.read("keep", as_number, "0.25", "the fraction kept after each stage",
                  default=0.25, above=0, at_most=Limit(1, "a fraction of the candidates"))
    race_seed = t.read("seed", as_integer, "1", "the race's seed", default=seed,
                       at_most=_SEED)
    return None if None in (stages, keep, race_seed) else Race(stages, keep, race_seed)


def _read_evaluate(search: Table, race: Race | None) -> Evaluate | None:
    """[search.evaluate]: samples and top plans of the fresh-seed evaluation, on a seed the
    race did not use (its seed + 1 unless given)."""
    t = search.table("evaluate", ("samples", "top", "seed"), "", default=None)
    fresh = None if race is None else race.seed + 1
    if t is None:
        return None if fresh is None else Evaluate(20_000, 5, fresh)
    samples = t.read("samples", as_integer, "20000", "scenarios of the evaluation",
                     default=20_000, at_least=1, at_most=Limit(MAX_SAMPLES, "see Limits"))
    top = t.read("top", as_integer, "5", "how many plans to evaluate", default=5,
                 at_least=1, at_most=Limit(MAX_STRATEGIES, "the plans a report compares"))
    seed = t.read("seed", as_integer, "2", "the evaluation's fresh seed", default=fresh,
                  at_most=_SEED)
    if seed is not None and race is not None and seed == race.seed:
        t.r.report(t.at("seed"), seed, "is the race's seed: the chosen plans would be "
                   "measured on the worlds that chose them (the winner's curse)",
                   f"use another seed, for example {race.seed + 1}")
        seed = None
    return None if None in (samples, top, seed) else Evaluate(samples, top, seed)
