"""The `cuda-host` backend: the CUDA sources compiled for the host, parity on every CI run.

All per-scenario logic of kernels/simulate.cu is `__host__ __device__` (kernels/*.cuh), and
kernels/compat.cuh turns the CUDA qualifiers into nothing outside nvcc. So g++ compiles the
very text that NVRTC compiles for the GPU (cuda.kernel_source(), includes inlined) as C++ into
a shared library, which ctypes loads. Its entry points run the same per-scenario function in a
plain loop, and expose the random stream and the normal quantile as probes.

It is single-threaded and exists so tests, and `--backend cuda-host`, can hold the CUDA code to
the Numba backend without a GPU; it needs a C++ compiler ($CXX, else g++). Build flags keep
the host arithmetic the CPU backends' (no FMA contraction, no fast-math), so the two agree bit
for bit on x86-64 with glibc.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np

from ..plan.record import CompiledScenario
from ..core.definitions import N_METRICS
from ..core.rng import SCENARIO_LIMIT, check_scenarios, split_seed
from . import cuda, cuda_milestones
from .cuda_milestones import ENTRY_PARAMETERS, HOST_NAMES, as_parameter

# Scratch sizes of the host build: generous, so one build serves every test plan (the GPU
# compiles one module per plan shape instead). Scratch lives on the heap (simulate.cu).
HOST_LIMITS = {"MAX_QUANTITIES": 4096, "MAX_NODES": 4096, "MAX_EVENTS": 4096,
               "MAX_ISLANDS": 256, "MAX_HALLS": 256, "MAX_CREWS": 256}
# -ffp-contract=off: no fused multiply-add (GCC contracts by default where the target has FMA,
# e.g. aarch64); Numba's LLVM does not contract either.
HOST_FLAGS = ("-x", "c++", "-std=c++17", "-O2", "-fPIC", "-shared", "-ffp-contract=off",
              "-Wall", "-Wextra")

_CTYPES = {"int32": ctypes.c_int32, "uint32": ctypes.c_uint32, "int64": ctypes.c_int64,
           "uint64": ctypes.c_uint64, "float64": ctypes.c_double}


class HostBuildError(RuntimeError):
    """The host compiler is missing or rejected kernels/simulate.cu."""


def host_compiler() -> str | None:
    """Path of the C++ compiler ($CXX, else g++), or None when there is none."""
    return shutil.which(os.environ.get("CXX", "g++"))


def build_host_library(build_dir: str | Path, name: str = "simulate.cu") -> tuple[Path, str]:
    """Compile kernels/<name> (simulate.cu, or milestones.cu) for the host into build_dir;
    (library path, compiler log).

    The library's name carries a hash of the source text and flags, so a build is reused
    until a kernel file changes.
    """
    compiler = host_compiler()
    if compiler is None:
        raise HostBuildError("no C++ compiler found (set $CXX or install g++)")
    source = cuda.kernel_source(name)
    defines = tuple(f"-D{k}={v}" for k, v in HOST_LIMITS.items())
    key = hashlib.sha256("\0".join((source, compiler) + HOST_FLAGS + defines).encode())
    build_dir = Path(build_dir)
    build_dir.mkdir(parents=True, exist_ok=True)
    library = build_dir / f"libmcrisk_host_{key.hexdigest()[:16]}.so"
    log_file = library.with_suffix(".log")
    if library.exists():
        return library, log_file.read_text() if log_file.exists() else ""
    source_file = build_dir / f"{Path(name).stem}_host_{key.hexdigest()[:16]}.cu"
    source_file.write_text(source)
    partial = library.with_suffix(f".{os.getpid()}.tmp")
    done = subprocess.run([compiler, *HOST_FLAGS, *defines, str(source_file), "-o", str(partial)],
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise HostBuildError(f"{compiler} could not compile kernels/{name} for the host:\n"
                             f"{done.stderr}")
    log_file.write_text(done.stderr)
    os.replace(partial, library)   # atomic: a concurrent build never loads half a file
    return library, done.stderr


def _pointer(array: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(array.ctypes.data)


class HostLibrary:
    """kernels/simulate.cu built for the host, loaded with ctypes."""

    def __init__(self, path: str | Path, build_log: str = ""):
        self.path = Path(path)
        self.build_log = build_log
        lib = ctypes.CDLL(str(self.path))
        lib.host_simulate_chunk.argtypes = [
            ctypes.c_void_p if kind.endswith("*") else _CTYPES[kind]
            for _, kind in cuda.PLAN_PARAMETERS + cuda.CHUNK_PARAMETERS]
        lib.host_simulate_chunk.restype = ctypes.c_int
        lib.host_limits.argtypes = [ctypes.c_void_p]
        lib.host_philox.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_longlong]
        lib.host_uniforms.argtypes = ([ctypes.c_uint32, ctypes.c_uint32] + [ctypes.c_void_p] * 4
                                      + [ctypes.c_longlong])
        lib.host_ndtri.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
        self._lib = lib
        limits = np.zeros(len(cuda.LIMIT_NAMES), dtype=np.int32)
        lib.host_limits(_pointer(limits))
        self.limits = dict(zip(cuda.LIMIT_NAMES, (int(n) for n in limits)))

    def simulate_chunk(self, plan: CompiledScenario, seed: int, first: int, count: int,
                       keep_nodes: bool = False):
        """Same contract as every backend's simulate_chunk (count = 0: no scenario, no call)."""
        check_scenarios(first, count)
        needs = cuda.plan_limits(plan)
        too_big = [f"{k} {needs[k]} > {self.limits[k]}" for k in needs if needs[k] > self.limits[k]]
        if too_big:
            raise ValueError(f"plan too large for the host build: {', '.join(too_big)}")
        metrics = np.zeros((count, plan.n_strategies, N_METRICS + plan.n_costs + plan.n_job_cols))
        world = np.zeros((count, plan.n_quantities))
        node_times = np.zeros((count if keep_nodes else 1, plan.n_strategies, plan.n_nodes))
        status = np.zeros(count, dtype=np.int8)
        if count == 0:
            return metrics, world, (node_times if keep_nodes else None)
        if self.launch(cuda.plan_arguments(plan) + cuda.chunk_arguments(
                seed, first, count, metrics, world, node_times, keep_nodes, status)) != 0:
            raise RuntimeError("host_simulate_chunk refused the plan (MAX_* sizes)")
        if status.any():
            raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
        return metrics, world, (node_times if keep_nodes else None)

    def launch(self, arguments: list) -> int:
        """host_simulate_chunk on the kernel's typed argument list (cuda.plan_arguments +
        cuda.chunk_arguments, NumPy arrays); returns its code (0, or -1: too large)."""
        return self._lib.host_simulate_chunk(
            *(_pointer(a) if isinstance(a, np.ndarray) else a.item() for a in arguments))

    def philox4x32_10(self, counters: np.ndarray, keys: np.ndarray) -> np.ndarray:
        """words[n, 4] of Philox4x32-10 at counters[n, 4] under keys[n, 2] (uint32)."""
        counters = np.ascontiguousarray(counters, dtype=np.uint32).reshape(-1, 4)
        keys = np.ascontiguousarray(keys, dtype=np.uint32).reshape(-1, 2)
        words = np.zeros_like(counters)
        self._lib.host_philox(_pointer(counters), _pointer(keys), _pointer(words),
                              counters.shape[0])
        return words

    def uniforms(self, seed: int, scenario, address, draw_index) -> np.ndarray:
        """u[n, 2]: the two uniforms of each draw address (arrays of equal length; scenario
        indices below 2**32, 64-bit addresses)."""
        seed_lo, seed_hi = split_seed(seed)
        scenario = np.asarray(scenario, dtype=np.uint64)
        if scenario.size and scenario.max() >= SCENARIO_LIMIT:
            raise ValueError(f"scenario indices must be below 2**32, got {int(scenario.max())}")
        scenario = np.ascontiguousarray(scenario, dtype=np.uint32)
        address = np.ascontiguousarray(address, dtype=np.uint64)
        draw_index = np.ascontiguousarray(draw_index, dtype=np.uint32)
        out = np.zeros((scenario.shape[0], 2))
        self._lib.host_uniforms(seed_lo, seed_hi, _pointer(scenario), _pointer(address),
                                _pointer(draw_index), _pointer(out), scenario.shape[0])
        return out

    def ndtri(self, p) -> np.ndarray:
        """The kernel's normal quantile (Acklam + one Halley step) at each p."""
        p = np.ascontiguousarray(p, dtype=np.float64)
        out = np.zeros_like(p)
        self._lib.host_ndtri(_pointer(p), _pointer(out), p.size)
        return out

    def entry_point(self, name: str, parameters: tuple):
        """The build's extern "C" int function `name`, typed from its table of (name, kind)
        parameters (cuda.PLAN_PARAMETERS' kinds), called with NumPy arrays and scalars by
        call(); the band reductions' entry points (cuda_bands.HostBands)."""
        function = getattr(self._lib, name)
        function.argtypes = [ctypes.c_void_p if kind.endswith("*") else _CTYPES[kind]
                             for _, kind in parameters]
        function.restype = ctypes.c_int
        return function

    @staticmethod
    def call(function, arguments: list) -> int:
        """function (an entry_point) on typed arguments (cuda.typed_arguments)."""
        return function(*(_pointer(a) if isinstance(a, np.ndarray) else a.item()
                          for a in arguments))


