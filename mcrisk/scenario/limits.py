"""The limits of a scenario file, in one place; docs/scenario-format.md (Limits) gives the
reason for each.

Values past them validate as numbers but crash, exhaust memory or hang a run, or mean nothing
for a migration. `Limit` pairs a bound with why it exists (the hint when it is passed);
DAYS and the totals are the bounds several sections share.
"""
from __future__ import annotations

from dataclasses import dataclass

MAX_FILE_BYTES = 16 * 2**20       # a scenario is a few kB; this is no scenario file
MAX_NESTING = 32                  # arrays and tables inside each other; a scenario uses ~6
MAX_ID_LENGTH = 100               # characters in an id or name
MAX_ENTRIES = 10_000              # entries of any array (rows, demand points, ...)
MAX_UNITS = 10_000                # existing and incoming units together
MAX_RANGE = MAX_UNITS             # ids one range may expand to
MAX_STRATEGIES = 100
MAX_HORIZON_DAYS = 7_300          # 20 years
MAX_DAYS = 36_500                 # any date, duration or lag: 100 years
MAX_LOGNORMAL_SPREAD = 1_000      # p90 / median
MAX_PERT_LAMBDA = 1_000
MAX_GPUS = 1_000_000              # GPUs in one unit
MAX_H100_EQ_PER_GPU = 1_000       # also the largest value a performance distribution can draw
MAX_TOTAL = 1e9                   # H100-eq of all units together, kW of all units, a hall's cap
MAX_RAMP_STEPS = 100
MAX_RMA_AFTER_FAILURES = 100
MAX_BURN_IN_ATTEMPTS = 1_000      # expected attempts of one unit's burn-in
MAX_MONEY = 10**12                # any price or cost, a distribution's largest draw included
MAX_PUE = 10                      # [[costs.power]] pue
MAX_CORRELATIONS = 100            # [[correlations]] entries


@dataclass(frozen=True)
class Limit:
    """An upper bound of a value and why it exists (the hint when it is passed)."""

    value: float
    why: str


DAYS = Limit(MAX_DAYS, "100 years: a migration's dates and durations are far shorter, and "
              "every sum of times stays finite")
TOTAL_H100_EQ = Limit(MAX_TOTAL, "1e9 H100-eq is a thousand times the largest cluster; "
                       "capacity bands count in millionths of an H100-eq within 2**53")
TOTAL_KW = Limit(MAX_TOTAL, "1e9 kW is a terawatt; power is counted in millionths of a kW "
                  "within 2**53")
