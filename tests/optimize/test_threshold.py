"""A contingent template's decision threshold as a knob: [search.decision]
(mcrisk/optimize/threshold.py, docs/optimize.md).

Every bad input is one located error; a threshold candidate raced on the race's worlds gives
exactly what `mcrisk run` gives for a scenario file with that threshold written in by hand
(same seed, same scenario indices); its [[strategies]] block reads back as the same strategy;
a threshold whose decision would need the future on the worlds searched is rejected before
the race, exactly those that `mcrisk run` refuses there; and the example search picks the
thresholds a brute-force run of every threshold ranks best.
"""
from __future__ import annotations

import json
import re
import shutil

import numpy as np
import pytest

from mcrisk.app.run import run_scenario
from mcrisk.backends import select_backend
from mcrisk.backends.chunks import simulate
from mcrisk.backends.contingency import AnticipationError
from mcrisk.cli import main
from mcrisk.core.definitions import COST_TOTAL, METRICS
from mcrisk.core.errors import ScenarioError
from mcrisk.core.model import Decision
from mcrisk.optimize.candidates import generate, strategy_toml
from mcrisk.optimize.race import simulate_plans
from mcrisk.optimize.space import read_search
from mcrisk.optimize.threshold import anticipative_decisions, decision_words
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import MINIMAL_TEXT, ROOT
from .test_cli import schema_errors

CONTINGENT = ROOT / "scenarios" / "contingent.toml"
EXAMPLE = ROOT / "scenarios" / "contingent-search.toml"
MET, UNMET = "hybrid-gated-day200", "hybrid-gated-day290"      # keep-if-slow's branches

TINY = MINIMAL_TEXT + """
[[strategies]]
name = "swap-late"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 40 }]

[[strategies]]
name = "contingent"
decision = { day = 35, arrived = "S1", met = "swap-gated", unmet = "swap-late" }

[[strategies]]
name = "on-arrival"
decision = { on_arrival = "S1", accepted = "N1..N2", at_least = 1, met = "swap-gated", unmet = "swap-late" }
"""
SEARCH = '[search]\nscenario = "x.toml"\ntemplate = "{template}"\n{body}\n' \
         '[search.objective]\nminimize = "p90:shortfall_gpu_days"\n'


def read_tiny(tmp_path, template: str, body: str):
    (tmp_path / "x.toml").write_text(TINY)
    path = tmp_path / "search.toml"
    path.write_text(SEARCH.format(template=template, body=body))
    return read_search(path)


