"""A plain SimPy model of the reference migration: an independent peer of mcrisk.

    python benchmarks/simpy_model.py [--samples 3000] [--seed 1] [--compare 20000] [--workers 1]

Written the way a capacity planner would write it in SimPy, straight from the description of
the reference scenario and its metrics (docs/metrics.md): one process per shipment, per old SU,
per new rack and per row retrofit, hall B energization and the xdr fabric as events, the single
retrofit crew as a `simpy.Resource`, random draws on the fly from a numpy Generator. Only the
strategies (placement and drain triggers) are read from the TOML, through
`mcrisk.scenario.load_scenario`; durations, fleets and facility are the reference's constants
written out below. Nothing of mcrisk's compile step, random generator or backends is used, so
agreement with `mcrisk run` is statistical (different draws) and checks the engine against a
second reading of the definitions.

With --compare N it also runs the Numba backend on N scenarios and prints, per strategy and
metric, P50 and P90 of both with the 95% intervals (binomial order statistics) and whether they
overlap, then the means (z of the difference) and a two-sample Kolmogorov-Smirnov p-value.
tests/backends/test_simpy_peer.py asserts that the intervals overlap.
"""
from __future__ import annotations

import argparse
import math
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import simpy

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from mcrisk.core.model import Trigger  # noqa: E402
from mcrisk.scenario import load_scenario  # noqa: E402

REFERENCE = ROOT / "scenarios" / "reference-2048.toml"
METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
           "completion_day", "power_violation")

# --- The reference scenario's constants (docs/metrics.md), in days, H100-eq and kW. ----------
HORIZON = 540.0
Z90 = 1.2815516                      # Phi^-1(0.9), rounded to 7 decimals
OLD_SUS = tuple(f"SU{k}" for k in range(1, 9))
ROW_OF_SU = {f"SU{k}": f"A{k}" for k in range(1, 9)}
SU_CAPACITY, SU_POWER = 256.0, 326.4          # island ndr
RACKS = tuple(f"N{k:02d}" for k in range(1, 17))
RACK_CAPACITY, RACK_POWER = 72 * 2.5, 135.0   # island xdr
HALL_OF_ROW = {**{f"A{k}": "A" for k in range(1, 10)}, "B1": "B"}
ROW_NUMBER = {row: i for i, row in enumerate(HALL_OF_ROW)}   # retrofit tie-break order
POSITIONS = {**{f"A{k}": 2 for k in range(1, 10)}, "B1": 12}
HALL_CAP = {"A": 3000.0, "B": 1650.0}
SHIPMENTS = {f"S{j + 1}": (75.0 + 30.0 * j, RACKS[4 * j:4 * j + 4]) for j in range(4)}
SHIPMENT_OF = {rack: s for s, (_, racks) in SHIPMENTS.items() for rack in racks}
BASELINE = 8 * SU_CAPACITY                     # 2,048
LARGEST_JOB = 1024.0
DEMAND = ((0.0, 2048.0), (150.0, 2048.0), (360.0, 2816.0))
TOLERANCE = 1e-9                               # relative, for "below B" and "over the cap"


@dataclass(frozen=True)
class Draws:
    """The contract's distributions, drawn on demand from one numpy Generator."""

    rng: np.random.Generator

    def tri(self, low, mode, high):
        return self.rng.triangular(low, mode, high)

    def lognormal(self, median, p90):
        return self.rng.lognormal(math.log(median), (math.log(p90) - math.log(median)) / Z90)

    def chance(self, p):
        return self.rng.random() < p


@dataclass(frozen=True)
class Plan:
    """One strategy as read from the TOML: where each rack goes and when each SU drains."""

    name: str
    row_of_rack: dict[str, str]
    trigger_of_su: dict[str, Trigger]


