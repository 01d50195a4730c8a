"""The NumPy reference backend: the readable specification of the simulation.

Vectorized over scenarios, written to read like docs/metrics.md and the compiled-plan
description in mcrisk/plan/compile.py. One file per stage; the Numba backend
(mcrisk/backends/numba/) and the CUDA sources (kernels/) have a file of each stage with the
same stage names and loop structure, read side by side:

    core/rng.py         Philox4x32-10 at an address   numba/random.py         random.cuh
    distributions.py    the draw at an address        numba/distributions.py  distributions.cuh
    world.py            world[scenario, quantity]     numba/world.py          world.cuh
    schedule.py         node_time[scenario, node]     numba/schedule.py       schedule.cuh
    metrics.py          the six metrics, job columns  numba/metrics.py        metrics.cuh
    costs.py            the cost columns ([costs])    numba/costs.py          costs.cuh
    driver.py           every strategy of a chunk     numba/driver.py         simulate.cu
    sums.py             sums in the kernels' order (below)

(the random stream and the inverse CDFs are mcrisk/core/rng.py and
mcrisk/core/distributions.py, the specification every backend mirrors; this backend uses
them as they are).

Sums are added in the kernels' order, one term at a time (sums.sum_in_order; NumPy's `sum`
adds pairwise, and float addition is not associative), and every other operation is the
kernels' too, so this backend's numbers are theirs bit for bit, except where a draw goes
through a transcendental function that NumPy and SciPy compute with their own routines: the
lognormal's exp(mu + sigma * ndtri(u)) and the power law of PERT's outermost table intervals.
Those differ from the kernels' libm and Acklam ndtri by an ulp or so, which moves metrics by
about 1e-15 of their scale (tests/backends/test_backends.py holds them to 1e-12).
"""
from .driver import simulate_chunk

__all__ = ["simulate_chunk"]
