"""`mcrisk optimize`'s outputs (issue 14): optimize.json against its schema, the terminal
table and report.html (no claim within noise), strategies.toml accepted by `mcrisk run`, the
command's bad input (exit 2, located) and its atomic writes.

The writers are checked on a hand-built document whose verdicts are known (a difference whose
interval lies below 0, one that holds 0); the command end to end on the known-optimum search
of tests/data (tests/optimize/test_known.py checks what it finds), with few scenarios.
"""
from __future__ import annotations

import contextlib
import hashlib
import html
import io
import json
import re
import shutil

import jsonschema
import pytest

from mcrisk.cli import main
from mcrisk.cli.optimize_text import format_optimize
from mcrisk.core.progress import Phase, Progress
from mcrisk.report.html.optimize import render_optimize_report, statistic_label, verdict_text
from mcrisk.schema import optimize_schema
from ..helpers import DATA, ROOT

SHA = "ab" * 32


def _plan(name, rank=None, written=False, value=10.0, ci=(9.0, 11.0), against=None,
          constraint="met"):
    plan = {"name": name, "written": written, "crews": 2,
            "knobs": [] if written else [{"knob": "drain E1..E2", "value": "on_arrival:S1 + 7 d"},
                                         {"knob": "wave N1..N2", "value": "B1"}],
            "objective": {"value": value, "ci": list(ci)},
            "statistics": {"mean:cost_total": {"value": value, "ci": list(ci)},
                           "p90:trough_depth": {"value": 0.0, "ci": [0.0, 0.0]}},
            "constraints": {"p90:trough_depth": {"verdict": constraint}},
            "feasible": constraint != "violated",
            "against_best_written": against}
    if rank is not None:
        plan["rank"] = rank
    if not written:
        plan["strategy_toml"] = f'[[strategies]]\nname = "{name}"\n'
    return plan


def _against(value, low, high, verdict):
    return {"strategy": "late-drain", "objective": {"value": value, "ci": [low, high]},
            "verdict": verdict}


def hand_built() -> dict:
    """A document with a plan better beyond noise, one within noise, and the written ones."""
    return {
        "format": "mcrisk-optimize/1", "search": "s.toml", "search_sha256": SHA,
        "scenario": "/x/scenario.toml", "scenario_name": "known", "scenario_sha256": SHA,
        "template": "late-drain", "seeds": {"race": 1, "fresh": 2},
        "mcrisk_version": "0.0", "backend": "numpy", "backend_reason": "asked", "rng":
        "philox4x32-10", "created_utc": "2026-01-01T00:00:00+00:00", "wall_seconds": 1.5,
        "objective": {"kind": "minimize", "statistics": ["mean:cost_total"]},
        "constraints": [{"statistic": "p90:trough_depth", "max": 0.0}],
        "space": {"size": 30, "sampled": False, "sampler": None, "max_candidates": 1000,
                  "candidates": 24, "rejected": {"row positions": 6}, "rejected_total": 6},
        "race": {"keep": 0.25, "stages": [
            {"stage": 1, "scenarios": 50, "candidates_in": 24, "candidates_out": 6,
             "infeasible": 10, "seconds": 0.5},
            {"stage": 2, "scenarios": 200, "candidates_in": 6, "candidates_out": 6,
             "infeasible": 0, "seconds": 0.4}]},
        "evaluation": {"seed": 2, "samples": 400, "top": 3, "best_written": "late-drain",
                       "seconds": 0.3},
        "plans": [_plan("plan-1", 1, value=80.0, ci=(79.0, 81.0),
                        against=_against(-20.0, -21.0, -19.0, "better")),
                  _plan("plan-2", 2, value=99.5, ci=(98.0, 101.0),
                        against=_against(-0.5, -1.5, 0.5, "within noise"))],
        "written": [_plan("late-drain", written=True, value=100.0, ci=(99.0, 101.0)),
                    _plan("early<b>", written=True, value=120.0, ci=(119.0, 121.0),
                          against=_against(20.0, 19.0, 21.0, "worse"), constraint="violated")],
        "pareto": []}


def schema_errors(document: dict) -> list[str]:
    validator = jsonschema.Draft202012Validator(optimize_schema())
    return [error.message for error in validator.iter_errors(document)]


