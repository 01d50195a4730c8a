// The entry points of the milestones' reductions (milestones.cuh): CUDA kernels, one thread
// per scenario or per milestone time, and, when compiled for the host (g++ -x c++, no
// __CUDACC__), the same per-element code in plain loops for the parity tests
// (mcrisk/backends/cuda_host.py). Pairs: mcrisk/results/milestone_chunks.py, whose
// chunk_milestones and add_to_bins these compute; mcrisk/backends/cuda_milestones.py holds the
// parameter lists and launches them through CuPy (mcrisk/backends/cuda.py, DeviceChunk).
//
// add_to_bins in three steps, each a pass over its elements: clear the empty bins' bounds
// (add_to_bins_clear), count the times into the bins and the tail times (add_to_bins_count),
// then, with room for that many, append the tail times (add_to_bins_tails).
#include "compat.cuh"
#include "milestones.cuh"

#ifdef __CUDACC__

// Scenarios offset .. offset + n - 1 of the chunk, one a thread: their milestone times into
// times_out[k * count + i] and critical_out[k] += those with a member of k on the critical
// path. mark[v * n + t]: thread t's marks, -1 (or another scenario's index) before the launch.
extern "C" __global__ void chunk_milestones_kernel(
        MCRISK_PATH_PARAMS, long long offset, long long n, long long* mark, double* times_out,
        unsigned long long* critical_out) {
    long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= n) {
        return;
    }
    const mcrisk::PathPlan p = MCRISK_PATH_VALUES;
    mcrisk::scenario_milestones(p, offset + t, mark + t, n, times_out, critical_out);
}

// One thread per bin of counts[m, n_bins].
extern "C" __global__ void add_to_bins_clear(long long size, const long long* counts, double* low,
                                             double* high) {
    long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (at < size) {
        mcrisk::clear_empty_bin(at, counts, low, high);
    }
}

// One thread per time of rows[m, n]; *outside += the finite times outside their window.
extern "C" __global__ void add_to_bins_count(
        const double* rows, long long m, long long n, double base_days, const long long* exponent,
        const long long* origin, long long n_bins, unsigned long long* counts, double* low,
        double* high, unsigned long long* non_finite, unsigned long long* outside) {
    long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (at < m * n && mcrisk::add_to_bin(rows, n, at, base_days, exponent, origin, n_bins, counts,
                                         low, high, non_finite)) {
        mcrisk::add_one(outside);
    }
}

// One thread per time of rows[m, n]: the tail times appended (in any order).
extern "C" __global__ void add_to_bins_tails(
        const double* rows, long long m, long long n, double base_days, const long long* exponent,
        const long long* origin, long long n_bins, unsigned long long* taken, long long* tail_at,
        double* tail_times) {
    long long at = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (at < m * n) {
        mcrisk::add_to_tail(rows, n, at, base_days, exponent, origin, n_bins, taken, tail_at,
                            tail_times);
    }
}

#else  // host build: the same code in plain loops (see mcrisk/backends/cuda_host.py)

// Every scenario of the chunk in turn; mark[v]: n_nodes marks, -1 before the call.
extern "C" void host_chunk_milestones(MCRISK_PATH_PARAMS, long long offset, long long n,
                                      long long* mark, double* times_out,
                                      unsigned long long* critical_out) {
    const mcrisk::PathPlan p = MCRISK_PATH_VALUES;
    for (long long i = offset; i < offset + n; ++i) {
        mcrisk::scenario_milestones(p, i, mark, 1, times_out, critical_out);
    }
}

extern "C" void host_add_to_bins_clear(long long size, const long long* counts, double* low,
                                       double* high) {
    for (long long at = 0; at < size; ++at) {
        mcrisk::clear_empty_bin(at, counts, low, high);
    }
}

extern "C" void host_add_to_bins_count(
        const double* rows, long long m, long long n, double base_days, const long long* exponent,
        const long long* origin, long long n_bins, unsigned long long* counts, double* low,
        double* high, unsigned long long* non_finite, unsigned long long* outside) {
    for (long long at = 0; at < m * n; ++at) {
        if (mcrisk::add_to_bin(rows, n, at, base_days, exponent, origin, n_bins, counts, low, high,
                               non_finite)) {
            mcrisk::add_one(outside);
        }
    }
}

extern "C" void host_add_to_bins_tails(
        const double* rows, long long m, long long n, double base_days, const long long* exponent,
        const long long* origin, long long n_bins, unsigned long long* taken, long long* tail_at,
        double* tail_times) {
    for (long long at = 0; at < m * n; ++at) {
        mcrisk::add_to_tail(rows, n, at, base_days, exponent, origin, n_bins, taken, tail_at,
                            tail_times);
    }
}

#endif  // __CUDACC__
