"""Capacity bands and per-hall power, reduced by streaming over chunks of node times.

For every strategy and integer day d = 0 .. floor(H) the total capacity C(d) and the largest
island's capacity are rebuilt from the capacity events' node times, each event scaled as the
kernels scale it (definitions.event_deltas: a new unit's GPUs x the scenario's drawn
h100_eq_per_gpu x its ramp share, where performance is uncertain): an event counts at day d
when its time is <= d (events at one instant apply together, so a same-day drain and
acceptance both count). Per (strategy, day) a histogram of the values is kept; its size never
depends on the number of scenarios.

Fixed performance (every unit type's h100_eq_per_gpu a number: the common case): exact.
Values are handled as integers of 1e-6 H100-eq (or kW): every capacity is a sum of unit
capacities, so integer arithmetic removes float summation noise and makes the counts exact.
Such integers are exact in float64 and int64 below 2**53 (about 9e9 H100-eq); a value or total
beyond it raises BandsOverflow instead of wrapping around (validation keeps totals under 1e9).

Drawn performance (some h100_eq_per_gpu a distribution, drawn once per scenario and type):
capacities are continuous, so their distinct values are unbounded. A value that no drawn
event has touched yet (the old fleet before any such acceptance, fixed-performance types) is
still counted exactly as above. A value with a drawn part goes into a fixed-width bin: bin k
holds [k w, (k + 1) w) and stands for its midpoint (k + 1/2) w. The width starts at
w = 1e-3 x B (B the baseline; 2.048 H100-eq in the reference): an error of at most 0.05% of
B, far under a pixel of the report's charts, and relative, so it suits a cluster of any size
where a fixed 0.1 H100-eq would cost bins for nothing on a large one. It doubles, merging
bins pairwise (exact: counts add), whenever one histogram's occupied bins would span more
than MAX_BINS = 2,048 of them (a range over 2 x B at the first width), so memory is at most
MAX_BINS counts per day per histogram, whatever the number of scenarios.

Guarantee: every value is replaced by a stand-in at most w / 2 away (0 for exact values), and
an order statistic moves by at most the largest such shift, so each band value is within
w / 2 of numpy.quantile(method='inverted_cdf') of the exact capacities (to float rounding).
CapacityBands.resolution is the largest w any histogram of the run ended with (0.0 when
exact), recorded in capacity_bands.parquet's metadata. P(C(d) < B) is counted exactly in
both cases, from the unbinned values, with the kernels' tolerance (C < B - 1e-9 x B).

Band quantiles use numpy.quantile's method 'inverted_cdf': the smallest value v with
count(values <= v) >= n * q (so with fixed performance a band value is always a capacity
that some scenario had; with drawn performance, within w / 2 of one).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from ..core.tasks import COMPILED_FROM_NODE_TIMES, run_tasks
from ..core.definitions import REL_EPS, event_deltas
from ..plan.record import CompiledScenario
from ..core.errors import McriskError
from . import band_chunks
from .band_histograms import (BAND_QUANTILES, MAX_BINS, BinnedHistogram,  # noqa: F401
                              DayHistogram, ExactHistogram, Grid, _histogram,
                              inverted_cdf_index, merged_quantiles)

MICRO = 1_000_000                 # integer units per H100-eq (or per kW)
MAX_EXACT = 2 ** 53               # micro-units exact in float64 (and far inside int64)
QUANTILE_METHOD = "inverted_cdf"
RESOLUTION_OF_BASELINE = 1e-3     # drawn performance: first bin width, as a share of B


class BandsOverflow(McriskError):
    """A capacity or power too large to count exactly in micro-units."""


def to_units(values, what: str = "a capacity or power") -> np.ndarray:
    """float H100-eq (or kW) -> int64 micro-units; BandsOverflow beyond MAX_EXACT (or not
    finite), where the cast would wrap silently."""
    scaled = np.rint(np.asarray(values, dtype=np.float64) * MICRO)
    if scaled.size and not (np.abs(scaled) < MAX_EXACT).all():
        worst = scaled.flat[np.argmax(~(np.abs(scaled) < MAX_EXACT))] / MICRO
        raise _overflow(what, worst)
    return scaled.astype(np.int64)


def _overflow(what: str, value: float) -> BandsOverflow:
    return BandsOverflow(f"capacity bands: {what} of {value:,.6g} is beyond "
                         f"{MAX_EXACT / MICRO:,.0f}, the most they count exactly in millionths "
                         "(see Limits in docs/scenario-format.md: a scenario's totals stay "
                         "under 1e9)")


def _gcd_grid(base: list[int], deltas: np.ndarray, lo: int, hi: int) -> Grid:
    step = 0
    for value in [*base, *np.abs(deltas).tolist()]:
        step = math.gcd(step, int(value))
    step = step or 1
    lo = (lo // step) * step
    return Grid(lo=lo, step=step, n_bins=(hi - lo) // step + 1)


def capacity_grids(plan: CompiledScenario) -> tuple[Grid, Grid]:
    """Grids holding every possible total and largest-island capacity of `plan`.

    BandsOverflow when a total could pass MAX_EXACT (the running sums would wrap)."""
    cap0 = to_units(plan.island_cap0, "a capacity at day 0")
    delta = to_units(plan.cap_event_delta, "a capacity change")
    base = cap0.tolist()

    def exact_sum(values: np.ndarray) -> int:   # Python ints: no int64 wrap-around
        return sum(values.tolist())

    total_lo = exact_sum(cap0) + exact_sum(delta[delta < 0])
    total_hi = exact_sum(cap0) + exact_sum(delta[delta > 0])
    for total in (total_lo, total_hi):
        if abs(total) >= MAX_EXACT:
            raise _overflow("a total capacity", total / MICRO)
    # a new unit's island is its strategy's choice: every strategy's islands
    island_lo = min(int(cap0[i] + delta[(islands == i) & (delta < 0)].sum())
                    for islands in plan.cap_event_island for i in range(cap0.size))
    island_hi = max(int(cap0[i] + delta[(islands == i) & (delta > 0)].sum())
                    for islands in plan.cap_event_island for i in range(cap0.size))
    return (_gcd_grid(base, delta, total_lo, total_hi),
            _gcd_grid(base, delta, min(island_lo, 0), island_hi))


def n_band_days(plan: CompiledScenario) -> int:
    """Days 0 .. floor(H): floor(H) + 1 of them."""
    return int(math.floor(plan.horizon)) + 1


def capacity_pieces(plan: CompiledScenario, s: int, event_times: np.ndarray, n_days: int):
    """(start, end, total, largest), each int64[b, k + 1]: capacity as pieces over days.

    event_times: float64[b, k], the times of plan.cap_event_node of strategy s. An event
    counts from day ceil(t) on (t <= d); events after the last day never count. Piece j holds
    the capacity after the j-th event (by day) over days start .. end - 1; events on one day
    make empty pieces, so they apply together. Capacities in micro-units.
    """
    b, k = event_times.shape
    day = np.ceil(event_times)
    day[~(day < n_days)] = n_days                      # later than the last day, inf, nan
    day = np.maximum(day, 0).astype(np.int64)
    order = np.argsort(day, axis=1, kind="stable")
    day = np.take_along_axis(day, order, axis=1)
    cap0 = to_units(plan.island_cap0)
    delta = to_units(plan.cap_event_delta)[order]      # [b, k], by day
    island = plan.cap_event_island[s][order]
    zero = np.zeros((b, 1), np.int64)
    # performance: 2-D cumsums per island, not one over [b, k, islands] (tiny last axis)
    total = int(cap0.sum()) + np.concatenate([zero, np.cumsum(delta, axis=1)], axis=1)
    largest = None
    for i in range(cap0.size):
        mine = np.where(island == i, delta, 0)
        cap = cap0[i] + np.concatenate([zero, np.cumsum(mine, axis=1)], axis=1)
        largest = cap if largest is None else np.maximum(largest, cap)
    start = np.concatenate([zero, day], axis=1)
    end = np.concatenate([day, np.full((b, 1), n_days, np.int64)], axis=1)
    return start, end, total, largest


def has_drawn_performance(plan: CompiledScenario) -> bool:
    """Whether some capacity event is scaled by a drawn h100_eq_per_gpu."""
    return bool((plan.cap_event_scale_q >= 0).any())


def drawn_capacity_pieces(plan: CompiledScenario, s: int, event_times: np.ndarray,
                          world: np.ndarray, n_days: int):
    """capacity_pieces for a plan with drawn performance: (start, end, total, total_drawn,
    largest, largest_drawn), each [b, k + 1].

    world: float64[b, q], the same scenarios' drawn quantities. Each event adds what the
    kernels add (event_deltas: GPUs x drawn H100-eq per GPU x ramp share). Values are float64
    micro-units: the fixed part summed as integers (exact), the drawn part as floats; *_drawn
    says where a value has a nonzero drawn part (else it is an exact integer).
    """
    b, k = event_times.shape
    day = np.ceil(event_times)
    day[~(day < n_days)] = n_days
    day = np.maximum(day, 0).astype(np.int64)
    order = np.argsort(day, axis=1, kind="stable")
    day = np.take_along_axis(day, order, axis=1)
    scaled = plan.cap_event_scale_q >= 0
    fixed = np.where(scaled, 0, to_units(plan.cap_event_delta))[order]            # [b, k] int
    drawn = np.where(scaled, event_deltas(plan, world), 0.0) * MICRO               # [b, k] float
    if not (np.isfinite(drawn) & (np.abs(drawn) < MAX_EXACT)).all():
        raise _overflow("a drawn capacity change", float(np.nanmax(np.abs(drawn))) / MICRO)
    drawn = np.take_along_axis(drawn, order, axis=1)
    island = plan.cap_event_island[s][order]
    cap0 = to_units(plan.island_cap0)
    zero_i, zero_f = np.zeros((b, 1), np.int64), np.zeros((b, 1))

    def running(base: int, fixed_part: np.ndarray, drawn_part: np.ndarray):
        exact = base + np.concatenate([zero_i, np.cumsum(fixed_part, axis=1)], axis=1)
        extra = np.concatenate([zero_f, np.cumsum(drawn_part, axis=1)], axis=1)
        return exact + extra, extra != 0

    total, total_drawn = running(int(cap0.sum()), fixed, drawn)
    largest = largest_drawn = None
    for i in range(cap0.size):
        mine = island == i
        cap, cap_drawn = running(int(cap0[i]), np.where(mine, fixed, 0), np.where(mine, drawn, 0.0))
        if largest is None:
            largest, largest_drawn = cap, cap_drawn
        else:
            higher = cap > largest
            largest = np.where(higher, cap, largest)
            largest_drawn = np.where(higher, cap_drawn, largest_drawn)
    if not (np.abs(total) < MAX_EXACT).all():
        raise _overflow("a total capacity", float(np.abs(total).max()) / MICRO)
    start = np.concatenate([zero_i, day], axis=1)
    end = np.concatenate([day, np.full((b, 1), n_days, np.int64)], axis=1)
    return start, end, total, total_drawn, largest, largest_drawn


def hall_peak_draw(plan: CompiledScenario, s: int, node_times: np.ndarray) -> np.ndarray:
    """float64[c, halls]: each hall's highest draw in kW at any time, strategy s.

    Mirrors backends/numpy/metrics.power_violation: events at one instant apply together, so the
    draw is read only after the last event of a tie group.
    """
    c = node_times.shape[0]
    times = node_times[:, plan.power_event_node]
    order = np.argsort(times, axis=1, kind="stable")
    times = np.take_along_axis(times, order, axis=1)
    group_end = np.concatenate([times[:, 1:] != times[:, :-1], np.ones((c, 1), bool)], axis=1)
    peak = np.empty((c, plan.hall_cap.size))
    for h in range(plan.hall_cap.size):
        delta = np.where(plan.power_event_hall[s] == h, plan.power_event_delta, 0.0)[order]
        draw = plan.hall_draw0[h] + np.cumsum(delta, axis=1)
        latest = np.where(group_end, draw, -np.inf).max(axis=1, initial=-np.inf)  # 0 events ok
        peak[:, h] = np.maximum(plan.hall_draw0[h], latest)
    return peak


def exceeds_cap(plan: CompiledScenario, peak_kw: np.ndarray) -> np.ndarray:
    """bool[c, halls]: peak above the hall's cap (same tolerance as the kernels)."""
    return peak_kw > plan.hall_cap * (1.0 + REL_EPS)


