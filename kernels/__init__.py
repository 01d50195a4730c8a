"""CUDA sources of the GPU backend, shipped as package data of mcrisk.kernels.

simulate.cu (entry points) includes compat.cuh, philox.cuh, distributions.cuh and
simulate.cuh; mcrisk.backends.gpu.kernel_source() reads them with importlib.resources and
hands the text to cupy.RawModule, and mcrisk.backends.hostcuda compiles the same text with g++.
"""
