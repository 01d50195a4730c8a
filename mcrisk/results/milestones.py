"""Milestones: the plan as a schedule. Every node of a strategy's network is a dated event
(a drain starts, a unit is removed, a row is ready, a rack is installed, passes burn-in, is
accepted, a shipment arrives, a hall is energized, an island is ready); waves roll them up.
This module defines them per strategy and reduces their times over scenarios by streaming.

Which milestones a strategy has: its completion nodes (every removal and acceptance) and
every node upstream of them through the plan's dependencies, plus the ramp steps of its new
units. A node no completion waits for (a row that takes no new unit, a hall or island no
unit of the strategy uses) is not part of its schedule and is left out.

Rollups (level "wave"), per strategy, each the latest (or, for "first ...", the earliest) of
its member nodes in each scenario:
    per drain wave (existing units with the same drain trigger): first drain starts, all removed
    per shipment: first rack install starts, all racks accepted
    per hall holding new units: all its racks accepted
    completion: the latest removal or acceptance (equals the completion_day metric)
Per-unit nodes are level "unit"; shipments, halls, islands and rows are level "wave".

Statistics per milestone over scenarios: mean, P10, P50, P90 (numpy.quantile's default,
linear), the 95% interval of the P90 (binomial order statistics, as for the metrics) and the
criticality index. With a status as of day a, a milestone reached before then (the same time
in every world, before a: a fact) is `actual`, with that day (and date) as `actual_day`, and
the outputs show it instead of a distribution. One on day a itself in every world is actual
only when none of its nodes is floored at a: an event the status does not record happens at
or after a (plan.activities floors it there: big-bang's day-60 drain not done by day 150),
so a time of a in every world may be a strategy's decision due now rather than a fact; it
then shows as its distribution, a point at a. The mean's sums are taken over fixed blocks
of scenarios and added exactly (results.exact_sums), so that, like every other number here,
it is the same for any chunk size. Times are kept exactly for the first exact_up_to
scenarios (KEEP_EXACT, fewer for a large plan: exact_scenarios); past that, each milestone
gets a window of bins (MilestoneBins: at most bins_per_milestone, BIN_DAYS wide or wider by a power
of two) set from its times in those first scenarios, each bin keeping its smallest and
largest time, and its times outside the window kept exactly. An order statistic is exact in
the tails and when it is the first or last of its bin, else within half the milestone's bin
of the exact one (docs/metrics.md, Milestones); memory is bounded by the plan's size and the
tails, whatever the number of scenarios.

Criticality index: the share of scenarios in which the milestone lies on the critical path
to completion. The path is walked back from the completion node (the latest of the
completion nodes; ties: the first in plan order, removals before acceptances) along the
dependency that set each node's time: the dependency with the latest time, when it is not
earlier than the node's own date or drawn date (ties: the dependency, the first listed); a
node set by its own date ends the path. A retrofit row that waited for a crew continues to
the row that crew finished just before (matched within 1e-7 day). A rollup is critical when
any of its members is.
"""
from __future__ import annotations

import datetime as _dt
import functools
import math
import threading
from dataclasses import dataclass

import numpy as np

from .statistics import CI_CONFIDENCE, p90_ci_unavailable_reason, quantile_ci_ranks
from . import milestone_chunks
from ..core.tasks import COMPILED_FROM_NODE_TIMES, run_tasks
from .exact_sums import BlockSums
from .milestone_store import (BINS_BYTES, EXACT_BYTES, KEEP_EXACT, MAX_BINS,  # noqa: F401
                              MIN_BINS, MilestoneBins, bins_per_milestone, exact_scenarios)
from .facts import day_date  # noqa: F401 (one rule for a day's date; the outputs read it here)
from ..plan.record import CompiledScenario
from ..core.definitions import NODE_CREW
from ..core.model import Scenario

BIN_DAYS = 0.01              # histogram bin width past them (widened where a milestone's
                             # times spread over more than its bins)