def read_plans(path=REFERENCE) -> tuple[Plan, ...]:
    """The strategies of `path`, checked against the contract's fleets and rows."""
    plans = []
    for strategy in load_scenario(str(path)).strategies:
        row_of_rack = dict(strategy.placement)
        trigger_of_su = dict(strategy.drains)
        if sorted(row_of_rack) != list(RACKS) or sorted(trigger_of_su) != sorted(OLD_SUS):
            raise ValueError(f"{strategy.name}: this model knows only N01..N16 and SU1..SU8")
        unknown = set(row_of_rack.values()) - set(HALL_OF_ROW)
        if unknown:
            raise ValueError(f"{strategy.name}: rows {sorted(unknown)} are not in the contract")
        plans.append(Plan(strategy.name, row_of_rack, trigger_of_su))
    return tuple(plans)


class EndOfInstant(simpy.Event):
    """An event that fires after every other event of the current instant (SimPy's own events
    have priority 0 or 1; this one has 2), built the way simpy.Timeout builds itself."""

    def __init__(self, env: simpy.Environment):
        super().__init__(env)
        self._ok = True
        self._value = None
        env.schedule(self, priority=2)


class Migration:
    """One scenario of one strategy. Run it, then read `metrics()`."""

    def __init__(self, plan: Plan, draws: Draws):
        self.plan, self.draws = plan, draws
        self.env = env = simpy.Environment()
        self.crew = simpy.Resource(env, capacity=1)
        self.capacity_log: list[tuple[float, float, float]] = []   # (t, d ndr, d xdr)
        self.power_log: list[tuple[float, str, float]] = [(0.0, "A", 8 * SU_POWER)]
        self.removal_end: dict[str, float] = {}
        self.accepted_at: dict[str, float] = {}
        self.arrived = {s: env.event() for s in SHIPMENTS}
        self.accepted = {n: env.event() for n in RACKS}
        self.row_ready = {row: env.event() for row in HALL_OF_ROW}
        self.row_empty = {row: env.event() for row in HALL_OF_ROW}
        self.hall_b_energized = env.event()
        self.fabric_ready = env.event()
        self._rows_waiting_for_crew: list[tuple[int, simpy.Event]] = []

        vendor_slip = draws.lognormal(14, 45)            # one slip shared by every shipment
        for s, (promised, _) in SHIPMENTS.items():
            env.process(self.shipment(s, promised + vendor_slip + draws.lognormal(5, 20)))
        env.process(self.hall_b())
        env.process(self.fabric())
        for row in HALL_OF_ROW:
            if row not in ROW_OF_SU.values():
                self.row_empty[row].succeed()            # A9 (and B1) stand empty from day 0
            if row in plan.row_of_rack.values():
                env.process(self.prepare_row(row))
        for su in OLD_SUS:
            env.process(self.old_su(su, plan.trigger_of_su[su]))
        for rack in RACKS:
            env.process(self.new_rack(rack, plan.row_of_rack[rack]))

    # --- supply and facility ------------------------------------------------------------------
    def shipment(self, s, arrival):
        yield self.env.timeout(arrival)
        self.arrived[s].succeed()

    def hall_b(self):
        slip = self.draws.lognormal(45, 120) if self.draws.chance(0.35) else 0.0
        yield self.env.timeout(120 + slip)
        self.hall_b_energized.succeed()

    def fabric(self):
        yield self.env.timeout(90 + self.draws.lognormal(21, 90))   # spines and optics arrive
        yield self.env.timeout(14)                                  # then are installed
        self.fabric_ready.succeed()

    def prepare_row(self, row):
        """Hall B rows are ready when the hall is energized; a hall A row once it is empty and
        the one crew has retrofitted it to liquid."""
        if HALL_OF_ROW[row] == "B":
            yield self.hall_b_energized
        else:
            yield self.row_empty[row]
            yield self.crew_turn(row)
            with self.crew.request() as crew:
                yield crew
                yield self.env.timeout(self.draws.tri(21, 35, 70))
        self.row_ready[row].succeed()

    def crew_turn(self, row) -> simpy.Event:
        """Fires at the end of this instant, in row order among the rows asking now, so that
        the crew is requested in the order rows become empty, ties lower row first."""
        turn = self.env.event()
        self._rows_waiting_for_crew.append((ROW_NUMBER[row], turn))
        if len(self._rows_waiting_for_crew) == 1:
            EndOfInstant(self.env).callbacks.append(self._give_turns)
        return turn

    def _give_turns(self, _event):
        for _, turn in sorted(self._rows_waiting_for_crew, key=lambda pair: pair[0]):
            turn.succeed()
        self._rows_waiting_for_crew = []

    # --- old fleet ----------------------------------------------------------------------------
    def old_su(self, su, trigger: Trigger):
        conditions = [self.arrived[s] for s in trigger.on_arrival]
        conditions += [self.accepted[n] for n in trigger.on_accepted]
        if trigger.day is not None:
            conditions.append(self.env.timeout(trigger.day))
        yield self.env.all_of(conditions)
        if trigger.lag_days:
            yield self.env.timeout(trigger.lag_days)
        self.capacity_log.append((self.env.now, -SU_CAPACITY, 0.0))     # lost at drain start
        yield self.env.timeout(2)                                        # drain
        yield self.env.timeout(self.draws.tri(3, 5, 10))                 # removal
        self.power_log.append((self.env.now, "A", -SU_POWER))
        self.removal_end[su] = self.env.now
        self.row_empty[ROW_OF_SU[su]].succeed()                          # one SU per row

    # --- new fleet ----------------------------------------------------------------------------
    def new_rack(self, rack, row):
        yield self.arrived[SHIPMENT_OF[rack]] & self.row_ready[row]
        self.power_log.append((self.env.now, HALL_OF_ROW[row], RACK_POWER))
        yield self.env.timeout(self.draws.tri(2, 4, 10))                 # install
        yield from self.burn_in()
        yield self.fabric_ready                                          # acceptance
        self.capacity_log.append((self.env.now, 0.0, RACK_CAPACITY))
        self.accepted_at[rack] = self.env.now
        self.accepted[rack].succeed()

    def burn_in(self):
        failures_in_a_row = 0
        while True:
            yield self.env.timeout(self.draws.tri(3, 5, 9))
            fail_p = 0.30 if failures_in_a_row == 0 else 0.10
            if not self.draws.chance(fail_p):
                return
            failures_in_a_row += 1
            if failures_in_a_row == 3:                   # replaced, burn-in begins again
                yield self.env.timeout(self.draws.lognormal(30, 60))
                failures_in_a_row = 0
            else:
                yield self.env.timeout(self.draws.tri(1, 4, 14))

    # --- metrics ------------------------------------------------------------------------------
    def run(self) -> np.ndarray:
        self.env.run()
        if len(self.accepted_at) != len(RACKS) or len(self.removal_end) != len(OLD_SUS):
            raise RuntimeError(f"{self.plan.name}: the plan did not finish (deadlock?)")
        return self.metrics()

    def metrics(self) -> np.ndarray:
        """The six metrics, in mcrisk's order, from the recorded step functions."""
        steps = capacity_steps(self.capacity_log)
        completion = max(max(self.removal_end.values()), max(self.accepted_at.values()))
        return np.array([*capacity_metrics(steps), completion,
                         float(power_violation(self.power_log))])