def test_schema_is_valid_and_accepts_the_hand_built_document():
    jsonschema.Draft202012Validator.check_schema(optimize_schema())
    assert schema_errors(hand_built()) == []


@pytest.mark.parametrize("case", ["no seeds", "fresh seed negative", "bad sha", "nan-like string",
                                  "unknown verdict", "bad statistic", "missing plans"])
def test_schema_rejects(case):
    document = hand_built()
    if case == "no seeds":
        del document["seeds"]
    elif case == "fresh seed negative":
        document["seeds"]["fresh"] = -1
    elif case == "bad sha":
        document["search_sha256"] = "xyz"
    elif case == "nan-like string":
        document["plans"][0]["objective"]["value"] = "NaN"
    elif case == "unknown verdict":
        document["plans"][0]["constraints"]["p90:trough_depth"]["verdict"] = "fine"
    elif case == "bad statistic":
        document["constraints"][0]["statistic"] = "p95:trough_depth"
    elif case == "missing plans":
        del document["plans"]
    assert schema_errors(document), f"the schema accepted a document with {case}"


def _row(text: str, name: str) -> str:
    """The table's row of plan or strategy `name` (its second cell)."""
    return next(line for line in text.splitlines() if line.split()[1:2] == [name])


def test_terminal_table_claims_only_beyond_noise():
    text = format_optimize(hand_built())
    assert "better" in _row(text, "plan-1") and "-$20 [-$21, -$19]" in _row(text, "plan-1")
    row = _row(text, "plan-2")
    assert "within noise" in row and "better" not in row
    assert "(best written)" in _row(text, "late-drain")
    assert "worse" in _row(text, "early<b>")
    assert "violated: P90 trough depth (H100-eq)" in _row(text, "early<b>")
    assert "stage 1" not in text and "24 in, 10 broke a constraint, 6 kept" in text  # stages
    assert "6 row positions" in text                          # rejected, by reason
    assert "seed 2, not used to choose" in text


def test_terminal_escapes_invisible_characters_of_names():
    document = hand_built()
    document["plans"][0]["name"] = "plan\x1b[31m"
    assert "\x1b" not in format_optimize(document)


def test_report_page_has_the_section_and_escapes_names():
    page = render_optimize_report(hand_built())
    assert "early&lt;b&gt;" in page and "early<b>" not in page
    assert 'id="plans"' in page and 'id="race"' in page and 'id="space"' in page
    assert "plan-2 and late-drain cannot be told apart" in page
    assert "plan-2 is" not in page                    # no claim within noise
    assert "plan-1 is <b>better</b> than late-drain" in page
    assert "[[strategies]]" in page


def test_shares_are_percentages_never_in_exponent_form():
    """A share of 1 printed as '1e+02%' (issue 24, item 8)."""
    from mcrisk.report.html.optimize_words import percent_text, statistic_interval, statistic_value

    assert statistic_value("p:power_violation", 1.0) == "100%"
    assert statistic_interval("p:power_violation", [0.9991, 1.0]) == "[99.9%, 100%]"
    assert [percent_text(s) for s in (0.4567, 0.005, 1e-8, -0.005, 0.99999)] == \
        ["46%", "0.5%", "0.000001%", "-0.5%", "99.999%"]
    document = planner_document()
    plan = document["written"][1]
    plan["statistics"]["p:power_violation"] = {"value": 1.0, "ci": [0.9991, 1.0]}
    text = format_optimize(document) + render_optimize_report(document)
    assert "e+" not in text and "has it in 100% of them" in text


def test_words_of_statistics_and_verdicts():
    assert statistic_label("p:power_violation") == "P(power over cap)"
    assert statistic_label("p90:trough_depth") == "P90 trough depth (H100-eq)"
    assert statistic_label("p90:shortfall_gpu_days") == "P90 shortfall (H100-eq x days)"
    assert statistic_label("mean:cost_total") == "mean total cost"
    assert statistic_label("p:trough_days") == "P(trough days > 0)"
    assert verdict_text(None) == "(best written)"
    assert verdict_text({"verdict": "within noise"}) == "within noise"


# ---- the command end to end, on the known-optimum search of tests/data ----------------------

