"""Load a scenario file (TOML), validate all of it in one pass, and build
`mcrisk.core.model.Scenario`.

    load_scenario(path) -> Scenario        raises ScenarioError carrying every Problem found
    read_scenario(path) -> (Scenario, bytes)   the same, with the bytes it was built from
    scenario_sha256(path) -> str           hex SHA-256 of the file's bytes

The format is documented in docs/scenario-format.md. Sections are read in dependency order
(shared delays, islands, unit types, halls, retrofit, fleets, shipments, risks, costs,
strategies), so each section checks its references against the ones read before it, whatever
their order in the file.
Times are days from the plan's day 0, capacity is in H100-eq, power in kW.

The package in layers, each importing only those below it:

    __init__        the public API: read the file, then every section in order
    sanity          checks with numbers on the whole scenario: a hall over its cap at day 0
                    and a strategy that can never complete (errors), draws past the
                    horizon, unplaceable jobs and a best case past 3 horizons (warnings)
    earliest        a strategy's best-case completion day, event by event
    strategies      [[strategies]]: placement, drains, deadlock checks
    decisions       a contingent [[strategies]] entry: its decision between two strategies
    positions       islands by position ([[islands]] halls, rows) and the unit types they
                    spare an island
    fleets          [[existing]], [[incoming]], [[shipments]], [[risks]]
    costs           [costs]: prices, power contracts, reservation steps (docs/costs.md)
    correlations    [[correlations]]: rank correlations, their positive definite matrix
    sections        [scenario], [shared_delays], islands, unit types, halls, retrofit
    demand          [demand]: points or a forecast, and the job mix
    failures        [unit_types.attrition], [unit_types.early_failures], acceptance policies
    distributions   distributions of days (and performance), dates
    reader          the problem-collecting reader, tables and typed accessors (numbers, ids, ...)
    document        the file's bytes and its TOML document
    limits          every MAX_* limit and the bounds shared across sections
    status          a status file (what has happened by a day), validated against its scenario
    status_csv      a status as a flat CSV export, turned into the status document
    status_lines    the line of each key of a status file, for its Problems
"""
from __future__ import annotations

import hashlib
import os

from mcrisk.core.errors import NO_VALUE, Problem, ScenarioError
from mcrisk.core.model import Scenario

from .correlations import read_correlations
from .costs import read_costs
from .document import parse_toml, read_file_bytes, too_deep
from .fleets import check_fleets, read_existing, read_incoming, read_risks, read_shipments
from .limits import MAX_NESTING
from .reader import Reader, Table, did_you_mean
from .demand import read_demand
from .sections import (read_halls, read_header, read_integration, read_islands, read_retrofit,
                       read_shared_delays, read_unit_types)
from .strategies import read_strategies
from .positions import check_island_positions, check_type_islands

# Re-exported, as `mcrisk.scenario` had them before it was a package: every limit (tests check
# each is documented with its value), the cooling and risk-target vocabularies, and the
# functions tests check by hand.
from .distributions import largest_draw  # noqa: F401
from .sanity import completion_problems, power_problems, scenario_warnings  # noqa: F401
from .fleets import RISK_TARGETS  # noqa: F401
from .limits import (MAX_BURN_IN_ATTEMPTS, MAX_CORRELATIONS, MAX_DAYS,  # noqa: F401
                     MAX_ENTRIES, MAX_FILE_BYTES,
                     MAX_GPUS, MAX_H100_EQ_PER_GPU, MAX_HORIZON_DAYS, MAX_ID_LENGTH,
                     MAX_LOGNORMAL_SPREAD, MAX_MONEY, MAX_PERT_LAMBDA, MAX_PUE, MAX_RAMP_STEPS,
                     MAX_RANGE, MAX_RMA_AFTER_FAILURES, MAX_STRATEGIES, MAX_TOTAL, MAX_UNITS)
