"""Costs through the pipeline (issue 13): kept by simulate() apart from the metrics, counted by
the memory estimate, written to metrics.parquet, summarized in summary.json (schema), said in
the horizon warning and printed.

The cost numbers here come from a fake backend (the NumPy backend's metrics with synthetic
cost columns that depend on the scenario index only), so every statistic can be checked
against numpy on arrays built independently of the run; the kernels' own costs are
tests/backends/test_costs_closed_forms.py's and tests/backends/test_costs_parity.py's.
"""
from __future__ import annotations

import json
import types
from dataclasses import replace

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

import mcrisk.app.run as run_module
from mcrisk.results.horizon import horizon_warnings
from mcrisk.backends import Backend, select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.results.costs import COST_MEANINGS, summarize_costs
from mcrisk.core.definitions import COSTS, METRICS, N_COSTS, N_METRICS
from mcrisk.backends.chunks import RUNTIME_BYTES, memory_needed, simulate

from ..helpers import MINIMAL, schema_errors

SAMPLES = 200


def synthetic_costs(first: int, count: int, n_strategies: int) -> np.ndarray:
    """[count, s, N_COSTS]: components that depend on the scenario index only (so any chunk
    size gives the same), spread over a few hundred thousand, with atoms at 0 in one column;
    cost_total is their sum in COSTS order, as the kernels add it."""
    i = np.arange(first, first + count, dtype=np.float64)[:, None, None]
    s = np.arange(n_strategies, dtype=np.float64)[None, :, None]
    k = np.arange(1, N_COSTS, dtype=np.float64)[None, None, :]
    parts = ((i * 7919.0 + s * 104729.0 + k * 31.0) % 1009.0) * 250.0 * (s + 1.0) * k
    parts[:, :, COSTS.index("cost_mitigation") - 1] *= (i[:, :, 0] % 3 == 0)   # atoms at 0
    total = parts[:, :, 0].copy()
    for j in range(1, N_COSTS - 1):
        total += parts[:, :, j]
    return np.concatenate([total[:, :, None], parts], axis=2)


def fake_backend() -> Backend:
    """The NumPy backend's metrics (of the plan without costs) followed by synthetic_costs:
    the wider output every backend returns for a plan with costs."""
    numpy = select_backend("numpy")

    def simulate_chunk(plan, seed, first, count, keep_nodes=False):
        metrics, world, nodes = numpy.simulate_chunk(replace(plan, n_costs=0), seed, first,
                                                     count, keep_nodes)
        costs = synthetic_costs(first, count, plan.n_strategies)[:, :, :plan.n_costs]
        return np.concatenate([metrics, costs], axis=2), world, nodes

    return Backend("numpy", types.SimpleNamespace(simulate_chunk=simulate_chunk),
                   "a test's fake: numpy metrics and synthetic costs")


@pytest.fixture(scope="module")
def plain_plan():
    from mcrisk.scenario import load_scenario
    return compile_scenario(load_scenario(str(MINIMAL)))


@pytest.fixture(scope="module")
def cost_plan(plain_plan):
    return replace(plain_plan, n_costs=N_COSTS)


# ---- simulate: kept apart, streamed whole -----------------------------------------------------

def test_simulate_keeps_costs_apart_and_the_hooks_see_the_whole_chunk(plain_plan, cost_plan):
    seen = []
    result = simulate(cost_plan, SAMPLES, 5, fake_backend(), chunk_size=64,
                      chunk_hooks=(lambda first, m, w, n: seen.append((first, m.copy())),))
    plain = simulate(plain_plan, SAMPLES, 5, select_backend("numpy"), chunk_size=64)
    assert result.metrics.shape == (SAMPLES, cost_plan.n_strategies, N_METRICS)
    np.testing.assert_array_equal(result.metrics, plain.metrics)
    np.testing.assert_array_equal(result.costs, synthetic_costs(0, SAMPLES, cost_plan.n_strategies))
    assert plain.costs is None
    assert [first for first, _ in seen] == [0, 64, 128, 192]
    assert all(m.shape[2] == N_METRICS + N_COSTS for _, m in seen)
    whole = np.concatenate([m for _, m in seen])
    np.testing.assert_array_equal(whole[:, :, :N_METRICS], plain.metrics)
    np.testing.assert_array_equal(whole[:, :, N_METRICS:], result.costs)


