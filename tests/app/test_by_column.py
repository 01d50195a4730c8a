"""The run's results laid out column by column after the chunk loop (mcrisk.app.run.by_column):
the same values at the same indices, each [:, strategy, column] contiguous; results on disk
(np.memmap) and arrays too large to copy beside themselves left as they are; and a run's
numbers the same whichever layout its statistics read."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mcrisk.app import run as app_run
from mcrisk.app.run import by_column, run_scenario

from ..conftest import MINIMAL


def _result(n: int = 2_500, rng_seed: int = 3):
    """A SimulationResult-shaped stand-in: the fields by_column reads."""
    from mcrisk.backends.chunks import SimulationResult

    rng = np.random.default_rng(rng_seed)
    metrics = rng.gamma(2.0, 10.0, (n, 3, 6))
    metrics[rng.random((n, 3, 6)) < 0.1] = np.inf
    costs = rng.normal(0.0, 1.0, (n, 3, 9))
    costs[:, 1, 2] = -0.0
    return SimulationResult(plan=None, seed=1, samples=n, backend="numpy", metrics=metrics,
                            world=rng.random((n, 4)), wall_seconds=0.0, costs=costs,
                            jobs=None)


@pytest.mark.parametrize("block", [1, 7, 1024, 10 ** 6])
def test_the_same_values_column_by_column(monkeypatch, block):
    monkeypatch.setattr(app_run, "COLUMN_MAJOR_BLOCK", block)       # blocks: ragged, one
    result = _result()
    columnar = by_column(result)
    for name in ("metrics", "costs"):
        before, after = getattr(result, name), getattr(columnar, name)
        assert after.flags.f_contiguous and after.shape == before.shape
        assert after.tobytes(order="C") == before.tobytes(order="C")    # bit for bit, -0.0 too
        for s in range(before.shape[1]):
            assert after[:, s, 2].flags.c_contiguous              # a column: contiguous
    assert columnar.jobs is None and columnar.world is result.world


def test_results_on_disk_and_arrays_too_large_stay_as_they_are(monkeypatch, tmp_path):
    result = _result()
    on_disk = np.memmap(tmp_path / "metrics.bin", dtype=np.float64, mode="w+",
                        shape=result.metrics.shape)
    on_disk[:] = result.metrics
    kept = by_column(replace(result, metrics=on_disk))
    assert kept.metrics is on_disk and kept.costs.flags.f_contiguous
    monkeypatch.setattr(app_run, "COLUMN_MAJOR_SHARE", 0.0)     # nothing fits beside itself
    assert by_column(result).metrics is result.metrics


def test_a_run_gives_the_same_summary_in_either_layout(monkeypatch):
    """The summary of a run whose columns are contiguous (by_column) equals that of the same
    run read in the chunk loop's layout, every statistic to the bit, through the compiled
    selections (COMPILED_FROM lowered so that a small run takes them)."""
    from mcrisk.results import quantiles

    monkeypatch.setattr(quantiles, "compiled_from", lambda: 64)
    columnar = run_scenario(str(MINIMAL), samples=300, backend="numpy", mitigation=False)
    monkeypatch.setattr(app_run, "by_column", lambda result: result)
    simulate = app_run.simulate        # the chunk loop's own layout (row by row) this time
    monkeypatch.setattr(app_run, "simulate",
                        lambda *args, column_major=False, **options: simulate(*args, **options))
    as_simulated = run_scenario(str(MINIMAL), samples=300, backend="numpy", mitigation=False)
    assert columnar.result.metrics.flags.f_contiguous
    assert as_simulated.result.metrics.flags.c_contiguous
    for document in (columnar.summary, as_simulated.summary):
        document.pop("wall_seconds")
        document.pop("created_utc")
    assert columnar.summary == as_simulated.summary
