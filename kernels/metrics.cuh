// The metrics of one strategy on one world, from its node times: capacity (trough depth and
// days, shortfall, homeless days), the power check and the completion day. Pairs:
// mcrisk/backends/numba/metrics.py, line by line, and mcrisk/backends/numpy/metrics.py.
#ifndef MCRISK_METRICS_CUH
#define MCRISK_METRICS_CUH

#include "compat.cuh"
#include "plan.cuh"

namespace mcrisk {

// mcrisk.definitions: the tolerance of "below baseline" and "above cap".
static constexpr double REL_EPS = 1e-9;

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

}  // namespace mcrisk

#endif  // MCRISK_METRICS_CUH
