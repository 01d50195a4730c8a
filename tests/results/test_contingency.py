"""Contingent strategies in figures (mcrisk/results/contingency.py): the branch shares with
their exact interval, the metrics by branch and the value of flexibility, against direct
calculations on constructed results; then a whole run's summary.json against its schema,
with the terminal's and the report's sections."""
from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pytest
from scipy import stats

from mcrisk.cli import main
from mcrisk.core.definitions import METRICS, N_METRICS
from mcrisk.plan.contingency import Contingency
from mcrisk.results.binomial import proportion_interval
from mcrisk.results.contingency import contingent_block, flexibility_sentences

from ..helpers import MINIMAL_TEXT, schema_errors

TROUGH = METRICS.index("trough_depth")


@pytest.mark.parametrize("k, n", [(0, 10), (10, 10), (3, 10), (774, 1000), (1, 20_000),
                                  (15_321, 20_000)])
def test_proportion_interval_is_clopper_pearson(k, n):
    """By its definition (each end puts 2.5% in the binomial's far tail) and against scipy,
    which finds the ends by root finding (to about 1e-7 relative)."""
    low, high = proportion_interval(k, n)
    if k > 0:
        assert stats.binom.sf(k - 1, n, low) == pytest.approx(0.025, rel=1e-9)
    else:
        assert low == 0.0
    if k < n:
        assert stats.binom.cdf(k, n, high) == pytest.approx(0.025, rel=1e-9)
    else:
        assert high == 1.0
    expected = stats.binomtest(k, n).proportion_ci(0.95, method="exact")
    assert low == pytest.approx(expected.low, rel=1e-6, abs=1e-15)
    assert high == pytest.approx(expected.high, rel=1e-6, abs=1e-15)


def _plan():
    """Three rows: met branch 0, unmet branch 1, contingent 2."""
    return SimpleNamespace(strategy_names=("a", "b", "flex"), node_names=("hall B energized",),
                           contingencies=(Contingency(2, 0, 1, 150.0, (0,), 1),))


def _results(n=4_000, seed=3):
    """Branch a is good where met, bad elsewhere; b the other way round; the contingent row
    takes a where met and b elsewhere, so it is better than each fixed branch."""
    rng = np.random.default_rng(seed)
    met = rng.random(n) < 0.7
    metrics = rng.random((n, 3, N_METRICS))
    metrics[:, 0, TROUGH] = np.where(met, 10, 50) + rng.random(n)
    metrics[:, 1, TROUGH] = np.where(met, 40, 20) + rng.random(n)
    metrics[:, 2] = np.where(met[:, None], metrics[:, 0], metrics[:, 1])
    return metrics, met


def test_shares_and_metrics_by_branch():
    metrics, met = _results()
    entry = contingent_block(_plan(), metrics, None, met[:, None])["flex"]
    assert entry["decision"] == {"day": 150.0, "at_least": 1, "events": ["hall B energized"]}
    met_b, unmet_b = entry["branches"]
    assert (met_b["strategy"], unmet_b["strategy"]) == ("a", "b")
    assert met_b["worlds"] == met.sum() and unmet_b["worlds"] == (~met).sum()
    assert met_b["share"] + unmet_b["share"] == pytest.approx(1.0)
    low, high = met_b["share_ci"]
    assert low < met.mean() < high
    assert met_b["metrics"]["trough_depth"]["mean"] == pytest.approx(
        metrics[met, 0, TROUGH].mean())
    assert unmet_b["metrics"]["trough_depth"]["p90"] == pytest.approx(
        np.quantile(metrics[~met, 1, TROUGH], 0.9))


def test_value_of_flexibility_is_paired_and_gated():
    metrics, met = _results()
    flex = contingent_block(_plan(), metrics, None, met[:, None])["flex"]["flexibility"]
    against_a = flex["a"]["trough_depth"]
    # the paired difference, computed directly: 0 where met, b - a elsewhere
    direct = np.where(met, 0.0, metrics[:, 1, TROUGH] - metrics[:, 0, TROUGH])
    assert against_a["mean"] == pytest.approx(direct.mean())
    assert against_a["p_equal"] == pytest.approx(met.mean())
    assert against_a["verdict"] == "better" and flex["b"]["trough_depth"]["verdict"] == "better"
    # the other metrics are noise here: the same uniform noise in each row, paired
    assert flex["a"]["trough_days"]["verdict"] in ("within_noise", "better", "worse")
    sentences = flexibility_sentences({"flex": contingent_block(
        _plan(), metrics, None, met[:, None])["flex"]})
    assert any("rather than always following a, flex lowers its mean trough depth" in s
               for s in sentences), sentences


