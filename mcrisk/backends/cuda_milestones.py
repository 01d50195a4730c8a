"""The milestones' reductions in CUDA (kernels/milestones.cu): their interface, without CuPy.

kernels/milestones.cuh computes what mcrisk.results.milestone_chunks computes with Numba, by the
same per-scenario and per-time code: chunk_milestones (every milestone's time in each scenario
of a chunk and the milestones on its critical path, one thread a scenario) and add_to_bins (a
chunk of milestone times into each milestone's window of bins and the times outside it, one
thread a time, counts and bounds by atomics). Two callers run the kernels and hand back what
the Numba functions hand back, from the same arguments:

* mcrisk.backends.cuda_host.MilestoneHostLibrary: the source compiled for the host, a plain
  loop; how the tests prove it bit-identical to Numba without a GPU;
* mcrisk.backends.cuda (DeviceChunk): CuPy on the chunk's node times where the kernel left
  them on the device, so they need not come to the host for the milestones.

What is here is what both share: the kernels' parameter lists (one table each, read against
kernels/milestones.cu by the tests), the path parameters' values from milestone_chunks'
arguments, and the tails put back in row order.
"""
from __future__ import annotations

import numpy as np

MILESTONE_SOURCE = "milestones.cu"

# The path parameters (kernels/milestones.cuh MCRISK_PATH_PARAMS): "T*" an array of T, "T" a
# scalar; bool arrays are NumPy's bool_ (one byte, C++'s bool).
PATH_PARAMETERS = (
    ("node_times", "float64*"), ("world", "float64*"), ("count", "int64"),
    ("n_strategies", "int32"), ("n_nodes", "int32"), ("n_quantities", "int32"), ("s", "int32"),
    ("member_ptr", "int64*"), ("members", "int64*"), ("n_items", "int32"), ("first", "bool*"),
    ("is_ancestor", "bool*"), ("dep_ptr", "int32*"), ("dep_idx", "int32*"),
    ("dep_width", "int32"), ("is_crew", "bool*"), ("crew_rows", "int64*"),
    ("n_crew_rows", "int32"), ("base_const", "float64*"), ("base_q", "int32*"),
    ("add_const", "float64*"), ("add_q", "int32*"), ("n_add", "int32"),
    ("completion", "int32*"), ("n_completion", "int32"), ("tolerance", "float64"),
)
# What follows them in chunk_milestones_kernel and host_chunk_milestones (counts as uint64:
# the int64 array of milestone_chunks, its counts never negative).
CHUNK_PARAMETERS = (("offset", "int64"), ("n", "int64"), ("mark", "int64*"),
                    ("times_out", "float64*"), ("critical_out", "uint64*"))
CLEAR_PARAMETERS = (("size", "int64"), ("counts", "int64*"), ("low", "float64*"),
                    ("high", "float64*"))
_WINDOW = (("rows", "float64*"), ("m", "int64"), ("n", "int64"), ("base_days", "float64"),
           ("exponent", "int64*"), ("origin", "int64*"), ("n_bins", "int64"))
COUNT_PARAMETERS = _WINDOW + (("counts", "uint64*"), ("low", "float64*"), ("high", "float64*"),
                              ("non_finite", "uint64*"), ("outside", "uint64*"))
TAIL_PARAMETERS = _WINDOW + (("taken", "uint64*"), ("tail_at", "int64*"),
                             ("tail_times", "float64*"))
# Each entry point's parameters, under its device name (the host build's: host_ + the name,
# host_chunk_milestones for the first).
ENTRY_PARAMETERS = {
    "chunk_milestones_kernel": PATH_PARAMETERS + CHUNK_PARAMETERS,
    "add_to_bins_clear": CLEAR_PARAMETERS,
    "add_to_bins_count": COUNT_PARAMETERS,
    "add_to_bins_tails": TAIL_PARAMETERS,
}
HOST_NAMES = {"chunk_milestones_kernel": "host_chunk_milestones",
              "add_to_bins_clear": "host_add_to_bins_clear",
              "add_to_bins_count": "host_add_to_bins_count",
              "add_to_bins_tails": "host_add_to_bins_tails"}

MARK_BYTES = 256_000_000     # the device's marks of a chunk at most (8 bytes a node and
                             # scenario): a larger chunk runs in batches of scenarios


def path_values(node_times, world, s, member_ptr, members, first, is_ancestor, dep_ptr,
                dep_idx, is_crew, crew_rows, base_const, base_q, add_const, add_q, completion,
                tolerance) -> list:
    """The path parameters' values (PATH_PARAMETERS order) from milestone_chunks.chunk_milestones'
    arguments (NumPy or, on the device, CuPy arrays): the arrays as given, their lengths read
    off them."""
    c, n_strategies, n_nodes = node_times.shape
    return [node_times, world, c, n_strategies, n_nodes, world.shape[1], s, member_ptr,
            members, member_ptr.shape[0] - 1, first, is_ancestor, dep_ptr, dep_idx,
            dep_idx.shape[1], is_crew, crew_rows, crew_rows.shape[0], base_const, base_q,
            add_const, add_q, add_q.shape[2], completion, completion.shape[0], tolerance]


def as_parameter(value, kind: str, xp=np):
    """value as the C type `kind` of a parameter table: an array C-ordered of the dtype (xp:
    numpy, or cupy for the device), a scalar as a NumPy scalar."""
    dtype = np.dtype(kind.rstrip("*"))
    if kind.endswith("*"):
        return xp.ascontiguousarray(xp.asarray(value, dtype=dtype))
    return dtype.type(value)


def batch_size(count: int, n_nodes: int) -> int:
    """Scenarios per launch of chunk_milestones_kernel: the chunk, or as many as MARK_BYTES of
    marks hold (a multiple of 128, at least 128)."""
    fits = max(128, MARK_BYTES // (8 * max(n_nodes, 1)) // 128 * 128)
    return max(1, min(count, fits))


def tails_in_row_order(tail_at, tail_times, n: int) -> tuple[np.ndarray, np.ndarray]:
    """(tail_items, tail_times) as milestone_chunks.add_to_bins returns them, in row order
    (milestone, then scenario), from tail_at[j] = k * n + i and the times in the order the
    slots were taken (NumPy arrays; tail_at holds each element once)."""
    order = np.argsort(tail_at, kind="stable")
    return (tail_at[order] // n).astype(np.int64), tail_times[order]
