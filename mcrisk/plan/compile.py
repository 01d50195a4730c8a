"""Compile a validated Scenario into flat arrays: the only thing the kernels see.

Two layers, and a schedule derived from the second:

* The **world**: quantities drawn or derived once per scenario, shared by every strategy
  (common random numbers). Quantity q is one of
    SAMPLE   a draw of distribution q_dist[q] at address q_address[q, 0] (a 64-bit
             rng.address_id of the quantity's name; no two addresses of a plan are equal)
    SUM      q_const[q] + sum of earlier quantities q_terms[q_terms_ptr[q]:q_terms_ptr[q+1]]
    BURNIN   the days a unit's burn-in takes (attempts, fixes, RMAs); addresses
             q_address[q, 0..3] = attempt, outcome, fix, rma; the next quantity holds its
             number of attempts (kind ATTEMPTS, filled by the same step)
    EARLY    a unit's service age at its early failure, +inf if none: terms = chance, chance
             after a burn-in failure (, burn-in attempts; without: no failure); fails when
             the uniform at q_address[q, 0] is below the chance that applies; age q_dist[q]
             drawn at q_address[q, 1]
    SOAK/OUT of a unit under an acceptance policy: q_const = soak_after_failures N, terms
             = attempts, soak days S (, age x (, repair R)); SOAK: 0 if attempts - 1 < N,
             else S + R if x < S, else S; OUT (days from acceptance to the failure): x if
             attempts - 1 < N, else +inf if x < S, else x - S (mcrisk/plan/world.py)
  Quantities are in dependency order, so a single forward pass computes them. mcrisk/plan/world.py
  builds them, each with a name and a QuantityLabel (what it is about; mcrisk/core/quantities.py).

* The **plan** of each strategy: a max-plus network of timed nodes with fixed ids shared by
  all strategies (node k is "drain SU1" in every strategy), listed per strategy in
  topological order. A node's time is
      t[v] = max(base_const[s, v], world[node_base_q[v]], max over deps d of t[d])
             + world[add_q[s, v, 0]] + world[add_q[s, v, 1]] + add_const[s, v]
  (a missing base or add quantity is -1 and contributes nothing). A CREW node (a row's
  retrofit) additionally waits for a free crew; crews take rows in the order they become
  ready (ties: lower node id, which is file order of rows). Each strategy has its own crews
  (n_crews[s]: its `crews`, else the scenario's [retrofit] crews). Install teams and burn-in
  bays are crews of other pools, taken by the same rule (mcrisk/plan/integration.py).

* The **crew schedule** of each strategy (performance: it lets the kernels time nodes without
  a worklist). Every node but a crew row is a max-plus function of its deps, so it can be
  timed as soon as every crew row it waits for (through any path) has a crew. A strategy's
  nodes therefore fall into blocks: each crew row alone, and the other nodes grouped by the
  set of crew rows they wait for, in topological order. The kernels time the blocks that
  wait for no crew row, then give the earliest-ready crew row a crew, time the blocks that
  were waiting for it last, and repeat. Blocks are sorted by how many crew rows they wait
  for, crew rows after the other blocks of that count, so the blocks one crew row frees are
  timed in dependency order. The kernels simulate the strategies in file order on one
  world, so a node defined as in the strategy before, with deps that are all such nodes,
  already has its time: it is in no block. A block no crew row waits for (block_feeds_crew
  is 0) decides no crew's order: the Numba kernel times it for many scenarios at once after
  each scenario's crews have taken their rows.

Capacity changes happen at node times (existing unit: -capacity at its drain start; new
unit: +capacity at acceptance); power draw changes likewise (existing: -kW at removal end;
new: +kW at install start, in the hall it is placed in, which depends on the strategy).

A unit a strategy keeps (Strategy.keep) has its drain and removal nodes at +inf in that
strategy: its capacity and power events never happen, so its capacity stays in its island,
its draw in its hall and its running cost runs to the horizon (every kernel clips times to
[0, horizon] and sorts +inf last). Its completion node is then not its removal: a unit kept
by some strategy gets a node "U leaves the migration", the removal in a strategy that drains
it and day 0 in one that keeps it, and that node replaces the removal among the completion
nodes. A scenario where no strategy keeps a unit compiles exactly as before.

Failures (docs/metrics.md): attrition scales every capacity of a type by its usable share;
a unit's soak adds to its acceptance; its early failure takes each of its capacity events
out from max(out, event) to max(back, event), nodes added after all others.
"""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from .contingency import compile_contingencies
from .costs import cost_arrays, no_cost_arrays
from ..core.definitions import NODE_CREW, NODE_MAX
from .demand import demand_points
from .integration import bay_nodes, crew_slots, slot_arrays, wire_bay
from .jobs import job_arrays
from ..core.model import Scenario, Strategy
from .record import CompiledScenario  # noqa: F401 (re-exported: the plan interface is record.py)
from .window import with_window
from .world import World, acceptance_policies, compile_world
from ..core.status import Status
from .activities import (activity_facts, condition_plans, condition_units, from_today,
                         status_retrofit_rows)
