"""Backends: the simulation of chunks of scenarios behind one small interface, chosen once by
name, and the loop that runs a backend over a run's chunks, here or on Dask.

    numpy        the reference, vectorized over scenarios: the readable specification
    numba        the same stages as compiled loops over lane groups, parallel on the CPU
    cuda         the CUDA sources (kernels/) on an NVIDIA GPU through CuPy
    cuda_host    the same CUDA sources compiled for the host with a C++ compiler, one
                 thread: for parity checks without a GPU (backend name `cuda-host`)
    cuda_bands   the capacity bands' and hall peaks' reductions (results.band_chunks) in
                 CUDA: on the GPU where a chunk was simulated, and on the host build
    cuda_milestones  the milestones' reductions in CUDA (kernels/milestones.cu): their
                 parameter lists, shared by cuda (CuPy) and cuda_host (the host build)
    contingency  after every backend's chunk, each world's contingent strategies take
                 their branches (checked non-anticipative)
    jit_events   Numba compiling, as something a run can say (the one long wait)
    chunks       the chunked driver: a backend over scenario indices, chunk by chunk, with
                 the hooks that reduce each chunk as it comes
    kept         where a run keeps every scenario's results: memory, or past 1 GB a
                 nameless file mapped into memory
    buffers      the arrays a chunk loop hands its backend chunk after chunk
    dask         the same chunks as tasks on Dask workers

`cpu` and `gpu`, the names of earlier versions, are accepted as aliases of numba and cuda.
Every backend module exposes `simulate_chunk(plan, seed, first, count, keep_nodes=False)`
returning (metrics[count, strategy, metric], world[count, quantity], node_times or None) for
scenario indices first .. first + count - 1, and may expose `prepare(plan)`, which gets its
kernel ready for the plan before a run starts (Numba compiles it or loads it from its cache:
the one long wait of a first run, which jit_events lets a caller announce; where the compiled
code is kept: mcrisk.core.jit). Only `auto`
chooses (cuda when usable, else numba); it says what it chose.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..core.errors import BackendUnavailable
from .contingency import take_branches

BACKENDS = ("numpy", "numba", "cuda", "cuda-host")
ALIASES = {"cpu": "numba", "gpu": "cuda"}          # names of earlier versions
BACKEND_NAMES = ("auto", *BACKENDS, *ALIASES)        # what --backend accepts
MODULES = {"numpy": ".numpy", "numba": ".numba", "cuda": ".cuda", "cuda-host": ".cuda_host"}


@dataclass(frozen=True)
class Backend:
    name: str            # one of BACKENDS
    module: ModuleType
    reason: str          # why it was chosen (for `auto`) or "requested"

    def simulate_chunk(self, plan, seed, first, count, keep_nodes=False, buffers=None):
        """The module's chunk; with contingent strategies, each world's contingent rows
        replaced by the branch it takes (mcrisk/backends/contingency.py), which needs the
        node times whether or not the caller keeps them. `buffers` (a chunk loop's
        mcrisk.backends.buffers.ChunkBuffers): the arrays returned may be its, valid until
        the loop's next chunk (the Numba backend's; the others ignore them)."""
        extra = {"buffers": buffers} if buffers is not None and self.name == "numba" else {}
        if not plan.contingencies:
            metrics, world, nodes = self.module.simulate_chunk(plan, seed, first, count,
                                                               keep_nodes, **extra)
            chunk = getattr(nodes, "device_chunk", None)
            if self.name == "cuda" and chunk is not None:     # the bands reduced there too
                from .cuda_bands import DeviceBands           # (it builds on .cuda)
                chunk.bands = DeviceBands(plan)
            return metrics, world, nodes
        metrics, world, nodes = self.module.simulate_chunk(plan, seed, first, count, True,
                                                           **extra)
        take_branches(plan, first, metrics, nodes)
        return metrics, world, nodes if keep_nodes else None

    def prepare(self, plan) -> None:
        """The kernel ready for `plan` (compiled or loaded); nothing for a backend with
        nothing to prepare."""
        prepare = getattr(self.module, "prepare", None)
        if prepare is not None:
            prepare(plan)


CUDA_FIX = ("install the GPU extra (pip install '.[gpu]', a CuPy wheel matching your CUDA 12 "
            "or 13 driver) on a machine with an NVIDIA GPU, or use --backend numba")
CUDA_HOST_FIX = "set $CXX or install g++, or use --backend numba"


def gpu_unavailable_reason() -> str | None:
    """None when CuPy and a CUDA device are usable, else the cause in a few words."""
    try:
        import cupy  # noqa: F401
    except ImportError:
        return "CuPy is not installed"
    try:
        count = cupy.cuda.runtime.getDeviceCount()
    except Exception as exc:  # CuPy raises CUDARuntimeError without a driver
        return f"CuPy cannot reach a CUDA device ({exc})"
    if count < 1:
        return "no CUDA device is visible"
    return None


def select_backend(name: str) -> Backend:
    """The backend called `name` (or an alias of it); `auto` picks cuda when usable, else
    numba. Raises BackendUnavailable, naming the cause and the fix, when it cannot run here."""
    if name not in BACKEND_NAMES:
        raise BackendUnavailable(f"unknown backend {name!r}: choose one of "
                                 f"{', '.join(BACKEND_NAMES)}")
    if name == "auto":
        reason = gpu_unavailable_reason()
        if reason is None:
            return _backend("cuda", "auto: CUDA device found")
        return _backend("numba", f"auto: no GPU, {reason}")
    canonical = ALIASES.get(name, name)
    requested = "requested" if canonical == name else f"requested as {name}, now named {canonical}"
    if canonical == "cuda":
        reason = gpu_unavailable_reason()
        if reason is not None:
            raise BackendUnavailable(f"--backend {name} cannot run here: {reason}; {CUDA_FIX}")
    if canonical == "cuda-host":
        reason = _host_build_failure()
        if reason is not None:
            raise BackendUnavailable(f"--backend {name} cannot run here: it compiles the CUDA "
                                     f"sources for this machine with a C++ compiler, and "
                                     f"{reason}; {CUDA_HOST_FIX}")
    return _backend(canonical, requested)


def _host_build_failure() -> str | None:
    """None once the host build of the CUDA sources is ready (built on first use), else why
    it cannot be: no compiler, or the compiler's first error lines."""
    from .cuda_host import HostBuildError, default_library, host_compiler
    if host_compiler() is None:
        return "none was found"
    try:
        default_library()
    except HostBuildError as exc:
        return "the build failed: " + " ".join(str(exc).split())[:300]
    return None


def _backend(name: str, reason: str) -> Backend:
    return Backend(name, importlib.import_module(MODULES[name], __name__), reason)
