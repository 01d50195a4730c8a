"""CUDA sources of the GPU backend, shipped as package data of mcrisk.kernels.

simulate.cu (the driver and the entry points) includes one header per stage (random.cuh,
distributions.cuh, world.cuh, schedule.cuh, metrics.cuh, costs.cuh), plan.cuh (generated from
the plan interface, mcrisk/plan/record.py), constants.cuh (generated from mcrisk/core: the
metrics axis's columns, the kinds, the tolerance) and compat.cuh.
milestones.cu (with milestones.cuh) holds the milestones' reductions of a chunk
(mcrisk.results.milestone_chunks in CUDA), a module of its own.
mcrisk.backends.cuda.kernel_source() reads them with importlib.resources and hands the text to
cupy.RawModule, and mcrisk.backends.cuda_host compiles the same text with g++.
bands.cuh, included there too, holds the capacity bands' and hall peaks' reductions of a chunk
(mcrisk.backends.cuda_bands).
"""
