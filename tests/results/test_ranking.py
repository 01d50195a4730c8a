"""Ranking that does not follow Monte Carlo noise (mcrisk.results.ranking).

Synthetic paired arrays values[scenario, strategy, criterion] check the procedure: clear
differences are ranked, noise is a tie that the next criterion breaks, equal P90s are a tie
without a test, ties chain, strategies tied on everything share a rank, missing P90s go last,
the result is deterministic, and the family-wise error stays under 5%. Then the summary, the
terminal table, report.html and summary.md show ranks and ties, and (slow) the reference gives
the same ranking for seeds 1, 2 and 3.
"""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mcrisk.results.statistics import summarize
from mcrisk.results.paired import paired_quantile_test
from mcrisk.results.ranking import (FAMILY_ALPHA, RANK_KEYS, per_test_alpha, rank, rank_label,
                                     rank_strategies, rule_text)
from mcrisk.cli import format_table
from mcrisk.core.definitions import METRICS
from mcrisk.report.html.page import ranking_table
from mcrisk.report.markdown import ranking_markdown

from ..conftest import REFERENCE

CRITERIA = ("c0", "c1", "c2")


def _values(n: int, columns: list[list[np.ndarray]]) -> np.ndarray:
    """values[scenario, strategy, criterion] from columns[strategy][criterion]."""
    return np.stack([np.stack(per, axis=1) for per in columns], axis=1).reshape(n, len(columns),
                                                                               -1)


def _rank(values, names, criteria=CRITERIA):
    return rank_strategies(values, names, criteria)


def test_per_test_level_is_bonferroni_over_every_criterion_and_pair():
    # 5 strategies: 10 pairs; 4 criteria: 40 possible tests; 0.05 / 40 = 0.00125
    assert per_test_alpha(5, 4) == pytest.approx(0.00125)
    assert per_test_alpha(2, 1) == pytest.approx(0.05)
    assert per_test_alpha(1, 4) == pytest.approx(0.05)      # nothing to test


def test_clear_differences_are_ranked_in_order():
    rng = np.random.default_rng(1)
    n = 2_000
    base = rng.gamma(2.0, 10.0, n)
    zero = np.zeros(n)
    # listed worst first: the ranking must reorder them
    values = _values(n, [[base + 20, zero, zero], [base + 10, zero, zero], [base, zero, zero]])
    result = _rank(values, ("worst", "middle", "best"))
    assert result["ranking"] == ["best", "middle", "worst"]
    assert [result["ranks"][s]["rank"] for s in result["ranking"]] == [1, 2, 3]
    assert all(result["ranks"][s]["decided_by"] == "c0" for s in result["ranking"])
    assert all(result["ranks"][s]["tied_with"] == [] for s in result["ranking"])


def test_noise_is_a_tie_and_the_next_criterion_decides():
    """a and b are exchangeable on c0 (independent draws of one distribution per world); the
    sampled P90 puts b ahead, but only by noise. On c1 a is clearly better."""
    rng = np.random.default_rng(7)
    n = 4_000
    for _ in range(50):                 # a draw in which noise favours b on c0
        a0, b0 = rng.normal(100, 10, n), rng.normal(100, 10, n)
        if np.quantile(b0, 0.9) < np.quantile(a0, 0.9):
            break
    assert np.quantile(b0, 0.9) < np.quantile(a0, 0.9)
    p, _ = paired_quantile_test(b0, a0, 0.9)
    assert p >= per_test_alpha(2, 3)            # not beyond noise: the setup is what we claim
    c1 = rng.gamma(2.0, 5.0, n)
    values = _values(n, [[a0, c1, c1], [b0, c1 + 5, c1]])
    result = _rank(values, ("a", "b"))
    # the old lexicographic sort would put b first on its (noisy) lower c0 P90
    assert result["ranking"] == ["a", "b"]
    assert result["ranks"]["a"] == {"rank": 1, "tied_with": [], "decided_by": "c1"}
    assert result["ranks"]["b"] == {"rank": 2, "tied_with": [], "decided_by": "c1"}


