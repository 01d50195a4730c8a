"""Whether a statistic changed beyond Monte Carlo noise between two nights.

Per strategy, metric and statistic (mean, P50, P90, P99; probability for power):

* paired, when both nights used the same seed and sample count and both folders still hold
  metrics.parquet, so scenario i drew the same uniforms both nights (common random numbers;
  draws keyed by name, so inputs that did not change keep their values). Quantiles: an exact
  McNemar test at the pooled quantile q of both nights. With x = last night's values and
  y = tonight's, b = #(x below q, y above q) and c = #(x above q, y below q); under "no
  change" b ~ Binomial(b + c, 1/2). Ties at q matter for metrics with atoms (a trough depth of
  exactly 0 or 2,048), so "above" is tested both as > q and as >= q, Bonferroni-corrected.
  Beyond noise when p < ALPHA, the quantile itself moved, and the crossings go the way it
  moved (mass shifting behind an atom, with the quantile staying put, is not a change of that
  quantile). Mean: a one-sample t-test of the per-scenario differences y - x. Power: McNemar.
* unpaired otherwise: the two nights' distribution-free 95% CIs (binomial order statistics,
  as summary.json's p90_ci) do not overlap; Welch's t-test for the mean; Fisher's exact test
  for the power probability. Each night's intervals are computed from its metrics.parquet or,
  where --keep-large deleted that, read from its intervals.json
  (mcrisk.report.nightly.intervals); a night with neither has only summary.json's P90
  interval and power probability to be judged by.
"""
from __future__ import annotations

import math
import warnings

import numpy as np
from scipy import stats

from ...results.paired import mcnemar as _mcnemar
from ...results.paired import paired_quantile_test
from .diff_text import signed_number
from .intervals import LEVELS
from .metric_changes import ALPHA
from .night import Night
from ..text import visible


def _p(value: float) -> str:
    return "p<1e-300" if value < 1e-300 else f"p={value:.2g}"


def judge_paired(x: np.ndarray, y: np.ndarray, stat: str):
    """(significant, method, p_value) of one statistic, scenario i of both nights paired."""
    if stat == "probability":
        xs, ys = x > 0.5, y > 0.5
        p = _mcnemar(int(np.sum(~xs & ys)), int(np.sum(xs & ~ys)))
        return p < ALPHA, f"paired McNemar {_p(p)}", p
    if stat == "mean":
        d = y - x
        if not np.any(d):
            return False, "paired: no scenario changed", 1.0
        if d.size < 2 or np.ptp(d) <= 1e-9 * max(1.0, float(np.max(np.abs(d)))):
            # the same shift in every scenario (to float rounding): no noise to test against
            return True, f"paired: every scenario moved by {signed_number(float(np.mean(d)))}", 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)   # nearly constant differences
            p = float(stats.ttest_1samp(d, 0.0).pvalue)
        return p < ALPHA, f"paired t-test {_p(p)}", p
    level = LEVELS[stat]
    # A quantile that did not move did not change, whatever happened around it (atoms).
    moved = float(np.sign(np.quantile(y, level) - np.quantile(x, level)))
    p, direction = paired_quantile_test(x, y, level)
    if moved == 0 or direction != moved:
        why = (", quantile unchanged" if moved == 0 else
               ", as many scenarios cross it each way" if direction == 0 else
               ", direction disagrees")
        return False, f"paired test {_p(p)}{why}", p
    return p < ALPHA, f"paired test {_p(p)}", p


def judge_unpaired(a: dict, b: dict, stat: str):
    """(significant, method, p_value) of one statistic from each night's intervals (a: last
    night's, b: tonight's, as night_intervals); significant is None when one night lacks
    what the test needs."""
    if stat == "probability":
        if a.get("count") is None or b.get("count") is None:
            return None, "no power probability to test", None
        table = [[a["count"], a["n"] - a["count"]], [b["count"], b["n"] - b["count"]]]
        p = float(stats.fisher_exact(table).pvalue)
        return p < ALPHA, f"Fisher exact {_p(p)}", p
    if stat == "mean":
        for night, stats_ in (("last night", a), ("tonight", b)):
            if stats_.get("mean") is None or stats_.get("std") is None:
                return None, f"no mean and spread of {night} to test with", None
        if a["std"] == 0 and b["std"] == 0:
            apart = a["mean"] != b["mean"]
            return apart, "both nights constant", 0.0 if apart else 1.0
        p = float(stats.ttest_ind_from_stats(a["mean"], a["std"], a["n"], b["mean"], b["std"],
                                             b["n"], equal_var=False).pvalue)
        if not math.isfinite(p):
            return None, "Welch t-test not computable", None
        return p < ALPHA, f"Welch t-test {_p(p)}", p
    ci_a, ci_b = a.get(f"{stat}_ci"), b.get(f"{stat}_ci")
    if ci_a is None or ci_b is None:
        night = "last night" if ci_a is None else "tonight"
        return None, f"no 95% interval of {night}'s {stat.upper()}", None
    apart = ci_a[1] < ci_b[0] or ci_b[1] < ci_a[0]
    return apart, (f"95% CIs [{ci_a[0]:,.4g}, {ci_a[1]:,.4g}] vs [{ci_b[0]:,.4g}, {ci_b[1]:,.4g}]"
                   + (" apart" if apart else " overlap")), None


def pairing(previous: Night, current: Night) -> tuple[bool, str]:
    prev_summary, cur_summary = previous.summary, current.summary
    same_seed = prev_summary.get("seed") == cur_summary.get("seed")
    same_n = prev_summary.get("samples") == cur_summary.get("samples")
    unpaired_by = ("judged by non-overlapping 95% CIs (quantiles), Welch's t-test (means) and "
                   "Fisher's exact test (power)")
    if (same_seed and same_n and previous.per_scenario is not None
            and current.per_scenario is not None):
        return True, ("paired: same seed and sample count, so each scenario index drew the "
                      "same random numbers both nights")
    why = []
    if not same_seed:
        why.append(f"seed {prev_summary.get('seed')} -> {cur_summary.get('seed')}")
    if not same_n:
        why.append(f"samples {prev_summary.get('samples'):,} -> {cur_summary.get('samples'):,}")
    if previous.per_scenario is None:
        why.append(f"{previous.run_id} has no metrics.parquet (--keep-large deletes it from "
                   f"older nights), so scenarios cannot be paired; {previous.intervals_source}")
    if current.per_scenario is None:
        why.append(f"{current.run_id} has no metrics.parquet (over the row budget: "
                   f"--scenarios-out writes it), so scenarios cannot be paired; "
                   f"{current.intervals_source}")
    return False, "unpaired (" + "; ".join(visible(w) for w in why) + "): " + unpaired_by

