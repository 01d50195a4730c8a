// Distributions as inverse CDFs of uniforms, and the draw at an address. Pairs:
// mcrisk/backends/numba/distributions.py, line by line, and mcrisk/core/distributions.py (the
// specification and the encoding).
#ifndef MCRISK_DISTRIBUTIONS_CUH
#define MCRISK_DISTRIBUTIONS_CUH

#include "compat.cuh"
#include "constants.cuh"
#include "random.cuh"

namespace mcrisk {

static constexpr double PI = 3.141592653589793;

// Acklam's rational approximation of the normal quantile, refined by one Halley step on erfc
// (numba/distributions.py's _A, _B, _C, _D).
static constexpr double A0 = -3.969683028665376e+01, A1 = 2.209460984245205e+02,
                        A2 = -2.759285104469687e+02, A3 = 1.383577518672690e+02,
                        A4 = -3.066479806614716e+01, A5 = 2.506628277459239e+00;
static constexpr double B0 = -5.447609879822406e+01, B1 = 1.615858368580409e+02,
                        B2 = -1.556989798598866e+02, B3 = 6.680131188771972e+01,
                        B4 = -1.328068155288572e+01;
static constexpr double C0 = -7.784894002430293e-03, C1 = -3.223964580411365e-01,
                        C2 = -2.400758277161838e+00, C3 = -2.549732539343734e+00,
                        C4 = 4.374664141464968e+00, C5 = 2.938163982698783e+00;
static constexpr double D0 = 7.784695709041462e-03, D1 = 3.224671290700398e-01,
                        D2 = 2.445134137142996e+00, D3 = 3.754408661907416e+00;

// ndtri for p in (0, 0.5].
MCRISK_HD double ndtri_lower(double p) {
    double q, r, x;
    if (p < 0.02425) {
        q = sqrt(-2.0 * log(p));
        x = (((((C0 * q + C1) * q + C2) * q + C3) * q + C4) * q + C5)
            / ((((D0 * q + D1) * q + D2) * q + D3) * q + 1.0);
    } else {
        q = p - 0.5;
        r = q * q;
        x = (((((A0 * r + A1) * r + A2) * r + A3) * r + A4) * r + A5) * q
            / (((((B0 * r + B1) * r + B2) * r + B3) * r + B4) * r + 1.0);
    }
    double e = 0.5 * erfc(-x / sqrt(2.0)) - p;
    double u = e * sqrt(2.0 * PI) * exp(0.5 * x * x);
    return x - u / (1.0 + 0.5 * x * u);
}

// Standard normal quantile for p in (0, 1); the upper half by symmetry, since 1 - p is exact
// there and the Halley step is accurate only where erfc does not cancel.
MCRISK_HD double ndtri(double p) {
    if (p > 0.5) {
        return -ndtri_lower(1.0 - p);
    }
    return ndtri_lower(p);
}

// The quantile at u of a lognormal (mu, sigma) truncated to [low, high] (low 0: none, high 0:
// none): u mapped into [F(low), F(high)], through the survival function when low lies above
// the median, then clamped into [low, high].
MCRISK_HD double lognormal_between(double mu, double sigma, double low, double high, double u) {
    double scale = sigma * SQRT2;
    double z_low = -infinity();
    if (low > 0.0) {
        z_low = (log(low) - mu) / scale;
    }
    double z_high = infinity();
    if (high > 0.0) {
        z_high = (log(high) - mu) / scale;
    }
    double x;
    if (z_low > 0.0) {
        double s_low = 0.5 * erfc(z_low);
        double s_high = 0.0;
        if (high > 0.0) {
            s_high = 0.5 * erfc(z_high);
        }
        x = exp(mu - sigma * ndtri(s_high + (1.0 - u) * (s_low - s_high)));
    } else {
        double f_low = 0.0;
        if (low > 0.0) {
            f_low = 0.5 * erfc(-z_low);
        }
        double f_high = 1.0;
        if (high > 0.0) {
            f_high = 0.5 * erfc(-z_high);
        }
        x = exp(mu + sigma * ndtri(f_low + u * (f_high - f_low)));
    }
    if (low > 0.0 && x < low) {
        x = low;
    }
    if (high > 0.0 && x > high) {
        x = high;
    }
    return x;
}

// Inverse CDF of distribution d (not `chance`) at u.
MCRISK_HD double ppf(int kind, const double* dist_param, int d, const double* pert_table,
                     double u) {
    if (kind == KIND_FIXED) {
        return dist_param[4 * d + 0];
    }
    if (kind == KIND_UNIFORM) {
        return dist_param[4 * d + 0] + u * dist_param[4 * d + 1];
    }
    if (kind == KIND_TRIANGULAR) {
        double low = dist_param[4 * d + 0], mode = dist_param[4 * d + 1],
               high = dist_param[4 * d + 2];
        double span = high - low;
        if (span <= 0.0) {
            return low;
        }
        if (u < (mode - low) / span) {
            return low + sqrt(u * span * (mode - low));
        }
        return high - sqrt((1.0 - u) * span * (high - mode));
    }
    if (kind == KIND_PERT) {
        // A table is PERT_TABLE_SIZE knots, then 1/alpha and 1/beta: the outermost interval
        // at each end follows the Beta quantile's power law, the others are linear.
        int offset = (int)dist_param[4 * d + 2];
        int last = PERT_TABLE_SIZE - 1;
        double position = u * last;
        int knot = min((int)position, last - 1);
        double frac = position - knot;
        double y;
        if (knot == 0) {
            y = pert_table[offset + 1] * pow(position, pert_table[offset + last + 1]);
        } else if (knot == last - 1) {
            y = 1.0 - (1.0 - pert_table[offset + last - 1])
                      * pow(last - position, pert_table[offset + last + 2]);
        } else {
            double lo = pert_table[offset + knot];
            y = lo + frac * (pert_table[offset + knot + 1] - lo);
        }
        return dist_param[4 * d + 0] + dist_param[4 * d + 1] * y;
    }
    if (kind == KIND_LOGNORMAL) {
        if (dist_param[4 * d + 2] > 0.0 || dist_param[4 * d + 3] > 0.0) {
            return lognormal_between(dist_param[4 * d + 0], dist_param[4 * d + 1],
                                     dist_param[4 * d + 2], dist_param[4 * d + 3], u);
        }
        return exp(dist_param[4 * d + 0] + dist_param[4 * d + 1] * ndtri(u));
    }
    if (kind == KIND_TABLE) {
        // A posterior table: TABLE_SIZE knots at normal scores -TABLE_Z .. TABLE_Z.
        int offset = (int)dist_param[4 * d + 0];
        int last = TABLE_SIZE - 1;
        double position = (ndtri(u) + TABLE_Z) / (2.0 * TABLE_Z) * last;
        position = min(max(position, 0.0), (double)last);
        int knot = min((int)position, last - 1);
        double frac = position - knot;
        double lo = pert_table[offset + knot];
        return lo + frac * (pert_table[offset + knot + 1] - lo);
    }
    return not_a_number();
}

// P(X <= x) of distribution d (not `chance`, not a table) as ppf draws it: the inverse of ppf
// (a PERT's by a binary search of its table).
MCRISK_HD double cdf(int kind, const double* dist_param, int d, const double* pert_table,
                     double x) {
    if (kind == KIND_FIXED) {
        return x >= dist_param[4 * d + 0] ? 1.0 : 0.0;
    }
    if (kind == KIND_UNIFORM) {
        if (dist_param[4 * d + 1] <= 0.0) {
            return x >= dist_param[4 * d + 0] ? 1.0 : 0.0;
        }
        return min(max((x - dist_param[4 * d + 0]) / dist_param[4 * d + 1], 0.0), 1.0);
    }
    if (kind == KIND_TRIANGULAR) {
        double low = dist_param[4 * d + 0], mode = dist_param[4 * d + 1],
               high = dist_param[4 * d + 2];
        double span = high - low;
        if (span <= 0.0) {
            return x >= low ? 1.0 : 0.0;
        }
        if (x <= low) {
            return 0.0;
        }
        if (x >= high) {
            return 1.0;
        }
        if (x < mode) {
            return (x - low) * (x - low) / (span * (mode - low));
        }
        return 1.0 - (high - x) * (high - x) / (span * (high - mode));
    }
    if (kind == KIND_PERT) {
        int offset = (int)dist_param[4 * d + 2];
        int last = PERT_TABLE_SIZE - 1;
        double y = (x - dist_param[4 * d + 0]) / dist_param[4 * d + 1];
        if (y <= 0.0) {
            return 0.0;
        }
        if (y >= 1.0) {
            return 1.0;
        }
        int lo = 0, hi = last;  // table[lo] <= y < table[hi]
        while (hi - lo > 1) {
            int mid = (lo + hi) / 2;
            if (pert_table[offset + mid] <= y) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        double position;
        if (lo == 0) {
            position = pow(y / pert_table[offset + 1], 1.0 / pert_table[offset + last + 1]);
        } else if (lo == last - 1) {
            position = last - pow((1.0 - y) / (1.0 - pert_table[offset + last - 1]),
                                  1.0 / pert_table[offset + last + 2]);
        } else {
            double below = pert_table[offset + lo];
            position = lo + (y - below) / (pert_table[offset + lo + 1] - below);
        }
        return position / last;
    }
    if (kind == KIND_LOGNORMAL) {
        if (x <= 0.0) {
            return 0.0;
        }
        double scale = dist_param[4 * d + 1] * SQRT2;
        double f = 0.5 * erfc(-(log(x) - dist_param[4 * d + 0]) / scale);
        double low = dist_param[4 * d + 2], high = dist_param[4 * d + 3];
        if (low > 0.0 || high > 0.0) {  // bounded: the truncated CDF
            double f_low = 0.0;
            if (low > 0.0) {
                f_low = 0.5 * erfc(-(log(low) - dist_param[4 * d + 0]) / scale);
            }
            double f_high = 1.0;
            if (high > 0.0) {
                f_high = 0.5 * erfc(-(log(high) - dist_param[4 * d + 0]) / scale);
            }
            return min(max((f - f_low) / (f_high - f_low), 0.0), 1.0);
        }
        return f;
    }
    return not_a_number();
}

// The quantile at u of distribution d (not `chance`) truncated to above `bound`: u mapped
// into [F(bound), 1); a lognormal's through its survival function (a bounded one's into
// [F(max(bound, min)), F(max)], lognormal_between).
MCRISK_HD double ppf_above(int kind, const double* dist_param, int d, const double* pert_table,
                           double bound, double u) {
    if (kind == KIND_LOGNORMAL && (dist_param[4 * d + 2] > 0.0 || dist_param[4 * d + 3] > 0.0)) {
        return lognormal_between(dist_param[4 * d + 0], dist_param[4 * d + 1],
                                 max(bound, dist_param[4 * d + 2]), dist_param[4 * d + 3], u);
    }
    if (kind == KIND_LOGNORMAL) {
        double survival = 1.0;
        if (bound > 0.0) {
            double z = (log(bound) - dist_param[4 * d + 0]) / (dist_param[4 * d + 1] * SQRT2);
            survival = 0.5 * erfc(z);
        }
        return exp(dist_param[4 * d + 0] - dist_param[4 * d + 1] * ndtri(survival * (1.0 - u)));
    }
    double f = cdf(kind, dist_param, d, pert_table, bound);
    return ppf(kind, dist_param, d, pert_table, f + u * (1.0 - f));
}

// The draw of distribution d at (seed, scenario, address, index): `chance` tosses u1 and
// draws from u2, the others use u1; a fixed value costs no Philox block.
MCRISK_HD double draw(const int* dist_kind, const double* dist_param, const double* dist_chance,
                      const double* pert_table, int d, u32 seed_lo, u32 seed_hi, u32 scenario,
                      u64 address, u32 index) {
    int kind = dist_kind[d];
    double chance = dist_chance[d];
    if (kind == KIND_FIXED && chance >= 1.0) {
        return dist_param[4 * d + 0];
    }
    Uniforms u = uniforms(seed_lo, seed_hi, scenario, address, index);
    if (chance >= 1.0) {
        return ppf(kind, dist_param, d, pert_table, u.u1);
    }
    if (u.u1 < chance) {
        return ppf(kind, dist_param, d, pert_table, u.u2);
    }
    return 0.0;
}

// draw(...) conditioned to exceed `bound`, from the same uniforms: a `chance` draws its inner
// distribution above a bound >= 0, and as usual below 0.
MCRISK_HD double draw_above(const int* dist_kind, const double* dist_param,
                            const double* dist_chance, const double* pert_table, int d,
                            u32 seed_lo, u32 seed_hi, u32 scenario, u64 address, u32 index,
                            double bound) {
    int kind = dist_kind[d];
    double chance = dist_chance[d];
    if (kind == KIND_FIXED && chance >= 1.0) {
        return dist_param[4 * d + 0];
    }
    Uniforms u = uniforms(seed_lo, seed_hi, scenario, address, index);
    if (chance >= 1.0) {
        return ppf_above(kind, dist_param, d, pert_table, bound, u.u1);
    }
    if (bound < 0.0) {
        if (u.u1 < chance) {
            return ppf(kind, dist_param, d, pert_table, u.u2);
        }
        return 0.0;
    }
    return ppf_above(kind, dist_param, d, pert_table, bound, u.u2);
}

// out[l] = ppf(kind, dist_param, d, pert_table, u[l]) for l < n, the same operations in every
// lane (triangular: both roots taken, one kept, as the CPU vectorizes it).
MCRISK_HD void ppf_lanes(int kind, const double* dist_param, int d, const double* pert_table,
                         const double* u, int n, double* out) {
    if (kind == KIND_TRIANGULAR) {
        double low = dist_param[4 * d + 0], mode = dist_param[4 * d + 1],
               high = dist_param[4 * d + 2];
        double span = high - low;
        if (span <= 0.0) {
            for (int l = 0; l < n; ++l) {
                out[l] = low;
            }
            return;
        }
        double split = (mode - low) / span;
        for (int l = 0; l < n; ++l) {
            double x = u[l];
            double below = low + sqrt(x * span * (mode - low));
            double above = high - sqrt((1.0 - x) * span * (high - mode));
            out[l] = x < split ? below : above;
        }
        return;
    }
    for (int l = 0; l < n; ++l) {
        out[l] = ppf(kind, dist_param, d, pert_table, u[l]);
    }
}

// out[l] = draw(..., scenario0 + l, address, index) for the n scenarios of a lane group (u1, u2:
// scratch for their uniforms).
MCRISK_HD void draw_lanes(const int* dist_kind, const double* dist_param,
                          const double* dist_chance, const double* pert_table, int d,
                          u32 seed_lo, u32 seed_hi, u32 scenario0, int n, u64 address,
                          u32 index, double* u1, double* u2, double* out) {
    int kind = dist_kind[d];
    double chance = dist_chance[d];
    if (kind == KIND_FIXED && chance >= 1.0) {
        for (int l = 0; l < n; ++l) {
            out[l] = dist_param[4 * d + 0];
        }
        return;
    }
    uniforms_lanes(seed_lo, seed_hi, scenario0, n, address, index, u1, u2);
    if (chance >= 1.0) {
        ppf_lanes(kind, dist_param, d, pert_table, u1, n, out);
        return;
    }
    ppf_lanes(kind, dist_param, d, pert_table, u2, n, out);
    for (int l = 0; l < n; ++l) {
        if (!(u1[l] < chance)) {
            out[l] = 0.0;
        }
    }
}

// A copula uniform from its weighted normal score: Phi(z), clamped into the random stream's
// [U_LOW, U_HIGH] (mcrisk/core/copula.py).
MCRISK_HD double copula_uniform(double z) {
    double v = 0.5 * erfc(-z / SQRT2);
    return v < U_LOW ? U_LOW : (v > U_HIGH ? U_HIGH : v);
}

// A row entry's normal score: ndtri of u mapped into [low, high], clamped into the random
// stream's [U_LOW, U_HIGH] (mcrisk/core/copula.py's copula_score).
MCRISK_HD double copula_score(double u, double low, double high) {
    double t = low + u * (high - low);
    return ndtri(t < U_LOW ? U_LOW : (t > U_HIGH ? U_HIGH : t));
}

// A row's own entry's normal score given its earlier entries' weighted sum `partial`, its copula
// uniform conditioned into [low, high], through the upper tail where the range is there
// (mcrisk/core/copula.py's truncated_score).
MCRISK_HD double truncated_score(double u, double low, double high, double partial,
                                 double weight) {
    double below = 0.0, above = 1.0;
    if (low > 0.0) {
        double a = (ndtri(low) - partial) / weight;
        if (a > 0.0) {
            double q_b = high < 1.0 ? 0.5 * erfc((ndtri(high) - partial) / weight / SQRT2) : 0.0;
            return -copula_score(1.0 - u, q_b, 0.5 * erfc(a / SQRT2));
        }
        below = 0.5 * erfc(-a / SQRT2);
    }
    if (high < 1.0) {
        above = 0.5 * erfc(-((ndtri(high) - partial) / weight) / SQRT2);
    }
    return copula_score(u, below, above);
}

// out[l]: the correlated draw of distribution d from its copula uniform v[l]: ppf, a `chance`
// as a mixture, 0 for v <= 1 - chance (scratch: n doubles).
MCRISK_HD void draw_correlated_lanes(int kind, const double* dist_param, double chance, int d,
                                     const double* pert_table, const double* v, int n,
                                     double* out, double* scratch) {
    if (chance >= 1.0) {
        ppf_lanes(kind, dist_param, d, pert_table, v, n, out);
        return;
    }
    double none = 1.0 - chance;
    for (int l = 0; l < n; ++l) {
        double inner = (v[l] - none) / chance;
        scratch[l] = inner < U_LOW ? U_LOW : (inner > U_HIGH ? U_HIGH : inner);
    }
    ppf_lanes(kind, dist_param, d, pert_table, scratch, n, out);
    for (int l = 0; l < n; ++l) {
        if (v[l] <= none) {
            out[l] = 0.0;
        }
    }
}

}  // namespace mcrisk

#endif  // MCRISK_DISTRIBUTIONS_CUH
