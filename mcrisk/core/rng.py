"""The random stream: Philox4x32-10 with every draw at an address.

A draw's address is (seed, scenario index, the uncertain thing's name, draw index). The name
is hashed to a 64-bit `address_id` once, at compile time (wide enough that two names of one
scenario share an id with probability about n**2 / 2**65; plan.world checks that none do). The
Philox counter is (scenario, address_lo, address_hi, draw_index) and the key is
(seed_lo, seed_hi), so a draw is a pure function of its address: results do not depend on
chunk size, thread count or which strategy is simulated, adding or renaming one uncertain
thing changes no other thing's draws, and every strategy sees the same world in scenario i
(common random numbers).

The counter has room for 32 bits of the scenario index: scenario indices are in
[0, 2**32) (`SCENARIO_LIMIT`), and every backend refuses a chunk that reaches past it rather
than wrap around to scenario 0's numbers. Draw indices (burn-in attempts) are in [0, 2**32).

One Philox block gives four 32-bit words; a draw turns words 0-1 into its first uniform and
words 2-3 into its second (only `chance` distributions use the second). This module is the
NumPy specification; `mcrisk/backends/numba/random.py` and `kernels/random.cuh` mirror it line
by line.
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
SCENARIO_LIMIT = 2 ** 32   # scenario indices are below it: the counter holds 32 bits of them


def address_id(name: str) -> int:
    """64-bit id of an uncertain thing's name: BLAKE2b with an 8-byte digest, little endian."""
    return int.from_bytes(hashlib.blake2b(name.encode("utf-8"), digest_size=8).digest(), "little")


def check_scenarios(first: int, count: int) -> None:
    """Raise ValueError unless scenarios first .. first + count - 1 are valid stream indices.

    Every backend calls this on entry: an index of 2**32 or more would wrap around in the
    counter and silently repeat the worlds of scenarios 0, 1, ...
    """
    if count < 0 or first < 0:
        raise ValueError(f"a chunk needs first >= 0 and count >= 0, got first={first}, "
                         f"count={count}")
    if first + count > SCENARIO_LIMIT:
        raise ValueError(f"scenario indices must be below 2**32 (the random stream's counter "
                         f"holds 32 bits of them); this chunk reaches {first + count - 1}")


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


def uniforms(seed: int, scenario_index, address, draw_index) -> tuple[np.ndarray, np.ndarray]:
    """The two uniforms of the draw at (seed, scenario_index, address, draw_index).

    scenario_index (in [0, 2**32)), the 64-bit address and draw_index may be integer arrays
    (broadcast together).
    """
    seed_lo, seed_hi = split_seed(seed)
    scenario = np.asarray(scenario_index, dtype=np.uint64)
    if scenario.size and scenario.max() >= SCENARIO_LIMIT:
        raise ValueError(f"scenario indices must be below 2**32, got {int(scenario.max())}")
    address = np.asarray(address, dtype=np.uint64)
    w0, w1, w2, w3 = philox4x32_10(
        (scenario, address & np.uint64(MASK32), address >> np.uint64(32), draw_index),
        (seed_lo, seed_hi),
    )
    return words_to_uniform(w0, w1), words_to_uniform(w2, w3)
