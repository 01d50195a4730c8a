"""Contingent strategies compiled: which plan rows a decision chooses between, and on what.

A contingent strategy (a `[[strategies]]` entry with a `decision`, mcrisk/scenario/
decisions.py) has a row of its own in the plan, compiled as its `met` branch, and its two
branches are rows of their own (ordinary strategies of the file). Every world is simulated
in every row on the same draws (common random numbers); then, world by world, the contingent
row becomes the row of the branch the decision takes there (mcrisk/backends/contingency.py),
judged on what is known on the decision's day: how many of its events have happened.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.definitions import NODE_CREW
from ..core.model import Scenario


@dataclass(frozen=True)
class Contingency:
    """One contingent strategy of the plan: its row, its branches' rows, the decision day (or
    `on_node`, the node whose time is the decision's, world by world) and the nodes whose
    times it counts (at least `at_least` of them at or before the decision: met)."""

    row: int
    met_row: int
    unmet_row: int
    day: float
    event_nodes: tuple[int, ...]
    at_least: int
    # nodes that are bookkeeping in both branches, not things that happen, which the
    # non-anticipation check leaves out: a kept unit's "leaves the migration" (day 0 by
    # convention; its drain, at +inf, is compared) and a row's "ready" where neither branch
    # retrofits it (the latest of its removals and its hall, compared themselves)
    derived_nodes: tuple[int, ...] = ()
    on_node: int = -1             # >= 0: decided when this node happens (day unused)

    def decision_day(self, node_times: np.ndarray, row: int | None = None) -> np.ndarray:
        """float64[c]: the day of the decision in each world: `day`, or its event's time."""
        if self.on_node < 0:
            return np.full(node_times.shape[0], self.day)
        return node_times[:, self.met_row if row is None else row, self.on_node]

    def met(self, node_times: np.ndarray, row: int | None = None) -> np.ndarray:
        """bool[c]: whether the decision's condition holds in each world, read from
        node_times[c, s, v] in `row` (default: the met branch's)."""
        row = self.met_row if row is None else row
        done = (node_times[:, row, list(self.event_nodes)]
                <= self.decision_day(node_times, row)[:, None])
        return done.sum(axis=1) >= self.at_least

    def known_day(self, node_times: np.ndarray, met: np.ndarray) -> np.ndarray:
        """float64[c]: when each world's outcome is known: where the condition holds, the day
        its at_least-th event happened (on or before the decision's); else the decision's."""
        day = self.decision_day(node_times)
        times = np.sort(node_times[:, self.met_row, list(self.event_nodes)], axis=1)
        return np.where(met, np.minimum(times[:, self.at_least - 1], day), day)


def compile_contingencies(scenario: Scenario, node_id: dict,
                          node_kinds: list[list[int]]) -> tuple[Contingency, ...]:
    """The plan's contingencies, one per contingent strategy in file order; node_id maps
    (kind, id) to the node's fixed id (mcrisk/plan/compile.py's _Nodes.id), node_kinds[s][v]
    is NODE_CREW where strategy s retrofits a row."""
    rows = {s.name: i for i, s in enumerate(scenario.strategies)}
    found = []
    for row, strategy in enumerate(scenario.strategies):
        d = strategy.decision
        if d is None:
            continue
        missing = [b for b in (d.met, d.unmet) if b not in rows]
        if missing:     # a caller's subset of the strategies (the reader checks the file's)
            raise ValueError(f"contingent strategy {strategy.name!r} needs its branches "
                             f"{missing} among the strategies compiled with it")
        met, unmet = rows[d.met], rows[d.unmet]
        derived = [v for key, v in node_id.items() if key[0] == "leaves"
                   or (key[0] == "ready" and NODE_CREW not in (node_kinds[met][v],
                                                               node_kinds[unmet][v]))]
        found.append(Contingency(row, met, unmet, -1.0 if d.day is None else float(d.day),
                                 tuple(node_id[event] for event in d.events), int(d.at_least),
                                 tuple(sorted(derived)), node_id[d.on] if d.on else -1))
    return tuple(found)
