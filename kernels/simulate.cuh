// One scenario, every strategy: the per-scenario logic of the CUDA kernel (simulate.cu) and of
// its host build (mcrisk/backends/hostcuda.py). Mirrors mcrisk/backends/cpu.py: the same stage
// names, loop structure and constants, so the two can be read side by side:
//
//     sample_world      -> world[q]               (once per scenario: common random numbers)
//     schedule_nodes    -> node_time[v]           (per strategy; crew schedule blocks)
//     capacity_metrics  -> trough depth/days, shortfall, homeless days
//     power_violation, completion_day
//
// Differences of form, not of arithmetic: the plan's arrays travel in one struct `Plan`
// (plan.cuh, generated from mcrisk/plan.py; Numba takes them one by one), 2-D arrays are indexed by hand (row * width + column), and the scratch
// arrays have compile-time sizes MAX_* that mcrisk sets with -D from the plan's shape.
#ifndef MCRISK_SIMULATE_CUH
#define MCRISK_SIMULATE_CUH

#include "compat.cuh"
#include "distributions.cuh"
#include "philox.cuh"
#include "plan.cuh"

#if !defined(MAX_QUANTITIES) || !defined(MAX_NODES) || !defined(MAX_EVENTS) \
    || !defined(MAX_ISLANDS) || !defined(MAX_HALLS) || !defined(MAX_CREWS)
#error "define MAX_QUANTITIES, MAX_NODES, MAX_EVENTS, MAX_ISLANDS, MAX_HALLS and MAX_CREWS (mcrisk passes them as -D options from the plan's shape)"
#endif

namespace mcrisk {

// mcrisk.compile and mcrisk.backends.reference constants.
static constexpr int Q_SAMPLE = 0;
static constexpr int Q_SUM = 1;
static constexpr int Q_BURNIN = 2;
static constexpr int Q_ATTEMPTS = 3;
static constexpr int NODE_CREW = 1;
static constexpr double REL_EPS = 1e-9;
static constexpr int MAX_BURNIN_ATTEMPTS = 100000;
static constexpr int N_METRICS = 6;

// Per-scenario scratch (cpu.py allocates the same arrays once per block of scenarios).
struct Scratch {
    double world[MAX_QUANTITIES];
    double node_time[MAX_NODES];
    int waiting[MAX_NODES];
    double crew_ready_at[MAX_NODES];
    double crew_free[MAX_CREWS];
    double times[MAX_EVENTS];
    int order[MAX_EVENTS];
    double island_cap[MAX_ISLANDS];
    double draw_kw[MAX_HALLS];
};

// Days from install end to a passed burn-in; its number of attempts goes to `attempts`.
MCRISK_HD double burn_in_days(const Plan& p, int q, u32 seed_lo, u32 seed_hi, u32 scenario,
                              double& attempts) {
    int b = p.q_burnin[q];
    int attempt_dist = p.burnin_dist[3 * b + 0], fix_dist = p.burnin_dist[3 * b + 1],
        rma_dist = p.burnin_dist[3 * b + 2];
    double fail_first = p.burnin_fail[2 * b + 0], fail_retry = p.burnin_fail[2 * b + 1];
    int rma_after = p.burnin_rma_after[b];
    u64 a_attempt = p.q_address[4 * q + 0], a_outcome = p.q_address[4 * q + 1];
    u64 a_fix = p.q_address[4 * q + 2], a_rma = p.q_address[4 * q + 3];
    double days = 0.0;
    int fails_in_row = 0;
    int rma_count = 0;
    for (int k = 0; k < MAX_BURNIN_ATTEMPTS; ++k) {
        days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, attempt_dist,
                     seed_lo, seed_hi, scenario, a_attempt, (u32)k);
        double u_outcome = uniforms(seed_lo, seed_hi, scenario, a_outcome, (u32)k).u1;
        double p_fail = fails_in_row == 0 ? fail_first : fail_retry;
        if (u_outcome >= p_fail) {
            attempts = k + 1.0;
            return days;
        }
        fails_in_row += 1;
        if (fails_in_row == rma_after) {
            days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, rma_dist,
                         seed_lo, seed_hi, scenario, a_rma, (u32)rma_count);
            rma_count += 1;
            fails_in_row = 0;
        } else {
            days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, fix_dist,
                         seed_lo, seed_hi, scenario, a_fix, (u32)k);
        }
    }
    attempts = (double)MAX_BURNIN_ATTEMPTS;
    return infinity();
}

