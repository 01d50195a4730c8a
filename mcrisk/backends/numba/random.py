"""The random stream of the Numba backend: Philox4x32-10 with every draw at an address.

mcrisk/core/rng.py is the specification (NumPy) and kernels/random.cuh the CUDA twin; the
three are read side by side and agree bit for bit (tests/core/test_rng.py,
tests/backends/test_cuda_host.py). 32-bit words are held in uint64 and masked.
uniforms_lanes draws one address for every scenario of a lane group (driver.py) at once.
"""
from __future__ import annotations

import numpy as np

from ...core.rng import PHILOX_M0, PHILOX_M1, PHILOX_W0, PHILOX_W1
from ...core.jit import jit_inline

_M0 = np.uint64(PHILOX_M0)
_M1 = np.uint64(PHILOX_M1)
_W0 = np.uint64(PHILOX_W0)
_W1 = np.uint64(PHILOX_W1)
_MASK32 = np.uint64(0xFFFFFFFF)
_TWO_POW_M52 = 2.0 ** -52


@jit_inline
def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Random123 philox4x32_R(10, ctr, key) on uint64 values holding 32-bit words."""
    for round_index in range(10):
        if round_index > 0:
            k0 = (k0 + _W0) & _MASK32
            k1 = (k1 + _W1) & _MASK32
        p0 = _M0 * c0
        p1 = _M1 * c2
        hi0, lo0 = p0 >> np.uint64(32), p0 & _MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & _MASK32
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


@jit_inline
def words_to_uniform(word_a, word_b):
    k = ((word_a >> np.uint64(6)) << np.uint64(26)) | (word_b >> np.uint64(6))
    return (np.float64(k) + 0.5) * _TWO_POW_M52


@jit_inline
def uniforms(seed_lo, seed_hi, scenario, address, draw_index):
    """Counter (scenario, address_lo, address_hi, draw_index): scenario < 2**32 (checked by
    simulate_chunk), the 64-bit address in two words."""
    address = np.uint64(address)
    w0, w1, w2, w3 = philox4x32_10(scenario & _MASK32, address & _MASK32,
                                   address >> np.uint64(32), np.uint64(draw_index),
                                   seed_lo, seed_hi)
    return words_to_uniform(w0, w1), words_to_uniform(w2, w3)


@jit_inline
def uniforms_lanes(seed_lo, seed_hi, scenario0, n, address, draw_index, u1, u2):
    """u1[l], u2[l] = uniforms(..., scenario0 + l, address, draw_index) for the n scenarios
    of a lane group (driver.py): one loop the compiler vectorizes, Philox on several
    scenarios at once."""
    for l in range(n):
        u1[l], u2[l] = uniforms(seed_lo, seed_hi, scenario0 + np.uint64(l), address,
                                draw_index)
