"""[[correlations]] compiled: each correlated quantity's copula row (mcrisk/core/copula.py).

A correlation names two world quantities by name. Each must be a single draw (a SAMPLE) of
a distribution that is not a fixed value, on a random stream of its own, and not conditioned
by a status (the conditioning of mcrisk/plan/conditioning.py treats draws as independent);
anything else is refused with a ScenarioError located at the name. A risk this run disables
has no quantity: the pairs naming it are left out (what remains of a positive definite matrix
is one). Returns the plan's copula fields: for quantity q, the addresses and Cholesky weights
q_copula_ptr[q] .. q_copula_ptr[q + 1] of copula_address and copula_weight (none: drawn as
without correlations). A scenario without correlations has every row empty.
"""
from __future__ import annotations

import numpy as np

from ..core.copula import cholesky_rows
from ..core.definitions import Q_SAMPLE
from ..core.distributions import KIND_FIXED, KIND_TABLE
from ..core.errors import Problem, ScenarioError
from ..core.model import Scenario
from ..scenario.reader import did_you_mean
from .world import World


def check_correlations(scenario: Scenario, world: World) -> None:
    """Raise ScenarioError unless every name of [[correlations]] is a quantity that can be
    correlated (before a status conditions the world)."""
    problems = [_problem(scenario, world, f"correlations[{i}].between[{j}]", name)
                for i, pair in _pairs_in_effect(scenario) for j, name in enumerate(pair)]
    problems = [p for p in problems if p is not None]
    if problems:
        raise ScenarioError(problems)


def copula_fields(scenario: Scenario, world: World) -> dict[str, np.ndarray]:
    """The copula fields of the plan (q_copula_ptr, copula_address, copula_weight); a
    ScenarioError where a status has conditioned a correlated quantity."""
    problems, pairs = [], []
    for i, pair in _pairs_in_effect(scenario):
        for j, name in enumerate(pair):
            if not _drawable(world, world.rows[world.index[name]]):
                problems.append(Problem(
                    scenario.path, f"correlations[{i}].between[{j}]", name,
                    "is conditioned by the status: conditioning treats draws as independent, "
                    "so a correlated quantity cannot be conditioned",
                    "run without this correlation (a copy of the scenario), or without the "
                    "status"))
        pairs.append((*pair, scenario.correlations[i].rank))
    if problems:
        raise ScenarioError(problems)
    rows = cholesky_rows(pairs)
    ptr, address, weight = [0], [], []
    for name in world.names:
        for member, w in rows.get(name, ()):
            address.append(world.rows[world.index[member]]["address"][0])
            weight.append(w)
        ptr.append(len(address))
    return {"q_copula_ptr": np.array(ptr, dtype=np.int32),
            "copula_address": np.array(address or [0], dtype=np.uint64),
            "copula_weight": np.array(weight or [0.0], dtype=np.float64)}


def _pairs_in_effect(scenario: Scenario) -> list[tuple[int, tuple[str, str]]]:
    """(entry index, names) of the correlations this run draws: not those naming a risk it
    disables (that risk has no quantity)."""
    disabled = {f"risk.{risk.id}" for risk in scenario.risks if not risk.enabled}
    return [(i, c.between) for i, c in enumerate(scenario.correlations)
            if not disabled.intersection(c.between)]


def _problem(scenario: Scenario, world: World, key: str, name: str) -> Problem | None:
    """Why quantity `name` cannot be correlated, or None."""
    def refuse(message: str, hint: str) -> Problem:
        return Problem(scenario.path, key, name, message, hint)

    if name not in world.index:
        drawable = [n for n, row in zip(world.names, world.rows) if _drawable(world, row)]
        hint = did_you_mean(name, drawable, "quantities that can be correlated")
        if not hint.startswith("did you mean"):    # not every name: a scenario has hundreds
            hint = (f"name a drawn quantity, such as {', '.join(map(repr, drawable[:4]))} "
                    "(docs/scenario-format.md, [[correlations]])")
        return refuse("is no quantity of this scenario", hint)
    row = world.rows[world.index[name]]
    if row["kind"] != Q_SAMPLE:
        parts = [world.names[t] for t in row["terms"] if _drawable(world, world.rows[t])]
        return refuse("is not a single draw (a sum of draws, a burn-in or a quantity "
                      "derived from others)",
                      f"correlate one of the draws it is made of: {', '.join(parts)}"
                      if parts else "correlate a drawn quantity (a delay, a duration, a "
                      "shared delay, a risk, a drawn performance or price)")
    if _fixed(world, row):
        return refuse("is a fixed value: it has no draw to correlate",
                      "give it a distribution, or remove this correlation")
    sharing = [n for n, other in zip(world.names, world.rows)
               if other is not row and row["address"][0] in other["address"]]
    if sharing:
        return refuse(f"shares its random stream with {sharing[0]!r} (one draw for every "
                      "acceptance policy)", "correlate a quantity with a stream of its own")
    return None


def _drawable(world: World, row: dict) -> bool:
    """A SAMPLE of a distribution that is not fixed, not conditioned by a status."""
    return (row["kind"] == Q_SAMPLE and row["status"] == 0 and not _fixed(world, row)
            and world.dists[row["dist"]][0] != KIND_TABLE)


def _fixed(world: World, row: dict) -> bool:
    kind, _, chance = world.dists[row["dist"]]
    return kind == KIND_FIXED and chance >= 1.0
