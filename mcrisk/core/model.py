"""The validated scenario: frozen dataclasses, the only thing later stages read.

`mcrisk.scenario.load_scenario` builds these from a TOML file after validating it; nothing here
does I/O. Times are days from the plan's day 0; capacity is in H100-equivalents (H100-eq);
power in kW.
"""
from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .status import Status

DISTRIBUTION_KINDS = ("fixed", "uniform", "triangular", "pert", "lognormal", "chance")


@dataclass(frozen=True)
class Distribution:
    """A non-negative duration or delay, in days.

    kind and params:
      fixed      (value,)
      uniform    (min, max)
      triangular (min, mode, max)
      pert       (min, mode, max, lambda)      BetaPERT; lambda = 4 is the classic PERT
      lognormal  (median, p90)                 ln X ~ Normal(ln median, (ln p90 - ln median) / z90)
      chance     (p,) with `inner`             with probability p draw `inner`, else 0

    bounds: (min, max) of a lognormal written with `min` / `max` (docs/scenario-format.md,
    Bounded distributions): the draw is conditioned to lie in [min, max] (its uniform mapped
    into [F(min), F(max)]); max is math.inf when only min is given, min 0.0 when only max.
    None: unbounded.
    """

    kind: str
    params: tuple[float, ...]
    inner: Distribution | None = None
    bounds: tuple[float, float] | None = None

    @staticmethod
    def fixed(value: float) -> Distribution:
        return Distribution("fixed", (float(value),))

    @property
    def is_fixed(self) -> bool:
        return self.kind == "fixed"


ZERO = Distribution.fixed(0.0)


@dataclass(frozen=True)
class DateSpec:
    """A calendar date: `day` plus its own `delay` plus every named shared delay."""

    day: float
    delay: Distribution = ZERO
    shared: tuple[str, ...] = ()


@dataclass(frozen=True)
class BurnIn:
    """Burn-in as a loop of attempts; a failed attempt is fixed, or after
    `rma_after_failures` failures in a row the unit is replaced and burn-in restarts."""

    attempt_days: Distribution
    fail_first: float
    fail_retry: float
    fix_days: Distribution
    rma_after_failures: int
    rma_days: Distribution


@dataclass(frozen=True)
class Ramp:
    """Software maturity: a new unit delivers `start_fraction` of its capacity at acceptance,
    rising linearly to all of it over `days`, modelled as `steps` equal steps taken at the
    end of each 1/steps of the ramp (so capacity is never overstated)."""

    start_fraction: float
    days: float
    steps: int = 4


@dataclass(frozen=True)
class Attrition:
    """Steady failures while a fleet runs: `interruptions_per_gpu_day` interruptions, each
    taking `gpus_per_interruption` GPUs (a node) out for `days_out` days."""

    interruptions_per_gpu_day: float
    gpus_per_interruption: int = 8
    days_out: float = 3.0

    @property
    def usable_share(self) -> float:
        """The steady-state share of a unit in service: 1 - rate x GPUs per interruption x
        days out (the mean share out of service, by Little's law)."""
        return 1.0 - self.interruptions_per_gpu_day * self.gpus_per_interruption * self.days_out


@dataclass(frozen=True)
class EarlyFailures:
    """Infant mortality of an incoming unit: with probability `chance`
    (`chance_after_burnin_failure` for a unit whose burn-in failed at least once) it fails once
    at service age `age_days` and is out of service for `repair_days`."""

    chance: float
    chance_after_burnin_failure: float
    age_days: Distribution
    repair_days: Distribution


@dataclass(frozen=True)
class UnitType:
    id: str
    gpus: int
    h100_eq_per_gpu: float            # nominal (the median when `performance` is uncertain)
    power_kw: float
    cooling: str                      # "air" | "liquid"
    island: str | None                # None: every row its units stand in has a positional
                                      # island (Scenario.island_of)
    install_days: Distribution = ZERO
    burn_in: BurnIn | None = None     # None: accepted when installed (and its island is ready)
    drain_days: Distribution = ZERO
    removal_days: Distribution = ZERO
    description: str = ""
    performance: Distribution | None = None  # H100-eq per GPU, drawn once per scenario
    ramp: Ramp | None = None
    attrition: Attrition | None = None          # None: every unit fully usable
    early_failures: EarlyFailures | None = None  # incoming types only

    @property
    def usable_share(self) -> float:
        """The share of a unit's capacity in service on average (1 without attrition)."""
        return self.attrition.usable_share if self.attrition else 1.0

    @property
    def capacity(self) -> float:
        """Nominal H100-eq of one unit."""
        return self.gpus * self.h100_eq_per_gpu