def test_equal_p90s_are_a_tie_without_a_test():
    """Both P90s are the atom 2,048, yet a paired test would call the distributions different
    (b sits at the atom far more often): equal P90s still tie, and c1 decides."""
    n = 1_000
    a0 = np.where(np.arange(n) % 10 < 2, 2048.0, 1000.0)     # 20% at the atom
    b0 = np.where(np.arange(n) % 10 < 8, 2048.0, 1000.0)     # 80% at the atom
    assert np.quantile(a0, 0.9) == np.quantile(b0, 0.9) == 2048.0
    assert paired_quantile_test(a0, b0, 0.9)[0] < per_test_alpha(2, 3)
    c1 = np.linspace(0, 100, n)
    values = _values(n, [[a0, c1 + 10, c1], [b0, c1, c1]])
    result = _rank(values, ("a", "b"))
    assert result["ranking"] == ["b", "a"]
    assert result["ranks"]["b"]["decided_by"] == "c1"


def test_an_atom_at_the_pooled_p90_needs_the_share_beyond_noise_too():
    """b is at the atom 2,048 in every world, a in 9.5% of them: a's sampled P90 is below
    2,048, and the paired test (a rarely at the atom, b always) is overwhelming, yet 9.5% of
    1,000 worlds is no evidence that a's true P90 is below 2,048 (it is 2,048 if a reaches
    the atom in 10% of worlds). The pair ties; with a at the atom in 2% of worlds it splits."""
    n = 1_000
    b = np.full(n, 2048.0)
    zero = np.zeros(n)
    level = per_test_alpha(2, 2)
    near = np.where(np.arange(n) < 95, 2048.0, np.linspace(0, 1000, n))
    assert np.count_nonzero(near == 2048.0) == 95 and np.quantile(near, 0.9) < 2048.0
    assert paired_quantile_test(near, b, 0.9)[0] < 1e-100 < level
    result = rank_strategies(_values(n, [[b, zero], [near, zero + 1]]), ("b", "a"), ("c0", "c1"))
    assert result["ranking"] == ["b", "a"]                    # c1 decides, not the atom
    assert result["ranks"]["a"]["decided_by"] == "c1"
    far = np.where(np.arange(n) < 20, 2048.0, np.linspace(0, 1000, n))
    result = rank_strategies(_values(n, [[b, zero], [far, zero + 1]]), ("b", "a"), ("c0", "c1"))
    assert result["ranking"] == ["a", "b"] and result["ranks"]["b"]["decided_by"] == "c0"


def test_ties_chain_even_where_the_ends_alone_would_differ():
    """a < b < c by small shifts: a-b and b-c are within noise, a-c is not. The chain keeps
    all three together on c0 (conservative); c1 then decides, in the reverse order."""
    n = 1_000
    u = (np.arange(n) + 0.5) / n
    shift = 0.005
    a0, b0, c0 = u, u + shift, u + 2 * shift
    level = per_test_alpha(3, 2)
    assert paired_quantile_test(a0, b0, 0.9)[0] >= level
    assert paired_quantile_test(b0, c0, 0.9)[0] >= level
    assert paired_quantile_test(a0, c0, 0.9)[0] < level       # the ends alone would split
    values = _values(n, [[a0, u + 2], [b0, u + 1], [c0, u]])
    result = rank_strategies(values, ("a", "b", "c"), ("c0", "c1"))
    assert result["ranking"] == ["c", "b", "a"]
    assert {result["ranks"][s]["decided_by"] for s in "abc"} == {"c1"}


def test_strategies_tied_on_every_criterion_share_a_rank_in_file_order():
    rng = np.random.default_rng(3)
    n = 500
    same = [rng.normal(50, 5, n) for _ in CRITERIA]
    worse = [x + 30 for x in same]
    # "z" listed first, "y" second: a tie keeps the file's order, whatever the names
    values = _values(n, [worse, same, same, same])
    result = _rank(values, ("w", "z", "y", "x"))
    assert result["ranking"] == ["z", "y", "x", "w"]
    assert [result["ranks"][s]["rank"] for s in result["ranking"]] == [1, 1, 1, 4]
    assert result["ranks"]["y"]["tied_with"] == ["z", "x"]
    assert result["ranks"]["w"]["tied_with"] == []
    assert result["ranks"]["z"]["decided_by"] == "c0"         # separated from w below
    assert rank_label(result["ranks"]["z"]) == "1=" and rank_label(result["ranks"]["w"]) == "4"


def test_all_tied_have_no_deciding_criterion():
    n = 300
    col = np.linspace(0, 1, n)
    values = _values(n, [[col, col, col]] * 3)
    result = _rank(values, ("a", "b", "c"))
    assert result["ranking"] == ["a", "b", "c"]
    assert all(result["ranks"][s] == {"rank": 1, "tied_with": [t for t in "abc" if t != s],
                                      "decided_by": None} for s in "abc")


