"""No table of report.html is wider than its box (issue 26): on a 1,280 and a 1,920 px screen
and in print (A4), every column of every table is on the page, none cut off or behind a
scroll bar, and no figure runs past the page's edge. The mitigation table's 'it costs' and
'verdict' columns were behind a scroll bar at 1,280 px; in print, seven tables ran past the
page's right edge, and so did the schedule's Gantt charts (1,100 px wide).

Five reports, each run once (small samples): the reference, reference-2048-full (job mix,
more strategies), the reference with every risk pre-mitigation (the value of mitigation and of
each mitigation, with costs), the reference with a status (realized so far), and the second
night of a nightly history (night over night, the trend). Headless Chromium loads each page
through its DevTools protocol at each width; print emulates CSS media 'print' at the width of
an A4 page's content, so the @media print rules apply as when the page is printed.
"""
from __future__ import annotations

import pytest

from mcrisk.cli import main
from ..devtools import A4_CONTENT_WIDTH, Browser, find_chromium
from ..helpers import SCENARIOS

CHROMIUM = find_chromium()
pytestmark = [pytest.mark.browser, pytest.mark.skipif(
    CHROMIUM is None, reason="no headless Chromium here (apt-get install chromium; CI has it)")]

REFERENCE = SCENARIOS / "reference-2048.toml"
FULL = SCENARIOS / "reference-2048-full.toml"
STATUS = SCENARIOS / "reference-2048-status"
SAMPLES = "300"

# Every table in document order, named by its caption or the heading above it (with its
# number under that heading when there are several), with its width (scrollWidth: all of its
# columns), the width of the box it sits in (clientWidth) and how far its right edge runs past
# the page's main column; and how far each figure (image, SVG chart) runs past it. `print`
# tells that the print rules are in force (main has no max-width only in print).
MEASURE = r"""
(() => {
  const main = document.querySelector("main");
  const ms = getComputedStyle(main);
  const right = main.getBoundingClientRect().left + main.clientWidth - parseFloat(ms.paddingRight);
  let heading = "(top of the page)", count = {};
  const tables = [];
  for (const el of document.querySelectorAll("h1, h2, h3, h4, table")) {
    if (el.tagName !== "TABLE") { heading = el.textContent.trim(); continue; }
    const caption = el.querySelector("caption");
    let name = caption ? caption.textContent.trim() : heading;
    count[name] = (count[name] || 0) + 1;
    if (count[name] > 1) name += " (table " + count[name] + ")";
    const box = el.parentElement;
    tables.push({name: name.slice(0, 80), table: el.scrollWidth, box: box.clientWidth,
                 past: Math.round(el.getBoundingClientRect().right - right)});
  }
  const figures = [...document.querySelectorAll("main img, main svg:not(svg svg)")].map(el => ({
    name: el.getAttribute("aria-label") || el.getAttribute("alt") || el.tagName,
    past: Math.round(el.getBoundingClientRect().right - right)}));
  return {print: ms.maxWidth === "none", tables, figures};
})()
"""

VIEWS = [(1280, ""), (1920, ""), (A4_CONTENT_WIDTH, "print")]


@pytest.fixture(scope="module")
def reports(tmp_path_factory) -> dict:
    root = tmp_path_factory.mktemp("tables-fit")
    runs = {
        "reference": [str(REFERENCE)],
        "full": [str(FULL)],
        "mitigation": [str(REFERENCE), "--risks", "pre"],
        "status": [str(REFERENCE), "--status", str(STATUS / "day150.toml")],
    }
    pages = {}
    for name, args in runs.items():
        out = root / name
        assert main(["run", *args, "--samples", SAMPLES, "--out", str(out), "--quiet"]) == 0
        pages[name] = out / "report.html"
    history = root / "history"
    for day in ("day150", "day210"):
        assert main(["nightly", str(REFERENCE), "--history", str(history), "--status",
                     str(STATUS / f"{day}.toml"), "--samples", SAMPLES, "--quiet"]) == 0
    nights = sorted(p.parent for p in history.glob("*/report.html"))
    assert len(nights) == 2
    pages["nightly"] = nights[-1] / "report.html"
    return pages


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with Browser(CHROMIUM, tmp_path_factory.mktemp("chromium") / "profile") as b:
        yield b


def wide_tables(browser: Browser, page, width: int, media: str) -> tuple[bool, list[str], int]:
    browser.open(page.as_uri(), width, media)
    seen = browser.evaluate(MEASURE)
    wide = [f"{t['name']!r}: {t['table']} px wide in a box of {t['box']} px"
            + (f", {t['past']} px past the page's right edge" if t["past"] > 1 else "")
            for t in seen["tables"] if t["table"] > t["box"] + 1 or t["past"] > 1]
    wide += [f"figure {f['name'][:60]!r}: {f['past']} px past the page's right edge"
             for f in seen["figures"] if f["past"] > 1]
    return seen["print"], wide, len(seen["tables"])


@pytest.mark.parametrize("report", ["reference", "full", "mitigation", "status", "nightly"])
def test_every_table_fits_its_box_on_screen_and_in_print(reports, browser, report):
    problems, counts = [], []
    for width, media in VIEWS:
        printing, wide, tables = wide_tables(browser, reports[report], width, media)
        assert printing == (media == "print"), "the print rules are not what is in force"
        counts.append(tables)
        problems += [f"{media or 'screen'} {width} px: {w}" for w in wide]
    assert min(counts) >= 10, counts                # the page was measured, not a blank one
    assert problems == [], "\n".join(problems)


def test_the_measure_catches_a_wide_table(browser, tmp_path):
    page = tmp_path / "wide.html"
    cells = "".join(f"<td style='white-space:nowrap'>column number {i}</td>" for i in range(40))
    page.write_text("<!DOCTYPE html><html><head><style>main{max-width:600px}"
                    "@media print{main{max-width:none}} .s{overflow-x:auto}</style></head>"
                    f"<body><main><h2>Too wide</h2><div class='s'><table><tr>{cells}</tr>"
                    "</table></div><h2>Fine</h2><table><tr><td>1</td></tr></table></main>"
                    "</body></html>")
    for width, media in VIEWS:
        printing, wide, tables = wide_tables(browser, page, width, media)
        assert printing == (media == "print") and tables == 2
        assert len(wide) == 1 and wide[0].startswith("'Too wide': "), wide
