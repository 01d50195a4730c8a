"""`mcrisk compare` with costs: every cost column paired A - B on the same worlds, with the same
statistics as the metrics (checked against NumPy and SciPy on hand-made arrays), printed in
money; and nothing new without costs."""
from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from scipy import stats

from mcrisk import cli
from mcrisk.app import compare as compare_run
from mcrisk.results.compare import compare_costs, money_text
from mcrisk.cli.text import format_cost_comparison
from mcrisk.core.definitions import COSTS, N_COSTS, N_METRICS
from mcrisk.core.model import Costs


def hand_made_costs(n: int = 400, seed: int = 5) -> np.ndarray:
    """costs[n, 2, N_COSTS]: components drawn at random, cost_total their sum."""
    rng = np.random.default_rng(seed)
    costs = np.zeros((n, 2, N_COSTS))
    costs[:, :, 1:] = rng.gamma(2.0, 1e5, size=(n, 2, N_COSTS - 1))
    costs[:, 1, 4] += 3e5                      # B runs the old fleet longer
    costs[:, :, 0] = costs[:, :, 1:].sum(axis=2)
    return costs


def test_every_cost_column_is_paired_with_the_metrics_statistics():
    costs = hand_made_costs()
    got = compare_costs(costs, ["a", "b"], "a", "b")
    assert list(got) == list(COSTS)
    for k, name in enumerate(COSTS):
        diff = costs[:, 0, k] - costs[:, 1, k]
        d = got[name]
        half = stats.norm.ppf(0.975) * diff.std(ddof=1) / np.sqrt(diff.size)
        assert d["mean"] == pytest.approx(diff.mean(), rel=1e-12)
        assert d["mean_ci"] == pytest.approx([diff.mean() - half, diff.mean() + half], rel=1e-9)
        for q in (50, 90, 99):
            assert d[f"p{q}"] == pytest.approx(np.percentile(diff, q), rel=1e-12)
        # the P90's interval: order statistics of the differences, as scipy's quantile_test
        ci = stats.quantile_test(diff, p=0.9).confidence_interval(0.95)
        assert d["p90_ci"] == [ci.low, ci.high]
        assert d["p_a_worse"] == np.mean(diff > 0) and d["p_a_better"] == np.mean(diff < 0)
    assert got["cost_old_fleet"]["mean_ci"][1] < 0          # a costs less: beyond noise


def test_no_cost_columns_no_cost_differences():
    assert compare_costs(None, ["a", "b"], "a", "b") == {}
    assert compare_costs(np.zeros((10, 2, 0)), ["a", "b"], "a", "b") == {}


@pytest.mark.parametrize("value, text", [
    (0.0, "$0"), (0.5, "$0.50"), (850.0, "$850"), (1234.0, "$1.23k"), (12_345.0, "$12.3k"),
    (456_000.0, "$456k"), (-456_000.0, "-$456k"), (999_950.0, "$1.00M"),
    (1_234_560.0, "$1.23M"), (2.5e9, "$2.50B"), (-0.001, "$0.00"), (None, "n/a"),
    (float("nan"), "n/a"), (float("inf"), "n/a")])
def test_money_is_written_with_three_significant_digits(value, text):
    assert money_text(value) == text


def test_other_currencies_follow_the_amount_or_use_their_symbol():
    assert money_text(1.5e6, "CHF") == "1.50M CHF"
    assert money_text(-2e4, "EUR") == "-\u20ac20.0k"


def test_the_cost_table_is_printed_in_money():
    costs = np.zeros((100, 2, N_COSTS))
    costs[:, 0, 0] = 1.5e6                    # a always costs $1.5M more than b
    costs[:, 0, 3] = 1.5e6
    text = format_cost_comparison("a", "b", compare_costs(costs, ["a", "b"], "a", "b"), 100,
                                  "USD")
    assert text.startswith("cost: A - B per scenario in USD; positive = A costs more")
    total = next(line for line in text.splitlines() if line.startswith("cost_total "))
    assert total.split()[1:4] == ["$1.50M", "[$1.50M,", "$1.50M]"]
    assert total.split()[-2:] == ["100.0%", "0.0%"]
    crews = next(line for line in text.splitlines() if line.startswith("cost_crews "))
    assert crews.split()[1:4] == ["$0", "[$0,", "$0]"]


def _fake_costs(monkeypatch, costs: np.ndarray, currency: str = "USD"):
    """Make compare's run see `costs` (hand-made) for the tiny scenario's two strategies,
    and a [costs] section with `currency`, until the cost backends land."""
    real_load, real_simulate = compare_run.load_for_run, compare_run.simulate

    def load(*args, **kwargs):
        register = real_load(*args, **kwargs)
        return replace(register, scenario=replace(register.scenario,
                                                  costs=Costs(currency=currency)))

    def simulate(plan, samples, *args, **kwargs):
        result = real_simulate(replace(plan, n_costs=0), samples, *args, **kwargs)
        return replace(result, costs=costs[:samples])

    monkeypatch.setattr(compare_run, "load_for_run", load)
    monkeypatch.setattr(compare_run, "simulate", simulate)


def test_compare_prints_the_cost_differences_with_costs(tiny, monkeypatch, capsys):
    costs = hand_made_costs(n=40)
    _fake_costs(monkeypatch, costs, "EUR")
    assert cli.main(["compare", str(tiny()), "swap-gated", "swap-on-day", "--samples", "40",
                     "--backend", "numpy", "--quiet"]) == 0
    out = capsys.readouterr().out
    table = out[out.index("cost: A - B per scenario in EUR"):]
    rows = {line.split()[0]: line for line in table.splitlines()[2:] if line.strip()}
    assert list(rows) == list(COSTS)
    mean = (costs[:, 0, 4] - costs[:, 1, 4]).mean()          # swap-gated is strategy 1
    assert rows["cost_old_fleet"].split()[1] == money_text(-mean, "EUR")
    assert out.index("trough_depth") < out.index("cost: A - B")


def test_compare_without_costs_prints_what_it_did(tiny, capsys):
    assert cli.main(["compare", str(tiny()), "swap-gated", "swap-on-day", "--samples", "40",
                     "--backend", "numpy", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "cost:" not in out and "cost_" not in out and "$" not in out
    compared = compare_run.run_comparison(tiny(), "swap-gated", "swap-on-day", 40, 1, "numpy")
    assert compared.cost_differences == {} and compared.currency is None
    assert N_METRICS == 6