@dataclass(frozen=True)
class Island:
    """A fabric island (job pool). Ready at day 0 when `delivery` is None. `halls` and `rows`
    (as written) are its positions: a unit standing in one of them joins it, whatever its
    type (Scenario.island_of)."""

    id: str
    delivery: DateSpec | None = None
    install_days: Distribution = ZERO
    description: str = ""
    halls: tuple[str, ...] = ()
    rows: tuple[str, ...] = ()


@dataclass(frozen=True)
class Row:
    id: str
    hall: str
    cooling: str                      # "air" | "liquid"
    positions: int                    # new units the row holds once empty (and liquid if needed)


@dataclass(frozen=True)
class Hall:
    id: str
    power_cap_kw: float
    rows: tuple[Row, ...]
    energized: DateSpec | None = None  # None: energized at day 0
    description: str = ""
    # the hall's own install teams and burn-in bays (units at once); None: its units share
    # the site's ([integration]), unlimited when that gives none either
    install_teams: int | None = None
    burn_in_bays: int | None = None


@dataclass(frozen=True)
class Integration:
    """[integration]: the site's install teams and burn-in bays, shared by the units of every
    hall without its own (None: unlimited)."""

    install_teams: int | None = None
    burn_in_bays: int | None = None


@dataclass(frozen=True)
class Retrofit:
    """Air -> liquid retrofit of an empty row, by a limited number of crews."""

    crews: int
    days: Distribution


@dataclass(frozen=True)
class ExistingUnit:
    """A unit in service at day 0 that every strategy drains and removes, unless the strategy
    keeps it (Strategy.keep)."""

    id: str
    type: str
    row: str


@dataclass(frozen=True)
class IncomingUnit:
    """A new unit that a shipment delivers and every strategy places."""

    id: str
    type: str


@dataclass(frozen=True)
class Risk:
    """A discrete event of a risk register: with `probability`, once per scenario, an impact
    (days, drawn once) is added to every activity or date it `applies_to`.

    Targets: "retrofit", "install", "removal", "burn_in" (every row's or unit's), or one of
    them as "install:N07"; "arrival" (every shipment) or "arrival:S2"; "energized:B" (a hall);
    "fabric:xdr" (an island's ready date). `mitigated_*` are the values after mitigation.
    """

    id: str
    probability: float
    impact: Distribution
    applies_to: tuple[str, ...]
    enabled: bool = True
    mitigated_probability: float | None = None
    mitigated_impact: Distribution | None = None
    description: str = ""
    mitigation_cost: Distribution | None = None   # what the mitigation costs, once, in money
    mitigation_applied: bool = False   # the mitigated values are in effect (core.risks.
                                       # with_mitigation): its cost counts when enabled


@dataclass(frozen=True)
class Correlation:
    """A Spearman rank correlation between two drawn quantities, named as their world
    quantities are ("shared.vendor", "hall.B.energized.delay"): [[correlations]], drawn
    through a Gaussian copula (mcrisk/core/copula.py)."""

    between: tuple[str, str]
    rank: float


@dataclass(frozen=True)
class Shipment:
    id: str
    units: tuple[str, ...]
    arrival: DateSpec


@dataclass(frozen=True)
class Trigger:
    """When a drain starts: the latest of the conditions given, plus `lag_days`."""

    day: float | None = None
    on_arrival: tuple[str, ...] = ()   # shipment ids
    on_accepted: tuple[str, ...] = ()  # incoming unit ids
    lag_days: float = 0.0


@dataclass(frozen=True)
class Reservation:
    """A step of a power reservation: `kw` reserved from `day` until the next step's day.

    With `after` (an event as summary.json's milestones name it: "arrival:S3"), the step
    starts `day` days after that event, in each world at that world's time of it (the file's
    `notice_days`; docs/costs.md, Reservations on an event)."""

    day: float
    kw: float
    after: str | None = None


