"""Parquet outputs: per-scenario metrics (streamed, one row group per chunk) and capacity bands.

metrics.parquet has one row per scenario x strategy, scenario-major (all strategies of scenario
i, then i + 1), with columns

    scenario (int64, the scenario's address), strategy (string),
    trough_depth, trough_days, shortfall_gpu_days, homeless_days, completion_day (float64),
    power_violation (bool),
    with a [costs] section the cost columns cost_total .. cost_mitigation (float64, in the
    scenario's currency; definitions.COSTS, docs/costs.md),
    with a job mix the job columns unservable_gpu_days, homeless_days.<id> .. (float64, each
    field's metadata `unit`: H100-eq x days, days; mcrisk.core.labels, docs/metrics.md),
    then the key drawn inputs of that scenario (the same for every strategy), named as the
    compiled world quantities: see `input_quantities`. Days are float32 (0.1 ms precision
    over a few years is plenty for analysis), burn-in attempts int32.

With a status, every metric, cost and job column counts the future, [as_of, horizon), and the
file's metadata records the status, as_of and the history (status_metadata).

Encoded plainly and compressed with zstd; only the strategy names are dictionary-encoded,
and only scenario and strategy carry min/max statistics (METRICS_WRITE_OPTIONS says why).

Every file goes to a temporary name in its folder and is renamed when complete.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from ..plan.record import CompiledScenario
from ..core.definitions import COSTS, METRICS, N_METRICS, POWER_VIOLATION, Q_ATTEMPTS
from ..core.labels import unit
from ..results.jobs import check_job_columns
from ..core.outputs import default_mode, write_atomic
from ..results.bands import CapacityBands

METRICS_FILE = "metrics.parquet"
BANDS_FILE = "capacity_bands.parquet"


def input_quantities(plan: CompiledScenario) -> list[int]:
    """World quantities kept as columns: the inputs a planner slices by.

    Kept: shared delays (`shared.*`), shipment arrival days (`shipment.*.arrival`), hall
    energized days (`hall.*.energized`), island ready days (`island.*.ready`), burn-in days and
    attempts per unit (`unit.*.burn_in`, `unit.*.burn_in.attempts`), retrofit days
    (`row.*.retrofit`), risk impacts (`risk.*`, 0 when the risk did not occur), drawn
    performance per GPU (`unit_type.*.h100_eq_per_gpu`), drawn prices (`cost.*`) and a demand
    forecast's drawn growth (`demand.forecast.growth_per_year`). Left
    out, as derivable or minor: the `.delay` parts of dates (date - promised day - shared
    delays), island install days, and per-unit install, drain and removal durations.
    """
    keep = []
    for q, name in enumerate(plan.quantity_names):
        head, _, rest = name.partition(".")
        if (head in ("shared", "risk", "unit_type", "cost", "demand")
                or (head == "shipment" and rest.endswith(".arrival"))
                or (head == "hall" and rest.endswith(".energized"))
                or (head == "island" and rest.endswith(".ready"))
                or (head == "unit" and (rest.endswith(".burn_in")
                                        or rest.endswith(".burn_in.attempts")))
                or (head == "row" and rest.endswith(".retrofit"))):
            keep.append(q)
    return keep


def metrics_schema(plan: CompiledScenario, job_columns: tuple[str, ...] = (),
                   status: dict | None = None) -> pa.Schema:
    """The columns of metrics.parquet; `job_columns` names the plan's job columns
    (results.jobs.scenario_job_columns; () without a job mix). With a status (its block,
    summary.json's `status`), the schema's metadata records it (status_metadata)."""
    fields = [pa.field("scenario", pa.int64()), pa.field("strategy", pa.string())]
    # power_violation is a bool column (0.0 or 1.0 per scenario), the other metrics float64
    fields += [pa.field(m, pa.bool_() if k == POWER_VIOLATION else pa.float64())
               for k, m in enumerate(METRICS)]
    fields += [pa.field(c, pa.float64()) for c in COSTS[:plan.n_costs]]
    fields += [pa.field(c, pa.float64(), metadata={"unit": unit(c)})
               for c in check_job_columns(plan, job_columns)]
    for q in input_quantities(plan):
        kind = pa.int32() if _input_dtype(plan, q) == np.int32 else pa.float32()
        fields.append(pa.field(plan.quantity_names[q], kind))
    schema = pa.schema(fields)
    return schema if status is None else schema.with_metadata(status_metadata(status))


STATUS_METADATA = b"mcrisk.status"


def status_metadata(status: dict) -> dict[bytes, bytes]:
    """metrics.parquet's metadata in a run with a status: the status file's path and sha256,
    as_of (and its date), the window the metric columns count (`window_days`: [as_of,
    horizon]) and, under `mcrisk.status`, the whole `status` block of summary.json as JSON
    (what happened, the history's figures per strategy)."""
    import json

    return {b"status_path": status["path"].encode(), b"status_sha256": status["sha256"].encode(),
            b"as_of": repr(float(status["as_of"])).encode(),
            b"as_of_date": (status.get("as_of_date") or "").encode(),
            b"window_days": json.dumps(status["window_days"]).encode(),
            STATUS_METADATA: json.dumps(status, ensure_ascii=False, allow_nan=False).encode()}


def metrics_batch(plan: CompiledScenario, first: int, metrics: np.ndarray,
                  world: np.ndarray, schema: pa.Schema, buffers=None) -> pa.Table:
    """Rows of one chunk: metrics[c, s, m], world[c, q] for scenarios first .. first + c - 1
    (m: the six metrics, then the plan's n_costs cost columns and its job columns, as the
    backend returns them). `buffers` (an object with `empty(name, shape, dtype)`, such as
    mcrisk.backends.buffers.ChunkBuffers): where the columns are built, reused from chunk to
    chunk; the table holds them until it is written.

    Performance: every column is a contiguous row of one of three arrays built in one pass
    each (the metrics moved metric-major, the kept inputs cast and repeated per strategy,
    input-major), which Arrow takes without copying; the strategy names are one string
    buffer, not a Python string per row. In reused buffers, not fresh arrays whose pages the
    OS zeroes first.
    """
    empty = (lambda name, shape, dtype: np.empty(shape, dtype)) if buffers is None \
        else buffers.empty
    c, n_strategies = metrics.shape[0], metrics.shape[1]
    rows = c * n_strategies
    by_metric = empty("by_metric", (metrics.shape[2], c, n_strategies), np.float64)
    by_metric[...] = np.moveaxis(metrics, 2, 0)
    by_metric = by_metric.reshape(metrics.shape[2], rows)
    columns = [pa.array(np.repeat(np.arange(first, first + c, dtype=np.int64), n_strategies)),
               strategy_column(plan.strategy_names, c)]
    columns += [pa.array(by_metric[k] > 0.5 if k == POWER_VIOLATION else by_metric[k])
                for k in range(N_METRICS)]
    columns += [pa.array(by_metric[N_METRICS + k]) for k in range(plan.n_costs)]
    columns += [pa.array(by_metric[N_METRICS + plan.n_costs + k])
                for k in range(plan.n_job_cols)]
    kept = input_quantities(plan)
    inputs = {}
    for dtype in (np.float32, np.int32):
        mine = [q for q in kept if _input_dtype(plan, q) == dtype]
        if mine:    # [input, scenario x strategy]: each input's column contiguous, each
            # scenario's value repeated for its strategies (numpy.repeat's layout)
            block = empty(f"inputs_{np.dtype(dtype).name}", (len(mine), c, n_strategies),
                          dtype)
            block[...] = world[:, mine].T[:, :, None]
            block = block.reshape(len(mine), rows)
            inputs.update({q: block[j] for j, q in enumerate(mine)})
    columns += [pa.array(inputs[q]) for q in kept]
    return pa.Table.from_arrays(columns, schema=schema)


def _input_dtype(plan: CompiledScenario, q: int):
    """The numpy type of input column q: int32 for burn-in attempts, else float32."""
    return np.int32 if plan.q_kind[q] == Q_ATTEMPTS else np.float32


def strategy_column(names: tuple[str, ...], c: int) -> pa.Array:
    """The strategy column of c scenarios (every name once per scenario, in order), built
    from one buffer of UTF-8 bytes and its offsets."""
    encoded = [name.encode("utf-8") for name in names]
    lengths = np.tile(np.array([len(b) for b in encoded], dtype=np.int64), c)
    offsets = np.zeros(lengths.size + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return pa.LargeStringArray.from_buffers(
        lengths.size, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded) * c)
    ).cast(pa.string())


# Performance: dictionary encoding only where values repeat (the strategy names); on the
# float and integer columns it took two thirds of the writing time and made the file larger
# (reference, 65,536 scenarios: 1.7 s and 25.5 MB with it, 0.5 s and 15.4 MB without).
# Statistics (min/max per row group) only where they let a reader skip row groups (the
# scenario numbers, in order; the names): every row group spans nearly the whole range of
# a metric or an input, so theirs would cost a quarter of the time and skip nothing.
METRICS_WRITE_OPTIONS = dict(compression="zstd", use_dictionary=["strategy"],
                             write_statistics=["scenario", "strategy"])


class AtomicParquetWriter:
    """A ParquetWriter on a temporary file in the target's folder; commit() renames it."""

    def __init__(self, path: str | Path, schema: pa.Schema, **options):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp",
                                   dir=self.path.parent)
        os.fchmod(fd, default_mode())   # mkstemp's 0600 would survive the rename
        os.close(fd)
        self.tmp = Path(tmp)
        self.writer = pq.ParquetWriter(self.tmp, schema, **(options or {"compression": "zstd"}))

    def write(self, table: pa.Table) -> None:
        self.writer.write_table(table)

    def commit(self) -> Path:
        self.writer.close()
        with open(self.tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(self.tmp, self.path)
        return self.path

    def abort(self) -> None:
        try:
            self.writer.close()
        finally:
            self.tmp.unlink(missing_ok=True)


class MetricsWriter:
    """A simulate() chunk hook writing metrics.parquet one row group per chunk."""

    def __init__(self, plan: CompiledScenario, path: str | Path,
                 job_columns: tuple[str, ...] = (), status: dict | None = None):
        self.plan = plan
        self.schema = metrics_schema(plan, job_columns, status)
        self.file = AtomicParquetWriter(path, self.schema, **METRICS_WRITE_OPTIONS)

    def __call__(self, first: int, metrics: np.ndarray, world: np.ndarray,
                 node_times: np.ndarray, buffers=None) -> None:
        """One chunk's rows; `buffers`: metrics_batch's."""
        self.file.write(metrics_batch(self.plan, first, metrics, world, self.schema,
                                      buffers))

    def commit(self) -> Path:
        return self.file.commit()

    def abort(self) -> None:
        self.file.abort()


def bands_table(bands: CapacityBands) -> pa.Table:
    """Long format: one row per (strategy, day)."""
    n_days = bands.days.size
    columns = {
        "strategy": np.repeat(np.array(bands.strategy_names, dtype=object), n_days),
        "day": np.tile(bands.days, len(bands.strategy_names)),
    }
    for j, label in enumerate(("p10", "p50", "p90")):
        columns[f"capacity_{label}"] = bands.total[:, :, j].ravel()
    for j, label in enumerate(("p10", "p50", "p90")):
        columns[f"largest_island_{label}"] = bands.largest[:, :, j].ravel()
    columns["p_below_baseline"] = bands.p_below_baseline.ravel()
    table = pa.Table.from_pydict(columns)
    metadata = {b"quantile_method": b"inverted_cdf", b"units": b"H100-eq",
                b"day_rule": b"events with time <= day count", b"samples": str(bands.samples).encode(),
                # 0: exact; else (drawn performance) each band value is within half of it
                b"resolution_h100_eq": repr(bands.resolution).encode()}
    return table.replace_schema_metadata(metadata)


def write_bands(path: str | Path, bands: CapacityBands) -> Path:
    sink = pa.BufferOutputStream()
    pq.write_table(bands_table(bands), sink, compression="zstd")
    return write_atomic(path, sink.getvalue().to_pybytes())
