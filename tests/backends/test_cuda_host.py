"""The CUDA kernel's sources, compiled for the host with g++, equal the Numba backend.

This is how every CI run, without a GPU, proves kernels/*.cu(h) right: the per-scenario code
is all __host__ __device__, so mcrisk.backends.cuda_host compiles the very text that NVRTC gets
(cuda.kernel_source()) as C++ and loads it with ctypes (the session's build: the `host` fixture,
tests/conftest.py). Measured on x86-64 with glibc: words, uniforms, ndtri, world quantities,
node times and metrics are bit-identical to Numba; tests/parity.py's table says what other
platforms are held to. A separate test compiles the kernel with nvcc for sm_90, so a kernel
that does not compile for the device fails CI too.
"""
from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcrisk.core import rng
from mcrisk.core.definitions import NODE_CREW
from mcrisk.core.risks import select_risks
from mcrisk.backends import cuda, cuda_host
from mcrisk.backends import numba as numba_backend
from mcrisk.backends.numba import distributions as numba_distributions
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import KAT_PHILOX4X32_10, ROOT
from ..parity import BIT_IDENTICAL_PLATFORM, NDTRI_RTOL, assert_parity
from ..random_scenarios import random_scenario_text

NUMBA_DIR = Path(numba_backend.__file__).parent
NUMBA_SOURCES = sorted(NUMBA_DIR.glob("*.py"))
KERNEL_DIR = ROOT / "kernels"
HOST_AGAINST_NUMBA = ("cuda-host", "numba")


# ---- the build and the interface ------------------------------------------------------------

def test_host_build_is_warning_free(host):
    assert host.build_log == "", host.build_log


# The kernel's parameter lists against Python's: tests/plan/test_record.py.


def constants(text: str) -> dict[str, float]:
    found = re.findall(r"\b([A-Z][A-Z0-9_]*) = (-?[0-9][0-9a-fA-FxXe.+-]*?)u?[,;]", text)
    return {name: float(int(v, 16)) if v.lower().startswith("0x") else float(v)
            for name, v in found}


def test_kernel_constants_are_the_python_ones():
    # What NVRTC reads: the stages' own constants (the random stream's, Acklam's) and those
    # generated from mcrisk/core (kernels/constants.cuh, tests/core/test_constants.py), each parsed
    # back to Python's value.
    got = constants(cuda.kernel_source())      # every kernel file, includes inlined
    expected = {
        "PHILOX_M0": rng.PHILOX_M0, "PHILOX_M1": rng.PHILOX_M1, "PHILOX_W0": rng.PHILOX_W0,
        "PHILOX_W1": rng.PHILOX_W1, "PHILOX_ROUNDS": rng.PHILOX_ROUNDS,
        "TWO_POW_M52": rng.TWO_POW_M52, "PI": np.pi, **cuda.shared_constants(),
    }
    for letter, values in (("A", numba_distributions._A), ("B", numba_distributions._B),
                          ("C", numba_distributions._C), ("D", numba_distributions._D)):
        expected.update({f"{letter}{j}": v for j, v in enumerate(values)})
    assert {k: got.get(k) for k in expected} == expected


# Each stage's Numba file and CUDA file, read side by side (numba/<stage>.py, kernels/<file>).
STAGE_FILES = {"random": "random.cuh", "distributions": "distributions.cuh",
               "world": "world.cuh", "schedule": "schedule.cuh", "metrics": "metrics.cuh",
               "costs": "costs.cuh", "driver": "simulate.cu"}
# One thread's work is simulate_block's loop body for one scenario.
CUDA_NAME = {"simulate_block": "simulate_scenario"}
# CUDA functions with no Numba namesake, and why.
CUDA_ONLY = {
    "mulhilo": "the 32 x 32 -> 64-bit multiply, written inline in Numba",
    "plan_fits": "compile-time scratch sizes (Numba allocates scratch to fit)",
    "philox_kernel": "probe", "uniforms_kernel": "probe", "ndtri_kernel": "probe",
    "host_simulate_chunk": "host entry point", "host_limits": "host entry point",
    "host_philox": "host probe", "host_uniforms": "host probe", "host_ndtri": "host probe",
}


def numba_functions(text: str) -> list[str]:
    return re.findall(r"^\s*@(?:jit|jit_inline|entry\(.*?\))\s*\n\s*def (\w+)\(", text, re.M)


def cuda_functions(text: str) -> list[str]:
    return re.findall(r'^(?:MCRISK_HD|extern "C"(?: __global__)?) [\w:&*]+ (\w+)\(', text, re.M)


