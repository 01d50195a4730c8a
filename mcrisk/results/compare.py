"""Paired comparison of two strategies on common random numbers.

Scenario i is the same world for every strategy, so A_i - B_i isolates the effect of the
plan: its spread is what the plans differ by, not how the worlds differ. That makes the
intervals much tighter than comparing two independent runs. A scenario with [costs] pairs its
cost columns the same way (compare_costs), and one with a job mix its job columns
(compare_jobs); money_text writes an amount of money for people.
"""
from __future__ import annotations

import copy

import numpy as np

from .quantiles import remembered
from .statistics import finite_mean, finite_or_none, metric_summary
from ..core.definitions import COSTS, METRICS

COMPARE_METRICS = ("trough_depth", "trough_days", "shortfall_gpu_days", "homeless_days",
                   "completion_day")


MEAN_CI_MIN_SAMPLES = 2         # a spread, and so an interval, needs two values


def mean_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float] | None:
    """Normal-approximation CI of the mean (n is in the thousands here); None below
    MEAN_CI_MIN_SAMPLES values, or where it is not finite. The normal quantile is
    scipy.special.ndtri, what scipy.stats.norm.ppf returns, without importing scipy.stats
    (~0.8 s, issue 12)."""
    from scipy import special
    n = values.shape[0]
    if n < MEAN_CI_MIN_SAMPLES:
        return None
    with np.errstate(over="ignore", invalid="ignore"):
        mean = finite_mean(values)
        half = special.ndtri(0.5 + confidence / 2) * values.std(ddof=1) / np.sqrt(n)
        ends = (finite_or_none(mean - half), finite_or_none(mean + half))
    return None if None in ends else ends


def paired_difference(a: np.ndarray, b: np.ndarray) -> dict:
    """Summary of a - b per scenario: mean (with CI), P50/P90/P99 (P90 with its order-
    statistic CI), and the probabilities that a is worse (larger), equal, or better. An
    interval that does not exist is None, with `<name>_unavailable` saying why.

    Inside quantiles.shared_order_statistics, the summary of two columns of its arrays is
    computed once and handed out as copies (Performance: the report's findings asked again
    for 13 of the summary's 20 differences at 10^6 scenarios, ~37 ms each)."""
    known = remembered("paired_difference", a, b)
    if known is None:
        return _paired_difference(a, b)
    if "summary" not in known:
        known["summary"] = _paired_difference(a, b)
    return copy.deepcopy(known["summary"])


def _paired_difference(a: np.ndarray, b: np.ndarray) -> dict:
    """paired_difference, computed."""
    diff = np.asarray(a, dtype=np.float64) - np.asarray(b, dtype=np.float64)
    ci = mean_ci(diff)
    shares = {"p_a_worse": float(np.mean(diff > 0)), "p_equal": float(np.mean(diff == 0)),
              "p_a_better": float(np.mean(diff < 0))}
    summary = metric_summary(diff, overwrite=True)      # sorts diff: its order is done with
    summary["mean_ci"] = None if ci is None else list(ci)
    if ci is None:
        summary["mean_ci_unavailable"] = (
            f"too few scenarios: an interval of the mean needs at least {MEAN_CI_MIN_SAMPLES}"
            if diff.shape[0] < MEAN_CI_MIN_SAMPLES else "the interval is not a finite number")
    return {**summary, **shares}


def compare_strategies(metrics: np.ndarray, strategy_names, a: str, b: str,
                       which=COMPARE_METRICS) -> dict:
    """{metric: paired_difference} of strategy a against strategy b."""
    sa, sb = strategy_names.index(a), strategy_names.index(b)
    return {m: paired_difference(metrics[:, sa, METRICS.index(m)],
                                 metrics[:, sb, METRICS.index(m)]) for m in which}


def compare_costs(costs: np.ndarray | None, strategy_names, a: str, b: str) -> dict:
    """{cost column: paired_difference} of strategy a against strategy b, over the cost
    columns of costs[scenarios, strategies, n_costs] in COSTS order (cost_total first);
    empty for a run without costs (None, or no cost column)."""
    if costs is None:
        return {}
    return compare_columns(costs, strategy_names, a, b, COSTS[:costs.shape[2]])


def compare_jobs(jobs: np.ndarray | None, strategy_names, a: str, b: str,
                 columns: tuple[str, ...]) -> dict:
    """{job column: paired_difference} of strategy a against strategy b, over the job
    columns of jobs[scenarios, strategies, 1 + J] named `columns` (definitions.job_columns:
    unservable_gpu_days, then each class's homeless days); empty without a job mix."""
    if jobs is None:
        return {}
    return compare_columns(jobs, strategy_names, a, b, columns)


def compare_columns(values: np.ndarray, strategy_names, a: str, b: str, columns) -> dict:
    """{column: paired_difference} of strategy a against strategy b over
    values[scenarios, strategies, column], the columns named `columns` in order."""
    sa, sb = strategy_names.index(a), strategy_names.index(b)
    return {name: paired_difference(values[:, sa, k], values[:, sb, k])
            for k, name in enumerate(columns)}


# Currencies written with a symbol before the amount; any other code follows it ("1.2M CHF").
_SYMBOLS = {"USD": "$", "EUR": "\u20ac", "GBP": "\u00a3"}


def money_text(value: float | None, currency: str = "USD") -> str:
    """An amount of money for people: $1.23M, -$456k, $12.3k, $850 (three significant
    digits from a thousand up); 'n/a' for None or what is not a finite number."""
    if value is None or not np.isfinite(value):
        return "n/a"
    size = abs(value)
    for scale, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "k")):
        if size >= scale * 0.9995:              # 999,950 is $1.00M, not $1000k
            digits = size / scale
            number = f"{digits:.{max(0, 2 - _order(digits))}f}{suffix}"
            break
    else:
        number = f"{size:,.0f}" if size >= 10 or size == 0 else f"{size:.2f}"
    sign = "-" if value < 0 and number.strip("0.kMB") else ""
    symbol = _SYMBOLS.get(currency)
    return f"{sign}{symbol}{number}" if symbol else f"{sign}{number} {currency}"


def _order(value: float) -> int:
    """0 for 1-9.99, 1 for 10-99.9, 2 from 99.95 (what rounds to three digits)."""
    return 0 if value < 9.995 else 1 if value < 99.95 else 2


def against_leader(metrics: np.ndarray, strategy_names, ranking: list[str]) -> dict:
    """Every other strategy against the top-ranked one: {strategy: {metric: summary}}."""
    leader = ranking[0]
    return {"leader": leader,
            "strategies": {name: compare_strategies(metrics, list(strategy_names), name, leader)
                           for name in ranking[1:]}}
