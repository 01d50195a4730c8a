"""The CUDA kernel's sources, compiled for the host with g++, equal the Numba backend.

This is how every CI run, without a GPU, proves kernels/*.cu(h) right: the per-scenario code
is all __host__ __device__, so mcrisk.backends.cuda_host compiles the very text that NVRTC gets
(cuda.kernel_source()) as C++ and loads it with ctypes. Measured on x86-64 with glibc: words,
uniforms, ndtri, world quantities, node times and metrics are bit-identical to Numba; the
tolerances below (rtol 1e-12 for world and node times) are what other platforms are held to.
A separate test compiles the kernel with nvcc for sm_90, so a kernel that does not compile for
the device fails CI too.
"""
from __future__ import annotations

import platform
import random
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from mcrisk import definitions, distributions, rng
from mcrisk import compile as compile_
from mcrisk.backends import cuda, cuda_host
from mcrisk.backends import numba as numba_backend
from mcrisk.backends.numba import distributions as numba_distributions
from mcrisk.compile import compile_scenario
from mcrisk.scenario import load_scenario

from .test_rng import KAT_PHILOX4X32_10  # Random123 known answers, one copy

NUMBA_DIR = Path(numba_backend.__file__).parent
NUMBA_SOURCES = sorted(NUMBA_DIR.glob("*.py"))
KERNEL_DIR = Path(__file__).resolve().parents[1] / "kernels"

# Where the same compiler and libm evaluate the same operations (x86-64, glibc): no rounding
# may differ at all.
BIT_IDENTICAL_PLATFORM = platform.machine() in ("x86_64", "AMD64") and platform.libc_ver()[0] == "glibc"
WORLD_RTOL = 1e-12      # world quantities and node times, elsewhere
METRIC_RTOL, METRIC_ATOL = 1e-9, 1e-6


@pytest.fixture(scope="session")
def host(tmp_path_factory) -> cuda_host.HostLibrary:
    if cuda_host.host_compiler() is None:
        pytest.fail("no C++ compiler (g++ or $CXX): the CUDA kernel's parity cannot be checked")
    return cuda_host.HostLibrary(*cuda_host.build_host_library(tmp_path_factory.mktemp("cuda_host")))


def assert_parity(got: tuple, expected: tuple) -> None:
    """Host-built CUDA (metrics, world, node_times) against Numba's."""
    (g_metrics, g_world, g_nodes), (e_metrics, e_world, e_nodes) = got, expected
    if BIT_IDENTICAL_PLATFORM:
        np.testing.assert_array_equal(g_world, e_world)
        np.testing.assert_array_equal(g_nodes, e_nodes)
        np.testing.assert_array_equal(g_metrics, e_metrics)
        return
    np.testing.assert_allclose(g_world, e_world, rtol=WORLD_RTOL, atol=0)
    np.testing.assert_allclose(g_nodes, e_nodes, rtol=WORLD_RTOL, atol=0)
    np.testing.assert_allclose(g_metrics, e_metrics, rtol=METRIC_RTOL, atol=METRIC_ATOL)


# ---- the build and the interface ------------------------------------------------------------

def test_host_build_is_warning_free(host):
    assert host.build_log == "", host.build_log


# The kernel's parameter lists against Python's: tests/test_plan_interface.py.


def constants(text: str) -> dict[str, float]:
    found = re.findall(r"\b([A-Z][A-Z0-9_]*) = (-?[0-9][0-9a-fA-FxXe.+-]*?)u?[,;]", text)
    return {name: float(int(v, 16)) if v.lower().startswith("0x") else float(v)
            for name, v in found}


def test_kernel_constants_are_the_python_ones():
    got = constants(cuda.kernel_source())      # every kernel file, includes inlined
    expected = {
        "PHILOX_M0": rng.PHILOX_M0, "PHILOX_M1": rng.PHILOX_M1, "PHILOX_W0": rng.PHILOX_W0,
        "PHILOX_W1": rng.PHILOX_W1, "PHILOX_ROUNDS": rng.PHILOX_ROUNDS,
        "TWO_POW_M52": rng.TWO_POW_M52,
        "KIND_FIXED": distributions.KIND_FIXED, "KIND_UNIFORM": distributions.KIND_UNIFORM,
        "KIND_TRIANGULAR": distributions.KIND_TRIANGULAR,
        "KIND_PERT": distributions.KIND_PERT, "KIND_LOGNORMAL": distributions.KIND_LOGNORMAL,
        "PERT_TABLE_SIZE": distributions.PERT_TABLE_SIZE, "PI": np.pi,
        "Q_SAMPLE": definitions.Q_SAMPLE, "Q_SUM": definitions.Q_SUM, "Q_BURNIN": definitions.Q_BURNIN,
        "Q_ATTEMPTS": definitions.Q_ATTEMPTS, "NODE_CREW": definitions.NODE_CREW,
        "REL_EPS": definitions.REL_EPS, "MAX_BURNIN_ATTEMPTS": definitions.MAX_BURNIN_ATTEMPTS,
        "N_METRICS": definitions.N_METRICS,
    }
    for letter, values in (("A", numba_distributions._A), ("B", numba_distributions._B),
                          ("C", numba_distributions._C), ("D", numba_distributions._D)):
        expected.update({f"{letter}{j}": v for j, v in enumerate(values)})
    assert {k: got.get(k) for k in expected} == expected


