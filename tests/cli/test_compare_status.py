"""`mcrisk compare --status` says which status it ran with and which days the differences
count: with a status they count [as_of, horizon), and the table alone did not say so."""
from __future__ import annotations

import hashlib

from mcrisk.cli import main

from ..helpers import ROOT

REFERENCE = ROOT / "scenarios" / "reference-2048.toml"
DAY150 = REFERENCE.parent / "reference-2048-status" / "day150.toml"


def test_compare_with_a_status_names_it_and_the_days_it_counts(capsys):
    assert main(["compare", str(REFERENCE), "hybrid-gated", "big-bang", "--status", str(DAY150),
                 "--samples", "100", "--backend", "cpu", "--quiet"]) == 0
    out = capsys.readouterr().out
    sha = hashlib.sha256(DAY150.read_bytes()).hexdigest()[:12]
    assert (f"status as of day 150, from {DAY150} (sha256 {sha}): every difference below "
            "counts days 150 to 540 (the horizon), what is still at risk; completion days "
            "still count from day 0") in out


def test_compare_without_a_status_says_nothing_of_one(capsys):
    assert main(["compare", str(REFERENCE), "hybrid-gated", "big-bang", "--samples", "100",
                 "--backend", "cpu", "--quiet"]) == 0
    assert "status as of" not in capsys.readouterr().out
