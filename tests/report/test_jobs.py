"""The job mix in the outputs (issue 15 part 2): metrics.parquet's job columns, summary.json's
`jobs` (per strategy and the top-level block) against its schema, and the report's "Job mix"
table; and that a run without a mix writes none of it.

Every expected number is computed here independently (numpy.quantile, numpy.mean, numbers
chosen so their percentiles are known), never read back from the code under test.
"""
from __future__ import annotations

import copy
import json
from types import SimpleNamespace

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import COSTS, METRICS, N_METRICS, job_columns
from mcrisk.results.jobs import (JobMix, check_job_columns, jobs_block, scenario_job_columns,
                                summarize_jobs, summary_keys)
from mcrisk.report import tables as tables_module
from mcrisk.report.findings.sentences import fmt
from mcrisk.report.jobs import jobs_html, jobs_markdown
from mcrisk.app.run import run_scenario
from mcrisk.scenario import load_scenario

from ..helpers import MINIMAL, MINIMAL_TEXT, md_flat, schema_errors, variant

CLASSES = (("frontier", 1024.0, 0.25), ("mid", 256.0, 0.25), ("small", 8.0, 0.5))
IDS = tuple(c[0] for c in CLASSES)


def mix_scenario(classes=CLASSES, step=2.0):
    """A stand-in for a scenario with a job mix: only what mcrisk.results.jobs reads."""
    jobs = tuple(SimpleNamespace(id=i, size=size, share=share) for i, size, share in classes)
    return SimpleNamespace(demand=SimpleNamespace(jobs=jobs, packing_step_days=step))


REFERENCE_MIX = ("largest_job = 1024 ",                   # [demand] of the reference gets CLASSES
                 "jobs = [" + ", ".join(f'{{ id = "{i}", size = {size:g}, share = {share:g} }}'
                                        for i, size, share in CLASSES)
                 + "]\nlargest_job = 1024 ")


@pytest.fixture(scope="module")
def reference_mix_plan(tmp_path_factory):
    """The reference (it has costs, so the job columns come after them) with CLASSES as its
    job mix, compiled."""
    path = tmp_path_factory.mktemp("refmix") / "reference-mix.toml"
    path.write_text(variant(REFERENCE_MIX))
    return compile_scenario(load_scenario(path))


@pytest.fixture(scope="module")
def minimal_run(tmp_path_factory):
    """A run of the minimal scenario (no job mix) with its files and summary.json."""
    folder = tmp_path_factory.mktemp("minimal")
    run = run_scenario(str(MINIMAL), samples=200, seed=5, backend="numpy", out_dir=folder)
    return run, folder


# ---- summary.json's statistics --------------------------------------------------------------

def test_each_job_column_summary_is_numpys_quantiles_and_mean():
    rng = np.random.default_rng(11)
    jobs = rng.gamma(1.5, 40.0, (1_000, 2, 4))
    jobs[rng.random((1_000, 2, 4)) < 0.3] = 0.0          # atoms at 0, as homeless days have
    columns = job_columns(IDS)
    out = summarize_jobs(jobs, ("a", "b"), columns)
    assert list(out) == ["a", "b"] and list(out["a"]) == list(columns)
    for s, name in enumerate(("a", "b")):
        for k, column in enumerate(columns):
            values = jobs[:, s, k]
            got = out[name][column]
            for key, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99)):
                assert got[key] == np.quantile(values, q), (name, column, key)
            assert got["mean"] == pytest.approx(np.mean(values), rel=1e-12)
            low, high = got["p90_ci"]
            assert low <= got["p90"] <= high


def test_a_job_array_of_the_wrong_shape_is_refused():
    with pytest.raises(ValueError, match="expected"):
        summarize_jobs(np.zeros((10, 2, 3)), ("a", "b"), job_columns(IDS))


