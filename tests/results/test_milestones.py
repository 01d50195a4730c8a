"""Milestones (mcrisk.results.milestones): hand calculations with fixed durations, brute-force
percentiles and criticality over kept per-scenario times, the gating logic in every scenario,
backend parity, and the outputs (summary.json, milestones.parquet, CSV, schedule, dates)."""
from __future__ import annotations

import csv
import datetime as dt
import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest
from scipy import stats

from mcrisk.backends import gpu_unavailable_reason, select_backend
from mcrisk.cli import main
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import NODE_CREW
from mcrisk.core.errors import ScenarioError
from mcrisk.results import milestones as milestones_module
from mcrisk.results.milestones import (MilestoneCollector, _ci_ranks, node_keys, critical_nodes,
                               day_date, definitions, milestone_times)
from mcrisk.report.html.gantt import gantt_rows, gantt_svg
from mcrisk.report.schedule_tables import format_schedule, write_csvs
from mcrisk.app.run import run_scenario
from mcrisk.scenario import load_scenario
from mcrisk.backends.chunks import simulate

from ..helpers import MINIMAL, REFERENCE, schema_errors
from ..parity import NUMPY_MATH


def _fixed(tmp_path, start_date: str | None = None):
    """minimal.toml with every duration fixed: no delay, no burn-in failure, 10-day retrofit."""
    text = MINIMAL.read_text()
    text = text.replace("fail_first = 0.3", "fail_first = 0.0")
    text = text.replace("fail_retry = 0.1", "fail_retry = 0.0")
    text = text.replace('days = { dist = "uniform", min = 7, max = 14 }', "days = 10")
    text = text.replace('arrival = { day = 30, delay = { dist = "triangular", min = 0, '
                        'mode = 3, max = 10 } }', "arrival = { day = 30 }")
    if start_date:
        text = text.replace("horizon_days = 200", f"horizon_days = 200\nstart_date = {start_date}")
    path = tmp_path / "fixed.toml"
    path.write_text(text)
    return path


class _Keep:
    """A hook that keeps every chunk's node times and world (brute force needs them)."""

    def __init__(self):
        self.nodes, self.world = [], []

    def __call__(self, first, metrics, world, node_times):
        self.nodes.append(node_times.copy())
        self.world.append(world.copy())

    def arrays(self):
        return np.concatenate(self.nodes), np.concatenate(self.world)


def _collect(path, samples, seed=1, backend="cpu", **options):
    scenario = load_scenario(str(path))
    plan = compile_scenario(scenario)
    collector = MilestoneCollector(plan, scenario, **options)
    keep = _Keep()
    result = simulate(plan, samples, seed, select_backend(backend), chunk_size=700,
                      chunk_hooks=(collector, keep))
    return scenario, plan, collector, keep, result


def _by_key(summary, strategy):
    return {m["key"]: m for m in summary["strategies"][strategy]}


def test_node_keys_follow_the_compiled_node_ids():
    scenario = load_scenario(str(REFERENCE))
    plan = compile_scenario(scenario)
    keys = node_keys(scenario)
    assert len(keys) == plan.n_nodes
    for key, name in zip(keys, plan.node_names):
        assert key[1] in name