DATA = DATA
KNOWN_SEARCH = DATA / "optimize-known-search.toml"
KNOWN = DATA / "optimize-known.toml"
OUTPUTS = {"optimize.json", "strategies.toml", "report.html", ".mcrisk-outputs.json"}


@pytest.fixture(scope="module")
def known_run(tmp_path_factory):
    """One `mcrisk optimize` of the known search: (exit code, stdout, output folder)."""
    out = tmp_path_factory.mktemp("known") / "out"
    stdout = io.StringIO()
    with contextlib.redirect_stdout(stdout):
        code = main(["optimize", str(KNOWN_SEARCH), "--out", str(out), "--quiet"])
    return code, stdout.getvalue(), out


def test_the_command_writes_every_file_and_optimize_json_meets_its_schema(known_run):
    code, stdout, out = known_run
    assert code == 0
    assert {p.name for p in out.iterdir()} == OUTPUTS
    document = json.loads((out / "optimize.json").read_text())
    assert schema_errors(document) == []
    # provenance: the hashes are the files' own, the fresh seed is not the race's
    assert document["search_sha256"] == hashlib.sha256(KNOWN_SEARCH.read_bytes()).hexdigest()
    assert document["scenario_sha256"] == hashlib.sha256(KNOWN.read_bytes()).hexdigest()
    assert document["seeds"] == {"race": 1, "fresh": 2}
    assert [s["scenarios"] for s in document["race"]["stages"]] == [50, 200]
    assert document["space"]["size"] == 30                  # 2 triggers x 5 lags x 3 rows
    assert {w["name"] for w in document["written"]} == {"late-drain", "early-drain"}
    # the terminal shows the plans and says where the files went
    for plan in document["plans"]:
        assert plan["name"] in stdout
    assert f"wrote {out / 'optimize.json'}" in stdout and "Traceback" not in stdout
    page = (out / "report.html").read_text()
    assert 'id="race"' in page and document["plans"][0]["name"] in page


def _with_blocks(scenario_text: str, blocks: str, crews: int) -> str:
    """The scenario with strategies.toml appended and its [retrofit] crews set to `crews`."""
    text = re.sub(r"(?m)^crews\s*=\s*\d+", f"crews = {crews}", scenario_text)
    return text + "\n" + blocks


