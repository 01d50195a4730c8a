"""The capacity bands' and hall peaks' reductions in CUDA: kernels/bands.cuh on the GPU, where
the scenarios were simulated, and compiled for the host, where CI proves it (issue 27).

mcrisk/results/band_chunks.py (Numba) defines three reductions of a chunk's node times,
node_times[c, s, v], held to results.bands' NumPy specification by tests/results/test_bands.py:
capacity_blocks (histogram blocks of the capacity pieces), peak_draws (each hall's highest
draw) and capacity_day_keys (each day's capacity as a key of the sparse histogram).
kernels/bands.cuh has the same per-scenario functions, `__host__ __device__`, a kernel per
reduction with one thread per scenario, and a host loop per reduction. Two objects here have
band_chunks' three functions with its very signatures (outputs filled or added to in place):

    DeviceBands(plan)     the kernels on the GPU through CuPy (cuda.module_for(plan): the same
                          module as the simulation's), node_times a CuPy array (a NumPy one is
                          uploaded); outputs CuPy (written on the device) or NumPy (copied back)
    HostBands(library)    the host build (cuda_host.HostLibrary) on NumPy arrays: how
                          tests/backends/test_cuda_bands.py proves the CUDA text bit-identical
                          to Numba without a GPU

A reduction's integers are exact, so the GPU's atomics in any order give Numba's counts; the
peaks and the keys are written at [i, h] and [i * n_days + d], Numba's order. DeviceBands also
counts a chunk's keys on the device (sorted_counts: band_chunks.count_runs of the sorted keys),
so that a day histogram need not copy c x n_days keys back.
"""
from __future__ import annotations

import abc

import numpy as np

from ..plan.record import CompiledScenario
from . import cuda

# Each reduction's parameters in the order of its kernel (<name>_kernel) and its host entry
# point (host_<name>), kernels/bands.cuh: "T*" an array of T, "T" a scalar (cuda.PLAN_PARAMETERS'
# kinds). tests/backends/test_cuda_bands.py holds the C text to this table.
_CHUNK = (("node_times", "float64*"), ("count", "int64"), ("n_strategies", "int32"),
          ("n_nodes", "int32"), ("s", "int32"), ("event_node", "int32*"), ("n_events", "int32"))
_CAPACITY = (("delta", "int64*"), ("event_island", "int32*"), ("cap0", "int64*"),
             ("n_islands", "int32"), ("n_days", "int32"))
BAND_PARAMETERS = {
    "capacity_blocks": _CHUNK + _CAPACITY + (
        ("total_lo", "int64"), ("total_step", "int64"), ("total_bins", "int64"),
        ("total_block", "int32*"), ("largest_lo", "int64"), ("largest_step", "int64"),
        ("largest_bins", "int64"), ("largest_block", "int32*")),
    "peak_draws": _CHUNK + (
        ("event_hall", "int32*"), ("event_delta", "float64*"), ("draw0", "float64*"),
        ("n_halls", "int32"), ("peak", "float64*")),
    "capacity_day_keys": _CHUNK + _CAPACITY + (
        ("total_lo", "int64"), ("total_step", "int64"), ("total_bins", "int64"),
        ("largest_lo", "int64"), ("largest_step", "int64"), ("largest_bins", "int64"),
        ("total_keys", "int64*"), ("largest_keys", "int64*")),
}
# What the reductions write: blocks are added to (difference-form counts), the rest written.
ADDED = ("total_block", "largest_block")
WRITTEN = ("peak", "total_keys", "largest_keys")


