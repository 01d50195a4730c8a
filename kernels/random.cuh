// The random stream: Philox4x32-10 with every draw at an address. Pairs: mcrisk/core/rng.py (the
// specification) and mcrisk/backends/numba/random.py, line by line.
//
// Counter (scenario, address_lo, address_hi, draw_index), key (seed_lo, seed_hi): the scenario
// index is below 2**32 (the Python entry points refuse larger ones) and the address is the
// 64-bit id of the drawn thing's name. The CPU holds 32-bit words in uint64 and masks; here
// they are u32, and the 32 x 32 -> 64 multiply is __umulhi on the device and a 64-bit product
// on the host: bit-identical words either way.
#ifndef MCRISK_RANDOM_CUH
#define MCRISK_RANDOM_CUH

#include "compat.cuh"

namespace mcrisk {

// Random123 philox.h constants.
static constexpr u32 PHILOX_M0 = 0xD2511F53u;
static constexpr u32 PHILOX_M1 = 0xCD9E8D57u;
static constexpr u32 PHILOX_W0 = 0x9E3779B9u;
static constexpr u32 PHILOX_W1 = 0xBB67AE85u;
static constexpr int PHILOX_ROUNDS = 10;
static constexpr double TWO_POW_M52 = 2.220446049250313080847263336181640625e-16;  // 2**-52

struct Words {
    u32 w0, w1, w2, w3;
};

struct Uniforms {
    double u1, u2;
};

// hi and lo 32-bit halves of m * x.
MCRISK_HD void mulhilo(u32 m, u32 x, u32& hi, u32& lo) {
#ifdef __CUDA_ARCH__
    hi = __umulhi(m, x);
    lo = m * x;
#else
    u64 product = (u64)m * (u64)x;
    hi = (u32)(product >> 32);
    lo = (u32)product;
#endif
}

// Random123 philox4x32_R(10, ctr, key).
MCRISK_HD Words philox4x32_10(u32 c0, u32 c1, u32 c2, u32 c3, u32 k0, u32 k1) {
    for (int round_index = 0; round_index < PHILOX_ROUNDS; ++round_index) {
        if (round_index > 0) {
            k0 += PHILOX_W0;  // u32 arithmetic wraps: the CPU's `& MASK32`
            k1 += PHILOX_W1;
        }
        u32 hi0, lo0, hi1, lo1;
        mulhilo(PHILOX_M0, c0, hi0, lo0);
        mulhilo(PHILOX_M1, c2, hi1, lo1);
        u32 n0 = hi1 ^ c1 ^ k0, n1 = lo1, n2 = hi0 ^ c3 ^ k1, n3 = lo0;
        c0 = n0; c1 = n1; c2 = n2; c3 = n3;
    }
    Words out = {c0, c1, c2, c3};
    return out;
}

// A uniform in (0, 1) from two words: 26 + 26 high bits, centred. (k + 0.5) * 2**-52 with
// k < 2**52 is exact in double, so it is the same number on every backend.
MCRISK_HD double words_to_uniform(u32 word_a, u32 word_b) {
    u64 k = ((u64)(word_a >> 6) << 26) | (u64)(word_b >> 6);
    return ((double)k + 0.5) * TWO_POW_M52;
}

// The two uniforms of the draw at (seed, scenario, address, draw_index).
MCRISK_HD Uniforms uniforms(u32 seed_lo, u32 seed_hi, u32 scenario, u64 address,
                            u32 draw_index) {
    Words w = philox4x32_10(scenario, (u32)address, (u32)(address >> 32), draw_index,
                            seed_lo, seed_hi);
    Uniforms u = {words_to_uniform(w.w0, w.w1), words_to_uniform(w.w2, w.w3)};
    return u;
}

// u1[l], u2[l] = uniforms(seed, scenario0 + l, address, draw_index) for the n scenarios of a
// lane group (scenario0 + l wraps to 32 bits as the CPU's mask does).
MCRISK_HD void uniforms_lanes(u32 seed_lo, u32 seed_hi, u32 scenario0, int n, u64 address,
                              u32 draw_index, double* u1, double* u2) {
    for (int l = 0; l < n; ++l) {
        Uniforms u = uniforms(seed_lo, seed_hi, scenario0 + (u32)l, address, draw_index);
        u1[l] = u.u1;
        u2[l] = u.u2;
    }
}

}  // namespace mcrisk

#endif  // MCRISK_RANDOM_CUH
