// The worlds of a lane group: quantities drawn or derived once, in dependency order (common
// random numbers: every strategy runs on them); world[q * LANES + l] is quantity q of scenario
// scenario0 + l. Pairs: mcrisk/backends/numba/world.py, line by line, and
// mcrisk/backends/numpy/world.py (the reference).
#ifndef MCRISK_WORLD_CUH
#define MCRISK_WORLD_CUH

#include "compat.cuh"
#include "constants.cuh"
#include "distributions.cuh"
#include "plan.cuh"
#include "random.cuh"

namespace mcrisk {

// Days from install end to a passed burn-in; its number of attempts goes to `attempts`.
// Conditioned on a status (q_status), the loop continues from the recorded state q_state
// (days so far, the attempt it resumes at, failures in a row, RMAs done): the piece running at
// the status date is drawn above its elapsed days q_const.
MCRISK_HD double burn_in_days(const Plan& p, int q, u32 seed_lo, u32 seed_hi, u32 scenario,
                              double& attempts) {
    int b = p.q_burnin[q];
    int attempt_dist = p.burnin_dist[3 * b + 0], fix_dist = p.burnin_dist[3 * b + 1],
        rma_dist = p.burnin_dist[3 * b + 2];
    double fail_first = p.burnin_fail[2 * b + 0], fail_retry = p.burnin_fail[2 * b + 1];
    int rma_after = p.burnin_rma_after[b];
    u64 a_attempt = p.q_address[4 * q + 0], a_outcome = p.q_address[4 * q + 1];
    u64 a_fix = p.q_address[4 * q + 2], a_rma = p.q_address[4 * q + 3];
    int piece = p.q_status[q];
    double elapsed = p.q_const[q];
    double days = p.q_state[4 * q + 0];
    int k0 = (int)p.q_state[4 * q + 1];
    int fails_in_row = (int)p.q_state[4 * q + 2];
    int rma_count = (int)p.q_state[4 * q + 3];
    if (piece == BURNIN_FIX) {  // the fix after attempt k0 is running
        days += draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, fix_dist,
                           seed_lo, seed_hi, scenario, a_fix, (u32)k0, elapsed);
        k0 += 1;
    } else if (piece == BURNIN_RMA) {  // the RMA after attempt k0 is running
        days += draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, rma_dist,
                           seed_lo, seed_hi, scenario, a_rma, (u32)rma_count, elapsed);
        rma_count += 1;
        k0 += 1;
    }
    for (int k = k0; k < MAX_BURNIN_ATTEMPTS; ++k) {
        if (piece == BURNIN_ATTEMPT && k == k0) {  // attempt k0 is running
            days += draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table,
                               attempt_dist, seed_lo, seed_hi, scenario, a_attempt, (u32)k,
                               elapsed);
        } else {
            days += draw(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, attempt_dist,
                         seed_lo, seed_hi, scenario, a_attempt, (u32)k);
        }
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

// world[q], world[q + 1] (times LANES + l) = burn_in_days(..., scenario0 + l) for l < n: the
// first attempt for every lane at once; a lane whose first attempt fails is redone by
// burn_in_days from the start (the same draws, so the same days). Conditioned on a status:
// burn_in_days in every lane.
MCRISK_HD void burn_in_lanes(const Plan& p, int q, u32 seed_lo, u32 seed_hi, u32 scenario0,
                             int n, double* world, double* u1, double* u2) {
    double* days = world + q * LANES;
    double* attempts = world + (q + 1) * LANES;
    if (p.q_status[q] != 0) {
        for (int l = 0; l < n; ++l) {
            days[l] = burn_in_days(p, q, seed_lo, seed_hi, scenario0 + (u32)l, attempts[l]);
        }
        return;
    }
    int b = p.q_burnin[q];
    draw_lanes(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.burnin_dist[3 * b + 0],
               seed_lo, seed_hi, scenario0, n, p.q_address[4 * q + 0], 0u, u1, u2, days);
    for (int l = 0; l < n; ++l) {
        days[l] = 0.0 + days[l];  // burn_in_days' days = 0.0; days += draw
        attempts[l] = 1.0;
    }
    uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.q_address[4 * q + 1], 0u, u1, u2);
    double fail_first = p.burnin_fail[2 * b + 0];
    for (int l = 0; l < n; ++l) {
        if (u1[l] < fail_first) {
            days[l] = burn_in_days(p, q, seed_lo, seed_hi, scenario0 + (u32)l, attempts[l]);
        }
    }
}