def _check(name: str, values: dict) -> None:
    """The shapes the C loops trust (they index by hand, with no bounds check): ValueError
    naming the array, never a write past its end."""
    c, n_strategies, n_nodes = values["node_times"].shape
    k = values["n_events"]
    expected = {"event_node": (k,)}
    if name == "peak_draws":
        expected.update(event_hall=(k,), event_delta=(k,), peak=(c, values["n_halls"]))
    else:
        days = values["n_days"]
        expected.update(delta=(k,), event_island=(k,))
        if name == "capacity_blocks":
            expected.update(total_block=(days + 1, values["total_bins"]),
                            largest_block=(days + 1, values["largest_bins"]))
        else:
            expected.update(total_keys=(c * days,), largest_keys=(c * days,))
    wrong = [f"{key} has shape {tuple(values[key].shape)}, not {shape}"
             for key, shape in expected.items() if tuple(values[key].shape) != shape]
    if not 0 <= values["s"] < n_strategies:
        wrong.append(f"strategy {values['s']} is not one of the {n_strategies} in node_times")
    if not _within(values["event_node"], n_nodes):
        wrong.append(f"event_node holds a node outside 0 .. {n_nodes - 1}")
    if name != "peak_draws" and not _within(values["event_island"], values["n_islands"]):
        wrong.append(f"event_island holds an island outside 0 .. {values['n_islands'] - 1}")
    if wrong:
        raise ValueError(f"{name}: " + "; ".join(wrong))


def _within(indices, n: int) -> bool:
    """Whether every index (NumPy or CuPy) is in 0 .. n - 1."""
    return indices.size == 0 or (0 <= int(indices.min()) and int(indices.max()) < n)


def _chunk(node_times, s: int, event_node) -> dict:
    """The parameters every reduction starts with (BAND_PARAMETERS' _CHUNK)."""
    count, n_strategies, n_nodes = node_times.shape
    return {"node_times": node_times, "count": count, "n_strategies": n_strategies,
            "n_nodes": n_nodes, "s": s, "event_node": event_node, "n_events": len(event_node)}


def _capacity(delta, event_island, cap0, n_days: int) -> dict:
    """The capacity reductions' next parameters (_CAPACITY)."""
    return {"delta": delta, "event_island": event_island, "cap0": cap0,
            "n_islands": len(cap0), "n_days": n_days}


class _Reductions(abc.ABC):
    """band_chunks' three functions, each gathering its arguments into BAND_PARAMETERS'
    order for self._run(name, values)."""

    def capacity_blocks(self, node_times, s, event_node, delta, event_island, cap0, n_days,
                        total_lo, total_step, total_block, largest_lo, largest_step,
                        largest_block) -> None:
        """Add strategy s's capacity pieces of every scenario to total_block and largest_block
        (int32[n_days + 1, bins]), as band_chunks.capacity_blocks."""
        self._run("capacity_blocks", {
            **_chunk(node_times, s, event_node), **_capacity(delta, event_island, cap0, n_days),
            "total_lo": total_lo, "total_step": total_step, "total_bins": total_block.shape[1],
            "total_block": total_block, "largest_lo": largest_lo, "largest_step": largest_step,
            "largest_bins": largest_block.shape[1], "largest_block": largest_block})

    def peak_draws(self, node_times, s, event_node, event_hall, event_delta, draw0,
                   peak) -> None:
        """peak[i, h] (float64[c, halls]): hall h's highest draw, as band_chunks.peak_draws."""
        self._run("peak_draws", {
            **_chunk(node_times, s, event_node), "event_hall": event_hall,
            "event_delta": event_delta, "draw0": draw0, "n_halls": len(draw0), "peak": peak})

    def capacity_day_keys(self, node_times, s, event_node, delta, event_island, cap0, n_days,
                          total_lo, total_step, total_bins, largest_lo, largest_step,
                          largest_bins, total_keys, largest_keys) -> None:
        """total_keys and largest_keys (int64[c * n_days]), as band_chunks.capacity_day_keys."""
        self._run("capacity_day_keys", {
            **_chunk(node_times, s, event_node), **_capacity(delta, event_island, cap0, n_days),
            "total_lo": total_lo, "total_step": total_step, "total_bins": total_bins,
            "largest_lo": largest_lo, "largest_step": largest_step, "largest_bins": largest_bins,
            "total_keys": total_keys, "largest_keys": largest_keys})

    @abc.abstractmethod
    def _run(self, name: str, values: dict) -> None:
        """The reduction `name` on its arguments by parameter name (BAND_PARAMETERS[name])."""