def capacity_steps(log) -> list[tuple[float, float, float]]:
    """[(start, ndr, xdr)] of the capacity step function: changes at one instant summed."""
    changes: dict[float, list[float]] = {}
    for t, d_ndr, d_xdr in log:
        change = changes.setdefault(t, [0.0, 0.0])
        change[0] += d_ndr
        change[1] += d_xdr
    steps, ndr, xdr = [], BASELINE, 0.0
    if 0.0 not in changes:
        steps.append((0.0, ndr, xdr))
    for t in sorted(changes):
        ndr, xdr = ndr + changes[t][0], xdr + changes[t][1]
        steps.append((t, ndr, xdr))
    return steps


def capacity_metrics(steps) -> tuple[float, float, float, float]:
    """trough_depth, trough_days, shortfall_gpu_days, homeless_days over [0, HORIZON)."""
    depth = days = shortfall = homeless = 0.0
    for k, (start, ndr, xdr) in enumerate(steps):
        end = min(steps[k + 1][0] if k + 1 < len(steps) else HORIZON, HORIZON)
        if start >= HORIZON:
            break
        if end <= start:
            continue
        capacity = ndr + xdr
        if capacity < BASELINE * (1 - TOLERANCE):
            depth = max(depth, BASELINE - capacity)
            days += end - start
        if max(ndr, xdr) < LARGEST_JOB * (1 - TOLERANCE):
            homeless += end - start
        shortfall += shortfall_between(start, end, capacity)
    return depth, days, shortfall, homeless


