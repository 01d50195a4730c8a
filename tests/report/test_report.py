"""report.html and summary.md (mcrisk.report): self-contained, escaped, numbers from the run."""
from __future__ import annotations

import json
import re

import pytest

from mcrisk.cli import main
from mcrisk.core.outputs import MANIFEST_FILE
from mcrisk.report.findings.sentences import fmt
from ..helpers import svg_panels, svg_root, svg_texts, ROOT, md_flat, page_text

SCENARIOS = ROOT / "scenarios"
MINIMAL = SCENARIOS / "minimal.toml"
EVIL_NAME = "<script>alert(1)</script>"
EVIL_DESCRIPTION = "<img src=x onerror=alert(2)> & drain \"on\" day"


@pytest.fixture(scope="module")
def minimal_out(tmp_path_factory):
    out = tmp_path_factory.mktemp("report") / "out"
    assert main(["run", str(MINIMAL), "--samples", "800", "--seed", "2", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    return out


@pytest.mark.slow
def test_run_writes_and_prints_every_output(tmp_path, capsys):
    out = tmp_path / "o"
    assert main(["run", str(MINIMAL), "--samples", "200", "--out", str(out), "--quiet"]) == 0
    printed = capsys.readouterr().out
    for name in ("summary.json", "metrics.parquet", "capacity_bands.parquet", "report.html",
                 "summary.md"):
        assert (out / name).is_file()
        assert f"wrote {out / name}" in printed
    hidden = [p.name for p in out.iterdir() if p.name.startswith(".")]
    assert hidden == [MANIFEST_FILE]                  # the run's list of files; no temp files


def test_report_is_self_contained(minimal_out):
    page = (minimal_out / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    assert "<script" not in page and "<link" not in page
    assert not re.search(r"url\((?!#)", page)      # only the figures' own clip paths
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "<img" not in page                              # the figures are inline SVG
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert len(charts) == 6
    for chart in charts:
        root = svg_root(chart)                             # well-formed, an image, labelled
        assert int(root.get("height")) > 200 and int(root.get("width")) > 800
        assert svg_panels(root) and svg_texts(root, "title")


def test_report_holds_the_sections_and_the_run_numbers(minimal_out):
    page = (minimal_out / "report.html").read_text()
    summary = json.loads((minimal_out / "summary.json").read_text())
    for heading in ("Findings", "Ranking", "Capacity over time", "Trough", "Completion",
                    "Homeless time of the largest job", "Power check per hall", "Provenance"):
        assert heading in page
    for value in (summary["scenario_sha256"], summary["rng"], summary["mcrisk_version"],
                  summary["scenario"], "800"):
        assert value in page
    # ranking rows in ranking order, each with its P90 and its CI
    positions = [page.index(f"</span>{name}</td>") for name in summary["ranking"]]
    assert positions == sorted(positions)
    drain = summary["strategies"]["drain-on-day"]["shortfall_gpu_days"]
    assert f"<b>{fmt(drain['p90'])}</b>" in page
    assert f"[{fmt(drain['p90_ci'][0])}, {fmt(drain['p90_ci'][1])}]" in page


def test_findings_say_who_wins_and_what_the_others_lose(minimal_out):
    summary = json.loads((minimal_out / "summary.json").read_text())
    md = md_flat((minimal_out / "summary.md").read_text())
    page = page_text(minimal_out / "report.html")      # every finding; summary.md opens three
    drain = summary["strategies"]["drain-on-day"]
    # minimal.toml: swap-gated never dips; drain-on-day drains both pods on day 30
    assert summary["ranking"][0] == "swap-gated"
    # counted from the per-scenario metrics (tests/report/test_findings.py checks the sentences)
    assert ("swap-gated ranks first. It never dips below the 128 H100-eq baseline within the "
            "200-day horizon in any of the 800 sampled scenarios.") in md
    assert "drain-on-day (rank 2" in md and "at P90 for" not in md
    assert drain["trough_depth"]["p90"] == 128
    assert "fixed date (day 30)" in page
    assert "No strategy exceeds a hall's power cap" in page


def test_summary_md_has_the_ranking_table(minimal_out):
    md = (minimal_out / "summary.md").read_text()
    summary = json.loads((minimal_out / "summary.json").read_text())
    rows = [line for line in md.splitlines() if re.match(r"\| \d+=? \|", line)]
    assert [row.split("|")[2].strip() for row in rows] == summary["ranking"]


@pytest.mark.slow
def test_scenario_strings_are_escaped(tmp_path):
    text = MINIMAL.read_text()
    text = text.replace('name = "swap-gated"', f'name = "{EVIL_NAME}"', 1)
    text = text.replace('description = "Both racks', 'description = "'
                        + EVIL_DESCRIPTION.replace('"', '\\"') + ' Both racks', 1)
    text = text.replace('description = "2 H100 pods', 'description = "<b>bold</b> 2 H100 pods', 1)
    scenario = tmp_path / "evil.toml"
    scenario.write_text(text)
    out = tmp_path / "out"
    assert main(["run", str(scenario), "--samples", "200", "--out", str(out), "--quiet"]) == 0
    page = (out / "report.html").read_text()
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script" not in page
    assert "<img src=x" not in page and "&lt;img src=x onerror=alert(2)&gt; &amp; drain" in page
    assert "<b>bold</b>" not in page
    md = (out / "summary.md").read_text()
    assert "<script>" not in md and "&lt;script&gt;" in md