@pytest.mark.parametrize("stage", sorted(STAGE_FILES))
def test_kernel_functions_have_the_cpu_names(stage):
    # Read side by side: each stage's Numba file and CUDA file define the same functions
    # (in the same order), so a function in one has its namesake in the other.
    in_numba = numba_functions((NUMBA_DIR / f"{stage}.py").read_text())
    in_cuda = [name for name in cuda_functions(cuda.kernel_file(STAGE_FILES[stage]))
               if name not in CUDA_ONLY]
    assert in_numba and [CUDA_NAME.get(name, name) for name in in_numba] == in_cuda


def test_every_stage_file_is_paired():
    assert {p.stem for p in NUMBA_SOURCES} - {"__init__"} == set(STAGE_FILES)
    generated = {cuda.PLAN_HEADER, cuda.CONSTANTS_HEADER}
    # a chunk's reductions pair with mcrisk/results/band_chunks.py and milestone_chunks.py
    # instead (tests/backends/test_cuda_bands.py, test_cuda_milestones.py)
    reductions = {"bands.cuh", "milestones.cu", "milestones.cuh"}
    assert {p.name for p in KERNEL_DIR.glob("*.cu*")} - {"compat.cuh", *generated,
                                                         *reductions} == \
        set(STAGE_FILES.values())


def test_device_code_needs_no_standard_header():
    # NVRTC (cupy.RawModule) has no C++ standard library: the only header is the host's.
    includes = re.findall(r"#include\s*<[^>]+>", cuda.kernel_source())
    assert includes == ["#include <math.h>"]
    compat = cuda.kernel_file("compat.cuh")
    assert compat.index("#ifndef __CUDACC__") < compat.index("#include <math.h>") \
        < compat.index("#endif")


@pytest.mark.skipif(shutil.which("nvcc") is None,
                    reason="nvcc is not installed: the device compile of kernels/simulate.cu "
                           "is not checked here (CI has CUDA 13's nvcc)")
