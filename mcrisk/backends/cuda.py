"""The `cuda` backend: kernels/simulate.cu through CuPy, one thread per scenario.

The CUDA sources mirror the Numba backend line by line, one file per stage (kernels/<stage>.cuh
next to mcrisk/backends/numba/<stage>.py: the same names, loop structure and constants); one
thread samples its scenario's world once and then runs every strategy on it (common random
numbers). Only metrics[i, s, 6 + n_costs + n_job_cols] (the metrics, then the cost columns of a
scenario with [costs], then the job columns of one with a job mix) and world[i, q] leave the
kernel (and node_times[i, s, v] when asked for: copied to the host, they also keep the chunk
on the device, which the milestones reduce there with kernels/milestones.cu, DeviceChunk).
The same sources compile for the host with g++, which is how CI proves them equal to the Numba
backend without a GPU (cuda_host.py, the `cuda-host` backend; tests/backends/test_cuda_host.py).

Importing this module does not import CuPy: the kernel's interface (argument list, compile
options, source text) is plain NumPy, shared with the host build and testable anywhere. CuPy is
imported on first use.
"""
from __future__ import annotations

import importlib.resources
import re
import textwrap
from pathlib import Path

import numpy as np

from ..core import copula, definitions, distributions
from ..core.definitions import N_METRICS
from ..plan.record import AXES, KERNEL_FIELDS, PLAN_GROUPS, CompiledScenario
from ..core.rng import check_scenarios, split_seed
from . import cuda_milestones

# The kernel's plan parameters, derived from the plan interface (mcrisk/plan/record.py): the kernel
# fields in order, then the length of every axis the kernel indexes by hand. "T*" is an array
# of T, "T" a scalar. kernels/plan.cuh declares the same list (generated: plan_header()).
PLAN_PARAMETERS = (tuple((f.name, f.dtype + ("*" if f.axes else "")) for f in KERNEL_FIELDS)
                   + tuple((axis.parameter, "int32") for axis in AXES if axis.parameter))
N_KERNEL_ARGS = len(KERNEL_FIELDS)  # how many of PLAN_PARAMETERS come from kernel_args()
# The chunk parameters that follow them (simulate_chunk_kernel and host_simulate_chunk alike).
CHUNK_PARAMETERS = (
    ("seed_lo", "uint32"), ("seed_hi", "uint32"), ("first", "uint32"), ("count", "int64"),
    ("metrics", "float64*"), ("world", "float64*"), ("node_times", "float64*"),
    ("keep_nodes", "int32"), ("status", "int8*"),
)
LIMIT_NAMES = ("MAX_QUANTITIES", "MAX_NODES", "MAX_EVENTS", "MAX_ISLANDS", "MAX_HALLS",
               "MAX_CREWS")
# NVRTC options. --fmad=false: no multiply-add contraction, so the device rounds like the CPU
# backends (a parity choice; the kernel is bound by memory and branches, not by FP64 FMAs).
# --maxrregcount=104: ptxas allocates 108 registers unasked for sm_90 since the bounded
# lognormals (issue 28), with no spill; at 104 it still does not spill (5,088-byte stack frame,
# the full reference), at 96 it spills 16 bytes stored and loaded (as it did with the status
# conditioning alone, issue 25, which took 95 unasked). 104 keeps 4 blocks of BLOCK_SIZE per
# SM, as 108 would; 96 would give 5 with the spill: which runs faster is for a device to say.
# The ceiling keeps the count from growing unnoticed (tests/backends/test_kernel_costs.py).
NVRTC_OPTIONS = ("-std=c++17", "--fmad=false", "--maxrregcount=104")
BLOCK_SIZE = 128
KERNEL_NAME = "simulate_chunk_kernel"
PROBE_KERNELS = ("philox_kernel", "uniforms_kernel", "ndtri_kernel")

_INCLUDE = re.compile(r'^#include "([\w.]+)"\s*$', re.MULTILINE)


# ---- the kernel's interface, without CuPy ------------------------------------------------

def kernel_file(name: str) -> str:
    """Text of kernels/<name>, the package data of mcrisk.kernels (or the source checkout)."""
    try:
        return importlib.resources.files("mcrisk.kernels").joinpath(name).read_text()
    except (ModuleNotFoundError, FileNotFoundError):
        # Run from a source checkout without installing: kernels/ sits next to mcrisk/.
        return (Path(__file__).resolve().parents[2] / "kernels" / name).read_text()


