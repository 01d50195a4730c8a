"""The candidate plans of a search space: every combination of its knobs, or a deterministic
sample of them, each checked before any simulation as `mcrisk run` would check it.

A candidate is a strategy (the template with its drain groups' triggers and lags, its
waves' rows and its orders' rows replaced) plus a retrofit crew count, which the strategy
carries as its own `crews` where it differs from the scenario's `[retrofit] crews`.
`generate` enumerates the knobs when they span at most `max_candidates` plans, else samples
`max_candidates` of them with a scrambled Sobol sequence (scipy.stats.qmc, seeded by the
search's seed): a low-discrepancy sample spreads over every knob's values, and over every pair
of knobs, more evenly than independent draws, and is the same on every machine for one seed.
Each plan is written as the `[[strategies]]` block `strategy_toml` gives and read back with the
scenario reader's own strategy validation (rows' positions and cooling, every unit placed and
drained once, deadlocks), then checked against each hall's power cap once every new unit runs,
and the plans are compiled together (plan.compile's cycle check): a plan that fails is
rejected and counted by reason, the template too. Plans equal in strategy and crews are
generated once; the template, when it passes, is the first candidate.
"""
from __future__ import annotations

import itertools
import json
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass, replace

from ..plan.compile import compile_scenario
from ..core.model import Distribution, Scenario, Strategy, Trigger
from ..scenario import read_document
from ..scenario.decisions import DECISION_EVENTS, DECISION_MOMENTS
from ..scenario.document import parse_toml, read_file_bytes
from ..scenario.reader import compact_ids, compact_runs, format_number, Reader, Table
from ..scenario.strategies import STRATEGY_KEYS, read_strategy
from .order import KNOB as ORDER_KNOB
from .race import plan_scenario
from .space import SearchSpace
from .threshold import (ANTICIPATIVE, KNOB as DECISION_KNOB, decision_words, with_branches,
                        with_threshold)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

SAMPLER = "scipy.stats.qmc.Sobol (scrambled, seeded by search.seed)"


@dataclass(frozen=True)
class Candidate:
    """One plan: a strategy, the crews it runs with, and the knobs' values in words
    ((knob label, chosen value), in the search file's order). The strategy's own `crews`
    is `crews` where that differs from the scenario's [retrofit] crews, else None (the
    scenario's), so the strategy alone runs as the plan."""

    name: str
    strategy: Strategy
    crews: int
    knobs: tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Generated:
    """The candidates (the template first), the plans rejected before simulation by reason,
    how many plans the knobs span, the sampler (None when enumerated) and how many generated
    plans repeated an earlier one."""

    candidates: tuple[Candidate, ...]
    rejected: Counter
    space_size: int
    sampler: str | None = None
    duplicates: int = 0


def generate(space: SearchSpace, scenario: Scenario | None = None,
             anticipative: frozenset = frozenset()) -> Generated:
    """The candidates of `space` on `scenario` (the space's own scenario by default); a
    contingent plan whose decision is in `anticipative` (mcrisk.optimize.threshold's
    anticipative_decisions) is rejected as such."""
    scenario = scenario or space.scenario
    knobs = _knobs(space)
    sizes = [len(values) for _, values in knobs]
    size = math.prod(sizes)
    sampled = size > space.max_candidates
    picks = _sample(sizes, space.max_candidates, space.seed) if sampled else \
        itertools.product(*(range(n) for n in sizes))
    checker = _Checker(space, scenario, anticipative)
    template = _template_plan(space, scenario)
    plans, seen, duplicates = [], {_identity(*template[:2])}, 0
    # the template passes the checks its siblings pass: a written strategy can still break a
    # hall's power cap (the scenario reader reports a plan over a cap, it does not refuse it)
    reason = checker.reason(template[0])
    if reason is None:
        plans.append(template)
    else:
        checker.rejected[reason] += 1
    for pick in picks:
        plan = _plan(space, scenario, knobs, pick)
        identity = _identity(*plan[:2])
        if identity in seen:
            duplicates += 1
            continue
        seen.add(identity)
        reason = checker.reason(plan[0])
        if reason is None:
            plans.append(plan)
        else:
            checker.rejected[reason] += 1
    plans = checker.compiled(plans)
    width = max(4, len(str(len(plans) - 1)))
    prefix = name_prefix(scenario)
    names = [f"{prefix}-{i:0{width}d}" for i in range(len(plans))]
    candidates = tuple(Candidate(name, _named(s, name, crews, scenario), crews, labels)
                       for name, (s, crews, labels) in zip(names, plans))
    return Generated(candidates, checker.rejected, size, SAMPLER if sampled else None,
                     duplicates)