def test_a_backend_without_the_plans_costs_is_refused(cost_plan):
    with pytest.raises(ValueError, match="returned 6 columns .* the plan needs 15"):
        simulate(cost_plan, 10, 1, _six_wide(), 10)


def _six_wide() -> Backend:
    numpy = select_backend("numpy")
    return Backend("numpy", types.SimpleNamespace(
        simulate_chunk=lambda plan, seed, first, count, keep_nodes=False: numpy.simulate_chunk(
            replace(plan, n_costs=0), seed, first, count, keep_nodes)), "six columns only")


def test_precision_runs_keep_costs_as_they_grow(cost_plan):
    from mcrisk.results.precision import PrecisionTarget
    from mcrisk.app.precision import simulate_to_precision

    target = PrecisionTarget(relative=1e-9, floor=1e-9, start=100, max_samples=260)
    result, _ = simulate_to_precision(cost_plan, 2, fake_backend(), target, chunk_size=64)
    assert result.samples == 260
    np.testing.assert_array_equal(result.costs, synthetic_costs(0, 260, cost_plan.n_strategies))


# ---- memory ---------------------------------------------------------------------------------

def test_memory_needed_counts_the_kept_costs(plain_plan, cost_plan):
    """Where the analysis outweighs a chunk in flight (many scenarios), costs add exactly
    samples x strategies x n_costs x 8 bytes; with few, the kept arrays byte for byte."""
    big = 3_000_000
    grown = memory_needed(cost_plan, big, keep_nodes=False) - memory_needed(
        plain_plan, big, keep_nodes=False)
    assert grown == big * cost_plan.n_strategies * N_COSTS * 8
    result = simulate(cost_plan, 300, 1, fake_backend(), chunk_size=128)
    kept = result.metrics.nbytes + result.costs.nbytes + result.world.nbytes
    chunk = 128 * (cost_plan.n_strategies * (N_METRICS + N_COSTS) + cost_plan.n_quantities) * 8
    analysis = max(2 * result.world.nbytes, 2 * 300 * 8)
    assert memory_needed(cost_plan, 300, 128, keep_nodes=False) == (
        RUNTIME_BYTES + kept + max(chunk, analysis))


# ---- summary.json ----------------------------------------------------------------------------

def _p90_ci(values: np.ndarray):
    ci = stats.quantile_test(values, q=float(np.quantile(values, 0.9)),
                             p=0.9).confidence_interval(0.95)
    return [float(ci.low), float(ci.high)]


def test_the_cost_summary_is_numpys_on_the_raw_arrays():
    costs = synthetic_costs(0, 500, 3)
    summary = summarize_costs(costs, ("a", "b", "c"))
    for s, name in enumerate("abc"):
        assert list(summary[name]) == list(COSTS)
        for k, column in enumerate(COSTS):
            values = costs[:, s, k]
            got = summary[name][column]
            assert got["mean"] == pytest.approx(np.mean(values), rel=1e-15)
            for key, q in (("p50", 50), ("p90", 90), ("p99", 99)):
                assert got[key] == np.percentile(values, q), (name, column, key)
            assert got["p90_ci"] == _p90_ci(values)


@pytest.fixture(scope="module")
def cost_run(tmp_path_factory, cost_plan):
    """A whole run with an output folder on the fake backend and a plan with costs."""
    out = tmp_path_factory.mktemp("costs") / "out"
    patch = pytest.MonkeyPatch()
    patch.setattr(run_module, "compile_scenario", lambda scenario: replace(
        compile_scenario(scenario), n_costs=N_COSTS))
    patch.setattr(run_module, "select_backend", lambda name: fake_backend())
    try:
        run = run_module.run_scenario(str(MINIMAL), samples=SAMPLES, seed=4, out_dir=out,
                                      chunk_size=64, report=False, mitigation=False)
    finally:
        patch.undo()
    return run


