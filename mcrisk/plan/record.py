"""The compiled plan's interface, defined once: every array the kernels read, in one table.

`PLAN_GROUPS` lists each field of the plan (name, dtype, axes, what it holds) in the order
the kernels take them, grouped into the sub-records a reader thinks in: distributions, world,
network, crew schedule, events, metric definitions. Like numpy's `bitgen_t`, it is the one
record every backend uses, and every other listing is derived from it:

* `CompiledScenario`'s array fields (a dataclass built from the table), `kernel_args()` and
  `KernelPlan`, the kernel fields as one record (the Numba stages take it as `p`);
* the CUDA backend's `PLAN_PARAMETERS` (mcrisk/backends/cuda.py), hence the host build's
  ctypes argument list, and kernels/plan.cuh (the `Plan` struct and its two macros), which
  is generated from the table and checked against it by tests/plan/test_record.py;
* the shape parameters the CUDA kernel takes (`AXES` with a `parameter`), read off the plan;
* the Numba stages read the plan from a `KernelPlan` (`p.dist_kind`), as the CUDA stages
  read `const Plan& p`; the distribution helpers of both take a few arrays by name, and
  tests/plan/test_record.py parses the Numba calls against the table.

Every plan is checked against the table when it is built (`check_plan`): dtype, C order,
number of axes, and one length per axis across all fields, so a wrong array names itself
rather than corrupting a kernel's reads. Consumers keep flat access (`plan.dist_kind`).
Axes: s strategy, v node, q quantity, d distribution, b burn-in row, r crew row, k capacity
event, p power event, i island, h hall, c completion node, n demand point, z cost span,
y reservation step, u one-off cost, j job class, w pool of install teams or burn-in bays.
"""
from __future__ import annotations

import collections
import dataclasses
import re
from dataclasses import dataclass

import numpy as np

from ..core.quantities import QuantityLabel


@dataclass(frozen=True)
class Axis:
    """A named axis of the plan's arrays; `parameter` is the CUDA kernel's argument holding
    its length (the kernel indexes 2-D arrays by hand), None where no kernel needs it."""

    symbol: str
    meaning: str
    parameter: str | None = None


AXES = (
    Axis("d", "distribution (at least 1: a placeholder when the scenario draws nothing)"),
    Axis("knots", "quantile table entries (PERT and posterior tables) end to end (at least 1)"),
    Axis("q", "world quantity", "n_quantities"),
    Axis("terms", "the SUM quantities' terms end to end (at least 1)"),
    Axis("copulas", "the copula rows' weights end to end (at least 1)"),
    Axis("b", "burn-in table row (at least 1)"),
    Axis("s", "strategy", "n_strategies"),
    Axis("v", "node (fixed ids shared by every strategy)", "n_nodes"),
    Axis("deps", "one strategy's deps end to end, padded to the longest", "dep_width"),
    Axis("r", "crew row, padded to the most of any strategy (at least 1)", "crew_width"),
    Axis("unlocks", "one strategy's unlock lists end to end, padded", "unlock_width"),
    Axis("w", "a strategy's pools of install teams and burn-in bays, padded (at least 1)",
         "pool_width"),
    Axis("k", "capacity event", "n_cap_events"),
    Axis("i", "island", "n_islands"),
    Axis("p", "power event", "n_power_events"),
    Axis("h", "hall", "n_halls"),
    Axis("c", "node whose time ends the migration", "n_completion"),
    Axis("n", "demand point", "n_demand"),
    Axis("z", "cost span (at least 1: a placeholder of rate 0 without [costs])", "n_spans"),
    Axis("y", "one strategy's reservation steps end to end, padded (at least 1)",
         "res_width"),
    Axis("u", "one-off cost (at least 1: a placeholder of amount 0)", "n_lumps"),
    Axis("j", "job class (at least 1: a placeholder without a job mix)", "n_jobs"),
)
AXIS = {axis.symbol: axis for axis in AXES}


@dataclass(frozen=True)
class Field:
    """One array (or scalar, when `axes` is empty) of the plan. An axis is a symbol of AXES,
    a symbol + 1 (a CSR pointer row), or a fixed length. `kernel`: the kernels take it (only
    the NumPy reference reads the others)."""

    name: str
    dtype: str
    axes: tuple[str, ...]
    doc: str
    group: str
    kernel: bool = True

    @property
    def type_text(self) -> str:
        """The field's type as the table writes it, e.g. `int32[s, v + 1]`."""
        return self.dtype + (f"[{', '.join(self.axes)}]" if self.axes else "")