CREW_TOLERANCE = 1e-7        # days: matching a crew's previous row
_BIN_OFFSET = 2 ** 43        # bins made non-negative for times down to -8.8e10 days
_KEY_STRIDE = 2 ** 45        # key = milestone * stride + bin + offset
QUANTILES = (("p10", 0.10), ("p50", 0.50), ("p90", 0.90))
UNIT_KINDS = ("drain", "removed", "install", "burned_in", "accepted", "ramp")


@dataclass(frozen=True)
class Milestone:
    key: str                   # stable id, e.g. "accepted:N01", "wave:accepted:S2"
    name: str                  # for people, e.g. "N01 accepted"
    kind: str                  # the node kind, or "rollup"
    group: str                 # where it belongs in a Gantt: "shipment S2", "hall B", "row A1" ...
    level: str                 # "unit" (per-unit line) or "wave" (shown by default)
    members: tuple[int, ...]   # node ids
    first: bool = False        # a rollup: the earliest member (else the latest)


def _ancestors(plan: CompiledScenario, s: int, roots) -> set[int]:
    seen, stack = set(), list(roots)
    while stack:
        v = stack.pop()
        if v in seen:
            continue
        seen.add(v)
        stack.extend(int(d) for d in plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]])
    return seen


def _span(ids: list[str]) -> str:
    return ", ".join(ids) if len(ids) <= 2 else f"{ids[0]}..{ids[-1]}"


def definitions(plan: CompiledScenario, scenario: Scenario) -> list[list[Milestone]]:
    """Milestones of every strategy, in plan order: nodes first (file order), then rollups."""
    keys = node_keys(scenario)
    hall_of_row = {row.id: row.hall for row in scenario.rows()}
    shipment_of = {u: ship.id for ship in scenario.shipments for u in ship.units}
    out = []
    for s, strategy in enumerate(scenario.strategies):
        used = _ancestors(plan, s, plan.completion_node.tolist())
        row_of = dict(strategy.placement)
        items = []
        for v, key in enumerate(keys):
            kind, ident = key[0], key[1]
            if kind == "ramp":
                if ident not in row_of:
                    continue
            elif v not in used:
                continue
            if kind in ("drain", "removed"):
                group = f"unit {ident}"
            elif kind in ("install", "burned_in", "accepted", "ramp"):
                group = f"shipment {shipment_of[ident]}"
            elif kind == "arrival":
                group = f"shipment {ident}"
            elif kind == "energized":
                group = f"hall {ident}"
            elif kind == "ready":
                group = f"hall {hall_of_row[ident]}"
            else:
                group = f"island {ident}"
            tag = ":".join(str(k) for k in key)
            items.append(Milestone(tag, plan.node_names[v], kind, group,
                                   "unit" if kind in UNIT_KINDS else "wave", (v,)))
        node = {k: v for v, k in enumerate(keys)}
        waves: dict = {}
        for unit, trigger in strategy.drains:
            waves.setdefault(trigger, []).append(unit)
        for units in waves.values():
            label = _span(units)
            tag = ",".join(units)
            items.append(Milestone(f"wave:drain:{tag}", f"{label}: first drain starts", "rollup",
                                   f"drain wave {label}", "wave",
                                   tuple(node[("drain", u)] for u in units), first=True))
            items.append(Milestone(f"wave:removed:{tag}", f"{label}: all removed", "rollup",
                                   f"drain wave {label}", "wave",
                                   tuple(node[("removed", u)] for u in units)))
        for ship in scenario.shipments:
            units = [u for u in ship.units if u in row_of]
            if not units:
                continue
            items.append(Milestone(f"wave:install:{ship.id}", f"{ship.id} racks: first install "
                                   "starts", "rollup", f"shipment {ship.id}", "wave",
                                   tuple(node[("install", u)] for u in units), first=True))
            items.append(Milestone(f"wave:accepted:{ship.id}", f"{ship.id} racks: all accepted",
                                   "rollup", f"shipment {ship.id}", "wave",
                                   tuple(node[("accepted", u)] for u in units)))
        for hall in scenario.halls:
            units = [u for u, row in strategy.placement if hall_of_row[row] == hall.id]
            if units:
                items.append(Milestone(f"wave:hall:{hall.id}", f"hall {hall.id}: all racks "
                                       "accepted", "rollup", f"hall {hall.id}", "wave",
                                       tuple(node[("accepted", u)] for u in units)))
        items.append(Milestone("completion", "completion", "rollup", "completion", "wave",
                               tuple(int(v) for v in plan.completion_node)))
        out.append(items)
    return out


