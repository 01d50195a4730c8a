"""Every compiled entry point's on-disk cache is keyed on every source file compiled into it
(mcrisk.core.jit, the one compile policy).

Numba checks only the file that defines a cached function; the kernel (numba/driver.py) has
the stages of six other files and constants of mcrisk/core/rng.py, distributions.py and
definitions.py compiled into it, with the options of mcrisk/core/jit.py. It is cached under a
digest of them all, and also closes over it (Numba keys a closure's cache entry on its cells,
which counts where NUMBA_CACHE_DIR takes the cache), so an edit to any of them recompiles it.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mcrisk.core import definitions, distributions, jit, rng
from mcrisk.backends.numba import driver
from mcrisk.results import band_chunks, milestone_chunks, selection

SOURCES = sorted(Path(driver.__file__).parent.glob("*.py")) + [
    Path(module.__file__) for module in (rng, distributions, definitions, jit)]


def test_the_kernel_closes_over_the_digest_of_its_sources():
    cells = [cell.cell_contents for cell in driver.simulate_chunk_kernel.py_func.__closure__]
    assert cells == [driver.SOURCES] == [jit.entry_digest(driver.SOURCE_FILES)]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_an_edit_to_any_source_changes_the_digest(monkeypatch, source):
    before = jit.entry_digest(driver.SOURCE_FILES)
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes",
                        lambda self: read(self) + (b"\n# edited" if self == source else b""))
    assert jit.entry_digest(driver.SOURCE_FILES) != before


CHILD = """
import hashlib, json, sys
import mcrisk
from mcrisk.backends.jit_events import numba_compiles
from mcrisk.backends.numba import driver
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

plan = compile_scenario(load_scenario(sys.argv[1]))
told = []
with numba_compiles(lambda name: told.append(name), lambda name, seconds: None):
    driver.prepare(plan)
metrics = driver.simulate_chunk(plan, 3, 0, 200)[0]
print(json.dumps({"package": mcrisk.__file__, "compiled": told,
                  "cache": driver.simulate_chunk_kernel.stats.cache_path,
                  "metrics": hashlib.sha256(metrics.tobytes()).hexdigest()}))
"""


def _install(tmp_path, name):
    """A copy of the package's sources in its own folder, as another install would have."""
    import shutil

    root = tmp_path / name
    shutil.copytree(Path(driver.__file__).parents[2], root / "mcrisk",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return root


def _prepare_in(root, cache, scenario):
    import json
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env.update(PYTHONPATH=str(root), XDG_CACHE_HOME=str(cache))
    done = subprocess.run([sys.executable, "-c", CHILD, str(scenario)], env=env, cwd=root,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    seen = json.loads(done.stdout.splitlines()[-1])
    assert seen["package"].startswith(str(root))
    return seen


@pytest.mark.compile
def test_a_second_install_of_the_same_code_loads_the_kernel_the_first_compiled(tmp_path):
    # The first install compiles (and says so through prepare's on_compile); a second one
    # elsewhere, say a wheel in another environment, finds the kernel in the user's cache
    # folder under the digest of its sources and loads it: no compile, the same numbers.
    scenario = Path(driver.__file__).parents[3] / "scenarios" / "minimal.toml"
    cache = tmp_path / "user-cache"
    first = _prepare_in(_install(tmp_path, "install-a"), cache, scenario)
    second = _prepare_in(_install(tmp_path, "install-b"), cache, scenario)
    assert first["compiled"] == ["simulate_chunk_kernel"] and second["compiled"] == []
    assert first["cache"] == second["cache"] == str(
        cache / "mcrisk" / "numba" / driver.SOURCES[:24])
    assert first["metrics"] == second["metrics"]


def test_kernel_folders_beyond_the_most_recent_are_pruned(tmp_path):
    import os

    from mcrisk.core.jit import prune

    for age, name in enumerate(["new", "mid", "old"]):
        (tmp_path / name).mkdir()
        os.utime(tmp_path / name, (1e9 - age * 1000, 1e9 - age * 1000))
    prune(tmp_path, keep=2)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mid", "new"]


@pytest.mark.parametrize("function", [
    driver.simulate_chunk_kernel, milestone_chunks.chunk_milestones,
    milestone_chunks.add_to_bins, milestone_chunks.bins_order_statistics,
    band_chunks.capacity_blocks, band_chunks.capacity_day_keys, band_chunks.merge_counts,
    band_chunks.peak_draws, selection.select_ranks], ids=lambda f: f.py_func.__name__)
def test_every_entry_point_caches_in_the_shared_folder_unless_numba_cache_dir_is_set(function):
    """One compile policy: the kernel and the results' chunk loops alike."""
    from numba.core import caching

    locators = function._cache._impl._locator_classes
    assert locators[0].__name__ in ("UserProvidedCacheLocator", "_UserProvidedCacheLocator")
    assert locators[1].__name__ == "SharedCacheLocator"
    assert isinstance(function._cache, caching.FunctionCache)
    assert jit.user_cache_root().name == "numba"