_default: HostLibrary | None = None


def default_library() -> HostLibrary:
    """The host build in $MCRISK_CACHE_DIR (default ~/.cache/mcrisk), built on first use."""
    global _default
    if _default is None:
        cache = Path(os.environ.get("MCRISK_CACHE_DIR", Path.home() / ".cache" / "mcrisk"))
        _default = HostLibrary(*build_host_library(cache))
    return _default


def host_simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                        keep_nodes: bool = False, library: HostLibrary | None = None):
    """The CUDA kernel's code run on the host: (metrics, world, node_times or None), the same
    contract as every backend's simulate_chunk."""
    return (library or default_library()).simulate_chunk(plan, seed, first, count, keep_nodes)


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False):
    """The backend interface (mcrisk.backends): host_simulate_chunk with the default build.
    As on the GPU, the node times carry their chunk (`device_chunk`: a HostChunk here), so
    a run's milestones go through the CUDA reductions too; not with contingent strategies,
    whose rows the caller replaces afterwards (cuda.simulate_chunk)."""
    metrics, world, nodes = host_simulate_chunk(plan, seed, first, count, keep_nodes)
    if nodes is not None and not plan.contingencies:
        nodes = cuda.with_device_chunk(nodes, HostChunk(nodes, world))
    return metrics, world, nodes