def node_keys(scenario: Scenario) -> list[tuple]:
    """The node keys in plan.compile._Nodes order (node ids); --fail-if checks keys by them."""
    keys = [("arrival", s.id) for s in scenario.shipments]
    keys += [("energized", h.id) for h in scenario.halls]
    keys += [("island", i.id) for i in scenario.islands]
    for unit in scenario.existing:
        keys += [("drain", unit.id), ("removed", unit.id)]
    keys += [("ready", row.id) for row in scenario.rows()]
    for unit in scenario.incoming:
        keys += [("install", unit.id), ("burned_in", unit.id), ("accepted", unit.id)]
    for unit in scenario.incoming:
        ramp = scenario.unit_type(unit.type).ramp
        keys += [("ramp", unit.id, step) for step in range(1, ramp.steps + 1)] if ramp else []
    return keys


def critical_nodes(plan: CompiledScenario, s: int, times: np.ndarray,
                   world: np.ndarray) -> np.ndarray:
    """bool[c, v]: whether node v lies on scenario i's critical path to completion
    (times: node_time[c, v] of strategy s; world: the scenarios' drawn quantities)."""
    return _critical_by_node(plan, s, np.ascontiguousarray(times.T), world).T


def _critical_by_node(plan: CompiledScenario, s: int, by_node: np.ndarray,
                      world: np.ndarray) -> np.ndarray:
    """critical_nodes on node-major times by_node[v, c] (a node's times contiguous);
    returns bool[v, c]."""
    n_nodes, c = by_node.shape
    rows = np.arange(c)
    driver = np.full((n_nodes, c), -1, dtype=np.int64)
    crew_rows = np.array([v for v in range(n_nodes) if plan.node_kind[s, v] == NODE_CREW],
                         dtype=np.int64)
    for v in sorted(_ancestors(plan, s, plan.completion_node.tolist())):
        deps = plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]].astype(np.int64)
        crew = plan.node_kind[s, v] == NODE_CREW and crew_rows.size > 1
        if not deps.size and not crew:
            continue                                   # set by its own date: the path ends
        base = np.full(c, plan.node_base_const[s, v])
        if plan.node_base_q[v] >= 0:
            base = np.maximum(base, world[:, plan.node_base_q[v]])
        start = base
        if deps.size == 1:
            latest = by_node[deps[0]]
            driver[v] = np.where(latest >= base, deps[0], -1)
            start = np.maximum(base, latest)
        elif deps.size:
            latest = by_node[deps[0]].copy()
            chosen = np.full(c, deps[0], dtype=np.int64)
            for d in deps[1:]:                         # ties: the first listed
                later = by_node[d] > latest
                np.copyto(latest, by_node[d], where=later)
                chosen[later] = d
            driver[v] = np.where(latest >= base, chosen, -1)    # ties: the dependency
            start = np.maximum(base, latest)
        if crew:
            adds = np.full(c, plan.node_add_const[s, v])
            for q in plan.node_add_q[s, v]:
                if q >= 0:
                    adds = adds + world[:, q]
            begin = by_node[v] - adds
            others = crew_rows[crew_rows != v]
            gap = np.abs(by_node[others] - begin)
            k = np.argmin(gap, axis=0)
            waited = (begin > start + CREW_TOLERANCE) & (gap[k, rows] <= CREW_TOLERANCE)
            driver[v] = np.where(waited, others[k], driver[v])
    critical = np.zeros((n_nodes, c), dtype=bool)
    ends = plan.completion_node.astype(np.int64)
    current = ends[np.argmax(by_node[ends], axis=0)]
    active = rows
    for _ in range(n_nodes + 1):
        critical[current, active] = True
        current = driver[current, active]
        keep = current >= 0
        if not keep.any():
            break
        current, active = current[keep], active[keep]
    return critical


