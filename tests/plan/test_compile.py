"""The compiled crew schedule against its invariants (mcrisk/plan/compile.py's docstring), each
worked out here independently from the plan's arrays by plain graph searches.

A strategy's nodes fall into blocks: each crew row (NODE_CREW) alone, the other nodes grouped
by the set of crew rows they wait for through their deps, in topological order; blocks are
sorted by how many crew rows they wait for, crew rows after the other blocks of that count;
a node defined as in the strategy before, with deps that are all such nodes ("unchanged"),
is in no block. Checked on the shipped scenarios and hand-built ones with crews, and by
running the kernels' unlocking through several crew orders.
"""
from __future__ import annotations

import dataclasses
import random

import numpy as np
import pytest

from mcrisk.plan.compile import _topological_order, compile_scenario
from mcrisk.core.definitions import NODE_CREW, NODE_MAX
from mcrisk.core.errors import ScenarioError
from mcrisk.core.model import Trigger
from mcrisk.scenario import load_scenario

from ..conftest import MINIMAL, REFERENCE, TINY, TINY_DEFAULTS

# Rows A1..A4 hold the existing units, A5 and A6 are empty, hall B is energized later. Every
# new unit is liquid and every row but B1 air, so each row given a new unit is a crew row.
# "chain" makes each crew row wait for the one before (A5, then A1 after E1 drains on N1's
# acceptance, ...): wait-sets of 0 to 4 crew rows. The strategies after a copy repeat it, so
# their shared nodes are unchanged.
CREWS = """
[scenario]
name = "crews"
horizon_days = 400

[demand]
points = [[0, 100]]
largest_job = 10

[[unit_types]]
id = "old"
gpus = 8
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "ib"
drain_days = 2
removal_days = {{ dist = "uniform", min = 2, max = 4 }}

[[unit_types]]
id = "new"
gpus = 8
h100_eq_per_gpu = 2.0
power_kw = 20
cooling = "liquid"
island = "ib2"
install_days = 2
ramp = {{ start_fraction = 0.5, days = 20, steps = 2 }}

[unit_types.burn_in]
attempt_days = 3
fail_first = 0.3
fail_retry = 0.1
fix_days = 2
rma_after_failures = 3
rma_days = 20

[[islands]]
id = "ib"

[[islands]]
id = "ib2"
delivery = {{ day = 10 }}

[[halls]]
id = "A"
power_cap_kw = 1000
rows = [{{ id = "A1", cooling = "air", positions = 1 }},
        {{ id = "A2", cooling = "air", positions = 1 }},
        {{ id = "A3", cooling = "air", positions = 1 }},
        {{ id = "A4", cooling = "air", positions = 1 }},
        {{ id = "A5", cooling = "air", positions = 2 }},
        {{ id = "A6", cooling = "air", positions = 2 }}]

[[halls]]
id = "B"
power_cap_kw = 1000
energized = {{ day = 30, delay = {{ dist = "uniform", min = 0, max = 10 }} }}
rows = [{{ id = "B1", cooling = "liquid", positions = 2 }},
        {{ id = "B2", cooling = "air", positions = 2 }}]

[retrofit]
crews = {crews}
days = {{ dist = "uniform", min = 5, max = 9 }}

[[existing]]
units = "E1..E4"
type = "old"
rows = "A1..A4"

[[incoming]]
units = "N1..N6"
type = "new"

[[shipments]]
id = "S1"
units = "N1..N3"
arrival = {{ day = 5 }}

[[shipments]]
id = "S2"
units = "N4..N6"
arrival = {{ day = 40, delay = {{ dist = "uniform", min = 0, max = 5 }} }}

[[strategies]]
name = "chain"
place = [{{ units = "N1", row = "A5" }}, {{ units = "N2", row = "A1" }},
         {{ units = "N3", row = "A2" }}, {{ units = "N4", row = "A3" }},
         {{ units = "N5", row = "A4" }}, {{ units = "N6", row = "B2" }}]
drain = [{{ units = "E1", on_accepted = "N1" }}, {{ units = "E2", on_accepted = "N2" }},
         {{ units = "E3", on_accepted = "N3" }}, {{ units = "E4", on_accepted = "N4" }}]

[[strategies]]
name = "chain-again"
place = [{{ units = "N1", row = "A5" }}, {{ units = "N2", row = "A1" }},
         {{ units = "N3", row = "A2" }}, {{ units = "N4", row = "A3" }},
         {{ units = "N5", row = "A4" }}, {{ units = "N6", row = "B2" }}]
drain = [{{ units = "E1", on_accepted = "N1" }}, {{ units = "E2", on_accepted = "N2" }},
         {{ units = "E3", on_accepted = "N3" }}, {{ units = "E4", on_accepted = "N4" }}]

[[strategies]]
name = "big-bang"
place = [{{ units = "N1..N2", row = "B1" }}, {{ units = "N3", row = "A1" }},
         {{ units = "N4", row = "A2" }}, {{ units = "N5", row = "A3" }},
         {{ units = "N6", row = "A4" }}]
drain = [{{ units = "E1..E4", day = 20 }}]

[[strategies]]
name = "big-bang-but-one"
place = [{{ units = "N1..N2", row = "B1" }}, {{ units = "N3", row = "A1" }},
         {{ units = "N4", row = "A2" }}, {{ units = "N5", row = "A3" }},
         {{ units = "N6", row = "A6" }}]
drain = [{{ units = "E1..E3", day = 20 }}, {{ units = "E4", on_arrival = "S2" }}]
"""


