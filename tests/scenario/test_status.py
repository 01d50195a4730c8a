"""The status file (docs/status.md): read as TOML, JSON or a flat CSV export into the same Status,
days or dates, every mistake one problem located by file, line and key with its fix, and the
facts that change the model itself (core.status.with_facts)."""
from __future__ import annotations

import datetime as _dt
import json
import sys

import pytest

from mcrisk.cli import main
from mcrisk.core.errors import ScenarioError
from mcrisk.core.model import Distribution
from mcrisk.core.facts import with_facts
from mcrisk.core.status import Attempt, Status
from mcrisk.scenario import load_scenario, load_status

from ..helpers import REFERENCE, SCENARIOS

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

SERIES = SCENARIOS / "reference-2048-status"


@pytest.fixture(scope="module")
def reference():
    return load_scenario(REFERENCE)


def test_the_example_series_tells_one_story(reference):
    day100, day150, day210 = (load_status(SERIES / f"day{d}.toml", reference)
                              for d in (100, 150, 210))
    assert (day100.as_of, day150.as_of, day210.as_of) == (100.0, 150.0, 210.0)
    assert day100.arrived == () and day100.executing == "hybrid-gated"
    assert dict(day150.arrived) == {"S1": 102.0, "S2": 134.0}
    assert dict(day150.ready) == {"xdr": 131.0} and day150.energized == ()
    assert dict(day210.energized) == {"B": 171.0}
    n03 = day210.unit("N03")
    assert n03.row == "B1" and n03.passed == 201.0 and n03.accepted == 201.0
    assert [a.passed for a in n03.attempts] == [False, False, True]
    assert day210.unit("N11").attempts[-1] == Attempt(205.0)        # running at as_of
    assert day210.unit("N12").attempts[-1] == Attempt(200.0, 205.0, False, None)  # being fixed
    assert (day210.unit("SU5").drained, day210.unit("SU5").removed) == (195.0, 203.0)
    assert day210.unit("SU3").removed is None
    assert len(day210.sha256) == 64


def _rows(document: dict) -> list[list[str]]:
    """A status document as section,id,field,value rows (what a tracking system exports)."""
    rows = [["section", "id", "field", "value"]]

    def walk(section, ident, prefix, value):
        if isinstance(value, dict):
            for key, item in value.items():
                walk(section, ident, f"{prefix}.{key}" if prefix else key, item)
        elif isinstance(value, list):
            for i, item in enumerate(value):
                walk(section, ident, f"{prefix}.{i}", item)
        else:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            rows.append([section, ident, prefix, text])

    for section, body in document.items():
        if section == "status":
            walk("status", "", "", body)
        else:
            for ident, entry in body.items():
                walk(section, ident, "", entry)
    return rows


def test_toml_json_and_csv_give_the_same_status(reference, tmp_path):
    source = SERIES / "day210.toml"
    document = tomllib.loads(source.read_text())
    (tmp_path / "day210.json").write_text(json.dumps(document))
    (tmp_path / "day210.csv").write_text(
        "\n".join(",".join(row) for row in _rows(document)) + "\n")
    expected = load_status(source, reference)
    for name in ("day210.json", "day210.csv"):
        got = load_status(tmp_path / name, reference)
        assert got.__dict__ | {"path": "", "sha256": ""} == \
            expected.__dict__ | {"path": "", "sha256": ""}, name


def test_dates_count_from_the_scenarios_start_date(tiny, tmp_path):
    path = tiny(strategies=_DRAIN_ON_DAY)
    path.write_text(path.read_text().replace('[scenario]\nname = "tiny"',
                                             '[scenario]\nname = "tiny"\nstart_date = 2027-01-04'))
    scenario = load_scenario(path)
    status = tmp_path / "status.toml"
    status.write_text('[status]\nas_of = 2027-02-13\n\n[shipments.S1]\n'
                      'arrived = "2027-01-30"\n\n[units.E1]\ndrained = 20\n')
    got = load_status(status, scenario)
    assert (got.as_of, got.as_of_date) == (40.0, _dt.date(2027, 2, 13))
    assert dict(got.arrived) == {"S1": 26.0} and got.unit("E1").drained == 20.0


_DRAIN_ON_DAY = """
[[strategies]]
name = "swap"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 20 }]
"""