from .conditioning import condition, date_facts, pin_quantities
from .copula import check_correlations, copula_fields, joint_status


def _needs_retrofit(scenario: Scenario, strategy: Strategy) -> set[str]:
    """Rows that strategy makes liquid: air rows given a liquid unit."""
    rows = {row.id: row for row in scenario.rows()}
    kinds = {u.id: scenario.unit_type(u.type) for u in scenario.incoming}
    return {row for unit, row in strategy.placement
            if kinds[unit].cooling == "liquid" and rows[row].cooling == "air"}


def kept_by_any(scenario: Scenario) -> list[str]:
    """Existing units some strategy keeps, in file order."""
    kept = {unit for strategy in scenario.strategies for unit in strategy.keep}
    return [unit.id for unit in scenario.existing if unit.id in kept]


class _Nodes:
    """Fixed node ids shared by every strategy."""

    def __init__(self, scenario: Scenario, handles: dict):
        self.names: list[str] = []
        self.base_q: list[int] = []
        self.id: dict[tuple, int] = {}
        for ship in scenario.shipments:
            self._add(("arrival", ship.id), f"shipment {ship.id} arrives",
                      handles["arrival"][ship.id])
        for hall in scenario.halls:
            self._add(("energized", hall.id), f"hall {hall.id} energized",
                      handles["energized"].get(hall.id, -1))
        for island in scenario.islands:
            self._add(("island", island.id), f"island {island.id} ready",
                      handles["island_ready"].get(island.id, -1))
        for unit in scenario.existing:
            self._add(("drain", unit.id), f"{unit.id} drain starts")
            self._add(("removed", unit.id), f"{unit.id} removed")
        for row in scenario.rows():
            self._add(("ready", row.id), f"row {row.id} ready for new units")
        for unit in scenario.incoming:
            self._add(("install", unit.id), f"{unit.id} install starts")
            self._add(("burned_in", unit.id), f"{unit.id} passes burn-in")
            self._add(("accepted", unit.id), f"{unit.id} accepted")
        for unit in scenario.incoming:
            ramp = scenario.unit_type(unit.type).ramp
            for step in range(1, ramp.steps + 1) if ramp else ():
                self._add(("ramp", unit.id, step), f"{unit.id} ramp step {step}")
        for unit_id in kept_by_any(scenario):
            self._add(("leaves", unit_id), f"{unit_id} leaves the migration")
        for unit in scenario.incoming:
            kind = scenario.unit_type(unit.type)
            if kind.early_failures is None:
                continue
            self._add(("out", unit.id), f"{unit.id} fails early")
            self._add(("back", unit.id), f"{unit.id} back from repair")
            for step in range(1, kind.ramp.steps + 1) if kind.ramp else ():
                self._add(("out", unit.id, step), f"{unit.id} ramp step {step} out")
                self._add(("back", unit.id, step), f"{unit.id} ramp step {step} back")

        for key, name in bay_nodes(scenario):   # last: the ids above stay as they were
            self._add(key, name)

    def _add(self, key: tuple, name: str, base_q: int = -1) -> None:
        self.id[key] = len(self.names)
        self.names.append(name)
        self.base_q.append(base_q)