// world[q] of one scenario, in dependency order.
MCRISK_HD void sample_world(const Plan& p, u32 seed_lo, u32 seed_hi, u32 scenario,
                            double* world) {
    for (int q = 0; q < p.n_quantities; ++q) {
        int kind = p.q_kind[q];
        if (kind == Q_SAMPLE) {
            world[q] = draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.q_dist[q],
                            seed_lo, seed_hi, scenario, p.q_address[4 * q + 0], 0u);
        } else if (kind == Q_SUM) {
            double total = p.q_const[q];
            for (int j = p.q_terms_ptr[q]; j < p.q_terms_ptr[q + 1]; ++j) {
                total += world[p.q_terms[j]];
            }
            world[q] = total;
        } else if (kind == Q_BURNIN) {
            world[q] = burn_in_days(p, q, seed_lo, seed_hi, scenario, world[q + 1]);
        } else if (kind != Q_ATTEMPTS) {
            world[q] = not_a_number();
        }
    }
}

MCRISK_HD double _node_start(const Plan& p, int s, int v, const double* world,
                             const double* node_time) {
    double start = p.node_base_const[s * p.n_nodes + v];
    if (p.node_base_q[v] >= 0) {
        start = max(start, world[p.node_base_q[v]]);
    }
    const int* dep_ptr = p.dep_ptr + s * (p.n_nodes + 1);
    for (int j = dep_ptr[v]; j < dep_ptr[v + 1]; ++j) {
        start = max(start, node_time[p.dep_idx[s * p.dep_width + j]]);
    }
    return start;
}

MCRISK_HD double _node_time(const Plan& p, int s, int v, const double* world, double start) {
    double t = start + p.node_add_const[s * p.n_nodes + v];
    for (int j = 0; j < 2; ++j) {
        int q = p.node_add_q[(s * p.n_nodes + v) * 2 + j];
        if (q >= 0) {
            t += world[q];
        }
    }
    return t;
}

// Block b's deps are all timed: a crew row gets its ready time (fixed from now on) to compete
// for a crew; other nodes get their times, in order. Returns how many it timed.
MCRISK_HD int _time_block(const Plan& p, int s, int b, const double* world, double* node_time,
                          double* crew_ready_at) {
    const int* block_ptr = p.block_ptr + s * (p.n_nodes + 1);
    const int* block_node = p.block_node + s * p.n_nodes;
    int first = block_ptr[b];
    int v = block_node[first];
    if (p.node_kind[s * p.n_nodes + v] == NODE_CREW) {
        crew_ready_at[v] = _node_start(p, s, v, world, node_time);
        return 0;
    }
    for (int j = first; j < block_ptr[b + 1]; ++j) {
        v = block_node[j];
        double start = _node_start(p, s, v, world, node_time);
        node_time[v] = _node_time(p, s, v, world, start);
    }
    return block_ptr[b + 1] - first;
}

// node_time[v] of strategy s; false on a deadlock (ruled out by validation). Nodes without a
// crew are timed as soon as their deps are; only when none is left does the earliest-ready row
// get a crew. Performance shortcut (as on the CPU): the blocks of the compiled crew schedule.
// For s > 0, node_time must hold strategy s - 1's times on the same world: the nodes it shares
// with s are in no block.
MCRISK_HD bool schedule_nodes(const Plan& p, int s, const double* world, double* node_time,
                              int* waiting, double* crew_ready_at, double* crew_free) {
    const int* crew_node = p.crew_node + s * p.crew_width;
    const int* unlock_ptr = p.unlock_ptr + s * (p.crew_width + 1);
    int n_rows = p.n_crew_rows[s];
    for (int r = 0; r < n_rows; ++r) {
        crew_ready_at[crew_node[r]] = infinity();
    }
    for (int b = 0; b < p.n_nodes; ++b) {
        waiting[b] = p.block_wait[s * p.n_nodes + b];
    }
    int n_done = 0;
    for (int b = 0; b < p.n_ready_blocks[s]; ++b) {
        n_done += _time_block(p, s, b, world, node_time, crew_ready_at);
    }
    for (int c = 0; c < p.n_crews; ++c) {
        crew_free[c] = 0.0;
    }
    while (true) {
        // The next row for a crew: the earliest-ready among rows whose deps are all timed.
        int pick = -1;
        double picked_ready = infinity();
        for (int r = 0; r < n_rows; ++r) {
            double ready = crew_ready_at[crew_node[r]];
            if (ready < picked_ready) {
                pick = r;
                picked_ready = ready;
            }
        }
        if (pick < 0) {
            break;
        }
        int v = crew_node[pick];
        crew_ready_at[v] = infinity();
        int crew = 0;
        for (int c = 1; c < p.n_crews; ++c) {
            if (crew_free[c] < crew_free[crew]) {
                crew = c;
            }
        }
        double begin = max(picked_ready, crew_free[crew]);
        node_time[v] = _node_time(p, s, v, world, begin);
        crew_free[crew] = node_time[v];
        n_done += 1;
        for (int j = unlock_ptr[pick]; j < unlock_ptr[pick + 1]; ++j) {
            int b = p.unlock_block[s * p.unlock_width + j];
            waiting[b] -= 1;
            if (waiting[b] == 0) {
                n_done += _time_block(p, s, b, world, node_time, crew_ready_at);
            }
        }
    }
    return n_done == p.block_ptr[s * (p.n_nodes + 1) + p.n_nodes];  // every node in a block
}

