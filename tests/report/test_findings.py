"""Findings (mcrisk.report.findings.sentences): every sentence checked against a count made here.

The numbers a finding states are read back out of its text and recounted by brute force on
the per-scenario metrics (loops, hand-computed means and intervals), never compared with the
module's own helpers' output.
"""
from __future__ import annotations

import dataclasses
import math
import re

import numpy as np
import pytest

from mcrisk.results.statistics import summarize
from mcrisk.core.definitions import METRICS
from mcrisk.report.findings.sentences import (findings, floor_shown, gating, gating_pairs, joint_trough,
                                    soaking,
                                    share)
from mcrisk.scenario import load_scenario

from ..conftest import MINIMAL, REFERENCE

NUMBER = r"[\d,]+(?:\.\d+)?"
DEPTH, DAYS, SHORT, HOMELESS, DONE, POWER = (METRICS.index(m) for m in METRICS)


def num(text: str) -> float:
    return float(text.replace(",", ""))


def metrics_of(**columns) -> np.ndarray:
    """metrics[scenario, strategy, metric] from {strategy_index: {metric: values}}."""
    n = len(next(iter(next(iter(columns.values())).values())))
    out = np.zeros((n, len(columns), len(METRICS)))
    for s, per in enumerate(columns.values()):
        for metric, values in per.items():
            out[:, s, METRICS.index(metric)] = values
    return out


def summary_of(metrics, names, ranking, baseline, horizon, **extra) -> dict:
    return {"ranking": list(ranking), "strategies": summarize(metrics, tuple(names)),
            "baseline_h100_eq": baseline, "horizon_days": horizon, **extra}


@pytest.fixture(scope="module")
def minimal():
    return load_scenario(str(MINIMAL))


@pytest.fixture(scope="module")
def reference():
    return load_scenario(str(REFERENCE))


# ---- the joint sentence: how deep AND how long, in a counted number of scenarios ------------

JOINT = re.compile(rf"In ({NUMBER}) of ({NUMBER}) scenarios \(([^)]*)\) both hold: (?:it has "
                   rf"nothing in service|its trough is at least ({NUMBER}) H100-eq below the "
                   rf"baseline) at its deepest, and its time below the baseline adds up to at "
                   rf"least ({NUMBER}) days\.")


@pytest.mark.parametrize("seed", range(6))
def test_joint_thresholds_hold_together_in_the_stated_number_of_scenarios(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(40, 3000))
    # atoms (0, whole units, the full baseline) and continuous days, loosely correlated
    depth = rng.choice([0.0, 256.0, 512.0, 768.0, 1024.0, 2048.0], size=n,
                       p=[0.3, 0.2, 0.2, 0.1, 0.1, 0.1])
    days = np.where(depth > 0, rng.gamma(2.0, 30.0, n) + depth / 40, 0.0)
    joint = joint_trough(depth, days)
    assert joint is not None
    brute = sum(1 for d, t in zip(depth, days) if d >= joint.depth and t >= joint.days)
    assert joint.count == brute
    assert brute >= math.ceil(n / 10)
    # the thresholds are the largest that 1 in 10 reach: no scenario set of that size goes deeper
    kth = sorted(depth, reverse=True)[math.ceil(n / 10) - 1]
    assert joint.depth == kth == floor_shown(kth)            # whole units show as they are
    assert sum(1 for d in depth if d > joint.depth) < math.ceil(n / 10)


def test_joint_days_are_rounded_down_so_that_at_least_stays_true():
    depth = np.full(10, 512.0)
    days = np.array([146.7, 10, 10, 10, 10, 10, 10, 10, 10, 10])
    joint = joint_trough(depth, days)
    # the 1-in-10 scenario has 146.7 days: "at least 146" (not "at least 147") holds for it
    assert (joint.depth, joint.days, joint.count) == (512.0, 146.0, 1)
    joint = joint_trough(np.full(10, 512.0), np.array([67.25] + [1.0] * 9))
    assert joint.days == 67.2


def test_no_joint_sentence_when_fewer_than_one_in_ten_dip():
    depth = np.zeros(100)
    depth[:9] = 300.0
    assert joint_trough(depth, depth / 10) is None