@dataclass(frozen=True)
class Acceptance:
    """A strategy's acceptance policy: a unit whose burn-in failed `soak_after_failures` times
    or more soaks `soak_days` more (a load test once its island is ready) before acceptance."""

    soak_after_failures: int
    soak_days: Distribution


@dataclass(frozen=True)
class Decision:
    """A contingent strategy's decision point: on `day` (or, with `on`, when that event
    happens: ("arrival", shipment) or ("accepted", incoming unit); `day` is then None), count
    how many of `events` have happened (each (kind, id): ("energized", hall), ("accepted",
    incoming unit), ("arrival", shipment)); with at least `at_least` of them the plan follows
    the strategy named `met` from then on, else the one named `unmet`. Both are ordinary
    strategies of the file, which must agree on everything before the decision
    (non-anticipative)."""

    day: float | None
    events: tuple[tuple[str, str], ...]
    at_least: int
    met: str
    unmet: str
    on: tuple[str, str] | None = None


@dataclass(frozen=True)
class Strategy:
    name: str
    placement: tuple[tuple[str, str], ...]   # (incoming unit id, row id), in file order
    drains: tuple[tuple[str, Trigger], ...]  # (existing unit id, trigger), in file order
    description: str = ""
    # (hall id, steps ascending from day 0): the strategy's own reservations, replacing the
    # hall's [[costs.power]] reservations for this strategy
    reservations: tuple[tuple[str, tuple[Reservation, ...]], ...] = ()
    # the retrofit crews this strategy hires; None: the scenario's [retrofit] crews
    crews: int | None = None
    # existing unit ids this strategy keeps in service to the horizon: never drained or
    # removed, so their capacity, power and running cost stay (in file order)
    keep: tuple[str, ...] = ()
    # an extra soak for units whose burn-in failed often; None: accept on the first pass
    acceptance: Acceptance | None = None
    # a contingent strategy's decision; its plan fields are then those of `decision.met`
    # (what the kernels simulate for its row before each world takes its branch)
    decision: Decision | None = None
    # the site's install teams and burn-in bays this strategy hires; None: [integration]'s
    install_teams: int | None = None
    burn_in_bays: int | None = None

    def crews_in(self, retrofit: Retrofit | None) -> int:
        """The crews this strategy runs with: its own, else the scenario's [retrofit] crews
        (1 without [retrofit]: no row to retrofit, so the count changes nothing)."""
        if self.crews is not None:
            return int(self.crews)
        return int(retrofit.crews) if retrofit else 1

    def integration_in(self, integration: Integration) -> Integration:
        """The site's install teams and burn-in bays this strategy runs with: each its own,
        else the scenario's [integration] (None: unlimited)."""
        return Integration(
            self.install_teams if self.install_teams is not None else integration.install_teams,
            self.burn_in_bays if self.burn_in_bays is not None else integration.burn_in_bays)

    def reservation_of(self, hall: str) -> tuple[Reservation, ...] | None:
        """The strategy's own reservation steps in `hall`, None when it declares none."""
        return dict(self.reservations).get(hall)


@dataclass(frozen=True)
class PowerContract:
    """A hall's power contract ([[costs.power]]): reserved kW priced per kW-month, drawing
    above the reservation priced per kW-month of excess, metered energy per kWh (the planned
    draw x load_factor x pue). Prices in money per unit, each a Distribution (fixed when
    certain); `reservations` ascending from day 0."""

    hall: str
    reservations: tuple[Reservation, ...]
    price_per_kw_month: Distribution
    over_per_kw_month: Distribution = ZERO
    energy_per_kwh: Distribution = ZERO
    pue: float = 1.0
    load_factor: float = 1.0
    notice_days: float = 0.0
    minimum_term_days: float = 0.0