# Each stage's Numba file and CUDA file, read side by side (numba/<stage>.py, kernels/<file>).
STAGE_FILES = {"random": "random.cuh", "distributions": "distributions.cuh",
               "world": "world.cuh", "schedule": "schedule.cuh", "metrics": "metrics.cuh",
               "driver": "simulate.cu"}
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
    return re.findall(r"^\s*@(?:jit|jit_inline|nb\.njit\(.*?\))\s*\n\s*def (\w+)\(", text, re.M)


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
    assert {p.stem for p in NUMBA_SOURCES} - {"__init__", "jit"} == set(STAGE_FILES)
    assert {p.name for p in KERNEL_DIR.glob("*.cu*")} - {"compat.cuh", "plan.cuh"} == \
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
@pytest.mark.slow
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
        np.testing.assert_allclose(host.ndtri(p), expected, rtol=1e-14)


# ---- whole scenarios --------------------------------------------------------------------------

@pytest.mark.parametrize("first", [0, 2 ** 32 - 3000])   # the first and the last scenarios
def test_reference_scenario_matches_numba(host, reference_plan, first):
    got = host.simulate_chunk(reference_plan, 1, first, 3000, keep_nodes=True)
    expected = numba_backend.simulate_chunk(reference_plan, 1, first, 3000, keep_nodes=True)
    assert_parity(got, expected)


def test_reference_with_every_risk_matches_numba(host, reference_scenario):
    plan = compile_scenario(compile_.select_risks(reference_scenario, "pre"))
    assert any(name.startswith("risk.") for name in plan.quantity_names)
    got = host.simulate_chunk(plan, 2, 0, 2000, keep_nodes=True)
    expected = numba_backend.simulate_chunk(plan, 2, 0, 2000, keep_nodes=True)
    assert_parity(got, expected)


def test_minimal_scenario_matches_numba(host, minimal_plan):
    got = host.simulate_chunk(minimal_plan, 123, 0, 3000, keep_nodes=True)
    expected = numba_backend.simulate_chunk(minimal_plan, 123, 0, 3000, keep_nodes=True)
    assert_parity(got, expected)


def test_host_simulate_chunk_without_nodes(host, minimal_plan):
    metrics, world, nodes = cuda_host.host_simulate_chunk(minimal_plan, 5, 10, 50, library=host)
    assert nodes is None
    expected_metrics, expected_world, _ = numba_backend.simulate_chunk(minimal_plan, 5, 10, 50)
    np.testing.assert_array_equal(world, expected_world)
    np.testing.assert_array_equal(metrics, expected_metrics)


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
    assert_parity(got, expected)


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
        seen |= {"crew node"} if (plan.node_kind == compile_.NODE_CREW).any() else set()
        seen |= {"islands > 1"} if plan.island_cap0.shape[0] > 1 else set()
        seen |= {"halls > 1"} if plan.hall_cap.shape[0] > 1 else set()
        seen |= {"uncertain performance"} if (plan.cap_event_scale_q >= 0).any() else set()
        seen |= {"risk quantity"} if any(n.startswith("risk.") for n in plan.quantity_names) \
            else set()
    assert seen == {"pert", "chance", "lognormal", "uniform", "triangular", "lambda",
                    "on_accepted", "on_arrival", "lag_days", "shared", "energized", "burn_in",
                    "crews = 2", "crew node", "islands > 1", "halls > 1", "ramp", "[[risks]]",
                    "uncertain performance", "risk quantity"}


# ---- a generator of small valid scenarios -----------------------------------------------------

