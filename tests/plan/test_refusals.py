"""Facts the scenario cannot produce are refused where they are, not with a traceback: each
through the CLI (`mcrisk validate` and `mcrisk run ... --status`), exit 2 with nothing run
and one line naming the status file, the key and a fix (docs/status.md, "What is checked").
"""
from __future__ import annotations

import pytest

from mcrisk.cli import main

from ..helpers import REFERENCE, SCENARIOS

SERIES = SCENARIOS / "reference-2048-status"
DAY210 = (SERIES / "day210.toml").read_text()

# A status on the reference at day 150 with N01 installed in row A1 (the story's facts,
# tests/statuses.py): the strategies that place other racks in A1 cannot take it.
N01_IN_A1 = """[status]
as_of = 150

[shipments.S1]
arrived = 102

[units.SU1]
drained = 102
removed = 108

[units.SU2]
drained = 102
removed = 110

[rows.A1]
retrofit_started = 108
retrofit_done = 134

[units.N01]
installed = { row = "A1", start = 134, end = 140 }
"""

# validate enables every risk: S3's arrival then needs allocation-cut settled
SETTLED = "\n[risks.allocation-cut]\noccurred = false\n"

CASES = {
    # S1 is promised for day 75 and its delays are lognormal: it cannot arrive on day 60
    "early-arrival": ("[status]\nas_of = 100\n\n[shipments.S1]\narrived = 60\n" + SETTLED,
                      "shipments.S1.arrived = 60", "check the day"),
    # N01's single attempt lasting 29.5 days, beyond the type's attempt_days
    "long-burn-in": (DAY210.replace(
        "burn_in = [{ start = 175.5, end = 180.5, passed = true }]\naccepted = 180.5",
        "burn_in = [{ start = 175.5, end = 205, passed = true }]\naccepted = 205"),
        "units.N01.burn_in[0]", "widen the distribution"),
    "row-taken": (N01_IN_A1 + SETTLED, "units.N01.installed.row = 'A1'", "place them elsewhere"),
}


@pytest.mark.parametrize("command", ["validate", "run"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_an_impossible_fact_is_one_located_line(tmp_path, capsys, case, command):
    text, key, fix = CASES[case]
    status = tmp_path / f"{case}.toml"
    status.write_text(text)
    out = tmp_path / "out"
    argv = ([command, str(REFERENCE), "--status", str(status)]
            + (["--out", str(out), "--samples", "200", "--backend", "numpy"]
               if command == "run" else []))
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err and all(line.startswith(f"{status}:") for line in err), err
    assert any(key in line and fix in line for line in err), err
    assert "Traceback" not in "\n".join(err)
    assert not out.exists()


def test_only_the_strategies_that_cannot_take_an_installed_unit_are_named(tmp_path, capsys):
    status = tmp_path / "n01.toml"
    status.write_text(N01_IN_A1 + SETTLED)
    assert main(["validate", str(REFERENCE), "--status", str(status)]) == 2
    err = capsys.readouterr().err
    named = {s for s in ("big-bang", "rolling-on-delivery", "swing-gated",
                         "hybrid-on-delivery", "hybrid-gated") if f"strategy '{s}'" in err}
    assert named == {"swing-gated", "hybrid-on-delivery", "hybrid-gated"}, err