// world[q * LANES + l]: Q_EARLY, the service age at the unit's early failure, +inf when none.
// terms: chance, chance after a burn-in failure (, burn-in attempts).
MCRISK_HD void early_failure_lanes(const Plan& p, int q, u32 seed_lo, u32 seed_hi, u32 scenario0,
                                   int n, double* world, double* u1, double* u2) {
    double* row = world + q * LANES;
    if (p.q_status[q] == EARLY_SURVIVED) {  // none by the status date: q_state
        for (int l = 0; l < n; ++l) {
            row[l] = draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table,
                                p.q_dist[q], seed_lo, seed_hi, scenario0 + (u32)l,
                                p.q_address[4 * q + 1], 0u, p.q_state[4 * q + 0]);
        }
        uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.q_address[4 * q + 0], 0u, u1, u2);
        for (int l = 0; l < n; ++l) {
            if (!(u1[l] < p.q_state[4 * q + 1])) {
                row[l] = infinity();
            }
        }
        return;
    }
    draw_lanes(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.q_dist[q], seed_lo,
               seed_hi, scenario0, n, p.q_address[4 * q + 1], 0u, u1, u2, row);
    uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.q_address[4 * q + 0], 0u, u1, u2);
    int first = p.q_terms_ptr[q];
    bool has_attempts = p.q_terms_ptr[q + 1] - first == 3;
    for (int l = 0; l < n; ++l) {
        double failures = has_attempts ? world[p.q_terms[first + 2] * LANES + l] - 1.0 : 0.0;
        double chance = failures == 0.0 ? world[p.q_terms[first] * LANES + l]
                                        : world[p.q_terms[first + 1] * LANES + l];
        if (!(u1[l] < chance)) {
            row[l] = infinity();
        }
    }
}

// world[q * LANES + l]: Q_SOAK or Q_OUT of a unit under an acceptance policy (q_const:
// soak_after_failures; terms: attempts, soak days (, early age (, repair days))).
MCRISK_HD void soak_and_out_lanes(const Plan& p, int q, int n, double* world) {
    double* row = world + q * LANES;
    int first = p.q_terms_ptr[q];
    int n_terms = p.q_terms_ptr[q + 1] - first;
    for (int l = 0; l < n; ++l) {
        bool soaks = world[p.q_terms[first] * LANES + l] - 1.0 >= p.q_const[q];
        double days = world[p.q_terms[first + 1] * LANES + l];
        double early = n_terms > 2 ? world[p.q_terms[first + 2] * LANES + l] : infinity();
        bool in_soak = early < days;
        if (p.q_kind[q] == Q_OUT) {
            row[l] = soaks ? (in_soak ? infinity() : early - days) : early;
        } else if (soaks) {
            row[l] = n_terms > 3 && in_soak ? days + world[p.q_terms[first + 3] * LANES + l]
                                            : days;
        } else {
            row[l] = 0.0;
        }
    }
}

// world[q * LANES + l]: Q_REST, q_const minus its terms in order; Q_ABOVE, a draw of q_dist at
// its address conditioned to exceed that.
MCRISK_HD void conditioned_lanes(const Plan& p, int q, u32 seed_lo, u32 seed_hi, u32 scenario0,
                                 int n, double* world) {
    double* row = world + q * LANES;
    for (int l = 0; l < n; ++l) {
        row[l] = p.q_const[q];
    }
    for (int j = p.q_terms_ptr[q]; j < p.q_terms_ptr[q + 1]; ++j) {
        const double* term = world + p.q_terms[j] * LANES;
        for (int l = 0; l < n; ++l) {
            row[l] -= term[l];
        }
    }
    if (p.q_kind[q] == Q_ABOVE) {
        for (int l = 0; l < n; ++l) {
            row[l] = draw_above(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table,
                                p.q_dist[q], seed_lo, seed_hi, scenario0 + (u32)l,
                                p.q_address[4 * q + 0], 0u, row[l]);
        }
    }
}

