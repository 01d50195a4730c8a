"""Shared fixtures: the shipped scenarios compiled once, a builder for tiny scenarios, and every
backend (`backend`: numpy, numba, the host build of the CUDA sources, the GPU when present);
and `--quick`, the loop to run while editing: every test but the expensive kinds (EXPENSIVE,
each a marker declared in pyproject.toml).

Plain helpers (paths, scenario edits, the schema check, known answers) are in tests/helpers.py,
backend tolerances in tests/parity.py, the random scenario generator in
tests/random_scenarios.py, headless Chromium through its DevTools protocol in tests/devtools.py:
test modules import those, never each other.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import pytest

from mcrisk.backends import cuda_host, gpu_unavailable_reason, select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from .helpers import MINIMAL, REFERENCE, ROOT, SCENARIOS  # noqa: F401 (imported from here too)

EXPENSIVE = ("slow", "compile", "nvcc", "dask", "browser", "gpu")


def pytest_addoption(parser):
    parser.addoption("--quick", action="store_true",
                     help="leave out the expensive kinds of test: " + ", ".join(EXPENSIVE))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--quick"):
        return
    expensive = [item for item in items if any(item.get_closest_marker(m) for m in EXPENSIVE)]
    if expensive:
        config.hook.pytest_deselected(items=expensive)
        dropped = set(expensive)
        items[:] = [item for item in items if item not in dropped]

# A tiny migration with fixed durations, so that every metric can be worked out by hand.
# Two air-cooled units E1, E2 (128 H100-eq each) in rows R1, R2; two liquid racks N1, N2
# (180 H100-eq each) arrive on day {arrival}; row R3 is empty at day 0.
TINY = """
[scenario]
name = "tiny"
horizon_days = 100

[demand]
points = {demand}
largest_job = 200

[[unit_types]]
id = "old"
gpus = 128
h100_eq_per_gpu = 1.0
power_kw = {old_kw}
cooling = "air"
island = "old-ib"
drain_days = 2
removal_days = {removal}

[[unit_types]]
id = "new"
gpus = 72
h100_eq_per_gpu = 2.5
power_kw = {new_kw}
cooling = "liquid"
island = "new-ib"
install_days = {install}

[unit_types.burn_in]
attempt_days = {attempt}
fail_first = {fail_first}
fail_retry = {fail_retry}
fix_days = {fix}
rma_after_failures = {rma_after}
rma_days = {rma}

[[islands]]
id = "old-ib"

[[islands]]
id = "new-ib"
delivery = {{ day = 15 }}
install_days = 3

[[halls]]
id = "H"
power_cap_kw = {cap_kw}
rows = [
  {{ id = "R1", cooling = "air", positions = 2 }},
  {{ id = "R2", cooling = "air", positions = 2 }},
  {{ id = "R3", cooling = "air", positions = 2 }},
]

[retrofit]
crews = {crews}
days = {retrofit}

[[existing]]
units = "E1..E2"
type = "old"
rows = "R1..R2"

[[incoming]]
units = "N1..N2"
type = "new"

[[shipments]]
id = "S1"
units = "N1..N2"
arrival = {{ day = {arrival}, delay = {delay} }}

{strategies}
"""

TINY_DEFAULTS = dict(
    demand="[[0, 256]]", old_kw=100, new_kw=100, removal=3, install=2, attempt=5,
    fail_first=0, fail_retry=0, fix=4, rma_after=3, rma=30, cap_kw=10000, crews=1,
    retrofit=10, arrival=20, delay=0,
    strategies="""
[[strategies]]
name = "swap-on-day"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 10 }]

[[strategies]]
name = "swap-gated"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N1" }, { units = "E2", on_accepted = "N2" }]
""")


@pytest.fixture
def tiny(tmp_path):
    """tiny(**overrides) -> path of a TINY scenario file with those template values."""
    counter = iter(range(10_000))

    def make(**overrides):
        values = {**TINY_DEFAULTS, **overrides}
        path = tmp_path / f"tiny-{next(counter)}.toml"
        path.write_text(TINY.format(**values))
        return path

    return make


@pytest.fixture(scope="session")
def reference_scenario():
    return load_scenario(str(REFERENCE.relative_to(ROOT)) if Path.cwd() == ROOT else REFERENCE)


@pytest.fixture(scope="session")
def reference_plan(reference_scenario):
    return compile_scenario(reference_scenario)


@pytest.fixture(scope="session")
def minimal_plan():
    return compile_scenario(load_scenario(MINIMAL))


@pytest.fixture
def in_tmp(tmp_path, monkeypatch):
    """Run the test in its own folder, so files are named x.toml in messages."""
    monkeypatch.chdir(tmp_path)


# ---- backends ----------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def host(tmp_path_factory) -> cuda_host.HostLibrary:
    """The CUDA sources built for the host, once per session. Fails, never skips, without a
    C++ compiler: the bit-exact parity tests (tests/backends/test_cuda_host.py) are CI's proof
    of the kernels."""
    if cuda_host.host_compiler() is None:
        pytest.fail("no C++ compiler (g++ or $CXX): the CUDA kernel's parity cannot be checked")
    build = cuda_host.build_host_library(tmp_path_factory.mktemp("cuda_host"))
    return cuda_host.HostLibrary(*build)


@dataclass(frozen=True)
class BackendUnderTest:
    """A backend as simulate() and the tests use it: its name (mcrisk.backends.BACKENDS) and
    simulate_chunk(plan, seed, first, count, keep_nodes=False). `compiled` is False for the
    NumPy reference, which takes about 0.2 s a call on the reference scenario however few
    scenarios it holds: tests give it fewer scenarios or chunks."""
    name: str
    simulate_chunk: Callable
    compiled: bool = True


@pytest.fixture(params=["numpy", "numba", "cuda-host",
                        pytest.param("cuda", marks=pytest.mark.gpu)])
def backend(request) -> BackendUnderTest:
    """Each backend in turn: numpy, numba, cuda-host (the session's host build; skipped when
    no C++ compiler can build it) and cuda (skipped, with the reason, without a usable GPU)."""
    name = request.param
    if name == "cuda-host":
        if cuda_host.host_compiler() is None:
            pytest.skip("cuda-host: no C++ compiler (g++ or $CXX) to build the CUDA sources")
        return BackendUnderTest(name, request.getfixturevalue("host").simulate_chunk)
    if name == "cuda" and (reason := gpu_unavailable_reason()) is not None:
        pytest.skip(f"cuda: {reason}")
    return BackendUnderTest(name, select_backend(name).simulate_chunk, name != "numpy")