def test_the_joint_sentence_in_the_findings_is_true_of_the_metrics(minimal):
    rng = np.random.default_rng(7)
    n = 1000
    depth = rng.choice([0.0, 64.0, 128.0], size=n, p=[0.5, 0.3, 0.2])
    days = np.where(depth > 0, rng.uniform(1, 60, n), 0.0)
    m = metrics_of(a={"completion_day": np.full(n, 50.0)},
                   b={"trough_depth": depth, "trough_days": days,
                      "completion_day": np.full(n, 50.0)})
    names = ("swap-gated", "drain-on-day")
    summary = summary_of(m, names, names, 128.0, 200.0)
    text = " ".join(findings(minimal, summary, 64.0, metrics=m, names=names))
    match = JOINT.search(text)
    assert match, text
    count, total = int(num(match[1])), int(num(match[2]))
    x = 128.0 if match[4] is None else num(match[4])           # "nothing in service": all of B
    y = num(match[5])
    assert total == n
    assert count == sum(1 for d, t in zip(depth, days) if d >= x and t >= y)
    assert match[3] == f"{100 * count / n:.1f}%"
    # the old sentence joined two separate P90s as if one scenario had both
    assert "at P90 for" not in text
    dipped = int(np.sum(depth > 0))
    assert f"drain-on-day dips below the 128 H100-eq baseline within the 200-day horizon in " \
           f"{dipped:,} of {n:,} scenarios ({100 * dipped / n:.1f}%)" in text


# ---- exact counts, never "9 of 10" read off a percentile ---------------------------------

def test_a_leader_that_never_dips_says_so_for_every_scenario(minimal):
    n = 20_000
    m = metrics_of(a={"shortfall_gpu_days": np.linspace(0, 100, n),
                      "completion_day": np.full(n, 90.0)},
                   b={"trough_depth": np.full(n, 128.0), "trough_days": np.full(n, 20.0),
                      "completion_day": np.full(n, 90.0)})
    names = ("swap-gated", "drain-on-day")
    text = findings(minimal, summary_of(m, names, names, 128.0, 200.0), metrics=m, names=names)[0]
    assert "in any of the 20,000 sampled scenarios" in text and "never dips" in text
    assert "9 of 10" not in text


def test_a_leader_that_dips_rarely_gives_the_count(minimal):
    n = 20_000
    depth = np.zeros(n)
    depth[:130] = 64.0
    m = metrics_of(a={"trough_depth": depth, "trough_days": np.where(depth > 0, 3.0, 0.0),
                      "completion_day": np.full(n, 90.0)},
                   b={"trough_depth": np.full(n, 128.0), "trough_days": np.full(n, 20.0),
                      "completion_day": np.full(n, 90.0)})
    names = ("swap-gated", "drain-on-day")
    text = findings(minimal, summary_of(m, names, names, 128.0, 200.0), metrics=m, names=names)[0]
    assert "dips below the 128 H100-eq baseline within the 200-day horizon in 130 of 20,000 " \
           "scenarios (0.7%)" in text
    # fewer than 1 in 10 dip: the extremes, said to be separate
    assert "The deepest of those troughs is 64 H100-eq and the longest 3 days (not " \
           "necessarily in the same scenario)" in text


@pytest.mark.parametrize("count,total,expected", [
    (0, 20_000, "0.0%"), (1, 20_000, "under 0.1%"), (19_999, 20_000, "over 99.9%"),
    (20_000, 20_000, "100.0%"), (2_033, 20_000, "10.2%")])
def test_shares_never_round_a_part_to_none_or_all(count, total, expected):
    assert share(count, total) == expected


# ---- drain trigger alone: detected from the plans, compared head to head ------------------

def test_the_reference_pair_that_differs_only_in_its_drain_trigger(reference):
    assert gating_pairs(reference) == [("hybrid-on-delivery", "hybrid-gated")]


