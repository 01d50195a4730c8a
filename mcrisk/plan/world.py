"""The world of a scenario: every quantity drawn or derived once per scenario and shared by
every strategy (common random numbers), as the tables the plan's world group holds.

`compile_world` adds, in dependency order, the shared delays, risks, shipment arrivals, hall
and island dates, drawn performance, and each unit's and retrofitted row's durations (with
the risks that delay them), then the prices of [costs] given as distributions, the growth of
a forecast's demand, and the early failures and acceptance soaks of incoming units;
mcrisk/plan/compile.py's docstring says what the kinds SAMPLE, SUM, BURNIN, ATTEMPTS, EARLY,
SOAK and OUT compute. Each quantity has a name, which is its random-number address
(rng.address_id) and its metrics.parquet column, and a QuantityLabel saying what it is about.
Two names hashing to one address are refused with a ScenarioError located in the file.
"""
from __future__ import annotations

import numpy as np

from ..core import rng
from ..core.definitions import Q_ATTEMPTS, Q_BURNIN, Q_EARLY, Q_OUT, Q_SAMPLE, Q_SOAK, Q_SUM
from ..core.distributions import encode, encode_table
from ..core.errors import Problem, ScenarioError
from ..core.model import DateSpec, Distribution, Scenario
from ..core.quantities import QuantityLabel


class World:
    """Builds the world-quantity tables; one quantity per name, each with its label (what
    the quantity is about; the name is spelled from it)."""

    def __init__(self):
        self.names: list[str] = []
        self.labels: list[QuantityLabel] = []
        self.index: dict[str, int] = {}
        self.dists: list[tuple] = []
        self.pert_tables: list[np.ndarray] = []
        self.rows: list[dict] = []
        self.burnins: list[tuple] = []
        self.prior_dist: dict[int, int] = {}    # a correlated quantity's before a status
        # a quantity drawn from its posterior: its facts' log-likelihood (plan/conditioning.py),
        # which a correlated partner's own fact multiplies (plan/copula.py, joint_status)
        self.likelihoods: dict[int, object] = {}
        # a correlated quantity conditioned with its partner: its copula uniform's range
        self.copula_given: dict[int, tuple[float, float]] = {}

    def _dist(self, dist: Distribution) -> int:
        self.dists.append(encode(dist, self.pert_tables))
        return len(self.dists) - 1

    def table_dist(self, table: np.ndarray, chance: float) -> int:
        """A new distribution: a posterior quantile table (KIND_TABLE; a `chance` of it when
        chance < 1), for mcrisk/plan/conditioning.py."""
        self.dists.append(encode_table(table, chance, self.pert_tables))
        return len(self.dists) - 1

    def _add(self, label: QuantityLabel, **row) -> int:
        name = label.name
        if name in self.index:
            raise ValueError(f"quantity {name!r} compiled twice")
        self.index[name] = len(self.names)
        self.names.append(name)
        self.labels.append(label)
        base = dict(kind=Q_SAMPLE, dist=-1, address=(0, 0, 0, 0), address_labels=(), const=0.0,
                    terms=(), burnin=-1, status=0, state=(0.0, 0.0, 0.0, 0.0))
        base.update(row)
        self.rows.append(base)
        return self.index[name]

    def sample(self, label: QuantityLabel, dist: Distribution) -> int:
        return self._add(label, kind=Q_SAMPLE, dist=self._dist(dist),
                         address=(rng.address_id(label.name), 0, 0, 0), address_labels=(label,))

    def sample_at(self, label: QuantityLabel, dist: Distribution, stream: QuantityLabel) -> int:
        """A draw of dist at the address of `stream`'s name (several quantities may share one
        stream: the same uniforms, drawn through different distributions)."""
        return self._add(label, kind=Q_SAMPLE, dist=self._dist(dist),
                         address=(rng.address_id(stream.name), 0, 0, 0), address_labels=(stream,))

    def early(self, label: QuantityLabel, age: Distribution, terms: list[int]) -> int:
        """Q_EARLY: terms = chance, chance after a burn-in failure (, burn-in attempts)."""
        streams = (label.derived("happens"), label.derived("age"))
        return self._add(label, kind=Q_EARLY, dist=self._dist(age),
                         address=tuple(rng.address_id(s.name) for s in streams) + (0, 0),
                         address_labels=streams, terms=tuple(terms))

    def policy(self, label: QuantityLabel, kind: int, soak_after: int, terms: list[int]) -> int:
        """Q_SOAK or Q_OUT of one unit under one acceptance policy (q_const: its
        soak_after_failures; terms: attempts, soak days (, early age (, repair days)))."""
        return self._add(label, kind=kind, const=float(soak_after), terms=tuple(terms))

    def total(self, label: QuantityLabel, const: float, terms: list[int]) -> int:
        return self._add(label, kind=Q_SUM, const=float(const), terms=tuple(terms))

    def date(self, label: QuantityLabel, spec: DateSpec, shared: dict[str, int],
             extra: list[int] = ()) -> int:
        """A date quantity: spec.day + its delay + named shared delays (+ extra terms)."""
        terms = [self.sample(label.derived("delay"), spec.delay)]
        terms += [shared[s] for s in spec.shared] + list(extra)
        return self.total(label, spec.day, terms)

    def burn_in(self, label: QuantityLabel, burn_in) -> int:
        dists = (self._dist(burn_in.attempt_days), self._dist(burn_in.fix_days),
                 self._dist(burn_in.rma_days))
        self.burnins.append((dists, (burn_in.fail_first, burn_in.fail_retry),
                             burn_in.rma_after_failures))
        streams = tuple(label.derived(part) for part in ("attempt", "outcome", "fix", "rma"))
        q = self._add(label, kind=Q_BURNIN, dist=dists[0],
                      address=tuple(rng.address_id(s.name) for s in streams),
                      address_labels=streams, burnin=len(self.burnins) - 1)
        self._add(label.derived("attempts"), kind=Q_ATTEMPTS)
        return q