from .sections import COOLINGS, NO_RETROFIT, expected_burn_in_attempts  # noqa: F401
from .strategies import RESERVED_STRATEGY_NAMES  # noqa: F401

from .status import load_status, status_sha256

__all__ = ["load_scenario", "load_status", "read_scenario", "scenario_sha256", "status_sha256"]


def scenario_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of the file's bytes, as recorded in `Scenario.sha256` and summary.json."""
    return hashlib.sha256(read_file_bytes(os.fsdecode(path))).hexdigest()


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Read, validate and build the scenario at `path`.

    Raises ScenarioError with every Problem found (file, key path, value, what is wrong, hint);
    never another exception for a bad file. `Scenario.path` is `path` as given, as a str.
    """
    return read_scenario(path)[0]


def read_scenario(path: str | os.PathLike) -> tuple[Scenario, bytes]:
    """load_scenario, and the bytes the Scenario was built from: the file is read once, so a
    caller that keeps a copy (the nightly's scenario.toml) keeps exactly the bytes that were
    parsed and that Scenario.sha256 hashes, even if the file changes meanwhile."""
    file = os.fsdecode(path)
    data = read_file_bytes(file)
    document = parse_toml(file, data)
    deep = too_deep(document)
    if deep is not None:
        raise ScenarioError([Problem(file, deep, NO_VALUE, f"nested more than {MAX_NESTING} "
                                     "levels deep", "a scenario nests arrays and tables a few "
                                     "levels deep; look for a run of [ or {")])
    if isinstance(document.get("search"), dict) and "scenario" not in document:
        raise ScenarioError([Problem(file, "search", NO_VALUE, "this is a search space for "
                                     "`mcrisk optimize`, not a scenario", "run `mcrisk optimize "
                                     f"{file}`; its scenario is the file its search.scenario "
                                     "names")])
    reader = Reader(file)
    parts = read_document(reader, document)
    if reader.problems:
        raise ScenarioError(reader.problems)
    scenario = Scenario(path=file, sha256=hashlib.sha256(data).hexdigest(), **parts)
    problems = power_problems(scenario) + completion_problems(scenario)
    if problems:
        raise ScenarioError(problems)
    return scenario, data


_TOP_KEYS = ("scenario", "demand", "unit_types", "islands", "halls", "retrofit", "existing",
             "incoming", "shared_delays", "shipments", "risks", "costs", "strategies",
             "correlations", "integration")


def read_document(r: Reader, document: dict) -> dict:
    """Every section, in dependency order; returns the Scenario's fields but path and sha256."""
    root = Table(r, "", document, _TOP_KEYS)
    parts = read_header(root)
    parts["demand"] = read_demand(root)
    parts["shared_delays"] = read_shared_delays(root)
    parts["islands"] = read_islands(root)
    parts["unit_types"] = read_unit_types(root)
    parts["halls"] = read_halls(root)
    check_island_positions(r, parts["islands"])
    parts["retrofit"] = read_retrofit(root)
    parts["integration"] = read_integration(root)
    parts["existing"] = read_existing(root)
    parts["incoming"] = read_incoming(root)
    check_fleets(r)
    parts["shipments"] = read_shipments(root)
    r.has_costs = "costs" in document
    parts["risks"] = read_risks(root, parts["halls"])
    parts["costs"] = read_costs(root)
    parts["strategies"] = read_strategies(root)
    check_type_islands(r, parts)
    parts["correlations"] = read_correlations(root)
    _check_executing(r, parts)
    return parts


def _check_executing(r: Reader, parts: dict) -> None:
    """[scenario] executing names one of the strategies (reported if not)."""
    name, strategies = parts.get("executing"), parts.get("strategies")
    if name is None or strategies is None:
        return
    names = [s.name for s in strategies]
    if name not in names:
        r.report("scenario.executing", name, "is not a strategy of this scenario",
                 did_you_mean(name, names, "strategies"))
