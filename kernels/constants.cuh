// The constants the kernels share with Python: the columns of the metrics axis, the kinds of
// quantity, node and distribution, the tolerance. GENERATED from mcrisk/core (definitions.py,
// distributions.py, copula.py) by mcrisk.backends.cuda.constants_header(): do not edit. Change the
// Python constant, then run `python tests/regen_headers.py`; tests/core/test_constants.py fails
// until then. `inline constexpr` (C++17), not `static`: nvcc warns of a static constant no stage
// reads, and CI compiles with -Werror.
#ifndef MCRISK_CONSTANTS_CUH
#define MCRISK_CONSTANTS_CUH

namespace mcrisk {

// The metrics axis (definitions): N_METRICS metrics, then N_COSTS cost columns in a plan with
// [costs], then the job columns in a plan with a job mix.
inline constexpr int N_METRICS = 6;
inline constexpr int N_COSTS = 9;

// Each metric's column (definitions.METRICS).
inline constexpr int TROUGH_DEPTH = 0;
inline constexpr int TROUGH_DAYS = 1;
inline constexpr int SHORTFALL_GPU_DAYS = 2;
inline constexpr int HOMELESS_DAYS = 3;
inline constexpr int COMPLETION_DAY = 4;
inline constexpr int POWER_VIOLATION = 5;

// Each cost's column counted from the first cost column, so at N_METRICS + COST_* on the metrics
// axis (definitions.COSTS: cost_total first, the sum of the columns after it).
inline constexpr int COST_TOTAL = 0;
inline constexpr int COST_POWER_RESERVED = 1;
inline constexpr int COST_POWER_OVER = 2;
inline constexpr int COST_ENERGY = 3;
inline constexpr int COST_OLD_FLEET = 4;
inline constexpr int COST_NEW_WAITING = 5;
inline constexpr int COST_SHORTFALL = 6;
inline constexpr int COST_CREWS = 7;
inline constexpr int COST_MITIGATION = 8;

// Each job column counted from the first job column (definitions.job_columns): job class j's
// homeless days at JOB_HOMELESS_DAYS + j.
inline constexpr int UNSERVABLE_GPU_DAYS = 0;
inline constexpr int JOB_HOMELESS_DAYS = 1;

// Kinds of world quantity, q_kind (definitions).
inline constexpr int Q_SAMPLE = 0;
inline constexpr int Q_SUM = 1;
inline constexpr int Q_BURNIN = 2;
inline constexpr int Q_ATTEMPTS = 3;
inline constexpr int Q_EARLY = 4;
inline constexpr int Q_SOAK = 5;
inline constexpr int Q_OUT = 6;
inline constexpr int Q_REST = 7;
inline constexpr int Q_ABOVE = 8;

// How a status conditions a quantity, q_status (definitions).
inline constexpr int BURNIN_FRESH = 1;
inline constexpr int BURNIN_ATTEMPT = 2;
inline constexpr int BURNIN_FIX = 3;
inline constexpr int BURNIN_RMA = 4;
inline constexpr int EARLY_SURVIVED = 1;

// Kinds of plan node, node_kind (definitions).
inline constexpr int NODE_MAX = 0;
inline constexpr int NODE_CREW = 1;

// The tolerance of "below baseline" and "above cap", and the burn-in guard (definitions).
inline constexpr double REL_EPS = 1e-09;
inline constexpr int MAX_BURNIN_ATTEMPTS = 100000;

// Distribution codes, dist_kind, the knots of a PERT table and of a posterior table
// (distributions).
inline constexpr int KIND_FIXED = 0;
inline constexpr int KIND_UNIFORM = 1;
inline constexpr int KIND_TRIANGULAR = 2;
inline constexpr int KIND_PERT = 3;
inline constexpr int KIND_LOGNORMAL = 4;
inline constexpr int KIND_TABLE = 5;
inline constexpr int PERT_TABLE_SIZE = 4097;
inline constexpr int TABLE_SIZE = 4097;
inline constexpr double TABLE_Z = 8.5;
inline constexpr double SQRT2 = 1.4142135623730951;

// A copula uniform's clamp: the random stream's smallest and largest uniforms (copula).
inline constexpr double U_LOW = 1.1102230246251565e-16;
inline constexpr double U_HIGH = 0.9999999999999999;

}  // namespace mcrisk

#endif  // MCRISK_CONSTANTS_CUH
