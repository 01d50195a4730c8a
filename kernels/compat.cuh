// The one place that lets the kernel sources compile three ways: NVRTC (cupy.RawModule, the
// GPU backend), nvcc (the CI compile check) and g++ -x c++ (the host build that CI runs for
// parity, mcrisk/backends/cuda_host.py). Device code includes no header at all, so NVRTC, which
// has no C++ standard library, and nvcc see the same text.
#ifndef MCRISK_COMPAT_CUH
#define MCRISK_COMPAT_CUH

#ifndef __CUDACC__
// g++: the CUDA qualifiers mean nothing on the host.
#include <math.h>
#define __host__
#define __device__
#define __forceinline__ inline
#endif

#define MCRISK_HD __host__ __device__ __forceinline__

namespace mcrisk {

// Fixed-width words without <cstdint> (NVRTC has none); both are these widths on every CUDA
// host and device (LP64 and LLP64 alike).
typedef unsigned int u32;
typedef unsigned long long u64;

MCRISK_HD double infinity() {
#ifdef __CUDA_ARCH__
    return __longlong_as_double(0x7ff0000000000000LL);
#else
    return HUGE_VAL;
#endif
}

MCRISK_HD double not_a_number() {
#ifdef __CUDA_ARCH__
    return __longlong_as_double(0x7ff8000000000000LL);
#else
    return NAN;
#endif
}

// max(a, b) and min(a, b) exactly as Numba compiles Python's builtins (numba.cpython.builtins
// .do_minmax): b if b > a (b < a) else a, so ties and NaNs resolve as on the CPU backend.
MCRISK_HD double max(double a, double b) { return b > a ? b : a; }
MCRISK_HD double min(double a, double b) { return b < a ? b : a; }
MCRISK_HD int min(int a, int b) { return b < a ? b : a; }

// Scenarios in a lane group (mcrisk/backends/numba/driver.py, LANES there): every stage takes
// the scenarios of a group at once, in arrays indexed [row * LANES + lane]. A CUDA thread runs
// a group of one scenario; the host build runs groups of 8, so its parity tests go through the
// lanes' code paths (lanes parting at the crews, lanes done) as the Numba backend does.
#ifndef MCRISK_LANES
#ifdef __CUDACC__
#define MCRISK_LANES 1
#else
#define MCRISK_LANES 8
#endif
#endif
// inline, not static: nvcc warns of a static constant a source never reads (milestones.cu).
inline constexpr int LANES = MCRISK_LANES;

}  // namespace mcrisk

#endif  // MCRISK_COMPAT_CUH
