"""The Numba backend: the NumPy reference's stages as loops, a lane group of scenarios at a time.

One file per stage, each read side by side with the NumPy reference's file of the same name
(mcrisk/backends/numpy/) and the CUDA source (kernels/):

    random.py         Philox4x32-10 at an address     core/rng.py              random.cuh
    distributions.py  inverse CDFs, the draw          numpy/distributions.py   distributions.cuh
    world.py          world[q, l] of a lane group     numpy/world.py           world.cuh
    schedule.py       node times of one strategy      numpy/schedule.py        schedule.cuh
    metrics.py        the six metrics                 numpy/metrics.py         metrics.cuh
    costs.py          the cost columns ([costs])      numpy/costs.py           costs.cuh
    driver.py         every scenario of a chunk       numpy/driver.py          simulate.cu

The stages compile with mcrisk.core.jit's options (the one compile policy) into the one
cached entry point, driver.simulate_chunk_kernel. Same stage names and constants as the
reference; the stages take the plan as one record, `p` (a KernelPlan: the kernel fields of
the plan interface, mcrisk/plan/record.py), and read p.dist_kind and so on, as the CUDA
stages read `const Plan& p`. Each stage takes up to driver.LANES scenarios at once (arrays
[row, lane]): the plan's control flow is decided once for all of them and the loops over
lanes vectorize (driver.py).
"""
from .driver import prepare, simulate_chunk

__all__ = ["prepare", "simulate_chunk"]
