"""`mcrisk optimize`'s outputs (issue 14): optimize.json against its schema, the terminal
table and report.html (no claim within noise), strategies.toml accepted by `mcrisk run`, the
command's bad input (exit 2, located) and its atomic writes.

The writers are checked on a hand-built document whose verdicts are known (a difference whose
interval lies below 0, one that holds 0); the command end to end on the known-optimum search
of tests/data (tests/test_optimize_known.py checks what it finds), with few scenarios.
"""
from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from mcrisk.cli.optimize_text import format_optimize
from mcrisk.report.optimize import render_optimize_report, statistic_label, verdict_text
from mcrisk.schema import optimize_schema

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
    assert "better" in _row(text, "plan-1") and "-20 [-21, -19]" in _row(text, "plan-1")
    row = _row(text, "plan-2")
    assert "within noise" in row and "better" not in row
    assert "(best written)" in _row(text, "late-drain")
    assert "worse" in _row(text, "early<b>") and "violated" in _row(text, "early<b>")
    assert "1 -> " not in text and "24 -> 6" in text          # the race's stages
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


def test_words_of_statistics_and_verdicts():
    assert statistic_label("p:power_violation") == "P(power_violation > 0)"
    assert statistic_label("p90:trough_depth") == "P90 trough_depth"
    assert verdict_text(None) == "(best written)"
    assert verdict_text({"verdict": "within noise"}) == "within noise"
