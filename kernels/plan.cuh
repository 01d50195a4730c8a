// The compiled plan as the kernels see it: the struct every stage reads (`const Plan& p`) and the
// plan parameters of the kernel's entry points. GENERATED from the plan interface
// (mcrisk/plan/record.py) by mcrisk.backends.cuda.plan_header(): do not edit. Change the table,
// then run `python tests/regen_headers.py`; tests/plan/test_record.py fails until then.
//
// Axes (2-D arrays are indexed by hand: row * width + column):
//   d       distribution (at least 1: a placeholder when the scenario draws nothing)
//   knots   quantile table entries (PERT and posterior tables) end to end (at least 1)
//   q       world quantity
//   terms   the SUM quantities' terms end to end (at least 1)
//   copulas the copula rows' weights end to end (at least 1)
//   b       burn-in table row (at least 1)
//   s       strategy
//   v       node (fixed ids shared by every strategy)
//   deps    one strategy's deps end to end, padded to the longest
//   r       crew row, padded to the most of any strategy (at least 1)
//   unlocks one strategy's unlock lists end to end, padded
//   w       a strategy's pools of install teams and burn-in bays, padded (at least 1)
//   k       capacity event
//   i       island
//   p       power event
//   h       hall
//   c       node whose time ends the migration
//   n       demand point
//   z       cost span (at least 1: a placeholder of rate 0 without [costs])
//   y       one strategy's reservation steps end to end, padded (at least 1)
//   u       one-off cost (at least 1: a placeholder of amount 0)
//   j       job class (at least 1: a placeholder without a job mix)
#ifndef MCRISK_PLAN_CUH
#define MCRISK_PLAN_CUH

#include "compat.cuh"