def milestone_times(items: list[Milestone], times: np.ndarray) -> np.ndarray:
    """float64[c, m]: each milestone's time in each scenario (times: node_time[c, v])."""
    return _reduce(items, np.ascontiguousarray(times.T), np.min, np.max).T


def _reduce(items: list[Milestone], by_node: np.ndarray, first, last) -> np.ndarray:
    """[m, c]: per milestone, its member rows of by_node[v, c] reduced (first: a 'first ...'
    rollup; last: the others)."""
    out = np.empty((len(items), by_node.shape[1]), dtype=by_node.dtype)
    single = [k for k, item in enumerate(items) if len(item.members) == 1]
    out[single] = by_node[[items[k].members[0] for k in single]]
    for k, item in enumerate(items):
        if len(item.members) > 1:
            out[k] = (first if item.first else last)(by_node[list(item.members)], axis=0)
    return out


def _lerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    """numpy.quantile's linear interpolation between neighbours, to the bit (numpy's _lerp)."""
    diff = b - a
    out = a + diff * t
    if t >= 0.5:
        out = b - diff * (1 - t)
    return np.where(a == b, a, out)


def _linear_quantiles(rows: np.ndarray, qs) -> tuple[np.ndarray, np.ndarray]:
    """(quantiles [len(qs), m] as numpy.quantile(rows, qs, axis=1) gives them, the partitioned
    rows): one partition of rows[m, n] in place for every order statistic needed, the P90
    interval's ranks included."""
    n = rows.shape[1]
    spots = []
    for q in qs:
        h = (n - 1) * q
        below = int(math.floor(h))
        spots.append((below, min(below + 1, n - 1), h - below))
    kth = {i for lo, hi, _ in spots for i in (lo, hi)}
    if p90_ci_unavailable_reason(n) is None:
        kth |= set(_ci_ranks(n))
    rows.partition(sorted(kth), axis=1)
    with np.errstate(invalid="ignore", over="ignore"):
        table = np.array([_lerp(rows[:, lo], rows[:, hi], t) for lo, hi, t in spots])
    return table, rows


def _ci_ranks(n: int, confidence: float = CI_CONFIDENCE) -> tuple[int, int]:
    """0-based ranks (l, u) of the P90 interval's ends: statistics.quantile_ci_ranks, the one
    rule for every quantile interval; asked for only where the interval exists."""
    return quantile_ci_ranks(n, 0.9, confidence)