def _strategy_plan(scenario: Scenario, strategy: Strategy, nodes: _Nodes, handles: dict) -> dict:
    """Node kinds, constants, adds and deps of one strategy over the fixed node ids."""
    n = len(nodes.names)
    plan = dict(kind=[NODE_MAX] * n, base_const=[0.0] * n, add_q=[[-1, -1] for _ in range(n)],
                add_const=[0.0] * n, deps=[[] for _ in range(n)], floor=[-np.inf] * n)
    node = nodes.id
    hall_of_row = {row.id: row.hall for row in scenario.rows()}
    units_in_row: dict[str, list[str]] = {}
    for unit in scenario.existing:
        units_in_row.setdefault(unit.row, []).append(unit.id)
    shipment_of = {u: ship.id for ship in scenario.shipments for u in ship.units}
    type_of = {u.id: u.type for u in scenario.incoming}
    island_of = {u: scenario.island_of(type_of[u], row) for u, row in strategy.placement}
    ramp_of = {u.id: scenario.unit_type(u.type).ramp for u in scenario.incoming}
    policies = acceptance_policies(scenario)
    policy = policies.index(strategy.acceptance) if strategy.acceptance is not None else None
    for unit_id, trigger in strategy.drains:
        v = node[("drain", unit_id)]
        plan["base_const"][v] = trigger.day if trigger.day is not None else 0.0
        plan["deps"][v] = ([node[("arrival", s)] for s in trigger.on_arrival]
                           + [node[("accepted", u)] for u in trigger.on_accepted])
        plan["add_const"][v] = trigger.lag_days
        removed = node[("removed", unit_id)]
        plan["deps"][removed] = [v]
        plan["add_q"][removed] = [handles["drain"][unit_id], handles["removal"][unit_id]]
    for unit_id in strategy.keep:        # never drained: no event before the horizon
        plan["base_const"][node[("drain", unit_id)]] = np.inf
        plan["base_const"][node[("removed", unit_id)]] = np.inf
    for unit_id in kept_by_any(scenario):
        if unit_id not in strategy.keep:  # leaves with its removal; a kept unit at day 0
            plan["deps"][node[("leaves", unit_id)]] = [node[("removed", unit_id)]]
    retrofit = _needs_retrofit(scenario, strategy)
    for row in scenario.rows():
        v = node[("ready", row.id)]
        plan["deps"][v] = ([node[("removed", u)] for u in units_in_row.get(row.id, [])]
                           + [node[("energized", row.hall)]])
        if row.id in retrofit:
            plan["kind"][v] = NODE_CREW
            plan["add_q"][v] = [handles["retrofit"][row.id], -1]
    for unit_id, row_id in strategy.placement:
        install = node[("install", unit_id)]
        plan["deps"][install] = [node[("arrival", shipment_of[unit_id])], node[("ready", row_id)]]
        burned = node[("burned_in", unit_id)]
        plan["deps"][burned] = [install]
        plan["add_q"][burned] = [handles["install"][unit_id],
                                 handles["burn_in"].get(unit_id, -1)]
        if ("bay", unit_id) in node:
            wire_bay(plan, node, unit_id, handles)
        accepted = node[("accepted", unit_id)]
        plan["deps"][accepted] = [burned, node[("island", island_of[unit_id])]]
        ramp = ramp_of[unit_id]
        for step in range(1, ramp.steps + 1) if ramp else ():
            v = node[("ramp", unit_id, step)]
            plan["deps"][v] = [accepted]
            plan["add_const"][v] = ramp.days * step / ramp.steps
        _early_failure_nodes(plan, node, unit_id, ramp, handles, policy)
    plan["hall_of_unit"] = {u: hall_of_row[r] for u, r in strategy.placement}
    crew_slots(scenario, strategy, plan, node, handles)
    plan["deps"] = [list(dict.fromkeys(ds)) for ds in plan["deps"]]  # a dep counts once
    plan["topo"] = _topological_order(plan["deps"], nodes.names, strategy.name)
    plan["island_of_unit"] = island_of      # by its row: placement decides, as for its hall
    return plan