def test_a_pair_is_not_found_when_placement_or_drain_groups_differ(reference):
    arrival, gated = reference.strategy("hybrid-on-delivery"), reference.strategy("hybrid-gated")
    moved = dataclasses.replace(gated, placement=tuple(
        (unit, "A9" if unit == "N16" else row) for unit, row in gated.placement))
    # SU1 drains alone (its own group) instead of with SU2
    regrouped = dataclasses.replace(gated, drains=tuple(
        (unit, dataclasses.replace(t, lag_days=1.0) if unit == "SU1" else t)
        for unit, t in gated.drains))
    lagged = dataclasses.replace(gated, drains=tuple(
        (unit, dataclasses.replace(t, lag_days=2.0)) for unit, t in gated.drains))
    # the same placement and drains, but something else differs: "only the trigger differs"
    # would be false of the pair
    from mcrisk.core.model import Acceptance, Distribution
    soaked = dataclasses.replace(gated, acceptance=Acceptance(2, Distribution("fixed", (7.0,))))
    crewed = dataclasses.replace(gated, crews=3)
    for other in (moved, regrouped, lagged, soaked, crewed):
        assert gating_pairs(dataclasses.replace(reference, strategies=(arrival, other))) == []
    assert gating_pairs(dataclasses.replace(reference, strategies=(arrival, gated))) \
        == [("hybrid-on-delivery", "hybrid-gated")]


def _ci(diff: np.ndarray) -> tuple[float, float]:
    """Hand-computed normal 95% interval of the mean."""
    half = 1.959963984540054 * np.std(diff, ddof=1) / math.sqrt(diff.size)
    return diff.mean() - half, diff.mean() + half


def test_gating_claims_only_differences_beyond_noise_with_their_paired_intervals():
    rng = np.random.default_rng(3)
    n = 4000
    gated_depth = np.zeros(n)
    arrival_depth = np.where(np.arange(n) % 4 == 0, 512.0, 0.0)        # deeper in 1 of 4
    noise = rng.choice([-1.0, 1.0], size=n)                            # mean ~0, pure noise
    base_short = rng.uniform(100, 200, n)
    gated_done = rng.uniform(300, 400, n)
    later = np.where(np.arange(n) % 2 == 0, 5.0, -1.0)                 # +5 / -1: mean +2
    m = metrics_of(arrival={"trough_depth": arrival_depth,
                            "trough_days": np.where(arrival_depth > 0, 30.0, 0.0),
                            "shortfall_gpu_days": base_short + noise,
                            "completion_day": gated_done - later},
                   gated={"trough_depth": gated_depth, "trough_days": np.zeros(n),
                          "shortfall_gpu_days": base_short, "completion_day": gated_done})
    text = gating("arrival", "gated", m, ["arrival", "gated"])
    low, high = _ci(arrival_depth - gated_depth)
    assert (f"the trough is shallower by 128 H100-eq on average (95% CI {low:,.0f} to "
            f"{high:,.0f}; better in 1,000 worlds, never worse)") in text
    assert "the time below baseline is shorter by 7.5 days on average" in text
    # the shortfall differs by +-1 at random: no claim, whatever the sign of the sample mean
    assert "shortfall show no difference beyond Monte Carlo noise" in text
    assert "shortfall against demand is smaller" not in text
    assert "shortfall against demand is larger" not in text
    low, high = _ci(later)
    assert (f"Gating costs 2 days of completion on average (95% CI {low:.1f} to {high:.1f}): "
            f"it completes later in 2,000 of 4,000 worlds (50.0%) and earlier in 2,000.") in text


def test_the_full_reference_pairs_the_soak_policy_and_the_trigger_only_where_alone():
    # hybrid-gated-soak differs from hybrid-gated in its acceptance policy alone; from
    # hybrid-on-delivery in the trigger AND the policy, so it is no gating pair
    from mcrisk.report.findings.pairs import acceptance_pairs
    full = load_scenario(REFERENCE.parent / "reference-2048-full.toml")
    assert acceptance_pairs(full) == [("hybrid-gated", "hybrid-gated-soak")]
    assert gating_pairs(full) == [("hybrid-on-delivery", "hybrid-gated")]


