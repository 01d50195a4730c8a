"""The value of each mitigation: every risk as assessed against the same register with only
one risk mitigated, on the same worlds; checked where it can be worked out by hand (fixed
slips in the tiny scenario, a priced shortfall and a mitigation's cost), and its statistics
against NumPy on hand-made arrays."""
from __future__ import annotations

import re

import numpy as np
import pytest

from mcrisk import cli
from mcrisk.results.mitigation import (counterpart, p90_change, reduction, risk_value,
                                        worth)
from mcrisk.cli.text import format_mitigation
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.risks import select_risks
from mcrisk.core.definitions import COST, METRICS, N_COSTS
from mcrisk.app.mitigation import fits_in_memory
from mcrisk.app.run import run_scenario
from mcrisk.scenario import load_scenario

from ..helpers import md_flat, page_text, schema_errors

# Two slips of shipment S1 that always happen before mitigation and never after: 30 days
# ("late-ship") and 10 days ("late-docs"), added together: S1 arrives 40 days late before
# mitigation. In the tiny scenario (fixed durations) the racks are accepted 7 days after S1
# arrives, and swap-on-day drains both old units on day 10, so its trough lasts from day 10
# to the acceptance at capacity 0 against demand 256: each day of slip is 256 H100-eq x days
# of shortfall. swap-gated drains on acceptance: no trough, no shortfall either way.
RISK = """
[[risks]]
id = "{id}"
probability = 1
impact = {days}
applies_to = ["arrival:S1"]
enabled = true
mitigated = {{ probability = 0{cost} }}
"""
# The shortfall priced at $2 an H100-eq-hour: $48 an H100-eq-day.
COSTS = """
[costs]
currency = "USD"

[costs.shortfall]
per_h100_eq_hour = 2.0
"""
PER_DAY_OF_SLIP = 256 * 48.0


def two_slips(tiny, costs: bool = False, ship_cost: float = 100_000, docs_cost: float = 200_000):
    path = tiny()
    text = path.read_text()
    for risk_id, days, cost in (("late-ship", 30, ship_cost), ("late-docs", 10, docs_cost)):
        text += RISK.format(id=risk_id, days=days, cost=f", cost = {cost}" if costs else "")
    path.write_text(text + (COSTS if costs else ""))
    return path


@pytest.mark.parametrize("mode", ["pre", "post"])
def test_each_mitigation_alone_lowers_the_trough_by_its_own_slip(tiny, mode):
    run = run_scenario(str(two_slips(tiny)), samples=40, backend="numpy", risks=mode)
    m = run.summary["mitigation"]
    assert m["risks"] == ["late-ship", "late-docs"]
    on_day = m["strategies"]["swap-on-day"]["shortfall_gpu_days"]
    assert on_day["mean"] == 40 * 256                     # the whole register: both slips
    each = m["each_risk"]
    assert each["difference"] == "pre - pre with only this risk mitigated"
    assert "currency" not in each
    for risk, days in (("late-ship", 30), ("late-docs", 10)):
        value = each["risks"][risk]
        assert value["wall_seconds"] > 0                   # a simulation of its own
        shortfall = value["strategies"]["swap-on-day"]["shortfall_gpu_days"]
        assert (shortfall["mean"], shortfall["p90"]) == (days * 256, days * 256)
        assert shortfall["mean_ci"] == [days * 256] * 2 and shortfall["verdict"] == "helps"
        # before: 17 + 40 days of trough; with only this risk mitigated: 40 - days fewer
        assert shortfall["p90_pre"] == (17 + 40) * 256
        assert shortfall["p90_mitigated"] == (17 + 40 - days) * 256
        assert shortfall["p90_reduction"] == days * 256 and shortfall["p90_change"] == "lower"
        depth = value["strategies"]["swap-on-day"]["trough_depth"]
        assert (depth["p90_pre"], depth["p90_mitigated"]) == (256, 256)
        assert depth["p90_change"] == "unchanged" and depth["verdict"] == "unchanged"
        gated = value["strategies"]["swap-gated"]
        assert gated["shortfall_gpu_days"]["verdict"] == "unchanged"
        assert set(gated) == {"trough_depth", "shortfall_gpu_days"}      # no costs
    assert schema_errors(run.summary) == []


def test_one_risk_is_the_post_side_itself_no_more_simulation(tiny):
    path = tiny()
    path.write_text(path.read_text() + RISK.format(id="late-ship", days=30, cost=""))
    seen = []
    run = run_scenario(str(path), samples=40, backend="numpy", risks="pre",
                       progress=lambda done, total: seen.append((done, total)))
    value = run.summary["mitigation"]["each_risk"]["risks"]["late-ship"]
    assert value["wall_seconds"] == 0.0
    assert value["strategies"]["swap-on-day"]["shortfall_gpu_days"]["mean"] == 30 * 256
    assert run.summary["mitigation"]["strategies"]["swap-on-day"]["shortfall_gpu_days"][
        "mean"] == 30 * 256
    assert "the post side: no more simulation" in format_mitigation(run.summary["mitigation"])


