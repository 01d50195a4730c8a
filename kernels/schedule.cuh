// Node times of a lane group: max-plus propagation, crews taking rows by ready time, through the
// blocks of the compiled crew schedule (mcrisk/plan/compile.py); node_time[v * LANES + l] is
// node v in lane l. Pairs: mcrisk/backends/numba/schedule.py, line by line, and
// mcrisk/backends/numpy/schedule.py.
#ifndef MCRISK_SCHEDULE_CUH
#define MCRISK_SCHEDULE_CUH

#include "compat.cuh"
#include "constants.cuh"
#include "plan.cuh"

namespace mcrisk {

// The day node v can start in lane l: its base day, base quantity and deps' times.
MCRISK_HD double _node_start(const Plan& p, int s, int v, const double* world,
                             const double* node_time, int l) {
    double start = p.node_base_const[s * p.n_nodes + v];
    if (p.node_base_q[v] >= 0) {
        start = max(start, world[p.node_base_q[v] * LANES + l]);
    }
    const int* dep_ptr = p.dep_ptr + s * (p.n_nodes + 1);
    for (int j = dep_ptr[v]; j < dep_ptr[v + 1]; ++j) {
        start = max(start, node_time[p.dep_idx[s * p.dep_width + j] * LANES + l]);
    }
    return start;
}

MCRISK_HD double _node_time(const Plan& p, int s, int v, const double* world, double start,
                            int l) {
    double t = start + p.node_add_const[s * p.n_nodes + v];
    for (int j = 0; j < 2; ++j) {
        int q = p.node_add_q[(s * p.n_nodes + v) * 2 + j];
        if (q >= 0) {
            t += world[q * LANES + l];
        }
    }
    double at_least = p.node_floor[s * p.n_nodes + v];
    return at_least > t ? at_least : t;
}

// out[l] = _node_start(..., l) for l < n, in the same order of maxima.
MCRISK_HD void _start_lanes(const Plan& p, int s, int v, const double* world,
                            const double* node_time, int n, double* out) {
    double start = p.node_base_const[s * p.n_nodes + v];
    for (int l = 0; l < n; ++l) {
        out[l] = start;
    }
    int q = p.node_base_q[v];
    if (q >= 0) {
        for (int l = 0; l < n; ++l) {
            out[l] = max(out[l], world[q * LANES + l]);
        }
    }
    const int* dep_ptr = p.dep_ptr + s * (p.n_nodes + 1);
    for (int j = dep_ptr[v]; j < dep_ptr[v + 1]; ++j) {
        const double* dep = node_time + p.dep_idx[s * p.dep_width + j] * LANES;
        for (int l = 0; l < n; ++l) {
            out[l] = max(out[l], dep[l]);
        }
    }
}

// t[l] = _node_time(..., t[l], l) for l < n: the starts in t become the times.
MCRISK_HD void _time_lanes(const Plan& p, int s, int v, const double* world, int n, double* t) {
    double c = p.node_add_const[s * p.n_nodes + v];
    for (int l = 0; l < n; ++l) {
        t[l] = t[l] + c;
    }
    for (int j = 0; j < 2; ++j) {
        int q = p.node_add_q[(s * p.n_nodes + v) * 2 + j];
        if (q >= 0) {
            for (int l = 0; l < n; ++l) {
                t[l] += world[q * LANES + l];
            }
        }
    }
    double at_least = p.node_floor[s * p.n_nodes + v];
    if (at_least > -infinity()) {  // a status's as_of: not yet recorded
        for (int l = 0; l < n; ++l) {
            t[l] = at_least > t[l] ? at_least : t[l];
        }
    }
}

// Block b's deps are all timed in every lane: a crew row gets its ready times (fixed from now
// on) to compete for a crew; other nodes get their times, in order. Returns how many it timed.
MCRISK_HD int _time_block(const Plan& p, int s, int b, const double* world, double* node_time,
                          int n, double* crew_ready_at) {
    const int* block_ptr = p.block_ptr + s * (p.n_nodes + 1);
    const int* block_node = p.block_node + s * p.n_nodes;
    int first = block_ptr[b];
    int v = block_node[first];
    if (p.node_kind[s * p.n_nodes + v] == NODE_CREW) {
        _start_lanes(p, s, v, world, node_time, n, crew_ready_at + v * LANES);
        return 0;
    }
    for (int j = first; j < block_ptr[b + 1]; ++j) {
        v = block_node[j];
        _start_lanes(p, s, v, world, node_time, n, node_time + v * LANES);
        _time_lanes(p, s, v, world, n, node_time + v * LANES);
    }
    return block_ptr[b + 1] - first;
}

// _time_block in lane l alone.
MCRISK_HD int _time_block_lane(const Plan& p, int s, int b, const double* world,
                               double* node_time, double* crew_ready_at, int l) {
    const int* block_ptr = p.block_ptr + s * (p.n_nodes + 1);
    const int* block_node = p.block_node + s * p.n_nodes;
    int first = block_ptr[b];
    int v = block_node[first];
    if (p.node_kind[s * p.n_nodes + v] == NODE_CREW) {
        crew_ready_at[v * LANES + l] = _node_start(p, s, v, world, node_time, l);
        return 0;
    }
    for (int j = first; j < block_ptr[b + 1]; ++j) {
        v = block_node[j];
        double start = _node_start(p, s, v, world, node_time, l);
        node_time[v * LANES + l] = _node_time(p, s, v, world, start, l);
    }
    return block_ptr[b + 1] - first;
}

// Crew row v, ready at `ready`, gets the slot of its pool (retrofit crews, a hall's or the
// site's install teams or burn-in bays) free first in lane l (the lowest-numbered of equals):
// node_time[v] and that slot's next free day (its time, plus the install's or burn-in's days
// for a team or a bay).
MCRISK_HD void _give_crew(const Plan& p, int s, int v, const double* world, double* node_time,
                          double ready, double* crew_free, int l) {
    int sv = s * p.n_nodes + v;
    int first = p.crew_first[sv];
    int crew = first;
    for (int c = first + 1; c < first + p.crew_count[sv]; ++c) {
        if (crew_free[c * LANES + l] < crew_free[crew * LANES + l]) {
            crew = c;
        }
    }
    double begin = max(ready, crew_free[crew * LANES + l]);
    double t = _node_time(p, s, v, world, begin, l);
    node_time[v * LANES + l] = t;
    int hold = p.crew_hold_q[sv];
    if (hold >= 0) {
        t += world[hold * LANES + l];
    }
    crew_free[crew * LANES + l] = t;
}

// The reference's crew loop in lane l, from where the lanes parted: the earliest-ready row whose
// deps are all timed gets a crew, and the blocks waiting for it are timed once freed, except
// those no crew row waits for (left to schedule_nodes). Returns n_done plus the nodes lane l
// timed or freed.
MCRISK_HD int _crews_by_lane(const Plan& p, int s, const double* world, double* node_time,
                             const int* waiting, double* crew_ready_at, double* crew_free,
                             int* lane_waiting, int l, int n_done) {
    const int* crew_node = p.crew_node + s * p.crew_width;
    const int* unlock_ptr = p.unlock_ptr + s * (p.crew_width + 1);
    const int* unlock_block = p.unlock_block + s * p.unlock_width;
    const int* block_ptr = p.block_ptr + s * (p.n_nodes + 1);
    int n_rows = p.n_crew_rows[s];
    for (int j = unlock_ptr[0]; j < unlock_ptr[n_rows]; ++j) {
        lane_waiting[unlock_block[j]] = waiting[unlock_block[j]];
    }
    while (true) {
        // The next row for a crew: the earliest-ready among rows whose deps are all timed.
        int pick = -1;
        double picked_ready = infinity();
        for (int r = 0; r < n_rows; ++r) {
            double ready = crew_ready_at[crew_node[r] * LANES + l];
            if (ready < picked_ready) {
                pick = r;
                picked_ready = ready;
            }
        }
        if (pick < 0) {
            return n_done;
        }
        int v = crew_node[pick];
        crew_ready_at[v * LANES + l] = infinity();
        _give_crew(p, s, v, world, node_time, picked_ready, crew_free, l);
        n_done += 1;
        for (int j = unlock_ptr[pick]; j < unlock_ptr[pick + 1]; ++j) {
            int b = unlock_block[j];
            lane_waiting[b] -= 1;
            if (lane_waiting[b] == 0) {
                if (p.block_feeds_crew[s * p.n_nodes + b]) {
                    n_done += _time_block_lane(p, s, b, world, node_time, crew_ready_at, l);
                } else {
                    n_done += block_ptr[b + 1] - block_ptr[b];
                }
            }
        }
    }
}

// node_time[v * LANES + l] of strategy s for l < n; false on a deadlock in some lane (ruled out
// by validation). Same result in every lane as the reference's sweeps: nodes without a crew are
// timed as soon as their deps are; only when none is left does the earliest-ready row get a
// crew. For s > 0, node_time must hold strategy s - 1's times on the same worlds: the nodes it
// shares with s are in no block. row_ready[v] (crew row v has its ready times and no crew yet)
// and waiting[b] are the same in every lane until the lanes part.
MCRISK_HD bool schedule_nodes(const Plan& p, int s, const double* world, double* node_time,
                              int n, int* waiting, double* crew_ready_at, double* crew_free,
                              bool* row_ready, int* lane_waiting, bool* deadlock) {
    const int* crew_node = p.crew_node + s * p.crew_width;
    const int* unlock_ptr = p.unlock_ptr + s * (p.crew_width + 1);
    const int* unlock_block = p.unlock_block + s * p.unlock_width;
    const int* block_ptr = p.block_ptr + s * (p.n_nodes + 1);
    const int* block_node = p.block_node + s * p.n_nodes;
    int n_rows = p.n_crew_rows[s];
    for (int r = 0; r < n_rows; ++r) {
        row_ready[crew_node[r]] = false;
        for (int l = 0; l < n; ++l) {
            crew_ready_at[crew_node[r] * LANES + l] = infinity();
        }
    }
    for (int j = unlock_ptr[0]; j < unlock_ptr[n_rows]; ++j) {
        waiting[unlock_block[j]] = p.block_wait[s * p.n_nodes + unlock_block[j]];
    }
    int n_done = 0;
    for (int b = 0; b < p.n_ready_blocks[s]; ++b) {
        n_done += _time_block(p, s, b, world, node_time, n, crew_ready_at);
        int v = block_node[block_ptr[b]];
        row_ready[v] = p.node_kind[s * p.n_nodes + v] == NODE_CREW;
    }
    for (int l = 0; l < n; ++l) {
        deadlock[l] = false;
        for (int c = 0; c < p.n_slots[s]; ++c) {
            crew_free[c * LANES + l] = 0.0;
        }
    }
    int n_open;
    while (true) {
        // One row ready for a crew: every lane gives it the crew free first, all at once.
        n_open = 0;
        int pick = -1;
        for (int r = 0; r < n_rows; ++r) {
            if (row_ready[crew_node[r]]) {
                n_open += 1;
                pick = r;
            }
        }
        if (n_open != 1) {
            break;
        }
        int v = crew_node[pick];
        row_ready[v] = false;
        for (int l = 0; l < n; ++l) {
            double ready = crew_ready_at[v * LANES + l];
            crew_ready_at[v * LANES + l] = infinity();
            deadlock[l] = deadlock[l] || !(ready < infinity());  // the reference finds no row
            _give_crew(p, s, v, world, node_time, ready, crew_free, l);
        }
        n_done += 1;
        for (int j = unlock_ptr[pick]; j < unlock_ptr[pick + 1]; ++j) {
            int b = unlock_block[j];
            waiting[b] -= 1;
            if (waiting[b] == 0) {
                n_done += _time_block(p, s, b, world, node_time, n, crew_ready_at);
                int w = block_node[block_ptr[b]];
                row_ready[w] = p.node_kind[s * p.n_nodes + w] == NODE_CREW;
            }
        }
    }
    int total = block_ptr[p.n_nodes];  // every node in a block
    bool ok = true;
    for (int l = 0; l < n; ++l) {
        int lane_done = n_done;
        if (n_open > 1) {  // the lanes part
            lane_done = _crews_by_lane(p, s, world, node_time, waiting, crew_ready_at,
                                       crew_free, lane_waiting, l, n_done);
        }
        ok = ok && lane_done == total && !deadlock[l];
    }
    if (n_open > 1) {
        // The blocks no crew row waits for, freed in every lane by now, in dependency order.
        for (int b = p.n_ready_blocks[s]; b < p.n_nodes; ++b) {
            if (block_ptr[b] == block_ptr[b + 1]) {
                break;
            }
            if (waiting[b] > 0 && !p.block_feeds_crew[s * p.n_nodes + b]) {
                _time_block(p, s, b, world, node_time, n, crew_ready_at);
            }
        }
    }
    return ok;
}

}  // namespace mcrisk

#endif  // MCRISK_SCHEDULE_CUH