def test_fixed_durations_give_the_hand_calculated_times_and_critical_path(tmp_path):
    _, _, collector, _, _ = _collect(_fixed(tmp_path), 50)
    summary = collector.summary()
    gated = _by_key(summary, "swap-gated")
    # arrival 30; island ib-new 20 + 5 = 25; row R3 retrofitted from day 0: 10; install at
    # max(30, 10) = 30, burned in 30 + 2 + 4 = 36, accepted max(36, 25) = 36; both pods
    # drain at 36 (the later acceptance), removed 36 + 1 + 3 = 40
    expected = {"arrival:S1": 30, "island:ib-new": 25, "ready:R3": 10, "energized:H": 0,
                "install:N1": 30, "burned_in:N1": 36, "accepted:N1": 36, "accepted:N2": 36,
                "drain:E1": 36, "removed:E1": 40, "removed:E2": 40, "completion": 40,
                "wave:accepted:S1": 36, "wave:install:S1": 30, "wave:drain:E1,E2": 36,
                "wave:removed:E1,E2": 40, "wave:hall:H": 36}
    for key, day in expected.items():
        m = gated[key]
        assert (m["p10"], m["p50"], m["p90"], m["mean"]) == (day, day, day, day), key
        assert m["p90_ci"] == [day, day]
    # not in this strategy's schedule: rows R1, R2 take no rack, island ib-old no unit
    assert not {"ready:R1", "ready:R2", "island:ib-old"} & set(gated)
    # critical path: removed E1 (tie with E2: the first) <- drain E1 <- accepted N1 (tie with
    # N2: the first dependency) <- burned in N1 <- install N1 <- arrival S1 (30 > row R3's 10)
    critical = {k for k, m in gated.items() if m["criticality"] == 1.0}
    assert critical == {"removed:E1", "drain:E1", "accepted:N1", "burned_in:N1",
                        "install:N1", "arrival:S1", "completion", "wave:accepted:S1",
                        "wave:install:S1", "wave:drain:E1,E2", "wave:removed:E1,E2",
                        "wave:hall:H"}
    assert all(m["criticality"] == 0.0 for k, m in gated.items() if k not in critical)

    day = _by_key(summary, "drain-on-day")
    # pods drain at 30, removed 34; one crew: R1 34 + 10 = 44, R2 waits for it: 44 + 10 = 54;
    # N1 installs 44, accepted 50; N2 installs 54, accepted 60 = completion
    expected = {"drain:E1": 30, "removed:E1": 34, "removed:E2": 34, "ready:R1": 44,
                "ready:R2": 54, "install:N1": 44, "accepted:N1": 50, "install:N2": 54,
                "accepted:N2": 60, "completion": 60}
    for key, value in expected.items():
        assert day[key]["p50"] == value, key
    assert "ready:R3" not in day
    critical = {k for k, m in day.items() if m["criticality"] == 1.0 and ":" in k
                and not k.startswith("wave")}
    # R2 waited for the crew, so the path continues to R1, then E1's removal and drain
    assert critical == {"accepted:N2", "burned_in:N2", "install:N2", "ready:R2", "ready:R1",
                        "removed:E1", "drain:E1"}


def test_completion_milestone_is_the_completion_metric():
    _, plan, collector, _, result = _collect(REFERENCE, 200)
    summary = collector.summary()
    for s, name in enumerate(plan.strategy_names):
        done = _by_key(summary, name)["completion"]
        values = result.metrics[:, s, 4]
        assert done["p50"] == np.quantile(values, 0.5)
        assert done["p90"] == np.quantile(values, 0.9)
        assert done["criticality"] == 1.0


def _walk(plan, s, t, world):
    """Scalar, per-scenario critical path (independent of critical_nodes' vectorization)."""
    on = set()
    ends = list(plan.completion_node)
    v = max(ends, key=lambda u: (t[u], -ends.index(u)))
    crew_rows = [u for u in range(plan.n_nodes) if plan.node_kind[s, u] == NODE_CREW]
    while v is not None:
        on.add(int(v))
        deps = list(plan.dep_idx[s, plan.dep_ptr[s, v]:plan.dep_ptr[s, v + 1]])
        base = plan.node_base_const[s, v]
        if plan.node_base_q[v] >= 0:
            base = max(base, world[plan.node_base_q[v]])
        nxt = None
        if deps:
            best = max(t[d] for d in deps)
            if best >= base:
                nxt = next(d for d in deps if t[d] == best)
        if v in crew_rows:
            adds = plan.node_add_const[s, v] + sum(world[q] for q in plan.node_add_q[s, v]
                                                   if q >= 0)
            begin = t[v] - adds
            start = max([base] + [t[d] for d in deps])
            if begin > start + 1e-7:
                near = [u for u in crew_rows if u != v and abs(t[u] - begin) <= 1e-7]
                if near:
                    nxt = min(near, key=lambda u: (abs(t[u] - begin), crew_rows.index(u)))
        v = nxt
    return on