def test_with_costs_the_mitigation_is_worth_what_it_saves_less_what_it_costs(tiny):
    path = two_slips(tiny, costs=True)
    run = run_scenario(str(path), samples=40, backend="numpy", risks="pre")
    each = run.summary["mitigation"]["each_risk"]
    assert each["currency"] == "USD"
    for risk, days, cost in (("late-ship", 30, 100_000), ("late-docs", 10, 200_000)):
        on_day = each["risks"][risk]["strategies"]["swap-on-day"]
        saved = days * PER_DAY_OF_SLIP - cost               # 268,640 and -77,120
        assert on_day["cost_total"]["mean"] == pytest.approx(saved, rel=1e-12)
        assert on_day["cost_total"]["p90_reduction"] == pytest.approx(saved, rel=1e-12)
        assert on_day["mitigation_cost"]["mean"] == cost
        assert on_day["worth"] == ("worth_it" if saved > 0 else "not_worth_it")
        gated = each["risks"][risk]["strategies"]["swap-gated"]
        assert gated["cost_total"]["mean"] == -cost          # it saves nothing, costs `cost`
        assert gated["cost_total"]["p90_change"] == "higher"
        assert gated["worth"] == "not_worth_it"
    assert schema_errors(run.summary) == []
    text = format_mitigation(run.summary["mitigation"])
    ship = text[text.index("  late-ship"):text.index("  late-docs")]
    row = next(line for line in ship.splitlines() if line.strip().startswith("swap-on-day"))
    assert "$269k [$269k, $269k]" in row and row.endswith("$100k  worth it")
    docs = text[text.index("  late-docs"):]
    assert next(line for line in docs.splitlines()
                if line.strip().startswith("swap-gated")).endswith("$200k  not worth it")


def test_a_mitigation_that_only_costs_is_in_the_register_with_costs(tiny):
    path = tiny()
    path.write_text(path.read_text() + RISK.format(id="x", days=30, cost=", cost = 5000")
                    .replace("probability = 0, ", "probability = 1, ") + COSTS)
    side = counterpart(load_scenario(path), "pre")
    assert side is not None and side.risks == ("x",)
    run = run_scenario(str(path), samples=40, backend="numpy", risks="pre")
    value = run.summary["mitigation"]["each_risk"]["risks"]["x"]["strategies"]["swap-gated"]
    assert value["cost_total"]["mean"] == -5000 and value["worth"] == "not_worth_it"


def test_only_one_risk_is_mitigated_and_its_cost_counts(tiny):
    side = counterpart(load_scenario(two_slips(tiny, costs=True)), "pre")
    alone = side.only("late-docs")
    by_id = {risk.id: risk for risk in alone.risks}
    assert by_id["late-docs"].probability == 0 and by_id["late-ship"].probability == 1
    assert by_id["late-docs"].mitigation_applied and not by_id["late-ship"].mitigation_applied
    plan = compile_scenario(alone)
    assert sorted(plan.lump_amount[plan.lump_amount > 0]) == [200_000]
    assert compile_scenario(select_risks(load_scenario(two_slips(tiny, costs=True)),
                                         "pre")).lump_amount.max() == 0


def test_reduction_and_p90_change_against_numpy():
    rng = np.random.default_rng(3)
    pre = rng.gamma(2.0, 10.0, 2000)
    lower = pre - rng.uniform(0, 10, 2000)                   # always lower by up to 10
    d = reduction(pre, lower)
    assert d["mean"] == pytest.approx((pre - lower).mean(), rel=1e-12)
    assert d["p90_pre"] == np.quantile(pre, 0.9)
    assert d["p90_mitigated"] == np.quantile(lower, 0.9)
    assert d["p90_reduction"] == np.quantile(pre, 0.9) - np.quantile(lower, 0.9)
    assert d["p90_change"] == "lower" and d["verdict"] == "helps"
    assert p90_change(lower, pre) == "higher"
    assert p90_change(pre, pre.copy()) == "unchanged"
    nudged = pre.copy()
    nudged[np.argsort(pre)[1800]] += 1e-9                    # one world, a hair: noise
    assert p90_change(pre, nudged) == "within_noise"


def test_worth_it_only_beyond_noise():
    def total(diff):
        return reduction(np.asarray(diff, float), np.zeros(len(diff)))

    assert worth(total([1e5, 2e5, 3e5, 2e5])) == "worth_it"
    assert worth(total([-1e5, -2e5, -3e5, -2e5])) == "not_worth_it"
    assert worth(total([1e5, -1e5] * 50)) == "within_noise"
    assert worth(total([0.0] * 10)) == "within_noise"
    assert worth(total([5e5])) == "within_noise"             # one world: no interval


