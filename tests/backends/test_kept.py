"""Per-scenario results kept in a file past IN_MEMORY_BYTES (mcrisk.backends.kept): the same
files bit for bit as kept in memory, a file that cannot outlive the run, a column of one
strategy contiguous, and a run that would not fit in the folder's free space refused before
it starts."""
from __future__ import annotations

import json
import tempfile

import numpy as np
import pyarrow.parquet as pq
import pytest

import mcrisk.backends.kept as kept
from mcrisk.app.run import run_scenario
from mcrisk.backends import select_backend
from mcrisk.backends.chunks import check_memory, memory_needed, results_in_memory, simulate
from mcrisk.core.errors import McriskError
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import REFERENCE, SCENARIOS

VARYING = {"wall_seconds", "created_utc"}


def _without_clock(document):
    if isinstance(document, dict):
        return {k: _without_clock(v) for k, v in document.items() if k not in VARYING}
    if isinstance(document, list):
        return [_without_clock(v) for v in document]
    return document


@pytest.mark.parametrize("name", ["reference-2048-full", "contingent"])
def test_results_kept_in_a_file_write_the_same_files(tmp_path, monkeypatch, name):
    # the full reference has costs and a job mix, the contingent one branches too: every kept
    # array goes in a file, and every file the run writes (report included) is the same
    runs = {}
    for where, budget in (("memory", kept.IN_MEMORY_BYTES), ("file", 0)):
        monkeypatch.setattr(kept, "IN_MEMORY_BYTES", budget)
        out = tmp_path / where
        run = run_scenario(str(SCENARIOS / f"{name}.toml"), samples=1500, seed=4,
                           backend="numba", out_dir=out)
        assert kept.describe(run.result.metrics) == where
        assert kept.describe(run.result.costs) == where
        assert kept.describe(run.result.jobs) == where
        runs[where] = out
    memory, file = runs["memory"], runs["file"]
    assert _without_clock(json.loads((memory / "summary.json").read_text())) == \
        _without_clock(json.loads((file / "summary.json").read_text()))
    tables = sorted(p.name for p in memory.glob("*.parquet"))
    assert "metrics.parquet" in tables
    for table in tables:
        assert pq.read_table(memory / table).equals(pq.read_table(file / table)), table


def test_a_kept_array_in_a_file_is_nameless_and_column_major(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    array = kept.kept_array(1000, 5, 6, in_file=True)
    assert array.shape == (1000, 5, 6) and array.dtype == np.float64
    assert kept.describe(array) == "file"
    assert list(tmp_path.iterdir()) == []           # no name: gone with the run, however
    column = array[:, 3, 2]
    assert column.flags.c_contiguous                 # what the analysis reads, one run
    array[:] = np.arange(30_000.0).reshape(1000, 5, 6)
    assert array[999, 4, 5] == 29_999.0 and array[:, 3, 2][10] == 10 * 30 + 3 * 6 + 2
    assert kept.describe(kept.kept_array(10, 5, 6, in_file=False)) == "memory"


def test_a_simulation_keeps_the_same_numbers_in_a_file(monkeypatch):
    plan = compile_scenario(load_scenario(REFERENCE))
    backend = select_backend("numba")
    in_memory = simulate(plan, 700, 9, backend, chunk_size=256)
    monkeypatch.setattr(kept, "IN_MEMORY_BYTES", 0)
    in_file = simulate(plan, 700, 9, backend, chunk_size=256)
    assert kept.describe(in_file.metrics) == "file"
    assert np.array_equal(in_memory.metrics, in_file.metrics)
    assert np.array_equal(in_memory.costs, in_file.costs)


def test_memory_needed_leaves_out_results_kept_in_a_file():
    plan = compile_scenario(load_scenario(REFERENCE))
    columns = 6 + plan.n_costs
    # below the line the kept results are in memory and counted: 100,000 more scenarios
    # cost their 5 x 15 x 8 bytes each
    small = 1_000_000_000 // (5 * columns * 8) - 200_000
    assert results_in_memory(plan, small + 100_000, available=64 * 10**9)
    grew = memory_needed(plan, small + 100_000) - memory_needed(plan, small)
    assert grew >= 100_000 * 5 * columns * 8
    # 1e7 x 5 keeps 6 GB in a file; what is left is under the 4 GB target
    assert not results_in_memory(plan, 10_000_000, available=64 * 10**9)
    assert memory_needed(plan, 10_000_000) < 4e9


def test_a_run_whose_file_would_not_fit_is_refused_before_it_starts(monkeypatch):
    plan = compile_scenario(load_scenario(REFERENCE))

    class Usage:
        free = 2_000_000_000

    monkeypatch.setattr(kept.shutil, "disk_usage", lambda folder: Usage)
    with pytest.raises(McriskError) as error:
        check_memory(plan, 10_000_000, option="--samples")
    message = str(error.value)
    assert "--samples = 10,000,000" in message and "6.0 GB" in message
    assert kept.scratch_folder() in message and "TMPDIR" in message and "2.0 GB free" in message
    check_memory(plan, 100_000, option="--samples")     # in memory: no file, no check


def test_results_that_would_not_fit_in_memory_go_in_a_file():
    # 600,000 scenarios keep 0.54 GB: in memory on a large machine, in a file on a 2 GB one,
    # where the run with them in memory would pass 90% of the RAM
    plan = compile_scenario(load_scenario(REFERENCE))
    assert results_in_memory(plan, 600_000, available=64 * 10**9)
    assert memory_needed(plan, 600_000, in_memory=True, available=2 * 10**9) > 1.8e9
    assert not results_in_memory(plan, 600_000, available=2 * 10**9)
    assert memory_needed(plan, 600_000, available=2 * 10**9) < 1.8e9


def test_a_precision_run_counts_its_results_in_memory():
    # --precision grows its arrays in memory (app/precision.py): they are counted in full
    plan = compile_scenario(load_scenario(REFERENCE))
    assert memory_needed(plan, 10_000_000, in_memory=True) > 6e9 > memory_needed(plan, 10_000_000)


@pytest.mark.parametrize("ram", [10**9, 2 * 10**9, 8 * 10**9])
def test_every_count_below_the_one_offered_fits(ram):
    # the refusal offers the largest count that fits, by bisection: every count up to the one
    # offered must fit, and the next must not (a brute force over a grid of counts; the
    # results leave memory, and memory_needed drops, only where they would not fit there)
    from mcrisk.backends.chunks import MAX_SAMPLES, MEMORY_SHARE, _largest_that_fits
    plan = compile_scenario(load_scenario(REFERENCE))
    allowed = MEMORY_SHARE * ram
    offered = _largest_that_fits(plan, 65_536, allowed, available=ram)
    grid = np.unique(np.r_[np.linspace(1, offered, 400).astype(np.int64), offered])
    assert all(memory_needed(plan, int(n), available=ram) <= allowed for n in grid)
    assert offered == MAX_SAMPLES or memory_needed(plan, offered + 1, available=ram) > allowed


def test_a_column_major_kept_array_holds_each_column_contiguous():
    array = kept.kept_array(1000, 5, 6, in_file=False, column_major=True)
    assert array.shape == (1000, 5, 6) and array[:, 3, 2].flags.c_contiguous
    assert kept.kept_array(1000, 5, 6, in_file=False).flags.c_contiguous