def test_the_block_names_the_classes_columns_and_units():
    block = jobs_block(JobMix.of_scenario(mix_scenario()), 540.0)
    assert block["classes"] == [{"id": i, "size": size, "share": share}
                                for i, size, share in CLASSES]
    assert block["packing_step_days"] == 2.0 and block["window_days"] == [0.0, 540.0]
    assert list(block["columns"]) == ["unservable_gpu_days", "homeless_days.frontier",
                                      "homeless_days.mid", "homeless_days.small"]
    assert block["columns"]["unservable_gpu_days"]["unit"] == "H100-eq x days"
    assert block["columns"]["homeless_days.mid"]["unit"] == "days"
    assert "mid" in block["columns"]["homeless_days.mid"]["meaning"]


def test_no_mix_no_keys():
    no_mix = load_scenario(MINIMAL)
    assert JobMix.of_scenario(no_mix) is None and scenario_job_columns(no_mix) == ()
    assert scenario_job_columns(None) == ()
    result = SimpleNamespace(jobs=None, plan=SimpleNamespace(strategy_names=("a",)))
    strategies = {"a": {}}
    assert summary_keys(no_mix, result, strategies, 10.0) == {} and strategies == {"a": {}}


# ---- the schema -----------------------------------------------------------------------------

def with_jobs(summary: dict, seed: int = 2) -> dict:
    """`summary` (a real run's) with a job mix's keys added as a run with one writes them."""
    document = copy.deepcopy(summary)
    names = tuple(document["strategies"])
    jobs = np.random.default_rng(seed).gamma(2.0, 30.0, (300, len(names), 1 + len(CLASSES)))
    result = SimpleNamespace(jobs=jobs, plan=SimpleNamespace(strategy_names=names))
    top = summary_keys(mix_scenario(), result, document["strategies"],
                       document["horizon_days"])
    document.update(top)
    return json.loads(json.dumps(document, allow_nan=False))     # as written: strict JSON


def test_the_schema_accepts_a_summary_with_and_without_jobs(minimal_run):
    run, _ = minimal_run
    plain = json.loads(json.dumps(run.summary))
    assert "jobs" not in plain
    assert schema_errors(plain) == []
    mixed = with_jobs(plain)
    assert "jobs" in mixed and all("jobs" in s for s in mixed["strategies"].values())
    assert schema_errors(mixed) == []


@pytest.mark.parametrize("breakage", ["no_unservable", "bad_column", "no_classes", "share"])
def test_the_schema_rejects_a_broken_jobs_block(minimal_run, breakage):
    mixed = with_jobs(json.loads(json.dumps(minimal_run[0].summary)))
    first = next(iter(mixed["strategies"].values()))
    if breakage == "no_unservable":
        del first["jobs"]["unservable_gpu_days"]
    elif breakage == "bad_column":
        first["jobs"]["homeless days.x"] = first["jobs"]["unservable_gpu_days"]
    elif breakage == "no_classes":
        mixed["jobs"]["classes"] = []
    else:
        mixed["jobs"]["classes"][0]["share"] = 0
    assert schema_errors(mixed) != []


# ---- metrics.parquet ------------------------------------------------------------------------

def test_parquet_job_columns_follow_metrics_and_costs_in_order(reference_mix_plan):
    columns = job_columns(IDS)
    plan = reference_mix_plan
    assert plan.n_job_cols == len(columns)
    rng = np.random.default_rng(4)
    c, s = 5, plan.n_strategies
    width = N_METRICS + plan.n_costs + len(columns)
    chunk = rng.gamma(2.0, 50.0, (c, s, width))
    chunk[:, :, N_METRICS - 1] = rng.integers(0, 2, (c, s))
    world = rng.gamma(2.0, 10.0, (c, plan.n_quantities))
    schema = tables_module.metrics_schema(plan, columns)
    table = tables_module.metrics_batch(plan, 0, chunk, world, schema)
    names = table.schema.names
    first_job = 2 + N_METRICS + plan.n_costs
    assert plan.n_costs == len(COSTS)                  # the reference has costs: order matters
    assert names[:first_job] == ["scenario", "strategy", *METRICS[:-1], "power_violation",
                                 *COSTS]
    assert names[first_job:first_job + len(columns)] == list(columns)
    assert names[first_job + len(columns):] == [plan.quantity_names[q] for q in
                                                tables_module.input_quantities(plan)]
    rows = table.to_pylist()
    for i in range(c):
        for k in range(s):
            expected = list(chunk[i, k, N_METRICS + plan.n_costs:])
            assert [rows[i * s + k][col] for col in columns] == expected
    units = {name: table.schema.field(name).metadata[b"unit"] for name in columns}
    assert units == {"unservable_gpu_days": b"H100-eq x days",
                     **{f"homeless_days.{i}": b"days" for i in IDS}}


