"""Islands by position (issue 28, 4): scenarios/positions.toml's racks join the fabric of the
hall they stand in, so a rack's island differs by strategy.

The strongest check is the old way of writing the same plans: a unit type copied per hall
(gb300-nvl72-b with island = "xdr-b"), each rack given the copy of the hall its strategy puts
it in, one file per strategy (a rack has one type per file). Every strategy's metrics in the
positional file equal, bit for bit, those of its old-way file on the same worlds: same seed,
same scenario indices. Then the compiled plan by hand (each capacity event's island, each
acceptance's island dependency) and the backends' parity on a plan whose islands differ by
strategy.
"""
from __future__ import annotations

import re
from functools import cache

import numpy as np
import pytest

from mcrisk.backends import select_backend
from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import SCENARIOS
from ..parity import BIT_IDENTICAL_PLATFORM, assert_parity

POSITIONS = SCENARIOS / "positions.toml"
TEXT = POSITIONS.read_text()
numpy_backend = select_backend("numpy")


def _strategy_blocks(text: str) -> tuple[str, list[str]]:
    head, *blocks = text.split("[[strategies]]\n")
    return head, ["[[strategies]]\n" + block for block in blocks]


def _ids(spec) -> list[str]:
    """An id list as the file writes it, expanded (ranges 'N01..N04' and arrays)."""
    items = [spec] if isinstance(spec, str) else spec
    out = []
    for item in items:
        if ".." not in item:
            out.append(item)
            continue
        first, last = item.split("..")
        prefix, a = re.match(r"(.*?)(\d+)$", first).groups()
        b = re.match(r".*?(\d+)$", last).group(1)
        out += [f"{prefix}{n:0{len(a)}d}" for n in range(int(a), int(b) + 1)]
    return out


def old_way(s: int) -> str:
    """positions.toml written without positional islands, for strategy s alone: hall B's
    island dropped from [[islands]], each new type copied for hall B, each rack the copy of
    the hall strategy s places it in, listed one by one in the same order."""
    import tomllib
    document = tomllib.loads(TEXT)
    strategy = document["strategies"][s]
    in_hall_b = {unit for entry in strategy["place"] if entry["row"].startswith("B")
                 for unit in _ids(entry["units"])}
    head, blocks = _strategy_blocks(TEXT)
    head = head.replace('halls = ["B"]\n', "", 1)
    for kind in ("gb200-nvl72", "gb300-nvl72"):
        block = re.search(rf'\[\[unit_types\]\]\nid = "{kind}"\n.*?\n\n', head, re.DOTALL).group(0)
        copy = block.replace(f'id = "{kind}"', f'id = "{kind}-b"').replace(
            'island = "xdr-a"', 'island = "xdr-b"')
        head = head.replace(block, block + copy)
    incoming = "".join(
        f'[[incoming]]\nunits = "{unit}"\ntype = "{entry["type"]}'
        f'{"-b" if unit in in_hall_b else ""}"\n\n'
        for entry in document["incoming"] for unit in _ids(entry["units"]))
    head = re.sub(r"(\[\[incoming\]\]\n.*?\n\n)+", incoming, head, count=1, flags=re.DOTALL)
    return head + blocks[s]


@cache
def positional_plan():
    return compile_scenario(load_scenario(POSITIONS))


def test_the_old_way_files_copy_a_type_per_hall(tmp_path):
    """The generated files are what the old way needed: no positional island, and a type per
    hall for the racks a strategy puts in hall B."""
    for s in range(3):
        path = tmp_path / f"old-{s}.toml"
        path.write_text(old_way(s))
        scenario = load_scenario(path)
        assert all(not island.halls and not island.rows for island in scenario.islands)
        assert [u.id for u in scenario.incoming] == [u.id for u in load_scenario(
            POSITIONS).incoming]
        hall_b = {u.id for u in scenario.incoming if u.type.endswith("-b")}
        assert len(hall_b) == (24, 0, 24)[s]


@pytest.mark.parametrize("s", range(3))
def test_positional_islands_give_the_old_way_numbers_bit_for_bit(tmp_path, s):
    path = tmp_path / f"old-{s}.toml"
    path.write_text(old_way(s))
    old = compile_scenario(load_scenario(path))
    new = positional_plan()
    got, world, _ = numba_chunk(new, 7, 300, 400)
    expected, old_world, _ = numba_chunk(old, 7, 300, 400)
    assert got.shape[2] == expected.shape[2]
    np.testing.assert_array_equal(got[:, s], expected[:, 0])
    # the worlds agree quantity by quantity (the copies draw nothing of their own)
    for q, name in enumerate(old.quantity_names):
        np.testing.assert_array_equal(world[:, new.quantity_names.index(name)], old_world[:, q])
    # and a rack's island in the new plan is its type copy's island in the old one
    np.testing.assert_array_equal(
        [new.island_names[i] for i in new.cap_event_island[s]],
        [old.island_names[i] for i in old.cap_event_island[0]])


def test_each_rack_joins_the_island_of_the_hall_its_strategy_puts_it_in():
    """By hand: hall B's rows are xdr-b's; anywhere else a new rack joins its type's xdr-a,
    an H100 rack ndr. Capacity events and the acceptance's wait for its island both follow."""
    scenario = load_scenario(POSITIONS)
    plan = positional_plan()
    node = {name: v for v, name in enumerate(plan.node_names)}
    existing = {u.id for u in scenario.existing}
    for s, strategy in enumerate(scenario.strategies):
        row_of = dict(strategy.placement)
        expected = {unit: ("xdr-b" if row.startswith("B") else "xdr-a")
                    for unit, row in row_of.items()}
        expected.update({unit: "ndr" for unit in existing})
        for k, v in enumerate(plan.cap_event_node):
            unit = plan.node_names[v].split()[0]
            assert plan.island_names[plan.cap_event_island[s, k]] == expected[unit]
        for unit, island in expected.items():
            if unit in existing:
                continue
            v = node[f"{unit} accepted"]
            deps = plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]]
            assert node[f"island {island} ready"] in deps
            other = {"xdr-a": "xdr-b", "xdr-b": "xdr-a"}[island]
            assert node[f"island {other} ready"] not in deps
    # day 0: all 128 H100 racks on ndr, nothing on the XDR fabrics yet
    np.testing.assert_array_equal(plan.island_cap0, [128 * 32.0, 0.0, 0.0])


def test_islands_differ_by_strategy_in_this_plan():
    plan = positional_plan()
    assert len({tuple(row) for row in plan.cap_event_island}) == 3


def test_positional_plan_matches_the_reference(backend):
    plan = positional_plan()
    got = backend.simulate_chunk(plan, 11, 2000, 200, keep_nodes=True)
    expected = numpy_backend.simulate_chunk(plan, 11, 2000, 200, keep_nodes=True)
    assert_parity(got, expected, (backend.name, "numpy"), plan)


@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
def test_host_build_is_bit_identical_to_numba_on_positional_islands(host):
    plan = positional_plan()
    got = host.simulate_chunk(plan, 3, 50, 300, keep_nodes=True)
    expected = numba_chunk(plan, 3, 50, 300, keep_nodes=True)
    for name, a, b in zip(("metrics", "world", "node times"), got, expected):
        np.testing.assert_array_equal(a, b, err_msg=name)
