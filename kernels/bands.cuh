// The capacity bands' and the hall power's reductions of a chunk, from the kernel's node times
// node_times[i, s, v]: one scenario at a time, as mcrisk/results/band_chunks.py's compiled loops
// (the Numba form; mcrisk/results/bands.py's NumPy functions are the specification). Read side by
// side with band_chunks.py: the same functions in the same order, the same names (its _before
// and _sort are before and sort here), the same loops and the same integer micro-units.
//
//     capacity_blocks     the capacity pieces of scenario i into the histogram blocks (difference
//                         form over days, +1 on a piece's first day, -1 after its last): integer
//                         counts, added with atomics on the GPU, so the order of threads is moot
//     peak_draws          each hall's highest draw in scenario i (peak[i, h])
//     capacity_day_keys   the total and largest-island capacity of scenario i on every day, as
//                         keys day * bins + bin at [i * n_days + d], the order Numba writes them
//
// Entry points: one kernel per reduction, one thread per scenario (<name>_kernel, on the GPU:
// mcrisk/backends/cuda_bands.py DeviceBands), and the same per-scenario functions in a plain
// loop on the host (host_<name>, g++: cuda_bands.HostBands, tests/backends/test_cuda_bands.py).
// Their parameters are cuda_bands.BAND_PARAMETERS' (the test holds the text to the table).
#ifndef MCRISK_BANDS_CUH
#define MCRISK_BANDS_CUH

#include "compat.cuh"