@dataclass(frozen=True)
class HallPower:
    """One hall under one strategy: its cap, and its peak draw (the highest draw at any
    time, after H too) over the scenarios. Quantiles as numpy's 'inverted_cdf'."""

    hall: str
    cap_kw: float
    probability_over: float           # P(peak draw > cap), with the kernels' tolerance
    peak_p50_kw: float
    peak_p90_kw: float
    peak_max_kw: float                # the highest peak in any scenario
    peak_min_kw: float                # the lowest peak in any scenario

    @property
    def headroom_kw(self) -> float:
        """cap - the highest peak in any scenario (negative: over the cap)."""
        return self.cap_kw - self.peak_max_kw

    @property
    def headroom_share(self) -> float | None:
        """headroom_kw as a share of the cap (None for a cap of 0)."""
        return self.headroom_kw / self.cap_kw if self.cap_kw > 0 else None


@dataclass(frozen=True)
class CapacityBands:
    """Bands per strategy: arrays [strategy, day] in H100-eq."""

    strategy_names: tuple[str, ...]
    days: np.ndarray                  # int64[d]
    total: np.ndarray                 # float64[s, d, 3]  P10, P50, P90 of C(d)
    largest: np.ndarray               # float64[s, d, 3]  ... of the largest island's capacity
    p_below_baseline: np.ndarray      # float64[s, d]     P(C(d) < B - 1e-9 B), exact
    samples: int
    # 0.0: every band value exact; else the widest bin (H100-eq) of a drawn-performance run:
    # every band value is within resolution / 2 of the exact 'inverted_cdf' quantile
    resolution: float = 0.0