@dataclass(frozen=True)
class Group:
    """A sub-record of the plan: the fields one stage of the simulation reads together."""

    name: str
    doc: str
    fields: tuple[Field, ...]


_TYPE = re.compile(r"(\w+)(?:\[(.*)\])?$")


def _group(name: str, doc: str, *rows: tuple) -> Group:
    """A Group from rows (name, "dtype[axes]", doc[, kernel])."""
    fields = []
    for field_name, type_text, field_doc, *kernel in rows:
        dtype, axes = _TYPE.match(type_text).groups()
        fields.append(Field(field_name, dtype, tuple(a.strip() for a in axes.split(","))
                            if axes else (), field_doc, name, *kernel))
    return Group(name, doc, tuple(fields))


PLAN_GROUPS = (
    _group("distributions", "the encoded distributions (mcrisk/core/distributions.py)",
           ("dist_kind", "int32[d]", "KIND_* code (a `chance`: its inner kind)"),
           ("dist_param", "float64[d, 4]", "four parameters by kind"),
           ("dist_chance", "float64[d]", "P(a non-zero draw); 1.0: not a `chance`"),
           ("pert_table", "float64[knots]", "every PERT and posterior (TABLE) quantile table "
                                            "end to end")),
    _group("world", "the quantities drawn or derived once per scenario, in dependency order",
           ("q_kind", "int32[q]", "Q_SAMPLE, Q_SUM, Q_BURNIN, Q_ATTEMPTS, Q_EARLY, Q_SOAK, "
                                  "Q_OUT, Q_REST or Q_ABOVE"),
           ("q_dist", "int32[q]", "distribution of a SAMPLE or an ABOVE (a BURNIN: its "
                                  "attempt's; an EARLY: its age's)"),
           ("q_address", "uint64[q, 4]", "addresses (BURNIN: attempt, outcome, fix, rma)"),
           ("q_const", "float64[q]", "a SUM's or REST's constant; an ABOVE's bound's; a "
                                     "conditioned BURNIN's elapsed days of its running piece"),
           ("q_terms_ptr", "int32[q + 1]", "a SUM's terms: q_terms[ptr[q]:ptr[q + 1]]"),
           ("q_terms", "int32[terms]", "earlier quantities a SUM adds (a REST, an ABOVE's "
                                       "bound: subtracts)"),
           ("q_status", "int32[q]", "0, or how a status conditions a BURNIN (BURNIN_*) or an "
                                    "EARLY (EARLY_SURVIVED)"),
           ("q_state", "float64[q, 4]", "a conditioned BURNIN's days so far, attempt it resumes "
                                        "at, failures in a row, RMAs done; an EARLY's age "
                                        "exceeded and chance"),
           ("q_burnin", "int32[q]", "a BURNIN's row of the burn-in tables, else -1"),
           ("burnin_dist", "int32[b, 3]", "attempt, fix and rma distributions"),
           ("burnin_fail", "float64[b, 2]", "fail_first, fail_retry"),
           ("burnin_rma_after", "int32[b]", "failures in a row that send a unit to RMA"),
           ("q_copula_ptr", "int32[q + 1]", ("a correlated SAMPLE's copula row: copula_address "
                                             "and copula_weight[ptr[q]:ptr[q + 1]] (empty: not "
                                             "correlated; mcrisk/core/copula.py)")),
           ("copula_address", "uint64[copulas]", "addresses whose normal scores a row weighs"),
           ("copula_weight", "float64[copulas]", "Cholesky weights, row by row"),
           ("copula_low", "float64[copulas]", "the range [low, high] an entry's uniform is "
                                              "mapped into before its normal score: 0 but "
                                              "for a member a status conditions"),
           ("copula_high", "float64[copulas]", "its high end: 1 but for a member a status "
                                               "conditions (core.copula.copula_score)"),
           ("copula_quantity", "int32[copulas]", "-1, or an earlier quantity whose value's "
                                                 "rank is the entry's normal score (a member "
                                                 "a status conditions world by world)"),
           ("copula_dist", "int32[copulas]", "that quantity's distribution in the scenario, "
                                             "whose CDF ranks its value (else 0)")),
    _group("network", "each strategy's max-plus network over fixed node ids",
           ("node_base_q", "int32[v]", "world quantity a node waits for, or -1"),
           ("node_kind", "int32[s, v]", "NODE_MAX, or NODE_CREW (also waits for a crew)"),
           ("node_base_const", "float64[s, v]", "day before which a node cannot start"),
           ("node_add_q", "int32[s, v, 2]", "world quantities added to the start, or -1"),
           ("node_add_const", "float64[s, v]", "days added to the start"),
           ("node_floor", "float64[s, v]", "day before which the node's time cannot fall (a "
                                           "status's as_of for an event not yet recorded), or "
                                           "-inf"),
           ("dep_ptr", "int32[s, v + 1]", "CSR pointers: node v's deps in dep_idx"),
           ("dep_idx", "int32[s, deps]", "the deps, node by node"),
           ("topo", "int32[s, v]", "nodes in topological order (the NumPy reference's sweeps)",
            False)),
    _group("crew_schedule", "blocks that time nodes without a worklist "
                            "(mcrisk/plan/compile.py)",
           ("n_crews", "int32[s]", "retrofit crews of each strategy (its own, else the "
                                   "scenario's)"),
           ("block_ptr", "int32[s, v + 1]", "CSR pointers: block b's nodes in block_node"),
           ("block_node", "int32[s, v]", "every node in a block once, block by block"),
           ("block_wait", "int32[s, v]", "how many crew rows block b waits for"),
           ("n_ready_blocks", "int32[s]", "blocks 0 .. n - 1 wait for no crew row"),
           ("block_feeds_crew", "int32[s, v]", "1 if block b is a crew row or a crew row waits "
                                               "for one of its nodes; the kernels may time the "
                                               "others after every row has a crew"),
           ("crew_node", "int32[s, r]", "crew rows (NODE_CREW nodes), ascending ids"),
           ("n_crew_rows", "int32[s]", "crew rows of each strategy"),
           ("unlock_ptr", "int32[s, r + 1]", "CSR pointers: the blocks crew row r frees"),
           ("unlock_block", "int32[s, unlocks]", "the freed blocks, ascending, row by row"),
           ("n_slots", "int32[s]", ("retrofit crews, install teams and burn-in bays of "
                                    "each strategy, end to end (crews first)")),
           ("crew_first", "int32[s, v]", ("a crew row's first slot: 0 for a row retrofit, "
                                          "else its hall's (or the site's) teams or bays")),
           ("crew_count", "int32[s, v]", "how many slots from crew_first it may take"),
           ("crew_hold_q", "int32[s, v]", ("world quantity its slot stays busy past its time "
                                           "(install or burn-in days), or -1")),
           ("n_retrofit_rows", "int32[s]", ("crew_node[s, :n] are the row retrofits (the "
                                            "crews' cost)")),
           ("n_pools", "int32[s]", "pools of install teams and burn-in bays of each strategy"),
           ("pool_first", "int32[s, w]", "each pool's first slot (its crew rows' crew_first)")),
    _group("events", "capacity and power changes at node times",
           ("cap_event_node", "int32[k]", "node at whose time capacity changes"),
           ("cap_event_island", "int32[s, k]", "island whose capacity changes (placement decides)"),
           ("cap_event_delta", "float64[k]", "H100-eq (per H100-eq-per-GPU if scaled)"),
           ("cap_event_scale_q", "int32[k]", "world quantity multiplying the delta, or -1"),
           ("island_cap0", "float64[i]", "capacity in service at day 0"),
           ("power_event_node", "int32[p]", "node at whose time a hall's draw changes"),
           ("power_event_hall", "int32[s, p]", "hall whose draw changes (placement decides)"),
           ("power_event_delta", "float64[p]", "kW"),
           ("cap_event_order", "int32[s, k]", "events in a likely time order (performance)"),
           ("power_event_order", "int32[s, p]", "likewise; the first n_power_checked[s] are used"),
           ("n_power_checked", "int32[s]", "power events of halls that could pass their cap"),
           ("hall_draw0", "float64[h]", "kW drawn at day 0"),
           ("hall_cap", "float64[h]", "kW cap")),
    _group("metric_definitions", "what the metrics measure against",
           ("completion_node", "int32[c]", "nodes whose latest time is the completion day"),
           ("baseline", "float64", "capacity at day 0, H100-eq"),
           ("horizon", "float64", "days the metrics integrate over"),
           ("window_start", "float64", "day the metrics and costs start counting from: 0, or "
                                       "a status's as_of (docs/metrics.md, Windows)"),
           ("largest_job", "float64", "H100-eq the largest job needs on one island"),
           ("demand_day", "float64[n]", "demand points' days"),
           ("demand_value", "float64[n]", "demand points' H100-eq (a forecast's base)"),
           ("demand_growth_q", "int32[n]", "-1: value fixed; else value x (1 + q)^(day/365)"),
           ("demand_p50", "float64[n]", "demand points' median H100-eq (the report's line)",
            False)),
    _group("costs", "what the migration costs per scenario, over [window_start, horizon] "
                    "(mcrisk/plan/costs.py; a price is world[q] when its q >= 0, else 1)",
           ("n_costs", "int32", "cost columns after the metrics: 0 (no [costs]) or N_COSTS"),
           ("span_start_node", "int32[z]", "node whose time starts a cost span, or -1"),
           ("span_start_day", "float64[z]", "the span's start day where it has no node"),
           ("span_end_node", "int32[z]", "node whose time ends a cost span, or -1"),
           ("span_end_day", "float64[z]", "the span's end day where it has no node (inf: "
                                          "open to the horizon)"),
           ("span_rate", "float64[s, z]", "cost per day of the span at a price of 1 (0: not "
                                          "in strategy s)"),
           ("span_price_q", "int32[s, z]", "world quantity of the span's price, or -1"),
           ("span_cost", "int32[z]", "cost column the span adds to (definitions.COSTS)"),
           ("res_ptr", "int32[s, h + 1]", "CSR pointers: strategy s's reservation steps of "
                                          "hall h in res_day and res_kw"),
           ("res_day", "float64[s, y]", "a step's day, or its days after res_node's time"),
           ("res_kw", "float64[s, y]", "kW reserved from that day on"),
           ("res_node", "int32[s, y]", "node whose time a step starts after, or -1 (a day)"),
           ("res_rate", "float64[s, y]", "a step's cost per day at a price of 1"),
           ("res_price_q", "int32[h]", "world quantity of hall h's price per kW-month, or -1"),
           ("res_term", "float64[h]", "hall h's minimum_term_days (a step down waits it)"),
           ("over_rate", "float64[h]", "cost per kW-day drawn above the reservation at a "
                                       "price of 1 (0: not priced)"),
           ("over_price_q", "int32[h]", "world quantity of that price, or -1"),
           ("shortfall_rate", "float64", "cost per H100-eq-day of shortfall at a price of 1"),
           ("shortfall_price_q", "int32", "world quantity of that price, or -1"),
           ("crew_rate", "float64[s]", "cost per day strategy s's retrofit crews are "
                                       "engaged (all of them) at a price of 1"),
           ("crew_price_q", "int32", "world quantity of that price, or -1"),
           ("pool_rate", "float64[s, w]", ("cost per day pool w of strategy s is engaged: its "
                                           "teams or bays x the price (1 if drawn), 0: none")),
           ("pool_price_q", "int32[s, w]", "world quantity of that price, or -1"),
           ("lump_amount", "float64[u]", "one-off costs (mitigations in effect) at a price "
                                         "of 1"),
           ("lump_price_q", "int32[u]", "world quantity of a one-off's price, or -1"),
           ("lump_cost", "int32[u]", "cost column a one-off adds to")),
    _group("jobs", "the job mix the kernels pack into the islands (mcrisk/plan/jobs.py; "
                   "docs/metrics.md: the packing rule)",
           ("n_job_cols", "int32", "job columns after the cost columns: 0 (no job mix) or "
                                   "1 + J (definitions.job_columns)"),
           ("job_size", "float64[j]", "H100-eq one job of the class needs on one island"),
           ("job_share", "float64[j]", "the class's share of demand"),
           ("job_order", "int32[j]", "classes in packing order: largest size first, ties in "
                                     "file order"),
           ("job_step", "float64", "days per cell of unservable_gpu_days' midpoint rule")),
)
PLAN_FIELDS = tuple(f for group in PLAN_GROUPS for f in group.fields)
KERNEL_FIELDS = tuple(f for f in PLAN_FIELDS if f.kernel)
FIELD = {f.name: f for f in PLAN_FIELDS}

