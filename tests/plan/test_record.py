"""The plan interface (mcrisk/plan/record.py) is the one listing of the compiled plan's arrays.

Everything Python can derive from the table is derived (CompiledScenario's fields,
kernel_args, the Numba kernel's record KernelPlan, PLAN_PARAMETERS and so the ctypes list, the
kernel's shape parameters); what it cannot is checked here against the table, by name, order
and type: kernels/plan.cuh (generated from the table), the record as Numba types it, the Numba
kernel's signatures, every Numba call that passes the record or plan fields, and every field
the Numba stages read from the record. And every plan is checked against the table when it is
built.
"""
from __future__ import annotations

import ast
import dataclasses
import inspect
import re
from pathlib import Path

import numba as nb
import numpy as np
import pytest

from mcrisk.plan import record as plan_interface
from mcrisk.backends.numba import driver as numba_driver
from mcrisk.backends import cuda
from mcrisk.plan.record import (AXES, FIELD, KERNEL_FIELDS, PLAN_FIELDS, KernelPlan,
                                PlanInterfaceError)

from ..helpers import ROOT

KERNELS = ROOT / "kernels"
NUMBA_SOURCES = sorted(Path(numba_driver.__file__).parent.glob("*.py"))
# The Numba kernel's parameters after the plan record p (simulate_chunk_kernel, simulate_block).
NUMBA_CHUNK_PARAMETERS = ["seed_lo", "seed_hi", "first", "n_blocks", "metrics", "world",
                          "node_times", "keep_nodes", "status"]
NUMBA_BLOCK_PARAMETERS = ["seed_lo", "seed_hi", "first", "begin", "end", "metrics", "world",
                          "node_times", "keep_nodes", "status", "world_lanes", "node_time",
                          "waiting", "crew_ready_at", "crew_free", "times", "order",
                          "island_cap", "draw_kw", "lane_scratch", "row_ready", "lane_waiting",
                          "deadlock", "free_cap", "visited"]


# ---- the table and the plan built from it ---------------------------------------------------

def test_compiled_scenario_fields_are_the_table():
    names = [f.name for f in dataclasses.fields(plan_interface.CompiledScenario)]
    arrays = [name for name in names if name in FIELD]
    assert arrays == [f.name for f in PLAN_FIELDS]
    assert set(names) - set(arrays) == {"scenario_name", "strategy_names", "quantity_names",
                                        "quantity_labels", "node_names", "island_names",
                                        "hall_names", "contingencies"}


def test_the_table_uses_known_axes_and_types():
    symbols = {axis.symbol for axis in AXES}
    for f in PLAN_FIELDS:
        assert f.dtype in cuda.C_TYPES, f.name
        for axis in f.axes:
            name = axis.split("+")[0].strip()
            assert name.isdigit() or name in symbols, (f.name, axis)
    assert len({f.name for f in PLAN_FIELDS}) == len(PLAN_FIELDS)


def test_kernel_args_are_the_kernel_fields_in_order(minimal_plan):
    args = minimal_plan.kernel_args()
    assert len(args) == len(KERNEL_FIELDS) == cuda.N_KERNEL_ARGS
    for f, value in zip(KERNEL_FIELDS, args):
        assert getattr(minimal_plan, f.name) is value, f.name
    assert [name for name, _ in cuda.PLAN_PARAMETERS[:cuda.N_KERNEL_ARGS]] == \
        [f.name for f in KERNEL_FIELDS]


def test_shape_parameters_are_read_off_the_arrays(reference_plan):
    p = reference_plan
    assert cuda.plan_shapes(p) == {
        "n_quantities": p.n_quantities, "n_strategies": p.n_strategies, "n_nodes": p.n_nodes,
        "dep_width": p.dep_idx.shape[1], "crew_width": p.crew_node.shape[1],
        "unlock_width": p.unlock_block.shape[1], "pool_width": p.pool_first.shape[1],
        "n_cap_events": p.cap_event_node.shape[0],
        "n_islands": p.island_cap0.shape[0], "n_power_events": p.power_event_node.shape[0],
        "n_halls": p.hall_cap.shape[0], "n_completion": p.completion_node.shape[0],
        "n_demand": p.demand_day.shape[0], "n_spans": p.span_cost.shape[0],
        "res_width": p.res_day.shape[1], "n_lumps": p.lump_amount.shape[0],
        "n_jobs": p.job_size.shape[0]}


