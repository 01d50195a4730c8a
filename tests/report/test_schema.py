"""summary.json against its shipped JSON Schema (mcrisk/schema/summary.schema.json).

Real runs write the documents (the minimal scenario, the reference, a --precision run, a
2-scenario run whose P90 intervals cannot be computed, and a 1-scenario run without an interval
of the paired mean either); each must be strict JSON and valid. The
schema must also reject what the contract forbids, so that these checks can fail.
"""
from __future__ import annotations

import copy
import json
import math

import jsonschema
import pytest

from mcrisk.results.precision import PrecisionTarget
from mcrisk.app.run import run_scenario
from mcrisk.schema import summary_schema

from ..helpers import MINIMAL, REFERENCE, schema_errors

RUNS = {
    "minimal": dict(path=MINIMAL, samples=300),
    "reference": dict(path=REFERENCE, samples=200),
    "precision": dict(path=MINIMAL, precision=PrecisionTarget(relative=0.05, floor=0.5,
                                                              start=100, max_samples=2_000)),
    "two-samples": dict(path=MINIMAL, samples=2),
    "one-sample": dict(path=MINIMAL, samples=1),
}


def strict_json(text: str):
    """json.loads that refuses NaN and +-Infinity, which are not JSON."""
    def refuse(constant):
        raise ValueError(f"{constant} is not JSON")
    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def documents(tmp_path_factory) -> dict[str, dict]:
    """{run name: summary.json as written}, from real runs of the NumPy backend."""
    out = {}
    for name, spec in RUNS.items():
        spec = dict(spec)
        folder = tmp_path_factory.mktemp(name)
        run_scenario(str(spec.pop("path")), backend="numpy", out_dir=folder, report=False,
                     **spec)
        out[name] = strict_json((folder / "summary.json").read_text())
    return out


def test_schema_is_a_valid_draft_2020_12_schema():
    schema = summary_schema()
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    jsonschema.Draft202012Validator.check_schema(schema)


def test_summary_schema_returns_a_fresh_copy():
    first = summary_schema()
    first["required"].clear()
    assert "strategies" in summary_schema()["required"]


@pytest.mark.parametrize("run", RUNS)
def test_real_summary_is_valid(documents, run):
    assert schema_errors(documents[run]) == []


def test_runs_cover_the_optional_shapes(documents):
    """The documents above exercise the precision block and a null p90_ci with its reason."""
    assert documents["precision"]["precision"]["samples"] >= 100
    metric = documents["two-samples"]["strategies"]["drain-on-day"]["trough_days"]
    assert metric["p90_ci"] is None and metric["p90_ci_unavailable"]
    assert documents["minimal"]["strategies"]["drain-on-day"]["trough_days"]["p90_ci"] is not None
    paired = documents["one-sample"]["paired"]["strategies"]["drain-on-day"]["trough_days"]
    assert paired["mean_ci"] is None and paired["mean_ci_unavailable"]


def _set(document, path, value):
    *parents, last = path
    for key in parents:
        document = document[key]
    if value is DELETE:
        del document[last]
    else:
        document[last] = value


DELETE = object()
METRIC = ("strategies", "drain-on-day", "trough_days")
BROKEN = {
    "NaN statistic": (METRIC + ("p90",), math.nan),
    "infinite statistic": (METRIC + ("mean",), math.inf),
    "NaN in p90_ci": (METRIC + ("p90_ci",), [1.0, math.nan]),
    "p90_ci of one number": (METRIC + ("p90_ci",), [1.0]),
    "null p90_ci without a reason": (METRIC + ("p90_ci",), None),
    "missing p99": (METRIC + ("p99",), DELETE),
    "null paired mean_ci without a reason": (("paired", "strategies", "drain-on-day",
                                              "trough_days", "mean_ci"), None),
    "missing power_violation": (("strategies", "drain-on-day", "power_violation"), DELETE),
    "probability above 1": (("strategies", "drain-on-day", "power_violation", "probability"), 1.5),
    "missing scenario_sha256": (("scenario_sha256",), DELETE),
    "missing rng": (("rng",), DELETE),
    "another generator": (("rng",), "mt19937"),
    "samples as text": (("samples",), "300"),
    "negative seed": (("seed",), -1),
    "no strategies": (("strategies",), {}),
    "rank 0": (("ranks", "drain-on-day", "rank"), 0),
    "ranks without decided_by": (("ranks", "drain-on-day", "decided_by"), DELETE),
    "beyond_horizon probability above 1": (("strategies", "drain-on-day", "beyond_horizon",
                                            "probability"), 1.5),
    "NaN P99 completion": (("strategies", "drain-on-day", "beyond_horizon", "completion_p99"),
                           math.nan),
    "NaN driver correlation": (("drivers", "strategies", "drain-on-day", "trough_days", 0,
                                "spearman"), math.nan),
}


@pytest.mark.parametrize("case", BROKEN)
def test_schema_rejects(documents, case):
    path, value = BROKEN[case]
    document = copy.deepcopy(documents["minimal"])
    _set(document, path, value)
    assert schema_errors(document), f"the schema accepted a summary with {case}"


def test_schema_allows_added_keys(documents):
    """Later versions add keys at the top level and per strategy; readers must not break."""
    document = copy.deepcopy(documents["minimal"])
    document["added_later"] = {"anything": [1, 2]}
    document["strategies"]["drain-on-day"]["milestones"] = {"probability": 0.0}
    assert schema_errors(document) == []


def test_every_key_written_is_described(documents):
    """The schema (and so docs/metrics.md) describes every key a run writes today: adding a
    key to summary.json means describing it in mcrisk/schema/summary.schema.json too."""
    schema = summary_schema()
    strategy = schema["$defs"]["strategy"]["properties"]
    metric = schema["$defs"]["metric_summary"]["properties"]
    for name, document in documents.items():
        assert set(document) <= set(schema["properties"]), name
        for metrics in document["strategies"].values():
            assert set(metrics) <= set(strategy), name
            for key, summary in metrics.items():
                if key == "costs":       # {cost column: a summary like a metric's}
                    assert all(set(s) <= set(metric) for s in summary.values()), (name, key)
                elif key not in ("power_violation", "beyond_horizon"):
                    assert set(summary) <= set(metric), (name, key)
                elif key == "beyond_horizon":
                    described = strategy[key]["properties"]
                    assert set(summary) <= set(described), (name, key)
        for entry in document["ranks"].values():
            assert set(entry) <= set(schema["properties"]["ranks"]["additionalProperties"]
                                     ["properties"]), name
        assert set(document["ranking_rule"]) <= set(
            schema["properties"]["ranking_rule"]["properties"]), name
