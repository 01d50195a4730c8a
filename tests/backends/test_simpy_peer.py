"""An independent cross-check of the engine: a plain SimPy model of the reference migration
(benchmarks/simpy_model.py, written from the contract with its own random draws) agrees with
the Numba backend within Monte Carlo error, for every strategy and metric.

Agreement is statistical: the two share no draws, so each P50 and P90 is compared through its
distribution-free interval (binomial order statistics), which must overlap. There are 50 such
checks, so each interval is taken at 1 - 0.05/50 = 99.9% (Bonferroni): the chance that any one
of the 50 misses by luck alone stays under 5%. (At 95% per check, one miss in 50 is expected
every few seeds: seed 1 of the 64-bit random stream gave hybrid-gated completion P50 307.9
[306.2, 309.5] in SimPy against 304.6 [304.0, 305.3]; mcrisk at 200,000 scenarios gives 305.7.) About 12 s:
3,000 SimPy scenarios (~8 s) against 20,000 Numba scenarios.
"""
from __future__ import annotations

import importlib.util
import sys

import numpy as np
import pytest
from ..helpers import ROOT

pytest.importorskip("simpy", reason="the SimPy peer needs simpy (pip install '.[bench]')")

PEER_PATH = ROOT / "benchmarks" / "simpy_model.py"
PEER_SAMPLES, ENGINE_SAMPLES, SEED = 3_000, 20_000, 1


def _load_peer():
    spec = importlib.util.spec_from_file_location("simpy_model", PEER_PATH)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module          # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


peer_model = _load_peer()


@pytest.fixture(scope="module")
def both():
    plans = peer_model.read_plans()
    peer = peer_model.simulate(plans, PEER_SAMPLES, SEED)
    engine, names = peer_model.engine_metrics(ENGINE_SAMPLES, SEED)
    assert tuple(plan.name for plan in plans) == tuple(names)
    return peer, engine, names


@pytest.mark.slow
def test_p50_and_p90_intervals_overlap_for_every_strategy_and_metric(both):
    peer, engine, names = both
    checks = len(names) * 5 * 2
    rows = peer_model.agreement(peer, engine, names, confidence=1.0 - 0.05 / checks)
    assert len(rows) == checks
    apart = [row for row in rows if not row[-1]]
    assert not apart, "SimPy and mcrisk disagree:\n" + peer_model.format_agreement(apart)


@pytest.mark.slow
def test_neither_reports_a_power_violation_on_the_reference(both):
    peer, engine, _ = both
    assert not peer[:, :, 5].any()
    assert not engine[:, :, 5].any()


@pytest.mark.slow
def test_gated_strategies_never_dip_in_either(both):
    peer, engine, names = both
    for name in ("swing-gated", "hybrid-gated"):
        s = names.index(name)
        for metrics in (peer, engine):
            assert np.all(metrics[:, s, 0] == 0.0) and np.all(metrics[:, s, 1] == 0.0)


def test_rows_empty_at_the_same_instant_ask_for_the_crew_lowest_row_first():
    plan = peer_model.read_plans()[0]
    migration = peer_model.Migration(plan, peer_model.Draws(np.random.default_rng(0)))
    env, asked = migration.env, []

    def row(name, hops):                 # reaches "empty" after `hops` zero-delay events
        for _ in range(hops):
            yield env.timeout(0)
        yield migration.crew_turn(name)
        asked.append(name)

    for name, hops in (("A7", 0), ("A2", 3), ("A5", 1)):
        env.process(row(name, hops))
    env.run(until=1e-9)
    assert asked == ["A2", "A5", "A7"]