@pytest.mark.parametrize("template, body, expected", [
    ("on-arrival", "[search.decision]\ndays = [30, 40]",
     ("search.decision.days = [30, 40]: the decision is taken when shipment S1 arrives, not on a "
      "day: there is no day to search (remove days, or write the template's decision with day = "
      "150 (a day) to search its day)")),
    ("contingent", "[search.decision]\nat_least = [0, 1]",
     ("search.decision.at_least[0] = 0: must be >= 1 (how many of the decision's events must "
      "have happened)")),
    ("contingent", "[search.decision]\nat_least = [1, 2]",
     "search.decision.at_least[1] = 2: must be <= 1 (the decision counts 1 event)"),
    ("on-arrival", "[search.decision]\nat_least = { min = 1, max = 3, step = 1 }",
     "search.decision.at_least.max = 3: must be <= 2 (the decision counts 2 events)"),
    ("contingent", "[search.decision]\nat_least = [1.5]",
     "search.decision.at_least[0] = 1.5: must be a whole number (for example at_least = [4, 8])"),
    ("swap-gated", "[search.decision]\ndays = [30]",
     ("search.decision = {'days': [30]}: the template 'swap-gated' is not contingent: it has no "
      "decision to vary (name a contingent strategy (one with a decision) as the template, or "
      "remove [search.decision])")),
    ("contingent", "[search.decision]\ndays = [30]\n[search.crews]\nvalues = [1]",
     ("search.crews: the template 'contingent' is contingent: the search varies its decision's "
      "threshold ([search.decision]), not a plan (remove crews, or name a branch ('swap-gated' "
      "or 'swap-late') as the template to vary its plan)")),
    ("contingent", ('[search.decision]\ndays = [30]\n[[search.waves]]\nunits = "N1..N2"\n'
                    'rows = ["R3"]'),
     ("search.waves: the template 'contingent' is contingent: the search varies its decision's "
      "threshold ([search.decision]), not a plan (remove waves, or name a branch ('swap-gated' "
      "or 'swap-late') as the template to vary its plan)")),
    ("contingent", "",
     ("search.template = 'contingent': is contingent, and the search has no [search.decision]: "
      "a contingent template's knob is its decision's threshold (add [search.decision] with "
      "days = [120, 150] or at_least = [4, 8], or name a branch ('swap-gated' or 'swap-late') "
      "as the template to vary its plan)")),
    ("contingent", "[search.decision]",
     ("search.decision = {}: gives neither days nor at_least: nothing to vary (add days = "
      "{ min = 120, max = 200, step = 20 } or at_least = [4, 8])")),
    ("contingent", "[search.decision]\ndays = { min = 40, max = 30, step = 5 }",
     "search.decision.days.max = 30: is below min (40) (give max >= min)"),
    ("contingent", "[search.decision]\ndays = { min = 30, max = 40 }",
     ("search.decision.days = {'min': 30, 'max': 40}: gives min < max but no step (add step = "
      "10, say)")),
    ("contingent", "[search.decision]\ndays = { min = 30, max = 40, step = 0 }",
     "search.decision.days.step = 0: must be > 0 (the decision days to try)"),
    ("contingent", "[search.decision]\ndays = -5",
     "search.decision.days = -5: must be >= 0 (the decision days to try)"),
    ("contingent", "[search.decision]\ndays = [30, 30]",
     "search.decision.days = [30, 30]: gives a value twice (list each value once)"),
    ("contingent", '[search.decision]\ndays = "30"',
     ("search.decision.days = '30': must be a number, an array of numbers or { min, max, step }, "
      "not a string (for example days = { min = 120, max = 200, step = 20 })")),
    ("contingent", "[search.decision]\ndays = []",
     ("search.decision.days = []: must be a number, an array of numbers or { min, max, step }, "
      "not an empty array")),
    ("contingent", "[search.decision]\nday = [30]",
     "search.decision.day = [30]: unknown key (did you mean 'days'?)"),
    ("contingent", "[search.decision]\ndays = { min = 0, max = 3000, step = 1 }",
     ("search.decision.days = {'min': 0, 'max': 3000, 'step': 1}: spans 3,001 values, more than "
      "1,000 (take a larger step: each value multiplies the candidates)")),
    ("contingent", "[search.decision]\ndays = [40000]",
     "search.decision.days[0] = 40000: must be <= 36,500"),
])
def test_a_bad_decision_search_is_one_located_error(tmp_path, template, body, expected):
    with pytest.raises(ScenarioError) as info:
        read_tiny(tmp_path, template, body)
    assert f"search.toml: {expected}" in str(info.value)
    assert "Traceback" not in str(info.value)


def test_thresholds_are_every_day_with_every_count(tmp_path):
    """days x at_least, days varying slowest; a knob left out is the template's own; a
    decision taken on an event keeps its moment (day None)."""
    space = read_tiny(tmp_path, "contingent", "[search.decision]\n"
                      "days = { min = 20, max = 40, step = 10 }")
    assert space.decision.thresholds == ((20.0, 1), (30.0, 1), (40.0, 1)) and space.size == 3
    space = read_tiny(tmp_path, "on-arrival", "[search.decision]\nat_least = [2, 1]")
    assert space.decision.thresholds == ((None, 1), (None, 2)) and space.size == 2
    candidates = generate(space).candidates
    # the template (at_least 1) first; at_least 1 again is the same plan, generated once
    assert [c.strategy.decision for c in candidates] == [
        Decision(None, (("accepted", "N1"), ("accepted", "N2")), n, "swap-gated", "swap-late",
                 ("arrival", "S1")) for n in (1, 2)]
    assert [c.knobs[0] for c in candidates] == [
        ("decision", "when shipment S1 arrives: at least 1 of N1 accepted, N2 accepted"),
        ("decision", "when shipment S1 arrives: all of N1 accepted, N2 accepted")]


def test_decision_words_name_the_threshold():
    assert decision_words(Decision(160.0, tuple(("accepted", f"N{i:02d}") for i in
                                                range(1, 17)), 8, "a", "b")) == \
        "on day 160: at least 8 of 16 events (N01 accepted .. N16 accepted)"
    assert decision_words(Decision(150.0, (("energized", "B"),), 1, "a", "b")) == \
        "on day 150: hall B energized"


# ---- the race's metrics against `mcrisk run` on the threshold written by hand -------------

THRESHOLDS = ((140, 4), (170, 12), (200, 8))     # (200, 8): keep-if-slow's own


def keep_if_slow_search(folder, days: str, at_least: str, extra: str = "") -> object:
    shutil.copy(CONTINGENT, folder / "contingent.toml")
    path = folder / "search.toml"
    path.write_text(f'[search]\nscenario = "contingent.toml"\ntemplate = "keep-if-slow"\n'
                    f'[search.decision]\ndays = {days}\nat_least = {at_least}\n'
                    f'[search.objective]\nminimize = "mean:cost_total"\n{extra}')
    return read_search(path)