def compile_world(scenario: Scenario, retrofit_rows: list[str]) -> tuple[World, dict]:
    """Every quantity of the scenario; returns the builder and named handles into it."""
    w = World()
    shared = {name: w.sample(QuantityLabel("shared", name), dist)
              for name, dist in scenario.shared_delays}
    risks = _RiskTerms(w, scenario)
    handles: dict = {"arrival": {}, "energized": {}, "island_ready": {}, "drain": {},
                     "removal": {}, "install": {}, "burn_in": {}, "retrofit": {},
                     "performance": {}, "cost": {}, "attempts": {}}
    for ship in scenario.shipments:
        handles["arrival"][ship.id] = w.date(QuantityLabel("shipment", ship.id, "arrival"),
                                             ship.arrival, shared, risks.terms("arrival", ship.id))
    for hall in scenario.halls:
        at_risk = risks.terms("energized", hall.id)
        if hall.energized is not None or at_risk:
            handles["energized"][hall.id] = w.date(QuantityLabel("hall", hall.id, "energized"),
                                                   hall.energized or DateSpec(0.0), shared,
                                                   at_risk)
    for island in scenario.islands:
        at_risk = risks.terms("fabric", island.id)
        if island.delivery is not None or at_risk:
            install = w.sample(QuantityLabel("island", island.id, "install"),
                               island.install_days)
            handles["island_ready"][island.id] = w.date(
                QuantityLabel("island", island.id, "ready"), island.delivery or DateSpec(0.0),
                shared, [install] + at_risk)
    for kind in scenario.unit_types:
        if kind.performance is not None:
            handles["performance"][kind.id] = w.sample(
                QuantityLabel("unit_type", kind.id, "h100_eq_per_gpu"), kind.performance)
    for unit in scenario.existing:
        kind = scenario.unit_type(unit.type)
        handles["drain"][unit.id] = w.sample(QuantityLabel("unit", unit.id, "drain"),
                                             kind.drain_days)
        handles["removal"][unit.id] = risks.wrap(
            "removal", unit.id, w.sample(QuantityLabel("unit", unit.id, "removal"),
                                         kind.removal_days))
    for unit in scenario.incoming:
        kind = scenario.unit_type(unit.type)
        handles["install"][unit.id] = risks.wrap(
            "install", unit.id, w.sample(QuantityLabel("unit", unit.id, "install"),
                                         kind.install_days))
        if kind.burn_in is not None:
            q = w.burn_in(QuantityLabel("unit", unit.id, "burn_in"), kind.burn_in)
            handles["attempts"][unit.id] = q + 1
            handles["burn_in"][unit.id] = risks.wrap("burn_in", unit.id, q)
    for row_id in retrofit_rows:
        handles["retrofit"][row_id] = risks.wrap(
            "retrofit", row_id, w.sample(QuantityLabel("row", row_id, "retrofit"),
                                         scenario.retrofit.days))
    if scenario.costs is not None:
        handles["cost"] = _price_quantities(w, scenario)
    handles["demand_growth"] = _demand_growth(w, scenario)
    handles.update(_failure_quantities(w, scenario, handles["attempts"]))
    _check_addresses(w, scenario)
    return w, handles