def demand(t: float) -> float:
    return float(np.interp(t, [p[0] for p in DEMAND], [p[1] for p in DEMAND]))


def shortfall_between(a: float, b: float, capacity: float) -> float:
    """Integral of max(0, D(t) - capacity) over [a, b); D is linear between its points."""
    cuts = [a] + [d for d, _ in DEMAND if a < d < b] + [b]
    total = 0.0
    for lo, hi in zip(cuts, cuts[1:]):
        f0, f1 = demand(lo) - capacity, demand(hi) - capacity
        if f0 >= 0 and f1 >= 0:
            total += (f0 + f1) / 2 * (hi - lo)
        elif f0 > 0 or f1 > 0:                       # crosses zero: a triangle above it
            top = max(f0, f1)
            total += top * (hi - lo) * top / (abs(f0) + abs(f1)) / 2
    return total


def power_violation(log) -> bool:
    """Whether a hall's draw ever exceeds its cap (changes at one instant applied together)."""
    changes: dict[float, list[tuple[str, float]]] = {}
    for t, hall, delta in log:
        changes.setdefault(t, []).append((hall, delta))
    draw = {hall: 0.0 for hall in HALL_CAP}
    for t in sorted(changes):
        for hall, delta in changes[t]:
            draw[hall] += delta
        if any(draw[h] > HALL_CAP[h] * (1 + TOLERANCE) for h in HALL_CAP):
            return True
    return False


def simulate(plans, samples: int, seed: int, first: int = 0) -> np.ndarray:
    """metrics[scenario, strategy, metric] for scenarios first .. first + samples - 1.

    Each (scenario, strategy) has its own Generator, seeded by (seed, scenario, strategy), so a
    scenario replays alone; strategies do not share draws (no common random numbers).
    """
    out = np.empty((samples, len(plans), len(METRICS)))
    for i in range(samples):
        for s, plan in enumerate(plans):
            draws = Draws(np.random.default_rng([seed, first + i, s]))
            out[i, s] = Migration(plan, draws).run()
    return out


# --- agreement with the engine ------------------------------------------------------------------
COMPARED = METRICS[:5]


def quantile_interval(values: np.ndarray, p: float, confidence: float = 0.95):
    """numpy.quantile at p and its distribution-free interval (as mcrisk.results.statistics does for
    the P90, at any p)."""
    from scipy import stats

    values = np.asarray(values, dtype=np.float64)
    estimate = float(np.quantile(values, p))
    if values.min() == values.max():
        return estimate, (estimate, estimate)
    ci = stats.quantile_test(values, q=estimate, p=p).confidence_interval(confidence)
    return estimate, (float(ci.low), float(ci.high))


def agreement(peer: np.ndarray, engine: np.ndarray, names, confidence: float = 0.95):
    """Rows (strategy, metric, p, peer value, peer ci, engine value, engine ci, overlap)."""
    rows = []
    for s, name in enumerate(names):
        for m, metric in enumerate(COMPARED):
            for p in (0.5, 0.9):
                a, a_ci = quantile_interval(peer[:, s, m], p, confidence)
                b, b_ci = quantile_interval(engine[:, s, m], p, confidence)
                overlap = a_ci[0] <= b_ci[1] and b_ci[0] <= a_ci[1]
                rows.append((name, metric, p, a, a_ci, b, b_ci, overlap))
    return rows


