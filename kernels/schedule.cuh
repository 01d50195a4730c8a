// Node times of one strategy on one world: max-plus propagation, crews taking rows by ready
// time, through the blocks of the compiled crew schedule (mcrisk/compile.py). Pairs:
// mcrisk/backends/numba/schedule.py, line by line, and mcrisk/backends/numpy/schedule.py.
#ifndef MCRISK_SCHEDULE_CUH
#define MCRISK_SCHEDULE_CUH

#include "compat.cuh"
#include "plan.cuh"

namespace mcrisk {

// mcrisk.definitions: a node that also waits for a free crew (a row's retrofit).
static constexpr int NODE_CREW = 1;

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

}  // namespace mcrisk

#endif  // MCRISK_SCHEDULE_CUH