def test_strategies_toml_runs_in_mcrisk_run_with_the_figures_of_optimize_json(known_run,
                                                                              tmp_path):
    """Each plan's block, appended to the scenario as strategies.toml writes it, is a
    strategy `mcrisk run` accepts unchanged; run on the fresh seed and sample count, its
    figures are optimize.json's: the evaluation is what a plain run of the plan reports."""
    _, _, out = known_run
    document = json.loads((out / "optimize.json").read_text())
    blocks = (out / "strategies.toml").read_text()
    plan = document["plans"][0]
    scenario = tmp_path / KNOWN.name
    scenario.write_text(_with_blocks(KNOWN.read_text(), blocks, plan["crews"]))
    evaluation = document["evaluation"]
    assert main(["run", str(scenario), "--samples", str(evaluation["samples"]), "--seed",
                 str(evaluation["seed"]), "--out", str(tmp_path / "run"), "--quiet",
                 "--no-mitigation"]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert [p["name"] for p in document["plans"]] == \
        [name for name in summary["strategies"] if name.startswith("plan-")]
    ran = summary["strategies"][plan["name"]]
    assert ran["trough_depth"]["p90"] == plan["statistics"]["p90:trough_depth"]["value"]
    assert ran["costs"]["cost_total"]["mean"] == \
        pytest.approx(plan["statistics"]["mean:cost_total"]["value"], rel=1e-12)


def test_a_missing_search_file_is_exit_2_naming_it(tmp_path, capsys):
    missing = tmp_path / "nope.toml"
    assert main(["optimize", str(missing), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert str(missing) in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_a_bad_search_file_is_a_located_error_and_writes_nothing(tmp_path, capsys):
    search = tmp_path / "search.toml"
    text = KNOWN_SEARCH.read_text().replace('template = "late-drain"',
                                            'template = "no-such-strategy"')
    search.write_text(text.replace('scenario = "optimize-known.toml"',
                                   f'scenario = "{KNOWN}"'))
    assert main(["optimize", str(search), "--out", str(tmp_path / "out"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{search}:" in err and "template" in err and "no-such-strategy" in err
    assert "Traceback" not in err and not (tmp_path / "out").exists()


def test_an_out_that_is_a_file_is_exit_2_before_anything_runs(tmp_path, capsys, monkeypatch):
    import mcrisk.optimize.run as optimize_run

    monkeypatch.setattr(optimize_run, "_search", _must_not_run)
    out = tmp_path / "a-file"
    out.write_text("mine")
    assert main(["optimize", str(KNOWN_SEARCH), "--out", str(out), "--quiet"]) == 2
    assert "--out" in capsys.readouterr().err and out.read_text() == "mine"


def _must_not_run(*args, **kwargs):
    raise AssertionError("the search ran before the output folder was checked")


def test_ctrl_c_while_writing_leaves_the_previous_files_whole(known_run, tmp_path,
                                                              monkeypatch, capsys):
    """A run stopped after optimize.json and strategies.toml are written, before report.html:
    the output folder keeps the previous run's files byte for byte, and no staging folder or
    temporary file is left beside it."""
    import mcrisk.report.html.optimize as page

    _, _, first = known_run
    out = tmp_path / "out"
    shutil.copytree(first, out)
    before = {p.name: p.read_bytes() for p in out.iterdir()}

    def interrupted(document):
        raise KeyboardInterrupt

    monkeypatch.setattr(page, "render_optimize_report", interrupted)
    assert main(["optimize", str(KNOWN_SEARCH), "--out", str(out), "--quiet"]) == 130
    assert "nothing is half-written" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in out.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_verdict_beyond_the_shown_interval_says_why(tmp_path):
    """The paired test can find a quantile's difference beyond noise where the interval of
    the difference (from the two marginal intervals) still holds 0: the page says so, rather
    than showing 'better' beside an interval that seems to deny it."""
    document = hand_built()
    document["plans"][0]["against_best_written"] = _against(-2.0, -4.0, 0.5, "better")
    page = render_optimize_report(document)
    assert "plan-1 is <b>better</b>" in page and "too wide to show" in page
    assert "too wide" not in render_optimize_report(hand_built())


def _schema_keys(node, found=None) -> set[str]:
    """Every property name the schema defines, at any depth."""
    found = set() if found is None else found
    if isinstance(node, dict):
        found.update(node.get("properties", {}))
        for value in node.values():
            _schema_keys(value, found)
    elif isinstance(node, list):
        for value in node:
            _schema_keys(value, found)
    return found


def test_docs_describe_every_key_of_the_schema():
    """docs/optimize.md names every key optimize.json's schema defines, in backticks: adding
    a key means describing it."""
    docs = (ROOT / "docs" / "optimize.md").read_text()
    missing = sorted(k for k in _schema_keys(optimize_schema()) if f"`{k}`" not in docs)
    assert missing == []


class _Recording(Progress):
    """A Progress that records each phase's name and note, and every note."""

    def __init__(self):
        self.seen = []

    def phase(self, name, total=None, unit="steps", note=""):
        self.seen.append((name, note))
        return Phase()


def test_progress_sees_generate_each_race_stage_evaluate_and_write(tmp_path):
    from mcrisk.optimize.run import run_optimize

    progress = _Recording()
    run_optimize(KNOWN_SEARCH, tmp_path / "out", backend="numpy", progress=progress)
    names = [name for name, _ in progress.seen]
    assert names[:2] == ["compile", "generate"] and names[-1] == "write"
    notes = [note for name, note in progress.seen if name == "simulate"]
    assert [n.split(":")[0] for n in notes] == ["race stage 1 of 2", "race stage 2 of 2",
                                                "evaluate"]


def pareto_document() -> dict:
    """hand_built as a Pareto search: plan-1 dominates late-drain, plan-2 trades with it."""
    document = hand_built()
    document["objective"] = {"kind": "pareto",
                             "statistics": ["mean:cost_total", "p90:trough_depth"]}
    for plan in (*document["plans"], *document["written"]):
        plan["objective"]["ci"] = None
        if plan["against_best_written"]:
            plan["against_best_written"]["objective"] = {"value": None, "ci": None}
    document["plans"][1]["against_best_written"]["verdict"] = "n/a"
    document["pareto"] = ["plan-1", "plan-2"]
    return document


def test_a_pareto_search_shows_each_objective_and_dominance_not_a_difference():
    document = pareto_document()
    assert schema_errors(document) == []
    text = format_optimize(document)
    header = text.splitlines()[text.splitlines().index("") + 1]
    assert "mean total cost [95%]" in header and "P90 trough depth (H100-eq) [95%]" in header
    assert "minus" not in header                          # no difference of a Pareto sum
    assert "Pareto set" in text and "plan-1, plan-2" in text
    page = render_optimize_report(document)
    assert "plan-1 is <b>better</b> than late-drain: no worse on any objective" in page
    assert "plan-2 and late-drain trade" in page
    assert "the noise-aware Pareto set and the best by each objective go on" in page


def test_a_search_that_keeps_no_plan_says_why_everywhere():
    """Every candidate infeasible beyond noise: no plan, no claim, and each output says why
    (strategies.toml too, so an empty file is never mistaken for a failed write)."""
    from mcrisk.optimize.run import strategies_toml_text

    document = hand_built()
    document["plans"] = []
    document["race"]["stages"] = [{"stage": 1, "scenarios": 50, "candidates_in": 24,
                                   "candidates_out": 0, "infeasible": 24, "seconds": 0.1}]
    assert schema_errors(document) == []
    why = "no plan found: every candidate was dropped, 24 of them because a constraint"
    assert why in format_optimize(document)
    blocks = strategies_toml_text(document)
    assert why in blocks and "\n[[strategies]]" not in blocks
    page = render_optimize_report(document)
    assert "No plan found: every candidate was dropped, 24" in page and " is <b>" not in page


def test_validate_reads_a_search_file_as_optimize_would(tmp_path, capsys):
    """`mcrisk validate scenarios/*.toml` (CI runs it) meets the example search file: it is
    read as a search (with the scenario it names), not refused as a scenario without one."""
    assert main(["validate", str(KNOWN_SEARCH), str(KNOWN)]) == 0
    out = capsys.readouterr().out
    assert f"{KNOWN_SEARCH}: ok (search over optimize-known: 30 combinations" in out
    assert f"{KNOWN}: ok (2 strategies" in out
    bad = tmp_path / "search.toml"
    bad.write_text(KNOWN_SEARCH.read_text().replace('template = "late-drain"', 'template = "x"')
                   .replace('scenario = "optimize-known.toml"', f'scenario = "{KNOWN}"'))
    assert main(["validate", str(bad)]) == 2
    err = capsys.readouterr().err
    assert f"{bad}: search.template = 'x': unknown strategy" in err and "Traceback" not in err


# ---- what a planner reads: money, names, a share bounded by 0, a Pareto trade (O5) --------

def planner_document() -> dict:
    """hand_built with the reference's magnitudes: a cost objective in dollars, a P90
    shortfall, and `p:power_violation` at most 0 (plan-1 and late-drain in no scenario,
    early<b> in 2 of the 400)."""
    document = hand_built()
    document["currency"] = "USD"
    document["constraints"].append({"statistic": "p:power_violation", "max": 0.0})
    figures = {"plan-1": (22_785_492.0, (22_715_329.0, 22_855_656.0), 0.0, "met"),
               "plan-2": (23_204_227.0, (23_135_129.0, 23_273_324.0), 0.0, "met"),
               "late-drain": (23_153_772.0, (23_081_004.0, 23_226_541.0), 0.0, "met"),
               "early<b>": (26_806_688.0, (26_671_808.0, 26_941_568.0), 0.005, "violated")}
    for plan in (*document["plans"], *document["written"]):
        cost, ci, share, verdict = figures[plan["name"]]
        plan["objective"] = {"value": cost, "ci": list(ci)}
        plan["statistics"]["mean:cost_total"] = {"value": cost, "ci": list(ci)}
        plan["statistics"]["p:power_violation"] = {
            "value": share, "ci": [0.0, 0.0092] if share == 0 else [0.0006, 0.018]}
        plan["constraints"]["p:power_violation"] = {"verdict": verdict}
    document["plans"][0]["against_best_written"] = _against(-368_280.0, -374_000.0,
                                                            -363_000.0, "better")
    return document


def test_money_is_money_and_statistics_have_the_reports_names():
    """A cost reads as $22.8M [$22.7M, $22.9M] (results.compare.money_text), not
    22,785,492 [22,715,329, 22,855,656]; the difference as -$368k; headers in words."""
    document = planner_document()
    assert schema_errors(document) == []
    text = format_optimize(document)
    row = _row(text, "plan-1")
    assert "$22.8M [$22.7M, $22.9M]" in row and "-$368k [-$374k, -$363k]" in row
    assert "22,785,492" not in text and "cost_total" not in text
    header = text.splitlines()[text.splitlines().index("") + 1]
    assert "mean total cost [95%]" in header and "plan minus late-drain [95%]" in header
    assert "constraints: P90 trough depth (H100-eq) at most 0; power over cap in no scenario" \
        in text
    page = render_optimize_report(document)
    assert "$22.8M" in page and "[$22.7M, $22.9M]" in page and "22,785,492" not in page
    assert "mean total cost: plan minus late-drain" in page
    assert "difference -$368k [-$374k, -$363k]" in page


def test_a_share_bounded_by_zero_says_none_in_the_scenarios_or_who_had_it():
    document = planner_document()
    text = format_optimize(document)
    line = ("Power over cap: none in 400 fresh scenarios for plan-1, plan-2, late-drain; "
            "early<b> has it in 0.5% of them (the constraint: none).")
    assert line in text
    assert "all met" in _row(text, "plan-1") and "within noise" not in _row(text, "plan-1")
    assert "violated: P90 trough depth (H100-eq), P(power over cap)" in _row(text, "early<b>")
    page = render_optimize_report(document)
    assert html.escape(line, quote=False) in page and "in 400 scenarios" in page
    for plan in document["written"][1:]:
        plan["statistics"]["p:power_violation"]["value"] = 0.0
        plan["constraints"]["p:power_violation"]["verdict"] = "met"
    assert ("Power over cap: none in 400 fresh scenarios, for every plan and written "
            "strategy.") in format_optimize(document)


def test_the_output_says_how_sure_each_constraint_is_met():
    """'None in 20,000 scenarios' is not 'never': the terminal and the page bound the
    share at 95% (issue 24, item 1), for a share bounded by 0 and for a quantile."""
    document = planner_document()
    document["evaluation"]["samples"] = 20_000
    for plan in (*document["plans"], *document["written"]):
        plan["constraints"]["p:power_violation"].update(
            scenarios=20_000, over=0 if plan["name"] != "early<b>" else 100,
            over_upper=1.4977e-4 if plan["name"] != "early<b>" else 0.0059, allowed=0.0)
        plan["constraints"]["p90:trough_depth"].update(
            scenarios=20_000, over={"plan-1": 0, "plan-2": 12}.get(plan["name"], 0),
            over_upper={"plan-1": 1.4977e-4, "plan-2": 9.9e-4}.get(plan["name"], 1.4977e-4),
            allowed=0.1)
    assert schema_errors(document) == []
    text = format_optimize(document)
    assert ("early<b> has it in 0.5% of them (the constraint: none). With none in 20,000, "
            "P(power over cap) < 0.00015 at 95% for those without it (an exact one-sided "
            "bound): rarer cannot be ruled out.") in text
    assert ("P90 trough depth (H100-eq) at most 0 allows trough depth above 0 in 10% "
            "of scenarios; of the plans found, they have it in at most 12 of 20,000 fresh "
            "scenarios (plan-2): below 0.099% at 95% (an exact one-sided bound).") in text
    page = html.unescape(render_optimize_report(document))
    assert "P(power over cap) < 0.00015 at 95%" in page and "below 0.099% at 95%" in page


def test_a_pareto_trade_is_called_a_trade_and_the_set_is_explained_in_one_line():
    document = pareto_document()
    text = format_optimize(document)
    assert "trade" in _row(text, "plan-2") and "n/a" not in _row(text, "plan-2")
    lines = [line for line in text.splitlines() if line.startswith("Pareto set:")]
    assert len(lines) == 1 and "plan-1, plan-2" in lines[0]
    document["pareto"] = ["plan-2", "late-drain", "plan-1"]      # listed as the table is
    assert "Pareto set: plan-1, plan-2, late-drain (" in format_optimize(document)
    assert "no other plan or written strategy is lower on one objective beyond noise" in lines[0]
    assert "differences are plan minus" not in text        # a Pareto table shows none
    page = render_optimize_report(document)
    assert '<td class="noise">trade</td>' in page and ">n/a<" not in page
    # each objective's difference beside the verdict, plan minus the best written
    assert "plan-2 and late-drain trade" in page and "mean total cost -$0.50" in page


def test_a_pareto_set_says_how_sure_each_membership_is():
    document = pareto_document()
    document["evaluation"]["resamples"] = 200
    document["pareto_support"] = {"plan-1": 1.0, "plan-2": 0.62, "late-drain": 0.0,
                                  "early<b>": 0.3}
    assert schema_errors(document) == []
    text = format_optimize(document)
    assert ("How sure each membership is (the share of 200 bootstrap resamples of the fresh "
            "scenarios on which it is on the set): plan-1 100%, plan-2 62% (a near-tie: another "
            "seed may leave it out), late-drain 0%, early<b> 30% (a near-tie: another seed may "
            "put it in).") in text
    page = render_optimize_report(document)
    assert "<td>yes (62%)</td>" in page and "<td>no (0%)</td>" in page


def test_a_pareto_set_is_listed_by_its_first_objective():
    """The evaluation orders a Pareto set by the sum of its objectives (dollars plus
    H100-eq days: meaningless to a reader); optimize.json lists and ranks it by its first
    objective, lowest first, the written strategies too; other objectives keep the order."""
    from types import SimpleNamespace

    from mcrisk.optimize.run import shown_order

    def figures(name, shortfall):
        return SimpleNamespace(name=name, statistics={
            "p90:shortfall_gpu_days": SimpleNamespace(value=shortfall)})
    plans = [figures("cheap", 37_000.0), figures("mid", 16_000.0), figures("least", 14_600.0),
             figures("none", None)]
    pareto = SimpleNamespace(kind="pareto", statistics=("p90:shortfall_gpu_days",
                                                        "mean:cost_total"))
    assert [f.name for f in shown_order(pareto, plans)] == ["least", "mid", "cheap", "none"]
    minimize = SimpleNamespace(kind="minimize", statistics=("p90:shortfall_gpu_days",))
    assert [f.name for f in shown_order(minimize, plans)] == ["cheap", "mid", "least", "none"]


def test_the_pages_strategy_blocks_wrap_and_are_strategies_toml_byte_for_byte(known_run):
    """A block's description is one long TOML line: the page wraps it (pre-wrap) instead of
    letting it run out of its box, and the text in the page is strategies.toml's block."""
    code, _, out = known_run
    assert code == 0
    page = (out / "report.html").read_text()
    assert re.search(r"pre\.toml \{[^}]*white-space: pre-wrap", page)
    blocks = [html.unescape(b) for b in re.findall(r'<pre class="toml">(.*?)</pre>', page,
                                                   flags=re.S)]
    toml_text = (out / "strategies.toml").read_text()
    document = json.loads((out / "optimize.json").read_text())
    assert blocks and len(blocks) == len(document["plans"])
    for block, plan in zip(blocks, document["plans"]):
        assert block == plan["strategy_toml"].rstrip("\n") and block in toml_text
    assert document["currency"] == "USD"


def test_the_yardstick_is_said_to_break_a_constraint_when_every_written_one_does():
    """The evaluation pairs against the best written strategy that breaks no constraint, or
    the best of all when every one breaks one: the text must not call it one that meets
    them."""
    document = hand_built()
    assert "among those that break no constraint beyond noise" in format_optimize(document)
    document["written"][0]["feasible"] = False
    document["written"][0]["constraints"]["p90:trough_depth"]["verdict"] = "violated"
    text = format_optimize(document)
    assert "though it breaks a constraint: every written strategy does" in text
    assert "among those that break no constraint" not in text
    assert "every written strategy does" in render_optimize_report(document)