def _tiny_with_crews(**overrides) -> str:
    return TINY.format(**{**TINY_DEFAULTS, **overrides})


HAND_BUILT = {
    "crews, one crew": CREWS.format(crews=1),
    "crews, two crews": CREWS.format(crews=2),
    "tiny": _tiny_with_crews(),
    "tiny, two crews and a row each": _tiny_with_crews(crews=2, strategies="""
[[strategies]]
name = "each-in-its-own-row"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N2" }, { units = "E2", day = 5 }]

[[strategies]]
name = "again"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N2" }, { units = "E2", day = 5 }]
"""),
}


def _plan(request_id: str, tmp_path):
    if request_id in ("reference", "minimal"):
        return compile_scenario(load_scenario(REFERENCE if request_id == "reference" else MINIMAL))
    path = tmp_path / "s.toml"
    path.write_text(HAND_BUILT[request_id])
    return compile_scenario(load_scenario(path))


@pytest.fixture(params=["reference", "minimal", *HAND_BUILT])
def plan(request, tmp_path):
    return _plan(request.param, tmp_path)


# ---- the strategy's graph and its schedule, read off the plan's arrays ------------------------

def deps_of(plan, s: int) -> list[list[int]]:
    return [list(plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]])
            for v in range(plan.n_nodes)]


def blocks_of(plan, s: int) -> list[list[int]]:
    """The blocks of strategy s; the pointer row must be non-empty blocks, then padding."""
    ptr = [int(p) for p in plan.block_ptr[s]]
    assert ptr[0] == 0 and ptr == sorted(ptr)
    n_blocks = sum(1 for b in range(plan.n_nodes) if ptr[b + 1] > ptr[b])
    assert all(ptr[b] == ptr[-1] for b in range(n_blocks, len(ptr)))   # no empty block inside
    return [[int(v) for v in plan.block_node[s, ptr[b]:ptr[b + 1]]] for b in range(n_blocks)]


def is_crew(plan, s: int, v: int) -> bool:
    return plan.node_kind[s, v] == NODE_CREW


def unchanged_nodes(plan, s: int) -> set[int]:
    """Nodes strategy s defines exactly as strategy s - 1 (same bits), NODE_MAX in both, whose
    deps are all such nodes: worked out by a memoized search over the deps."""
    if s == 0:
        return set()
    deps, before = deps_of(plan, s), deps_of(plan, s - 1)

    def same_definition(v: int) -> bool:
        return (plan.node_kind[s, v] == plan.node_kind[s - 1, v] == NODE_MAX
                and plan.node_base_const[s, v].tobytes() == plan.node_base_const[s - 1, v].tobytes()
                and plan.node_add_const[s, v].tobytes() == plan.node_add_const[s - 1, v].tobytes()
                and list(plan.node_add_q[s, v]) == list(plan.node_add_q[s - 1, v])
                and deps[v] == before[v])

    known: dict[int, bool] = {}

    def unchanged(v: int) -> bool:
        if v not in known:
            known[v] = same_definition(v) and all(unchanged(d) for d in deps[v])
        return known[v]

    return {v for v in range(plan.n_nodes) if unchanged(v)}


def crew_rows_upstream(plan, s: int, v: int) -> set[int]:
    """The crew rows v reaches through its deps (not v itself): a depth-first search."""
    deps, seen, stack, found = deps_of(plan, s), set(), list(deps_of(plan, s)[v]), set()
    while stack:
        d = stack.pop()
        if d in seen:
            continue
        seen.add(d)
        if is_crew(plan, s, d):
            found.add(d)
        stack.extend(deps[d])
    return found


