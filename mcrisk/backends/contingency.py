"""Each world takes its branch: the contingent strategies' rows replaced by their branches'.

Every backend simulates the plan as compiled (a contingent strategy's row is its `met`
branch); Backend.simulate_chunk then calls `take_branches` on the chunk, the same NumPy code
after every backend, so the three backends agree here by construction. Before a world's
contingent row is replaced, non-anticipation is checked in that world: a decision may only
choose between plans that agree on everything that happened before its outcome was known.
"""
from __future__ import annotations

import numpy as np

from ..core.errors import McriskError
from ..plan.record import CompiledScenario


class AnticipationError(McriskError):
    """A contingent strategy's branches differ before its decision: the plan would need to
    know the future to follow it."""


def take_branches(plan: CompiledScenario, first: int, metrics: np.ndarray,
                  node_times: np.ndarray) -> None:
    """In place: each contingency's row of metrics[c, s, m] and node_times[c, s, v] becomes
    the row of the branch its decision takes in each world (scenario indices first ..).
    Raises AnticipationError naming the strategy, the branch, the node, the day and the
    scenario where the branches differ before the decision's outcome is known."""
    for c in plan.contingencies:
        met = c.met(node_times)
        check_non_anticipative(plan, c, first, node_times, met)
        chosen = np.where(met, c.met_row, c.unmet_row)
        worlds = np.arange(met.shape[0])
        metrics[:, c.row] = metrics[worlds, chosen]
        node_times[:, c.row] = node_times[worlds, chosen]


def branches_taken(plan: CompiledScenario, node_times: np.ndarray) -> np.ndarray:
    """bool[c, contingencies]: whether each world meets each decision's condition (takes
    its `met` branch), from node_times[c, s, v] (of the branch rows, never replaced)."""
    taken = np.zeros((node_times.shape[0], len(plan.contingencies)), dtype=bool)
    for k, c in enumerate(plan.contingencies):
        taken[:, k] = c.met(node_times)
    return taken


def check_non_anticipative(plan: CompiledScenario, c, first: int, node_times: np.ndarray,
                           met: np.ndarray) -> None:
    """The two branches agree, world by world, on every node timed before the outcome is
    known (strictly: a drain the decision starts on its day is allowed; bookkeeping nodes,
    Contingency.derived_nodes, left out), and on the decision's condition read from either;
    else AnticipationError for the first such world."""
    known = c.known_day(node_times, met)
    a, b = node_times[:, c.met_row], node_times[:, c.unmet_row]
    differs = (np.minimum(a, b) < known[:, None]) & (a != b)
    differs[:, list(c.derived_nodes)] = False
    differs[:, list(c.event_nodes)] |= (met != c.met(node_times, c.unmet_row))[:, None]
    if c.on_node >= 0:      # the event the decision waits for happens alike in both
        differs[:, c.on_node] |= a[:, c.on_node] != b[:, c.on_node]
    bad = np.argwhere(differs)
    if bad.size == 0:
        return
    world, node = (int(x) for x in bad[0])
    name = plan.strategy_names
    branch = "met" if met[world] else "unmet"
    decided = c.decision_day(node_times)[world]
    wait = (f"e.g. a drain's day = {c.day:g}" if c.on_node < 0 else
            f"e.g. a drain on the event: {plan.node_names[c.on_node]}")
    raise AnticipationError(
        f"strategy '{name[c.row]}': its branches '{name[c.met_row]}' (met) and "
        f"'{name[c.unmet_row]}' (unmet) differ before the decision is known: in scenario "
        f"{first + world} (which takes '{name[c.met_row if met[world] else c.unmet_row]}', "
        f"the {branch} branch) node '{plan.node_names[node]}' is at day {a[world, node]:g} "
        f"in one and {b[world, node]:g} in the other, before day {known[world]:g} when the "
        f"outcome is known (the decision day is {decided:g}); make both branches wait for the "
        f"decision ({wait}) or decide earlier")
