// Entry points of the simulation: the CUDA kernel (one thread per scenario, every strategy) and,
// when compiled for the host (g++ -x c++, no __CUDACC__), the same per-scenario code in a plain
// loop for the parity tests (mcrisk/backends/hostcuda.py). All the logic is in simulate.cuh.
//
// Arguments: CompiledScenario.kernel_args() in order, then the shapes Numba reads off the
// arrays, then the chunk. mcrisk/backends/gpu.py (KERNEL_ARGUMENTS) lists the same names; a test
// checks the two lists against each other.
#include "compat.cuh"
#include "distributions.cuh"
#include "philox.cuh"
#include "simulate.cuh"

#define MCRISK_PLAN_PARAMS(R)                                                                   \
    const int* R dist_kind, const double* R dist_param, const double* R dist_chance,            \
    const double* R pert_table, const int* R q_kind, const int* R q_dist,                       \
    const mcrisk::u64* R q_address, const double* R q_const, const int* R q_terms_ptr,          \
    const int* R q_terms, const int* R q_burnin, const int* R burnin_dist,                      \
    const double* R burnin_fail, const int* R burnin_rma_after, const int* R node_base_q,       \
    const int* R node_kind, const double* R node_base_const, const int* R node_add_q,           \
    const double* R node_add_const, const int* R dep_ptr, const int* R dep_idx,                 \
    int n_crews, const int* R block_ptr, const int* R block_node, const int* R block_wait,      \
    const int* R n_ready_blocks, const int* R crew_node, const int* R n_crew_rows,              \
    const int* R unlock_ptr, const int* R unlock_block,                                         \
    const int* R cap_event_node, const int* R cap_event_island,                                \
    const double* R cap_event_delta, const int* R cap_event_scale_q,                           \
    const double* R island_cap0,                                                                \
    const int* R power_event_node, const int* R power_event_hall,                               \
    const double* R power_event_delta, const int* R cap_event_order,                           \
    const int* R power_event_order, const int* R n_power_checked,                               \
    const double* R hall_draw0, const double* R hall_cap,                                       \
    const int* R completion_node, double baseline, double horizon, double largest_job,          \
    const double* R demand_day, const double* R demand_value,                                   \
    int n_quantities, int n_strategies, int n_nodes, int dep_width, int crew_width,             \
    int unlock_width, int n_cap_events, int n_islands, int n_power_events, int n_halls,         \
    int n_completion, int n_demand

#define MCRISK_PLAN_VALUES                                                                      \
    {dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address, q_const,        \
     q_terms_ptr, q_terms, q_burnin, burnin_dist, burnin_fail, burnin_rma_after, node_base_q,   \
     node_kind, node_base_const, node_add_q, node_add_const, dep_ptr, dep_idx, n_crews,         \
     block_ptr, block_node, block_wait, n_ready_blocks, crew_node, n_crew_rows, unlock_ptr,     \
     unlock_block, cap_event_node, cap_event_island, cap_event_delta,                           \
     cap_event_scale_q, island_cap0,                                                            \
     power_event_node, power_event_hall, power_event_delta, cap_event_order,                    \
     power_event_order, n_power_checked, hall_draw0, hall_cap,                                  \
     completion_node, baseline, horizon, largest_job, demand_day, demand_value,                 \
     n_quantities, n_strategies, n_nodes, dep_width, crew_width, unlock_width, n_cap_events,    \
     n_islands, n_power_events, n_halls, n_completion, n_demand}

// Whether the plan's shapes fit the scratch sizes this build was compiled with.
MCRISK_HD bool plan_fits(const mcrisk::Plan& p) {
    return p.n_quantities <= MAX_QUANTITIES && p.n_nodes <= MAX_NODES
        && p.n_cap_events <= MAX_EVENTS && p.n_power_events <= MAX_EVENTS
        && p.n_islands <= MAX_ISLANDS && p.n_halls <= MAX_HALLS && p.n_crews <= MAX_CREWS;
}

#ifdef __CUDACC__

// One thread per scenario: the world once, then every strategy on it (common random numbers).
// Only metrics[i, s, 6] and world[i, q] (and node_times[i, s, v] if keep_nodes) leave the
// thread; status[i] = 1 on a deadlock, 2 if the plan does not fit this module's MAX_* sizes.
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
    mcrisk::simulate_scenario(p, seed_lo, seed_hi, first, i, scratch, metrics, world,
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

#else  // host build: the same code in plain loops (see mcrisk/backends/hostcuda.py)

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
    for (long long i = 0; i < count; ++i) {
        mcrisk::simulate_scenario(p, seed_lo, seed_hi, first, i, *scratch, metrics, world,
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