def test_critical_path_matches_a_scalar_walk():
    scenario = load_scenario(str(REFERENCE))
    plan = compile_scenario(scenario)
    nodes, world = simulate_nodes(plan, 120)
    for s in range(plan.n_strategies):
        fast = critical_nodes(plan, s, nodes[:, s], world)
        for i in range(nodes.shape[0]):
            assert set(np.flatnonzero(fast[i])) == _walk(plan, s, nodes[i, s], world[i]), (s, i)


def simulate_nodes(plan, samples, seed=3):
    keep = _Keep()
    simulate(plan, samples, seed, select_backend("cpu"), chunk_hooks=(keep,))
    return keep.arrays()


@pytest.mark.slow
@pytest.mark.parametrize("samples, keep_exact, n_bins", [(500, 10_000, None), (1_200, 300, None),
                                                    (1_200, 300, 512)])
def test_percentiles_match_brute_force(samples, keep_exact, n_bins):
    """Exact mode equals numpy.quantile of the kept times; past keep_exact (binned) every
    statistic is within half its milestone's bin (0.005 day, or wider where 512 bins cannot
    hold a milestone's times at 0.01 day), and the P90 interval uses the same ranks as
    scipy.stats.quantile_test."""
    scenario, plan, collector, keep, _ = _collect(REFERENCE, samples, keep_exact=keep_exact,
                                                  n_bins=n_bins)
    summary = collector.summary()
    assert summary["exact"] is (keep_exact >= samples)
    nodes, world = keep.arrays()
    widths = []
    for s, items in enumerate(definitions(plan, scenario)):
        times = milestone_times(items, nodes[:, s])
        critical = critical_nodes(plan, s, nodes[:, s], world)
        for k, (item, m) in enumerate(zip(items, summary["strategies"][plan.strategy_names[s]])):
            tolerance = 0.0 if keep_exact >= samples else m["bin_days"] / 2 + 1e-9
            widths.append(m.get("bin_days", 0.0))
            column = times[:, k]
            for key, q in (("p10", 0.1), ("p50", 0.5), ("p90", 0.9)):
                assert abs(m[key] - np.quantile(column, q)) <= tolerance, (item.key, key)
            ci = stats.quantile_test(column, q=float(np.quantile(column, 0.9)), p=0.9)
            low, high = ci.confidence_interval(0.95)
            if column.min() < column.max():
                assert abs(m["p90_ci"][0] - low) <= tolerance
                assert abs(m["p90_ci"][1] - high) <= tolerance
            share = critical[:, list(item.members)].any(axis=1).mean()
            assert m["criticality"] == share
            assert math.isclose(m["mean"], column.mean(), rel_tol=1e-12)
    if n_bins is not None:                      # some milestone spreads over 5.12+ days
        assert max(widths) > 0.01 and summary["widest_bin_days"] == max(widths)


def test_ci_ranks_are_quantile_tests():
    x = np.random.default_rng(5).random(5_000)
    for n in (36, 37, 100, 999, 5_000):
        values = np.sort(x[:n])
        ci = stats.quantile_test(values, q=float(np.quantile(values, 0.9)), p=0.9)
        low, high = _ci_ranks(n)
        assert (values[low], values[high]) == tuple(ci.confidence_interval(0.95))