def kernel_source(name: str = "simulate.cu") -> str:
    """kernels/<name> with its local #includes inlined, each header once.

    Inlined rather than passed as -I: CuPy's on-disk kernel cache is keyed by the code string
    and options, so a header edited later must change the code string to be recompiled.
    """
    seen: set[str] = set()

    def expand(text: str) -> str:
        def include(match: re.Match) -> str:
            header = match.group(1)
            if header in seen:
                return f"// {header}: already included"
            seen.add(header)
            return f"// ---- {header} ----\n" + expand(kernel_file(header))
        return _INCLUDE.sub(include, text)

    return expand(kernel_file(name))


# C types of the plan's dtypes (u64 is mcrisk's, compat.cuh: NVRTC has no <cstdint>).
C_TYPES = {"int32": "int", "float64": "double", "uint64": "u64"}
PLAN_HEADER = "plan.cuh"


def plan_header() -> str:
    """Text of kernels/plan.cuh, generated from the plan interface (mcrisk/plan/record.py): the Plan
    struct every stage reads and the two macros that declare the kernel's plan parameters
    and gather them into a Plan. tests/plan/test_record.py holds the file to this text."""
    struct = []
    for group in PLAN_GROUPS:
        struct += _comment(f"{group.name}: {group.doc}", "    ")
        for f in group.fields:
            if f.kernel:
                declaration = f"    {_c_type(f.dtype, bool(f.axes))} {f.name}; "
                struct += _comment(f"{f.type_text}: {f.doc}", f"{declaration:<36}", " " * 36)
    struct += _comment("shapes: the axis lengths, for the arrays indexed by hand", "    ")
    struct += [f"    {'int ' + a.parameter + ';':<32}// {a.symbol}" for a in AXES if a.parameter]
    params = [f"{_c_type(kind.rstrip('*'), kind.endswith('*'), 'mcrisk::')}"
              f"{' R' if kind.endswith('*') else ''} {name}" for name, kind in PLAN_PARAMETERS]
    values = textwrap.wrap(", ".join(name for name, _ in PLAN_PARAMETERS) + "}", 90,
                           initial_indent="    {", subsequent_indent="     ")
    return "\n".join([
        *_comment("The compiled plan as the kernels see it: the struct every stage reads "
                  "(`const Plan& p`) and the plan parameters of the kernel's entry points. "
                  "GENERATED from the plan interface (mcrisk/plan/record.py) by "
                  "mcrisk.backends.cuda.plan_header(): do not edit. Change the table, then run "
                  "`python tests/regen_headers.py`; tests/plan/test_record.py fails until "
                  "then."),
        "//",
        "// Axes (2-D arrays are indexed by hand: row * width + column):",
        *[f"//   {a.symbol:<8}{a.meaning}" for a in AXES],
        "#ifndef MCRISK_PLAN_CUH", "#define MCRISK_PLAN_CUH", "",
        '#include "compat.cuh"', "",
        "namespace mcrisk {", "",
        "struct Plan {", *struct, "};", "",
        "}  // namespace mcrisk", "",
        *_comment("The plan parameters (R: __restrict__ on the device, nothing on the host), "
                  "in the order of mcrisk.backends.cuda.PLAN_PARAMETERS, and the Plan they make."),
        *_continued(["#define MCRISK_PLAN_PARAMS(R)"]
                    + [f"    {param}," for param in params[:-1]] + [f"    {params[-1]}"]), "",
        *_continued(["#define MCRISK_PLAN_VALUES"] + values), "",
        "#endif  // MCRISK_PLAN_CUH", ""])