// world[q * LANES + l]: correlated SAMPLE q from its copula uniform, the normal scores of its
// row's addresses (copula_score), or an earlier quantity's value ranked by its CDF, weighted
// in order from 0.0 (a row of one: its own first uniform; the last, its own, entry with a range
// other than (0, 1) truncated given the others: truncated_score).
MCRISK_HD void correlated_lanes(const Plan& p, int q, u32 seed_lo, u32 seed_hi, u32 scenario0,
                                int n, double* world, double* u1, double* u2) {
    double* row = world + q * LANES;
    int first = p.q_copula_ptr[q], last = p.q_copula_ptr[q + 1];
    if (last - first == 1) {
        uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.copula_address[first], 0u, u1, u2);
    } else {
        for (int l = 0; l < n; ++l) {
            row[l] = 0.0;
        }
        for (int j = first; j < last; ++j) {
            double weight = p.copula_weight[j];
            int x = p.copula_quantity[j];
            if (x >= 0) {                 // ranked by its value: a member a status conditions
                int d = p.copula_dist[j];
                const double* value = world + x * LANES;
                for (int l = 0; l < n; ++l) {
                    row[l] += weight * copula_score(
                        cdf(p.dist_kind[d], p.dist_param, d, p.pert_table, value[l]), 0.0, 1.0);
                }
                continue;
            }
            uniforms_lanes(seed_lo, seed_hi, scenario0, n, p.copula_address[j], 0u, u1, u2);
            double low = p.copula_low[j], high = p.copula_high[j];
            if (j == last - 1 && (low > 0.0 || high < 1.0)) {   // its own entry, given the others
                for (int l = 0; l < n; ++l) {
                    row[l] += weight * truncated_score(u1[l], low, high, row[l], weight);
                }
                continue;
            }
            for (int l = 0; l < n; ++l) {
                row[l] += weight * copula_score(u1[l], low, high);
            }
        }
        for (int l = 0; l < n; ++l) {
            u1[l] = copula_uniform(row[l]);
        }
    }
    int d = p.q_dist[q];
    draw_correlated_lanes(p.dist_kind[d], p.dist_param, p.dist_chance[d], d, p.pert_table, u1,
                          n, row, u2);
}

// world[q * LANES + l] of scenarios scenario0 + l, l < n, in dependency order (u1, u2: scratch
// of n uniforms).
MCRISK_HD void sample_world(const Plan& p, u32 seed_lo, u32 seed_hi, u32 scenario0, int n,
                            double* world, double* u1, double* u2) {
    for (int q = 0; q < p.n_quantities; ++q) {
        int kind = p.q_kind[q];
        double* row = world + q * LANES;
        if (kind == Q_SAMPLE && p.q_copula_ptr[q + 1] > p.q_copula_ptr[q]) {
            correlated_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2);
        } else if (kind == Q_SAMPLE) {
            draw_lanes(p.dist_kind, p.dist_param, p.dist_chance, p.pert_table, p.q_dist[q],
                       seed_lo, seed_hi, scenario0, n, p.q_address[4 * q + 0], 0u, u1, u2, row);
        } else if (kind == Q_SUM) {
            for (int l = 0; l < n; ++l) {
                row[l] = p.q_const[q];
            }
            for (int j = p.q_terms_ptr[q]; j < p.q_terms_ptr[q + 1]; ++j) {
                const double* term = world + p.q_terms[j] * LANES;
                for (int l = 0; l < n; ++l) {
                    row[l] += term[l];
                }
            }
        } else if (kind == Q_BURNIN) {
            burn_in_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2);
        } else if (kind == Q_EARLY) {
            early_failure_lanes(p, q, seed_lo, seed_hi, scenario0, n, world, u1, u2);
        } else if (kind == Q_SOAK || kind == Q_OUT) {
            soak_and_out_lanes(p, q, n, world);
        } else if (kind == Q_REST || kind == Q_ABOVE) {
            conditioned_lanes(p, q, seed_lo, seed_hi, scenario0, n, world);
        } else if (kind != Q_ATTEMPTS) {
            for (int l = 0; l < n; ++l) {
                row[l] = not_a_number();
            }
        }
    }
}

}  // namespace mcrisk

#endif  // MCRISK_WORLD_CUH