def test_parquet_names_must_match_the_plans_job_columns(reference_plan, reference_mix_plan):
    with pytest.raises(ValueError, match="n_job_cols"):
        tables_module.metrics_schema(reference_mix_plan, job_columns(IDS[:1]))
    with pytest.raises(ValueError, match="n_job_cols"):
        check_job_columns(reference_plan, job_columns(IDS))     # a plan without a mix


# ---- the report -----------------------------------------------------------------------------

def report_summary() -> dict:
    """A summary with a mix whose P50 and P90 are known: 101 scenarios, column k of strategy
    s holds (s + 1) x (k + 1) x (0, 1, .., 100) shuffled, so its P50 is 50 (s + 1)(k + 1) and
    its P90 90 (s + 1)(k + 1)."""
    names = ("beta", "alpha")
    rng = np.random.default_rng(8)
    jobs = np.empty((101, 2, 1 + len(CLASSES)))
    for s in range(2):
        for k in range(1 + len(CLASSES)):
            jobs[:, s, k] = rng.permutation(np.arange(101.0)) * (s + 1) * (k + 1)
    strategies = {name: {} for name in names}
    result = SimpleNamespace(jobs=jobs, plan=SimpleNamespace(strategy_names=names))
    top = summary_keys(mix_scenario(), result, strategies, 540.0)
    return {"ranking": ["alpha", "beta"], "strategies": strategies, **top}


def expected_cells(s: int) -> list[str]:
    return [fmt(q * (s + 1) * (k + 1)) for k in range(1 + len(CLASSES)) for q in (50.0, 90.0)]


def test_the_markdown_table_shows_each_strategys_p50_and_p90_in_ranking_order():
    lines = jobs_markdown(report_summary())
    rows = [line for line in lines if line.startswith("| alpha") or line.startswith("| beta")]
    assert [r.split(" | ")[0] for r in rows] == ["| alpha", "| beta"]        # ranking order
    header = next(line for line in lines if line.startswith("| strategy"))
    assert "unservable GPU-days P50" in header and "homeless days frontier (1,024) P90" in header
    for row, s in zip(rows, (1, 0)):                       # alpha is strategy 1, beta 0
        assert [cell.strip() for cell in row.strip("|").split("|")][1:] == expected_cells(s)
    assert any("a job never spans two islands" in line for line in lines)


def test_the_html_table_shows_the_same_numbers():
    html = "".join(jobs_html(report_summary(), {"alpha": "#000", "beta": "#111"}))
    assert '<h2 id="jobs">Job mix</h2>' in html
    alpha, beta = html.index("alpha</td>"), html.index("beta</td>")
    assert alpha < beta
    for s, start, end in ((1, alpha, beta), (0, beta, len(html))):
        row = html[start:end]
        cells = [part.split("</td>")[0] for part in row.split('<td class="n">')[1:]]
        assert cells == expected_cells(s)
    assert "better" not in html and "worse" not in html     # no ranking sentence
    # two header rows: each column once over its P50 and P90, so the table fits a page
    assert '<th class="n" colspan="2">unservable GPU-days</th>' in html
    assert html.count('<th class="n">P50</th><th class="n">P90</th>') == 1 + len(CLASSES)