def test_gated_drains_never_start_before_the_acceptances_they_wait_for():
    scenario = load_scenario(str(REFERENCE))
    plan = compile_scenario(scenario)
    nodes, _ = simulate_nodes(plan, 3_000)
    node = {key: v for v, key in enumerate(node_keys(scenario))}
    checked = 0
    for s, strategy in enumerate(scenario.strategies):
        for unit, trigger in strategy.drains:
            if not trigger.on_accepted:
                continue
            waits = nodes[:, s, [node[("accepted", u)] for u in trigger.on_accepted]].max(axis=1)
            assert (nodes[:, s, node[("drain", unit)]] >= waits).all(), (strategy.name, unit)
            checked += 1
    assert checked == 16          # swing-gated's and hybrid-gated's eight drains each


def _same_milestones(a: dict, b: dict, rel: float = 0.0, share: float = 0.0) -> None:
    assert a.keys() == b.keys() and a["strategies"].keys() == b["strategies"].keys()
    for name in a["strategies"]:
        for x, y in zip(a["strategies"][name], b["strategies"][name], strict=True):
            assert x.keys() == y.keys() and x["key"] == y["key"]
            for key in ("mean", "p10", "p50", "p90"):
                assert math.isclose(x[key], y[key], rel_tol=rel, abs_tol=rel), (x["key"], key)
            for e, f in zip(x["p90_ci"], y["p90_ci"]):
                assert math.isclose(e, f, rel_tol=rel, abs_tol=rel), x["key"]
            assert abs(x["criticality"] - y["criticality"]) <= share, x["key"]


@pytest.mark.slow
def test_backends_agree_on_milestones():
    """The readable numpy reference and the Numba kernel give the same milestones (their
    drawn inputs differ in the last bit or two: numpy's and Numba's math libraries; the
    tolerance is tests/parity.py's for the pair)."""
    def summary(backend):
        return _collect(REFERENCE, 60, backend=backend)[2].summary()
    _same_milestones(summary("numpy"), summary("cpu"), rel=NUMPY_MATH.rtol, share=1 / 60)


@pytest.mark.gpu
@pytest.mark.skipif(gpu_unavailable_reason() is not None, reason="needs CuPy and a CUDA device")
def test_gpu_gives_the_cpu_milestones():
    """The GPU's node times equal the Numba kernel's up to the device's last-bit differences
    in exp/log (tests/backends/test_cuda.py), and so do the milestones reduced from them."""
    gpu = select_backend("gpu")
    scenario = load_scenario(str(REFERENCE))
    plan = compile_scenario(scenario)
    results = []
    for backend in (select_backend("cpu"), gpu):
        collector = MilestoneCollector(plan, scenario)
        simulate(plan, 3_000, 7, backend, chunk_size=1_000, chunk_hooks=(collector,))
        results.append(collector.summary())
    _same_milestones(results[0], results[1], rel=1e-11, share=1 / 3_000)