def _price_quantities(w: World, scenario: Scenario) -> dict[tuple[str, str], int]:
    """Each price of [costs] given as a distribution (and the cost of each mitigation in
    effect), as a SAMPLE quantity `cost.<subject>.<part>`, added after every other quantity:
    addressed by name, so they change no other draw. Returns {(subject, part): quantity};
    a certain price has none (mcrisk/plan/costs.py puts it in the rate)."""
    prices: dict[tuple[str, str], int] = {}

    def price(subject: str, part: str, dist: Distribution) -> None:
        if not dist.is_fixed:
            prices[(subject, part)] = w.sample(QuantityLabel("cost", subject, part), dist)

    costs = scenario.costs
    for contract in costs.power:
        for part in ("price_per_kw_month", "over_per_kw_month", "energy_per_kwh"):
            price(contract.hall, part, getattr(contract, part))
    for part, by_type in (("running", costs.running), ("waiting", costs.waiting)):
        for type_id, dist in by_type:
            price(type_id, part, dist)
    price("shortfall", "per_h100_eq_hour", costs.shortfall_per_h100_eq_hour)
    price("crews", "per_crew_day", costs.crew_per_day)
    price("integration", "per_team_day", costs.team_per_day)
    price("integration", "per_bay_day", costs.bay_per_day)
    for risk in mitigations_in_effect(scenario):
        price(risk.id, "mitigation", risk.mitigation_cost)
    return prices


def _demand_growth(w: World, scenario: Scenario) -> int:
    """The demand forecast's yearly growth as a SAMPLE quantity `demand.forecast.growth_per_year`
    when it is uncertain (added last, addressed by name: it changes no other draw); -1 when
    demand is a fixed curve or the growth is certain (compile then fixes the points)."""
    forecast = scenario.demand.forecast
    if forecast is None or forecast.growth_per_year.is_fixed:
        return -1
    return w.sample(QuantityLabel("demand", "forecast", "growth_per_year"),
                    forecast.growth_per_year)


def acceptance_policies(scenario: Scenario) -> list:
    """The distinct acceptance policies of the strategies, in order of first use; policy k
    of a strategy is policies.index(strategy.acceptance)."""
    policies = []
    for strategy in scenario.strategies:
        if strategy.acceptance is not None and strategy.acceptance not in policies:
            policies.append(strategy.acceptance)
    return policies


