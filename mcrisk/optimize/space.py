"""The search space of `mcrisk optimize` as data: what a search file says, validated.

A search file is a TOML file of its own (the scenario stays as it is) with one [search]
section: the scenario and the written strategy (the template) the knobs vary from, the knobs
(per drain group a set of triggers and a lag range, per wave a set of rows, the crew counts),
the objective, the constraints, the race and the fresh-seed evaluation. `read_search` reads it
with the scenario reader's helpers, so every mistake is a located error
(`file: key = value: what is wrong (hint)`), all of them at once, never a traceback.
docs/optimize.md documents the format.

Statistics (objective terms, constraint keys) are kept as their labels ("p90:trough_depth"):
this module checks that each names a statistic and a column the scenario has;
mcrisk.optimize.objective turns the label into the computation.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..model import Scenario, Trigger

STATISTIC_KINDS = ("p50", "p90", "p99", "mean", "p")
OBJECTIVE_KINDS = ("minimize", "weights", "pareto")


@dataclass(frozen=True)
class DrainGroup:
    """Existing units of the template's drains that drain together: each candidate gives all
    of them one of `triggers` (their lag replaced by one of `lags`)."""

    units: tuple[str, ...]
    triggers: tuple[Trigger, ...]      # lag_days 0; the lag is the separate knob
    trigger_labels: tuple[str, ...]    # each trigger as the file wrote it ("on_arrival:S1")
    lags: tuple[float, ...]            # days, ascending, distinct


@dataclass(frozen=True)
class Wave:
    """Incoming units that land together: each candidate puts all of them in one of `rows`."""

    units: tuple[str, ...]
    rows: tuple[str, ...]              # row ids, ranges expanded, in file order, distinct


@dataclass(frozen=True)
class Objective:
    """What the search minimizes. kind "minimize": one term of weight 1; "weights": the
    weighted sum of the terms; "pareto": every term is an objective of its own (weights 1)."""

    kind: str
    terms: tuple[tuple[str, float], ...]   # (statistic label, weight)

    @property
    def statistics(self) -> tuple[str, ...]:
        return tuple(label for label, _ in self.terms)


@dataclass(frozen=True)
class Constraint:
    """A statistic that must not exceed `max` (a plan is infeasible beyond noise when the
    statistic's 95% interval lies wholly above it)."""

    statistic: str                     # "p90:trough_depth"
    max: float


@dataclass(frozen=True)
class Race:
    """Successive halving: stage k runs every surviving candidate on `scenarios[k]` scenarios
    (seed `seed`, scenarios 0..n-1); `keep` of them (and every one tied with the worst kept
    within noise) go on to the next stage."""

    scenarios: tuple[int, ...]         # ascending
    keep: float                        # in (0, 1]
    seed: int                          # the race's seed ([search] seed unless given)


@dataclass(frozen=True)
class Evaluate:
    """The fresh-seed evaluation of the chosen plans (the top `top`, or the Pareto set)."""

    samples: int
    top: int
    seed: int                          # never the race seed (race seed + 1 unless given)


@dataclass(frozen=True)
class SearchSpace:
    """A validated search file. `scenario` is the loaded scenario it searches;
    `scenario_path` is absolute. The crews default to the scenario's own count."""

    path: str                          # the search file, as given
    scenario_path: str
    scenario: Scenario
    template: str                      # the name of one of the scenario's strategies
    max_candidates: int
    seed: int                          # the sample's seed, and the race's unless it gives one
    drain_groups: tuple[DrainGroup, ...]
    waves: tuple[Wave, ...]
    crews: tuple[int, ...]             # ascending, distinct
    objective: Objective
    constraints: tuple[Constraint, ...]
    race: Race
    evaluate: Evaluate

    @property
    def template_strategy(self):
        """The template as the scenario wrote it."""
        return next(s for s in self.scenario.strategies if s.name == self.template)

    @property
    def size(self) -> int:
        """How many plans the knobs span (every combination, before rejection and
        de-duplication)."""
        size = len(self.crews)
        for group in self.drain_groups:
            size *= len(group.triggers) * len(group.lags)
        for wave in self.waves:
            size *= len(wave.rows)
        return size