@pytest.mark.slow
def test_run_writes_milestones_everywhere_with_dates(tmp_path, capsys):
    out = tmp_path / "out"
    run = run_scenario(str(_fixed(tmp_path, "2027-01-04")), samples=60, backend="cpu",
                       out_dir=out, csv=True)
    summary = json.loads((out / "summary.json").read_text())
    m = _by_key(summary["milestones"], "swap-gated")["removed:E1"]
    assert summary["milestones"]["start_date"] == "2027-01-04"
    assert m["dates"] == {"p10": "2027-02-13", "p50": "2027-02-13", "p90": "2027-02-13"}
    table = pq.read_table(out / "milestones.parquet").to_pylist()
    row = next(r for r in table if r["strategy"] == "swap-gated" and r["key"] == "removed:E1")
    assert row["p50"] == 40 and row["p50_date"] == dt.date(2027, 2, 13)
    assert len(table) == sum(len(v) for v in summary["milestones"]["strategies"].values())
    with open(out / "milestones.csv", newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(table)
    assert {r["p90_date"] for r in rows if r["key"] == "completion"} == {"2027-02-13",
                                                                         "2027-03-05"}
    with open(out / "ranking.csv", newline="") as f:
        assert [r["strategy"] for r in csv.DictReader(f)] == summary["ranking"]
    with open(out / "strategies.csv", newline="") as f:
        first = next(csv.DictReader(f))
    assert float(first["completion_day_p90"]) == \
        summary["strategies"][first["strategy"]]["completion_day"]["p90"]
    page = (out / "report.html").read_text()
    assert 'id="schedule"' in page and "Sat 2027-02-13" in page
    assert run.detail.milestones == summary["milestones"]
    assert schema_errors(summary) == []              # the dated shape is in the schema


def test_undated_milestones_follow_the_schema(tmp_path):
    out = tmp_path / "out"
    run_scenario(str(_fixed(tmp_path)), samples=40, backend="cpu", out_dir=out, report=False)
    summary = json.loads((out / "summary.json").read_text())
    assert schema_errors(summary) == []
    summary["milestones"]["strategies"]["swap-gated"][0]["criticality"] = 1.5
    assert schema_errors(summary) != []


def test_run_without_csv_writes_no_csv(tmp_path):
    out = tmp_path / "out"
    run_scenario(str(_fixed(tmp_path)), samples=40, backend="cpu", out_dir=out, report=False)
    assert (out / "milestones.parquet").exists()
    assert not list(out.glob("*.csv"))
    summary = json.loads((out / "summary.json").read_text())
    assert summary["milestones"]["start_date"] is None
    assert "dates" not in summary["milestones"]["strategies"]["swap-gated"][0]


def test_schedule_command_prints_the_table(tmp_path, capsys):
    path = _fixed(tmp_path, "2027-01-04")
    assert main(["schedule", str(path), "drain-on-day", "--samples", "50",
                 "--backend", "cpu", "--quiet"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.startswith("completion"))
    assert line.split()[1:4] == ["60.0", "60.0", "60.0"]
    assert "Fri 2027-03-05" in line                  # day 60 of a year starting 2027-01-04
    assert "N2 accepted" not in out                  # per unit only with --all
    assert main(["schedule", str(path), "drain-on-day", "--samples", "50", "--backend",
                 "cpu", "--quiet", "--all"]) == 0
    assert "N2 accepted" in capsys.readouterr().out
    assert main(["schedule", str(path), "nope", "--samples", "50", "--quiet"]) == 2
    assert "no strategy 'nope'" in capsys.readouterr().err


def test_start_date_is_read_and_checked(tmp_path):
    assert load_scenario(str(_fixed(tmp_path, '"2027-01-04"'))).start_date == dt.date(2027, 1, 4)
    assert load_scenario(str(MINIMAL)).start_date is None
    for bad in ('"04/01/2027"', "2027-01-04T08:00:00", "20270104"):
        with pytest.raises(ScenarioError, match="start_date"):
            load_scenario(str(_fixed(tmp_path, bad)))


def test_day_date_floors_and_handles_missing():
    start = dt.date(2027, 1, 4)
    assert day_date(start, 0.0) == "2027-01-04"
    assert day_date(start, 0.999) == "2027-01-04"
    assert day_date(start, 1.0) == "2027-01-05"
    assert day_date(start, None) is None and day_date(None, 3.0) is None


def test_csv_cells_never_start_a_formula(tmp_path):
    summary = {"ranking": ["=cmd()"], "ranks": {},
               "strategies": {"=cmd()": {m: {"mean": 1.0, "p50": 1.0, "p90": 1.0,
                                             "p99": 1.0, "p90_ci": [1.0, 1.0]}
                                         for m in ("trough_depth", "trough_days",
                                                   "shortfall_gpu_days", "homeless_days",
                                                   "completion_day")}}}
    summary["strategies"]["=cmd()"]["power_violation"] = {"probability": 0.0}
    for path in write_csvs(tmp_path, summary):
        assert "\n=cmd()" not in path.read_text()
        assert "'=cmd()" in path.read_text()


def test_format_schedule_says_when_binned():
    milestones = {"samples": 100, "exact": False, "exact_up_to": 50, "bin_days": 0.01,
                  "start_date": None, "strategies": {"a": [
                      {"key": "completion", "name": "completion", "level": "wave",
                       "p10": 1.0, "p50": 2.0, "p90": 3.0, "p90_ci": None,
                       "criticality": 1.0}]}}
    text = format_schedule(milestones, "a")
    assert "within 0.005 day" in text and "[n/a]" in text


def test_gantt_draws_every_wave_milestone_escaped_with_a_date_axis():
    items = [{"key": "a", "name": "<b>row</b> & co", "group": "hall <H>", "level": "wave",
              "p10": 10.0, "p50": 20.0, "p90": 40.0, "criticality": 0.7},
             {"key": "b", "name": "N1 accepted", "group": "shipment S1", "level": "unit",
              "p10": 1.0, "p50": 2.0, "p90": 3.0, "criticality": 0.0},
             {"key": "c", "name": "completion", "group": "completion", "level": "wave",
              "p10": 50.0, "p50": 60.0, "p90": 95.0, "criticality": 1.0}]
    svg = gantt_svg("<script>x</script>", items, np.arange(101), np.r_[np.zeros(30),
                    np.ones(20), np.zeros(51)], dt.date(2027, 1, 4))
    assert "<script>" not in svg and "<b>" not in svg and "&lt;b&gt;row&lt;/b&gt; &amp; co" in svg
    assert svg.count("<title>") == 2                 # the per-unit line is rolled up
    assert ">Feb 2027<" in svg and ">Mar<" in svg and "day 0 = 2027-01-04" in svg
    assert svg.count('fill-opacity="0.3"') == 1      # one run of days below baseline
    assert gantt_rows(items)[0][0] == "hall <H>"     # halls before completion
    plain = gantt_svg("s", items, np.arange(101), np.zeros(101), None)
    assert ">40<" in plain and ">day<" in plain
    assert plain.count('fill="#999999"') == 2        # the legend's two swatches: no shading


def _with_edge_cases(nodes: np.ndarray, seed: int, ties: int, infinite: tuple[int, int],
                     missing: tuple[int, int]) -> np.ndarray:
    """A copy of node_times[c, s, v] whose first `ties` scenarios are rounded (ties
    everywhere), the next infinite[0] have infinite[1] random nodes at +inf and the next
    missing[0] have missing[1] at NaN."""
    rng = np.random.default_rng(seed)
    nodes = nodes.copy()
    nodes[:ties] = np.round(nodes[:ties])
    end = ties + infinite[0]
    nodes[ties:end, :, rng.integers(0, nodes.shape[2], infinite[1])] = np.inf
    nodes[end:end + missing[0], :, rng.integers(0, nodes.shape[2], missing[1])] = np.nan
    return nodes


def test_the_compiled_chunk_reduction_follows_the_numpy_specification(monkeypatch):
    """MilestoneCollector reduces a large chunk in compiled loops (results.milestone_chunks,
    here for every chunk); each
    milestone's time and its criticality count equal milestone_times and critical_nodes, the
    NumPy specification, on simulated node times as they are and on ones given ties,
    infinities, NaN and reshuffled orders."""
    scenario = load_scenario(str(REFERENCE))
    plan = compile_scenario(scenario)
    nodes, world = simulate_nodes(plan, 600)
    nodes = _with_edge_cases(nodes, seed=8, ties=200, infinite=(60, 5), missing=(20, 3))
    rng = np.random.default_rng(9)
    nodes[280:400] += rng.normal(0, 3, nodes[280:400].shape)   # orders reshuffled
    monkeypatch.setattr(milestones_module, "COMPILED_FROM_NODE_TIMES", 1)
    collector = MilestoneCollector(plan, scenario, keep_exact=10_000)
    collector(0, None, world, nodes)
    for s, items in enumerate(collector.items):
        expected = milestone_times(items, nodes[:, s])
        got = collector.times[s].exact[0]
        np.testing.assert_array_equal(got, expected.T)
        critical = critical_nodes(plan, s, nodes[:, s], world)
        counts = [critical[:, list(item.members)].any(axis=1).sum() for item in items]
        np.testing.assert_array_equal(collector.times[s].critical, counts)
        assert 0 < collector.times[s].critical.max()


@pytest.mark.parametrize("name", ["positions.toml", "contingent.toml"])
def test_the_tiled_chunk_loop_follows_the_specification_on_other_plans(monkeypatch, name):
    """milestone_chunks.chunk_milestones goes by tiles of scenarios whose size depends on the
    plan's nodes (positions: 374 nodes, tiles of 87 scenarios, a partial one at the end;
    contingent: 12 strategies) and works a node's drivers out once a tile: its milestone
    times and criticality counts equal the NumPy specification (milestone_times,
    critical_nodes) there too, as simulated and with ties, infinities and NaN, for a chunk
    of 301 scenarios and for the same scenarios in chunks of 1, 8 and 292."""
    scenario = load_scenario(str(REFERENCE.parent / name))
    plan = compile_scenario(scenario)
    nodes, world = simulate_nodes(plan, 301)
    nodes = _with_edge_cases(nodes, seed=5, ties=120, infinite=(30, 7), missing=(20, 4))
    monkeypatch.setattr(milestones_module, "COMPILED_FROM_NODE_TIMES", 1)
    whole = MilestoneCollector(plan, scenario, keep_exact=10_000)
    whole(0, None, world, nodes)
    parts = MilestoneCollector(plan, scenario, keep_exact=10_000)
    for lo, hi in ((0, 1), (1, 9), (9, 301)):
        parts(lo, None, world[lo:hi], nodes[lo:hi])
    for s, items in enumerate(whole.items):
        expected = milestone_times(items, nodes[:, s]).T
        critical = critical_nodes(plan, s, nodes[:, s], world)
        counts = [critical[:, list(item.members)].any(axis=1).sum() for item in items]
        for collector in (whole, parts):
            got = np.concatenate(collector.times[s].exact, axis=1)
            np.testing.assert_array_equal(got.view(np.uint64),
                                          np.ascontiguousarray(expected).view(np.uint64))
            np.testing.assert_array_equal(collector.times[s].critical, counts)
        assert 0 < whole.times[s].critical.max()


def test_chunks_past_the_exact_scenarios_reuse_one_array_and_change_nothing(monkeypatch):
    """Past the exact scenarios each hook thread reuses one array for a strategy's milestone
    times (MilestoneCollector._values): the summary is the one a single chunk gives (the
    store's rule does not depend on the chunking), and the reused array was taken."""
    scenario = load_scenario(str(REFERENCE))
    plan = compile_scenario(scenario)
    nodes, world = simulate_nodes(plan, 500)
    monkeypatch.setattr(milestones_module, "COMPILED_FROM_NODE_TIMES", 1)
    whole = MilestoneCollector(plan, scenario, keep_exact=150)
    whole(0, None, world, nodes)
    reused = []
    spare = MilestoneCollector._values

    def watched(self, n_items, count, past_exact):
        values = spare(self, n_items, count, past_exact)
        reused.append(past_exact and values.base is not None)
        return values

    monkeypatch.setattr(MilestoneCollector, "_values", watched)
    parts = MilestoneCollector(plan, scenario, keep_exact=150)
    for lo, hi in ((0, 100), (100, 200), (200, 320), (320, 400), (400, 500)):
        parts(lo, None, world[lo:hi], nodes[lo:hi])
    assert parts.summary() == whole.summary()
    assert sum(reused) == 3 * plan.n_strategies            # the chunks from scenario 200 on