def _early_failure_nodes(plan: dict, node: dict, unit_id: str, ramp, handles: dict,
                         policy: int | None) -> None:
    """The extra soak of a unit under the strategy's acceptance policy (added to its
    acceptance), and the nodes of its early failure: out = accepted + days to the failure
    (Q_OUT of the policy, or the age Q_EARLY without a soak policy), back = out + repair, and
    per ramp step j: max(out, step j) and max(back, step j), when step j's capacity leaves and
    returns (an increment due during the outage arrives at back)."""
    accepted = node[("accepted", unit_id)]
    soak = handles["soak"].get((unit_id, policy), -1)
    plan["add_q"][accepted] = [soak, -1]
    if ("out", unit_id) not in node:
        return
    out, back = node[("out", unit_id)], node[("back", unit_id)]
    plan["deps"][out] = [accepted]
    plan["add_q"][out] = [handles["out"].get((unit_id, policy), handles["early"][unit_id]), -1]
    plan["deps"][back] = [out]
    plan["add_q"][back] = [handles["repair"][unit_id], -1]
    for step in range(1, ramp.steps + 1) if ramp else ():
        plan["deps"][node[("out", unit_id, step)]] = [out, node[("ramp", unit_id, step)]]
        plan["deps"][node[("back", unit_id, step)]] = [back, node[("ramp", unit_id, step)]]


def _unchanged_nodes(before: dict | None, plan: dict) -> set[int]:
    """Nodes that `plan` times exactly as `before` (the strategy simulated just before it, on
    the same world) does: same definition, and deps that are all unchanged nodes."""
    unchanged: set[int] = set()
    if before is None:
        return unchanged
    for v in plan["topo"]:
        if (plan["kind"][v] == before["kind"][v] == NODE_MAX
                and _same_bits(plan["base_const"][v], before["base_const"][v])
                and _same_bits(plan["add_const"][v], before["add_const"][v])
                and _same_bits(plan["floor"][v], before["floor"][v])
                and plan["add_q"][v] == before["add_q"][v]
                and plan["deps"][v] == before["deps"][v]
                and all(d in unchanged for d in plan["deps"][v])):
            unchanged.add(v)
    return unchanged


def _same_bits(a: float, b: float) -> bool:
    return np.float64(a).tobytes() == np.float64(b).tobytes()


def _crew_schedule(deps: list[list[int]], kind: list[int], topo: list[int],
                   unchanged: set[int]) -> dict:
    """Blocks of one strategy's nodes (but the unchanged ones), its crew rows, the blocks
    that wait for each crew row, and which blocks a crew row waits for (through any path)."""
    position = {v: i for i, v in enumerate(topo)}
    waits_for: list[frozenset] = [frozenset()] * len(topo)   # the crew rows upstream of v
    for v in topo:
        waits_for[v] = frozenset().union(
            *(waits_for[d] | ({d} if kind[d] == NODE_CREW else set()) for d in deps[v]))
    groups: dict[tuple, list[int]] = {}
    for v in topo:
        if v in unchanged:
            continue
        key = ("crew row", v) if kind[v] == NODE_CREW else ("nodes", waits_for[v])
        groups.setdefault(key, []).append(v)
    blocks = sorted(groups.values(), key=lambda b: (len(waits_for[b[0]]),
                                                     kind[b[0]] == NODE_CREW, position[b[0]]))
    crew_rows = sorted(v for v in topo if kind[v] == NODE_CREW)
    feeds_crew: set[int] = set()                 # nodes some crew row waits for
    for v in reversed(topo):
        if kind[v] == NODE_CREW or v in feeds_crew:
            feeds_crew.update(deps[v])
    return {"blocks": blocks,
            "block_wait": [len(waits_for[b[0]]) for b in blocks],
            "block_feeds_crew": [int(kind[b[0]] == NODE_CREW or not feeds_crew.isdisjoint(b))
                                 for b in blocks],
            "crew_rows": crew_rows,
            "unlocks": [[j for j, b in enumerate(blocks) if r in waits_for[b[0]]]
                        for r in crew_rows]}


