// The driver of the CUDA sources: a lane group of scenarios, every strategy (simulate_scenario),
// and the entry points that run it: the CUDA kernel (one thread per scenario, a group of one)
// and, when compiled for the host (g++ -x c++, no __CUDACC__), the same code over groups of
// LANES scenarios in a plain loop for the parity tests (mcrisk/backends/cuda_host.py). Pairs:
// mcrisk/backends/numba/driver.py (simulate_block's loop body is simulate_scenario) and
// mcrisk/backends/numpy/driver.py. The stages, one file each, are read side by side with the
// Numba and NumPy files of the same name:
//
//     random.cuh         Philox4x32-10 at an address       numba/random.py, mcrisk/core/rng.py
//     distributions.cuh  inverse CDFs, the draw            numba/distributions.py
//     world.cuh          world[q], once per scenario       numba/world.py
//     schedule.cuh       node_time[v] of one strategy      numba/schedule.py
//     metrics.cuh        the six metrics, the job columns  numba/metrics.py
//     costs.cuh          the cost columns (with [costs])   numba/costs.py
//     plan.cuh           the Plan struct (generated from the plan interface, mcrisk/plan/record.py)
//     constants.cuh      the metrics axis's columns, the kinds (generated from mcrisk/core)
//     bands.cuh          the capacity bands' and peaks' reductions  results/band_chunks.py
//
// Differences of form, not of arithmetic: the plan's arrays travel in a struct `Plan` (the
// Numba stages' `p` is a namedtuple, KernelPlan), 2-D arrays are indexed by hand
// (row * width + column), the scratch arrays have compile-time sizes MAX_* that mcrisk sets
// with -D from the plan's shape, and a lane group holds LANES scenarios (compat.cuh: 1 on the
// GPU, whose threads are the lanes).
//
// Arguments: the plan's (MCRISK_PLAN_PARAMS, plan.cuh), then the chunk's
// (mcrisk/backends/cuda.py CHUNK_PARAMETERS; tests/plan/test_record.py checks them).
#include "bands.cuh"
#include "compat.cuh"
#include "constants.cuh"
#include "costs.cuh"
#include "distributions.cuh"
#include "metrics.cuh"
#include "plan.cuh"
#include "random.cuh"
#include "schedule.cuh"
#include "world.cuh"

#if !defined(MAX_QUANTITIES) || !defined(MAX_NODES) || !defined(MAX_EVENTS) \
    || !defined(MAX_ISLANDS) || !defined(MAX_HALLS) || !defined(MAX_CREWS)
#error "define MAX_QUANTITIES, MAX_NODES, MAX_EVENTS, MAX_ISLANDS, MAX_HALLS and MAX_CREWS (mcrisk passes them as -D options from the plan's shape)"
#endif