def strategies(plan):
    return range(plan.n_strategies)


# ---- the invariants ---------------------------------------------------------------------------

def test_topological_order_is_a_valid_order_of_every_node(plan):
    for s in strategies(plan):
        topo = [int(v) for v in plan.topo[s]]
        assert sorted(topo) == list(range(plan.n_nodes))
        position = {v: i for i, v in enumerate(topo)}
        for v, ds in enumerate(deps_of(plan, s)):
            assert all(position[d] < position[v] for d in ds), plan.node_names[v]


def test_every_node_is_in_one_block_unless_unchanged(plan):
    for s in strategies(plan):
        scheduled = [v for block in blocks_of(plan, s) for v in block]
        assert len(scheduled) == len(set(scheduled))                 # at most one block
        assert set(scheduled) == set(range(plan.n_nodes)) - unchanged_nodes(plan, s)


def test_each_node_comes_after_its_deps_or_they_are_unchanged(plan):
    for s in strategies(plan):
        unchanged = unchanged_nodes(plan, s)
        order = {v: i for i, v in enumerate(v for block in blocks_of(plan, s) for v in block)}
        for v in order:
            for d in deps_of(plan, s)[v]:
                assert d in unchanged or order[d] < order[v], \
                    f"{plan.strategy_names[s]}: {plan.node_names[v]} before {plan.node_names[d]}"


def test_each_crew_row_is_alone_in_its_block_and_listed(plan):
    for s in strategies(plan):
        blocks = blocks_of(plan, s)
        for block in blocks:
            assert len(block) == 1 or not any(is_crew(plan, s, v) for v in block)
        crew_rows = [v for v in range(plan.n_nodes) if is_crew(plan, s, v)]
        assert [int(v) for v in plan.crew_node[s, :plan.n_crew_rows[s]]] == crew_rows
        assert sum(len(b) == 1 and is_crew(plan, s, b[0]) for b in blocks) == len(crew_rows)


def test_a_blocks_wait_is_the_set_of_crew_rows_it_reaches(plan):
    for s in strategies(plan):
        blocks = blocks_of(plan, s)
        waits = []
        for b, block in enumerate(blocks):
            sets = {frozenset(crew_rows_upstream(plan, s, v)) for v in block}
            assert len(sets) == 1, f"block {b} mixes nodes that wait for different crew rows"
            waits.append(sets.pop())
            assert plan.block_wait[s, b] == len(waits[-1])
        # two blocks of other nodes never wait for the same set: one block per set
        plain = [w for w, block in zip(waits, blocks) if not is_crew(plan, s, block[0])]
        assert len(plain) == len(set(plain))
        # the blocks freed by each crew row: exactly those waiting for it, ascending
        for r, row in enumerate(plan.crew_node[s, :plan.n_crew_rows[s]]):
            freed = [int(b) for b in plan.unlock_block[s, plan.unlock_ptr[s, r]:
                                                       plan.unlock_ptr[s, r + 1]]]
            assert freed == [b for b, w in enumerate(waits) if row in w]


def test_blocks_are_sorted_by_wait_crew_rows_last_of_each_count(plan):
    for s in strategies(plan):
        blocks = blocks_of(plan, s)
        keys = [(int(plan.block_wait[s, b]), bool(is_crew(plan, s, block[0])))
                for b, block in enumerate(blocks)]
        assert keys == sorted(keys)
        assert plan.n_ready_blocks[s] == sum(wait == 0 for wait, _ in keys)


def test_the_kernels_unlocking_times_every_node_after_its_deps_whatever_the_crew_order(plan):
    # As the kernels do: time the ready blocks, then repeatedly give some crew row whose
    # block was timed a crew and time the blocks its last wait frees. The crews' order is the
    # draws' business, so try several.
    for s in strategies(plan):
        blocks, deps = blocks_of(plan, s), deps_of(plan, s)
        crew_index = {int(v): r for r, v in enumerate(plan.crew_node[s, :plan.n_crew_rows[s]])}
        for trial in range(5):
            pick_from = random.Random(trial)
            timed = set(unchanged_nodes(plan, s))
            waiting = [int(plan.block_wait[s, b]) for b in range(len(blocks))]
            ready_rows: list[int] = []

            def time_block(b: int) -> None:
                for v in blocks[b]:
                    assert all(d in timed for d in deps[v]), plan.node_names[v]
                    (ready_rows.append if is_crew(plan, s, v) else timed.add)(v)

            for b in range(plan.n_ready_blocks[s]):
                time_block(b)
            while ready_rows:
                row = ready_rows.pop(pick_from.randrange(len(ready_rows)))
                timed.add(row)
                r = crew_index[row]
                for b in plan.unlock_block[s, plan.unlock_ptr[s, r]:plan.unlock_ptr[s, r + 1]]:
                    waiting[b] -= 1
                    if waiting[b] == 0:
                        time_block(b)
            assert timed == set(range(plan.n_nodes)), plan.strategy_names[s]


