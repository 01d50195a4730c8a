"""The random stream: Philox4x32-10 with every draw at an address.

A draw's address is (seed, scenario index, the uncertain thing's name, draw index). The name
is hashed to a 32-bit `address_id` once, at compile time. The Philox counter is
(scenario_lo, scenario_hi, address_id, draw_index) and the key is (seed_lo, seed_hi), so a
draw is a pure function of its address: results do not depend on chunk size, thread count,
backend or which strategy is simulated, and every strategy sees the same world in scenario i
(common random numbers).

One Philox block gives four 32-bit words; a draw turns words 0-1 into its first uniform and
words 2-3 into its second (only `chance` distributions use the second). This module is the
NumPy specification; `mcrisk.backends.cpu` and `kernels/philox.cuh` mirror it line by line.
"""
from __future__ import annotations

import hashlib

import numpy as np

RNG_NAME = "philox4x32-10"

# Random123 philox.h constants.
PHILOX_M0 = 0xD2511F53
PHILOX_M1 = 0xCD9E8D57
PHILOX_W0 = 0x9E3779B9
PHILOX_W1 = 0xBB67AE85
PHILOX_ROUNDS = 10

MASK32 = 0xFFFFFFFF
TWO_POW_M52 = 2.0 ** -52


def address_id(name: str) -> int:
    """32-bit id of an uncertain thing's name (first 4 bytes of BLAKE2b, little endian)."""
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=4).digest(), "little")


def split_seed(seed: int) -> tuple[int, int]:
    """Philox key words (lo, hi) of a seed in [0, 2**64)."""
    if not 0 <= seed < 2 ** 64:
        raise ValueError(f"seed must be in [0, 2**64), got {seed}")
    return seed & MASK32, seed >> 32


def _mulhilo(m: int, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    product = np.uint64(m) * x
    return product >> np.uint64(32), product & np.uint64(MASK32)


def philox4x32_10(counter: tuple, key: tuple) -> tuple[np.ndarray, ...]:
    """Philox4x32-10 of counter words (c0, c1, c2, c3) under key words (k0, k1).

    Each word is an int or an integer array (broadcast together); returns four uint64 arrays
    holding 32-bit words. Matches Random123's philox4x32_R(10, ctr, key).
    """
    c0, c1, c2, c3 = (np.asarray(c, dtype=np.uint64) for c in counter)
    k0, k1 = (np.asarray(k, dtype=np.uint64) for k in key)
    mask = np.uint64(MASK32)
    for round_index in range(PHILOX_ROUNDS):
        if round_index > 0:
            k0 = (k0 + np.uint64(PHILOX_W0)) & mask
            k1 = (k1 + np.uint64(PHILOX_W1)) & mask
        hi0, lo0 = _mulhilo(PHILOX_M0, c0)
        hi1, lo1 = _mulhilo(PHILOX_M1, c2)
        c0, c1, c2, c3 = hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0
    return c0, c1, c2, c3


def words_to_uniform(word_a: np.ndarray, word_b: np.ndarray) -> np.ndarray:
    """A uniform in the open interval (0, 1) from two 32-bit words: 26 + 26 high bits, centred.

    (k + 0.5) * 2**-52 with k < 2**52 is exact in float64 and never 0 or 1, so inverse CDFs
    (lognormal's) never see an endpoint.
    """
    high = np.asarray(word_a, dtype=np.uint64) >> np.uint64(6)
    low = np.asarray(word_b, dtype=np.uint64) >> np.uint64(6)
    k = (high << np.uint64(26)) | low
    return (k.astype(np.float64) + 0.5) * TWO_POW_M52


def uniforms(seed: int, scenario_index, address: int, draw_index) -> tuple[np.ndarray, np.ndarray]:
    """The two uniforms of the draw at (seed, scenario_index, address, draw_index).

    scenario_index and draw_index may be integer arrays (broadcast together).
    """
    seed_lo, seed_hi = split_seed(seed)
    scenario = np.asarray(scenario_index, dtype=np.uint64)
    w0, w1, w2, w3 = philox4x32_10(
        (scenario & np.uint64(MASK32), scenario >> np.uint64(32), address, draw_index),
        (seed_lo, seed_hi),
    )
    return words_to_uniform(w0, w1), words_to_uniform(w2, w3)