def name_prefix(scenario: Scenario) -> str:
    """What the candidates' names start with: "plan" (plan-0000, plan-0001, ...), or "plan2",
    "plan3", ... when the scenario already has strategies named so (the blocks of an earlier
    round appended to it): no name of a new round collides with a strategy of the scenario,
    so its blocks append beside the earlier ones."""
    def prefix(round_number: int) -> str:
        return "plan" if round_number == 1 else f"plan{round_number}"

    taken = [s.name for s in scenario.strategies]
    round_number = 1
    while any(re.fullmatch(rf"{prefix(round_number)}-\d+", name) for name in taken):
        round_number += 1
    return prefix(round_number)


def _named(strategy: Strategy, name: str, crews: int, scenario: Scenario) -> Strategy:
    """The candidate's strategy: named, with `crews` as its own where they differ from the
    scenario's [retrofit] crews (a written block then says `crews = N`)."""
    own = None if crews == scenario.retrofit.crews else crews
    return replace(strategy, name=name, crews=own)


def _knobs(space: SearchSpace) -> list[tuple[str, tuple]]:
    """(label, values) per knob, in file order: each drain group's (trigger, lag) pairs, each
    wave's rows, each order's permutations of its rows, then the crews."""
    knobs: list[tuple[str, tuple]] = []
    for group in space.drain_groups:
        pairs = tuple((trigger, lag) for trigger in group.triggers for lag in group.lags)
        knobs.append((f"drain {compact_ids(list(group.units))}", pairs))
    for wave in space.waves:
        knobs.append((f"wave {compact_ids(list(wave.units))}", wave.rows))
    for order in space.orders:
        knobs.append((ORDER_KNOB, order.permutations))
    if space.decision is not None:
        knobs.append((DECISION_KNOB, space.decision.thresholds))
    knobs.append(("crews", space.crews))
    return knobs


def _sample(sizes: list[int], n: int, seed: int) -> list[tuple[int, ...]]:
    """`n` index vectors over knobs of `sizes` values: the first n points of a scrambled Sobol
    sequence (2**m points, m the least with 2**m >= n, keep Sobol's balance), each coordinate
    u in [0, 1) mapped to floor(u * size)."""
    from scipy.stats import qmc

    sampler = qmc.Sobol(d=len(sizes), scramble=True, seed=seed)
    points = sampler.random_base2(m=max(0, math.ceil(math.log2(n))))[:n]
    return [tuple(min(int(u * size), size - 1) for u, size in zip(point, sizes))
            for point in points]


def _plan(space: SearchSpace, scenario: Scenario, knobs, pick) -> tuple:
    """(strategy, crews, knob labels) of one index vector."""
    template = space.template_strategy
    triggers, rows, labels = {}, {}, []
    for group, index in zip(space.drain_groups, pick):
        trigger, lag = knobs[len(labels)][1][index]
        triggers.update((unit, replace(trigger, lag_days=lag)) for unit in group.units)
        labels.append((knobs[len(labels)][0], _trigger_words(trigger, lag)))
    for wave, index in zip(space.waves, pick[len(space.drain_groups):]):
        row = wave.rows[index]
        rows.update((unit, row) for unit in wave.units)
        labels.append((knobs[len(labels)][0], f"row {row}"))
    for order, index in zip(space.orders, pick[len(space.drain_groups) + len(space.waves):]):
        permutation = order.permutations[index]
        rows.update(order.placement(permutation))
        labels.append((ORDER_KNOB, order.words(permutation)))
    decision = template.decision
    if space.decision is not None:     # the knob before the crews
        decision = with_threshold(decision, space.decision.thresholds[pick[-2]])
        labels.append((DECISION_KNOB, decision_words(decision)))
    crews = space.crews[pick[-1]]
    labels.append(("crews", str(crews)))
    strategy = replace(
        template,
        placement=tuple((unit, rows.get(unit, row)) for unit, row in template.placement),
        drains=tuple((unit, triggers.get(unit, trigger)) for unit, trigger in template.drains),
        decision=decision, description=f"mcrisk optimize: {template.name} with "
                    + "; ".join(f"{knob} {value}" for knob, value in labels))
    return strategy, crews, tuple(labels)


