"""A command imports only what it uses, when it needs it (issue 12): scipy.stats (about 1.5 s),
Numba, pyarrow, matplotlib and tqdm stay out of `validate`, and a run loads each one at the
phase that uses it, not at start-up. Each check runs in a fresh interpreter, since this test
process has imported everything already.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mcrisk.core.distributions import pert_alpha_beta, pert_table

from ..conftest import MINIMAL, REFERENCE, ROOT

HEAVY = ("scipy.stats", "numba", "pyarrow", "matplotlib", "tqdm")


def _loaded_after(code: str) -> dict:
    """{module: loaded?} for HEAVY after running `code` in a fresh interpreter; `code` may
    set `phases`, a list of (phase name, [heavy modules loaded when it started]). A run's
    report draws its figures as SVG text: matplotlib is the nightly trend chart's only."""
    probe = (f"import sys, json\nphases = []\n{code}\n"
             f"print(json.dumps({{'loaded': {{m: m in sys.modules for m in {HEAVY!r}}}, "
             f"'phases': phases}}))")
    done = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, env=dict(os.environ, MCRISK_FIGURE_WORKER="0"))
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])


def test_importing_the_command_line_loads_none_of_the_heavy_libraries():
    seen = _loaded_after("import mcrisk.cli")
    assert not any(seen["loaded"].values()), seen["loaded"]


def test_validate_loads_none_of_the_heavy_libraries():
    seen = _loaded_after("import contextlib, io\nfrom mcrisk.cli import main\n"
                         "with contextlib.redirect_stdout(io.StringIO()):\n"
                         f"    assert main(['validate', {str(REFERENCE)!r}]) == 0")
    assert not any(seen["loaded"].values()), seen["loaded"]


RECORDING_RUN = """
from mcrisk.core.progress import Phase, Progress
from mcrisk.app.run import run_scenario

class Recorder(Progress):
    def phase(self, name, total=None, unit="steps", note=""):
        phases.append((name, [m for m in {heavy!r} if m in sys.modules]))
        return Phase()

run_scenario({scenario!r}, samples=300, seed=1, backend="numba", progress=Recorder(),
             out_dir={out!r})
"""


@pytest.mark.slow
def test_a_run_loads_each_library_at_the_phase_that_uses_it(tmp_path):
    seen = _loaded_after(RECORDING_RUN.format(heavy=HEAVY, scenario=str(MINIMAL),
                                              out=str(tmp_path / "out")))
    phases = dict(seen["phases"])
    assert list(phases) == ["compile", "simulate", "summarize", "write"]
    assert set(phases["compile"]) <= {"numba"}
    assert set(phases["simulate"]) == {"numba", "pyarrow"}  # metrics.parquet streams
    assert seen["loaded"] == {"scipy.stats": False, "numba": True, "pyarrow": True,
                              "matplotlib": False, "tqdm": False}   # the figures are SVG text


def test_a_run_without_files_loads_neither_pyarrow_nor_matplotlib():
    seen = _loaded_after(RECORDING_RUN.format(heavy=HEAVY, scenario=str(MINIMAL), out=None))
    assert [name for name, _ in seen["phases"]] == ["compile", "simulate", "summarize"]
    assert seen["loaded"] == {"scipy.stats": False, "numba": True, "pyarrow": False,
                              "matplotlib": False, "tqdm": False}


@pytest.mark.slow
def test_pert_tables_are_scipy_stats_beta_quantiles_bit_for_bit():
    # distributions.pert_table takes the Beta quantile from scipy.special.betaincinv so that
    # compiling a scenario needs no scipy.stats; it must be beta.ppf's numbers exactly (the
    # kernels read the table, so any other number would change every PERT draw).
    from scipy import stats

    params = [(0.0, 0.0, 1.0, 4.0), (0.0, 1.0, 1.0, 4.0), (2.0, 5.0, 30.0, 4.0)]
    rng = np.random.default_rng(12)
    for _ in range(300):
        low, mode, high = np.sort(rng.random(3) * 100.0)
        params.append((low, mode, high, float(rng.choice([1.0, 4.0, 4.0, 7.5]))))
    u = np.linspace(0.0, 1.0, 4097)
    for p in params:
        expected = stats.beta.ppf(u, *pert_alpha_beta(*p))
        expected[0], expected[-1] = 0.0, 1.0
        np.testing.assert_array_equal(pert_table(*p)[:4097], expected, err_msg=str(p))

