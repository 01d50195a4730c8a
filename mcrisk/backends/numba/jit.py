"""The Numba compile options every stage of the Numba backend shares.

The stage functions are compiled without Numba's on-disk cache: they are compiled into the
one cached entry point, driver.simulate_chunk_kernel, whose cache key covers every source file
of the backend (see driver.py). A stage cached in its own right would be keyed on its own file
alone and could bring back the old code of a stage it inlines from another file.
"""
from __future__ import annotations

import numba as nb

# Performance: the hot functions run without Numba's reference counting (`_nrt=False`): they
# never allocate, and counting every array passed between them (atomic updates on counters
# shared by both threads) cost 3-5x in throughput. Only simulate_chunk_kernel allocates.
jit = nb.njit(nogil=True, _nrt=False, error_model="numpy")
# Performance: helpers called per draw, per node, per event or per strategy are inlined
# where they are called (Numba IR inlining; LLVM left them as calls, each passing every
# array as a dozen words): sample_world took 35% less time, the metrics 15% less.
jit_inline = nb.njit(nogil=True, _nrt=False, error_model="numpy", inline="always")
# Performance: the stages take the plan as one record, `p` (a namedtuple: KernelPlan in
# mcrisk/plan/record.py), which a call passes by value, every array of it flattened into
# arguments (~600 words). A function called per block or per lane therefore takes it
# inlined: with schedule._time_block and world.burn_in_days as calls the record cost 9.6% of
# reference-2048's throughput against argument lists, inlined ~1% (within the noise); the
# stages called once per lane group or strategy stay calls (benchmarks/bench_plan_record.py,
# benchmarks/RESULTS.md).