def _template_plan(space: SearchSpace, scenario: Scenario) -> tuple:
    """The template as a plan: its own triggers, rows and crews (the scenario's unless it
    hires its own)."""
    template = space.template_strategy
    drains, placement = dict(template.drains), dict(template.placement)
    labels = []
    for group in space.drain_groups:
        written = {drains[u] for u in group.units}
        words = _trigger_words(*_without_lag(written.pop())) if len(written) == 1 else \
            "as written (several triggers)"
        labels.append((f"drain {compact_ids(list(group.units))}", words))
    for wave in space.waves:
        rows = sorted({placement[u] for u in wave.units})
        labels.append((f"wave {compact_ids(list(wave.units))}", "row " + ", ".join(rows)))
    for order in space.orders:
        labels.append((ORDER_KNOB, order.written_words(placement)))
    if space.decision is not None:
        labels.append((DECISION_KNOB, decision_words(template.decision)))
    crews = template.crews_in(scenario.retrofit)
    labels.append(("crews", str(crews)))
    return (replace(template, description=f"mcrisk optimize: {template.name} as written"),
            crews, tuple(labels))


def _without_lag(trigger: Trigger) -> tuple[Trigger, float]:
    return replace(trigger, lag_days=0.0), trigger.lag_days


def _identity(strategy: Strategy, crews: int) -> tuple:
    """What makes two plans the same plan: everything but the name and description (every
    other field of the strategy, whatever fields it gains, and the crews it runs with)."""
    return replace(strategy, name="", description="", crews=None), crews


def trigger_label(trigger: Trigger) -> str:
    """A trigger as a search file writes it: 'on_accepted:N01..N04+day:60' (lag apart)."""
    parts = [] if trigger.day is None else [f"day:{format_number(trigger.day)}"]
    for kind in ("on_arrival", "on_accepted"):
        ids = getattr(trigger, kind)
        if ids:
            parts.append(f"{kind}:{compact_ids(list(ids)).replace(', ', ',')}")
    return "+".join(parts)


def _trigger_words(trigger: Trigger, lag: float) -> str:
    return f"{trigger_label(trigger)}, lag {format_number(lag)} d"


class _Checker:
    """The checks a plan passes before simulation, with the counts of those it failed."""

    def __init__(self, space: SearchSpace, scenario: Scenario,
                 anticipative: frozenset = frozenset()):
        self.space, self.scenario, self.anticipative = space, scenario, anticipative
        self.rejected: Counter = Counter()
        # the scenario reader's registries (rows, units, shipments, contracts), as `mcrisk
        # run` has them when it reads the strategies
        self.reader = Reader(scenario.path)
        read_document(self.reader, parse_toml(scenario.path, read_file_bytes(scenario.path)))
        self.reader.problems.clear()

    def reason(self, strategy: Strategy) -> str | None:
        """Why `strategy` cannot run, in a few words (a reason to count), or None; a
        contingent one (its fields its met branch's) with its unmet branch's reason."""
        if strategy.decision in self.anticipative:
            return ANTICIPATIVE
        if strategy.decision is not None:
            unmet = self.scenario.strategy(strategy.decision.unmet)
            return self._reason(replace(strategy, decision=None)) or self._reason(unmet)
        return self._reason(strategy)

    def _reason(self, strategy: Strategy) -> str | None:
        block = tomllib.loads(_strategy_block(strategy))["strategies"][0]
        self.reader.problems.clear()
        read_strategy(Table(self.reader, "strategies[0]", block, STRATEGY_KEYS))
        if self.reader.problems:
            return _reason_of(self.reader.problems[0].message)
        return self._island_reason(strategy) or self._power_reason(strategy)

    def _island_reason(self, strategy: Strategy) -> str | None:
        """'no island' when a unit lands in a row no positional island covers and its type
        names no island (the scenario's check_type_islands, for a plan the file never had)."""
        types = {u.id: u.type for u in self.scenario.incoming}
        lost = any(self.scenario.island_of(types[unit], row) is None
                   for unit, row in strategy.placement)
        return "no island" if lost else None

    def _power_reason(self, strategy: Strategy) -> str | None:
        """'hall power cap' when the new units placed in a hall draw more than its cap once
        they all run: no timing of the drains avoids that."""
        hall_of = {row.id: hall.id for hall in self.scenario.halls for row in hall.rows}
        kind = {u.id: self.scenario.unit_type(u.type) for u in self.scenario.incoming}
        draw = Counter()
        for unit, row in strategy.placement:
            draw[hall_of[row]] += kind[unit].power_kw
        caps = {hall.id: hall.power_cap_kw for hall in self.scenario.halls}
        over = any(kw > caps[hall] * (1 + 1e-9) for hall, kw in draw.items())
        return "hall power cap" if over else None

    def compiled(self, plans: list[tuple]) -> list[tuple]:
        """`plans` less those compile refuses (a dependency cycle): all compiled at once as
        one scenario (each strategy with its crews), and plan by plan only when that fails."""
        if self._compiles(plans):
            return plans
        kept = []
        for plan in plans:
            if self._compiles([plan]):
                kept.append(plan)
            else:
                self.rejected["deadlock (compile)"] += 1
        return kept

    def _compiles(self, plans: list[tuple]) -> bool:
        plans = with_branches(self.scenario, [(s, crews) for s, crews, _ in plans])
        try:
            compile_scenario(plan_scenario(self.scenario, plans))
        except ValueError:
            return False
        return True