class MilestoneHostLibrary:
    """kernels/milestones.cu built for the host, loaded with ctypes: the milestones' reductions
    of mcrisk.results.milestone_chunks (chunk_milestones, add_to_bins) by the CUDA code, with
    the same arguments and results (mcrisk.backends.cuda_milestones)."""

    def __init__(self, path: str | Path, build_log: str = ""):
        self.path = Path(path)
        self.build_log = build_log
        self._lib = ctypes.CDLL(str(self.path))
        for name, parameters in ENTRY_PARAMETERS.items():
            function = getattr(self._lib, HOST_NAMES[name])
            function.argtypes = [ctypes.c_void_p if kind.endswith("*") else _CTYPES[kind]
                                 for _, kind in parameters]
            function.restype = None

    def _call(self, name: str, values: list) -> None:
        """The host entry of kernel `name` on its parameters' values, typed by the table (an
        input array converted where it must be; the outputs are checked by the callers, since
        a converted copy would not be written back)."""
        typed = [as_parameter(value, kind) for (_, kind), value
                 in zip(ENTRY_PARAMETERS[name], values, strict=True)]
        getattr(self._lib, HOST_NAMES[name])(
            *(_pointer(a) if isinstance(a, np.ndarray) else a.item() for a in typed))

    def chunk_milestones(self, node_times, world, s, member_ptr, members, first, is_ancestor,
                         dep_ptr, dep_idx, is_crew, crew_rows, base_const, base_q, add_const,
                         add_q, completion, tolerance, times_out, critical_out) -> None:
        """milestone_chunks.chunk_milestones: times_out[k, i] = milestone k's time in
        scenario i, critical_out[k] += the scenarios with a member of k on the critical path."""
        values = cuda_milestones.path_values(
            node_times, world, s, member_ptr, members, first, is_ancestor, dep_ptr, dep_idx,
            is_crew, crew_rows, base_const, base_q, add_const, add_q, completion, tolerance)
        _outputs((times_out, np.float64), (critical_out, np.int64))
        count = node_times.shape[0]
        if count == 0:
            return
        mark = np.full(node_times.shape[2], -1, np.int64)
        self._call("chunk_milestones_kernel",
                   values + [0, count, mark, times_out, critical_out.view(np.uint64)])

    def add_to_bins(self, rows, base_days, exponent, origin, counts, low, high, non_finite):
        """milestone_chunks.add_to_bins: rows[m, c] into the windows (counts, low, high,
        non_finite updated); returns the finite times outside them, (items, times) in row order.
        Bins left empty have low +inf and high -inf (Numba leaves them as they were)."""
        _outputs((counts, np.int64), (low, np.float64), (high, np.float64),
                 (non_finite, np.int64))
        m, n = rows.shape
        n_bins = counts.shape[1]
        window = [rows, m, n, base_days, exponent, origin, n_bins]
        self._call("add_to_bins_clear", [counts.size, counts, low, high])
        outside = np.zeros(1, np.uint64)
        self._call("add_to_bins_count", window + [counts.view(np.uint64), low, high,
                                                  non_finite.view(np.uint64), outside])
        tail_at = np.empty(int(outside[0]), np.int64)
        tail_times = np.empty(int(outside[0]))
        if tail_at.size:
            self._call("add_to_bins_tails", window + [np.zeros(1, np.uint64), tail_at, tail_times])
        return cuda_milestones.tails_in_row_order(tail_at, tail_times, max(n, 1))