def _topological_order(deps: list[list[int]], names: list[str], strategy: str) -> list[int]:
    """Kahn's algorithm, lowest id first; a cycle is a bug past validation, so it raises."""
    n = len(deps)
    users: list[list[int]] = [[] for _ in range(n)]
    waiting = [len(d) for d in deps]
    for v, ds in enumerate(deps):
        for d in ds:
            users[d].append(v)
    ready = sorted(v for v in range(n) if waiting[v] == 0)
    order: list[int] = []
    while ready:
        v = ready.pop(0)
        order.append(v)
        for user in users[v]:
            waiting[user] -= 1
            if waiting[user] == 0:
                ready.append(user)
    if len(order) != n:
        stuck = [names[v] for v in range(n) if waiting[v] > 0]
        raise ValueError(f"strategy {strategy!r} has a dependency cycle through {stuck}")
    return order


def compile_scenario(scenario: Scenario, status: Status | None = None) -> CompiledScenario:
    """Flatten a validated scenario and all its strategies into kernel arrays; given a
    status, every quantity conditioned on its facts and every strategy applied to what
    remains (mcrisk/plan/conditioning.py, mcrisk/plan/activities.py; docs/status.md). Without
    one the plan is exactly the unconditioned one. The status defaults to the one the scenario
    carries (core.facts.with_facts); with a status the metrics and costs count from as_of
    (plan.window)."""
    status = scenario.status if status is None else status
    if status is not None:
        scenario = from_today(scenario, status)
    retrofitted = set().union(*(_needs_retrofit(scenario, s) for s in scenario.strategies))
    if status is not None:
        retrofitted |= status_retrofit_rows(status)
    retrofit_rows = [row.id for row in scenario.rows() if row.id in retrofitted]
    world, handles = compile_world(scenario, retrofit_rows)
    check_correlations(scenario, world)
    if status is not None:
        condition_world(scenario, status, world, handles)
    nodes = _Nodes(scenario, handles)
    plans = [_strategy_plan(scenario, s, nodes, handles) for s in scenario.strategies]
    if status is not None:
        condition_plans(scenario, status, nodes.id, plans, handles)
        for strategy, plan in zip(scenario.strategies, plans):
            plan["topo"] = _topological_order(plan["deps"], nodes.names, strategy.name)
    for before, plan in zip([None] + plans[:-1], plans):
        plan.update(_crew_schedule(plan["deps"], plan["kind"], plan["topo"],
                                   _unchanged_nodes(before, plan)))
    plan = _assemble(scenario, world, nodes, plans, handles)
    # With a status every number is about the future, [as_of, horizon) (plan.window; the
    # history is measured apart, on window.history_plan).
    return plan if status is None else with_window(plan, status)


def _csr(lists_by_strategy: list[list[list[int]]], n_lists: int):
    """(ptr[s, n_lists + 1], idx[s, width]) of per-strategy lists of lists; a strategy with
    fewer lists gets empty ones at the end; width is the longest total (at least 1)."""
    width = max(1, max(sum(len(ds) for ds in lists) for lists in lists_by_strategy))
    ptr = np.zeros((len(lists_by_strategy), n_lists + 1), dtype=np.int32)
    idx = np.zeros((len(lists_by_strategy), width), dtype=np.int32)
    for s, lists in enumerate(lists_by_strategy):
        flat = [d for ds in lists for d in ds]
        idx[s, :len(flat)] = flat
        ptr[s, 1:len(lists) + 1] = np.cumsum([len(ds) for ds in lists])
        ptr[s, len(lists) + 1:] = len(flat)
    return ptr, idx


def _padded(rows: list[list], width: int) -> np.ndarray:
    """int32[len(rows), width]: each row, zero-padded."""
    out = np.zeros((len(rows), width), dtype=np.int32)
    for s, row in enumerate(rows):
        out[s, :len(row)] = row
    return out


