// The milestones' reductions of one chunk, where the scenarios were simulated: each scenario's
// milestone times and the milestones on its critical path, and a chunk of milestone times into
// each milestone's window of bins. Pairs: mcrisk/results/milestone_chunks.py (Numba), function
// by function (Numba's run a tile of scenarios at once, lane by lane, where these run one
// scenario: driver is _tile_drivers, milestone_times _tile_milestone_times,
// walk_critical_path _walk_critical_paths), whose specification is
// mcrisk/results/milestones.py (NumPy: milestone_times, critical_nodes). Same tie rules, NaN
// rules and tolerance arithmetic, so the host build (mcrisk/backends/cuda_host.py) gives
// Numba's numbers bit for bit (tests/backends/test_cuda_milestones.py).
//
// Differences of form, not of arithmetic: a scenario's node times are one row
// node_times[(i * n_strategies + s) * n_nodes + v]; the nodes on the critical path are marked
// with the scenario's index (mark[v * stride] == i) instead of flags cleared after each
// scenario, so a GPU thread needs no clearing and the host loop none either; counts, bins'
// bounds and the tails' slots are taken with atomics on the device (add_one, lower_to,
// raise_to, plain updates on the host, where one thread runs the elements in row order).
#ifndef MCRISK_MILESTONES_CUH
#define MCRISK_MILESTONES_CUH

#include "compat.cuh"