def test_risk_value_with_costs_from_hand_made_arrays():
    n = 200
    rng = np.random.default_rng(8)
    pre, mitigated = np.zeros((n, 1, len(METRICS))), np.zeros((n, 1, len(METRICS)))
    pre[:, 0, METRICS.index("shortfall_gpu_days")] = rng.uniform(1000, 2000, n)
    costs_pre, costs_mitigated = np.zeros((n, 1, N_COSTS)), np.zeros((n, 1, N_COSTS))
    costs_pre[:, 0, COST["cost_total"]] = rng.uniform(1e6, 2e6, n)
    own = rng.uniform(1e4, 3e4, n)                          # a drawn mitigation cost
    costs_mitigated[:, 0, COST["cost_mitigation"]] = own
    costs_mitigated[:, 0, COST["cost_total"]] = costs_pre[:, 0, COST["cost_total"]] * 0.9 + own
    value = risk_value(pre, mitigated, costs_pre, costs_mitigated, ["s"])["s"]
    saved = costs_pre[:, 0, 0] - costs_mitigated[:, 0, 0]
    assert value["cost_total"]["mean"] == pytest.approx(saved.mean(), rel=1e-12)
    assert value["mitigation_cost"]["mean"] == pytest.approx(own.mean(), rel=1e-12)
    assert value["mitigation_cost"]["p90"] == pytest.approx(np.quantile(own, 0.9), rel=1e-12)
    assert value["worth"] == "worth_it"
    assert value["shortfall_gpu_days"]["p90_change"] == "lower"
    assert risk_value(pre, mitigated, None, None, ["s"])["s"].keys() == {
        "trough_depth", "shortfall_gpu_days"}


def test_each_risk_counts_in_the_memory_check(tiny):
    plan = compile_scenario(select_risks(load_scenario(two_slips(tiny)), "pre"))
    from mcrisk.backends.chunks import memory_needed
    run, other = memory_needed(plan, 1000, 1000), memory_needed(plan, 1000, 1000, False, 0)
    room = int((run + 1.5 * other) / 0.9)                  # one more side fits, two do not
    assert fits_in_memory(plan, plan, 1000, 1000, available=room) is None
    assert fits_in_memory(plan, plan, 1000, 1000, available=room, sides=2).startswith(
        "not computed: simulating the other side of the register (and each risk mitigated")


def test_compare_prints_the_value_of_each_mitigation_for_a_and_b(tiny, capsys):
    assert cli.main(["compare", str(two_slips(tiny)), "swap-on-day", "swap-gated",
                     "--samples", "40", "--backend", "numpy", "--risks", "pre",
                     "--quiet"]) == 0
    out = capsys.readouterr().out
    section = out[out.index("value of each mitigation"):]
    ship = section[section.index("  late-ship"):section.index("  late-docs")]
    row = next(line for line in ship.splitlines() if line.strip().startswith("swap-on-day"))
    assert "7,680 [7,680, 7,680] helps" in row and "256 to 256 same" in row


def test_report_and_summary_md_show_the_value_of_each_mitigation(tiny, tmp_path):
    path = two_slips(tiny, costs=True)
    run_scenario(str(path), samples=40, backend="numpy", risks="pre", out_dir=tmp_path / "r")
    page = (tmp_path / "r" / "report.html").read_text()
    section = page[page.index("id='each-mitigation'"):]
    assert ("Mitigating late-ship alone (its own cost included) is worth it for swap-on-day; "
            "not worth it for swap-gated.") in section
    assert ("Mitigating late-docs alone (its own cost included) is not worth it for "
            "swap-on-day and swap-gated.") in section
    # the cells as read (their parts are spans that a narrow table wraps between, issue 26)
    cells = [re.sub(r"<[^>]+>", "", c) for c in re.findall(r"<td class='n'>(.*?)</td>", section)]
    assert "$269k [$269k, $269k]" in cells and "worth it" in cells
    # the table's long form is report.html's (summary.md, short since issue 26, points to it)
    # the P90 total: 57 days of shortfall at $12,288 a day before (700,416); 47 days and the
    # mitigation's $200k after (777,536)
    text = page_text(tmp_path / "r" / "report.html")
    assert ("late-docs swap-on-day 256 to 256 same 2,560 [2,560, 2,560] helps "
            "-$77.1k [-$77.1k, -$77.1k] $700k to $778k higher $200k not worth it") in text
    assert "mitigations" in md_flat((tmp_path / "r" / "summary.md").read_text())


def test_without_costs_the_sentences_speak_of_the_trough(tiny, tmp_path):
    run_scenario(str(two_slips(tiny)), samples=40, backend="numpy", risks="pre",
                 out_dir=tmp_path / "r")
    md = (tmp_path / "r" / "summary.md").read_text()
    page = page_text(tmp_path / "r" / "report.html")
    assert ("Mitigating late-ship alone lowers the mean shortfall of swap-on-day." in page)
    assert "it costs" not in md and "$" not in md