def _outputs(*arrays) -> None:
    """Each (array, dtype): the array is C-ordered of that dtype, as the kernel writes it."""
    for array, dtype in arrays:
        if array.dtype != dtype or not array.flags.c_contiguous:
            raise TypeError(f"an output is {array.dtype} (C order: {array.flags.c_contiguous}); "
                            f"the kernel writes C-ordered {np.dtype(dtype)}")


class HostChunk:
    """A chunk's node_times[c, s, v] and world[c, q] reduced by the host build of
    kernels/milestones.cu: what cuda.DeviceChunk is to a cuda run, for a cuda-host run and
    the tests."""

    def __init__(self, node_times, world, library: MilestoneHostLibrary | None = None):
        self.node_times, self.world, self.library = node_times, world, library

    def chunk_milestones(self, s, *arguments) -> None:
        """milestone_chunks.chunk_milestones(node_times, world, s, *arguments)."""
        library = self.library or default_milestone_library()
        library.chunk_milestones(self.node_times, self.world, s, *arguments)

    reduces_bands = True        # kernels/bands.cuh is in the default build

    def capacity_blocks(self, s, *arguments) -> None:
        """band_chunks.capacity_blocks(node_times, s, *arguments), by kernels/bands.cuh."""
        _host_bands().capacity_blocks(self.node_times, s, *arguments)

    def peak_draws(self, s, *arguments) -> None:
        """band_chunks.peak_draws(node_times, s, *arguments), by kernels/bands.cuh."""
        _host_bands().peak_draws(self.node_times, s, *arguments)

    def capacity_day_keys(self, s, *arguments) -> None:
        """band_chunks.capacity_day_keys(node_times, s, *arguments), by kernels/bands.cuh."""
        _host_bands().capacity_day_keys(self.node_times, s, *arguments)


_bands_default = None


def _host_bands():
    """cuda_bands.HostBands on the default build (its bands are in simulate.cu's library)."""
    global _bands_default
    if _bands_default is None:
        from .cuda_bands import HostBands            # cuda_bands builds on cuda
        _bands_default = HostBands(default_library())
    return _bands_default


_milestones_default: MilestoneHostLibrary | None = None


def default_milestone_library() -> MilestoneHostLibrary:
    """kernels/milestones.cu built for the host in $MCRISK_CACHE_DIR, on first use."""
    global _milestones_default
    if _milestones_default is None:
        cache = Path(os.environ.get("MCRISK_CACHE_DIR", Path.home() / ".cache" / "mcrisk"))
        _milestones_default = MilestoneHostLibrary(
            *build_host_library(cache, cuda_milestones.MILESTONE_SOURCE))
    return _milestones_default