def _failure_quantities(w: World, scenario: Scenario, attempts: dict[str, int]) -> dict:
    """Early failures and acceptance policies as world quantities, added last (addressed by
    name: they change no other draw), only for what the scenario uses.

    Per incoming unit with early failures: `unit.U.early_failure` (Q_EARLY, its service age at
    the failure, +inf: none) and `unit.U.early_failure.repair`; its type's two chances are
    constant SUM quantities. Per unit with a burn-in and policy k: `unit.U.soak_days` drawn
    at one address per unit for every policy (common random numbers; policies with another
    soak distribution get `unit.U.soak_days.<k>` on the same stream), `unit.U.acceptance<k>.soak`
    (Q_SOAK) and, with early failures, `unit.U.acceptance<k>.out` (Q_OUT). A unit without a
    burn-in never fails one, so it never soaks and its failure comes x after acceptance."""
    found: dict = {"early": {}, "repair": {}, "soak": {}, "out": {}}
    chances: dict[str, tuple[int, int]] = {}
    for unit in scenario.incoming:
        kind = scenario.unit_type(unit.type)
        early = kind.early_failures
        if early is None:
            continue
        if kind.id not in chances:
            chances[kind.id] = tuple(
                w.total(QuantityLabel("unit_type", kind.id, f"early_failure.{part}"), value, [])
                for part, value in (("chance", early.chance),
                                    ("chance_after_burnin_failure",
                                     early.chance_after_burnin_failure)))
        label = QuantityLabel("unit", unit.id, "early_failure")
        found["early"][unit.id] = w.early(label, early.age_days, [
            *chances[kind.id], *([attempts[unit.id]] if unit.id in attempts else [])])
        found["repair"][unit.id] = w.sample(label.derived("repair"), early.repair_days)
    policies = acceptance_policies(scenario)
    for unit in scenario.incoming:
        if unit.id not in attempts or not policies:
            continue
        stream = QuantityLabel("unit", unit.id, "soak_days")
        soak_days: dict = {}
        for k, policy in enumerate(policies):
            if policy.soak_days not in soak_days:
                label = stream if not soak_days else stream.derived(str(k))
                soak_days[policy.soak_days] = w.sample_at(label, policy.soak_days, stream)
            terms = [attempts[unit.id], soak_days[policy.soak_days]]
            early = found["early"].get(unit.id)
            label = QuantityLabel("unit", unit.id, f"acceptance{k}")
            if early is not None:
                found["out"][(unit.id, k)] = w.policy(label.derived("out"), Q_OUT,
                                                      policy.soak_after_failures,
                                                      terms + [early])
                terms += [early, found["repair"][unit.id]]
            found["soak"][(unit.id, k)] = w.policy(label.derived("soak"), Q_SOAK,
                                                   policy.soak_after_failures, terms)
    return found


def mitigations_in_effect(scenario: Scenario) -> list:
    """The risks whose mitigation is in effect in this scenario and has a cost: enabled,
    at their mitigated values (core.risks.with_mitigation), with `mitigated.cost`."""
    return [risk for risk in scenario.risks
            if risk.enabled and risk.mitigation_applied and risk.mitigation_cost is not None]


class _RiskTerms:
    """The enabled risks of a register as world quantities (`risk.<id>`: its impact with
    its probability, else 0), and which activities and dates each one delays."""

    def __init__(self, w: World, scenario: Scenario):
        self.w = w
        self.targets: dict[tuple[str, str | None], list[int]] = {}
        for risk in scenario.risks:
            if not risk.enabled:
                continue
            q = w.sample(QuantityLabel("risk", risk.id),
                         Distribution("chance", (risk.probability,), risk.impact))
            for target in risk.applies_to:
                kind, _, ident = target.partition(":")
                self.targets.setdefault((kind, ident or None), []).append(q)

    def terms(self, kind: str, ident: str) -> list[int]:
        """Risk quantities that delay (kind, ident): those naming it and those naming all."""
        return self.targets.get((kind, None), []) + self.targets.get((kind, ident), [])

    def wrap(self, kind: str, ident: str, q: int) -> int:
        """Quantity q, or q plus its risks as a new SUM quantity when any apply."""
        extra = self.terms(kind, ident)
        if not extra:
            return q
        return self.w.total(self.w.labels[q].derived("with_risks"), 0.0, [q] + extra)