# The kernel fields as one record, in table order: what the Numba kernel and its stages take
# (`p`, read as p.dist_kind). A namedtuple of arrays and scalars, which Numba passes by value
# and caches (mcrisk/core/jit.py).
KernelPlan = collections.namedtuple("KernelPlan", [f.name for f in KERNEL_FIELDS],
                                    module=__name__)


def _scalar_type(f: Field) -> type:
    return int if f.dtype.startswith(("int", "uint")) else float


# The arrays and scalars of PLAN_FIELDS as dataclass fields, derived from the table.
_PlanArrays = dataclasses.make_dataclass(
    "_PlanArrays", [(f.name, np.ndarray if f.axes else _scalar_type(f)) for f in PLAN_FIELDS],
    frozen=True, kw_only=True, namespace={"__module__": __name__})


@dataclass(frozen=True, kw_only=True)
class CompiledScenario(_PlanArrays):
    """Flat arrays for the kernels (every field of PLAN_FIELDS) and the names they index.

    Built by mcrisk.plan.compile.compile_scenario; checked against the table on construction.
    """

    scenario_name: str
    strategy_names: tuple[str, ...]
    quantity_names: tuple[str, ...]
    quantity_labels: tuple[QuantityLabel, ...]   # what each quantity is about
    node_names: tuple[str, ...]
    island_names: tuple[str, ...]
    hall_names: tuple[str, ...]
    # contingent strategies (mcrisk.plan.contingency.Contingency): rows that each world
    # replaces by the row of the branch its decision takes (mcrisk/backends/contingency.py)
    contingencies: tuple = ()

    def __post_init__(self):
        check_plan(self)

    @property
    def n_strategies(self) -> int:
        return len(self.strategy_names)

    @property
    def n_quantities(self) -> int:
        return len(self.quantity_names)

    @property
    def n_nodes(self) -> int:
        return len(self.node_names)

    def kernel_args(self) -> tuple:
        """The kernel fields' values in the order every backend's kernel takes them."""
        return tuple(getattr(self, f.name) for f in KERNEL_FIELDS)

    def kernel_record(self) -> KernelPlan:
        """The kernel fields as one record (the Numba kernel's `p`)."""
        return KernelPlan(*self.kernel_args())

    def axis_lengths(self) -> dict[str, int]:
        """Length of every axis symbol of AXES in this plan."""
        return check_plan(self)