// Sort the first n (time, event) pairs by time, ties by event index: the order a stable sort of
// the events by time gives. Insertion sort of a few dozen pairs (performance: they arrive in a
// likely time order, so it has little to move).
MCRISK_HD void _sort_events(double* times, int* order, int n) {
    for (int i = 1; i < n; ++i) {
        double t = times[i];
        int k = order[i];
        int j = i;
        while (j > 0 && (times[j - 1] > t || (times[j - 1] == t && order[j - 1] > k))) {
            times[j] = times[j - 1];
            order[j] = order[j - 1];
            j -= 1;
        }
        times[j] = t;
        order[j] = k;
    }
}

// Integral of max(0, f) over [lo, hi] for f linear from f_lo to f_hi.
MCRISK_HD double positive_area(double lo, double hi, double f_lo, double f_hi) {
    double width = hi - lo;
    if (f_lo >= 0.0 && f_hi >= 0.0) {
        return 0.5 * (f_lo + f_hi) * width;
    }
    if (f_lo < 0.0 && f_hi > 0.0) {
        return 0.5 * width * f_hi * f_hi / (f_hi - f_lo);
    }
    if (f_lo > 0.0 && f_hi < 0.0) {
        return 0.5 * width * f_lo * f_lo / (f_lo - f_hi);
    }
    return 0.0;
}

// D(t) for t in demand segment k: k = 0 before the first point, k = n after the last, else
// the line from point k - 1 to point k.
MCRISK_HD double demand_on_segment(const double* demand_day, const double* demand_value, int n,
                                   int k, double t) {
    if (k == 0) {
        return demand_value[0];
    }
    if (k == n) {
        return demand_value[n - 1];
    }
    double slope = (demand_value[k] - demand_value[k - 1]) / (demand_day[k] - demand_day[k - 1]);
    return demand_value[k - 1] + (t - demand_day[k - 1]) * slope;
}

// Integral over [lo, hi] of max(0, D(t) - capacity), splitting at demand knots. k is the
// demand segment holding lo or before it; on return it holds the segment of hi.
// Performance shortcut: intervals arrive in time order, so the segment only moves forward.
MCRISK_HD double shortfall_area(const double* demand_day, const double* demand_value, int n,
                                double lo, double hi, double capacity, int& k) {
    while (k < n && demand_day[k] <= lo) {
        k += 1;
    }
    double total = 0.0;
    double a = lo;
    while (true) {
        double b = k == n ? hi : min(hi, demand_day[k]);
        double f_a = demand_on_segment(demand_day, demand_value, n, k, a) - capacity;
        double f_b = demand_on_segment(demand_day, demand_value, n, k, b) - capacity;
        total += positive_area(a, b, f_a, f_b);
        if (b >= hi) {
            return total;
        }
        a = b;
        k += 1;
    }
}