@pytest.mark.parametrize("change, message", [
    (lambda p: {"dep_ptr": p.dep_ptr.astype(np.int64)},
     r"dep_ptr is C-ordered int64\[2, 18\]; the plan interface says C-ordered int32\[s, v \+ 1\]"),
    (lambda p: {"dep_ptr": p.dep_ptr[:, :-1].copy()},
     r"dep_ptr has shape \(2, 17\); .* int32\[s, v \+ 1\] with v = 17 \(from node_names\)"),
    (lambda p: {"node_add_const": np.asfortranarray(np.zeros((3, p.n_nodes)))[:2]},
     r"node_add_const is not C-ordered float64\[2, 17\]; .* C-ordered float64\[s, v\]"),
    (lambda p: {"cap_event_order": p.cap_event_order[:, :-1].copy()},
     r"cap_event_order has shape \(2, 3\); .* with k = 4 \(from cap_event_node\)"),
    (lambda p: {"dist_param": p.dist_param[:, :3].copy()},
     r"dist_param has shape \(18, 3\); .* float64\[d, 4\] with 4 = 4"),
    (lambda p: {"node_add_q": p.node_add_q[:, :, 0]},
     r"node_add_q is not C-ordered int32\[2, 17\]; .* C-ordered int32\[s, v, 2\]"),
    (lambda p: {"n_costs": 2.0}, r"n_costs is float 2.0; the plan interface says int32"),
    (lambda p: {"n_crews": 2}, r"n_crews is int 2; the plan interface says C-ordered int32\[s\]"),
    (lambda p: {"baseline": np.float64(1.0)}, r"baseline is float64 1.0; .* says float64"),
    (lambda p: {"strategy_names": p.strategy_names[:1]},
     r"node_kind has shape \(2, 17\); .* with s = 1 \(from strategy_names\)"),
])
def test_a_plan_that_breaks_the_table_names_the_field(minimal_plan, change, message):
    with pytest.raises(PlanInterfaceError, match=message):
        dataclasses.replace(minimal_plan, **change(minimal_plan))


def test_axis_lengths(minimal_plan):
    lengths = minimal_plan.axis_lengths()
    assert lengths["s"] == 2 and lengths["v"] == minimal_plan.n_nodes
    assert lengths["r"] == minimal_plan.crew_node.shape[1] == minimal_plan.unlock_ptr.shape[1] - 1
    assert set(lengths) == {axis.symbol for axis in AXES}


# ---- the CUDA sources -------------------------------------------------------------------------

def test_plan_header_is_generated_from_the_table():
    # If this fails after a change to mcrisk/plan/record.py: python tests/regen_headers.py
    assert (KERNELS / cuda.PLAN_HEADER).read_text() == cuda.plan_header()


C_TYPES = {"const int*": "int32*", "const double*": "float64*", "const mcrisk::u32*": "uint32*",
           "const mcrisk::u64*": "uint64*", "const u64*": "uint64*",
           "int": "int32", "double": "float64", "mcrisk::u32": "uint32", "mcrisk::u64": "uint64",
           "long long": "int64", "double*": "float64*", "signed char*": "int8*"}


def c_parameters(text: str) -> list[tuple[str, str]]:
    """(name, PLAN_PARAMETERS kind) of a C parameter list such as `const int* R a, double b`."""
    params = []
    for item in text.replace("\\", " ").replace("__restrict__", "").split(","):
        if item.strip() in ("MCRISK_PLAN_PARAMS()", "MCRISK_PLAN_PARAMS(__restrict__)"):
            continue
        ctype, name = re.fullmatch(r"\s*(.+?)\s*(?:\bR\b)?\s*(\w+)\s*", item).groups()
        params.append((name, C_TYPES[" ".join(ctype.split()).replace(" *", "*")]))
    return params


def test_plan_struct_lists_the_table():
    # Parsed, not compared with the generator: the struct the stages read has every kernel
    # field of the table in order, with its type, then the shape parameters.
    text = (KERNELS / cuda.PLAN_HEADER).read_text()
    body = re.search(r"struct Plan \{(.*?)\n\};", text, re.S).group(1)
    declarations = [line.split("//")[0].strip() for line in body.splitlines()]
    members = ", ".join(d.rstrip(";") for d in declarations if d)
    assert c_parameters(members) == list(cuda.PLAN_PARAMETERS)
    assert cuda.PLAN_PARAMETERS[:len(KERNEL_FIELDS)] == tuple(
        (f.name, f.dtype + ("*" if f.axes else "")) for f in KERNEL_FIELDS)


def test_kernel_parameters_are_the_ones_python_passes():
    header = (KERNELS / cuda.PLAN_HEADER).read_text()
    block = re.search(r"#define MCRISK_PLAN_PARAMS\(R\)(.*?)\n\n", header, re.S).group(1)
    assert c_parameters(block) == list(cuda.PLAN_PARAMETERS)
    values = re.search(r"#define MCRISK_PLAN_VALUES\s*\\\s*\{(.*?)\}", header, re.S).group(1)
    assert [v.strip(" \\\n") for v in values.split(",")] == [n for n, _ in cuda.PLAN_PARAMETERS]
    entry_points = cuda.kernel_source()
    for entry in (cuda.KERNEL_NAME, "host_simulate_chunk"):
        params = re.search(entry + r"\(\s*MCRISK_PLAN_PARAMS\((?:__restrict__)?\),(.*?)\)\s*\{",
                           entry_points, re.S).group(1)
        assert c_parameters(params) == list(cuda.CHUNK_PARAMETERS), entry