class HostBands(_Reductions):
    """The reductions of kernels/bands.cuh compiled for the host (one thread), on NumPy
    arrays; outputs must be C-ordered arrays of the table's dtype (they are written in
    place, as Numba writes them)."""

    def __init__(self, library):
        self.library = library
        self.functions = {name: library.entry_point(f"host_{name}", parameters)
                          for name, parameters in BAND_PARAMETERS.items()}

    def _run(self, name: str, values: dict) -> None:
        parameters = BAND_PARAMETERS[name]
        for key, kind in parameters:
            if kind.endswith("*") and key not in ADDED + WRITTEN:
                values[key] = np.ascontiguousarray(values[key], dtype=kind.rstrip("*"))
        _check(name, values)
        arguments = cuda.typed_arguments(parameters, [values[key] for key, _ in parameters])
        if self.library.call(self.functions[name], arguments) != 0:
            raise RuntimeError(f"host_{name} refused its arguments")


class DeviceBands(_Reductions):
    """The reductions of kernels/bands.cuh on the GPU, one thread per scenario, in the module
    cuda.module_for(plan) compiles for the plan's shape (its MAX_EVENTS and MAX_ISLANDS size
    each thread's scratch)."""

    def __init__(self, plan: CompiledScenario):
        self.plan = plan
        self.limits = cuda.plan_limits(plan)

    def _run(self, name: str, values: dict) -> None:
        cupy = cuda._cupy()
        parameters = BAND_PARAMETERS[name]
        _check(name, values)
        too_big = [f"{key} {values[key]} > {limit} {self.limits[limit]}"
                   for key, limit in (("n_events", "MAX_EVENTS"), ("n_islands", "MAX_ISLANDS"))
                   if key in values and values[key] > self.limits[limit]]
        if too_big:
            raise ValueError(f"{name}: larger than the plan's module: {', '.join(too_big)}")
        copies = {}
        for key, kind in parameters:
            dtype = np.dtype(kind.rstrip("*"))
            if not kind.endswith("*"):
                continue
            if key in ADDED + WRITTEN:
                if isinstance(values[key], np.ndarray) and not hasattr(values[key], "get"):
                    copies[key] = values[key]                   # NumPy: computed on the device
                    values[key] = cupy.zeros(values[key].shape, dtype)
            else:
                values[key] = cupy.ascontiguousarray(cupy.asarray(values[key], dtype=dtype))
        if values["count"] > 0:                                 # a launch needs a block
            kernel = cuda.module_for(self.plan).get_function(f"{name}_kernel")
            grid = ((values["count"] + cuda.BLOCK_SIZE - 1) // cuda.BLOCK_SIZE,)
            kernel(grid, (cuda.BLOCK_SIZE,),
                   tuple(cuda.typed_arguments(parameters, [values[key] for key, _ in parameters])))
        for key, out in copies.items():
            if key in ADDED:
                out += cupy.asnumpy(values[key])
            else:
                out[...] = cupy.asnumpy(values[key])

    def sorted_counts(self, keys) -> tuple[np.ndarray, np.ndarray]:
        """(distinct keys ascending, their counts), int64 NumPy arrays, of a chunk's keys (CuPy
        or NumPy, any order): band_chunks.count_runs of the sorted keys, sorted and counted on
        the device (DayHistogram.add_keys' work)."""
        cupy = cuda._cupy()
        keys = cupy.sort(cupy.asarray(keys, dtype=np.int64).ravel())
        if keys.size == 0:
            return np.empty(0, np.int64), np.empty(0, np.int64)
        first = cupy.concatenate([cupy.ones(1, dtype=bool), keys[1:] != keys[:-1]])
        starts = cupy.flatnonzero(first)
        counts = cupy.diff(cupy.concatenate([starts, cupy.asarray([keys.size])]))
        return (cupy.asnumpy(keys[starts]).astype(np.int64),
                cupy.asnumpy(counts).astype(np.int64))
