"""Sanity checks with numbers (issue 28, 3a and 4; mcrisk/scenario/sanity.py): a hall over its
cap at day 0 is an error with the likely unit slip; an unbounded lognormal with more than
0.1% of its draws past the horizon, and a job class no island can hold, are warnings that
`mcrisk validate` and `mcrisk run` print."""
from __future__ import annotations

import pytest

from mcrisk.cli import main
from mcrisk.scenario import load_scenario, scenario_warnings

from ..helpers import MINIMAL_TEXT, SCENARIOS, load_text, problems, variant

pytestmark = pytest.mark.usefixtures("in_tmp")


def test_a_cap_typed_in_megawatts_is_an_error_with_the_numbers():
    assert problems(variant(("power_cap_kw = 500", "power_cap_kw = 0.5"), text=MINIMAL_TEXT)) == [
        "x.toml: halls[0].power_cap_kw = 0.5: hall H draws 163.2 kW at day 0 (its 2 existing "
        "units), 326.4 x its cap (power_cap_kw is in kW: if 0.5 was meant in MW, write 500)"]
    found = problems(variant(("power_cap_kw = 500", "power_cap_kw = 0.1"), text=MINIMAL_TEXT))
    assert found[0].endswith("(raise power_cap_kw to the hall's real cap, or check power_kw "
                             "of the units' types)")
    assert scenario_warnings(load_text(variant(("power_cap_kw = 500", "power_cap_kw = 163.2"),
                                               text=MINIMAL_TEXT))) == []
    # over the cap by less than 100x: a plan the run measures, with a warning
    [warning] = scenario_warnings(load_text(variant(("power_cap_kw = 500", "power_cap_kw = 100"),
                                                    text=MINIMAL_TEXT)))
    assert warning.startswith("x.toml: halls[0].power_cap_kw = 100: hall H draws 163.2 kW at "
                              "day 0 (its 2 existing units), 1.632 x its cap; the run measures")


DELAY = 'delay = { dist = "triangular", min = 0, mode = 3, max = 10 }'


def test_a_lognormal_past_the_horizon_is_a_warning_that_max_silences():
    late = variant((DELAY, 'delay = { dist = "lognormal", median = 60, p90 = 150 }'),
                   text=MINIMAL_TEXT)
    [warning] = scenario_warnings(load_text(late))
    assert warning.startswith("x.toml: shipments[0].arrival.delay: 7.26% of this lognormal's "
                              "draws put day 30 + the draw past the horizon (day 200)")
    assert warning.endswith("cap it: add max = 170 (or any max) to the distribution")
    assert scenario_warnings(load_text(late.replace("p90 = 150", "p90 = 150, max = 170"))) == []
    near = late.replace("median = 60, p90 = 150", "median = 5, p90 = 20")   # under 0.1%: quiet
    assert scenario_warnings(load_text(near)) == []


def test_the_reference_warns_about_its_fabric_slip():
    [warning] = scenario_warnings(load_scenario(SCENARIOS / "reference-2048.toml"))
    assert "islands[1].delivery.delay: 0.35%" in warning
    assert scenario_warnings(load_scenario(SCENARIOS / "bounded.toml")) == []
    assert scenario_warnings(load_scenario(SCENARIOS / "minimal.toml")) == []


def test_a_job_no_island_can_hold_is_a_warning_with_the_numbers():
    big = variant(("largest_job = 64", "largest_job = 400"), text=MINIMAL_TEXT)
    [warning] = scenario_warnings(load_text(big))
    assert warning == (
        "x.toml: demand.largest_job: the largest job needs 400 H100-eq on one island, more "
        "than any island can ever hold (the largest, ib-new, reaches 360 H100-eq with all its "
        "units): it is never placed and counts as homeless all the time; check its size, or "
        "the units' gpus and h100_eq_per_gpu")
    assert scenario_warnings(load_text(variant(("largest_job = 64", "largest_job = 360"),
                                               text=MINIMAL_TEXT))) == []


def test_validate_and_run_print_the_warnings(capsys, tmp_path):
    late = variant((DELAY, 'delay = { dist = "lognormal", median = 60, p90 = 150 }'),
                   text=MINIMAL_TEXT)
    (tmp_path / "x.toml").write_text(late)
    assert main(["validate", "x.toml"]) == 0
    printed = capsys.readouterr()
    assert "x.toml: ok" in printed.out
    assert printed.err.startswith("warning: x.toml: shipments[0].arrival.delay: 7.26%")
    main(["run", "x.toml", "--samples", "200", "--backend", "numpy", "--quiet",
          "--out", str(tmp_path / "out")])
    assert "warning: x.toml: shipments[0].arrival.delay: 7.26%" in capsys.readouterr().err


def test_a_run_records_its_warnings_in_summary_json(tmp_path):
    # the reference's xdr delivery delay puts 0.35% of its draws past the horizon: printed
    # on stderr and recorded, word for word, in summary.json (and none without a warning)
    from mcrisk.app.run import run_scenario
    from mcrisk.scenario import load_scenario, scenario_warnings
    from ..helpers import REFERENCE, schema_errors

    warned = run_scenario(REFERENCE, samples=200, seed=1, backend="numpy", report=False,
                          mitigation=False).summary
    assert warned["warnings"] == scenario_warnings(load_scenario(REFERENCE))
    assert any("islands[1].delivery.delay" in w for w in warned["warnings"])
    assert schema_errors(warned) == []
    broken = dict(warned, warnings=[""])
    assert schema_errors(broken)
    from ..conftest import MINIMAL
    assert not scenario_warnings(load_scenario(MINIMAL))
    quiet = run_scenario(MINIMAL, samples=200, seed=1, backend="numpy", report=False,
                         mitigation=False).summary
    assert "warnings" not in quiet
