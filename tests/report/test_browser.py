"""report.html in a real browser: headless Chromium loads it from disk with no console errors,
every image decodes, and the page renders (a screenshot is kept in the test's tmp folder).

Skips when no Chromium is installed; CI installs Debian's `chromium` (.ci/run).
"""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import matplotlib.image
import pytest

from mcrisk.cli import main
from ..devtools import find_chromium
from ..helpers import ROOT, svg_layout_problems

MINIMAL = ROOT / "scenarios" / "minimal.toml"
# Injected into a test copy only (the report itself has no scripts): counts the images
# that failed to decode, once the page has loaded.
PROBE = ('<script>window.addEventListener("load", () => { const im = [...document.images]; '
         'document.title = "IMAGES:" + im.length + ":BROKEN:" + '
         'im.filter(i => !i.complete || i.naturalWidth === 0).length; });</script>')


CHROMIUM = find_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    CHROMIUM is None, reason="no headless Chromium here (apt-get install chromium; CI has it)")]


def chromium(tmp_path: Path, page: Path, *extra: str) -> subprocess.CompletedProcess:
    profile = tmp_path / f"profile-{len(list(tmp_path.glob('profile-*')))}"
    command = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}",
               "--enable-logging=stderr", "--v=0", *extra, page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(tmp_path)})


def console_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "CONSOLE" in line]


def image_probe(tmp_path: Path, html: str, name: str) -> str:
    probe = tmp_path / name
    probe.write_text(html.replace("</body>", PROBE + "</body>"))
    result = chromium(tmp_path, probe, "--dump-dom")
    match = re.search(r"<title>(IMAGES:\d+:BROKEN:\d+)</title>", result.stdout)
    assert match, f"probe did not run: {result.stdout[:300]!r} {result.stderr[-800:]!r}"
    return match.group(1)


@pytest.fixture(scope="module")
def report(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("browser") / "out"
    assert main(["run", str(MINIMAL), "--samples", "500", "--out", str(out), "--quiet"]) == 0
    return out / "report.html"


def test_report_loads_without_console_errors_and_renders(report, tmp_path):
    shot = tmp_path / "report.png"
    result = chromium(tmp_path, report, f"--screenshot={shot}", "--window-size=1400,3000")
    assert console_lines(result.stderr) == []
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[:2] == (3000, 1400)
    assert pixels.std() > 0.05                      # not a blank page


def test_every_image_decodes_and_every_chart_is_laid_out_clear(report, tmp_path):
    """The figures are inline SVG (no image to decode); each of the six is measured in the
    browser: every text inside its canvas, off the plotting areas and off the others."""
    page = report.read_text()
    result = image_probe(tmp_path, page, "probe.html")
    assert result == "IMAGES:0:BROKEN:0"
    charts = re.findall(r'<svg class="chart".*?</svg>', page, re.S)
    assert len(charts) == 6
    assert svg_layout_problems(charts, tmp_path) == []


def test_the_image_probe_catches_a_broken_image(tmp_path):
    page = ('<!DOCTYPE html><html><head><title>x</title></head><body>'
            '<img src="data:image/png;base64,iVBORw0KGgoAAAAN"></body></html>')
    assert image_probe(tmp_path, page, "broken.html") == "IMAGES:1:BROKEN:1"


def test_the_console_check_catches_an_error(tmp_path):
    page = tmp_path / "noisy.html"
    page.write_text('<!DOCTYPE html><html><body><script>console.error("boom")</script></body></html>')
    assert any('"boom"' in line for line in console_lines(chromium(tmp_path, page, "--dump-dom").stderr))


# ---- the cost section (issue 13): every column on screen --------------------------------------

# Injected into a test copy only: the tables between the cost section's heading and the next
# one, and how many are wider than their box or the page's main column (cut off, or only
# readable by scrolling), once the page has loaded.
COST_TABLES_PROBE = (
    '<script>window.addEventListener("load", () => { const tables = []; '
    'let el = document.getElementById("costs").nextElementSibling; '
    'for (; el && el.tagName !== "H2"; el = el.nextElementSibling) '
    'tables.push(...(el.tagName === "TABLE" ? [el] : el.querySelectorAll("table"))); '
    'const right = document.querySelector("main").getBoundingClientRect().right; '
    'const wide = tables.filter(t => t.parentElement.scrollWidth > t.parentElement.clientWidth '
    '|| t.getBoundingClientRect().right > right + 0.5); '
    'document.title = "TABLES:" + tables.length + ":WIDE:" + wide.length; });</script>')


@pytest.fixture(scope="module")
def priced_report(tmp_path_factory) -> Path:
    """report.html of the reference, which has a [costs] section."""
    reference = MINIMAL.parent / "reference-2048.toml"
    out = tmp_path_factory.mktemp("browser-costs") / "out"
    assert main(["run", str(reference), "--samples", "500", "--out", str(out), "--quiet"]) == 0
    return out / "report.html"


@pytest.mark.parametrize("width", [1400, 1000])
def test_every_cost_table_fits_the_page(priced_report, tmp_path, width):
    """The cost tables (cost beside trough, the components, the Pareto table) fit the page's
    width at a 1,400 and a 1,000 px window: no column cut off or hidden behind a scroll bar
    (one table with every component did not: its shortfall and crews columns were cut)."""
    page = tmp_path / "costs.html"
    page.write_text(priced_report.read_text().replace("</body>", COST_TABLES_PROBE + "</body>"))
    result = chromium(tmp_path, page, f"--window-size={width},3000", "--dump-dom")
    match = re.search(r"<title>(TABLES:\d+:WIDE:\d+)</title>", result.stdout)
    assert match, f"probe did not run: {result.stdout[:300]!r} {result.stderr[-800:]!r}"
    assert match.group(1) == "TABLES:3:WIDE:0"
