// The metrics of one strategy on the worlds of a lane group, from their node times: capacity
// (trough depth and days, shortfall, homeless days), the job mix's columns (with
// [[demand.jobs]]), the power check and the completion day, each over its window
// [window_start, horizon) (power: from window_start on; docs/metrics.md, Windows). The
// events are gathered and sorted for every lane at once (a sorting network: the same comparisons
// in every lane); each lane then sweeps its own events in time order. Pairs:
// mcrisk/backends/numba/metrics.py, line by line, and mcrisk/backends/numpy/metrics.py.
#ifndef MCRISK_METRICS_CUH
#define MCRISK_METRICS_CUH

#include "compat.cuh"
#include "constants.cuh"
#include "plan.cuh"

namespace mcrisk {

// Sort times[0:count] with order[0:count] (times LANES + l) by (time, event) in every lane l < n:
// the order a stable sort of the events by time gives, since order starts as the same events in
// every lane. Batcher's odd-even merge sort, its comparators enumerated for any count (those
// past the end dropped): no lane branches.
MCRISK_HD void sort_events(double* times, int* order, int count, int n) {
    for (int p = 1; p < count; p *= 2) {
        for (int k = p; k >= 1; k /= 2) {
            for (int j = k % p; j < count - k; j += 2 * k) {
                int top = count - j - k;
                for (int i = 0; i < (k < top ? k : top); ++i) {
                    if (((i + j) ^ (i + j + k)) < 2 * p) {  // in the same 2p-block
                        int a = (i + j) * LANES, b = (i + j + k) * LANES;
                        for (int l = 0; l < n; ++l) {
                            double ta = times[a + l], tb = times[b + l];
                            int ka = order[a + l], kb = order[b + l];
                            bool swap = tb < ta || (tb == ta && kb < ka);
                            times[a + l] = swap ? tb : ta;
                            times[b + l] = swap ? ta : tb;
                            order[a + l] = swap ? kb : ka;
                            order[b + l] = swap ? ka : kb;
                        }
                    }
                }
            }
        }
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

// Demand point k's H100-eq in lane l: demand_value[k] where its growth quantity is -1, else
// demand_value[k] x (1 + g)^(day / 365) for the lane's growth g (libm's pow on the host).
MCRISK_HD double demand_point(const Plan& p, const double* world, int l, int k) {
    int q = p.demand_growth_q[k];
    if (q < 0) {
        return p.demand_value[k];
    }
    return p.demand_value[k] * pow(1.0 + world[q * LANES + l], p.demand_day[k] / 365.0);
}

// D(t) in lane l for t in demand segment k: k = 0 before the first point, k = n after the
// last, else the line from point k - 1 to point k.
MCRISK_HD double demand_on_segment(const Plan& p, const double* world, int l, int k, double t) {
    int n = p.n_demand;
    if (k == 0) {
        return demand_point(p, world, l, 0);
    }
    if (k == n) {
        return demand_point(p, world, l, n - 1);
    }
    double left = demand_point(p, world, l, k - 1);
    double right = demand_point(p, world, l, k);
    double slope = (right - left) / (p.demand_day[k] - p.demand_day[k - 1]);
    return left + (t - p.demand_day[k - 1]) * slope;
}

// Integral over [lo, hi] of max(0, D(t) - capacity) in lane l, splitting at demand knots. k is
// the demand segment holding lo or before it; on return it holds the segment of hi.
// Performance shortcut: intervals arrive in time order, so the segment only moves forward.
MCRISK_HD double shortfall_area(const Plan& p, const double* world, int l, double lo, double hi,
                                double capacity, int& k) {
    int n = p.n_demand;
    while (k < n && p.demand_day[k] <= lo) {
        k += 1;
    }
    double total = 0.0;
    double a = lo;
    while (true) {
        double b = k == n ? hi : min(hi, p.demand_day[k]);
        double f_a = demand_on_segment(p, world, l, k, a) - capacity;
        double f_b = demand_on_segment(p, world, l, k, b) - capacity;
        total += positive_area(a, b, f_a, f_b);
        if (b >= hi) {
            return total;
        }
        a = b;
        k += 1;
    }
}

// times[j * LANES + l], order[j * LANES + l]: strategy s's first `count` events (in its row of
// event_order, `width` wide) in lane l, sorted by (time, event).
MCRISK_HD void sorted_events(const int* event_node, const int* event_order, int width, int s,
                             int count, const double* node_time, int n, double* times,
                             int* order) {
    for (int j = 0; j < count; ++j) {
        int k = event_order[s * width + j];
        int v = event_node[k];
        for (int l = 0; l < n; ++l) {
            order[j * LANES + l] = k;
            times[j * LANES + l] = node_time[v * LANES + l];
        }
    }
    sort_events(times, order, count, n);
}

// The capacity metrics of lane l into its row of metrics, out[TROUGH_DEPTH], out[TROUGH_DAYS],
// out[SHORTFALL_GPU_DAYS] and out[HOMELESS_DAYS], from its sorted capacity events (sorted_events).
MCRISK_HD void capacity_metrics(const Plan& p, int s, const double* world, int l,
                                const double* times, const int* order, double* island_cap,
                                double* out) {
    int n_events = p.n_cap_events;
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
    double start = p.window_start;
    double lo = start;
    int segment = 0;
    double baseline = p.baseline, horizon = p.horizon, largest_job = p.largest_job;
    double below_limit = baseline - REL_EPS * baseline;
    double job_limit = largest_job - REL_EPS * max(largest_job, 1.0);
    for (int j = 0; j < n_events + 1; ++j) {
        double hi = j == n_events ? horizon : min(max(times[j * LANES + l], start), horizon);
        double width = hi - lo;
        if (width > 0.0) {
            depth = max(depth, baseline - capacity);
            if (capacity < below_limit) {
                trough_days += width;
            }
            double area = shortfall_area(p, world, l, lo, hi, capacity, segment);
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
        if (hi >= horizon) {
            break;  // performance: what later events change, no metric reads
        }
        int k = order[j * LANES + l];
        double delta = p.cap_event_delta[k];
        if (p.cap_event_scale_q[k] >= 0) {
            delta *= world[p.cap_event_scale_q[k] * LANES + l];
        }
        island_cap[p.cap_event_island[s * n_events + k]] += delta;
        capacity = 0.0;
        for (int i = 0; i < n_islands; ++i) {
            capacity += island_cap[i];
        }
    }
    out[TROUGH_DEPTH] = depth > REL_EPS * baseline ? depth : 0.0;
    out[TROUGH_DAYS] = trough_days;
    out[SHORTFALL_GPU_DAYS] = shortfall;
    out[HOMELESS_DAYS] = homeless_days;
}

// H100-eq of `demand` the packing rule places into islands of capacities island_cap: classes in
// job_order, each a fluid share x demand of jobs of its size; the islands visited by descending
// free capacity (ties: island order), each taking whole-job slots (floor((free + REL_EPS x
// max(size, 1)) / size), at least 0) up to what is left.
MCRISK_HD double pack_jobs(const Plan& p, double demand, const double* island_cap,
                           double* free_cap, bool* visited) {
    int n_islands = p.n_islands;
    for (int i = 0; i < n_islands; ++i) {
        free_cap[i] = island_cap[i];
    }
    double placed = 0.0;
    for (int o = 0; o < p.n_jobs; ++o) {
        int j = p.job_order[o];
        double size = p.job_size[j];
        double slack = REL_EPS * max(size, 1.0);
        double left = p.job_share[j] * demand;
        for (int i = 0; i < n_islands; ++i) {
            visited[i] = false;
        }
        for (int step = 0; step < n_islands; ++step) {
            int best = -1;
            for (int i = 0; i < n_islands; ++i) {
                if (!visited[i] && (best < 0 || free_cap[i] > free_cap[best])) {
                    best = i;
                }
            }
            visited[best] = true;
            double slots = max(0.0, floor((free_cap[best] + slack) / size));
            double x = min(left, size * slots);
            left -= x;
            free_cap[best] -= x;
            placed += x;
        }
    }
    return placed;
}

// out[UNSERVABLE_GPU_DAYS] = unservable_gpu_days, out[JOB_HOMELESS_DAYS + j] = homeless_days of
// job class j (out: the job columns of lane l's row), from its sorted capacity events
// (sorted_events): homeless days exact over the capacity intervals, unservable demand the
// midpoint rule on cells of job_step days from window_start, each cell's midpoint taken in the
// interval that holds it.
MCRISK_HD void job_metrics(const Plan& p, int s, const double* world, int l,
                           const double* times, const int* order, double* island_cap, double* free_cap,
                           bool* visited, double* out) {
    int n_events = p.n_cap_events;
    int n_islands = p.n_islands;
    int n_jobs = p.n_jobs;
    int n_demand = p.n_demand;
    double horizon = p.horizon, step = p.job_step, start = p.window_start;
    for (int i = 0; i < n_islands; ++i) {
        island_cap[i] = p.island_cap0[i];
    }
    for (int c = 0; c < JOB_HOMELESS_DAYS + n_jobs; ++c) {
        out[c] = 0.0;
    }
    double lo = start;
    long long cell = 0;
    int segment = 0;
    for (int j = 0; j < n_events + 1; ++j) {
        double hi = j == n_events ? horizon : min(max(times[j * LANES + l], start), horizon);
        double width = hi - lo;
        if (width > 0.0) {
            double largest = -infinity();
            double capacity = 0.0;
            for (int i = 0; i < n_islands; ++i) {
                largest = max(largest, island_cap[i]);
                capacity += island_cap[i];
            }
            for (int k = 0; k < n_jobs; ++k) {
                if (largest < p.job_size[k] - REL_EPS * max(p.job_size[k], 1.0)) {
                    out[JOB_HOMELESS_DAYS + k] += width;
                }
            }
            double packed = -1.0;  // performance: the demand last packed on these capacities
            double placed = 0.0;
            while (start + (double)cell * step < horizon) {
                double cell_lo = start + (double)cell * step;
                double cell_hi = min(start + (double)(cell + 1) * step, horizon);
                double mid = 0.5 * (cell_lo + cell_hi);
                if (!(mid < hi)) {
                    break;
                }
                while (segment < n_demand && p.demand_day[segment] <= mid) {
                    segment += 1;
                }
                double demand = demand_on_segment(p, world, l, segment, mid);
                if (demand != packed) {  // else the same packing as the cell before
                    placed = pack_jobs(p, demand, island_cap, free_cap, visited);
                    packed = demand;
                }
                out[UNSERVABLE_GPU_DAYS] +=
                    max(0.0, min(demand, capacity) - placed) * (cell_hi - cell_lo);
                cell += 1;
            }
            lo = hi;
        }
        if (hi >= horizon) {
            break;  // every cell's midpoint is below the horizon
        }
        int k = order[j * LANES + l];
        double delta = p.cap_event_delta[k];
        if (p.cap_event_scale_q[k] >= 0) {
            delta *= world[p.cap_event_scale_q[k] * LANES + l];
        }
        island_cap[p.cap_event_island[s * n_events + k]] += delta;
    }
}

// 1.0 if some hall's draw exceeds its cap at any time from window_start on in lane l (its
// sorted power events, sorted_events; not only before the horizon), else 0.0: with window_start
// 0 every draw, with w > 0 the draws still in force at w or later.
MCRISK_HD double power_violation(const Plan& p, int s, int l, const double* times,
                                 const int* order, double* draw) {
    int n_events = p.n_power_checked[s];
    double start = p.window_start;
    // the draw before the first event counts unless an event at or before w replaced it
    bool counted = start <= 0.0 || n_events == 0 || times[l] > start;
    for (int h = 0; h < p.n_halls; ++h) {
        draw[h] = p.hall_draw0[h];
        if (counted && draw[h] > p.hall_cap[h] + REL_EPS * p.hall_cap[h]) {
            return 1.0;
        }
    }
    for (int j = 0; j < n_events; ++j) {
        int k = order[j * LANES + l];
        draw[p.power_event_hall[s * p.n_power_events + k]] += p.power_event_delta[k];
        bool group_end = j == n_events - 1 || times[(j + 1) * LANES + l] != times[j * LANES + l];
        // a tie group's draw holds until the next event: counted if that is after w
        if (group_end && (start <= 0.0 || j == n_events - 1
                          || times[(j + 1) * LANES + l] > start)) {
            for (int h = 0; h < p.n_halls; ++h) {
                if (draw[h] > p.hall_cap[h] + REL_EPS * p.hall_cap[h]) {
                    return 1.0;
                }
            }
        }
    }
    return 0.0;
}

// out[l] = the latest time of the completion nodes in lane l, l < n.
MCRISK_HD void completion_day(const Plan& p, const double* node_time, int n, double* out) {
    for (int l = 0; l < n; ++l) {
        out[l] = -infinity();
    }
    for (int k = 0; k < p.n_completion; ++k) {
        const double* t = node_time + p.completion_node[k] * LANES;
        for (int l = 0; l < n; ++l) {
            out[l] = max(out[l], t[l]);
        }
    }
}

}  // namespace mcrisk

#endif  // MCRISK_METRICS_CUH