def _halls_that_could_pass_their_cap(hall_of_event: list[int], delta: list[float],
                                     draw0: np.ndarray, cap: list[float]) -> set[int]:
    """Halls whose draw, summed in floats in any order of its events, could exceed its cap.

    A hall cannot when its initial draw plus all its increases, plus a bound on the rounding
    of a float sum of those terms (n * 2**-52 * sum |term|), stays within its finite cap;
    worked out exactly on the float values.
    """
    could = set()
    for h, cap_kw in enumerate(cap):
        terms = [Fraction(float(draw0[h]))] + [Fraction(d) for d, at in zip(delta, hall_of_event)
                                               if at == h]
        peak = terms[0] + sum(t for t in terms[1:] if t > 0)
        rounding = len(terms) * Fraction(2.0 ** -52) * sum(abs(t) for t in terms)
        if peak + rounding > Fraction(cap_kw):
            could.add(h)
    return could


def _assemble(scenario: Scenario, world: World, nodes: _Nodes, plans: list[dict],
              handles: dict) -> CompiledScenario:
    n_nodes = len(nodes.names)
    node = nodes.id
    islands = [i.id for i in scenario.islands]
    halls = [h.id for h in scenario.halls]
    hall_of_row = {row.id: row.hall for row in scenario.rows()}
    # capacity and power events
    cap_node, cap_delta, cap_scale = [], [], []
    cap_island: list[list[int]] = [[] for _ in plans]     # per strategy: placement decides
    island_cap0 = np.zeros(len(islands))
    power_node, power_delta, power_hall = [], [], [[] for _ in plans]
    hall_draw0 = np.zeros(len(halls))
    for unit in scenario.existing:
        kind = scenario.unit_type(unit.type)
        island = islands.index(scenario.island_of(unit.type, unit.row))   # its row's
        island_cap0[island] += kind.capacity * kind.usable_share
        cap_node.append(node[("drain", unit.id)])
        for events in cap_island:
            events.append(island)
        cap_delta.append(-(kind.capacity * kind.usable_share))
        cap_scale.append(-1)
        hall = halls.index(hall_of_row[unit.row])
        hall_draw0[hall] += kind.power_kw
        power_node.append(node[("removed", unit.id)])
        power_delta.append(-kind.power_kw)
        for hs in power_hall:
            hs.append(hall)
    for unit in scenario.incoming:
        kind = scenario.unit_type(unit.type)
        # capacity from acceptance (a ramp's start fraction), then each ramp step's share;
        # with uncertain performance the delta is in GPUs and scaled by the drawn H100-eq/GPU
        scale_q = handles["performance"].get(kind.id, -1)
        per_unit = kind.gpus if scale_q >= 0 else kind.capacity
        steps = [(node[("accepted", unit.id)], kind.ramp.start_fraction if kind.ramp else 1.0)]
        if kind.ramp:
            share = (1.0 - kind.ramp.start_fraction) / kind.ramp.steps
            steps += [(node[("ramp", unit.id, j)], share) for j in range(1, kind.ramp.steps + 1)]
        island_in = [islands.index(plan["island_of_unit"][unit.id]) for plan in plans]
        for v, fraction in steps:
            cap_node.append(v)
            for events, island in zip(cap_island, island_in):
                events.append(island)
            cap_delta.append(fraction * per_unit * kind.usable_share)
            cap_scale.append(scale_q)
        outages = [(("out", unit.id, *j), ("back", unit.id, *j))
                   for j in [()] + [(k,) for k in range(1, len(steps))]]
        for (out, back), (_, fraction) in zip(outages if ("out", unit.id) in node else (),
                                              steps):   # an early failure's outage
            for v, sign in ((node[out], -1.0), (node[back], 1.0)):
                cap_node.append(v)
                for events, island in zip(cap_island, island_in):
                    events.append(island)
                cap_delta.append(sign * (fraction * per_unit * kind.usable_share))
                cap_scale.append(scale_q)
        power_node.append(node[("install", unit.id)])
        power_delta.append(kind.power_kw)
        for hs, plan in zip(power_hall, plans):
            hs.append(halls.index(plan["hall_of_unit"][unit.id]))
    cap_order, power_order = [], []
    for plan, hall_of_event in zip(plans, power_hall):
        position = {v: i for i, v in enumerate(plan["topo"])}
        cap_order.append(sorted(range(len(cap_node)), key=lambda k: position[cap_node[k]]))
        could = _halls_that_could_pass_their_cap(hall_of_event, power_delta, hall_draw0,
                                                 [h.power_cap_kw for h in scenario.halls])
        power_order.append(sorted((k for k in range(len(power_node))
                                   if hall_of_event[k] in could),
                                  key=lambda k: position[power_node[k]]))
    leaves = set(kept_by_any(scenario))
    completion = ([node[("leaves" if u.id in leaves else "removed", u.id)]
                   for u in scenario.existing]
                  + [node[("accepted", u.id)] for u in scenario.incoming])
    dep_ptr, dep_idx = _csr([p["deps"] for p in plans], n_nodes)
    block_ptr, block_node = _csr([p["blocks"] for p in plans], n_nodes)
    max_crew_rows = max(1, max(len(p["crew_rows"]) for p in plans))
    unlock_ptr, unlock_block = _csr([p["unlocks"] for p in plans], max_crew_rows)
    terms = [t for row in world.rows for t in row["terms"]]
    burnins = world.burnins or [((0, 0, 0), (0.0, 0.0), 1)]
    dists = world.dists or [(0, (0.0, 0.0, 0.0, 0.0), 1.0)]
    demand_day, demand_value, demand_growth_q, demand_p50 = demand_points(
        scenario, handles["demand_growth"])
    return CompiledScenario(
        scenario_name=scenario.name,
        strategy_names=tuple(s.name for s in scenario.strategies),
        quantity_names=tuple(world.names),
        quantity_labels=tuple(world.labels),
        node_names=tuple(nodes.names),
        island_names=tuple(islands),
        hall_names=tuple(halls),
        dist_kind=np.array([d[0] for d in dists], dtype=np.int32),
        dist_param=np.array([d[1] for d in dists], dtype=np.float64).reshape(-1, 4),
        dist_chance=np.array([d[2] for d in dists], dtype=np.float64),
        pert_table=(np.concatenate(world.pert_tables) if world.pert_tables
                    else np.zeros(1, dtype=np.float64)),
        q_kind=np.array([r["kind"] for r in world.rows], dtype=np.int32),
        q_dist=np.array([r["dist"] for r in world.rows], dtype=np.int32),
        q_address=np.array([r["address"] for r in world.rows], dtype=np.uint64).reshape(-1, 4),
        q_const=np.array([r["const"] for r in world.rows], dtype=np.float64),
        q_terms_ptr=np.concatenate([[0], np.cumsum([len(r["terms"]) for r in world.rows])]).astype(np.int32),
        q_terms=np.array(terms if terms else [0], dtype=np.int32),
        q_burnin=np.array([r["burnin"] for r in world.rows], dtype=np.int32),
        q_status=np.array([r["status"] for r in world.rows], dtype=np.int32),
        q_state=np.array([r["state"] for r in world.rows], dtype=np.float64).reshape(-1, 4),
        burnin_dist=np.array([b[0] for b in burnins], dtype=np.int32).reshape(-1, 3),
        burnin_fail=np.array([b[1] for b in burnins], dtype=np.float64).reshape(-1, 2),
        burnin_rma_after=np.array([b[2] for b in burnins], dtype=np.int32),
        **copula_fields(scenario, world),
        node_base_q=np.array(nodes.base_q, dtype=np.int32),
        node_kind=np.array([p["kind"] for p in plans], dtype=np.int32),
        node_base_const=np.array([p["base_const"] for p in plans], dtype=np.float64),
        node_add_q=np.array([p["add_q"] for p in plans], dtype=np.int32).reshape(len(plans), n_nodes, 2),
        node_add_const=np.array([p["add_const"] for p in plans], dtype=np.float64),
        node_floor=np.array([p["floor"] for p in plans], dtype=np.float64),
        dep_ptr=dep_ptr,
        dep_idx=dep_idx,
        topo=np.array([p["topo"] for p in plans], dtype=np.int32),
        n_crews=np.array(_crews(scenario), dtype=np.int32),
        block_ptr=block_ptr,
        block_node=block_node,
        block_wait=_padded([p["block_wait"] for p in plans], n_nodes),
        n_ready_blocks=np.array([p["block_wait"].count(0) for p in plans], dtype=np.int32),
        block_feeds_crew=_padded([p["block_feeds_crew"] for p in plans], n_nodes),
        crew_node=_padded([p["crew_rows"] for p in plans], max_crew_rows),
        n_crew_rows=np.array([len(p["crew_rows"]) for p in plans], dtype=np.int32),
        unlock_ptr=unlock_ptr,
        unlock_block=unlock_block,
        **slot_arrays(scenario, node, plans, handles.get("cost", {})),
        cap_event_node=np.array(cap_node, dtype=np.int32),
        cap_event_island=np.array(cap_island, dtype=np.int32).reshape(len(plans), -1),
        cap_event_delta=np.array(cap_delta, dtype=np.float64),
        cap_event_scale_q=np.array(cap_scale, dtype=np.int32),
        island_cap0=island_cap0,
        power_event_node=np.array(power_node, dtype=np.int32),
        power_event_hall=np.array(power_hall, dtype=np.int32).reshape(len(plans), -1),
        power_event_delta=np.array(power_delta, dtype=np.float64),
        cap_event_order=np.array(cap_order, dtype=np.int32).reshape(len(plans), -1),
        power_event_order=_padded(power_order, len(power_node)),
        n_power_checked=np.array([len(o) for o in power_order], dtype=np.int32),
        hall_draw0=hall_draw0,
        hall_cap=np.array([h.power_cap_kw for h in scenario.halls], dtype=np.float64),
        completion_node=np.array(completion, dtype=np.int32),
        baseline=float(island_cap0.sum()),
        horizon=float(scenario.horizon_days),
        window_start=0.0,
        largest_job=float(scenario.demand.largest_job),
        demand_day=demand_day,
        demand_value=demand_value,
        demand_growth_q=demand_growth_q,
        demand_p50=demand_p50,
        **_cost_fields(scenario, nodes, (power_node, power_delta, power_hall), hall_draw0,
                       handles),
        **job_arrays(scenario),
        contingencies=compile_contingencies(scenario, nodes.id, [p["kind"] for p in plans]),
    )