def _reason_of(message: str) -> str:
    """The reason a validation message gives, as a count's key."""
    if "deadlock" in message:
        return "deadlock"
    if "position" in message:
        return "row positions"
    if "air-cooled" in message:
        return "row cooling"
    return message


# --------------------------------------------------------------------------------------------
# Writing a candidate as a [[strategies]] block


def strategy_toml(candidate: Candidate, scenario: Scenario) -> str:
    """The candidate as a `[[strategies]]` block that `mcrisk run` accepts unchanged and runs
    as the plan: every key of the strategy that shapes it (placement, drains, kept units,
    reservations, crews, acceptance policy: WRITTEN_KEYS, which covers every key the reader
    takes), with `crews = N` when its crews differ from the scenario's `[retrofit] crews` (a
    strategy hires its own crews), without the key when they are the scenario's."""
    if candidate.strategy.decision is not None:
        return _contingent_block(candidate.strategy)
    strategy = _named(candidate.strategy, candidate.strategy.name, candidate.crews, scenario)
    return _strategy_block(strategy)


# A decision's keys by its events' kinds, as the reader takes them (in its order of keys)
_EVENT_KEYS = tuple((kind, key) for key, (kind, _) in DECISION_EVENTS.items())
_MOMENT_KEYS = {kind: key for key, (kind, _) in DECISION_MOMENTS.items()}


def _contingent_block(strategy: Strategy) -> str:
    """A contingent plan as its `[[strategies]]` entry: name, description and the decision
    (its moment, events, count and branches); the branches are the scenario's own."""
    d = strategy.decision
    keys = [f"day = {_number(d.day)}" if d.on is None else
            f"{_MOMENT_KEYS[d.on[0]]} = {_string(d.on[1])}"]
    for kind, key in _EVENT_KEYS:
        ids = [ident for event, ident in d.events if event == kind]
        if ids:
            keys.append(f"{key} = {_ids(ids)}")
    keys += [f"at_least = {d.at_least}", f"met = {_string(d.met)}",
             f"unmet = {_string(d.unmet)}"]
    lines = ["[[strategies]]", f"name = {_string(strategy.name)}"]
    if strategy.description:
        lines.append(f"description = {_string(strategy.description)}")
    lines.append(f"decision = {{ {', '.join(keys)} }}")
    return "\n".join(lines) + "\n"


# The keys _strategy_block writes when the strategy has them: every key of STRATEGY_KEYS, so
# that a plan written back runs as the plan (tests/optimize/test_every_key.py checks both).
WRITTEN_KEYS = ("name", "description", "place", "drain", "keep", "reservations", "crews",
                "acceptance", "install_teams", "burn_in_bays")


