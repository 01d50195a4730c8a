"""The memory estimate needs no Numba: where numba cannot be imported, `mcrisk run` died in
chunk_output_bytes (mcrisk.backends.chunks; ModuleNotFoundError) before anything ran, even
with the NumPy backend. It now counts the hooks' threads as the CPUs there, as many as Numba
would use."""
from __future__ import annotations

import os
import sys

import numba

from mcrisk.backends.chunks import check_memory, chunk_output_bytes, memory_needed


def test_the_estimate_counts_one_thread_per_cpu_where_numba_cannot_be_imported(
        monkeypatch, reference_plan):
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        one_thread = chunk_output_bytes(reference_plan, 4_000)
    finally:
        numba.set_num_threads(threads)

    monkeypatch.setitem(sys.modules, "numba", None)         # `import numba` fails
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert chunk_output_bytes(reference_plan, 4_000) == one_thread
    assert memory_needed(reference_plan, 20_000) > 0
    check_memory(reference_plan, 20_000)                    # what `mcrisk run` calls first