@dataclass(frozen=True)
class Costs:
    """The [costs] section: what the migration costs, each price a Distribution (money per
    unit; fixed when certain). docs/costs.md defines every cost."""

    currency: str = "USD"
    power: tuple[PowerContract, ...] = ()
    running: tuple[tuple[str, Distribution], ...] = ()    # unit type -> per existing unit-day
    waiting: tuple[tuple[str, Distribution], ...] = ()    # unit type -> per new unit-day waiting
    shortfall_per_h100_eq_hour: Distribution = ZERO
    crew_per_day: Distribution = ZERO
    team_per_day: Distribution = ZERO     # an install team, per day its pool is engaged
    bay_per_day: Distribution = ZERO      # a burn-in bay, likewise

    def power_of(self, hall: str) -> PowerContract | None:
        return next((p for p in self.power if p.hall == hall), None)


@dataclass(frozen=True)
class Forecast:
    """Demand as a forecast: a workload in the planner's unit growing at an uncertain yearly
    rate, D(t) = workload_at_day0 x (1 + growth)^(t / 365) / per_h100 in H100-eq, taken at
    every points_every_days from day 0 to the horizon and joined linearly (growth is drawn
    once per scenario, shared by every strategy)."""

    workload_at_day0: float
    unit: str                  # the workload's unit, for people ("tokens/s", "H100-eq")
    per_h100: float            # the workload one H100 delivers at its operating point
    growth_per_year: Distribution
    points_every_days: float


@dataclass(frozen=True)
class JobClass:
    """One class of a job mix ([[demand.jobs]]): jobs of `size` H100-eq, each on one island,
    making up `share` of demand (docs/metrics.md: the packing rule)."""

    id: str
    size: float
    share: float


@dataclass(frozen=True)
class Demand:
    points: tuple[tuple[float, float], ...]  # (day, H100-eq), days strictly increasing
    largest_job: float                        # H100-eq the largest job needs in one island
    forecast: Forecast | None = None          # when given, points are its days and base values
    jobs: tuple[JobClass, ...] = ()           # the job mix, file order; (): none given
    packing_step_days: float = 1.0            # cell width of unservable_gpu_days' midpoint rule


@dataclass(frozen=True)
class Scenario:
    path: str
    sha256: str                       # of the file's bytes
    name: str
    horizon_days: float
    demand: Demand
    unit_types: tuple[UnitType, ...]
    islands: tuple[Island, ...]
    halls: tuple[Hall, ...]
    retrofit: Retrofit
    existing: tuple[ExistingUnit, ...]
    incoming: tuple[IncomingUnit, ...]
    shared_delays: tuple[tuple[str, Distribution], ...]
    shipments: tuple[Shipment, ...]
    strategies: tuple[Strategy, ...]
    description: str = ""
    risks: tuple[Risk, ...] = ()
    start_date: _dt.date | None = None   # the calendar date of day 0, when the file gives one
    costs: Costs | None = None           # the [costs] section; None: no cost outputs
    executing: str | None = None         # the strategy being executed ([scenario] executing)
    status: Status | None = None         # a migration in flight: the facts by a day (--status;
                                         # core.status.with_facts attaches it)
    correlations: tuple[Correlation, ...] = ()   # [[correlations]], file order
    integration: Integration = Integration()  # the site's install teams and burn-in bays

    def unit_type(self, type_id: str) -> UnitType:
        return next(t for t in self.unit_types if t.id == type_id)

    def rows(self) -> tuple[Row, ...]:
        """All rows of all halls, in file order (the retrofit tie-break order)."""
        return tuple(row for hall in self.halls for row in hall.rows)

    def island_of(self, type_id: str, row_id: str) -> str | None:
        """The island a unit of type `type_id` standing in row `row_id` joins: the positional
        island covering the row (an [[islands]] entry naming the row or its hall), else the
        type's own `island` (None when neither: validation refuses a unit there)."""
        return self.positional_islands.get(row_id) or self.unit_type(type_id).island

    @cached_property
    def positional_islands(self) -> dict[str, str]:
        """Row id -> the island whose `rows` or `halls` cover it (validation allows one);
        computed once (a frozen Scenario never changes)."""
        covered: dict[str, str] = {}
        for island in self.islands:
            for hall in self.halls:
                for row in hall.rows:
                    if row.id in island.rows or hall.id in island.halls:
                        covered.setdefault(row.id, island.id)
        return covered

    def strategy(self, name: str) -> Strategy:
        return next(s for s in self.strategies if s.name == name)
