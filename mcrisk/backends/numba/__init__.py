"""The Numba backend: the NumPy reference's stages as scalar loops, one scenario at a time.

One file per stage, each read side by side with the NumPy reference's file of the same name
(mcrisk/backends/numpy/) and the CUDA source (kernels/):

    random.py         Philox4x32-10 at an address     mcrisk/rng.py            random.cuh
    distributions.py  inverse CDFs, the draw          numpy/distributions.py   distributions.cuh
    world.py          world[q] of one scenario        numpy/world.py           world.cuh
    schedule.py       node times of one strategy      numpy/schedule.py        schedule.cuh
    metrics.py        the six metrics                 numpy/metrics.py         metrics.cuh
    driver.py         every scenario of a chunk       numpy/driver.py          simulate.cu

Same stage names, loop structure and constants as the reference; the plan's arrays are passed
one by one under their names in the plan interface (mcrisk/plan.py).
"""
from .driver import prepare, simulate_chunk

__all__ = ["prepare", "simulate_chunk"]