def test_hand_built_scenarios_exercise_the_schedule(tmp_path):
    # the invariants above are only as good as their cases: long waits, unchanged nodes
    plan = _plan("crews, two crews", tmp_path)
    chain, again, big_bang, but_one = range(4)
    named = lambda nodes: {plan.node_names[v] for v in nodes}
    # A5, then A1 .. A4 each after the row before: N5's nodes wait for all five
    assert plan.n_crew_rows[chain] == 6 and max(plan.block_wait[chain]) == 5
    assert not unchanged_nodes(plan, chain)
    # the same strategy again: what no crew row precedes is already timed
    assert named(unchanged_nodes(plan, again)) == {
        "hall A energized", "hall B energized", "island ib ready", "island ib2 ready",
        "shipment S1 arrives", "shipment S2 arrives", "row A6 ready for new units",
        "row B1 ready for new units"}
    # one unit elsewhere and one drain on another trigger: the rest stays
    but_one_unchanged = named(unchanged_nodes(plan, but_one))
    assert {"E1 drain starts", "E3 removed", "N2 ramp step 2"} <= but_one_unchanged
    assert not {"E4 drain starts", "row A4 ready for new units", "N6 install starts",
                "N3 accepted"} & but_one_unchanged
    assert len(but_one_unchanged) == 25 and plan.block_ptr[but_one, -1] == plan.n_nodes - 25


# ---- a dependency cycle -------------------------------------------------------------------------

def test_topological_order_is_lowest_id_first_and_a_cycle_is_named():
    assert _topological_order([[], [2], [], [0, 1]], list("abcd"), "s") == [0, 2, 1, 3]
    with pytest.raises(ValueError, match=r"strategy 'x' has a dependency cycle through "
                                         r"\['b', 'c', 'd'\]"):
        _topological_order([[], [2], [1], [2]], list("abcd"), "x")


def test_a_deadlocked_strategy_past_validation_gives_the_clear_error(tmp_path):
    # E1 drains once N2 is accepted, but N2 goes into E1's own row A1: validation reports
    # the deadlock; a Scenario built around validation makes compile name the cycle.
    text = CREWS.format(crews=1)
    path = tmp_path / "deadlock.toml"
    path.write_text(text.replace('{ units = "E1", on_accepted = "N1" }',
                                 '{ units = "E1", on_accepted = "N2" }', 1))
    with pytest.raises(ScenarioError, match="deadlock"):
        load_scenario(path)
    path.write_text(text)
    scenario = load_scenario(path)
    chain = scenario.strategies[0]
    drains = tuple((unit, Trigger(on_accepted=("N2",)) if unit == "E1" else trigger)
                   for unit, trigger in chain.drains)
    broken = dataclasses.replace(scenario, strategies=(dataclasses.replace(chain, drains=drains),))
    with pytest.raises(ValueError) as caught:
        compile_scenario(broken)
    message = str(caught.value)
    assert message.startswith("strategy 'chain' has a dependency cycle through [")
    for node in ("E1 drain starts", "E1 removed", "row A1 ready for new units",
                 "N2 install starts", "N2 passes burn-in", "N2 accepted"):
        assert repr(node) in message, node
    assert "'N1 accepted'" not in message          # not on the cycle, and timed before it


def test_the_shipped_scenarios_have_no_unscheduled_crew_rows():
    # a crew row is never 'unchanged' (its crew depends on the other rows of the strategy)
    for path in (REFERENCE, MINIMAL):
        plan = compile_scenario(load_scenario(path))
        for s in strategies(plan):
            scheduled = {v for block in blocks_of(plan, s) for v in block}
            assert all(v in scheduled for v in plan.crew_node[s, :plan.n_crew_rows[s]])
        assert np.all(plan.n_crew_rows > 0)
