"""One source for every constant the kernels share with Python (issue 23).

mcrisk/core/definitions.py (and distributions.py) define the columns of the metrics axis, the
kinds of quantity, node and distribution, and the tolerance; kernels/constants.cuh is generated
from them (mcrisk.backends.cuda.constants_header()). Checked here: the header is the generator's
text, every metric and cost has its named column, no other file defines one of those constants
again, and no driver or stage indexes the metrics axis by a literal column. The kernel's own
algorithm constants (Philox, Acklam's coefficients) stay in their stage files, held to Python
by tests/backends/test_cuda_host.py.
"""
from __future__ import annotations

import ast
import re

import pytest

from mcrisk.backends import cuda
from mcrisk.core import definitions
from mcrisk.core.definitions import COSTS, METRICS, job_columns
from ..helpers import ROOT

ROOT = ROOT
KERNELS = ROOT / "kernels"
PACKAGE = ROOT / "mcrisk"
SHARED = cuda.shared_constants()
# The modules whose constants the header is generated from: the only ones that define them.
DEFINED_IN = {f"mcrisk/core/{name}.py" for name in ("definitions", "distributions", "copula")}


def test_constants_header_is_generated_from_python():
    # If this fails after a change to a constant: python tests/regen_headers.py
    assert cuda.kernel_file(cuda.CONSTANTS_HEADER) == cuda.constants_header()


def test_every_metric_and_cost_has_its_named_column():
    assert {name.upper(): getattr(definitions, name.upper()) for name in METRICS} == \
        {name.upper(): k for k, name in enumerate(METRICS)}
    assert {name.upper(): getattr(definitions, name.upper()) for name in COSTS} == \
        {name.upper(): k for k, name in enumerate(COSTS)}
    columns = job_columns(("a", "b"))
    assert columns.index("unservable_gpu_days") == definitions.UNSERVABLE_GPU_DAYS
    assert columns.index("homeless_days.b") == definitions.JOB_HOMELESS_DAYS + 1
    assert definitions.COST_COMPONENTS == tuple(c for c in COSTS if c != "cost_total")


def test_the_header_holds_every_column_and_kind():
    names = set(SHARED)
    assert {name.upper() for name in METRICS + COSTS} <= names
    assert {"N_METRICS", "N_COSTS", "UNSERVABLE_GPU_DAYS", "JOB_HOMELESS_DAYS", "REL_EPS",
            "MAX_BURNIN_ATTEMPTS", "PERT_TABLE_SIZE"} <= names
    assert {n for n in dir(definitions) if re.fullmatch(r"(Q|NODE)_[A-Z]+", n)} <= names
    assert {n for n in dir(cuda.distributions) if n.startswith("KIND_")} - {"KIND_CODES"} <= names


def test_the_kernel_source_carries_the_header():
    # NVRTC gets kernel_source(), CuPy's cache and the host build's library name are keyed by
    # it: a change to the header recompiles both.
    assert cuda.constants_header() in cuda.kernel_source()


def _c_code(text: str) -> str:
    """C source without its // comments."""
    return re.sub(r"//[^\n]*", "", text)


@pytest.mark.parametrize("path", sorted(KERNELS.glob("*.cu*")), ids=lambda p: p.name)
def test_no_kernel_file_defines_a_shared_constant(path):
    if path.name == cuda.CONSTANTS_HEADER:
        return
    code = _c_code(path.read_text())
    defined = re.findall(r"\b(?:constexpr\s+[\w:]+|#define)\s+(\w+)", code)
    assert not set(defined) & set(SHARED), "read it from constants.cuh instead"
    used = set(re.findall(r"\b[A-Z][A-Z0-9_]+\b", code)) & set(SHARED)
    if used:    # each file includes what it reads, whatever the include order
        assert f'#include "{cuda.CONSTANTS_HEADER}"' in code, sorted(used)


def test_no_python_module_defines_a_shared_constant_again():
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        if relative in DEFINED_IN:
            continue
        for node in ast.parse(path.read_text()).body:
            targets = node.targets if isinstance(node, ast.Assign) else []
            names = {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}
            assert not names & set(SHARED), f"{relative}:{node.lineno} defines " \
                f"{sorted(names & set(SHARED))}: import it from mcrisk.core"


# The arrays that hold the metrics axis (or a run's costs or job columns), by where they do.
PYTHON_COLUMN_ARRAYS = {"metrics", "costs", "by_metric"}
BACKEND_COLUMN_ARRAYS = {"rows", "out"}          # a row of metrics, in numpy/ and numba/
C_COLUMN_ARRAYS = {"metrics", "rows"}            # and `out` in metrics.cuh


def _literal_column(index: ast.AST) -> bool:
    """A column index that is a number: an int in it, and no named constant to count from
    (N_METRICS + COST_TOTAL + 1 counts from a name)."""
    nodes = list(ast.walk(index))
    return (any(isinstance(n, ast.Constant) and type(n.value) is int for n in nodes)
            and not any(isinstance(n, ast.Name) and n.id.isupper() for n in nodes))


def test_no_python_code_indexes_a_column_by_a_number():
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        arrays = PYTHON_COLUMN_ARRAYS | (BACKEND_COLUMN_ARRAYS if relative.startswith(
            ("mcrisk/backends/numpy/", "mcrisk/backends/numba/")) else set())
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) \
                    and node.value.id in arrays:
                index = node.slice
                column = index.elts[-1] if isinstance(index, ast.Tuple) else index
                if _literal_column(column):
                    found.append(f"{relative}:{node.lineno}: {ast.unparse(node)}")
    assert not found, "name the column (definitions.TROUGH_DEPTH, COST_TOTAL, ...)"


def test_no_kernel_indexes_a_column_by_a_number():
    found = []
    for path in sorted(KERNELS.glob("*.cu*")):
        arrays = C_COLUMN_ARRAYS | ({"out"} if path.name == "metrics.cuh" else set())
        code = _c_code(path.read_text())
        for array, index in re.findall(r"\b(\w+)\[([^\[\]]*)\]", code):
            if array in arrays and re.search(r"\b\d+\b", index) \
                    and not re.search(r"\b[A-Z][A-Z0-9_]+\b", index):
                found.append(f"{path.name}: {array}[{index}]")
    assert not found, "name the column (constants.cuh: TROUGH_DEPTH, COST_TOTAL, ...)"