namespace mcrisk {

struct Plan {
    // distributions: the encoded distributions (mcrisk/core/distributions.py)
    const int* dist_kind;           // int32[d]: KIND_* code (a `chance`: its inner kind)
    const double* dist_param;       // float64[d, 4]: four parameters by kind
    const double* dist_chance;      // float64[d]: P(a non-zero draw); 1.0: not a `chance`
    const double* pert_table;       // float64[knots]: every PERT and posterior (TABLE) quantile
                                    // table end to end
    // world: the quantities drawn or derived once per scenario, in dependency order
    const int* q_kind;              // int32[q]: Q_SAMPLE, Q_SUM, Q_BURNIN, Q_ATTEMPTS, Q_EARLY,
                                    // Q_SOAK, Q_OUT, Q_REST or Q_ABOVE
    const int* q_dist;              // int32[q]: distribution of a SAMPLE or an ABOVE (a BURNIN: its
                                    // attempt's; an EARLY: its age's)
    const u64* q_address;           // uint64[q, 4]: addresses (BURNIN: attempt, outcome, fix, rma)
    const double* q_const;          // float64[q]: a SUM's or REST's constant; an ABOVE's bound's; a
                                    // conditioned BURNIN's elapsed days of its running piece
    const int* q_terms_ptr;         // int32[q + 1]: a SUM's terms: q_terms[ptr[q]:ptr[q + 1]]
    const int* q_terms;             // int32[terms]: earlier quantities a SUM adds (a REST, an
                                    // ABOVE's bound: subtracts)
    const int* q_status;            // int32[q]: 0, or how a status conditions a BURNIN (BURNIN_*)
                                    // or an EARLY (EARLY_SURVIVED)
    const double* q_state;          // float64[q, 4]: a conditioned BURNIN's days so far, attempt it
                                    // resumes at, failures in a row, RMAs done; an EARLY's age
                                    // exceeded and chance
    const int* q_burnin;            // int32[q]: a BURNIN's row of the burn-in tables, else -1
    const int* burnin_dist;         // int32[b, 3]: attempt, fix and rma distributions
    const double* burnin_fail;      // float64[b, 2]: fail_first, fail_retry
    const int* burnin_rma_after;    // int32[b]: failures in a row that send a unit to RMA
    const int* q_copula_ptr;        // int32[q + 1]: a correlated SAMPLE's copula row:
                                    // copula_address and copula_weight[ptr[q]:ptr[q + 1]] (empty:
                                    // not correlated; mcrisk/core/copula.py)
    const u64* copula_address;      // uint64[copulas]: addresses whose normal scores a row weighs
    const double* copula_weight;    // float64[copulas]: Cholesky weights, row by row
    const double* copula_low;       // float64[copulas]: the range [low, high] an entry's uniform is
                                    // mapped into before its normal score: 0 but for a member a
                                    // status conditions
    const double* copula_high;      // float64[copulas]: its high end: 1 but for a member a status
                                    // conditions (core.copula.copula_score)
    const int* copula_quantity;     // int32[copulas]: -1, or an earlier quantity whose value's rank
                                    // is the entry's normal score (a member a status conditions
                                    // world by world)
    const int* copula_dist;         // int32[copulas]: that quantity's distribution in the scenario,
                                    // whose CDF ranks its value (else 0)
    // network: each strategy's max-plus network over fixed node ids
    const int* node_base_q;         // int32[v]: world quantity a node waits for, or -1
    const int* node_kind;           // int32[s, v]: NODE_MAX, or NODE_CREW (also waits for a crew)
    const double* node_base_const;  // float64[s, v]: day before which a node cannot start
    const int* node_add_q;          // int32[s, v, 2]: world quantities added to the start, or -1
    const double* node_add_const;   // float64[s, v]: days added to the start
    const double* node_floor;       // float64[s, v]: day before which the node's time cannot fall
                                    // (a status's as_of for an event not yet recorded), or -inf
    const int* dep_ptr;             // int32[s, v + 1]: CSR pointers: node v's deps in dep_idx
    const int* dep_idx;             // int32[s, deps]: the deps, node by node
    // crew_schedule: blocks that time nodes without a worklist (mcrisk/plan/compile.py)
    const int* n_crews;             // int32[s]: retrofit crews of each strategy (its own, else the
                                    // scenario's)
    const int* block_ptr;           // int32[s, v + 1]: CSR pointers: block b's nodes in block_node
    const int* block_node;          // int32[s, v]: every node in a block once, block by block
    const int* block_wait;          // int32[s, v]: how many crew rows block b waits for
    const int* n_ready_blocks;      // int32[s]: blocks 0 .. n - 1 wait for no crew row
    const int* block_feeds_crew;    // int32[s, v]: 1 if block b is a crew row or a crew row waits
                                    // for one of its nodes; the kernels may time the others after
                                    // every row has a crew
    const int* crew_node;           // int32[s, r]: crew rows (NODE_CREW nodes), ascending ids
    const int* n_crew_rows;         // int32[s]: crew rows of each strategy
    const int* unlock_ptr;          // int32[s, r + 1]: CSR pointers: the blocks crew row r frees
    const int* unlock_block;        // int32[s, unlocks]: the freed blocks, ascending, row by row
    const int* n_slots;             // int32[s]: retrofit crews, install teams and burn-in bays of
                                    // each strategy, end to end (crews first)
    const int* crew_first;          // int32[s, v]: a crew row's first slot: 0 for a row retrofit,
                                    // else its hall's (or the site's) teams or bays
    const int* crew_count;          // int32[s, v]: how many slots from crew_first it may take
    const int* crew_hold_q;         // int32[s, v]: world quantity its slot stays busy past its time
                                    // (install or burn-in days), or -1
    const int* n_retrofit_rows;     // int32[s]: crew_node[s, :n] are the row retrofits (the crews'
                                    // cost)
    const int* n_pools;             // int32[s]: pools of install teams and burn-in bays of each
                                    // strategy
    const int* pool_first;          // int32[s, w]: each pool's first slot (its crew rows'
                                    // crew_first)
    // events: capacity and power changes at node times
    const int* cap_event_node;      // int32[k]: node at whose time capacity changes
    const int* cap_event_island;    // int32[s, k]: island whose capacity changes (placement
                                    // decides)
    const double* cap_event_delta;  // float64[k]: H100-eq (per H100-eq-per-GPU if scaled)
    const int* cap_event_scale_q;   // int32[k]: world quantity multiplying the delta, or -1
    const double* island_cap0;      // float64[i]: capacity in service at day 0
    const int* power_event_node;    // int32[p]: node at whose time a hall's draw changes
    const int* power_event_hall;    // int32[s, p]: hall whose draw changes (placement decides)
    const double* power_event_delta; // float64[p]: kW
    const int* cap_event_order;     // int32[s, k]: events in a likely time order (performance)
    const int* power_event_order;   // int32[s, p]: likewise; the first n_power_checked[s] are used
    const int* n_power_checked;     // int32[s]: power events of halls that could pass their cap
    const double* hall_draw0;       // float64[h]: kW drawn at day 0
    const double* hall_cap;         // float64[h]: kW cap
    // metric_definitions: what the metrics measure against
    const int* completion_node;     // int32[c]: nodes whose latest time is the completion day
    double baseline;                // float64: capacity at day 0, H100-eq
    double horizon;                 // float64: days the metrics integrate over
    double window_start;            // float64: day the metrics and costs start counting from: 0, or
                                    // a status's as_of (docs/metrics.md, Windows)
    double largest_job;             // float64: H100-eq the largest job needs on one island
    const double* demand_day;       // float64[n]: demand points' days
    const double* demand_value;     // float64[n]: demand points' H100-eq (a forecast's base)
    const int* demand_growth_q;     // int32[n]: -1: value fixed; else value x (1 + q)^(day/365)
    // costs: what the migration costs per scenario, over [window_start, horizon]
    // (mcrisk/plan/costs.py; a price is world[q] when its q >= 0, else 1)
    int n_costs;                    // int32: cost columns after the metrics: 0 (no [costs]) or
                                    // N_COSTS
    const int* span_start_node;     // int32[z]: node whose time starts a cost span, or -1
    const double* span_start_day;   // float64[z]: the span's start day where it has no node
    const int* span_end_node;       // int32[z]: node whose time ends a cost span, or -1
    const double* span_end_day;     // float64[z]: the span's end day where it has no node (inf:
                                    // open to the horizon)
    const double* span_rate;        // float64[s, z]: cost per day of the span at a price of 1 (0:
                                    // not in strategy s)
    const int* span_price_q;        // int32[s, z]: world quantity of the span's price, or -1
    const int* span_cost;           // int32[z]: cost column the span adds to (definitions.COSTS)
    const int* res_ptr;             // int32[s, h + 1]: CSR pointers: strategy s's reservation steps
                                    // of hall h in res_day and res_kw
    const double* res_day;          // float64[s, y]: a step's day, or its days after res_node's
                                    // time
    const double* res_kw;           // float64[s, y]: kW reserved from that day on
    const int* res_node;            // int32[s, y]: node whose time a step starts after, or -1 (a
                                    // day)
    const double* res_rate;         // float64[s, y]: a step's cost per day at a price of 1
    const int* res_price_q;         // int32[h]: world quantity of hall h's price per kW-month, or
                                    // -1
    const double* res_term;         // float64[h]: hall h's minimum_term_days (a step down waits it)
    const double* over_rate;        // float64[h]: cost per kW-day drawn above the reservation at a
                                    // price of 1 (0: not priced)
    const int* over_price_q;        // int32[h]: world quantity of that price, or -1
    double shortfall_rate;          // float64: cost per H100-eq-day of shortfall at a price of 1
    int shortfall_price_q;          // int32: world quantity of that price, or -1
    const double* crew_rate;        // float64[s]: cost per day strategy s's retrofit crews are
                                    // engaged (all of them) at a price of 1
    int crew_price_q;               // int32: world quantity of that price, or -1
    const double* pool_rate;        // float64[s, w]: cost per day pool w of strategy s is engaged:
                                    // its teams or bays x the price (1 if drawn), 0: none
    const int* pool_price_q;        // int32[s, w]: world quantity of that price, or -1
    const double* lump_amount;      // float64[u]: one-off costs (mitigations in effect) at a price
                                    // of 1
    const int* lump_price_q;        // int32[u]: world quantity of a one-off's price, or -1
    const int* lump_cost;           // int32[u]: cost column a one-off adds to
    // jobs: the job mix the kernels pack into the islands (mcrisk/plan/jobs.py; docs/metrics.md:
    // the packing rule)
    int n_job_cols;                 // int32: job columns after the cost columns: 0 (no job mix) or
                                    // 1 + J (definitions.job_columns)
    const double* job_size;         // float64[j]: H100-eq one job of the class needs on one island
    const double* job_share;        // float64[j]: the class's share of demand
    const int* job_order;           // int32[j]: classes in packing order: largest size first, ties
                                    // in file order
    double job_step;                // float64: days per cell of unservable_gpu_days' midpoint rule
    // shapes: the axis lengths, for the arrays indexed by hand
    int n_quantities;               // q
    int n_strategies;               // s
    int n_nodes;                    // v
    int dep_width;                  // deps
    int crew_width;                 // r
    int unlock_width;               // unlocks
    int pool_width;                 // w
    int n_cap_events;               // k
    int n_islands;                  // i
    int n_power_events;             // p
    int n_halls;                    // h
    int n_completion;               // c
    int n_demand;                   // n
    int n_spans;                    // z
    int res_width;                  // y
    int n_lumps;                    // u
    int n_jobs;                     // j
};

}  // namespace mcrisk