def written_thresholds(folder, thresholds) -> str:
    """contingent.toml with one contingent strategy per threshold, written by hand."""
    path = folder / "thresholds.toml"
    path.write_text(CONTINGENT.read_text() + "".join(
        f'\n[[strategies]]\nname = "t{day}-{n}"\ndecision = {{ day = {day}, accepted = '
        f'"N01..N16", at_least = {n}, met = "{MET}", unmet = "{UNMET}" }}\n'
        for day, n in thresholds))
    return str(path)


def test_race_metrics_of_a_threshold_are_those_of_mcrisk_run(tmp_path):
    """simulate_plans (each race stage, each evaluation) on the candidates alone, the branches
    added by the race, against a run of the scenario file with each threshold written in:
    the same metrics and costs, bit for bit, on scenarios 0..299 and on 300..499 (a later
    stage's scenarios)."""
    space = keep_if_slow_search(tmp_path, "[140, 170, 200]", "[4, 8, 12]")
    candidates = {(c.strategy.decision.day, c.strategy.decision.at_least): c
                  for c in generate(space).candidates}
    plans = [(candidates[(float(d), n)].strategy, candidates[(float(d), n)].crews)
             for d, n in THRESHOLDS]
    backend = select_backend("numba")
    run = run_scenario(written_thresholds(tmp_path, THRESHOLDS), samples=500, seed=7,
                       backend="numba", mitigation=False, report=False)
    rows = [run.plan.strategy_names.index(f"t{d}-{n}") for d, n in THRESHOLDS]
    for first, samples in ((0, 300), (300, 200)):
        metrics, costs = simulate_plans(space.scenario, plans, backend, 7, first, samples)
        assert metrics.shape == (samples, len(plans), len(METRICS))
        np.testing.assert_array_equal(metrics, run.result.metrics[first:first + samples, rows])
        np.testing.assert_array_equal(costs, run.result.costs[first:first + samples, rows])
    # the thresholds matter: each takes both branches somewhere, and they differ
    met, unmet = (run.plan.strategy_names.index(name) for name in (MET, UNMET))
    total = run.result.costs[:, :, COST_TOTAL]
    for row in rows:
        assert np.any(total[:, row] != total[:, met]) and np.any(total[:, row] != total[:, unmet])
    assert len({float(total[:, row].mean()) for row in rows}) == len(rows)


# ---- writing a candidate back ------------------------------------------------------------

MIXED = """
[[strategies]]
name = "mixed"
decision = { day = 150, energized = "B", accepted = ["N05", "N01..N02"], arrived = "S2..S3", at_least = 2, met = "hybrid-gated", unmet = "hybrid-gated-swing" }

[[strategies]]
name = "on-s3"
decision = { on_arrival = "S3", accepted = "N01..N08", at_least = 6, met = "hybrid-gated", unmet = "hybrid-gated-swing" }
"""


@pytest.mark.parametrize("template, body", [
    ("mixed", "days = [120, 150]\nat_least = { min = 1, max = 6, step = 1 }"),
    ("on-s3", "at_least = [2, 8]"),
    ("keep-if-slow", "days = 170.5"),
])
def test_a_threshold_candidate_written_back_reads_as_the_same_strategy(tmp_path, template,
                                                                      body):
    """strategy_toml's block appended to the scenario: the scenario reader gives the same
    Strategy (its decision, events in their order, and its met branch's plan)."""
    scenario = tmp_path / "contingent.toml"
    scenario.write_text(CONTINGENT.read_text() + MIXED)
    search = tmp_path / "search.toml"
    search.write_text(f'[search]\nscenario = "contingent.toml"\ntemplate = "{template}"\n'
                      f'[search.decision]\n{body}\n'
                      '[search.objective]\nminimize = "mean:cost_total"\n')
    space = read_search(search)
    candidates = generate(space).candidates
    assert len(candidates) == space.size + (template != "mixed")   # the template besides
    blocks = [strategy_toml(c, space.scenario) for c in candidates]
    assert all("decision = {" in block and "place" not in block for block in blocks)
    (tmp_path / "back.toml").write_text(scenario.read_text() + "\n" + "\n".join(blocks))
    back = load_scenario(tmp_path / "back.toml")
    for candidate in candidates:
        assert back.strategy(candidate.name) == candidate.strategy
    decisions = {back.strategy(c.name).decision for c in candidates}
    assert len(decisions) == len(candidates)


# ---- thresholds that would need the future -----------------------------------------------