def _strategy_block(strategy: Strategy) -> str:
    lines = ["[[strategies]]", f"name = {_string(strategy.name)}"]
    if strategy.description:
        lines.append(f"description = {_string(strategy.description)}")
    lines.append("place = [")
    for units, row in _runs(strategy.placement):
        lines.append(f"  {{ units = {_ids(units)}, row = {_string(row)} }},")
    lines += ["]", "drain = ["]
    for units, trigger in _runs(strategy.drains):
        lines.append(f"  {{ units = {_ids(units)}{_trigger_keys(trigger)} }},")
    lines.append("]")
    if strategy.keep:
        lines.append(f"keep = {_ids(list(strategy.keep))}")
    steps = [f"{{ hall = {_string(hall)}, {_step_start(step)}, kw = {_number(step.kw)} }}"
             for hall, hall_steps in strategy.reservations for step in hall_steps]
    if steps:
        lines.append(f"reservations = [{', '.join(steps)}]")
    if strategy.crews is not None:
        lines.append(f"crews = {strategy.crews}")
    if strategy.acceptance is not None:
        policy = strategy.acceptance
        lines.append(f"acceptance = {{ soak_after_failures = {policy.soak_after_failures}, "
                     f"soak_days = {distribution_toml(policy.soak_days)} }}")
    for key in ("install_teams", "burn_in_bays"):
        if getattr(strategy, key) is not None:
            lines.append(f"{key} = {getattr(strategy, key)}")
    return "\n".join(lines) + "\n"


def _step_start(step) -> str:
    """When a reservation step starts, as the file writes it: `day = 150`, or `after =
    "arrival:S3", notice_days = 30`."""
    if step.after is None:
        return f"day = {_number(step.day)}"
    return f"after = {_string(step.after)}, notice_days = {_number(step.day)}"


# A distribution's parameters by kind, as a scenario writes them (docs/scenario-format.md);
# tests/optimize/test_every_key.py reads every kind back through the scenario reader.
_DISTRIBUTION_KEYS = {"uniform": ("min", "max"), "triangular": ("min", "mode", "max"),
                      "pert": ("min", "mode", "max", "lambda"),
                      "lognormal": ("median", "p90"), "chance": ("p",)}


def distribution_toml(dist: Distribution) -> str:
    """A distribution as a scenario writes it: a fixed one as its number, any other as an
    inline table (`{ dist = "triangular", min = 1, mode = 2, max = 6 }`) that reads back as
    exactly `dist`."""
    if dist.kind == "fixed":
        return _number(dist.params[0])
    keys = [f"dist = {_string(dist.kind)}"]
    keys += [f"{name} = {_number(value)}"
             for name, value in zip(_DISTRIBUTION_KEYS[dist.kind], dist.params)]
    if dist.inner is not None:
        keys.append(f"then = {distribution_toml(dist.inner)}")
    return "{ " + ", ".join(keys) + " }"


def _runs(pairs) -> list[tuple[list[str], object]]:
    """(units, value) pairs merged where consecutive units share a value, in order."""
    runs: list[tuple[list[str], object]] = []
    for unit, value in pairs:
        if runs and runs[-1][1] == value:
            runs[-1][0].append(unit)
        else:
            runs.append(([unit], value))
    return runs


def _ids(units: list[str]) -> str:
    """'"N01..N04"' or '["N01..N02", "N05"]': the units in order, runs as ranges."""
    parts = compact_runs(units)              # not compact_ids' text: an id may hold ", "
    return _string(parts[0]) if len(parts) == 1 else \
        "[" + ", ".join(_string(p) for p in parts) + "]"


def _trigger_keys(trigger: Trigger) -> str:
    keys = "" if trigger.day is None else f", day = {_number(trigger.day)}"
    for kind in ("on_arrival", "on_accepted"):
        ids = getattr(trigger, kind)
        if ids:
            keys += f", {kind} = {_ids(list(ids))}"
    if trigger.lag_days:
        keys += f", lag_days = {_number(trigger.lag_days)}"
    return keys


def _number(value: float) -> str:
    """A TOML number that reads back as exactly `value`."""
    return str(int(value)) if float(value).is_integer() and abs(value) < 2**53 else repr(value)


def _string(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's."""
    return json.dumps(text, ensure_ascii=False)
