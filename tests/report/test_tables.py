"""metrics.parquet and capacity_bands.parquet (mcrisk.report.tables), and their atomic writing."""
from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from mcrisk.core.definitions import COSTS, METRICS, N_METRICS
from mcrisk.results import bands as bands_module
from mcrisk.report import tables as tables_module
from mcrisk.report.tables import input_quantities, metrics_batch, metrics_schema
from mcrisk.app.run import run_scenario
from ..helpers import ROOT

MINIMAL = ROOT / "scenarios" / "minimal.toml"


@pytest.fixture(scope="module")
def minimal_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("tables")
    return run_scenario(str(MINIMAL), samples=700, seed=4, backend="cpu", out_dir=out,
                        chunk_size=256, report=False)


def test_metrics_parquet_has_one_row_per_scenario_and_strategy(minimal_run):
    run = minimal_run
    path = run.out_dir / "metrics.parquet"
    meta = pq.ParquetFile(path).metadata
    assert meta.num_rows == 700 * 2
    assert meta.num_row_groups == 3                      # one per chunk of 256
    table = pq.read_table(path)
    assert table.column_names[:8] == ["scenario", "strategy", *METRICS]
    assert table.schema.field("power_violation").type == pa.bool_()
    np.testing.assert_array_equal(table["scenario"].to_numpy(), np.repeat(np.arange(700), 2))
    assert table["strategy"].to_pylist() == ["swap-gated", "drain-on-day"] * 700
    for k, metric in enumerate(METRICS[:-1]):
        np.testing.assert_array_equal(table[metric].to_numpy(),
                                      run.result.metrics[:, :, k].ravel())
    np.testing.assert_array_equal(table["power_violation"].to_numpy(),
                                  run.result.metrics[:, :, -1].ravel() > 0.5)


def test_metrics_parquet_carries_the_drawn_inputs(minimal_run):
    run = minimal_run
    table = pq.read_table(run.out_dir / "metrics.parquet")
    names = run.plan.quantity_names
    arrival = names.index("shipment.S1.arrival")
    np.testing.assert_allclose(table["shipment.S1.arrival"].to_numpy()[::2],
                               run.result.world[:, arrival], rtol=1e-6)
    # each scenario's inputs repeat on every strategy's row
    np.testing.assert_array_equal(table["shipment.S1.arrival"].to_numpy()[::2],
                                  table["shipment.S1.arrival"].to_numpy()[1::2])
    attempts = table["unit.N1.burn_in.attempts"].to_numpy()
    assert table.schema.field("unit.N1.burn_in.attempts").type == pa.int32()
    assert attempts.min() >= 1
    assert "shipment.S1.arrival.delay" not in table.column_names


def test_the_documented_input_subset_of_the_reference(reference_plan):
    kept = {reference_plan.quantity_names[q] for q in input_quantities(reference_plan)}
    for name in ("shared.vendor", "shipment.S4.arrival", "hall.B.energized", "island.xdr.ready",
                 "unit.N16.burn_in", "unit.N16.burn_in.attempts", "row.A9.retrofit",
                 "cost.A.price_per_kw_month", "cost.crews.per_crew_day"):
        assert name in kept
    for name in ("shipment.S1.arrival.delay", "unit.SU1.drain", "unit.N01.install",
                 "island.xdr.install"):
        assert name not in kept
    prices = 8     # hall A and B: reserved kW and energy; running, waiting, shortfall, crews
    assert len(kept) == 1 + 4 + 1 + 1 + 16 * 2 + 9 + prices


def test_capacity_bands_parquet_is_long_format(minimal_run):
    table = pq.read_table(minimal_run.out_dir / "capacity_bands.parquet")
    assert table.num_rows == 2 * 201                     # 2 strategies x days 0..200
    assert table.column_names == ["strategy", "day", "capacity_p10", "capacity_p50",
                                  "capacity_p90", "largest_island_p10", "largest_island_p50",
                                  "largest_island_p90", "p_below_baseline"]
    assert table.schema.metadata[b"quantile_method"] == b"inverted_cdf"
    rows = table.to_pylist()
    assert rows[0] == {**rows[0], "strategy": "swap-gated", "day": 0, "capacity_p50": 128.0}
    p10, p50, p90 = (table[f"capacity_{q}"].to_numpy() for q in ("p10", "p50", "p90"))
    assert np.all(p10 <= p50) and np.all(p50 <= p90)