def test_the_terminal_table_shows_the_same_numbers_under_a_two_line_header():
    from mcrisk.cli.text import format_jobs
    lines = format_jobs(report_summary()).splitlines()
    assert "a job never spans two islands" in lines[0]
    assert lines[1].split() == ["unservable", "GPU-days", "homeless", "days", "frontier",
                                "(1,024)", *lines[1].split()[6:]]
    assert lines[2].split() == ["strategy"] + ["P50", "P90"] * (1 + len(CLASSES))
    assert [line.split()[0] for line in lines[3:]] == ["alpha", "beta"]   # ranking order
    for line, s in zip(lines[3:], (1, 0)):
        assert line.split()[1:] == expected_cells(s)
    assert format_jobs({"strategies": {}}) == ""                           # no mix, no table


# ---- a run without a mix --------------------------------------------------------------------

def test_a_run_without_a_mix_writes_no_job_keys_columns_or_table(minimal_run):
    run, folder = minimal_run
    summary = json.loads((folder / "summary.json").read_text())
    assert "jobs" not in summary
    assert all("jobs" not in s for s in summary["strategies"].values())
    names = pq.read_schema(folder / "metrics.parquet").names
    assert not any(n == "unservable_gpu_days" or n.startswith("homeless_days.") for n in names)
    assert "Job mix" not in (folder / "summary.md").read_text()
    assert 'id="jobs"' not in (folder / "report.html").read_text()


# ---- end to end: `mcrisk run` on a scenario with a job mix ----------------------------------

MIX_EDIT = ("largest_job = 64                             # H100-eq one island must hold for the "
            "largest job\n",
            "largest_job = 64\n\n[[demand.jobs]]\nid = \"big\"\nsize = 64\nshare = 0.5\n\n"
            "[[demand.jobs]]\nid = \"small\"\nsize = 8\nshare = 0.5\n")


@pytest.fixture(scope="module")
def mix_run(tmp_path_factory):
    """A run of the minimal scenario with a two-class job mix, through the command line."""
    from mcrisk.cli import main

    folder = tmp_path_factory.mktemp("mix")
    scenario = folder / "mix.toml"
    scenario.write_text(variant(MIX_EDIT, text=MINIMAL_TEXT))
    assert main(["run", str(scenario), "--samples", "300", "--seed", "4", "--backend",
                 "numpy", "--quiet", "--out", str(folder / "out")]) == 0
    return folder / "out"


def test_mcrisk_run_with_a_mix_writes_the_columns_the_block_and_the_table(mix_run):
    summary = json.loads((mix_run / "summary.json").read_text())
    assert schema_errors(summary) == []
    columns = ["unservable_gpu_days", "homeless_days.big", "homeless_days.small"]
    assert summary["jobs"]["classes"] == [{"id": "big", "size": 64.0, "share": 0.5},
                                          {"id": "small", "size": 8.0, "share": 0.5}]
    assert list(summary["jobs"]["columns"]) == columns
    table = pq.read_table(mix_run / "metrics.parquet")
    names = table.schema.names
    first = names.index("power_violation") + 1 + sum(c in names for c in COSTS)
    assert names[first:first + 3] == columns          # after the metrics and any costs
    for name in summary["ranking"]:
        rows = table.filter(pc.equal(table["strategy"], name))
        for column in columns:
            values = rows.column(column).to_numpy()
            got = summary["strategies"][name]["jobs"][column]
            assert got["p50"] == np.quantile(values, 0.5)
            assert got["p90"] == np.quantile(values, 0.9)
        # the largest class is the largest job: its homeless days are the metric's
        assert np.array_equal(rows.column("homeless_days.big").to_numpy(),
                              rows.column("homeless_days").to_numpy())
        assert np.all(rows.column("homeless_days.small").to_numpy()
                      <= rows.column("homeless_days.big").to_numpy())
    assert "the job mix" in md_flat((mix_run / "summary.md").read_text())   # a pointer
    assert '<h2 id="jobs">Job mix</h2>' in (mix_run / "report.html").read_text()