def test_missing_p90_goes_last_and_the_next_criterion_orders_those():
    n = 100
    ones, zero = np.ones(n), np.zeros(n)
    nan = np.full(n, np.nan)
    big = np.full(n, np.inf)                    # no finite P90 either
    values = _values(n, [[nan, ones, zero], [ones * 5, zero, zero], [big, zero, zero],
                         [zero, zero, zero]])
    result = _rank(values, ("a", "b", "c", "d"))
    assert result["ranking"] == ["d", "b", "c", "a"]          # c, a: no P90 on c0; c1 decides
    assert result["ranks"]["c"] == {"rank": 3, "tied_with": [], "decided_by": "c0"}
    assert result["ranks"]["a"] == {"rank": 4, "tied_with": [], "decided_by": "c1"}


def test_ranking_is_deterministic_and_independent_of_listing_order_where_not_tied():
    rng = np.random.default_rng(11)
    n = 3_000
    base = rng.gamma(2.0, 10.0, n)
    columns = [[base + 3 * k + rng.normal(0, 0.5, n), base * 0.1 * k, base] for k in range(5)]
    names = tuple(f"s{k}" for k in range(5))
    values = _values(n, columns)
    first = _rank(values, names)
    assert _rank(values.copy(), names) == first
    order = [3, 0, 4, 1, 2]
    shuffled = _rank(values[:, order, :], tuple(names[k] for k in order))
    assert shuffled["ranks"] == first["ranks"]
    assert shuffled["ranking"] == first["ranking"]          # no ties here, so no file order


def test_family_wise_error_of_splitting_equal_strategies_is_under_five_percent():
    """Five exchangeable strategies (iid per world): any split is a false difference. Over 100
    repetitions the share of rankings with any split stays under 5% (a sort by the sampled
    P90s alone would split nearly every time)."""
    rng = np.random.default_rng(2024)
    n, reps = 600, 100
    names = tuple("abcde")
    false = 0
    for _ in range(reps):
        values = rng.exponential(10.0, (n, 5, 1))
        ranks = rank_strategies(values, names, ("c0",))["ranks"]
        false += any(entry["rank"] != 1 for entry in ranks.values())
    assert false / reps <= FAMILY_ALPHA


def test_aggregate_rank_uses_the_four_criteria_on_metrics():
    """ranking.rank reads the rank criteria from metrics[scenario, strategy, metric]."""
    n = 200
    metrics = np.zeros((n, 3, len(METRICS)))
    metrics[:, 0, METRICS.index("trough_depth")] = 10.0     # a: deeper trough
    metrics[:, 1, METRICS.index("homeless_days")] = 5.0     # b: only homeless time
    metrics[:, 2, METRICS.index("completion_day")] = 900.0  # c: late, but not ranked on that
    result = rank(metrics, ("a", "b", "c"))
    assert result["ranking"] == ["c", "b", "a"]
    assert result["ranks"]["b"]["decided_by"] == "homeless_days"
    assert result["ranks"]["a"]["decided_by"] == "trough_depth"
    assert result["rule"]["criteria"] == list(RANK_KEYS)
    assert result["rule"]["test_alpha"] == pytest.approx(0.05 / (4 * 3))


def _tied_summary():
    """A summary of four strategies where two share rank 2 (synthetic, through summarize)."""
    n = 400
    metrics = np.zeros((n, 4, len(METRICS)))
    depth = METRICS.index("trough_depth")
    metrics[:, 0, depth] = 1.0
    metrics[:, 1, depth] = 1.0
    metrics[:, 3, depth] = 5.0
    names = ("a<b>", "b", "best", "worst")
    strategies = summarize(metrics, names)
    ranked = rank(metrics, names)
    for name in names:
        strategies[name]["beyond_horizon"] = {"probability": 0.0, "completion_p99": 0.0}
    return {"ranking": ranked["ranking"], "ranks": ranked["ranks"],
            "ranking_rule": ranked["rule"], "strategies": strategies, "horizon_days": 540.0}


def test_terminal_table_shows_shared_ranks_and_the_deciding_criterion():
    summary = _tied_summary()
    assert summary["ranking"] == ["best", "a<b>", "b", "worst"]
    lines = format_table(summary).splitlines()
    assert "decided by" in lines[0]
    rows = lines[2:]
    assert [row.split()[0] for row in rows] == ["1", "2=", "2=", "4"]
    assert rows[1].split()[1] == "a<b>" and rows[1].rstrip().endswith("trough depth")