def test_a_failed_run_leaves_the_previous_tables_and_no_temp_files(tmp_path, monkeypatch):
    run_scenario(str(MINIMAL), samples=300, seed=4, backend="cpu", out_dir=tmp_path,
                 chunk_size=100, report=False)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    calls = []

    def fail_on_second_chunk(self, first, metrics, world, node_times):
        calls.append(first)

        def fail():
            if len(calls) == 2:
                raise RuntimeError("simulated crash mid-run")
        return [fail]

    # the band collector's tasks of a chunk, which the run's one chunk hook runs
    monkeypatch.setattr(bands_module.BandCollector, "tasks", fail_on_second_chunk)
    with pytest.raises(RuntimeError, match="mid-run"):
        run_scenario(str(MINIMAL), samples=600, seed=9, backend="cpu", out_dir=tmp_path,
                     chunk_size=100, report=False)
    after = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert after == before                               # no temp file, nothing replaced


def test_metrics_batch_equals_the_rows_built_one_by_one(reference_plan):
    """The chunk's table (columns as contiguous rows of three arrays, the strategy names as one
    buffer) holds exactly what one row per scenario x strategy, built value by value, holds."""
    plan = reference_plan
    rng = np.random.default_rng(3)
    c, s = 7, plan.n_strategies
    # the kernel's row: the metrics, then the cost columns of a plan with costs
    metrics = rng.gamma(2.0, 50.0, (c, s, N_METRICS + plan.n_costs))
    violation = METRICS.index("power_violation")
    metrics[:, :, violation] = rng.integers(0, 2, (c, s))
    world = rng.gamma(2.0, 10.0, (c, plan.n_quantities))
    world[:, [q for q in range(plan.n_quantities)
              if plan.quantity_names[q].endswith(".attempts")]] = 2.0
    schema = tables_module.metrics_schema(plan)
    table = tables_module.metrics_batch(plan, 40, metrics, world, schema)
    assert table.schema.equals(schema)
    rows = table.to_pylist()
    kept = input_quantities(plan)
    for i in range(c):
        for k in range(s):
            row = rows[i * s + k]
            assert row["scenario"] == 40 + i and row["strategy"] == plan.strategy_names[k]
            assert [row[m] for m in METRICS[:-1]] == list(metrics[i, k, :violation])
            assert row["power_violation"] == bool(metrics[i, k, violation] > 0.5)
            assert [row[c] for c in COSTS[:plan.n_costs]] == list(metrics[i, k, N_METRICS:])
            for q in kept:
                name = plan.quantity_names[q]
                expected = world[i, q]
                if name.endswith(".attempts"):
                    assert row[name] == int(expected)
                else:
                    assert row[name] == float(np.float32(expected))


def test_metrics_parquet_encodes_plainly_with_statistics_where_they_skip(minimal_run):
    """Dictionary encoding only on the strategy names (on floats it tripled the writing time
    and grew the file); min/max statistics on scenario and strategy only."""
    meta = pq.ParquetFile(minimal_run.out_dir / "metrics.parquet").metadata
    group = meta.row_group(0)
    columns = {group.column(j).path_in_schema: group.column(j) for j in range(group.num_columns)}
    assert "RLE_DICTIONARY" in columns["strategy"].encodings
    for name in ("scenario", "trough_depth", "shipment.S1.arrival"):
        assert "RLE_DICTIONARY" not in columns[name].encodings, name
    assert columns["scenario"].statistics.min == 0
    assert columns["trough_depth"].statistics is None
    assert columns["scenario"].compression == "ZSTD"


def test_metrics_batch_in_reused_buffers_equals_fresh(reference_plan):
    """Built in one set of buffers chunk after chunk (a smaller chunk second, the buffers
    scribbled over in between), the rows equal those built in fresh arrays."""
    from mcrisk.backends.buffers import ChunkBuffers

    plan, rng, buffers = reference_plan, np.random.default_rng(5), ChunkBuffers()
    schema = metrics_schema(plan)
    for first, c in ((0, 9), (9, 4)):
        metrics = rng.gamma(2.0, 50.0, (c, plan.n_strategies, N_METRICS + plan.n_costs))
        world = rng.gamma(2.0, 10.0, (c, plan.n_quantities))
        reused = metrics_batch(plan, first, metrics, world, schema, buffers)
        assert reused.equals(metrics_batch(plan, first, metrics, world, schema))
        for storage in buffers._storage.values():
            storage[...] = 7                            # what the last chunk left