# (text added after [status] as_of = 40, the line and key the problem points to, words of it)
MISTAKES = [
    ("[shipments.S7]\narrived = 10\n", "4: shipments.S7", "no shipment 'S7'"),
    ("[shipments.S1]\narrived = 45\n", "5: shipments.S1.arrived = 45", "after the status date"),
    ("[shipments.S1]\narrived = -3\n", "5: shipments.S1.arrived = -3", "before day 0"),
    ("[shipments.S1]\narrived = 2027-01-30\n", "5: shipments.S1.arrived",
     "no start_date"),
    ("[shipments.S1]\narrived = 10\npromised = 30\n", "6: shipments.S1.promised",
     "this one arrived"),
    ("[units.E1]\nremoved = 30\n", "5: units.E1.removed = 30", "without drained"),
    ("[rows.R1]\nretrofit_done = 30\n", "5: rows.R1.retrofit_done = 30",
     "without retrofit_started"),
    ("[units.E1]\ndrained = 30\nremoved = 25\n", "6: units.E1.removed = 25",
     "before its drain"),
    ("[units.N1]\ndrained = 30\n", "5: units.N1.drained", "does not apply to N1"),
    ("[units.N1]\ninstalled = { row = \"R3\", start = 5, end = 8 }\n",
     "5: units.N1.installed.start", "its shipment S1 has not arrived"),
    ("[shipments.S1]\narrived = 10\n\n[units.N1]\ninstalled = { row = \"R3\", start = 8, "
     "end = 12 }\n", "8: units.N1.installed.start = 8", "before S1's arrival"),
    ("[shipments.S1]\narrived = 10\n\n[units.N1]\ninstalled = { row = \"R9\", start = 12, "
     "end = 14 }\n", "8: units.N1.installed.row = 'R9'", "no such row"),
    ("[shipments.S1]\narrived = 10\n\n[units.N1]\ninstalled = { row = \"R3\", start = 12, "
     "end = 14 }\nburn_in = [\n  { start = 14, end = 17, passed = true },\n"
     "  { start = 18, end = 20, passed = false },\n]\n", "11: units.N1.burn_in[1]",
     "an attempt after one that passed"),
    ("[shipments.S1]\narrived = 10\n\n[units.N1]\ninstalled = { row = \"R3\", start = 12, "
     "end = 14 }\nburn_in = [\n  { start = 14, end = 17, passed = false, rma = true, "
     "repair_end = 18 },\n]\n", "10: units.N1.burn_in[0].rma = True",
     "RMA after 3 failures in a row, and this is failure 1"),
    ("[shipments.S1]\narrived = 10\n\n[units.N1]\ninstalled = { row = \"R3\", start = 12, "
     "end = 14 }\nburn_in = [\n  { start = 14 },\n  { start = 18, end = 20, passed = true },"
     "\n]\n", "10: units.N1.burn_in[0].end", "only the last attempt can still be running"),
    ("[shipments.S1]\narrived = 10\n\n[units.N1]\ninstalled = { row = \"R3\", start = 12, "
     "end = 14 }\naccepted = 16\n", "9: units.N1.accepted = 16", "no burn-in attempt of it"),
    ("[units.E1]\ndrained = 5\n\n[rows.R1]\nretrofit_started = 6\n",
     "8: rows.R1.retrofit_started = 6", "before E1 was removed"),
    ("[risks.none]\noccurred = false\n", "4: risks.none", "no risk 'none'"),
    ("[status]\nexecuting = \"swapp\"\n", "1: status", "dict"),
]


@pytest.mark.parametrize("text, where, words", MISTAKES, ids=[m[1] for m in MISTAKES])
def test_each_mistake_is_one_problem_located_by_line_and_key(tiny, tmp_path, text, where, words):
    scenario = load_scenario(tiny(strategies=_DRAIN_ON_DAY))
    status = tmp_path / "status.toml"
    if text.startswith("[status]"):          # a second [status] table is not TOML at all
        status.write_text("[status]\nas_of = 40\nexecuting = \"swapp\"\n")
        where, words = "3: status.executing = 'swapp'", "did you mean 'swap'?"
    else:
        status.write_text("[status]\nas_of = 40\n\n" + text)
    with pytest.raises(ScenarioError) as caught:
        load_status(status, scenario)
    problems = caught.value.problems
    assert len(problems) == 1, [str(p) for p in problems]
    assert str(problems[0]).startswith(f"{status}:{where}"), str(problems[0])
    assert words in str(problems[0])


def test_a_scenario_given_as_a_status_is_said_in_one_line(tmp_path, capsys):
    assert main(["run", str(REFERENCE), "--status", str(REFERENCE), "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"{REFERENCE}: this is a scenario file, not a status file (give a status "
                   "file (docs/status.md) after --status)"]
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("day", [100, 150, 210])
def test_every_example_status_validates(day, capsys):
    # loaded and compiled with every risk enabled (validate's --risks pre): each fact possible
    # and every group of facts one the conditioning supports, in every strategy
    status = SERIES / f"day{day}.toml"
    assert main(["validate", str(REFERENCE), "--status", str(status)]) == 0, \
        capsys.readouterr().err
    assert capsys.readouterr().out.startswith(f"{status}: ok (as of day {day}")


def test_validate_checks_a_status_against_its_scenario(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text("[status]\nas_of = 600\n")
    assert main(["validate", str(REFERENCE), "--status", str(bad)]) == 2
    assert "is after the horizon, day 540" in capsys.readouterr().err


def test_facts_about_the_model_itself(reference):
    status = Status(path="s.toml", sha256="0" * 64, as_of=100.0, executing="swing-gated",
                    risks=(("cdu-recall", 12.0), ("utility-slip", None)),
                    performance=(("gb300-nvl72", 2.35),), promised=(("S3", 160.0),))
    facts = with_facts(reference, status)
    risks = {r.id: r for r in facts.risks}
    assert risks["cdu-recall"].enabled and risks["cdu-recall"].probability == 1.0
    assert risks["cdu-recall"].impact == Distribution.fixed(12.0)
    assert not risks["utility-slip"].enabled
    assert facts.unit_type("gb300-nvl72").h100_eq_per_gpu == 2.35
    assert next(s for s in facts.shipments if s.id == "S3").arrival.day == 160.0
    assert facts.executing == "swing-gated" and facts.status is status
    assert with_facts(reference, None) is reference