def condition_world(scenario: Scenario, status: Status, world: World, handles: dict) -> None:
    """Every world quantity conditioned on the status: pins (risks, performance), then the
    dates' and the activities' facts together, then burn-in histories and early failures, then the
    correlation groups of two whose both members the status conditions (plan.copula)."""
    pin_quantities(scenario, status, world, handles)
    facts = date_facts(scenario, status, world, handles) + activity_facts(scenario, status,
                                                                            handles)
    condition(world, facts, status)
    condition_units(scenario, status, world, handles)
    joint_status(scenario, world)


def _cost_fields(scenario: Scenario, nodes: _Nodes, power_events: tuple, hall_draw0: np.ndarray,
                 handles: dict) -> dict:
    """The plan's costs group: placeholders and n_costs 0 without [costs], else
    mcrisk/plan/costs.py's arrays (its prices given as distributions are world quantities)."""
    if scenario.costs is None:
        return no_cost_arrays(len(scenario.strategies), len(scenario.halls))
    return cost_arrays(scenario, nodes.id, *power_events, hall_draw0, handles["cost"],
                       _crews(scenario))


def _crews(scenario: Scenario) -> list[int]:
    """The retrofit crews of each strategy: its own `crews`, else the scenario's."""
    return [strategy.crews_in(scenario.retrofit) for strategy in scenario.strategies]