# ---- the Numba kernel ---------------------------------------------------------------------------

def test_the_kernel_record_is_the_table(minimal_plan):
    # The record the Numba kernel takes: every kernel field of the table, in order, holding the
    # plan's own array or scalar, of the type the table says as Numba sees it.
    record = minimal_plan.kernel_record()
    assert type(record) is KernelPlan
    assert list(record._fields) == [f.name for f in KERNEL_FIELDS]
    for f, value in zip(KERNEL_FIELDS, record):
        assert value is getattr(minimal_plan, f.name), f.name
    numba_type = nb.typeof(record)
    assert list(numba_type.fields) == [f.name for f in KERNEL_FIELDS]
    for f, member in zip(KERNEL_FIELDS, numba_type.types):
        if f.axes:
            assert member == nb.types.Array(nb.from_dtype(np.dtype(f.dtype)), len(f.axes), "C",
                                            readonly=False), f.name
        else:
            kind = nb.types.Integer if f.dtype.startswith(("int", "uint")) else nb.types.Float
            assert isinstance(member, kind), f.name


def test_the_numba_kernel_takes_the_record():
    kernel = list(inspect.signature(numba_driver.simulate_chunk_kernel.py_func).parameters)
    assert kernel == ["p"] + NUMBA_CHUNK_PARAMETERS
    block = list(inspect.signature(numba_driver.simulate_block.py_func).parameters)
    assert block == ["p"] + NUMBA_BLOCK_PARAMETERS
    assert "simulate_chunk_kernel(plan.kernel_record()," in inspect.getsource(numba_driver)


def jitted_functions(trees: list[ast.Module]) -> dict[str, ast.FunctionDef]:
    """Every Numba-compiled function (decorated jit, jit_inline or entry(...)) by name."""
    return {node.name: node for tree in trees for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            and any(ast.unparse(d).startswith(("jit", "entry(")) for d in node.decorator_list)}


def takes_the_record(function: ast.FunctionDef) -> bool:
    """Whether a Numba function reads the plan record (its parameter p, ndtri's p is not)."""
    return any(isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
               and node.value.id == "p" for node in ast.walk(function))


def test_numba_calls_pass_the_record_and_each_plan_field_under_its_own_name():
    # Python cannot derive the Numba listings, so every call between Numba functions must hand
    # the record to a parameter p, and a plan field (the distribution helpers and clip take a
    # few, as in CUDA) to the parameter of the same name, read from p or passed on under that
    # name: a swapped or shifted argument fails here.
    functions = jitted_functions([ast.parse(path.read_text()) for path in NUMBA_SOURCES])
    assert {"simulate_chunk_kernel", "simulate_block", "sample_world", "schedule_nodes",
            "capacity_metrics", "power_violation", "strategy_costs", "draw", "ppf"} \
        <= set(functions)
    records = fields = 0
    for caller in functions.values():
        for call in (n for n in ast.walk(caller) if isinstance(n, ast.Call)):
            callee = call.func.id if isinstance(call.func, ast.Name) else None
            if callee not in functions:
                continue
            params = [a.arg for a in functions[callee].args.args]
            assert len(call.args) == len(params) and not call.keywords, ast.unparse(call)
            for param, arg in zip(params, call.args):
                passed = ast.unparse(arg)
                if param == "p" and takes_the_record(functions[callee]):
                    assert passed == "p", f"{caller.name}: {callee}(...) gets {passed} for p"
                    records += 1
                elif param in FIELD:
                    assert passed in (param, f"p.{param}"), \
                        f"{caller.name}: {callee}(...) gets {passed} for {param}"
                    fields += 1
    assert records > 30 and fields > 20


def test_numba_stages_read_kernel_fields_from_the_record():
    # What a stage reads from p is a field the kernel gets (not one only the NumPy reference
    # reads, such as topo), and the record is p wherever a Numba function takes it.
    kernel_fields = {f.name for f in KERNEL_FIELDS}
    functions = jitted_functions([ast.parse(path.read_text()) for path in NUMBA_SOURCES])
    reads = set()
    for function in functions.values():
        params = [a.arg for a in function.args.args]
        for node in ast.walk(function):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                    and node.value.id == "p":
                assert params[0] == "p", function.name
                assert node.attr in kernel_fields, f"{function.name} reads p.{node.attr}"
                reads.add(node.attr)
        assert not set(params[1:]) & {"p", "plan", "record"}, function.name
    assert len(reads) > 60