class _StrategyTimes:
    """One strategy's milestone times: kept exactly up to keep_exact scenarios, then binned;
    with `extremes`, each milestone's earliest and latest time too (exact, any chunking)."""

    def __init__(self, n_items: int, keep_exact: int, bin_days: float, n_bins: int,
                 extremes: bool = False):
        self.n_items, self.keep_exact, self.bin_days = n_items, keep_exact, bin_days
        self.n_bins = n_bins
        self.exact: list[np.ndarray] | None = []
        self.hist: MilestoneBins | None = None
        self.n = 0
        self.total = BlockSums(n_items)     # sums for the mean, whatever the chunking
        self.critical = np.zeros(n_items, np.int64)
        self.low = np.full(n_items, np.inf) if extremes else None
        self.high = np.full(n_items, -np.inf) if extremes else None

    def add(self, values: np.ndarray, critical: np.ndarray) -> None:
        """values[m, c]: a chunk's milestone times (this object keeps the array); critical[m]: in how many of the chunk's scenarios each is on the critical path."""
        if self.low is not None and values.shape[1]:
            np.minimum(self.low, values.min(axis=1), out=self.low)
            np.maximum(self.high, values.max(axis=1), out=self.high)
        self.n += values.shape[1]
        self.total.add(values)
        self.critical += critical
        if self.exact is not None and self.n <= self.keep_exact:
            self.exact.append(values)
            return
        if self.hist is None:                  # past keep_exact: the window from the first
            kept = np.concatenate([*self.exact, values], axis=1)   # keep_exact scenarios
            self.hist = MilestoneBins(kept[:, :self.keep_exact], self.bin_days, self.n_bins)
            self.exact = None
            self.hist.add(kept)
            return
        self.hist.add(values)

    def stats(self) -> list[dict]:
        """Per milestone: mean, p10, p50, p90, p90_ci (or p90_ci_unavailable), criticality."""
        n = self.n
        reason = p90_ci_unavailable_reason(n)
        if self.exact is not None:
            kept = np.concatenate(self.exact, axis=1)                   # [m, n]
            table, kept = _linear_quantiles(kept, [q for _, q in QUANTILES])   # [3, m]
            if reason is None:
                low, high = _ci_ranks(n)                # ranks as scipy's quantile_test
                ends = kept[:, [low, high]]                                   # [m, 2]
        else:
            table = self.hist.quantiles(n, [q for _, q in QUANTILES])
            if reason is None:
                ends = self.hist.order_statistics(_ci_ranks(n))
            widths = self.hist.widths()
        totals = self.total.sums()
        out = []
        for k in range(self.n_items):
            row: dict = {"mean": _finite(totals[k] / n)}
            for j, (key, _) in enumerate(QUANTILES):
                row[key] = _finite(table[j, k])
            if reason is None and np.isfinite(ends[k]).all():
                row["p90_ci"] = [float(ends[k, 0]), float(ends[k, 1])]
            else:
                row["p90_ci"] = None
                row["p90_ci_unavailable"] = reason or "an end of the interval is not a finite number"
            row["criticality"] = float(self.critical[k] / n)
            if self.exact is None:
                row["bin_days"] = float(widths[k])
            out.append(row)
        return out


def _finite(value) -> float | None:
    value = float(value)
    return value if math.isfinite(value) else None


@dataclass(frozen=True)
class _PathArrays:
    """One strategy's milestones and critical-path inputs as flat arrays, for the compiled
    loops: members of milestone k are members[member_ptr[k]:member_ptr[k + 1]]."""

    member_ptr: np.ndarray      # int64[m + 1]
    members: np.ndarray         # int64[sum of members]
    first: np.ndarray           # bool[m]: a "first ..." rollup (the earliest member)
    is_ancestor: np.ndarray     # bool[v]: a node completion waits for (or a completion node)
    is_crew: np.ndarray         # bool[v]: a crew row
    crew_rows: np.ndarray       # int64: the crew rows, ascending

    @classmethod
    def of(cls, plan: CompiledScenario, s: int, items: list[Milestone]) -> "_PathArrays":
        sizes = [len(item.members) for item in items]
        is_crew = plan.node_kind[s] == NODE_CREW
        return cls(member_ptr=np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64),
                   members=np.array([v for item in items for v in item.members], np.int64),
                   first=np.array([item.first for item in items], np.bool_),
                   is_ancestor=np.isin(np.arange(plan.n_nodes),
                                       list(_ancestors(plan, s, plan.completion_node.tolist()))),
                   is_crew=is_crew, crew_rows=np.flatnonzero(is_crew).astype(np.int64))