def _check_addresses(w: World, scenario: Scenario) -> None:
    """Raise ScenarioError if two names of the plan hash to one address.

    Two such names would get the same draws in every scenario. With 64-bit ids this takes
    about 2**32 names to happen by chance, so it is a guard, found by `mcrisk validate`;
    the fix is to rename one of the two things.
    """
    owners = _address_owners(scenario)
    seen: dict[int, QuantityLabel] = {}
    problems = []
    for row in w.rows:
        for label, address in zip(row["address_labels"], row["address"]):
            first = seen.setdefault(address, label)
            if first != label:
                problems.append(_collision(scenario.path, owners, first, label))
    if problems:
        raise ScenarioError(problems)


def _address_owners(scenario: Scenario) -> dict[tuple[str, str], tuple[str, str]]:
    """(section, subject) of every thing that has draws -> (its key in the file, its id)."""
    owners = {("shared", name): (f"shared_delays.{name}", name)
              for name, _ in scenario.shared_delays}
    for section, key, things in (("shipment", "shipments", scenario.shipments),
                                 ("island", "islands", scenario.islands),
                                 ("unit_type", "unit_types", scenario.unit_types),
                                 ("risk", "risks", scenario.risks),
                                 ("hall", "halls", scenario.halls)):
        owners.update({(section, t.id): (f"{key}[{i}].id", t.id) for i, t in enumerate(things)})
    for h, hall in enumerate(scenario.halls):
        owners.update({("row", row.id): (f"halls[{h}].rows[{r}].id", row.id)
                       for r, row in enumerate(hall.rows)})
    for fleet, units in (("existing", scenario.existing), ("incoming", scenario.incoming)):
        owners.update({("unit", u.id): (f"{fleet}.units", u.id) for u in units})
    owners.update(_price_owners(scenario))
    owners[("demand", "forecast")] = ("demand.forecast.growth_per_year", "forecast")
    return owners


def _price_owners(scenario: Scenario) -> dict[tuple[str, str], tuple[str, str]]:
    """The key of each price quantity's subject ("cost", subject): a hall's contract, a unit
    type's price, shortfall, crews, a risk's mitigation (the first where ids coincide)."""
    owners: dict[tuple[str, str], tuple[str, str]] = {}
    if scenario.costs is None:
        return owners
    costs = scenario.costs
    keys = [(f"costs.power[{i}].hall", p.hall) for i, p in enumerate(costs.power)]
    keys += [(f"costs.{part}.{type_id}", type_id) for part, by_type in
             (("running", costs.running), ("waiting", costs.waiting)) for type_id, _ in by_type]
    keys += [("costs.shortfall", "shortfall"), ("costs.crews", "crews"),
             ("costs.integration", "integration")]
    keys += [(f"risks[{i}].mitigated.cost", r.id) for i, r in enumerate(scenario.risks)]
    for key, subject in keys:
        owners.setdefault(("cost", subject), (key, subject))
    return owners


def _collision(file: str, owners: dict[tuple[str, str], tuple[str, str]], first: QuantityLabel,
               label: QuantityLabel) -> Problem:
    """The Problem of `label`'s name hashing to the address of `first`'s, located at the
    owner of label (the thing its section and subject name)."""
    (key, ident), (first_key, first_ident) = (owners[(x.section, x.subject)]
                                              for x in (label, first))
    return Problem(file, key, ident,
                   f"the draws of {label.name!r} would be those of {first.name!r} ({first_key} = "
                   f"{first_ident!r}): their 64-bit random-stream addresses (hashes of the "
                   "names) collide",
                   f"rename {ident!r} or {first_ident!r}")