def engine_metrics(samples: int, seed: int, path=REFERENCE):
    """metrics[scenario, strategy, metric] and strategy names from mcrisk's Numba backend."""
    from mcrisk.app.run import run_scenario

    run = run_scenario(str(path), samples=samples, seed=seed, backend="cpu", out_dir=None)
    return run.result.metrics, run.plan.strategy_names


def mean_agreement(peer: np.ndarray, engine: np.ndarray, names):
    """Rows (strategy, metric, peer mean, engine mean, z of the difference, KS p-value)."""
    from scipy import stats

    rows = []
    for s, name in enumerate(names):
        for m, metric in enumerate(COMPARED):
            a, b = peer[:, s, m], engine[:, s, m]
            se = math.sqrt(a.var() / a.size + b.var() / b.size)
            z = (a.mean() - b.mean()) / se if se > 0 else 0.0
            rows.append((name, metric, a.mean(), b.mean(), z, stats.ks_2samp(a, b).pvalue))
    return rows


def simulate_parallel(plans, samples: int, seed: int, workers: int) -> np.ndarray:
    """simulate() split over `workers` processes (same scenarios, same result)."""
    if workers <= 1:
        return simulate(plans, samples, seed)
    from concurrent.futures import ProcessPoolExecutor

    bounds = np.linspace(0, samples, workers + 1).astype(int)
    with ProcessPoolExecutor(workers) as pool:
        parts = pool.map(simulate, [plans] * workers, np.diff(bounds).tolist(),
                         [seed] * workers, bounds[:-1].tolist())
        return np.concatenate(list(parts))


def format_agreement(rows) -> str:
    lines = [f"{'strategy':<20} {'metric':<19} {'p':>3} {'simpy':>10} {'95% ci':>21} "
             f"{'mcrisk':>10} {'95% ci':>21}  overlap"]
    for name, metric, p, a, a_ci, b, b_ci, overlap in rows:
        lines.append(f"{name:<20} {metric:<19} P{int(p * 100):<2} {a:>10,.1f} "
                     f"[{a_ci[0]:>9,.1f},{a_ci[1]:>9,.1f}] {b:>10,.1f} "
                     f"[{b_ci[0]:>9,.1f},{b_ci[1]:>9,.1f}]  {'yes' if overlap else 'NO'}")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenario", default=str(REFERENCE.relative_to(ROOT)))
    parser.add_argument("--samples", type=int, default=3000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--compare", type=int, default=0, metavar="N",
                        help="also run mcrisk (Numba) on N scenarios and compare")
    parser.add_argument("--workers", type=int, default=1, help="SimPy processes")
    args = parser.parse_args(argv)
    plans = read_plans(ROOT / args.scenario)
    started = time.perf_counter()
    peer = simulate_parallel(plans, args.samples, args.seed, args.workers)
    elapsed = time.perf_counter() - started
    print(f"simpy: {args.samples:,} scenarios x {len(plans)} strategies in {elapsed:.1f} s "
          f"({args.samples * len(plans) / elapsed:,.0f} scenario-strategies/s)")
    if args.compare:
        engine, names = engine_metrics(args.compare, args.seed, ROOT / args.scenario)
        assert tuple(p.name for p in plans) == tuple(names)
        rows = agreement(peer, engine, names)
        print(f"mcrisk cpu: {args.compare:,} scenarios, seed {args.seed}")
        print(format_agreement(rows))
        print(f"{sum(r[-1] for r in rows)} of {len(rows)} intervals overlap")
        print(f"{'strategy':<20} {'metric':<19} {'simpy mean':>12} {'mcrisk mean':>12} "
              f"{'z':>6} {'KS p':>6}")
        for name, metric, a, b, z, ks in mean_agreement(peer, engine, names):
            print(f"{name:<20} {metric:<19} {a:>12,.2f} {b:>12,.2f} {z:>+6.2f} {ks:>6.3f}")
        for s, plan in enumerate(plans):
            print(f"{plan.name}: power violations simpy {peer[:, s, 5].mean():.3f}, "
                  f"mcrisk {engine[:, s, 5].mean():.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