def test_no_claim_within_noise():
    """Branches equal in distribution and the decision a coin toss: no sentence claims a
    difference for the trough (the interval contains 0), and one identical in every world
    is `same`."""
    rng = np.random.default_rng(5)
    n = 2_000
    met = rng.random(n) < 0.5
    metrics = np.zeros((n, 3, N_METRICS))
    metrics[:, :2, TROUGH] = rng.normal(100, 10, (n, 2))
    metrics[:, 2] = np.where(met[:, None], metrics[:, 0], metrics[:, 1])
    block = contingent_block(_plan(), metrics, None, met[:, None])
    flex = block["flex"]["flexibility"]
    assert flex["a"]["trough_days"]["verdict"] == "same"
    verdicts = {flex[b]["trough_depth"]["verdict"] for b in "ab"}
    sentences = flexibility_sentences(block)
    if verdicts == {"within_noise"}:
        assert not any("lowers" in s or "raises" in s for s in sentences)
        assert any("within Monte Carlo noise" in s and "trough depth" in s for s in sentences)


TINY = MINIMAL_TEXT + """
[[strategies]]
name = "swap-late"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 40 }]

[[strategies]]
name = "contingent"
decision = { day = 35, arrived = "S1", met = "swap-gated", unmet = "swap-late" }
"""


def test_a_run_writes_it(tmp_path, capsys):
    """summary.json's `contingent` against the schema and the run's own rows; the terminal
    and report.html show the branches and the value of flexibility."""
    (tmp_path / "tiny.toml").write_text(TINY)
    out = tmp_path / "out"
    assert main(["run", str(tmp_path / "tiny.toml"), "--samples", "500", "--out", str(out),
                 "--backend", "numba", "--quiet"]) == 0
    printed = capsys.readouterr().out
    summary = json.loads((out / "summary.json").read_text())
    assert schema_errors(summary) == []
    entry = summary["contingent"]["contingent"]
    assert [b["strategy"] for b in entry["branches"]] == ["swap-gated", "swap-late"]
    assert sum(b["worlds"] for b in entry["branches"]) == 500
    assert set(entry["flexibility"]) == {"swap-gated", "swap-late"}
    assert "contingent: on day 35, shipment S1 arrives?" in printed
    assert "value of flexibility" in printed
    page = (out / "report.html").read_text()
    assert 'id="contingent"' in page and "Value of flexibility" in page


def test_findings_do_not_read_a_contingent_plan_as_its_met_branch(tmp_path, monkeypatch):
    """A contingent Strategy carries its met branch's plan fields for the kernels; the
    findings that compare plans (only the trigger differs, only the acceptance policy) and
    the trough's reason never take it for that branch. Without the exclusion,
    hall-b-or-rows (plan fields of hybrid-gated) pairs with hybrid-gated-soak."""
    from mcrisk.report.findings.pairs import acceptance_pairs, gating_pairs
    from mcrisk.report.findings.sentences import kept_units, why
    from mcrisk.scenario import load_scenario

    from ..helpers import SCENARIOS

    scenario = load_scenario(SCENARIOS / "contingent.toml")
    contingent = {"hall-b-or-rows", "keep-if-slow"}
    pairs = acceptance_pairs(scenario) + gating_pairs(scenario)
    assert ("hybrid-gated", "hybrid-gated-soak") in pairs
    assert not contingent & {name for pair in pairs for name in pair}
    plan = why(scenario, scenario.strategy("hall-b-or-rows"))
    assert plan.startswith("on day 150 it decides between hybrid-gated and hybrid-gated-swing")
    assert kept_units(scenario, scenario.strategy("keep-if-slow")) == ""


def test_a_decisions_condition_reads_as_words():
    from mcrisk.results.contingency import condition_text

    assert condition_text({"events": ["hall B energized"], "at_least": 1}) == "hall B energized"
    assert condition_text({"events": ["A", "B"], "at_least": 2}) == "all of A, B"
    assert condition_text({"events": ["A", "B"], "at_least": 1}) == "at least 1 of A, B"
    many = [f"N{i:02} accepted" for i in range(1, 17)]
    assert condition_text({"events": many, "at_least": 8}) == \
        "at least 8 of 16 events (N01 accepted .. N16 accepted)"