def test_the_soak_sentence_says_what_it_buys_and_costs_beyond_noise():
    from mcrisk.core.model import Acceptance, Distribution
    n = 4000
    first_days = np.where(np.arange(n) % 10 == 0, 12.0, 0.0)       # an outage in 1 of 10
    short_more = np.where(np.arange(n) % 4 == 0, 8.0, 0.0)          # the delay: +2 on average
    done = np.full(n, 300.0)
    m = metrics_of(first={"trough_depth": np.zeros(n), "trough_days": first_days,
                          "shortfall_gpu_days": np.full(n, 50.0), "completion_day": done},
                   soak={"trough_depth": np.zeros(n), "trough_days": first_days / 2,
                         "shortfall_gpu_days": np.full(n, 50.0) + short_more,
                         "completion_day": done + np.where(np.arange(n) % 5 == 0, 7.0, 0.0)})
    text = soaking("first", "soak", Acceptance(2, Distribution("fixed", (7.0,))), m,
                   ["first", "soak"])
    assert text.startswith("Whether to accept a rack whose burn-in failed is what separates "
                           "soak from first: soak gives a rack whose burn-in failed 2 or more "
                           "times an extra soak before acceptance")
    assert "with the soak the trough is the same in every world" in text
    low, high = _ci(first_days - first_days / 2)
    assert (f"the time below baseline is shorter by 0.6 days on average (95% CI {low:.1f} to "
            f"{high:.1f}; better in 400 worlds, never worse)") in text
    # larger by 2, its interval stated for that size (positive), not for first - soak (< 0)
    low, high = _ci(short_more)
    assert (f"the shortfall against demand is larger by 2 H100-eq x days on average (95% CI "
            f"{low:.1f} to {high:.1f}; better in 0 worlds, worse in 1,000)") in text
    assert low > 0
    assert ("The soak costs 1.4 days of completion on average" in text
            and "it completes later in 800 of 4,000 worlds (20.0%) and earlier in 0." in text)


def test_the_reference_findings_compare_the_pair_on_the_same_worlds(reference):
    from mcrisk.app.run import run_scenario
    run = run_scenario(str(REFERENCE), samples=1000, seed=1, backend="cpu")
    m, names = run.result.metrics, list(run.plan.strategy_names)
    text = "\n".join(findings(reference, run.summary, run.plan.largest_job, metrics=m,
                              names=names))
    a, g = names.index("hybrid-on-delivery"), names.index("hybrid-gated")
    paragraph = next(p for p in text.splitlines() if p.startswith("When to drain"))
    for metric, words in (("trough_depth", "the trough is shallower by"),
                          ("trough_days", "the time below baseline is shorter by"),
                          ("shortfall_gpu_days", "the shortfall against demand is smaller by")):
        diff = m[:, a, METRICS.index(metric)] - m[:, g, METRICS.index(metric)]
        low, high = _ci(diff)
        assert low > 0                                # beyond noise in the reference
        found = re.search(rf"{words} ({NUMBER}) .*? on average \(95% CI ({NUMBER}) to "
                          rf"({NUMBER}); better in ({NUMBER}) worlds", paragraph)
        assert found, (metric, paragraph)
        for shown, exact in zip(found.groups()[:3], (diff.mean(), low, high)):
            assert abs(num(shown) - exact) <= max(0.051, 0.5 + 1e-9 * abs(exact))
        assert int(num(found[4])) == int(np.sum(diff > 0))
    cost = m[:, g, DONE] - m[:, a, DONE]
    found = re.search(rf"Gating costs ({NUMBER}) days of completion on average", paragraph)
    assert found and abs(num(found[1]) - cost.mean()) <= 0.051
    # and every joint sentence holds for its strategy
    for match in JOINT.finditer(text):
        line = text[:match.start()].rsplit("\n", 1)[-1]
        name = line.split(" ", 1)[0]
        s = names.index(name)
        x = run.plan.baseline if match[4] is None else num(match[4])
        brute = sum(1 for d, t in zip(m[:, s, DEPTH], m[:, s, DAYS])
                    if d >= x - 1e-6 and t >= num(match[5]))
        assert int(num(match[1])) == brute