class PlanInterfaceError(ValueError):
    """A plan's array does not match the plan interface: a bug in compile, not bad input."""


def check_plan(plan) -> dict[str, int]:
    """Check every field of `plan` against PLAN_FIELDS; return each axis's length.

    Lengths of s, q, v, i and h come from the plan's names; every other axis takes its length
    from the first field that has it, and every later field must agree.
    """
    lengths = {"s": len(plan.strategy_names), "q": len(plan.quantity_names),
               "v": len(plan.node_names), "i": len(plan.island_names),
               "h": len(plan.hall_names)}
    origin = {"s": "strategy_names", "q": "quantity_names", "v": "node_names",
              "i": "island_names", "h": "hall_names"}
    for f in PLAN_FIELDS:
        value = getattr(plan, f.name)
        if not f.axes:
            if type(value) is not _scalar_type(f):
                raise PlanInterfaceError(f"plan field {f.name} is {_describe(value)}; the plan "
                                         f"interface says {f.type_text}")
            continue
        if not isinstance(value, np.ndarray) or value.dtype != np.dtype(f.dtype) \
                or value.ndim != len(f.axes) or not value.flags.c_contiguous:
            raise PlanInterfaceError(f"plan field {f.name} is {_describe(value)}; the plan "
                                     f"interface says C-ordered {f.type_text}")
        for axis, size in zip(f.axes, value.shape):
            symbol, _, plus = axis.partition("+")
            symbol = symbol.strip()
            if symbol.isdigit():
                expected = int(symbol)
            else:
                size -= int(plus) if plus else 0
                expected = lengths.setdefault(symbol, size)
                origin.setdefault(symbol, f.name)
            if size != expected:
                source = origin.get(symbol, "the table")
                raise PlanInterfaceError(
                    f"plan field {f.name} has shape {value.shape}; the plan interface says "
                    f"{f.type_text} with {symbol} = {expected} (from {source})")
    return lengths


def _describe(value) -> str:
    if isinstance(value, np.ndarray):
        order = "C-ordered " if value.flags.c_contiguous else "not C-ordered "
        return f"{order}{value.dtype}{list(value.shape)}"
    return f"{type(value).__name__} {value}"