def test_anticipative_thresholds_are_those_mcrisk_run_refuses(tmp_path):
    """Deciding after day 200, when the met branch drains SU7-SU8, needs the future in the
    worlds where the count is met after day 200 but by the decision: such a threshold is
    rejected before the race, counted as anticipative, exactly when `mcrisk run` of the
    threshold written in refuses it on the race's worlds or the evaluation's. Here day 210
    with 8 racks breaks only on the evaluation's (scenario 261 of seed 9), with 12 on both."""
    thresholds = [(day, n) for day in (200, 210) for n in (8, 12)]
    space = keep_if_slow_search(tmp_path, "[200, 210]", "[8, 12]",
                                "[search.race]\nscenarios = [150]\n"
                                "[search.evaluate]\nsamples = 300\nseed = 9\n")
    backend = select_backend("numba")
    unsafe = anticipative_decisions(space, space.scenario, backend)
    refused = {1: set(), 9: set()}
    for day, n in thresholds:
        plan = compile_scenario(load_scenario(written_thresholds(tmp_path, [(day, n)])))
        for seed, samples in ((1, 150), (9, 300)):
            try:
                simulate(plan, samples, seed, backend)
            except AnticipationError:
                refused[seed].add((day, n))
    assert refused == {1: {(210, 12)}, 9: {(210, 8), (210, 12)}}
    assert {(d.day, d.at_least) for d in unsafe} == refused[1] | refused[9]
    generated = generate(space, anticipative=unsafe)
    assert generated.rejected["anticipative"] == 2
    assert {(c.strategy.decision.day, c.strategy.decision.at_least)
            for c in generated.candidates} == {(200, 8), (200, 12)}


# ---- the example, end to end -------------------------------------------------------------

def test_the_example_search_picks_the_thresholds_a_brute_force_ranks_best(tmp_path, capsys):
    """scenarios/contingent-search.toml without its constraint, one race stage of 300 worlds
    that keeps every plan: the two plans evaluated are the two thresholds with the lowest
    mean completion day on those worlds, computed here from a run of every threshold written
    in by hand; the terminal names each plan's threshold in words, and strategies.toml's
    blocks run as written."""
    text = EXAMPLE.read_text()
    for old, new in (('scenario = "contingent.toml"', f'scenario = "{CONTINGENT.as_posix()}"'),
                     ('"p:trough_depth" = { max = 0.15 }', ""),
                     ("scenarios = [500, 2000]", "scenarios = [300]"), ("keep = 0.5", "keep = 1"),
                     ("samples = 4000", "samples = 300"), ("top = 3", "top = 2")):
        assert text.count(old) == 1, f"the example changed: {old!r}"
        text = text.replace(old, new)
    search = tmp_path / "search.toml"
    search.write_text(text)
    out = tmp_path / "out"
    assert main(["optimize", str(search), "--out", str(out), "--backend", "numba"]) == 0
    printed = capsys.readouterr().out
    document = json.loads((out / "optimize.json").read_text())
    assert schema_errors(document) == []
    assert document["space"]["size"] == 20 and document["space"]["candidates"] == 20
    chosen = set()
    for plan in document["plans"]:
        words = {k["knob"]: k["value"] for k in plan["knobs"]}["decision"]
        day, n = re.fullmatch(r"on day (\d+): at least (\d+) of 16 events \(N01 "
                              r"accepted \.\. N16 accepted\)", words).groups()
        chosen.add((int(day), int(n)))
        assert f"{plan['name']}: decision = {words}; crews = 1" in printed
        assert f"decision = {words}; crews = 1" in (out / "report.html").read_text()
    thresholds = [(day, n) for day in range(120, 201, 20) for n in (4, 8, 12, 16)]
    run = run_scenario(written_thresholds(tmp_path, thresholds), samples=300, seed=1,
                       backend="numba", mitigation=False, report=False)
    completion = METRICS.index("completion_day")
    mean = {t: float(run.result.metrics[:, run.plan.strategy_names.index(f"t{t[0]}-{t[1]}"),
                                        completion].mean()) for t in thresholds}
    assert len(chosen) == 2
    assert max(mean[t] for t in chosen) <= min(mean[t] for t in set(thresholds) - chosen)
    assert max(mean.values()) > max(mean[t] for t in chosen)        # a choice was made
    # the blocks, appended to the scenario, run
    (tmp_path / "with-plans.toml").write_text(
        CONTINGENT.read_text() + "\n" + (out / "strategies.toml").read_text())
    back = load_scenario(tmp_path / "with-plans.toml")
    for plan in document["plans"]:
        assert back.strategy(plan["name"]).decision.met == MET