@pytest.mark.nvcc
def test_kernel_compiles_for_the_device(tmp_path, reference_plan):
    # The exact text and options that cuda.py hands NVRTC, through nvcc and ptxas for sm_90.
    source = tmp_path / "simulate.cu"
    source.write_text(cuda.kernel_source())
    done = subprocess.run(
        ["nvcc", "-cubin", "-arch=sm_90", "-Werror", "all-warnings", "-Xptxas", "-v",
         *cuda.compile_options(reference_plan), "-x", "cu", str(source),
         "-o", str(tmp_path / "simulate.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for kernel in (cuda.KERNEL_NAME, *cuda.PROBE_KERNELS):
        assert f"Compiling entry function '{kernel}'" in done.stderr   # extern "C": unmangled
    assert "bytes spill" in done.stderr


# ---- the random stream, the normal quantile -------------------------------------------------

@pytest.mark.parametrize("counter, key, expected", KAT_PHILOX4X32_10)
def test_philox_matches_random123(host, counter, key, expected):
    words = host.philox4x32_10(np.array([counter]), np.array([key]))
    assert tuple(int(w) for w in words[0]) == expected


def test_philox_words_are_bit_identical_to_the_specification(host):
    gen = np.random.default_rng(20240601)
    counters = gen.integers(0, 2 ** 32, size=(10_000, 4), dtype=np.uint64)
    keys = gen.integers(0, 2 ** 32, size=(10_000, 2), dtype=np.uint64)
    expected = np.stack(rng.philox4x32_10(counters.T, keys.T), axis=1)
    np.testing.assert_array_equal(host.philox4x32_10(counters, keys), expected)


def test_uniforms_are_bit_identical_to_the_specification(host):
    gen = np.random.default_rng(99)
    n = 10_000
    scenario = gen.integers(0, 2 ** 32, size=n, dtype=np.uint64)
    scenario[:2] = (0, 2 ** 32 - 1)
    address = gen.integers(0, 2 ** 64, size=n, dtype=np.uint64)
    address[:3] = (0, 2 ** 32 - 1, 2 ** 64 - 1)
    draw_index = gen.integers(0, 2 ** 32, size=n, dtype=np.uint64)
    for seed in (0, 1, 2 ** 64 - 1, 0x1234_5678_9ABC_DEF0):
        u1, u2 = rng.uniforms(seed, scenario, address, draw_index)
        got = host.uniforms(seed, scenario, address, draw_index)
        np.testing.assert_array_equal(got[:, 0], u1)
        np.testing.assert_array_equal(got[:, 1], u2)
        assert 0.0 < got.min() and got.max() < 1.0
    with pytest.raises(ValueError, match="below 2"):      # never cut to 32 bits silently
        host.uniforms(1, np.array([2 ** 32], dtype=np.uint64), [0], [0])


def test_ndtri_is_the_numba_ndtri(host):
    gen = np.random.default_rng(5)
    p = np.concatenate([gen.random(20_000), 10.0 ** -gen.uniform(1, 15, 2000),
                        [2.0 ** -52 * 0.5, 0.02425, np.nextafter(0.02425, 0), 0.5,
                         np.nextafter(0.5, 1), 1 - 2.0 ** -52 * 0.5]])
    p = np.concatenate([p, 1.0 - p[-2000:]])
    expected = np.array([numba_distributions.ndtri(x) for x in p])
    if BIT_IDENTICAL_PLATFORM:
        np.testing.assert_array_equal(host.ndtri(p), expected)
    else:
        np.testing.assert_allclose(host.ndtri(p), expected, rtol=NDTRI_RTOL)


# ---- whole scenarios --------------------------------------------------------------------------

@pytest.mark.parametrize("first", [0, 2 ** 32 - 3000])   # the first and the last scenarios
def test_reference_scenario_matches_numba(host, reference_plan, first):
    got = host.simulate_chunk(reference_plan, 1, first, 3000, keep_nodes=True)
    expected = numba_backend.simulate_chunk(reference_plan, 1, first, 3000, keep_nodes=True)
    assert_parity(got, expected, HOST_AGAINST_NUMBA, reference_plan)


def test_reference_with_every_risk_matches_numba(host, reference_scenario):
    plan = compile_scenario(select_risks(reference_scenario, "pre"))
    assert any(name.startswith("risk.") for name in plan.quantity_names)
    got = host.simulate_chunk(plan, 2, 0, 2000, keep_nodes=True)
    expected = numba_backend.simulate_chunk(plan, 2, 0, 2000, keep_nodes=True)
    assert_parity(got, expected, HOST_AGAINST_NUMBA, plan)


def test_minimal_scenario_matches_numba(host, minimal_plan):
    got = host.simulate_chunk(minimal_plan, 123, 0, 3000, keep_nodes=True)
    expected = numba_backend.simulate_chunk(minimal_plan, 123, 0, 3000, keep_nodes=True)
    assert_parity(got, expected, HOST_AGAINST_NUMBA, minimal_plan)


def test_host_simulate_chunk_without_nodes(host, minimal_plan):
    got = cuda_host.host_simulate_chunk(minimal_plan, 5, 10, 50, library=host)
    assert got[2] is None
    assert_parity(got, numba_backend.simulate_chunk(minimal_plan, 5, 10, 50), HOST_AGAINST_NUMBA,
                  minimal_plan)


def test_a_plan_too_large_for_the_build_is_refused(host, minimal_plan, monkeypatch):
    monkeypatch.setitem(host.limits, "MAX_NODES", minimal_plan.n_nodes - 1)
    with pytest.raises(ValueError, match="MAX_NODES"):
        host.simulate_chunk(minimal_plan, 1, 0, 1)


RANDOM_SCENARIOS = 20


@pytest.mark.parametrize("case", range(RANDOM_SCENARIOS))
def test_random_scenarios_match_numba(host, tmp_path, case):
    path = tmp_path / f"random-{case}.toml"
    path.write_text(random_scenario_text(case))
    plan = compile_scenario(load_scenario(path))
    got = host.simulate_chunk(plan, case, 1000 * case, 300, keep_nodes=True)
    expected = numba_backend.simulate_chunk(plan, case, 1000 * case, 300, keep_nodes=True)
    assert_parity(got, expected, HOST_AGAINST_NUMBA, plan)


def test_random_scenarios_cover_every_feature(tmp_path):
    """The generator reaches what it is meant to exercise (over all cases together)."""
    seen = set()
    for case in range(RANDOM_SCENARIOS):
        text = random_scenario_text(case)
        seen |= {k for k in ("pert", "chance", "lognormal", "uniform", "triangular", "lambda",
                             "on_accepted", "on_arrival", "lag_days", "shared", "energized",
                             "burn_in", "crews = 2", "ramp", "[[risks]]") if k in text}
        path = tmp_path / f"random-{case}.toml"
        path.write_text(text)
        plan = compile_scenario(load_scenario(path))
        seen |= {"crew node"} if (plan.node_kind == NODE_CREW).any() else set()
        seen |= {"islands > 1"} if plan.island_cap0.shape[0] > 1 else set()
        seen |= {"halls > 1"} if plan.hall_cap.shape[0] > 1 else set()
        seen |= {"uncertain performance"} if (plan.cap_event_scale_q >= 0).any() else set()
        seen |= {"risk quantity"} if any(n.startswith("risk.") for n in plan.quantity_names) \
            else set()
    assert seen == {"pert", "chance", "lognormal", "uniform", "triangular", "lambda",
                    "on_accepted", "on_arrival", "lag_days", "shared", "energized", "burn_in",
                    "crews = 2", "crew node", "islands > 1", "halls > 1", "ramp", "[[risks]]",
                    "uncertain performance", "risk quantity"}