class BandCollector:
    """A simulate() chunk hook: capacity histograms per (strategy, day), peak draw per hall.

    Fixed performance: one ExactHistogram per strategy for the total (self.total) and one for
    the largest island (self.largest). Drawn performance: these hold the values without a
    drawn part, and self.total_binned / self.largest_binned (BinnedHistogram) the others.
    """

    def __init__(self, plan: CompiledScenario):
        self.plan = plan
        self.n_days = n_band_days(plan)
        total_grid, island_grid = capacity_grids(plan)
        s_count = plan.n_strategies
        self.drawn = has_drawn_performance(plan)
        self.baseline_units = int(to_units(plan.island_cap0).sum())
        # "below the baseline" as the kernels define it: C < B - 1e-9 B
        self.below_limit = self.baseline_units - REL_EPS * self.baseline_units
        if self.drawn:
            width = int(round(RESOLUTION_OF_BASELINE * max(self.baseline_units, MICRO)))
            self.total = [ExactHistogram(self.n_days) for _ in range(s_count)]
            self.largest = [ExactHistogram(self.n_days) for _ in range(s_count)]
            self.total_binned = [BinnedHistogram(self.n_days, width) for _ in range(s_count)]
            self.largest_binned = [BinnedHistogram(self.n_days, width) for _ in range(s_count)]
            self.below = np.zeros((s_count, self.n_days + 1), dtype=np.int64)   # difference form
        else:
            self.total = [_histogram(self.n_days, total_grid) for _ in range(s_count)]
            self.largest = [_histogram(self.n_days, island_grid) for _ in range(s_count)]
        self.peak = [[ExactHistogram(1) for _ in plan.hall_names] for _ in range(s_count)]
        self.over = np.zeros((s_count, len(plan.hall_names)), dtype=np.int64)
        self.compiled = (not self.drawn and all(h.grid is not None
                                                for h in (*self.total, *self.largest)))
        self.delta_units = to_units(plan.cap_event_delta)
        self.cap0_units = to_units(plan.island_cap0)

    def __call__(self, first: int, metrics: np.ndarray, world: np.ndarray,
                 node_times: np.ndarray) -> None:
        run_tasks(self.tasks(first, metrics, world, node_times))

    def tasks(self, first: int, metrics: np.ndarray, world: np.ndarray,
              node_times: np.ndarray) -> list:
        """One chunk as one task per strategy (core.tasks runs them side by side;
        each touches only its strategy's histograms and row of `over`). Node times that
        carry their chunk on the device (`device_chunk`: the cuda backend's,
        mcrisk.backends.cuda.DeviceChunk, or the host build's) have their capacity blocks and
        hall peaks (or, for a large grid, the day keys, then sorted and counted here) reduced
        there by the same rules (kernels/bands.cuh), every strategy in one task (one device:
        its kernels queue anyway)."""
        device = getattr(node_times, "device_chunk", None)
        if not getattr(device, "reduces_bands", False):
            device = None
        node_times = np.ascontiguousarray(node_times)
        if device is not None:
            return [functools.partial(self._add_strategies, world, node_times, device)]
        return [functools.partial(self._add_strategy, s, world, node_times)
                for s in range(self.plan.n_strategies)]

    def _add_strategies(self, world: np.ndarray, node_times: np.ndarray, device) -> None:
        for s in range(self.plan.n_strategies):
            self._add_strategy(s, world, node_times, device)

    def _add_strategy(self, s: int, world: np.ndarray, node_times: np.ndarray,
                      device=None) -> None:
        """Strategy s's capacity pieces and hall peak draws of one chunk. A contingent row's
        capacity is, world by world, its branch's: the branch's events with the branch's
        islands (its placement says which island each new unit joins), as for the peaks."""
        plan = self.plan
        compiled = node_times.size >= COMPILED_FROM_NODE_TIMES
        for c in (c for c in plan.contingencies if c.row == s):
            met = c.met(node_times)
            for worlds, branch in ((met, c.met_row), (~met, c.unmet_row)):
                if worlds.any():
                    self._add_capacity(s, branch, world[worlds],
                                       np.ascontiguousarray(node_times[worlds]), compiled)
            break
        else:
            self._add_capacity(s, s, world, node_times, compiled, device)
        peak = self._peak(s, node_times, compiled, device)
        self.over[s] += exceeds_cap(plan, peak).sum(axis=0)
        for h, histogram in enumerate(self.peak[s]):
            histogram.add(to_units(peak[:, h:h + 1], "a hall's peak draw in kW"))

    def _add_capacity(self, s: int, source: int, world: np.ndarray, node_times: np.ndarray,
                      compiled: bool, device=None) -> None:
        """Row `source`'s capacity pieces of these worlds into row s's histograms."""
        plan = self.plan
        if self.drawn:
            self._add_drawn(s, source, node_times[:, source, plan.cap_event_node], world)
        elif self.compiled and compiled and isinstance(self.total[s], DayHistogram):
            self._add_compiled_days(s, source, node_times, device)
        elif self.compiled and compiled:
            self._add_compiled(s, source, node_times, device)
        else:
            start, end, total, largest = capacity_pieces(
                plan, source, node_times[:, source, plan.cap_event_node], self.n_days)
            self.total[s].add_pieces(start, end, total)
            self.largest[s].add_pieces(start, end, largest)

    def _peak(self, s: int, node_times: np.ndarray, compiled: bool, device=None) -> np.ndarray:
        """Row s's peak draw per world and hall; a contingent row's is, world by world, its
        branch's (whose placement says which hall each new unit draws in)."""
        plan = self.plan
        for c in (c for c in plan.contingencies if c.row == s):
            return np.where(c.met(node_times)[:, None], self._peak(c.met_row, node_times, compiled),
                            self._peak(c.unmet_row, node_times, compiled))
        if not compiled:
            return hall_peak_draw(plan, s, node_times[:, s, :])
        peak = np.empty((node_times.shape[0], plan.hall_cap.size))
        _reduction(device, "peak_draws", node_times)(
            s, plan.power_event_node, plan.power_event_hall[s], plan.power_event_delta,
            plan.hall_draw0, peak)
        return peak

    def _add_compiled(self, s: int, source: int, node_times: np.ndarray, device=None) -> None:
        """Strategy s's capacity pieces straight into the grid's blocks (band_chunks: the
        compiled form of capacity_pieces and add_pieces, with the same counts)."""
        total, largest = self.total[s], self.largest[s]
        size = self.n_days + 1
        if device is None:          # column order: band_chunks.capacity_blocks' performance
            blocks = [np.zeros((h.grid.n_bins, size), np.int32).T for h in (total, largest)]
        else:
            blocks = [np.zeros((size, h.grid.n_bins), np.int32) for h in (total, largest)]
        _reduction(device, "capacity_blocks", node_times)(
            source, self.plan.cap_event_node, self.delta_units,
            self.plan.cap_event_island[source], self.cap0_units, self.n_days, total.grid.lo,
            total.grid.step, blocks[0], largest.grid.lo, largest.grid.step, blocks[1])
        total.add_block(blocks[0], node_times.shape[0])
        largest.add_block(blocks[1], node_times.shape[0])

    def _add_compiled_days(self, s: int, source: int, node_times: np.ndarray,
                           device=None) -> None:
        """Strategy s's capacity on every day of the chunk's scenarios as DayHistogram keys
        (band_chunks.capacity_day_keys: capacity_pieces' pieces, each written on its days)."""
        total, largest = self.total[s], self.largest[s]
        c = node_times.shape[0]
        keys = [np.empty(c * self.n_days, np.int64) for _ in range(2)]
        _reduction(device, "capacity_day_keys", node_times)(
            source, self.plan.cap_event_node, self.delta_units,
            self.plan.cap_event_island[source], self.cap0_units, self.n_days, total.grid.lo,
            total.grid.step, total.grid.n_bins, largest.grid.lo, largest.grid.step,
            largest.grid.n_bins, keys[0], keys[1])
        total.add_keys(keys[0], c)
        largest.add_keys(keys[1], c)

    def _add_drawn(self, s: int, source: int, event_times: np.ndarray,
                   world: np.ndarray) -> None:
        """Row `source`'s pieces into row s's histograms: values without a drawn part to the
        exact ones, the others to the binned ones (each piece to one of them: empty, start ==
        end, in the other)."""
        start, end, total, total_drawn, largest, largest_drawn = drawn_capacity_pieces(
            self.plan, source, event_times, world, self.n_days)
        for exact, binned, values, drawn in ((self.total[s], self.total_binned[s], total,
                                              total_drawn),
                                             (self.largest[s], self.largest_binned[s], largest,
                                              largest_drawn)):
            exact.add_pieces(start, np.where(drawn, start, end),
                             np.where(drawn, 0.0, values).astype(np.int64))
            binned.add_pieces(start, np.where(drawn, end, start), values)
        below = total < self.below_limit
        size = self.n_days + 1
        self.below[s] += (np.bincount(start[below], minlength=size)
                          - np.bincount(end[below], minlength=size))

    def bands(self) -> CapacityBands:
        plan = self.plan
        n = self.total[0].n if self.total else 0
        if self.drawn:
            def band(exact: ExactHistogram, binned: BinnedHistogram) -> np.ndarray:
                keys, counts = exact.table()
                return merged_quantiles([(keys, counts), binned.table()], n) / MICRO
            total = np.stack([band(*h) for h in zip(self.total, self.total_binned)])
            largest = np.stack([band(*h) for h in zip(self.largest, self.largest_binned)])
            below = np.cumsum(self.below, axis=1)[:, :self.n_days] / max(n, 1)
            resolution = max(h.width for h in (*self.total_binned, *self.largest_binned)) / MICRO
        else:
            total = np.stack([h.quantiles() for h in self.total]) / MICRO
            largest = np.stack([h.quantiles() for h in self.largest]) / MICRO
            threshold = int(math.ceil(self.below_limit))      # integer v < limit iff v < ceil
            below = np.stack([h.fraction_below(threshold) for h in self.total])
            resolution = 0.0
        return CapacityBands(
            strategy_names=plan.strategy_names,
            days=np.arange(self.n_days, dtype=np.int64),
            total=total, largest=largest, p_below_baseline=below, samples=n,
            resolution=float(resolution))

    def hall_power(self) -> dict[str, list[HallPower]]:
        """{strategy: [HallPower per hall]}; peak quantiles use 'inverted_cdf' too."""
        plan = self.plan
        out = {}
        for s, name in enumerate(plan.strategy_names):
            rows = []
            for h, hall in enumerate(plan.hall_names):
                histogram = self.peak[s][h]
                low, p50, p90, top = histogram.quantiles((0.0, 0.5, 0.9, 1.0))[0] / MICRO
                rows.append(HallPower(hall, float(plan.hall_cap[h]),
                                      float(self.over[s, h] / max(histogram.n, 1)),
                                      float(p50), float(p90), float(top), float(low)))
            out[name] = rows
        return out


def _reduction(device, name: str, node_times: np.ndarray):
    """band_chunks' reduction `name` with the chunk's node times bound: the device chunk's
    (which holds its own node times) where there is one, else Numba's on the host copy."""
    if device is not None:
        return getattr(device, name)
    return functools.partial(getattr(band_chunks, name), node_times)
