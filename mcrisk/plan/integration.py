"""Install teams and burn-in bays (docs/scenario-format.md, Install teams and burn-in bays):
which of a strategy's nodes wait for a team or a bay, and the slots they may take.

The kernels know one kind of resource, the crew row (NODE_CREW): a node that also waits for a
free slot of its pool and keeps it busy. A strategy's slots are its retrofit crews (0 ..
crews - 1), then each pool of install teams or burn-in bays it needs. A unit in a hall (or
site) with limited teams makes its install start a crew row whose slot stays busy for the
install's days (crew_hold_q); with limited bays, its burn-in start likewise for the burn-in's
days (attempts, fixes and RMAs: the unit keeps its bay until it passes). Every crew row of
every pool is served by one rule: in the order the rows become ready (ties: the lower node
id), each taking the slot of its pool free first (ties: the lower slot).
"""
from __future__ import annotations

import numpy as np

from ..core.definitions import NODE_CREW
from ..core.model import Scenario, Strategy


def wire_bay(plan: dict, node: dict, unit_id: str, handles: dict) -> None:
    """A unit's install end (install start + install days) and burn-in start (its install
    end, or later when it waits for a bay) as nodes; it passes burn-in the burn-in's days
    after that start. Without a wait the times are those of the plan without the nodes."""
    install, burned = node[("install", unit_id)], node[("burned_in", unit_id)]
    installed, bay = node[("installed", unit_id)], node[("bay", unit_id)]
    plan["deps"][installed] = [install]
    plan["add_q"][installed] = [handles["install"][unit_id], -1]
    plan["deps"][bay] = [installed]
    plan["deps"][burned] = [bay]
    plan["add_q"][burned] = [handles["burn_in"].get(unit_id, -1), -1]


def bay_nodes(scenario: Scenario) -> list[tuple[tuple, str]]:
    """(key, name) of the nodes a plan with burn-in bays adds after all others: each unit's
    install end and burn-in start; none when no strategy has bays."""
    if not has_bays(scenario):
        return []
    return [node for unit in scenario.incoming
            for node in ((("installed", unit.id), f"{unit.id} installed"),
                         (("bay", unit.id), f"{unit.id} burn-in starts"))]


def slot_arrays(scenario: Scenario, node: dict, plans: list[dict], prices: dict) -> dict:
    """The plan's slot and pool fields (mcrisk/plan/record.py, groups crew_schedule and
    costs). A pool costs its size x the price of a team (a bay) per day it is engaged: from
    its first install's (burn-in's) start to its last one's end, as the crews are paid
    (docs/costs.md); `prices`: the world quantity of each price given as a distribution."""
    def stacked(key: str) -> np.ndarray:
        return np.array([p[key] for p in plans], dtype=np.int32)

    width = max(1, max(len(p["pools"]) for p in plans))
    pool_first = np.zeros((len(plans), width), dtype=np.int32)
    pool_rate = np.zeros((len(plans), width))
    pool_price_q = np.full((len(plans), width), -1, dtype=np.int32)
    costs = scenario.costs
    for s, plan in enumerate(plans):
        for w, (first, size, what) in enumerate(plan["pools"]):
            pool_first[s, w] = first
            if costs is None:
                continue
            part = "per_team_day" if what == "teams" else "per_bay_day"
            dist = costs.team_per_day if what == "teams" else costs.bay_per_day
            q = prices.get(("integration", part), -1)
            pool_price_q[s, w] = q
            pool_rate[s, w] = float(size) * (1.0 if q >= 0 else float(dist.params[0]))
    return {"n_slots": stacked("n_slots"), "crew_first": stacked("crew_first"),
            "crew_count": stacked("crew_count"), "crew_hold_q": stacked("hold_q"),
            "n_retrofit_rows": np.array([retrofit_rows(scenario, node, p) for p in plans],
                                        dtype=np.int32),
            "n_pools": np.array([len(p["pools"]) for p in plans], dtype=np.int32),
            "pool_first": pool_first, "pool_rate": pool_rate, "pool_price_q": pool_price_q}


def retrofit_rows(scenario: Scenario, node: dict, plan: dict) -> int:
    """How many of the strategy's crew rows are row retrofits: the first ones (rows have
    lower node ids than units), the only ones the crews' cost counts."""
    rows = {node[("ready", row.id)] for row in scenario.rows()}
    count = sum(v in rows for v in plan["crew_rows"])
    assert all(v in rows for v in plan["crew_rows"][:count]), "retrofits come first"
    return count


def has_bays(scenario: Scenario) -> bool:
    """Whether some strategy burns units in limited bays (the plan then has each unit's
    install end and burn-in start as nodes)."""
    return (scenario.integration.burn_in_bays is not None
            or any(h.burn_in_bays is not None for h in scenario.halls)
            or any(s.burn_in_bays is not None for s in scenario.strategies))


def crew_slots(scenario: Scenario, strategy: Strategy, plan: dict, node: dict,
                handles: dict) -> None:
    """The slots each crew row may take (docs/scenario-format.md, Install teams and burn-in
    bays): slots 0 .. crews - 1 are the retrofit crews, then each pool of install teams or
    burn-in bays in the order a unit (in placement order) first needs it: a hall's own, else
    the site's. A unit with a limited pool makes its install start (its burn-in start) a crew
    row whose slot stays busy for the install's (the burn-in's) days."""
    n = len(plan["kind"])
    plan["crew_first"], plan["crew_count"], plan["hold_q"] = [0] * n, [0] * n, [-1] * n
    crews = strategy.crews_in(scenario.retrofit)
    for row in scenario.rows():      # a row a status records as started is a crew row too
        plan["crew_count"][node[("ready", row.id)]] = crews
    site = strategy.integration_in(scenario.integration)
    halls = {h.id: h for h in scenario.halls}
    pools: dict[tuple, tuple[int, int]] = {}
    plan["pools"] = []                   # (first slot, size, "teams" or "bays"), in order
    slots = crews
    for unit_id, hall_id in plan["hall_of_unit"].items():
        hall = halls[hall_id]
        for what, own, shared, key, hold in (
                ("teams", hall.install_teams, site.install_teams, ("install", unit_id),
                 handles["install"][unit_id]),
                ("bays", hall.burn_in_bays, site.burn_in_bays, ("bay", unit_id),
                 handles["burn_in"].get(unit_id, -1))):
            size = own if own is not None else shared
            if size is None or (what == "bays" and hold < 0):
                continue                         # unlimited, or a type without burn-in
            pool = (what, hall_id if own is not None else None)
            if pool not in pools:
                pools[pool] = (slots, size)
                plan["pools"].append((slots, size, what))
                slots += size
            v = node[key]
            plan["kind"][v] = NODE_CREW
            plan["crew_first"][v], plan["crew_count"][v] = pools[pool]
            plan["hold_q"][v] = hold
    plan["n_slots"] = slots