def random_scenario_text(seed: int) -> str:
    """A small random scenario file that validates and cannot deadlock.

    Random counts of halls, rows, islands, unit types, units and shipments; every distribution
    kind; drains on days, arrivals and acceptances; uncertain performance, ramps and a risk
    register (some risks enabled). Deadlocks are avoided by construction: a
    drain waits only for the acceptance of units placed in rows that hold no existing unit.
    """
    g = random.Random(seed)
    out: list[str] = []
    shared = [f"v{k}" for k in range(g.randint(0, 2))]

    def number(lo: float, hi: float) -> float:
        return round(g.uniform(lo, hi), 2)

    def dist(inner: bool = False) -> str:
        kind = g.choice(["bare", "fixed", "uniform", "triangular", "pert", "lognormal"]
                        + ([] if inner else ["chance", "chance"]))
        low = number(0, 10)
        if kind == "bare":
            return str(low)
        if kind == "fixed":
            return f'{{ dist = "fixed", value = {low} }}'
        high = round(low + number(0.5, 30), 2)
        if kind == "uniform":
            return f'{{ dist = "uniform", min = {low}, max = {high} }}'
        mode = g.choice([low, high, number(low, high)])
        if kind == "triangular":
            return f'{{ dist = "triangular", min = {low}, mode = {mode}, max = {high} }}'
        if kind == "pert":
            lam = f", lambda = {number(0.5, 8)}" if g.random() < 0.5 else ""
            return f'{{ dist = "pert", min = {low}, mode = {mode}, max = {high}{lam} }}'
        if kind == "lognormal":
            median = number(0.5, 20)
            return f'{{ dist = "lognormal", median = {median}, p90 = {round(median * number(1.1, 5), 2)} }}'
        return f'{{ dist = "chance", p = {g.choice([0, 1, number(0, 1)])}, then = {dist(inner=True)} }}'

    def date() -> str:
        names = g.sample(shared, g.randint(0, len(shared)))
        extra = f", shared = {ids(names)}" if names else ""
        delay = f", delay = {dist()}" if g.random() < 0.8 else ""
        return f"{{ day = {number(0, 120)}{delay}{extra} }}"

    def ids(items) -> str:
        return "[" + ", ".join(f'"{i}"' for i in items) + "]"

    points, day = [], 0.0
    for _ in range(g.randint(1, 4)):
        points.append(f"[{day}, {number(0, 1500)}]")
        day = round(day + number(1, 200), 2)
    out += ["[scenario]", f'name = "random-{seed}"', f"horizon_days = {number(60, 600)}", "",
            "[demand]", f"points = [{', '.join(points)}]", f"largest_job = {number(0, 400)}", ""]
    if shared:
        out += ["[shared_delays]"] + [f"{n} = {dist()}" for n in shared] + [""]
    islands = [f"ib{k}" for k in range(g.randint(1, 3))]
    for k, island in enumerate(islands):
        out += ["[[islands]]", f'id = "{island}"']
        if k > 0 and g.random() < 0.7:
            out += [f"delivery = {date()}", f"install_days = {dist()}"]
        out += [""]
    old_types = [f"old{k}" for k in range(g.randint(1, 2))]
    new_types = [f"new{k}" for k in range(g.randint(1, 2))]
    for t in old_types + new_types:
        performance = g.choice([0.5, 1.0, 2.5])
        if t.startswith("new") and g.random() < 0.4:      # uncertain: drawn per scenario
            performance = g.choice(['{ dist = "uniform", min = 1.5, max = 3 }',
                                    '{ dist = "triangular", min = 2, mode = 2.5, max = 2.6 }',
                                    '{ dist = "lognormal", median = 2.4, p90 = 2.7 }'])
        out += ["[[unit_types]]", f'id = "{t}"', f"gpus = {g.randint(8, 256)}",
                f"h100_eq_per_gpu = {performance}",
                f"power_kw = {number(5, 400)}",
                f'cooling = "{"air" if t.startswith("old") else g.choice(["air", "liquid", "liquid"])}"',
                f'island = "{g.choice(islands)}"']
        if t.startswith("old"):
            out += [f"drain_days = {dist()}", f"removal_days = {dist()}", ""]
            continue
        out += [f"install_days = {dist()}"]
        if g.random() < 0.4:
            out += [f"ramp = {{ start_fraction = {number(0, 1)}, days = {number(1, 90)}, "
                    f"steps = {g.randint(1, 5)} }}"]
        out += [""]
        if g.random() < 0.75:
            rma_after = g.randint(1, 4)
            out += ["[unit_types.burn_in]", f"attempt_days = {dist()}",
                    f"fail_first = {number(0, 0.8)}", f"fail_retry = {number(0, 0.8)}",
                    f"fix_days = {dist()}", f"rma_after_failures = {rma_after}",
                    f"rma_days = {dist()}", ""]
    n_existing, n_incoming = g.randint(1, 6), g.randint(1, 8)
    rows: list[tuple[str, str, int]] = []          # (row, hall, positions)
    halls = [f"H{k}" for k in range(g.randint(1, 2))]
    for h, hall in enumerate(halls):
        hall_rows = [(f"R{h}{k}", g.choice(["air", "air", "liquid"]), g.randint(0, 4))
                     for k in range(g.randint(1, 4))]
        if h == len(halls) - 1:                     # room for every new unit, once empty
            hall_rows.append((f"R{h}x", g.choice(["air", "liquid"]), n_incoming))
        rows += [(r, hall, p) for r, _, p in hall_rows]
        cap = number(100, 3000) if g.random() < 0.5 else 100000
        energized = f"energized = {date()}" if g.random() < 0.4 else ""
        out += ["[[halls]]", f'id = "{hall}"', f"power_cap_kw = {cap}", energized, "rows = ["]
        out += [f'  {{ id = "{r}", cooling = "{c}", positions = {p} }},' for r, c, p in hall_rows]
        out += ["]", ""]
    out += ["[retrofit]", f"crews = {g.randint(1, 3)}", f"days = {dist()}", ""]
    row_of_existing = {f"E{k}": g.choice(rows)[0] for k in range(n_existing)}
    for unit, row in row_of_existing.items():
        out += ["[[existing]]", f'units = "{unit}"', f'type = "{g.choice(old_types)}"',
                f'rows = "{row}"', ""]
    incoming = [f"N{k}" for k in range(n_incoming)]
    for unit in incoming:
        out += ["[[incoming]]", f'units = "{unit}"', f'type = "{g.choice(new_types)}"', ""]
    n_shipments = g.randint(1, min(3, n_incoming))
    cuts = sorted(g.sample(range(1, n_incoming), n_shipments - 1))
    shipments = {f"S{k}": incoming[a:b] for k, (a, b) in
                 enumerate(zip([0] + cuts, cuts + [n_incoming]))}
    for ship, units in shipments.items():
        out += ["[[shipments]]", f'id = "{ship}"', f"units = {ids(units)}",
                f"arrival = {date()}", ""]
    occupied = set(row_of_existing.values())
    for s in range(g.randint(1, 4)):
        free = {r: p for r, _, p in rows}
        placement = []
        for unit in incoming:
            row = g.choice([r for r, p in free.items() if p > 0])
            free[row] -= 1
            placement.append((unit, row))
        safe = [u for u, r in placement if r not in occupied]
        out += ["[[strategies]]", f'name = "strategy-{s}"', "place = ["]
        out += [f'  {{ units = "{u}", row = "{r}" }},' for u, r in placement]
        out += ["]", "drain = ["]
        for unit in row_of_existing:
            trigger = []
            if g.random() < 0.5 or not safe:
                trigger.append(f"day = {number(0, 150)}")
            if g.random() < 0.4:
                trigger.append(f"on_arrival = {ids(g.sample(list(shipments), 1))}")
            if safe and (g.random() < 0.5 or not trigger):
                trigger.append(f"on_accepted = {ids(g.sample(safe, g.randint(1, len(safe))))}")
            if g.random() < 0.3:
                trigger.append(f"lag_days = {number(0, 10)}")
            out += [f'  {{ units = "{unit}", {", ".join(trigger)} }},']
        out += ["]", ""]
    targets = (["retrofit", "install", "removal", "burn_in", "arrival"]
               + [f"{kind}:{ident}" for kind, idents in (
                   ("retrofit", [r for r, _, _ in rows]), ("install", incoming),
                   ("burn_in", incoming), ("removal", list(row_of_existing)),
                   ("arrival", list(shipments)), ("energized", halls), ("fabric", islands))
                  for ident in idents])
    for k in range(g.randint(0, 3)):
        out += ["[[risks]]", f'id = "risk-{k}"', f"probability = {g.choice([1, number(0, 1)])}",
                f"impact = {dist(inner=True)}",
                f"applies_to = {ids(g.sample(targets, g.randint(1, 3)))}",
                f"enabled = {g.choice(['true', 'true', 'false'])}", ""]
    return "\n".join(out) + "\n"