namespace mcrisk {

// The scratch of a lane group (numba/driver.py allocates the same arrays once per block of
// scenarios): [row * LANES + lane] where a row has a value per lane.
struct Scratch {
    double world[MAX_QUANTITIES * LANES];
    double node_time[MAX_NODES * LANES];
    int waiting[MAX_NODES];
    double crew_ready_at[MAX_NODES * LANES];
    double crew_free[MAX_CREWS * LANES];
    double times[MAX_EVENTS * LANES];
    int order[MAX_EVENTS * LANES];
    double island_cap[MAX_ISLANDS];
    double draw_kw[MAX_HALLS];
    double free_cap[MAX_ISLANDS];
    bool visited[MAX_ISLANDS];
    double u1[LANES], u2[LANES], lane_out[LANES];
    bool row_ready[MAX_NODES];
    int lane_waiting[MAX_NODES];
    bool deadlock[LANES];
};

// Scenarios first + i .. first + i + n - 1 (n <= LANES), every strategy: the body of
// numba/driver.py's simulate_block loop over lane groups. Fills metrics[i + l, s, :] (the
// metrics, then n_costs cost columns, then n_job_cols job columns), world[i + l, :] and, if
// keep_nodes, node_times[i + l, s, :]; status[i + l] = 1 on a deadlock.
// first + i + n - 1 < 2**32: the Python entry points check it (mcrisk.core.rng.check_scenarios).
MCRISK_HD void simulate_scenario(const Plan& p, u32 seed_lo, u32 seed_hi, u32 first, long long i,
                                 int n, Scratch& x, double* metrics, double* world,
                                 double* node_times, int keep_nodes, signed char* status) {
    u32 scenario0 = first + (u32)i;
    // a row of metrics: the metrics, then the costs, then the job columns
    int width = N_METRICS + p.n_costs + p.n_job_cols;
    sample_world(p, seed_lo, seed_hi, scenario0, n, x.world, x.u1, x.u2);
    for (int l = 0; l < n; ++l) {
        for (int q = 0; q < p.n_quantities; ++q) {
            world[(i + l) * p.n_quantities + q] = x.world[q * LANES + l];
        }
    }
    for (int s = 0; s < p.n_strategies; ++s) {
        bool ok = schedule_nodes(p, s, x.world, x.node_time, n, x.waiting, x.crew_ready_at,
                                 x.crew_free, x.row_ready, x.lane_waiting, x.deadlock);
        if (!ok) {
            for (int l = 0; l < n; ++l) {
                status[i + l] = 1;
            }
        }
        sorted_events(p.cap_event_node, p.cap_event_order, p.n_cap_events, s, p.n_cap_events,
                      x.node_time, n, x.times, x.order);
        for (int l = 0; l < n; ++l) {
            double* out = metrics + ((i + l) * p.n_strategies + s) * width;
            capacity_metrics(p, s, x.world, l, x.times, x.order, x.island_cap, out);
        }
        if (p.n_job_cols > 0) {
            for (int l = 0; l < n; ++l) {
                double* out = metrics + ((i + l) * p.n_strategies + s) * width
                              + N_METRICS + p.n_costs;
                job_metrics(p, s, x.world, l, x.times, x.order, x.island_cap, x.free_cap,
                            x.visited, out);
            }
        }
        completion_day(p, x.node_time, n, x.lane_out);
        for (int l = 0; l < n; ++l) {
            metrics[((i + l) * p.n_strategies + s) * width + COMPLETION_DAY] = x.lane_out[l];
        }
        sorted_events(p.power_event_node, p.power_event_order, p.n_power_events, s,
                      p.n_power_checked[s], x.node_time, n, x.times, x.order);
        for (int l = 0; l < n; ++l) {
            metrics[((i + l) * p.n_strategies + s) * width + POWER_VIOLATION] =
                power_violation(p, s, l, x.times, x.order, x.draw_kw);
        }
        if (p.n_costs > 0) {
            strategy_costs(p, s, x.world, x.node_time, n, x.times, x.order,
                           metrics + (i * p.n_strategies + s) * width, p.n_strategies * width);
        }
        if (keep_nodes) {
            for (int l = 0; l < n; ++l) {
                for (int v = 0; v < p.n_nodes; ++v) {
                    node_times[((i + l) * p.n_strategies + s) * p.n_nodes + v] =
                        x.node_time[v * LANES + l];
                }
            }
        }
    }
}

}  // namespace mcrisk

// Whether the plan's shapes fit the scratch sizes this build was compiled with (every
// strategy's crews, teams and bays: each hires its own).
MCRISK_HD bool plan_fits(const mcrisk::Plan& p) {
    bool crews_fit = true;
    for (int s = 0; s < p.n_strategies; ++s) {
        crews_fit = crews_fit && p.n_slots[s] <= MAX_CREWS;
    }
    return p.n_quantities <= MAX_QUANTITIES && p.n_nodes <= MAX_NODES
        && p.n_cap_events <= MAX_EVENTS && p.n_power_events <= MAX_EVENTS
        && p.n_islands <= MAX_ISLANDS && p.n_halls <= MAX_HALLS && crews_fit;
}

#ifdef __CUDACC__

// One thread per scenario: the world once, then every strategy on it (common random numbers).
// Only metrics[i, s, 6 + n_costs + n_job_cols] and world[i, q] (and node_times[i, s, v] if
// keep_nodes) leave the thread; status[i] = 1 on a deadlock, 2 if the plan does not fit this
// module's MAX_* sizes.
extern "C" __global__ void simulate_chunk_kernel(
        MCRISK_PLAN_PARAMS(__restrict__), mcrisk::u32 seed_lo, mcrisk::u32 seed_hi,
        mcrisk::u32 first, long long count, double* __restrict__ metrics,
        double* __restrict__ world, double* __restrict__ node_times, int keep_nodes,
        signed char* __restrict__ status) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    const mcrisk::Plan p = MCRISK_PLAN_VALUES;
    if (!plan_fits(p)) {
        status[i] = 2;
        return;
    }
    mcrisk::Scratch scratch;
    mcrisk::simulate_scenario(p, seed_lo, seed_hi, first, i, 1, scratch, metrics, world,
                              node_times, keep_nodes, status);
}

