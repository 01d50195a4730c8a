"""The Numba kernel's on-disk cache is keyed on every source file compiled into it.

Numba checks only the file that defines a cached function; the kernel (numba/driver.py) has
the stages of five other files and constants of mcrisk/rng.py, distributions.py and
definitions.py compiled into it. It closes over a digest of them all, and Numba keys a
closure's cache entry on its cells, so an edit to any of them recompiles the kernel.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from mcrisk import definitions, distributions, rng
from mcrisk.backends.numba import driver

SOURCES = sorted(Path(driver.__file__).parent.glob("*.py")) + [
    Path(module.__file__) for module in (rng, distributions, definitions)]


def test_the_kernel_closes_over_the_digest_of_its_sources():
    cells = [cell.cell_contents for cell in driver.simulate_chunk_kernel.py_func.__closure__]
    assert cells == [driver._sources_digest()]


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.name)
def test_an_edit_to_any_source_changes_the_digest(monkeypatch, source):
    before = driver._sources_digest()
    read = Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes",
                        lambda self: read(self) + (b"\n# edited" if self == source else b""))
    assert driver._sources_digest() != before
