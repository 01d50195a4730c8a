// The costs of one strategy on the worlds of a lane group, from their node times: the cost
// columns (mcrisk.core.definitions.COSTS) after the metrics, exactly in the order of the design
// (the bit-parity contract): the spans, reserved power and power over the reservation hall by
// hall, the
// shortfall, the crews, the one-offs, then the total, every cost over [window_start, horizon]
// (window_start 0 without a status; docs/metrics.md, Windows).
// simulate_scenario calls strategy_costs only when the plan has costs (n_costs > 0). Pairs:
// mcrisk/backends/numba/costs.py, line by line, and mcrisk/backends/numpy/costs.py.
#ifndef MCRISK_COSTS_CUH
#define MCRISK_COSTS_CUH

#include "compat.cuh"
#include "constants.cuh"
#include "metrics.cuh"
#include "plan.cuh"

namespace mcrisk {

// The price factor of lane l: world[q] for a drawn price (q >= 0), else 1.0.
MCRISK_HD double price(int q, const double* world, int l) {
    return q >= 0 ? world[q * LANES + l] : 1.0;
}

// t held to the cost window [start, horizon].
MCRISK_HD double clip(double t, double start, double horizon) {
    return min(max(t, start), horizon);
}

// times[j * LANES + l], order[j * LANES + l]: the power events of hall h in strategy s in lane
// l < n, sorted by (time, event); returns how many (power_event_order lists only the checked
// events: metrics.cuh sorted_events).
MCRISK_HD int hall_power_events(const Plan& p, int s, int h, const double* node_time, int n,
                                double* times, int* order) {
    const int* hall = p.power_event_hall + s * p.n_power_events;
    int count = 0;
    for (int e = 0; e < p.n_power_events; ++e) {
        if (hall[e] == h) {
            int v = p.power_event_node[e];
            for (int l = 0; l < n; ++l) {
                order[count * LANES + l] = e;
                times[count * LANES + l] = node_time[v * LANES + l];
            }
            count += 1;
        }
    }
    sort_events(times, order, count, n);
    return count;
}

// The day reservation step j (of hall h, strategy s) starts in lane l: its day, or res_day
// days after its event; no sooner than prev (the step before it) and, a step down, than the
// hall's res_term after term_start (the latest step up's start). The first step of a hall
// (j == res_ptr[s, h]) only the first. numpy/costs.step_starts.
MCRISK_HD double step_start(const Plan& p, int s, int h, int j, double prev, double term_start,
                            const double* node_time, int l) {
    int first = p.res_ptr[s * (p.n_halls + 1) + h];
    int v = p.res_node[s * p.res_width + j];
    double t = v >= 0 ? node_time[v * LANES + l] + p.res_day[s * p.res_width + j]
                      : p.res_day[s * p.res_width + j];
    if (j > first) {
        t = max(t, prev);
        if (p.res_kw[s * p.res_width + j] < p.res_kw[s * p.res_width + j - 1]) {
            t = max(t, term_start + p.res_term[h]);
        }
    }
    return t;
}

// Whether step j starts a minimum term: the hall's first step, or a step up.
MCRISK_HD bool starts_term(const Plan& p, int s, int h, int j) {
    return j == p.res_ptr[s * (p.n_halls + 1) + h]
           || p.res_kw[s * p.res_width + j] > p.res_kw[s * p.res_width + j - 1];
}

// The integral over [window_start, horizon] of max(0, draw - reserved) in hall h, lane l
// (kW-days): the hall's power events (sorted, hall_power_events) merged with its reservation
// steps (started as step_start says); those before the window apply with no width.
MCRISK_HD double over_area(const Plan& p, int s, int h, int l, const double* times,
                           const int* order, int count, const double* node_time) {
    const int* ptr = p.res_ptr + s * (p.n_halls + 1);
    const double* res_kw = p.res_kw + s * p.res_width;
    double horizon = p.horizon, start = p.window_start;
    int end = ptr[h + 1];
    double t = start;
    double draw = p.hall_draw0[h];
    double res = 0.0;
    double area = 0.0;
    int j = ptr[h];
    double ts = 0.0;
    double term_start = 0.0;
    if (j < end) {
        ts = step_start(p, s, h, j, ts, term_start, node_time, l);
        term_start = ts;
    }
    while (j < end && ts <= start) {
        res = res_kw[j];
        j += 1;
        if (j < end) {
            ts = step_start(p, s, h, j, ts, term_start, node_time, l);
            if (starts_term(p, s, h, j)) {
                term_start = ts;
            }
        }
    }
    int i = 0;
    while (true) {
        double te = i < count ? min(max(times[i * LANES + l], start), horizon) : horizon;
        double tr = j < end ? min(ts, horizon) : horizon;
        double nxt = min(te, tr);
        area += max(0.0, draw - res) * (nxt - t);
        t = nxt;
        if (t >= horizon) {
            break;
        }
        if (te <= tr) {
            draw += p.power_event_delta[order[i * LANES + l]];
            i += 1;
        } else {
            res = res_kw[j];
            j += 1;
            if (j < end) {
                ts = step_start(p, s, h, j, ts, term_start, node_time, l);
                if (starts_term(p, s, h, j)) {
                    term_start = ts;
                }
            }
        }
    }
    return area;
}

// Reserved power of hall h in lane l, step by step into row: (rate x price) x the days in the
// window from the step's start to the next step's (the last's to the horizon).
MCRISK_HD void add_reserved(const Plan& p, int s, int h, int l, const double* node_time,
                            const double* world, double* row) {
    int end = p.res_ptr[s * (p.n_halls + 1) + h + 1];
    int j = p.res_ptr[s * (p.n_halls + 1) + h];
    double ts = step_start(p, s, h, j, 0.0, 0.0, node_time, l);
    double term_start = ts;
    while (j < end) {
        double until = infinity();
        if (j + 1 < end) {
            until = step_start(p, s, h, j + 1, ts, term_start, node_time, l);
            if (starts_term(p, s, h, j + 1)) {
                term_start = until;
            }
        }
        double rate = p.res_rate[s * p.res_width + j];
        if (rate != 0.0) {
            double width = max(0.0, clip(until, p.window_start, p.horizon)
                                    - clip(ts, p.window_start, p.horizon));
            row[N_METRICS + COST_POWER_RESERVED] += (rate * price(p.res_price_q[h], world, l)) * width;
        }
        ts = until;
        j += 1;
    }
}

// rows[l * row_stride + N_METRICS + k] = the costs of strategy s in lane l < n (k: COST_*, the
// columns of constants.cuh), from its node times, its world and its shortfall metric (in the same
// row); times and order are scratch.
MCRISK_HD void strategy_costs(const Plan& p, int s, const double* world,
                              const double* node_time, int n, double* times, int* order,
                              double* rows, long long row_stride) {
    double horizon = p.horizon, window_start = p.window_start;
    for (int l = 0; l < n; ++l) {
        for (int k = 0; k < N_COSTS; ++k) {
            rows[l * row_stride + N_METRICS + k] = 0.0;
        }
    }
    // 1. Spans: rate x price x the days of [start, end] inside the window.
    for (int z = 0; z < p.n_spans; ++z) {
        double rate = p.span_rate[s * p.n_spans + z];
        if (rate == 0.0) {
            continue;
        }
        int column = N_METRICS + p.span_cost[z];
        int q = p.span_price_q[s * p.n_spans + z];
        int start_node = p.span_start_node[z], end_node = p.span_end_node[z];
        for (int l = 0; l < n; ++l) {
            double a = start_node >= 0 ? node_time[start_node * LANES + l] : p.span_start_day[z];
            double b = end_node >= 0 ? node_time[end_node * LANES + l] : p.span_end_day[z];
            double width = max(0.0, clip(b, window_start, horizon)
                                    - clip(a, window_start, horizon));
            rows[l * row_stride + column] += (rate * price(q, world, l)) * width;
        }
    }
    // 2. Reserved power, hall by hall, step by step.
    for (int h = 0; h < p.n_halls; ++h) {
        if (p.res_ptr[s * (p.n_halls + 1) + h] == p.res_ptr[s * (p.n_halls + 1) + h + 1]) {
            continue;
        }
        for (int l = 0; l < n; ++l) {
            add_reserved(p, s, h, l, node_time, world, rows + l * row_stride);
        }
    }
    // 3. Power over the reservation, hall by hall: the hall's power events sorted by (time,
    // event), merged with its reservation steps.
    for (int h = 0; h < p.n_halls; ++h) {
        if (p.over_rate[h] == 0.0) {
            continue;
        }
        int count = hall_power_events(p, s, h, node_time, n, times, order);
        for (int l = 0; l < n; ++l) {
            double area = over_area(p, s, h, l, times, order, count, node_time);
            rows[l * row_stride + N_METRICS + COST_POWER_OVER] +=
                (p.over_rate[h] * price(p.over_price_q[h], world, l)) * area;
        }
    }
    // 4. Shortfall: the shortfall metric (H100-eq x days) priced.
    if (p.shortfall_rate != 0.0) {
        for (int l = 0; l < n; ++l) {
            rows[l * row_stride + N_METRICS + COST_SHORTFALL] =
                (p.shortfall_rate * price(p.shortfall_price_q, world, l))
                * rows[l * row_stride + SHORTFALL_GPU_DAYS];
        }
    }
    // 5. Crews: engaged from the first row retrofit's start to the last one's finish.
    int rows_of_s = p.n_retrofit_rows[s];
    if (p.crew_rate[s] != 0.0 && rows_of_s > 0) {
        for (int l = 0; l < n; ++l) {
            double first = infinity();
            double last = -infinity();
            for (int r = 0; r < rows_of_s; ++r) {
                int v = p.crew_node[s * p.crew_width + r];
                double finish = node_time[v * LANES + l];
                const int* add_q = p.node_add_q + (s * p.n_nodes + v) * 2;
                double d = 0.0;
                if (add_q[0] >= 0) {
                    d += world[add_q[0] * LANES + l];
                }
                if (add_q[1] >= 0) {
                    d += world[add_q[1] * LANES + l];
                }
                d += p.node_add_const[s * p.n_nodes + v];
                double start = finish - d;
                first = min(first, start);
                last = max(last, finish);
            }
            rows[l * row_stride + N_METRICS + COST_CREWS] =
                (p.crew_rate[s] * price(p.crew_price_q, world, l))
                * max(0.0, clip(last, window_start, horizon)
                           - clip(first, window_start, horizon));
        }
    }
    // 5b. Install teams and burn-in bays: each pool, as the crews, from its first start to its
    // last end (a member is busy for the install's or burn-in's days past its row's time).
    for (int w = 0; w < p.n_pools[s]; ++w) {
        double rate = p.pool_rate[s * p.pool_width + w];
        if (rate == 0.0) {
            continue;
        }
        int pool = p.pool_first[s * p.pool_width + w];
        int q = p.pool_price_q[s * p.pool_width + w];
        for (int l = 0; l < n; ++l) {
            double first = infinity();
            double last = -infinity();
            for (int r = p.n_retrofit_rows[s]; r < p.n_crew_rows[s]; ++r) {
                int v = p.crew_node[s * p.crew_width + r];
                if (p.crew_first[s * p.n_nodes + v] != pool) {
                    continue;
                }
                double begin = node_time[v * LANES + l];
                double end = begin;
                int hold = p.crew_hold_q[s * p.n_nodes + v];
                if (hold >= 0) {
                    end = begin + world[hold * LANES + l];
                }
                first = min(first, begin);
                last = max(last, end);
            }
            rows[l * row_stride + N_METRICS + COST_CREWS] +=
                (rate * price(q, world, l))
                * max(0.0, clip(last, window_start, horizon)
                           - clip(first, window_start, horizon));
        }
    }
    // 6. One-offs.
    for (int u = 0; u < p.n_lumps; ++u) {
        double amount = p.lump_amount[u];
        if (amount == 0.0) {
            continue;
        }
        int column = N_METRICS + p.lump_cost[u];
        int q = p.lump_price_q[u];
        for (int l = 0; l < n; ++l) {
            rows[l * row_stride + column] += amount * price(q, world, l);
        }
    }
    // 7. The total: the columns after it, added in order.
    for (int l = 0; l < n; ++l) {
        double total = rows[l * row_stride + N_METRICS + COST_TOTAL + 1];
        for (int k = N_METRICS + COST_TOTAL + 2; k < N_METRICS + N_COSTS; ++k) {
            total += rows[l * row_stride + k];
        }
        rows[l * row_stride + N_METRICS + COST_TOTAL] = total;
    }
}

}  // namespace mcrisk

#endif  // MCRISK_COSTS_CUH