def test_summary_json_has_the_costs_and_validates(cost_run):
    summary = json.loads((cost_run.out_dir / "summary.json").read_text())
    assert schema_errors(summary) == []
    assert summary["costs"] == {"currency": "USD", "window_days": [0.0, cost_run.plan.horizon],
                                "columns": COST_MEANINGS}
    costs = synthetic_costs(0, SAMPLES, cost_run.plan.n_strategies)
    for s, name in enumerate(cost_run.plan.strategy_names):
        per = summary["strategies"][name]["costs"]
        assert list(per) == list(COSTS)
        total = costs[:, s, 0]
        assert per["cost_total"]["p90"] == np.percentile(total, 90)
        assert per["cost_total"]["p90_ci"] == _p90_ci(total)
        assert per["cost_total"]["mean"] == pytest.approx(np.mean(total), rel=1e-15)
    broken = json.loads(json.dumps(summary))
    del broken["strategies"][cost_run.plan.strategy_names[0]]["costs"]["cost_crews"]
    del broken["costs"]["currency"]
    errors = schema_errors(broken)
    assert any("cost_crews" in e for e in errors) and any("currency" in e for e in errors)


def test_metrics_parquet_has_the_cost_columns_after_the_metrics(cost_run):
    table = pq.read_table(cost_run.out_dir / "metrics.parquet")
    names = table.column_names
    assert names[2:2 + N_METRICS + N_COSTS] == [*METRICS, *COSTS]
    costs = synthetic_costs(0, SAMPLES, cost_run.plan.n_strategies)
    for k, column in enumerate(COSTS):       # scenario-major rows: all strategies of one
        np.testing.assert_array_equal(table[column].to_numpy(), costs[:, :, k].ravel())


def test_without_costs_nothing_is_added(tmp_path, plain_plan):
    run = run_module.run_scenario(str(MINIMAL), samples=60, seed=4, backend="numpy",
                                  out_dir=tmp_path / "out", report=False, mitigation=False)
    assert run.result.costs is None
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert "costs" not in summary
    assert not any("costs" in per for per in summary["strategies"].values())
    names = pq.read_schema(tmp_path / "out" / "metrics.parquet").names
    assert not [n for n in names if n.startswith("cost")]
    assert run.replay(3)[0].shape == (1, plain_plan.n_strategies, N_METRICS)


def test_replay_gives_the_six_metrics_the_run_kept(cost_run):
    metrics, world, nodes = cost_run.replay(7)
    np.testing.assert_array_equal(metrics[0], cost_run.result.metrics[7])


# ---- the horizon warning ----------------------------------------------------------------------

def _late(costs: bool) -> dict:
    summary = {"horizon_days": 540, "ranking": ["late"],
               "strategies": {"late": {"beyond_horizon": {"probability": 0.5,
                                                          "completion_p99": 700.0}}}}
    return {**summary, "costs": {"currency": "USD"}} if costs else summary


def test_the_horizon_warning_says_costs_are_cut_too():
    assert ("its trough days, shortfall, homeless days and costs count only what happens "
            "before day 540") in horizon_warnings(_late(costs=True))[0]
    assert ("its trough days, shortfall and homeless days count only what happens before "
            "day 540") in horizon_warnings(_late(costs=False))[0]


# ---- the terminal and summary.md -------------------------------------------------------------

def _expected_rows(run) -> dict[str, tuple[list[float], list[tuple[str, float]]]]:
    """Per strategy: cost_total's mean, P50, P90, P99 and the three components with the
    largest mean, from the synthetic arrays with numpy."""
    from mcrisk.core.labels import label

    costs = synthetic_costs(0, SAMPLES, run.plan.n_strategies)
    rows = {}
    for s, name in enumerate(run.plan.strategy_names):
        total = costs[:, s, 0]
        stats_ = [float(np.mean(total)), *(float(np.percentile(total, q)) for q in (50, 90, 99))]
        means = [(label(c), float(np.mean(costs[:, s, k])))
                 for k, c in enumerate(COSTS) if k > 0]
        rows[name] = stats_, sorted(means, key=lambda pair: -pair[1])[:3]
    return rows