namespace mcrisk {

// Events sorted by insertion up to this many, else merged (band_chunks.INSERTION_UP_TO; the
// order is a strict total order, so the result depends on neither method).
inline constexpr int INSERTION_UP_TO = 64;

// Whether entry a comes before entry b in numpy.argsort(keys, kind='stable'): by key, NaN
// last, ties by index (a strict total order).
MCRISK_HD bool before(const double* keys, int a, int b) {
    double x = keys[a], y = keys[b];
    if (x != x) {
        return y != y && a < b;
    }
    return y != y || x < y || (x == y && a < b);
}

// Sort the permutation order[0:k] in place into numpy.argsort(keys, kind='stable'): up to
// INSERTION_UP_TO events an insertion sort from the order it holds (the previous scenario's on
// the host, the identity in a GPU thread), more a bottom-up merge sort through buffer[0:k].
MCRISK_HD void sort(const double* keys, int* order, int k, int* buffer) {
    if (k <= INSERTION_UP_TO) {
        for (int j = 1; j < k; ++j) {
            int current = order[j];
            int p = j - 1;
            while (p >= 0 && before(keys, current, order[p])) {
                order[p + 1] = order[p];
                p -= 1;
            }
            order[p + 1] = current;
        }
        return;
    }
    int width = 1;
    int* source = order;
    int* target = buffer;
    bool in_buffer = false;
    while (width < k) {
        for (int left = 0; left < k; left += 2 * width) {
            int middle = min(left + width, k), right = min(left + 2 * width, k);
            int a = left, b = middle, out = left;
            while (a < middle && b < right) {
                if (before(keys, source[b], source[a])) {
                    target[out] = source[b];
                    b += 1;
                } else {
                    target[out] = source[a];
                    a += 1;
                }
                out += 1;
            }
            while (a < middle) {
                target[out] = source[a];
                a += 1;
                out += 1;
            }
            while (b < right) {
                target[out] = source[b];
                b += 1;
                out += 1;
            }
        }
        int* swap = source;
        source = target;
        target = swap;
        in_buffer = !in_buffer;
        width *= 2;
    }
    if (in_buffer) {
        for (int j = 0; j < k; ++j) {
            order[j] = buffer[j];
        }
    }
}

// Python's a // b on integers (floor, where C truncates): Numba's int64 floor division.
MCRISK_HD long long floor_divide(long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// One count into a histogram cell: an atomic on the GPU, where threads share the cells.
MCRISK_HD void count_into(int* cell, int value) {
#ifdef __CUDA_ARCH__
    atomicAdd(cell, value);
#else
    *cell += value;
#endif
}

// Scenario i's capacity pieces under strategy s (band_chunks._capacity_pieces): its capacity
// events sorted by day (ceil(t) clamped to 0 .. n_days: later than the last day, inf and NaN
// count from n_days; numpy's stable argsort), the total and every island's capacity run
// through them in integer micro-units; piece(start, end, total, largest) for each piece that
// holds days start .. end - 1 (empty pieces left out), in day order. Scratch: days, order (a
// permutation of 0 .. k - 1), buffer: k each; capacity: islands.
template <class Piece>
MCRISK_HD void capacity_pieces(const double* node_times, long long i, int n_strategies,
                               int n_nodes, int s, const int* event_node, int k,
                               const long long* delta, const int* event_island,
                               const long long* cap0, int islands, int n_days, double* days,
                               int* order, int* buffer, long long* capacity, Piece& piece) {
    const double* times = node_times + (i * n_strategies + s) * n_nodes;
    for (int e = 0; e < k; ++e) {
        double day = ceil(times[event_node[e]]);
        if (!(day < n_days)) {
            day = n_days;
        }
        days[e] = max(day, 0.0);
    }
    sort(days, order, k, buffer);
    long long total = 0;
    for (int isl = 0; isl < islands; ++isl) {
        capacity[isl] = cap0[isl];
        total += cap0[isl];
    }
    long long start = 0;
    for (int j = 0; j < k + 1; ++j) {
        long long end = j == k ? n_days : (long long)days[order[j]];
        if (end > start) {  // an empty piece holds no day
            long long largest = capacity[0];
            for (int isl = 1; isl < islands; ++isl) {
                largest = capacity[isl] > largest ? capacity[isl] : largest;
            }
            piece(start, end, total, largest);
        }
        if (j < k) {
            int e = order[j];
            total += delta[e];
            capacity[event_island[e]] += delta[e];
            start = end;
        }
    }
}

// capacity_blocks' piece: its counts in difference form (+1 on its first day, -1 after its
// last) in the column of its value.
struct BlockPiece {
    long long total_lo, total_step, total_bins;
    int* total_block;
    long long largest_lo, largest_step, largest_bins;
    int* largest_block;

    MCRISK_HD void operator()(long long start, long long end, long long total,
                              long long largest) const {
        long long column = floor_divide(total - total_lo, total_step);
        count_into(total_block + start * total_bins + column, 1);
        count_into(total_block + end * total_bins + column, -1);
        column = floor_divide(largest - largest_lo, largest_step);
        count_into(largest_block + start * largest_bins + column, 1);
        count_into(largest_block + end * largest_bins + column, -1);
    }
};

// Scenario i's capacity pieces under strategy s added to total_block and largest_block
// ([n_days + 1, bins], difference form over days; bin of value v: (v - lo) // step). delta
// and cap0 in integer micro-units. Scratch as capacity_pieces'.
MCRISK_HD void capacity_blocks(const double* node_times, long long i, int n_strategies,
                               int n_nodes, int s, const int* event_node, int k,
                               const long long* delta, const int* event_island,
                               const long long* cap0, int islands, int n_days,
                               long long total_lo, long long total_step, long long total_bins,
                               int* total_block, long long largest_lo, long long largest_step,
                               long long largest_bins, int* largest_block, double* days,
                               int* order, int* buffer, long long* capacity) {
    BlockPiece piece{total_lo, total_step, total_bins, total_block,
                     largest_lo, largest_step, largest_bins, largest_block};
    capacity_pieces(node_times, i, n_strategies, n_nodes, s, event_node, k, delta,
                    event_island, cap0, islands, n_days, days, order, buffer, capacity, piece);
}

// peak[i * halls + h]: hall h's highest draw in kW at any time in scenario i under strategy s
// (events at one instant apply together, so the draw is read after the last event of each
// instant; never below the draw at day 0). times, order (a permutation), buffer: p each.
MCRISK_HD void peak_draws(const double* node_times, long long i, int n_strategies, int n_nodes,
                          int s, const int* event_node, int p, const int* event_hall,
                          const double* event_delta, const double* draw0, int halls,
                          double* peak, double* times, int* order, int* buffer) {
    const double* node_time = node_times + (i * n_strategies + s) * n_nodes;
    for (int e = 0; e < p; ++e) {
        times[e] = node_time[event_node[e]];
    }
    sort(times, order, p, buffer);
    for (int h = 0; h < halls; ++h) {
        double running = 0.0;  // numpy: cumsum, then draw0 added
        double latest = -infinity();
        for (int j = 0; j < p; ++j) {
            int e = order[j];
            running += event_hall[e] == h ? event_delta[e] : 0.0;
            double draw = draw0[h] + running;
            bool last_of_instant = j == p - 1 || times[order[j + 1]] != times[e];
            if (last_of_instant && draw > latest) {
                latest = draw;
            }
        }
        peak[i * halls + h] = max(draw0[h], latest);
    }
}

// capacity_day_keys' piece: its value's key written on each day it holds.
struct DayKeyPiece {
    long long i;
    int n_days;
    long long total_lo, total_step, total_bins;
    long long largest_lo, largest_step, largest_bins;
    long long* total_keys;
    long long* largest_keys;

    MCRISK_HD void operator()(long long start, long long end, long long total,
                              long long largest) const {
        long long total_column = floor_divide(total - total_lo, total_step);
        long long largest_column = floor_divide(largest - largest_lo, largest_step);
        for (long long d = start; d < end; ++d) {
            total_keys[i * n_days + d] = d * total_bins + total_column;
            largest_keys[i * n_days + d] = d * largest_bins + largest_column;
        }
    }
};

// Scenario i's total and largest-island capacity under strategy s on every day, as keys
// day * bins + (value - lo) // step: total_keys[i * n_days + d], largest_keys[...]. The
// pieces are capacity_blocks' (capacity_pieces); each piece writes its value on each day it
// holds. Scratch as capacity_pieces'.
MCRISK_HD void capacity_day_keys(const double* node_times, long long i, int n_strategies,
                                 int n_nodes, int s, const int* event_node, int k,
                                 const long long* delta, const int* event_island,
                                 const long long* cap0, int islands, int n_days,
                                 long long total_lo, long long total_step, long long total_bins,
                                 long long largest_lo, long long largest_step,
                                 long long largest_bins, long long* total_keys,
                                 long long* largest_keys, double* days, int* order, int* buffer,
                                 long long* capacity) {
    DayKeyPiece piece{i, n_days, total_lo, total_step, total_bins,
                      largest_lo, largest_step, largest_bins, total_keys, largest_keys};
    capacity_pieces(node_times, i, n_strategies, n_nodes, s, event_node, k, delta,
                    event_island, cap0, islands, n_days, days, order, buffer, capacity, piece);
}

}  // namespace mcrisk

#ifdef __CUDACC__

// One thread per scenario i < count; scratch in the thread's local memory, at the module's
// MAX_EVENTS and MAX_ISLANDS / MAX_HALLS (cuda_bands.DeviceBands checks the sizes first).
extern "C" __global__ void capacity_blocks_kernel(
        const double* __restrict__ node_times, long long count, int n_strategies, int n_nodes,
        int s, const int* __restrict__ event_node, int n_events,
        const long long* __restrict__ delta, const int* __restrict__ event_island,
        const long long* __restrict__ cap0, int n_islands, int n_days, long long total_lo,
        long long total_step, long long total_bins, int* total_block, long long largest_lo,
        long long largest_step, long long largest_bins, int* largest_block) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    double days[MAX_EVENTS];
    int order[MAX_EVENTS], buffer[MAX_EVENTS];
    long long capacity[MAX_ISLANDS];
    for (int e = 0; e < n_events; ++e) {
        order[e] = e;
    }
    mcrisk::capacity_blocks(node_times, i, n_strategies, n_nodes, s, event_node, n_events, delta,
                            event_island, cap0, n_islands, n_days, total_lo, total_step,
                            total_bins, total_block, largest_lo, largest_step, largest_bins,
                            largest_block, days, order, buffer, capacity);
}