# The constants the kernels share with Python, in the groups kernels/constants.cuh declares
# them in: (what they are, the module that defines them, their names). Every value is read
# from its module by name, so the header cannot drift from Python; a metric's or a cost's
# constant is its name in upper case (definitions.TROUGH_DEPTH, definitions.COST_TOTAL).
SHARED_CONSTANTS = (
    ("The metrics axis (definitions): N_METRICS metrics, then N_COSTS cost columns in a plan "
     "with [costs], then the job columns in a plan with a job mix", definitions,
     ("N_METRICS", "N_COSTS")),
    ("Each metric's column (definitions.METRICS)", definitions,
     tuple(name.upper() for name in definitions.METRICS)),
    ("Each cost's column counted from the first cost column, so at N_METRICS + COST_* on the "
     "metrics axis (definitions.COSTS: cost_total first, the sum of the columns after it)",
     definitions, tuple(name.upper() for name in definitions.COSTS)),
    ("Each job column counted from the first job column (definitions.job_columns): job class "
     "j's homeless days at JOB_HOMELESS_DAYS + j", definitions,
     ("UNSERVABLE_GPU_DAYS", "JOB_HOMELESS_DAYS")),
    ("Kinds of world quantity, q_kind (definitions)", definitions,
     ("Q_SAMPLE", "Q_SUM", "Q_BURNIN", "Q_ATTEMPTS", "Q_EARLY", "Q_SOAK", "Q_OUT", "Q_REST",
      "Q_ABOVE")),
    ("How a status conditions a quantity, q_status (definitions)", definitions,
     ("BURNIN_FRESH", "BURNIN_ATTEMPT", "BURNIN_FIX", "BURNIN_RMA", "EARLY_SURVIVED")),
    ("Kinds of plan node, node_kind (definitions)", definitions, ("NODE_MAX", "NODE_CREW")),
    ('The tolerance of "below baseline" and "above cap", and the burn-in guard (definitions)',
     definitions, ("REL_EPS", "MAX_BURNIN_ATTEMPTS")),
    ("Distribution codes, dist_kind, the knots of a PERT table and of a posterior table "
     "(distributions)",
     distributions, ("KIND_FIXED", "KIND_UNIFORM", "KIND_TRIANGULAR", "KIND_PERT",
                     "KIND_LOGNORMAL", "KIND_TABLE", "PERT_TABLE_SIZE", "TABLE_SIZE",
                     "TABLE_Z", "SQRT2")),
    ("A copula uniform's clamp: the random stream's smallest and largest uniforms (copula)",
     copula, ("U_LOW", "U_HIGH")),
)
CONSTANTS_HEADER = "constants.cuh"


def shared_constants() -> dict[str, int | float]:
    """Every constant of SHARED_CONSTANTS by name, with its module's value."""
    return {name: getattr(module, name) for _, module, names in SHARED_CONSTANTS
            for name in names}


def constants_header() -> str:
    """Text of kernels/constants.cuh, generated from SHARED_CONSTANTS: every constant the
    kernels share with Python, under Python's name and with its value (a float as repr writes
    it, which C reads back as the same double). tests/core/test_constants.py holds the file to
    this text."""
    body = []
    for doc, module, names in SHARED_CONSTANTS:
        body += ["", *_comment(f"{doc}.")]
        for name in names:
            value = getattr(module, name)
            if type(value) not in (int, float):
                raise TypeError(f"{module.__name__}.{name} is {value!r}: the kernels' constants "
                                f"are ints and floats")
            c_type = "int" if type(value) is int else "double"
            body.append(f"inline constexpr {c_type} {name} = {value!r};")
    return "\n".join([
        *_comment("The constants the kernels share with Python: the columns of the metrics "
                  "axis, the kinds of quantity, node and distribution, the tolerance. "
                  "GENERATED from mcrisk/core (definitions.py, distributions.py, copula.py) by "
                  "mcrisk.backends.cuda.constants_header(): do not edit. Change the Python "
                  "constant, then run `python tests/regen_headers.py`; tests/core/test_constants.py "
                  "fails until then. `inline constexpr` (C++17), not `static`: nvcc warns of a "
                  "static constant no stage reads, and CI compiles with -Werror."),
        "#ifndef MCRISK_CONSTANTS_CUH", "#define MCRISK_CONSTANTS_CUH", "",
        "namespace mcrisk {", *body, "",
        "}  // namespace mcrisk", "",
        "#endif  // MCRISK_CONSTANTS_CUH", ""])


def _c_type(dtype: str, array: bool, namespace: str = "") -> str:
    """C type of a plan field: `const T*` for an array, T for a scalar."""
    name = C_TYPES[dtype]
    name = namespace + name if name == "u64" else name
    return f"const {name}*" if array else name


def _comment(text: str, first: str = "", indent: str | None = None) -> list[str]:
    """`text` as // comment lines of at most 100 characters after `first` (then `indent`)."""
    indent = first if indent is None else indent
    lines = textwrap.wrap(text, 97 - len(indent))
    return [f"{first if j == 0 else indent}// {line}" for j, line in enumerate(lines)]