def test_a_precision_run_keeps_the_job_columns_of_a_plain_run_of_its_size(tmp_path):
    """--precision grows its arrays in place: the job columns must grow with the metrics, so
    its summary's `jobs` equals a plain run's of the same scenarios."""
    from mcrisk.results.precision import PrecisionTarget

    scenario = tmp_path / "mix.toml"
    scenario.write_text(variant(MIX_EDIT, text=MINIMAL_TEXT))
    target = PrecisionTarget(relative=0.001, floor=0.001, start=100, max_samples=700)
    grown = run_scenario(str(scenario), seed=6, backend="numpy", precision=target)
    assert grown.summary["samples"] > 100                  # it grew at least once
    plain = run_scenario(str(scenario), samples=grown.summary["samples"], seed=6,
                         backend="numpy")
    assert grown.result.jobs.shape == plain.result.jobs.shape
    assert np.array_equal(grown.result.jobs, plain.result.jobs)
    for name in plain.summary["ranking"]:
        per_strategy = grown.summary["strategies"][name]
        assert per_strategy["jobs"] == plain.summary["strategies"][name]["jobs"]


# ---- mcrisk compare: the job columns paired A - B ------------------------------------------

def test_compare_pairs_every_job_column_like_the_metrics(tmp_path, capsys):
    from mcrisk.results.compare import compare_jobs
    from mcrisk.cli import main

    rng = np.random.default_rng(2)
    jobs = rng.gamma(2.0, 50.0, size=(300, 2, 3))
    columns = ("unservable_gpu_days", "homeless_days.big", "homeless_days.small")
    got = compare_jobs(jobs, ["a", "b"], "a", "b", columns)
    assert list(got) == list(columns)
    for k, name in enumerate(columns):
        diff = jobs[:, 0, k] - jobs[:, 1, k]
        assert got[name]["mean"] == pytest.approx(diff.mean(), rel=1e-12)
        assert got[name]["p90"] == pytest.approx(np.percentile(diff, 90), rel=1e-12)
        assert got[name]["p_a_worse"] == np.mean(diff > 0)
    assert compare_jobs(None, ["a", "b"], "a", "b", ()) == {}
    # end to end: the printed table has a row per job column; none without a mix
    scenario = tmp_path / "mix.toml"
    scenario.write_text(variant(MIX_EDIT, text=MINIMAL_TEXT))
    for path, expected in ((scenario, True), (MINIMAL, False)):
        assert main(["compare", str(path), "swap-gated", "drain-on-day", "--samples", "200",
                     "--backend", "numpy", "--quiet"]) == 0
        out = capsys.readouterr().out
        assert ("job mix: A - B per scenario" in out) == expected
        assert ("homeless_days.small" in out) == expected


# ---- the default chunk: smaller with a job mix, so a stop comes as often --------------------

def test_a_job_mix_runs_in_smaller_chunks_by_default_with_the_same_numbers(tmp_path):
    from mcrisk.plan.compile import compile_scenario
    from mcrisk.app.run import run_scenario
    from mcrisk.scenario import load_scenario
    from mcrisk.backends.chunks import DEFAULT_CHUNK, JOB_MIX_CHUNK, default_chunk

    scenario = tmp_path / "mix.toml"
    scenario.write_text(variant(MIX_EDIT, text=MINIMAL_TEXT))
    mix, plain = (compile_scenario(load_scenario(p)) for p in (scenario, MINIMAL))
    assert (default_chunk(mix), default_chunk(plain)) == (JOB_MIX_CHUNK, DEFAULT_CHUNK)
    assert JOB_MIX_CHUNK * 8 == DEFAULT_CHUNK
    assert default_chunk(mix, 100) == 100 == default_chunk(plain, 100)     # asked for: kept
    # summary.json records the chunk that ran; the numbers do not depend on it
    runs = [run_scenario(str(scenario), samples=300, seed=2, backend="numba", chunk_size=size,
                         report=False) for size in (None, 64)]
    assert [r.summary["chunk_size"] for r in runs] == [JOB_MIX_CHUNK, 64]
    np.testing.assert_array_equal(runs[0].result.metrics, runs[1].result.metrics)
    np.testing.assert_array_equal(runs[0].result.jobs, runs[1].result.jobs)