extern "C" __global__ void peak_draws_kernel(
        const double* __restrict__ node_times, long long count, int n_strategies, int n_nodes,
        int s, const int* __restrict__ event_node, int n_events,
        const int* __restrict__ event_hall, const double* __restrict__ event_delta,
        const double* __restrict__ draw0, int n_halls, double* __restrict__ peak) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    double times[MAX_EVENTS];
    int order[MAX_EVENTS], buffer[MAX_EVENTS];
    for (int e = 0; e < n_events; ++e) {
        order[e] = e;
    }
    mcrisk::peak_draws(node_times, i, n_strategies, n_nodes, s, event_node, n_events, event_hall,
                       event_delta, draw0, n_halls, peak, times, order, buffer);
}

extern "C" __global__ void capacity_day_keys_kernel(
        const double* __restrict__ node_times, long long count, int n_strategies, int n_nodes,
        int s, const int* __restrict__ event_node, int n_events,
        const long long* __restrict__ delta, const int* __restrict__ event_island,
        const long long* __restrict__ cap0, int n_islands, int n_days, long long total_lo,
        long long total_step, long long total_bins, long long largest_lo, long long largest_step,
        long long largest_bins, long long* __restrict__ total_keys,
        long long* __restrict__ largest_keys) {
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) {
        return;
    }
    double days[MAX_EVENTS];
    int order[MAX_EVENTS], buffer[MAX_EVENTS];
    long long capacity[MAX_ISLANDS];
    for (int e = 0; e < n_events; ++e) {
        order[e] = e;
    }
    mcrisk::capacity_day_keys(node_times, i, n_strategies, n_nodes, s, event_node, n_events,
                              delta, event_island, cap0, n_islands, n_days, total_lo, total_step,
                              total_bins, largest_lo, largest_step, largest_bins, total_keys,
                              largest_keys, days, order, buffer, capacity);
}