// The plan parameters (R: __restrict__ on the device, nothing on the host), in the order of
// mcrisk.backends.cuda.PLAN_PARAMETERS, and the Plan they make.
#define MCRISK_PLAN_PARAMS(R)                                                                      \
    const int* R dist_kind,                                                                        \
    const double* R dist_param,                                                                    \
    const double* R dist_chance,                                                                   \
    const double* R pert_table,                                                                    \
    const int* R q_kind,                                                                           \
    const int* R q_dist,                                                                           \
    const mcrisk::u64* R q_address,                                                                \
    const double* R q_const,                                                                       \
    const int* R q_terms_ptr,                                                                      \
    const int* R q_terms,                                                                          \
    const int* R q_status,                                                                         \
    const double* R q_state,                                                                       \
    const int* R q_burnin,                                                                         \
    const int* R burnin_dist,                                                                      \
    const double* R burnin_fail,                                                                   \
    const int* R burnin_rma_after,                                                                 \
    const int* R q_copula_ptr,                                                                     \
    const mcrisk::u64* R copula_address,                                                           \
    const double* R copula_weight,                                                                 \
    const double* R copula_low,                                                                    \
    const double* R copula_high,                                                                   \
    const int* R copula_quantity,                                                                  \
    const int* R copula_dist,                                                                      \
    const int* R node_base_q,                                                                      \
    const int* R node_kind,                                                                        \
    const double* R node_base_const,                                                               \
    const int* R node_add_q,                                                                       \
    const double* R node_add_const,                                                                \
    const double* R node_floor,                                                                    \
    const int* R dep_ptr,                                                                          \
    const int* R dep_idx,                                                                          \
    const int* R n_crews,                                                                          \
    const int* R block_ptr,                                                                        \
    const int* R block_node,                                                                       \
    const int* R block_wait,                                                                       \
    const int* R n_ready_blocks,                                                                   \
    const int* R block_feeds_crew,                                                                 \
    const int* R crew_node,                                                                        \
    const int* R n_crew_rows,                                                                      \
    const int* R unlock_ptr,                                                                       \
    const int* R unlock_block,                                                                     \
    const int* R n_slots,                                                                          \
    const int* R crew_first,                                                                       \
    const int* R crew_count,                                                                       \
    const int* R crew_hold_q,                                                                      \
    const int* R n_retrofit_rows,                                                                  \
    const int* R n_pools,                                                                          \
    const int* R pool_first,                                                                       \
    const int* R cap_event_node,                                                                   \
    const int* R cap_event_island,                                                                 \
    const double* R cap_event_delta,                                                               \
    const int* R cap_event_scale_q,                                                                \
    const double* R island_cap0,                                                                   \
    const int* R power_event_node,                                                                 \
    const int* R power_event_hall,                                                                 \
    const double* R power_event_delta,                                                             \
    const int* R cap_event_order,                                                                  \
    const int* R power_event_order,                                                                \
    const int* R n_power_checked,                                                                  \
    const double* R hall_draw0,                                                                    \
    const double* R hall_cap,                                                                      \
    const int* R completion_node,                                                                  \
    double baseline,                                                                               \
    double horizon,                                                                                \
    double window_start,                                                                           \
    double largest_job,                                                                            \
    const double* R demand_day,                                                                    \
    const double* R demand_value,                                                                  \
    const int* R demand_growth_q,                                                                  \
    int n_costs,                                                                                   \
    const int* R span_start_node,                                                                  \
    const double* R span_start_day,                                                                \
    const int* R span_end_node,                                                                    \
    const double* R span_end_day,                                                                  \
    const double* R span_rate,                                                                     \
    const int* R span_price_q,                                                                     \
    const int* R span_cost,                                                                        \
    const int* R res_ptr,                                                                          \
    const double* R res_day,                                                                       \
    const double* R res_kw,                                                                        \
    const int* R res_node,                                                                         \
    const double* R res_rate,                                                                      \
    const int* R res_price_q,                                                                      \
    const double* R res_term,                                                                      \
    const double* R over_rate,                                                                     \
    const int* R over_price_q,                                                                     \
    double shortfall_rate,                                                                         \
    int shortfall_price_q,                                                                         \
    const double* R crew_rate,                                                                     \
    int crew_price_q,                                                                              \
    const double* R pool_rate,                                                                     \
    const int* R pool_price_q,                                                                     \
    const double* R lump_amount,                                                                   \
    const int* R lump_price_q,                                                                     \
    const int* R lump_cost,                                                                        \
    int n_job_cols,                                                                                \
    const double* R job_size,                                                                      \
    const double* R job_share,                                                                     \
    const int* R job_order,                                                                        \
    double job_step,                                                                               \
    int n_quantities,                                                                              \
    int n_strategies,                                                                              \
    int n_nodes,                                                                                   \
    int dep_width,                                                                                 \
    int crew_width,                                                                                \
    int unlock_width,                                                                              \
    int pool_width,                                                                                \
    int n_cap_events,                                                                              \
    int n_islands,                                                                                 \
    int n_power_events,                                                                            \
    int n_halls,                                                                                   \
    int n_completion,                                                                              \
    int n_demand,                                                                                  \
    int n_spans,                                                                                   \
    int res_width,                                                                                 \
    int n_lumps,                                                                                   \
    int n_jobs

