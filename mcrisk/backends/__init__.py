"""Backends behind one small interface, chosen once by name.

Every backend module exposes `simulate_chunk(plan, seed, first, count, keep_nodes=False)`
returning (metrics[count, strategy, metric], world[count, quantity], node_times or None) for
scenario indices first .. first + count - 1. Only `auto` chooses; it says what it chose.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType

from ..errors import BackendUnavailable

BACKEND_NAMES = ("auto", "numpy", "cpu", "gpu")


@dataclass(frozen=True)
class Backend:
    name: str            # "numpy" | "cpu" | "gpu"
    module: ModuleType
    reason: str          # why it was chosen (for `auto`) or "requested"

    def simulate_chunk(self, plan, seed, first, count, keep_nodes=False):
        return self.module.simulate_chunk(plan, seed, first, count, keep_nodes)


GPU_FIX = ("install the GPU extra (pip install '.[gpu]', a CuPy wheel matching your CUDA 12 "
           "or 13 driver) on a machine with an NVIDIA GPU, or use --backend cpu")


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
    """The backend called `name`; `auto` picks the GPU when usable, else Numba."""
    if name not in BACKEND_NAMES:
        raise BackendUnavailable(f"unknown backend {name!r}: choose one of {', '.join(BACKEND_NAMES)}")
    if name == "auto":
        reason = gpu_unavailable_reason()
        if reason is None:
            return Backend("gpu", importlib.import_module(".gpu", __name__), "auto: CUDA device found")
        return Backend("cpu", importlib.import_module(".numba", __name__), f"auto: no GPU, {reason}")
    if name == "gpu":
        reason = gpu_unavailable_reason()
        if reason is not None:
            raise BackendUnavailable(f"--backend gpu cannot run here: {reason}; {GPU_FIX}")
        return Backend("gpu", importlib.import_module(".gpu", __name__), "requested")
    module = "numpy" if name == "numpy" else "numba"
    return Backend(name, importlib.import_module(f".{module}", __name__), "requested")