def test_report_and_summary_md_show_ties_p99_and_the_rule():
    summary = _tied_summary()
    page = ranking_table(summary, {name: "#000" for name in summary["strategies"]})
    assert '<td class="n">2=</td>' in page and page.count("2=</td>") == 2
    assert "tied with a&lt;b&gt;" in page and "a<b>" not in page
    assert page.count(">P99</th>") == 3
    assert "p &lt; 0.00208" in page                       # 0.05 / (4 criteria x 6 pairs)
    md = "\n".join(ranking_markdown(summary))
    rows = [line for line in md.splitlines() if line.startswith("| 2= |")]
    assert len(rows) == 2 and "(tied with b)" in rows[0] and "a&lt;b&gt;" in rows[0]
    assert "share a rank" in md


def test_rule_text_states_the_level_and_the_error_rate():
    text = rule_text({"criteria": list(RANK_KEYS), "family_alpha": 0.05, "test_alpha": 0.00125})
    assert "P90 trough depth, then P90 trough days, then P90 shortfall, then P90 homeless days" \
        in text
    assert "p < 0.00125" in text and "at most a 5% chance" in text


@pytest.mark.slow
def test_reference_ranking_is_the_same_for_seeds_1_2_3():
    """At 20,000 scenarios the reference's ranking no longer follows noise: big-bang and
    rolling-on-delivery tie on P90 trough days (313.7 against 313.2 with seed 1, well within
    noise) and P90 shortfall, far apart, separates them, whatever the seed."""
    from mcrisk.app.run import run_scenario

    rankings = []
    for seed in (1, 2, 3):
        run = run_scenario(str(REFERENCE), samples=20_000, seed=seed, backend="cpu")
        summary = json.loads(json.dumps(run.summary, allow_nan=False))
        rankings.append(summary["ranking"])
        assert summary["ranks"]["big-bang"]["decided_by"] == "shortfall_gpu_days"
        assert summary["ranks"]["swing-gated"]["decided_by"] == "shortfall_gpu_days"
    assert rankings[0] == rankings[1] == rankings[2] == [
        "hybrid-gated", "swing-gated", "hybrid-on-delivery", "rolling-on-delivery", "big-bang"]


def test_columns_read_the_criteria_in_place():
    """With columns, criterion k is values[:, :, columns[k]]: the same ranking as the columns
    cut out, and a wrong shape is refused."""
    rng = np.random.default_rng(5)
    n = 500
    metrics = rng.gamma(2.0, 10.0, (n, 3, 6))
    metrics[:, 1, 4] -= 15.0                 # s1 clearly better on column 4
    cut = metrics[:, :, [4, 2]]
    assert (rank_strategies(metrics, ("s0", "s1", "s2"), ("c0", "c1"), columns=[4, 2])
            == rank_strategies(cut, ("s0", "s1", "s2"), ("c0", "c1")))
    assert rank_strategies(cut, ("s0", "s1", "s2"), ("c0", "c1"))["ranking"][0] == "s1"
    with pytest.raises(ValueError):
        rank_strategies(metrics, ("s0", "s1", "s2"), ("c0", "c1"))
    with pytest.raises(ValueError):
        rank_strategies(metrics, ("s0", "s1", "s2"), ("c0",), columns=[6])


@pytest.mark.parametrize("n", [1, 2, 37, 1_000, 4_097])
def test_pooled_quantile_is_numpys_quantile_of_the_concatenation(n):
    """The paired test's pooled quantile, from one partition in place, is exactly
    numpy.quantile of the two samples pooled: ties, atoms, infinities and NaN included."""
    from mcrisk.results.paired import pooled_quantile

    gen = np.random.default_rng(n)
    x, y = np.round(gen.gamma(0.5, 4.0, n)), gen.gamma(0.5, 4.0, n)
    for a, b in ((x, y), (np.zeros(n), y), (np.r_[x[:-1], np.inf], y),
                 (x, np.r_[y[:-1], np.nan])):
        for p in (0.5, 0.9, 0.99, 1.0):
            with np.errstate(invalid="ignore"):
                expected = float(np.quantile(np.concatenate([a, b]), p))
            got = pooled_quantile(a, b, p)
            assert got == expected or (math.isnan(got) and math.isnan(expected)), (p, got)