namespace mcrisk {

// One strategy's milestones and critical-path inputs (results.milestones._PathArrays and the
// plan's network), as milestone_chunks.chunk_milestones takes them. Axes: m milestones, V
// nodes, S strategies, Q world quantities, E dependency slots, J added quantities.
struct PathPlan {
    const double* node_times;       // [c, S, V]
    const double* world;            // [c, Q]
    long long count;                // c: the chunk's scenarios
    int n_strategies, n_nodes, n_quantities;
    int s;                          // the strategy
    const long long* member_ptr;    // [m + 1]: milestone k's members are members[ptr[k]:ptr[k+1]]
    const long long* members;
    int n_items;                    // m
    const bool* first;              // [m]: a "first ..." rollup (the earliest member)
    const bool* is_ancestor;        // [V]: a node completion waits for
    const int* dep_ptr;             // [S, V + 1]
    const int* dep_idx;             // [S, E]
    int dep_width;                  // E
    const bool* is_crew;            // [V]: a crew row of strategy s
    const long long* crew_rows;     // the crew rows, ascending
    int n_crew_rows;
    const double* base_const;       // [S, V]
    const int* base_q;              // [V]
    const double* add_const;        // [S, V]
    const int* add_q;               // [S, V, J]
    int n_add;                      // J
    const int* completion;          // the completion nodes, in plan order
    int n_completion;
    double tolerance;               // days: matching a crew's previous row
};

// The path parameters of the entry points, in the order of
// mcrisk.backends.cuda_milestones.PATH_PARAMETERS (tests/backends/test_cuda_milestones.py
// reads this list against it), and the PathPlan they make.
#define MCRISK_PATH_PARAMS                                                                         \
    const double *node_times, const double *world, long long count, int n_strategies,              \
    int n_nodes, int n_quantities, int s, const long long *member_ptr, const long long *members,   \
    int n_items, const bool *first, const bool *is_ancestor, const int *dep_ptr,                   \
    const int *dep_idx, int dep_width, const bool *is_crew, const long long *crew_rows,            \
    int n_crew_rows, const double *base_const, const int *base_q, const double *add_const,         \
    const int *add_q, int n_add, const int *completion, int n_completion, double tolerance
#define MCRISK_PATH_VALUES                                                                         \
    {node_times, world, count, n_strategies, n_nodes, n_quantities, s, member_ptr, members,        \
     n_items, first, is_ancestor, dep_ptr, dep_idx, dep_width, is_crew, crew_rows, n_crew_rows,   \
     base_const, base_q, add_const, add_q, n_add, completion, n_completion, tolerance}

// ---- atomics on the device, plain updates on the host -----------------------------------------

MCRISK_HD void add_one(unsigned long long* at) {
#ifdef __CUDA_ARCH__
    atomicAdd(at, 1ULL);
#else
    *at += 1;
#endif
}

// The slot an appended element takes: *at before adding one.
MCRISK_HD unsigned long long take_slot(unsigned long long* at) {
#ifdef __CUDA_ARCH__
    return atomicAdd(at, 1ULL);
#else
    return (*at)++;
#endif
}

// *at = value if value < *at (a compare-and-swap loop on the device: the exact minimum whatever
// the threads' order; between -0.0 and 0.0, which compare equal, the one that came first).
MCRISK_HD void lower_to(double* at, double value) {
#ifdef __CUDA_ARCH__
    unsigned long long* word = (unsigned long long*)at;
    unsigned long long seen = *word;
    while (value < __longlong_as_double((long long)seen)) {
        unsigned long long was = atomicCAS(word, seen, (unsigned long long)__double_as_longlong(value));
        if (was == seen) {
            break;
        }
        seen = was;
    }
#else
    if (value < *at) {
        *at = value;
    }
#endif
}

// *at = value if value > *at (as lower_to).
MCRISK_HD void raise_to(double* at, double value) {
#ifdef __CUDA_ARCH__
    unsigned long long* word = (unsigned long long*)at;
    unsigned long long seen = *word;
    while (value > __longlong_as_double((long long)seen)) {
        unsigned long long was = atomicCAS(word, seen, (unsigned long long)__double_as_longlong(value));
        if (was == seen) {
            break;
        }
        seen = was;
    }
#else
    if (value > *at) {
        *at = value;
    }
#endif
}

// ---- one scenario: milestone times, the critical path --------------------------------------

// numpy.maximum: NaN when either is NaN.
MCRISK_HD double max_nan(double a, double b) {
    if (a != a || b != b) {
        return not_a_number();
    }
    return a >= b ? a : b;
}

// The node that set node v's time in scenario i (-1: its own date), as
// milestones._critical_by_node decides it.
MCRISK_HD long long driver(const PathPlan& p, long long i, int v) {
    const double* t = p.node_times + (i * p.n_strategies + p.s) * p.n_nodes;
    const double* w = p.world + i * p.n_quantities;
    const int* dep_ptr = p.dep_ptr + p.s * (p.n_nodes + 1);
    const int* dep_idx = p.dep_idx + p.s * p.dep_width;
    int first = dep_ptr[v], last = dep_ptr[v + 1];
    bool crew = p.is_crew[v] && p.n_crew_rows > 1;
    long long chosen_driver = -1;
    double base = p.base_const[p.s * p.n_nodes + v];
    if (p.base_q[v] >= 0) {
        base = max_nan(base, w[p.base_q[v]]);
    }
    double start = base;
    if (last > first) {
        double latest = t[dep_idx[first]];
        long long chosen = dep_idx[first];
        for (int j = first + 1; j < last; ++j) {          // ties: the first listed
            int d = dep_idx[j];
            if (t[d] > latest) {
                latest = t[d];
                chosen = d;
            }
        }
        if (latest >= base) {                             // ties: the dependency
            chosen_driver = chosen;
        }
        start = max_nan(base, latest);
    }
    if (crew) {
        double adds = p.add_const[p.s * p.n_nodes + v];
        const int* add_q = p.add_q + (p.s * p.n_nodes + v) * p.n_add;
        for (int j = 0; j < p.n_add; ++j) {
            if (add_q[j] >= 0) {
                adds = adds + w[add_q[j]];
            }
        }
        double begin = t[v] - adds;
        if (!(begin > start + p.tolerance)) {             // it did not wait: nothing to look for
            return chosen_driver;
        }
        long long best = -1;
        double gap = infinity();
        for (int r = 0; r < p.n_crew_rows; ++r) {         // numpy.argmin: first least, NaN first
            long long other = p.crew_rows[r];
            if (other == v) {
                continue;
            }
            double distance = fabs(t[other] - begin);
            if (distance != distance) {
                best = other;
                gap = distance;
                break;
            }
            if (best < 0 || distance < gap) {
                best = other;
                gap = distance;
            }
        }
        if (gap <= p.tolerance) {
            chosen_driver = best;
        }
    }
    return chosen_driver;
}

// out[k * stride] = milestone k's time in scenario i given its nodes' times: the earliest member
// for a `first` rollup, else the latest; NaN when a member is NaN (numpy.min and numpy.max).
MCRISK_HD void milestone_times(const PathPlan& p, long long i, double* out, long long stride) {
    const double* t = p.node_times + (i * p.n_strategies + p.s) * p.n_nodes;
    for (int k = 0; k < p.n_items; ++k) {
        double value = t[p.members[p.member_ptr[k]]];
        for (long long j = p.member_ptr[k] + 1; j < p.member_ptr[k + 1]; ++j) {
            double other = t[p.members[j]];
            if (value != value) {
                break;
            }
            if (other != other || (p.first[k] ? other < value : other > value)) {
                value = other;
            }
        }
        out[k * stride] = value;
    }
}

// Mark mark[v * stride] = i for the nodes on scenario i's critical path (the latest completion
// node, the first on ties as numpy.argmax, back along each node's driver); returns how many.
// Only the nodes on the path have their driver worked out; a node completion does not wait
// for ends the path, as in milestones._critical_by_node.
MCRISK_HD int walk_critical_path(const PathPlan& p, long long i, long long* mark,
                                 long long stride) {
    const double* t = p.node_times + (i * p.n_strategies + p.s) * p.n_nodes;
    long long end = p.completion[0];
    for (int j = 0; j < p.n_completion; ++j) {
        int v = p.completion[j];
        if (t[v] != t[v]) {
            end = v;
            break;
        }
        if (t[v] > t[end]) {
            end = v;
        }
    }
    long long current = end;
    int length = 0;
    for (int step = 0; step < p.n_nodes + 1; ++step) {
        mark[current * stride] = i;
        length += 1;
        if (!p.is_ancestor[current]) {
            break;
        }
        current = driver(p, i, (int)current);
        if (current < 0) {
            break;
        }
    }
    return length;
}

// Scenario i of the chunk (the body of chunk_milestones' loop): times_out[k * count + i] =
// milestone k's time, and critical_out[k] += 1 when some member of k lies on the critical path.
// mark[v * stride]: this scenario's marks, never equal to i before the call.
MCRISK_HD void scenario_milestones(const PathPlan& p, long long i, long long* mark,
                                   long long stride, double* times_out,
                                   unsigned long long* critical_out) {
    milestone_times(p, i, times_out + i, p.count);
    walk_critical_path(p, i, mark, stride);
    for (int k = 0; k < p.n_items; ++k) {
        for (long long j = p.member_ptr[k]; j < p.member_ptr[k + 1]; ++j) {
            if (mark[p.members[j] * stride] == i) {
                add_one(critical_out + k);
                break;
            }
        }
    }
}

// ---- a chunk of milestone times into the bins ----------------------------------------------

// The bin of a finite time in milestone k's window (set_windows): floor(value / base_days),
// shifted right by exponent, less origin; in the window when 0 <= j < n_bins.
MCRISK_HD long long window_bin(double value, double base_days, long long exponent,
                               long long origin) {
    return ((long long)floor(value / base_days) >> exponent) - origin;
}

// An empty bin's bounds set so that the first time in it is both (add_to_bins: low = high =
// value): lower_to and raise_to then need no test of the count, which other threads change.
MCRISK_HD void clear_empty_bin(long long at, const long long* counts, double* low, double* high) {
    if (counts[at] == 0) {
        low[at] = infinity();
        high[at] = -infinity();
    }
}

// rows[k * n + i] into milestone k's window (add_to_bins' first loop, one element): a
// non-finite time is counted apart, one in the window counted with its bin's bounds kept;
// returns whether it is a finite time outside the window (a tail time).
MCRISK_HD bool add_to_bin(const double* rows, long long n, long long at, double base_days,
                          const long long* exponent, const long long* origin, long long n_bins,
                          unsigned long long* counts, double* low, double* high,
                          unsigned long long* non_finite) {
    long long k = at / n;
    double value = rows[at];
    if (!(value - value == 0.0)) {                       // not math.isfinite: inf - inf is NaN
        add_one(non_finite + k);
        return false;
    }
    long long j = window_bin(value, base_days, exponent[k], origin[k]);
    if (j < 0 || j >= n_bins) {
        return true;
    }
    add_one(counts + k * n_bins + j);
    lower_to(low + k * n_bins + j, value);
    raise_to(high + k * n_bins + j, value);
    return false;
}

// rows[k * n + i] appended to the tails when it is a finite time outside milestone k's window
// (add_to_bins' second loop, one element): tail_at[slot] = k * n + i, tail_times[slot] = the
// time, slot taken from *taken. The host takes the slots in row order; the device in any, and
// the caller sorts the tails by tail_at (mcrisk.backends.cuda_milestones.tails_in_row_order).
MCRISK_HD void add_to_tail(const double* rows, long long n, long long at, double base_days,
                           const long long* exponent, const long long* origin, long long n_bins,
                           unsigned long long* taken, long long* tail_at, double* tail_times) {
    long long k = at / n;
    double value = rows[at];
    if (!(value - value == 0.0)) {
        return;
    }
    long long j = window_bin(value, base_days, exponent[k], origin[k]);
    if (j < 0 || j >= n_bins) {
        unsigned long long slot = take_slot(taken);
        tail_at[slot] = at;
        tail_times[slot] = value;
    }
}

}  // namespace mcrisk

#endif  // MCRISK_MILESTONES_CUH