def test_the_terminal_prints_the_cost_table_under_the_ranking(cost_run, capsys, monkeypatch):
    from mcrisk.results.compare import money_text
    from mcrisk.cli import format_costs, main

    text = format_costs(cost_run.summary)
    lines = text.splitlines()
    assert lines[0].startswith("cost in USD over days 0-")
    assert len(lines) == 2 + len(cost_run.plan.strategy_names)
    for name, (numbers, largest) in _expected_rows(cost_run).items():
        row = next(line for line in lines if f" {name} " in line)
        for number in numbers:
            assert money_text(number, "USD") in row
        parts = ", ".join(f"{label} {money_text(mean, 'USD')}" for label, mean in largest)
        assert row.endswith(parts)
    # printed by `mcrisk run` under the ranked table
    monkeypatch.setattr(run_module, "compile_scenario", lambda scenario: replace(
        compile_scenario(scenario), n_costs=N_COSTS))
    monkeypatch.setattr(run_module, "select_backend", lambda name: fake_backend())
    assert main(["run", str(MINIMAL), "--samples", str(SAMPLES), "--seed", "4", "--quiet",
                 "--chunk-size", "64"]) == 0
    printed = capsys.readouterr().out
    assert text in printed and printed.index("rank") < printed.index(text)


def test_summary_md_has_the_cost_table(cost_run):
    from mcrisk.results.compare import money_text
    from mcrisk.report.markdown import summary_markdown

    text = summary_markdown(cost_run.summary, [])     # the short form: the P90 in the ranking
    assert "| trough depth | trough days | shortfall | completion | cost | decided by |" in text
    assert "cost in USD" in text and "costs" in text.splitlines()[-1] + text.splitlines()[-2]
    for name in cost_run.summary["ranking"]:
        row = next(line for line in text.splitlines() if line.startswith("|") and f" {name} " in line)
        p90 = cost_run.summary["strategies"][name]["costs"]["cost_total"]["p90"]
        assert money_text(p90, "USD").replace("$", "\\$") in row


def test_no_cost_table_without_costs(tmp_path):
    from mcrisk.cli import format_costs
    from mcrisk.report.markdown import summary_markdown

    run = run_module.run_scenario(str(MINIMAL), samples=60, seed=4, backend="numpy",
                                  mitigation=False)
    assert format_costs(run.summary) == ""
    assert "cost" not in summary_markdown(run.summary, []).lower()


# ---- end to end on a scenario with [costs] ----------------------------------------------------

COSTS_SMALL = MINIMAL.parent.parent / "tests" / "data" / "costs-small.toml"


@pytest.mark.parametrize("backend", ["numpy", pytest.param("numba", marks=pytest.mark.slow)])
def test_a_cost_scenario_end_to_end(tmp_path, backend):
    """The backend's own costs: kept, written to metrics.parquet as kept, summarized as
    numpy summarizes the parquet's columns, in the scenario's currency."""
    from mcrisk.plan.record import FIELD

    if backend != "numpy" and not FIELD["span_rate"].kernel:
        pytest.skip("the kernels do not compute costs yet (plan.record's cost fields kernel=False)")
    run = run_module.run_scenario(str(COSTS_SMALL), samples=400, seed=9, backend=backend,
                                  out_dir=tmp_path / "out", chunk_size=150, report=False,
                                  mitigation=False)
    n, s = 400, run.plan.n_strategies
    assert run.result.costs.shape == (n, s, N_COSTS)
    table = pq.read_table(tmp_path / "out" / "metrics.parquet")
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert schema_errors(summary) == []
    assert summary["costs"]["currency"] == run.scenario.costs.currency
    for k, column in enumerate(COSTS):
        written = table[column].to_numpy().reshape(n, s)
        np.testing.assert_array_equal(written, run.result.costs[:, :, k])
        for j, name in enumerate(run.plan.strategy_names):
            got = summary["strategies"][name]["costs"][column]
            assert got["mean"] == pytest.approx(np.mean(written[:, j]), rel=1e-12, abs=1e-9)
            assert [got["p50"], got["p90"], got["p99"]] == [
                float(np.percentile(written[:, j], q)) for q in (50, 90, 99)]
    assert summary["strategies"][run.plan.strategy_names[0]]["costs"]["cost_total"]["mean"] > 0
