"""The project's standard, "same scenario, seed and version give the same numbers on every
backend, chunk size and machine", held for the chunk size: `mcrisk run` (run_scenario) on the
minimal scenario at chunk sizes 7, 64 and 1000 (the reference at 37, 64 and 1000) writes the
same summary.json (but for the wall clock and the chunk size itself) and equal Parquet
tables, with a fixed sample count and with --precision; and the milestones past keep_exact
(binned). The sample counts span more than one of results.exact_sums' blocks, so a block
left unfinished by one chunk and completed by the next is exercised.

Found by it: the milestones' mean was a streamed float sum whose last bits followed the
chunk boundaries (34.47586107328521 against 34.4758610732852).
"""
from __future__ import annotations

import json
import math

import numpy as np
import pyarrow.parquet as pq
import pytest

from mcrisk.results.exact_sums import BLOCK, BlockSums
from mcrisk.results.precision import PrecisionTarget
from mcrisk.backends import select_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.results.milestones import MilestoneCollector
from mcrisk.app.run import run_scenario
from mcrisk.scenario import load_scenario
from mcrisk.backends.chunks import simulate

from ..helpers import MINIMAL, REFERENCE

CHUNK_SIZES = (7, 64, 1000)
# the reference at chunk size 7 takes 70 s here (358 chunks, ~0.2 s of fixed cost each): 37,
# which divides neither the block nor the other chunk sizes, stands in for it
REFERENCE_CHUNK_SIZES = (37, 64, 1000)
SAMPLES = BLOCK + 452                  # one block complete, one unfinished
VARYING = {"wall_seconds", "created_utc", "chunk_size"}   # the clock, and the input itself


def _differences(a, b, path: str = "") -> list[str]:
    """The paths at which two JSON documents differ (floats compared to the bit)."""
    if isinstance(a, dict) and isinstance(b, dict):
        out = [f"{path}.{k}: only in one" for k in set(a) ^ set(b)]
        for key in a.keys() & b.keys():
            if key not in VARYING:
                out += _differences(a[key], b[key], f"{path}.{key}")
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in _differences(x, y, f"{path}[{i}]")]
    return [] if a == b or (a != a and b != b) else [f"{path}: {a!r} != {b!r}"]


def _files_per_chunk_size(tmp_path, scenario, chunk_sizes=CHUNK_SIZES, **options) -> None:
    """Run `scenario` at every chunk size; assert its files equal the first chunk size's."""
    runs = {}
    for chunk_size in chunk_sizes:
        out = tmp_path / f"{scenario.stem}-{chunk_size}"
        run_scenario(str(scenario), backend="numpy", out_dir=out, chunk_size=chunk_size,
                     report=False, **options)
        runs[chunk_size] = out
    first, *others = chunk_sizes
    expected = json.loads((runs[first] / "summary.json").read_text())
    tables = sorted(p.name for p in runs[first].glob("*.parquet"))
    assert len(tables) >= 2
    for chunk_size in others:
        summary = json.loads((runs[chunk_size] / "summary.json").read_text())
        assert _differences(expected, summary) == [], f"chunk size {chunk_size} against {first}"
        for table in tables:
            assert pq.read_table(runs[chunk_size] / table).equals(
                pq.read_table(runs[first] / table)), (table, chunk_size)


@pytest.mark.slow
@pytest.mark.parametrize("scenario, chunk_sizes", [(REFERENCE, REFERENCE_CHUNK_SIZES),
                                                   (MINIMAL, CHUNK_SIZES)],
                         ids=["reference", "minimal"])
def test_every_file_is_the_same_for_every_chunk_size(tmp_path, scenario, chunk_sizes):
    _files_per_chunk_size(tmp_path, scenario, chunk_sizes, samples=SAMPLES, seed=11)


@pytest.mark.slow
def test_a_precision_run_is_the_same_for_every_chunk_size(tmp_path):
    # a target too tight to meet: the run grows to max_samples, past one block
    target = PrecisionTarget(relative=0.001, floor=0.001, start=1000, max_samples=3000)
    _files_per_chunk_size(tmp_path, MINIMAL, precision=target, seed=5)


def test_block_sums_do_not_depend_on_the_chunking():
    # the obvious calculation: a numpy sum per block of 50 scenarios, the block sums added
    # exactly (math.fsum); within 1e-12 of the exact sum of every value
    rng = np.random.default_rng(3)
    values = rng.lognormal(3.0, 2.0, size=(4, 3 * 50 + 17)) * rng.choice([-1, 1], (4, 167))
    expected = [math.fsum(np.sum(row[i:i + 50]) for i in range(0, 167, 50)) for row in values]
    assert np.allclose(expected, [math.fsum(row) for row in values], rtol=1e-12, atol=0)
    for cuts in ([167], [1, 2, 3, 161], [49, 1, 50, 67], [7] * 23 + [6]):
        sums = BlockSums(4, block=50)
        start = 0
        for size in cuts:
            sums.add(values[:, start:start + size])
            start += size
        assert start == values.shape[1]
        assert sums.sums().tolist() == expected, cuts
        assert sums.sums().tolist() == expected        # asking does not change the sums


def test_block_sums_keep_a_non_finite_value():
    sums = BlockSums(2, block=4)
    sums.add(np.array([[1.0, math.inf, 2.0], [1.0, 2.0, 3.0]]))
    sums.add(np.array([[5.0] * 4, [1e308] * 4]))
    total = sums.sums()
    assert total[0] == math.inf and total[1] == math.inf     # 4e308 overflows, as a float sum
    spread = BlockSums(1, block=1)                            # overflow across blocks
    spread.add(np.array([[1e308, 1e308, 1e308]]))
    assert spread.sums()[0] == math.inf


@pytest.mark.slow
def test_binned_milestones_are_the_same_for_every_chunk_size():
    # past keep_exact the times go into the histogram (counts, smallest, largest per bin):
    # integers and extremes, so no chunking may move a quantile, an interval or a mean
    scenario = load_scenario(str(MINIMAL))
    plan = compile_scenario(scenario)
    summaries = []
    for chunk_size in (7, 300, 2500):
        collector = MilestoneCollector(plan, scenario, keep_exact=500)
        simulate(plan, 2_500, 3, select_backend("numpy"), chunk_size=chunk_size,
                 chunk_hooks=(collector,))
        summaries.append(collector.summary())
    assert summaries[0]["exact"] is False
    assert _differences(summaries[0], summaries[1]) == []
    assert _differences(summaries[0], summaries[2]) == []