// out[0:4] = trough_depth, trough_days, shortfall_gpu_days, homeless_days.
MCRISK_HD void capacity_metrics(const Plan& p, int s, const double* world,
                                const double* node_time, double* times, int* order,
                                double* island_cap, double* out) {
    int n_events = p.n_cap_events;
    for (int j = 0; j < n_events; ++j) {
        order[j] = p.cap_event_order[s * n_events + j];
        times[j] = node_time[p.cap_event_node[order[j]]];
    }
    _sort_events(times, order, n_events);
    int n_islands = p.n_islands;
    double capacity = 0.0;
    for (int i = 0; i < n_islands; ++i) {
        island_cap[i] = p.island_cap0[i];
        capacity += p.island_cap0[i];
    }
    double depth = 0.0;
    double trough_days = 0.0;
    double shortfall = 0.0;
    double homeless_days = 0.0;
    double lo = 0.0;
    int segment = 0;
    double baseline = p.baseline, horizon = p.horizon, largest_job = p.largest_job;
    double below_limit = baseline - REL_EPS * baseline;
    double job_limit = largest_job - REL_EPS * max(largest_job, 1.0);
    for (int j = 0; j < n_events + 1; ++j) {
        double hi = j == n_events ? horizon : min(max(times[j], 0.0), horizon);
        double width = hi - lo;
        if (width > 0.0) {
            depth = max(depth, baseline - capacity);
            if (capacity < below_limit) {
                trough_days += width;
            }
            double area = shortfall_area(p.demand_day, p.demand_value, p.n_demand, lo, hi,
                                         capacity, segment);
            shortfall += area;
            double largest = -infinity();
            for (int i = 0; i < n_islands; ++i) {
                largest = max(largest, island_cap[i]);
            }
            if (largest < job_limit) {
                homeless_days += width;
            }
            lo = hi;
        }
        if (j < n_events) {
            int k = order[j];
            double delta = p.cap_event_delta[k];
            if (p.cap_event_scale_q[k] >= 0) {
                delta *= world[p.cap_event_scale_q[k]];
            }
            island_cap[p.cap_event_island[k]] += delta;
            capacity = 0.0;
            for (int i = 0; i < n_islands; ++i) {
                capacity += island_cap[i];
            }
        }
    }
    out[0] = depth > REL_EPS * baseline ? depth : 0.0;
    out[1] = trough_days;
    out[2] = shortfall;
    out[3] = homeless_days;
}

// 1.0 if some hall's draw exceeds its cap at any time (not only before the horizon).
MCRISK_HD double power_violation(const Plan& p, int s, const double* node_time, double* times,
                                 int* order, double* draw) {
    int n_events = p.n_power_checked[s];
    for (int j = 0; j < n_events; ++j) {
        order[j] = p.power_event_order[s * p.n_power_events + j];
        times[j] = node_time[p.power_event_node[order[j]]];
    }
    _sort_events(times, order, n_events);
    for (int h = 0; h < p.n_halls; ++h) {
        draw[h] = p.hall_draw0[h];
        if (draw[h] > p.hall_cap[h] + REL_EPS * p.hall_cap[h]) {
            return 1.0;
        }
    }
    for (int j = 0; j < n_events; ++j) {
        int k = order[j];
        draw[p.power_event_hall[s * p.n_power_events + k]] += p.power_event_delta[k];
        bool group_end = j == n_events - 1 || times[j + 1] != times[j];
        if (group_end) {
            for (int h = 0; h < p.n_halls; ++h) {
                if (draw[h] > p.hall_cap[h] + REL_EPS * p.hall_cap[h]) {
                    return 1.0;
                }
            }
        }
    }
    return 0.0;
}

MCRISK_HD double completion_day(const Plan& p, const double* node_time) {
    double last = -infinity();
    for (int k = 0; k < p.n_completion; ++k) {
        last = max(last, node_time[p.completion_node[k]]);
    }
    return last;
}

// Scenario first + i, every strategy: the body of cpu.py's simulate_block loop. Fills
// metrics[i, s, :], world[i, :] and, if keep_nodes, node_times[i, s, :]; status[i] = 1 on a
// deadlock. first + i < 2**32: the Python entry points check it (mcrisk.rng.check_scenarios).
MCRISK_HD void simulate_scenario(const Plan& p, u32 seed_lo, u32 seed_hi, u32 first, long long i,
                                 Scratch& x, double* metrics, double* world, double* node_times,
                                 int keep_nodes, signed char* status) {
    u32 scenario = first + (u32)i;
    sample_world(p, seed_lo, seed_hi, scenario, x.world);
    for (int q = 0; q < p.n_quantities; ++q) {
        world[i * p.n_quantities + q] = x.world[q];
    }
    for (int s = 0; s < p.n_strategies; ++s) {
        bool ok = schedule_nodes(p, s, x.world, x.node_time, x.waiting, x.crew_ready_at,
                                 x.crew_free);
        if (!ok) {
            status[i] = 1;
        }
        double* out = metrics + (i * p.n_strategies + s) * N_METRICS;
        capacity_metrics(p, s, x.world, x.node_time, x.times, x.order, x.island_cap, out);
        out[4] = completion_day(p, x.node_time);
        out[5] = power_violation(p, s, x.node_time, x.times, x.order, x.draw_kw);
        if (keep_nodes) {
            for (int v = 0; v < p.n_nodes; ++v) {
                node_times[(i * p.n_strategies + s) * p.n_nodes + v] = x.node_time[v];
            }
        }
    }
}

}  // namespace mcrisk

#endif  // MCRISK_SIMULATE_CUH