// Probes of the random stream and the normal quantile, for the GPU parity tests.
extern "C" __global__ void philox_kernel(const mcrisk::u32* counters, const mcrisk::u32* keys,
                                         mcrisk::u32* words, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const mcrisk::u32* c = counters + 4 * i;
        mcrisk::Words w = mcrisk::philox4x32_10(c[0], c[1], c[2], c[3], keys[2 * i],
                                                keys[2 * i + 1]);
        words[4 * i] = w.w0; words[4 * i + 1] = w.w1; words[4 * i + 2] = w.w2;
        words[4 * i + 3] = w.w3;
    }
}

extern "C" __global__ void uniforms_kernel(mcrisk::u32 seed_lo, mcrisk::u32 seed_hi,
                                           const mcrisk::u32* scenario,
                                           const mcrisk::u64* address,
                                           const mcrisk::u32* draw_index, double* out,
                                           long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        mcrisk::Uniforms u = mcrisk::uniforms(seed_lo, seed_hi, scenario[i], address[i],
                                              draw_index[i]);
        out[2 * i] = u.u1;
        out[2 * i + 1] = u.u2;
    }
}

extern "C" __global__ void ndtri_kernel(const double* p, double* out, long long n) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = mcrisk::ndtri(p[i]);
    }
}

#else  // host build: the same code in plain loops (see mcrisk/backends/cuda_host.py)

// Returns 0, or -1 if the plan does not fit this build's MAX_* sizes (nothing is written).
extern "C" int host_simulate_chunk(
        MCRISK_PLAN_PARAMS(), mcrisk::u32 seed_lo, mcrisk::u32 seed_hi, mcrisk::u32 first,
        long long count, double* metrics, double* world, double* node_times, int keep_nodes,
        signed char* status) {
    const mcrisk::Plan p = MCRISK_PLAN_VALUES;
    if (!plan_fits(p)) {
        return -1;
    }
    mcrisk::Scratch* scratch = new mcrisk::Scratch;  // large: keep it off the stack
    for (long long i = 0; i < count; i += mcrisk::LANES) {
        int n = count - i < mcrisk::LANES ? (int)(count - i) : mcrisk::LANES;
        mcrisk::simulate_scenario(p, seed_lo, seed_hi, first, i, n, *scratch, metrics, world,
                                  node_times, keep_nodes, status);
    }
    delete scratch;
    return 0;
}

extern "C" void host_limits(int* out) {
    out[0] = MAX_QUANTITIES; out[1] = MAX_NODES; out[2] = MAX_EVENTS;
    out[3] = MAX_ISLANDS; out[4] = MAX_HALLS; out[5] = MAX_CREWS;
}

extern "C" void host_philox(const mcrisk::u32* counters, const mcrisk::u32* keys,
                            mcrisk::u32* words, long long n) {
    for (long long i = 0; i < n; ++i) {
        const mcrisk::u32* c = counters + 4 * i;
        mcrisk::Words w = mcrisk::philox4x32_10(c[0], c[1], c[2], c[3], keys[2 * i],
                                                keys[2 * i + 1]);
        words[4 * i] = w.w0; words[4 * i + 1] = w.w1; words[4 * i + 2] = w.w2;
        words[4 * i + 3] = w.w3;
    }
}

extern "C" void host_uniforms(mcrisk::u32 seed_lo, mcrisk::u32 seed_hi,
                              const mcrisk::u32* scenario, const mcrisk::u64* address,
                              const mcrisk::u32* draw_index, double* out, long long n) {
    for (long long i = 0; i < n; ++i) {
        mcrisk::Uniforms u = mcrisk::uniforms(seed_lo, seed_hi, scenario[i], address[i],
                                              draw_index[i]);
        out[2 * i] = u.u1;
        out[2 * i + 1] = u.u2;
    }
}

extern "C" void host_ndtri(const double* p, double* out, long long n) {
    for (long long i = 0; i < n; ++i) {
        out[i] = mcrisk::ndtri(p[i]);
    }
}

#endif  // __CUDACC__