# ---- the ranking: tied or decided by the paired test; intervals only as a fallback --------

def _two(minimal, ranks=None, ci_apart=True):
    n = 400
    short_b = np.full(n, 500.0) if ci_apart else np.linspace(0, 100, n)
    m = metrics_of(a={"shortfall_gpu_days": np.linspace(0, 100, n),
                      "completion_day": np.full(n, 90.0)},
                   b={"shortfall_gpu_days": short_b, "completion_day": np.full(n, 90.0)})
    names = ("swap-gated", "drain-on-day")
    extra = {"ranks": ranks} if ranks else {}
    return findings(minimal, summary_of(m, names, names, 128.0, 200.0, **extra),
                    metrics=m, names=names)[0]


def test_the_leader_sentence_follows_the_ranks_when_present(minimal):
    tied = {"swap-gated": {"rank": 1, "tied_with": ["drain-on-day"], "decided_by": None},
            "drain-on-day": {"rank": 1, "tied_with": ["swap-gated"], "decided_by": None}}
    text = _two(minimal, tied)
    assert "swap-gated ranks first (rank 1=, tied with drain-on-day" in text
    assert "It shares first place with drain-on-day" in text
    assert "beyond Monte Carlo noise by a paired test" not in text
    decided = {"swap-gated": {"rank": 1, "tied_with": [], "decided_by": "shortfall_gpu_days"},
               "drain-on-day": {"rank": 2, "tied_with": [], "decided_by": "shortfall_gpu_days"}}
    text = _two(minimal, decided)
    assert ("It ranks ahead of drain-on-day on P90 shortfall (90 against 500 H100-eq x days), "
            "a difference beyond Monte Carlo noise by a paired test") in text
    assert "Their P90 trough depth (both 0) and trough days (both 0) are equal." in text


def test_without_ranks_overlapping_intervals_claim_neither_lead_nor_tie(minimal):
    text = _two(minimal, ci_apart=False)
    assert "this run does not show the lead to be beyond Monte Carlo noise" in text
    assert "within Monte Carlo noise" not in text
    assert "their 95% intervals do not overlap" in _two(minimal, ci_apart=True)


# ---- horizon, homeless time, power: counted -------------------------------------------------

def test_completion_after_the_horizon_is_never_silent(minimal):
    n = 1000
    late_a = np.where(np.arange(n) < 5, 250.0, 150.0)          # 0.5%: the closing sentence
    late_b = np.where(np.arange(n) < 300, 260.0, 150.0)        # 30%: its own paragraph
    m = metrics_of(a={"completion_day": late_a},
                   b={"trough_depth": np.full(n, 128.0), "trough_days": np.full(n, 20.0),
                      "completion_day": late_b})
    names = ("swap-gated", "drain-on-day")
    text = " ".join(findings(minimal, summary_of(m, names, names, 128.0, 200.0),
                             metrics=m, names=names))
    assert ("It completes after the 200-day horizon in 300 of 1,000 scenarios (30.0%; P50 "
            "completion day 150, P99 260)") in text
    assert "Under swap-gated (5 of 1,000 scenarios, 0.5%), completion passes the 200-day " \
           "horizon" in text


def test_homeless_and_power_are_counted(minimal):
    n = 500
    homeless = np.where(np.arange(n) < 123, 4.0, 0.0)
    power = np.where(np.arange(n) < 7, 1.0, 0.0)
    m = metrics_of(a={"completion_day": np.full(n, 90.0)},
                   b={"trough_depth": np.full(n, 128.0), "trough_days": np.full(n, 20.0),
                      "homeless_days": homeless, "power_violation": power,
                      "completion_day": np.full(n, 90.0)})
    names = ("swap-gated", "drain-on-day")
    paragraphs = findings(minimal, summary_of(m, names, names, 128.0, 200.0), 64.0,
                          metrics=m, names=names)
    text = " ".join(paragraphs)
    p90 = np.quantile(homeless, 0.9)
    assert (f"under drain-on-day in 123 of 500 scenarios (24.6%; P90 {p90:.0f} days in all). "
            "Under swap-gated it always has one, in all 500 scenarios.") in text
    assert paragraphs[-1].startswith("WARNING: power caps are exceeded")
    assert "drain-on-day in 7 of 500 scenarios (1.4%)" in paragraphs[-1]
    assert "swap-gated in" not in paragraphs[-1]