def _continued(lines: list[str]) -> list[str]:
    """A macro's lines, each but the last ending in a backslash at column 100."""
    return [f"{line:<98} \\" for line in lines[:-1]] + lines[-1:]


def plan_shapes(plan: CompiledScenario) -> dict[str, int]:
    """The shape parameters of the kernel (what Numba reads off the arrays)."""
    lengths = plan.axis_lengths()
    return {axis.parameter: lengths[axis.symbol] for axis in AXES if axis.parameter}


def plan_limits(plan: CompiledScenario) -> dict[str, int]:
    """Compile-time scratch sizes (-D MAX_*) that fit this plan exactly (at least 1 each)."""
    shapes = plan_shapes(plan)
    needs = (shapes["n_quantities"], shapes["n_nodes"],
             max(shapes["n_cap_events"], shapes["n_power_events"]), shapes["n_islands"],
             shapes["n_halls"], plan.n_slots.max())
    return {name: max(1, int(n)) for name, n in zip(LIMIT_NAMES, needs)}


def compile_options(plan: CompiledScenario) -> tuple[str, ...]:
    """NVRTC options for this plan's shape: the fixed ones and -DMAX_*=n."""
    return NVRTC_OPTIONS + tuple(f"-D{k}={v}" for k, v in plan_limits(plan).items())


def typed_arguments(parameters: tuple, values) -> list:
    """values as the C types of `parameters`: arrays (NumPy or CuPy) checked for dtype and
    C order, scalars converted to NumPy scalars of the type (CuPy passes them by that type)."""
    out = []
    for (name, kind), value in zip(parameters, values, strict=True):
        dtype = np.dtype(kind.rstrip("*"))
        if kind.endswith("*"):
            if value.dtype != dtype or not value.flags.c_contiguous:
                raise TypeError(f"{name} is {value.dtype} (C order: {value.flags.c_contiguous}); "
                                f"the kernel takes C-ordered {dtype}")
            out.append(value)
        else:
            out.append(dtype.type(value))
    return out


def plan_arguments(plan: CompiledScenario) -> list:
    """The plan parameters: C-ordered NumPy arrays and NumPy scalars of the kernel's types."""
    values = list(plan.kernel_args()) + list(plan_shapes(plan).values())
    return typed_arguments(PLAN_PARAMETERS, [np.ascontiguousarray(v) if isinstance(v, np.ndarray)
                                             else v for v in values])


def chunk_arguments(seed: int, first: int, count: int, metrics, world, node_times,
                    keep_nodes: bool, status) -> list:
    """The chunk parameters that follow the plan's, typed (outputs NumPy or CuPy)."""
    seed_lo, seed_hi = split_seed(seed)
    return typed_arguments(CHUNK_PARAMETERS, (seed_lo, seed_hi, first, count, metrics, world,
                                              node_times, int(bool(keep_nodes)), status))


# ---- CuPy ----------------------------------------------------------------------------------

_modules: dict[tuple[str, ...], object] = {}     # compile options -> cupy.RawModule
_device_plan: dict = {"plan": None, "args": None}
launch_count = 0                                  # simulate_chunk_kernel launches, for tests


def _cupy():
    try:
        import cupy
    except ImportError as exc:
        raise RuntimeError("the cuda backend needs CuPy (pip install '.[gpu]'); "
                           "select it with mcrisk.backends.select_backend('cuda')") from exc
    return cupy


def module_for(plan: CompiledScenario):
    """The compiled cupy.RawModule for this plan's shape (compiled once per shape)."""
    options = compile_options(plan)
    module = _modules.get(options)
    if module is None:
        cupy = _cupy()
        module = cupy.RawModule(code=kernel_source(), options=options)
        module.compile()
        _modules[options] = module
    return module


def _device_arguments(plan: CompiledScenario) -> list:
    """The plan's arrays on the device, uploaded once per plan object."""
    if _device_plan["plan"] is not plan:
        cupy = _cupy()
        args = [cupy.asarray(a) if isinstance(a, np.ndarray) else a
                for a in plan_arguments(plan)]
        _device_plan.update(plan=plan, args=args)
    return _device_plan["args"]