class MilestoneCollector:
    """A simulate() chunk hook: every strategy's milestone times and criticality, streamed."""

    def __init__(self, plan: CompiledScenario, scenario: Scenario,
                 keep_exact: int | None = None, bin_days: float = BIN_DAYS,
                 as_of: float | None = None, n_bins: int | None = None):
        """`as_of`: a status's day; milestones reached by then show their actual day (and the
        collector keeps each milestone's earliest and latest time to tell); None: none."""
        self.plan = plan
        self.start_date = scenario.start_date
        self.as_of = None if as_of is None else float(as_of)
        self.items = definitions(plan, scenario)
        count = sum(len(items) for items in self.items)
        keep_exact = exact_scenarios(count) if keep_exact is None else keep_exact
        n_bins = bins_per_milestone(count) if n_bins is None else n_bins
        self.keep_exact, self.bin_days, self.n_bins = keep_exact, bin_days, n_bins
        self.times = [_StrategyTimes(len(items), keep_exact, bin_days, n_bins,
                                     self.as_of is not None)
                      for items in self.items]
        self.paths = [_PathArrays.of(plan, s, items) for s, items in enumerate(self.items)]
        self._most_items = max((len(items) for items in self.items), default=0)
        self._spare = threading.local()          # _values' array of each hook thread

    def __call__(self, first, metrics, world, node_times) -> None:
        run_tasks(self.tasks(first, metrics, world, node_times))

    def tasks(self, first, metrics, world, node_times) -> list:
        """Every strategy's milestone times and critical-path counts of one chunk, as one
        task per strategy (core.tasks runs them side by side), read from
        node_times[c, s, v] as the kernel wrote it (milestone_chunks: compiled loops that
        follow _reduce and _critical_by_node, the specification). Node times that carry
        their chunk on the device (`device_chunk`: the cuda backend's, mcrisk.backends.cuda
        .DeviceChunk) are reduced there, by the same rules (kernels/milestones.cuh)."""
        device = getattr(node_times, "device_chunk", None)
        if device is not None:
            return [functools.partial(self._add_on_device, device, node_times.shape[0])]
        node_times = np.ascontiguousarray(node_times)
        world = np.ascontiguousarray(world)
        if node_times.size < COMPILED_FROM_NODE_TIMES:
            return [functools.partial(self._add_by_numpy, s, world, node_times)
                    for s in range(len(self.items))]

        return [functools.partial(self._add_compiled, s, world, node_times)
                for s in range(len(self.items))]

    def _add_compiled(self, s: int, world: np.ndarray, node_times: np.ndarray) -> None:
        """Strategy s's milestone times and critical-path counts of one chunk, by the
        compiled loops (milestone_chunks.chunk_milestones)."""
        items, path, plan = self.items[s], self.paths[s], self.plan
        values = self._values(len(items), node_times.shape[0], self.times[s].exact is None)
        critical = np.zeros(len(items), np.int64)
        milestone_chunks.chunk_milestones(
            node_times, world, s, path.member_ptr, path.members, path.first,
            path.is_ancestor, plan.dep_ptr, plan.dep_idx, path.is_crew, path.crew_rows,
            plan.node_base_const, plan.node_base_q, plan.node_add_const, plan.node_add_q,
            plan.completion_node.astype(np.int64), CREW_TOLERANCE, values, critical)
        self.times[s].add(values, critical)

    def _values(self, n_items: int, count: int, past_exact: bool) -> np.ndarray:
        """An [n_items, count] array for a strategy's milestone times of a chunk: a new one
        while _StrategyTimes keeps them (the exact scenarios), past them this thread's spare
        (a chunk's add() keeps nothing of it). Performance: fresh pages cost the kernel's
        zeroing and faults, 0.065 CPU-s a reference chunk (five strategies' 51 MB) against
        0.006 for a reused array; a spare per hook thread holds no more than the strategies
        reduced at once (backends.chunks.chunk_output_bytes counts them)."""
        if not past_exact:
            return np.empty((n_items, count))
        spare = getattr(self._spare, "array", None)
        if spare is None or spare.size < n_items * count:
            spare = self._spare.array = np.empty(self._most_items * count)
        return spare[:n_items * count].reshape(n_items, count)

    def _add_on_device(self, device, count: int) -> None:
        """Every strategy of a chunk whose node times are on the device, one after the other
        (one device: its kernels queue anyway); device.chunk_milestones takes
        milestone_chunks.chunk_milestones' arguments after node_times and world."""
        plan = self.plan
        for s, (items, path) in enumerate(zip(self.items, self.paths)):
            values = np.empty((len(items), count))
            critical = np.zeros(len(items), np.int64)
            device.chunk_milestones(
                s, path.member_ptr, path.members, path.first, path.is_ancestor, plan.dep_ptr,
                plan.dep_idx, path.is_crew, path.crew_rows, plan.node_base_const,
                plan.node_base_q, plan.node_add_const, plan.node_add_q,
                plan.completion_node.astype(np.int64), CREW_TOLERANCE, values, critical)
            self.times[s].add(values, critical)

    def _add_by_numpy(self, s: int, world: np.ndarray, node_times: np.ndarray) -> None:
        """Strategy s of a small chunk, by the NumPy specification (same numbers)."""
        items = self.items[s]
        by_node = np.ascontiguousarray(node_times[:, s, :].T)             # [v, c]
        critical = _critical_by_node(self.plan, s, by_node, world)
        self.times[s].add(_reduce(items, by_node, np.min, np.max),
                          _reduce(items, critical, np.any, np.any).sum(axis=1))

    def summary(self) -> dict:
        """summary.json's `milestones` (docs/metrics.md, Milestones); with as_of, also
        `as_of` and on every milestone `actual` (reached: the same time in every world,
        before as_of or on it and not floored there), with `actual_day` (and `actual_date`) where it is."""
        n = self.times[0].n if self.times else 0
        exact = all(t.exact is not None for t in self.times)
        strategies = {}
        for s, (name, items, kept) in enumerate(zip(self.plan.strategy_names, self.items,
                                                  self.times)):
            rows = []
            for k, (item, numbers) in enumerate(zip(items, kept.stats())):
                row = {"key": item.key, "name": item.name, "kind": item.kind,
                       "group": item.group, "level": item.level, **numbers}
                if self.start_date is not None:
                    row["dates"] = {key: day_date(self.start_date, row[key])
                                    for key, _ in QUANTILES}
                if self.as_of is not None:
                    row.update(self._actual(kept, k, s, item))
                rows.append(row)
            strategies[name] = rows
        widest = max((float(t.hist.widths().max()) for t in self.times
                      if t.hist is not None and t.n_items), default=self.bin_days)
        return {"samples": n, "exact": exact,
                "exact_up_to": self.keep_exact, "bin_days": self.bin_days,
                "bins_per_milestone": self.n_bins, "widest_bin_days": widest,
                "start_date": self.start_date.isoformat() if self.start_date else None,
                **({"as_of": self.as_of} if self.as_of is not None else {}),
                "strategies": strategies}

    def _actual(self, kept: _StrategyTimes, k: int, s: int, item: Milestone) -> dict:
        """A milestone's `actual` keys: reached when its time is the same in every world and
        before as_of, or on as_of with none of its nodes floored there (a fact of the status;
        the module's docstring says why)."""
        low, high = float(kept.low[k]), float(kept.high[k])
        floored = bool(np.isfinite(self.plan.node_floor[s, list(item.members)]).any())
        if not (kept.n and low == high
                and (low < self.as_of or (low == self.as_of and not floored))):
            return {"actual": False}
        row = {"actual": True, "actual_day": low}
        if self.start_date is not None:
            row["actual_date"] = day_date(self.start_date, low)
        return row


def share_text(share: float) -> str:
    """A criticality as a percentage that never rounds to a false 0% or 100%."""
    if 0 < share < 0.0005:
        return "<0.1%"
    if 0.9995 <= share < 1:
        return ">99.9%"
    return f"{share:.1%}"


def weekday(iso: str | None) -> str:
    return _dt.date.fromisoformat(iso).strftime("%a") if iso else ""