#define MCRISK_PLAN_VALUES                                                                         \
    {dist_kind, dist_param, dist_chance, pert_table, q_kind, q_dist, q_address, q_const,           \
     q_terms_ptr, q_terms, q_status, q_state, q_burnin, burnin_dist, burnin_fail,                  \
     burnin_rma_after, q_copula_ptr, copula_address, copula_weight, copula_low,                    \
     copula_high, copula_quantity, copula_dist, node_base_q, node_kind, node_base_const,           \
     node_add_q, node_add_const, node_floor, dep_ptr, dep_idx, n_crews, block_ptr,                 \
     block_node, block_wait, n_ready_blocks, block_feeds_crew, crew_node, n_crew_rows,             \
     unlock_ptr, unlock_block, n_slots, crew_first, crew_count, crew_hold_q,                       \
     n_retrofit_rows, n_pools, pool_first, cap_event_node, cap_event_island,                       \
     cap_event_delta, cap_event_scale_q, island_cap0, power_event_node, power_event_hall,          \
     power_event_delta, cap_event_order, power_event_order, n_power_checked, hall_draw0,           \
     hall_cap, completion_node, baseline, horizon, window_start, largest_job, demand_day,          \
     demand_value, demand_growth_q, n_costs, span_start_node, span_start_day,                      \
     span_end_node, span_end_day, span_rate, span_price_q, span_cost, res_ptr, res_day,            \
     res_kw, res_node, res_rate, res_price_q, res_term, over_rate, over_price_q,                   \
     shortfall_rate, shortfall_price_q, crew_rate, crew_price_q, pool_rate, pool_price_q,          \
     lump_amount, lump_price_q, lump_cost, n_job_cols, job_size, job_share, job_order,             \
     job_step, n_quantities, n_strategies, n_nodes, dep_width, crew_width, unlock_width,           \
     pool_width, n_cap_events, n_islands, n_power_events, n_halls, n_completion, n_demand,         \
     n_spans, res_width, n_lumps, n_jobs}

#endif  // MCRISK_PLAN_CUH