# ---- the report's "Definitions and assumptions" ------------------------------------------

def test_the_definitions_carry_the_runs_values(minimal):
    from types import SimpleNamespace

    from mcrisk.plan.compile import compile_scenario
    from mcrisk.report.html.page import definitions_html

    plan = compile_scenario(minimal)
    page = definitions_html(SimpleNamespace(summary={"samples": 1234}, scenario=minimal,
                                            plan=plan))
    assert '<h2 id="definitions">Definitions and assumptions</h2>' in page
    # minimal.toml: 2 pods x 64 GPUs x 1.0; horizon 200; largest job 64; one crew
    for value in ("B = 128 H100-eq", "H = 200 days", "J = 64 H100-eq", "1 crew takes rows",
                  "day 0: 128; day 60: 128; day 120: 360 H100-eq", "1,234 sampled worlds"):
        assert value in page, value
    for metric in METRICS:
        assert f"<code>{metric}</code>" in page
    assert "<b>not cut at H</b>" in page and "flat before the first point" in page
    assert "hall is energized" in page and "at least 36 scenarios" in page
    assert "Attrition" not in page and "Job mix" not in page          # none in minimal.toml


def test_the_definitions_say_how_the_full_reference_behaves():
    from types import SimpleNamespace

    from mcrisk.plan.compile import compile_scenario
    from mcrisk.report.html.page import definitions_html

    full = load_scenario(REFERENCE.parent / "reference-2048-full.toml")
    page = definitions_html(SimpleNamespace(summary={"samples": 10}, scenario=full,
                                            plan=compile_scenario(full)))
    # usable shares 1 - 4.7e-4 x 8 x 3 and 1 - 9.4e-4 x 72 x 0.5, the baseline 2048 x the first
    for value in ("= 0.98872 of its capacity", "= 0.96616 of its capacity",
                  f"B = {2048 * 0.98872:,.0f} H100-eq", "D(t) = 2,048 H100-eq × (1 + g)",
                  "taken every 30 days", "with chance 0.1 (0.3 if its burn-in failed before)",
                  "of hybrid-gated-soak: a unit whose burn-in failed 2 or more times",
                  "of hybrid-gated-keep: SU7, SU8 stay in service",
                  "frontier 1,024 H100-eq (40%), mid 256 H100-eq (35%), small 16 H100-eq (25%)"):
        assert value in page, value
    assert "( H100-eq)" not in page                 # a forecast has no points to list


@pytest.mark.slow
def test_the_report_states_counts_that_metrics_parquet_confirms(tmp_path):
    import pyarrow.parquet as pq

    from mcrisk.cli import main

    out = tmp_path / "out"
    assert main(["run", str(MINIMAL), "--samples", "300", "--seed", "4", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    page = (out / "report.html").read_text()
    table = pq.read_table(out / "metrics.parquet").to_pydict()
    rows = [dict(zip(table, values)) for values in zip(*table.values())]
    drain = [r for r in rows if r["strategy"] == "drain-on-day"]
    dipped = sum(1 for r in drain if r["trough_depth"] > 0)
    assert len(drain) == 300
    assert "drain-on-day (rank 2" in page
    assert ("dips below the 128 H100-eq baseline within the 200-day horizon in "
            + ("all 300 scenarios" if dipped == 300 else f"{dipped} of 300")) in page
    match = JOINT.search(page.replace("&#x27;", "'"))
    assert match
    x = 128.0 if match[4] is None else num(match[4])
    assert int(num(match[1])) == sum(1 for r in drain if r["trough_depth"] >= x
                                     and r["trough_days"] >= num(match[5]))
    assert 'href="#definitions"' in page and "B = 128 H100-eq" in page
    assert page.index('id="definitions"') < page.index('id="provenance"')