def simulate_chunk_device(plan: CompiledScenario, seed: int, first: int, count: int,
                          keep_nodes: bool = False):
    """(metrics[count, s, 6 + n_costs + n_job_cols], world[count, q], node_times[count, s, v]
    or None) as CuPy arrays for scenarios first .. first + count - 1 (below 2**32); the
    device-resident form of simulate_chunk. count = 0 gives arrays with no scenario, as on
    every backend."""
    global launch_count
    check_scenarios(first, count)
    cupy = _cupy()
    metrics = cupy.zeros((count, plan.n_strategies, N_METRICS + plan.n_costs + plan.n_job_cols),
                         dtype=cupy.float64)
    world = cupy.zeros((count, plan.n_quantities), dtype=cupy.float64)
    node_times = cupy.zeros((count if keep_nodes else 1, plan.n_strategies, plan.n_nodes),
                            dtype=cupy.float64)
    if count == 0:                              # a launch needs at least one block
        return metrics, world, (node_times if keep_nodes else None)
    kernel = module_for(plan).get_function(KERNEL_NAME)
    status = cupy.zeros(count, dtype=cupy.int8)
    grid = ((count + BLOCK_SIZE - 1) // BLOCK_SIZE,)
    kernel(grid, (BLOCK_SIZE,),
           (*_device_arguments(plan),
            *chunk_arguments(seed, first, count, metrics, world, node_times, keep_nodes, status)))
    launch_count += 1
    worst = int(status.max())
    if worst == 2:
        raise RuntimeError("the kernel module's MAX_* sizes do not fit the plan (a bug in "
                           "mcrisk.backends.cuda.plan_limits)")
    if worst == 1:
        raise RuntimeError("schedule_nodes left nodes unscheduled: a deadlock past validation")
    return metrics, world, (node_times if keep_nodes else None)


def simulate_chunk(plan: CompiledScenario, seed: int, first: int, count: int,
                   keep_nodes: bool = False):
    """Same contract as the NumPy backend's simulate_chunk (NumPy arrays back). The node
    times carry the chunk still on the device (`device_chunk`, DeviceChunk), which the
    milestones reduce there; not with contingent strategies, whose rows the caller replaces
    on the host copy afterwards (mcrisk.backends.contingency)."""
    metrics, world, node_times = simulate_chunk_device(plan, seed, first, count, keep_nodes)
    if not keep_nodes:
        return metrics.get(), world.get(), None
    nodes = node_times.get()
    if not plan.contingencies:
        nodes = with_device_chunk(nodes, DeviceChunk(node_times, world))
    return metrics.get(), world.get(), nodes


# ---- the milestones' reductions on the device (kernels/milestones.cu) ----------------------

MILESTONE_OPTIONS = ("-std=c++17", "--fmad=false")     # no plan-sized scratch: one module


class HostCopy(np.ndarray):
    """A chunk's node times copied to the host that still know the device chunk they were
    copied from (`device_chunk`); any array made from one (a view, a slice, a copy) is a
    plain copy of the numbers, without it."""

    device_chunk = None

    def __array_finalize__(self, obj) -> None:
        self.device_chunk = None


def with_device_chunk(nodes: np.ndarray, chunk) -> HostCopy:
    """nodes (a host copy) marked as the copy of `chunk` (a DeviceChunk, or in the tests
    anything with its chunk_milestones)."""
    carried = nodes.view(HostCopy)
    carried.device_chunk = chunk
    return carried


class DeviceChunk:
    """A chunk's node_times[c, s, v] and world[c, q] where the kernel wrote them (CuPy): what
    mcrisk.results.milestones.MilestoneCollector and mcrisk.results.bands.BandCollector
    reduce on the device instead of the host copy."""

    def __init__(self, node_times, world):
        self.node_times, self.world = node_times, world
        self.bands = None       # cuda_bands.DeviceBands, set by the Backend (mcrisk.backends)

    @property
    def reduces_bands(self) -> bool:
        """Whether the band reductions are attached (BandCollector reduces here then)."""
        return self.bands is not None

    def chunk_milestones(self, s, *arguments) -> None:
        """milestone_chunks.chunk_milestones(node_times, world, s, *arguments) on the device."""
        chunk_milestones_device(self.node_times, self.world, s, *arguments)

    def capacity_blocks(self, s, *arguments) -> None:
        """band_chunks.capacity_blocks(node_times, s, *arguments) on the device."""
        self.bands.capacity_blocks(self.node_times, s, *arguments)

    def peak_draws(self, s, *arguments) -> None:
        """band_chunks.peak_draws(node_times, s, *arguments) on the device."""
        self.bands.peak_draws(self.node_times, s, *arguments)

    def capacity_day_keys(self, s, *arguments) -> None:
        """band_chunks.capacity_day_keys(node_times, s, *arguments) on the device (the keys
        copied back: the host sorts and counts them)."""
        self.bands.capacity_day_keys(self.node_times, s, *arguments)


def _milestone_module():
    module = _modules.get(MILESTONE_OPTIONS)
    if module is None:
        cupy = _cupy()
        module = cupy.RawModule(code=kernel_source(cuda_milestones.MILESTONE_SOURCE),
                                options=MILESTONE_OPTIONS)
        module.compile()
        _modules[MILESTONE_OPTIONS] = module
    return module


def _launch(name: str, threads: int, values: list) -> None:
    """Kernel `name` of kernels/milestones.cu over `threads` threads, on its parameters'
    values (cuda_milestones.ENTRY_PARAMETERS) typed as the table says."""
    cupy = _cupy()
    typed = [cuda_milestones.as_parameter(v, kind, cupy) for v, (_, kind)
             in zip(values, cuda_milestones.ENTRY_PARAMETERS[name], strict=True)]
    grid = ((threads + BLOCK_SIZE - 1) // BLOCK_SIZE,)
    _milestone_module().get_function(name)(grid, (BLOCK_SIZE,), tuple(typed))


def chunk_milestones_device(node_times, world, s, member_ptr, members, first, is_ancestor,
                            dep_ptr, dep_idx, is_crew, crew_rows, base_const, base_q, add_const,
                            add_q, completion, tolerance, times_out, critical_out) -> None:
    """milestone_chunks.chunk_milestones with node_times and world on the device (CuPy), one
    thread a scenario; times_out[m, c] and critical_out[m] (NumPy, as there) filled on the
    host: times_out written, critical_out added to."""
    cupy = _cupy()
    count, _, n_nodes = node_times.shape
    if count == 0:
        return
    values = cuda_milestones.path_values(
        node_times, world, s, member_ptr, members, first, is_ancestor, dep_ptr, dep_idx,
        is_crew, crew_rows, base_const, base_q, add_const, add_q, completion, tolerance)
    values = [cuda_milestones.as_parameter(v, kind, cupy) for v, (_, kind)
              in zip(values, cuda_milestones.PATH_PARAMETERS)]
    times = cupy.empty(times_out.shape)
    critical = cupy.zeros(critical_out.shape, cupy.uint64)
    batch = cuda_milestones.batch_size(count, n_nodes)
    # thread t's marks at mark[v * n + t], stamped with its scenario's index: a batch reads
    # an earlier batch's stamps as no mark, so the array is cleared once
    mark = cupy.full(n_nodes * batch, -1, cupy.int64)
    for offset in range(0, count, batch):
        n = min(batch, count - offset)
        _launch("chunk_milestones_kernel", n, values + [offset, n, mark, times, critical])
    times.get(out=times_out)
    critical_out += critical.get().astype(np.int64)


def add_to_bins_device(rows, base_days, exponent, origin, counts, low, high, non_finite):
    """milestone_chunks.add_to_bins with rows[m, c] and the bins (counts, low, high,
    non_finite: CuPy arrays, kept on the device from chunk to chunk) on the device, one thread
    a time; returns the tails as NumPy arrays, (items, times) in row order. Bins left empty
    have low +inf and high -inf."""
    cupy = _cupy()
    m, n = rows.shape
    window = [rows, m, n, base_days, exponent, origin, counts.shape[1]]
    _launch("add_to_bins_clear", counts.size, [counts.size, counts, low, high])
    outside = cupy.zeros(1, cupy.uint64)
    _launch("add_to_bins_count", max(m * n, 1), window + [counts.view(cupy.uint64), low, high,
                                                          non_finite.view(cupy.uint64), outside])
    size = int(outside.get()[0])
    if size == 0:
        return np.empty(0, np.int64), np.empty(0)
    tail_at, tail_times = cupy.empty(size, cupy.int64), cupy.empty(size)
    _launch("add_to_bins_tails", m * n, window + [cupy.zeros(1, cupy.uint64), tail_at, tail_times])
    return cuda_milestones.tails_in_row_order(tail_at.get(), tail_times.get(), n)