#else  // host build: the same functions over the chunk in a loop, one thread

// Scratch of one chunk on the heap, the order carried from scenario to scenario (as Numba's).
struct BandScratch {
    double* keys;
    int* order;
    int* buffer;
    long long* capacity;
    BandScratch(int k, int islands)
        : keys(new double[k + 1]), order(new int[k + 1]), buffer(new int[k + 1]),
          capacity(new long long[islands + 1]) {
        for (int e = 0; e < k; ++e) {
            order[e] = e;
        }
    }
    ~BandScratch() {
        delete[] keys;
        delete[] order;
        delete[] buffer;
        delete[] capacity;
    }
};

extern "C" int host_capacity_blocks(
        const double* node_times, long long count, int n_strategies, int n_nodes, int s,
        const int* event_node, int n_events, const long long* delta, const int* event_island,
        const long long* cap0, int n_islands, int n_days, long long total_lo,
        long long total_step, long long total_bins, int* total_block, long long largest_lo,
        long long largest_step, long long largest_bins, int* largest_block) {
    BandScratch x(n_events, n_islands);
    for (long long i = 0; i < count; ++i) {
        mcrisk::capacity_blocks(node_times, i, n_strategies, n_nodes, s, event_node, n_events,
                                delta, event_island, cap0, n_islands, n_days, total_lo,
                                total_step, total_bins, total_block, largest_lo, largest_step,
                                largest_bins, largest_block, x.keys, x.order, x.buffer,
                                x.capacity);
    }
    return 0;
}

extern "C" int host_peak_draws(
        const double* node_times, long long count, int n_strategies, int n_nodes, int s,
        const int* event_node, int n_events, const int* event_hall, const double* event_delta,
        const double* draw0, int n_halls, double* peak) {
    BandScratch x(n_events, 0);
    for (long long i = 0; i < count; ++i) {
        mcrisk::peak_draws(node_times, i, n_strategies, n_nodes, s, event_node, n_events,
                           event_hall, event_delta, draw0, n_halls, peak, x.keys, x.order,
                           x.buffer);
    }
    return 0;
}

extern "C" int host_capacity_day_keys(
        const double* node_times, long long count, int n_strategies, int n_nodes, int s,
        const int* event_node, int n_events, const long long* delta, const int* event_island,
        const long long* cap0, int n_islands, int n_days, long long total_lo,
        long long total_step, long long total_bins, long long largest_lo, long long largest_step,
        long long largest_bins, long long* total_keys, long long* largest_keys) {
    BandScratch x(n_events, n_islands);
    for (long long i = 0; i < count; ++i) {
        mcrisk::capacity_day_keys(node_times, i, n_strategies, n_nodes, s, event_node, n_events,
                                  delta, event_island, cap0, n_islands, n_days, total_lo,
                                  total_step, total_bins, largest_lo, largest_step, largest_bins,
                                  total_keys, largest_keys, x.keys, x.order, x.buffer,
                                  x.capacity);
    }
    return 0;
}

#endif  // __CUDACC__

#endif  // MCRISK_BANDS_CUH
