"""A broken scenario file raises ScenarioError with located problems, never another exception.

Every key path of the reference scenario (descending into the first entry of each array) is
deleted or given a value of a wrong kind in turn, and the file is written back as TOML; and each
top-level table is deleted, which must show up where the reference needs it. (Split from
tests/scenario/test_validation.py, which holds the exact messages of each class of bad input.)
"""
from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

import pytest

from mcrisk.core.errors import NO_VALUE, ScenarioError
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE_TEXT

if sys.version_info >= (3, 11):
    import tomllib
else:
    import tomli as tomllib

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in problems


def _toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value) + "]"
    return "{ " + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"


def _toml(document: dict) -> str:
    """A document as TOML with inline tables only (tomllib reads it back the same)."""
    return "".join(f"{json.dumps(k)} = {_toml_value(v)}\n" for k, v in document.items())


def _key_paths(node, prefix=()):
    """Every key path of a document, descending only into the first entry of each array."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield prefix + (key,)
            yield from _key_paths(value, prefix + (key,))
    elif isinstance(node, list) and node and isinstance(node[0], (dict, list)):
        yield from _key_paths(node[0], prefix + (0,))


REFERENCE_DOCUMENT = tomllib.loads(REFERENCE_TEXT)
MUTATIONS = ("delete", "x", -1, 0, True, [], {}, ["x"], [{}], {"dist": "chance"})


def _mutated(path, mutation) -> dict:
    document = copy.deepcopy(REFERENCE_DOCUMENT)
    parent = document
    for step in path[:-1]:
        parent = parent[step]
    if mutation == "delete":
        del parent[path[-1]]
    else:
        parent[path[-1]] = mutation
    return document


def test_toml_writer_round_trips():
    assert tomllib.loads(_toml(REFERENCE_DOCUMENT)) == REFERENCE_DOCUMENT


@pytest.mark.parametrize("path", list(_key_paths(REFERENCE_DOCUMENT)),
                         ids=lambda path: ".".join(map(str, path)))
def test_broken_key_raises_scenario_error_only(path):
    for mutation in MUTATIONS:
        Path("x.toml").write_text(_toml(_mutated(path, mutation)))
        try:
            load_scenario("x.toml")
        except ScenarioError as error:
            assert error.problems and all(p.file == "x.toml" for p in error.problems)
            assert all(p.key or "TOML" in p.message for p in error.problems)


OPTIONAL_TOP_LEVEL = ("existing", "incoming", "shipments", "shared_delays", "retrofit", "costs")
NOTHING_DEPENDS_ON = ("risks",)   # a register of disabled risks: the file is whole without it


@pytest.mark.parametrize("key", list(REFERENCE_DOCUMENT))
def test_deleting_a_top_level_key_is_reported(key):
    # An optional table's absence shows up where the reference needs it (a row to retrofit,
    # a unit to drain, a shared delay a date names); a required one's as "missing".
    Path("x.toml").write_text(_toml(_mutated((key,), "delete")))
    if key in NOTHING_DEPENDS_ON:
        assert not load_scenario("x.toml").risks
        return
    with pytest.raises(ScenarioError) as info:
        load_scenario("x.toml")
    missing = [p for p in info.value.problems if p.key == key and p.value is NO_VALUE]
    assert [p.message for p in missing] == ([] if key in OPTIONAL_TOP_LEVEL else ["missing"])
