"""The random stream: Random123 known answers, and bit-identical words across implementations."""
import numpy as np
import pytest

from mcrisk import rng
from mcrisk.backends import cpu

# Random123 tests/kat_vectors, the three "philox4x32 10" lines
# (github.com/DEShawResearch/random123, tag v1.14.0): counter[4] key[2] -> output[4].
KAT_PHILOX4X32_10 = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter, key, expected", KAT_PHILOX4X32_10)
def test_numpy_philox_matches_random123(counter, key, expected):
    assert tuple(int(w) for w in rng.philox4x32_10(counter, key)) == expected


@pytest.mark.parametrize("counter, key, expected", KAT_PHILOX4X32_10)
def test_numba_philox_matches_random123(counter, key, expected):
    words = cpu.philox4x32_10(*(np.uint64(c) for c in counter), *(np.uint64(k) for k in key))
    assert tuple(int(w) for w in words) == expected


def test_numba_and_numpy_words_are_bit_identical():
    gen = np.random.default_rng(7)
    counters = gen.integers(0, 2 ** 32, size=(2000, 4), dtype=np.uint64)
    keys = gen.integers(0, 2 ** 32, size=(2000, 2), dtype=np.uint64)
    expected = np.stack(rng.philox4x32_10(counters.T, keys.T), axis=1)
    got = np.array([cpu.philox4x32_10(*c, *k) for c, k in zip(counters, keys)], dtype=np.uint64)
    np.testing.assert_array_equal(got, expected)


def test_uniforms_are_identical_and_strictly_inside_the_unit_interval():
    seed = 2 ** 40 + 12345
    scenario = np.arange(5000, dtype=np.uint64) + np.uint64(2 ** 33)
    u1, u2 = rng.uniforms(seed, scenario, rng.address_id("unit.N01.install"), 3)
    lo, hi = rng.split_seed(seed)
    for i in range(0, 5000, 97):
        v1, v2 = cpu.uniforms(np.uint64(lo), np.uint64(hi), scenario[i],
                              rng.address_id("unit.N01.install"), 3)
        assert (v1, v2) == (u1[i], u2[i])
    assert 0.0 < min(u1.min(), u2.min()) and max(u1.max(), u2.max()) < 1.0


def test_extreme_words_map_inside_the_interval():
    zero = rng.words_to_uniform(np.uint64(0), np.uint64(0))
    top = rng.words_to_uniform(np.uint64(0xFFFFFFFF), np.uint64(0xFFFFFFFF))
    assert zero == 0.5 * 2.0 ** -52 and top == 1.0 - 0.5 * 2.0 ** -52


def test_uniforms_look_uniform_and_independent_across_addresses():
    from scipy import stats
    scenario = np.arange(50_000, dtype=np.uint64)
    a, b = rng.uniforms(1, scenario, rng.address_id("a"), 0)
    c, _ = rng.uniforms(1, scenario, rng.address_id("b"), 0)
    assert stats.kstest(a, "uniform").pvalue > 1e-3
    assert stats.kstest(b, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.02
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.02


def test_address_is_a_pure_function_of_its_parts():
    assert rng.address_id("unit.N01.install") == rng.address_id("unit.N01.install")
    assert rng.address_id("unit.N01.install") != rng.address_id("unit.N02.install")
    first = rng.uniforms(9, np.array([17], dtype=np.uint64), 123, 0)
    again = rng.uniforms(9, np.array([17], dtype=np.uint64), 123, 0)
    other_seed = rng.uniforms(10, np.array([17], dtype=np.uint64), 123, 0)
    assert first == again and first != other_seed


def test_seed_out_of_range_is_rejected():
    with pytest.raises(ValueError):
        rng.split_seed(2 ** 64)
    with pytest.raises(ValueError):
        rng.split_seed(-1)
