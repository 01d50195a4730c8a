"""Every user string reaches every output escaped for its place (issue 24 item 9).

`[costs] currency` went into report.html raw: a `<script>` in it ran when the report was
opened. Here one scenario puts a hostile string into every string it has (the scenario's name
and description, every id, every description, the currency, the forecast's unit, the strategy
names), its file and output folders are named with one too, and a search file (template,
knobs) and a night's changes add theirs; then `mcrisk validate`, `run --csv`, `compare`,
`schedule`, `nightly` (twice, the second with changed strings) and `optimize` write everything
they write, and each output is read back as its reader would read it:

    report.html (run, nightly, optimize)   parsed: no element or attribute comes from a user
                                           string (no script, no on* attribute, no image but
                                           the figures'), and the strings show as text
    summary.md, diff.md                    outside code spans: no raw <, no unescaped $, no
                                           table row with a stray |
    terminal (stdout and stderr)           printable characters and newlines only
    CSV files, Parquet files, JSON         read back, the strings as written
    strategies.toml                        read back by tomllib: names and ids as written,
                                           and appended to the scenario, it validates
    figures                                every text with a $ drawn with mathtext off

The hostile string: an HTML element, both quotes, an entity, Markdown's table pipe, emphasis,
code, link, strikethrough and math ($x^2$, also mathtext's), a backslash and ", " (which
separates ids in lists). Control characters are refused in names and descriptions
(tests/scenario/test_limits.py); the forecast's unit, a free label, carries them here.
"""
from __future__ import annotations

import csv
import datetime as dt
import html.parser
import json
import re
import tomllib

import pyarrow.parquet as pq
import pytest

from mcrisk.cli import main
from mcrisk.report.text import md_text
from mcrisk.app.nightly import run_nightly

from ..helpers import svg_root, svg_texts

H = "<script>alert(1)</script>\"'&amp;|*_`$x^2$\\~~s~~[a](b), z"
UNIT = "jobs\x1b[31m\n<b>$\\alpha$</b>\u202e"          # the forecast's free-text unit


def q(text: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's."""
    return json.dumps(text)


def n(name: str) -> str:
    return q(H + name)


def ids(first: str, last: str) -> str:
    return q(f"{H}{first}..{H}{last}")


def hostile_scenario(description: str = "a description", currency: str = "CUR") -> str:
    """Every string of a scenario hostile: names, ids, descriptions, the currency, the unit."""
    return f"""
[scenario]
name = {n("scenario")}
description = {q(H + description)}
horizon_days = 100
start_date = 2027-01-04

[demand]
forecast = {{ workload_at_day0 = 16, unit = {q(UNIT)}, growth_per_year = {{ dist = "uniform", min = 0.1, max = 0.3 }} }}
largest_job = 8

[shared_delays]
{n("vendor")} = {{ dist = "uniform", min = 0, max = 3 }}

[[unit_types]]
id = {n("old")}
description = {q(H + " old type")}
gpus = 8
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = {n("ib")}
drain_days = 2
removal_days = 3

[[unit_types]]
id = {n("new")}
description = {q(H + " new type")}
gpus = 4
h100_eq_per_gpu = {{ dist = "triangular", min = 1.8, mode = 2.0, max = 2.1 }}
power_kw = 20
cooling = "liquid"
island = {n("ib")}
install_days = {{ dist = "uniform", min = 3, max = 5 }}
burn_in = {{ attempt_days = 2, fail_first = 0.3, fail_retry = 0.1, fix_days = 1, rma_after_failures = 3, rma_days = 10 }}

[[islands]]
id = {n("ib")}
description = {q(H + " island")}

[[halls]]
id = {n("A")}
description = {q(H + " hall")}
power_cap_kw = 100
rows = [{{ id = {n("A1")}, cooling = "air", positions = 2 }}, {{ id = {n("A2")}, cooling = "air", positions = 2 }}]

[[halls]]
id = {n("B")}
power_cap_kw = 100
rows = [{{ id = {n("B1")}, cooling = "liquid", positions = 2 }}]

[retrofit]
crews = 1
days = {{ dist = "uniform", min = 4, max = 6 }}

[[existing]]
units = {ids("E1", "E2")}
type = {n("old")}
rows = {n("A1")}

[[existing]]
units = {n("E3")}
type = {n("old")}
rows = {n("A2")}

[[incoming]]
units = {ids("N1", "N2")}
type = {n("new")}

[[shipments]]
id = {n("S1")}
units = {ids("N1", "N2")}
arrival = {{ day = 20, delay = {{ dist = "uniform", min = 0, max = 4 }}, shared = [{n("vendor")}] }}

[[risks]]
id = {n("late")}
description = {q(H + " a late shipment")}
probability = 0.5
impact = 8
applies_to = [{q("arrival:" + H + "S1")}]
mitigated = {{ probability = 0.25, cost = 5000 }}

[costs]
currency = {q(H + currency)}

[[costs.power]]
hall = {n("A")}
reserved_kw = 25
price_per_kw_month = {{ dist = "triangular", min = 140, mode = 150, max = 170 }}
over_per_kw_month = 60
energy_per_kwh = 0.125

[[costs.power]]
hall = {n("B")}
reservations = [{{ day = 0, kw = 0 }}, {{ day = 30, kw = 20 }}]
price_per_kw_month = 30

[costs.running]
{n("old")} = 100

[costs.waiting]
{n("new")} = {{ dist = "uniform", min = 10, max = 20 }}

[costs.shortfall]
per_h100_eq_hour = 0.5

[costs.crews]
per_crew_day = 1000

[[strategies]]
name = {n("swap")}
description = {q(H + " swap")}
place = [{{ units = {ids("N1", "N2")}, row = {n("A1")} }}]
drain = [{{ units = {ids("E1", "E2")}, day = 10 }}]
keep = [{n("E3")}]

[[strategies]]
name = {n("hall-b")}
description = {q(H + " hall b")}
place = [{{ units = {ids("N1", "N2")}, row = {n("B1")} }}]
drain = [{{ units = {ids("E1", "E2")}, on_accepted = {ids("N1", "N2")} }}, {{ units = {n("E3")}, on_arrival = {n("S1")}, lag_days = 5 }}]
reservations = [{{ hall = {n("B")}, day = 0, kw = 0 }}, {{ hall = {n("B")}, day = 40, kw = 40 }}]
acceptance = {{ soak_after_failures = 1, soak_days = 2 }}
"""


def hostile_search(scenario_name: str) -> str:
    return f"""
[search]
scenario = {q(scenario_name)}
template = {n("hall-b")}
max_candidates = 100
seed = 1

[[search.drain_groups]]
units = {ids("E1", "E2")}
triggers = ["day:0", "day:5"]     # a trigger's ids are split at "," (docs/optimize.md)
lag_days = [0, 7]

[[search.waves]]
units = {ids("N1", "N2")}
rows = [{n("B1")}, {n("A1")}]

[search.objective]
minimize = "mean:cost_total"

[search.race]
scenarios = [50, 100]
keep = 0.5

[search.evaluate]
samples = 200
top = 3
"""


# -- how each output's reader reads it ------------------------------------------------------

class _Page(html.parser.HTMLParser):
    """The elements, attributes and text of a page, as a browser would parse them."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags, self.attributes, self.text = [], [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attributes += [(tag, name, value or "") for name, value in attrs]
        self.text += [value or "" for _, value in attrs]

    def handle_data(self, data):
        self.text.append(data)


def page_problems(page: str, where: str) -> list[str]:
    """What of the page comes from a user string as markup, and whether the strings show."""
    parsed = _Page()
    parsed.feed(page)
    text = "".join(parsed.text)
    found = [f"{where}: a <{tag}> element" for tag in ("script", "iframe", "u", "i")
             if tag in parsed.tags]                     # (pages never use <u> or <i>)
    found += [f"{where}: attribute {name} of <{tag}>" for tag, name, _ in parsed.attributes
              if name.startswith("on")]
    found += [f"{where}: {name}={value[:40]!r}" for tag, name, value in parsed.attributes
              if name in ("src", "href") and not value.startswith(("data:image/png;base64,",
                                                                    "#"))]
    if H not in text or "&lt;script" in text:
        found.append(f"{where}: the strings do not show as written")
    return found


def outside_code_spans(md: str) -> str:
    return re.sub(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)", "CODE", md)


def markdown_problems(md: str, where: str) -> list[str]:
    """Outside code spans: raw HTML, a $ that starts math, a * _ ~ or [ of a user string
    that starts emphasis or a link, a line that is a quote, a table row wider or narrower
    than its header; and whether the strings show, escaped as a whole."""
    plain = outside_code_spans(md)
    found = [f"{where}: {what}" for what, bad in (
        ("raw HTML", "<" in plain),                      # a tag (or an autolink)
        ("a quote", re.search(r"^\s*>", plain, re.MULTILINE)),
        ("a $ that starts math", re.search(r"(?<!\\)\$", plain)),
        *((f"raw {mark}", mark in plain) for mark in ("|*_", "~~s~~", "[a](b)")),
        ("the strings not shown as written", md_text(H) not in md)) if bad]
    header = None
    for line in md.splitlines():
        if not line.startswith("|"):
            header = None
            continue
        cells = len(re.findall(r"(?<!\\)\|", outside_code_spans(line)))
        header = header or cells
        if cells != header:
            found.append(f"{where}: a table row of {cells - 1} cells, not {header - 1}")
    return found


def terminal_problems(text: str, where: str) -> list[str]:
    bad = sorted({c for c in text if not c.isprintable() and c != "\n"})
    return [f"{where}: prints {bad}"] if bad else []


# -- the whole round --------------------------------------------------------------------------

NOW = dt.datetime(2026, 12, 2, 3, 15, 0, tzinfo=dt.timezone.utc)


@pytest.mark.slow
def test_every_user_string_reaches_every_output_escaped_for_its_place(tmp_path, monkeypatch,
                                                                      capsys):
    home = tmp_path / "d<i>\"&$x$|\x1b[2J\n"                 # file and folder names too
    home.mkdir()
    scenario = home / "s<b>\"'&.toml"
    scenario.write_text(hostile_scenario())
    search = home / "search.toml"
    search.write_text(hostile_search(scenario.name))
    out, terminal = home / "run<out>", []

    def cli(*args: str) -> int:
        code = main([str(a) for a in args])
        captured = capsys.readouterr()
        terminal.append((args[0], captured.out + captured.err))
        return code

    assert cli("validate", scenario, search) == 0
    assert cli("run", scenario, "--samples", "200", "--out", out, "--quiet", "--csv") == 0
    assert cli("compare", scenario, H + "swap", H + "hall-b", "--samples", "200",
               "--quiet") == 0
    assert cli("schedule", scenario, H + "hall-b", "--samples", "200", "--quiet") == 0
    history = home / "history<h>"
    run_nightly(str(scenario), history, samples=200, now=NOW)
    scenario.write_text(hostile_scenario(" changed <u>description</u>", "CUR2"))
    assert cli("nightly", scenario, "--history", history, "--samples", "200", "--quiet") == 0
    scenario.write_text(hostile_scenario())
    optimized = home / "optimize<o>"
    assert cli("optimize", search, "--out", optimized, "--quiet") == 0
    problems = [p for command, text in terminal for p in terminal_problems(text, command)]
    assert any(H + "hall-b" in text for _, text in terminal)

    night = max(p for p in history.iterdir() if p.is_dir())         # tonight
    for page in (out / "report.html", night / "report.html", optimized / "report.html"):
        problems += page_problems(page.read_text(), str(page))
    for md in (out / "summary.md", night / "summary.md", night / "diff.md"):
        problems += markdown_problems(md.read_text(), str(md))
    assert "changed" in (night / "diff.md").read_text()

    names = {H + "swap", H + "hall-b"}
    with open(out / "ranking.csv", newline="") as f:
        assert {row["strategy"] for row in csv.DictReader(f)} == names
    with open(out / "milestones.csv", newline="") as f:
        assert any(H + "S1" in row["name"] for row in csv.DictReader(f))
    assert set(pq.read_table(out / "metrics.parquet").column("strategy").to_pylist()) == names
    assert f"shared.{H}vendor" in pq.read_schema(out / "metrics.parquet").names
    summary = json.loads((out / "summary.json").read_text())
    assert summary["scenario_name"] == H + "scenario"
    assert summary["costs"]["currency"] == H + "CUR"
    json.loads((night / "alerts.json").read_text())
    json.loads((history / "index.json").read_text())
    document = json.loads((optimized / "optimize.json").read_text())
    assert document["currency"] == H + "CUR"

    # strategies.toml reads back as written, and appended to the scenario it validates
    written = (optimized / "strategies.toml").read_text()
    try:
        blocks = tomllib.loads(written)["strategies"]
    except tomllib.TOMLDecodeError as error:
        blocks = []
        problems.append(f"strategies.toml: {error}")
    for block in blocks:
        units = [u for entry in block["place"] for u in (
            [entry["units"]] if isinstance(entry["units"], str) else entry["units"])]
        if units != [f"{H}N1..{H}N2"]:
            problems.append(f"strategies.toml: place units {units}")
        assert block["name"].startswith("plan-")
        assert block["description"].startswith(f"mcrisk optimize: {H}hall-b with ")
    appended = home / "appended.toml"
    appended.write_text(hostile_scenario() + "\n" + written)
    if cli("validate", appended) != 0:
        problems.append(f"the scenario with strategies.toml appended: {terminal[-1][1]}")
    assert problems == [], "\n".join(problems)

    charts = [chart for page in tmp_path.rglob("report.html")
              for chart in re.findall(r'<svg class="chart".*?</svg>', page.read_text(), re.S)]
    assert charts
    shown = {t for chart in charts for t in svg_texts(svg_root(chart))}   # parsed: escaped
    assert any(t.startswith("<script>alert(1)</script>") for t in shown)   # as written


def test_markdown_text_escapes_githubs_math_and_strikethrough():
    """summary.md's findings said 'costs $13.8M less ... (paired 95% interval $13.6M to
    $14.0M)': GitHub set the text between the two $ as a formula."""
    assert md_text("costs $13.8M less, interval $13.6M") == \
        "costs \\$13.8M less, interval \\$13.6M"
    assert md_text("~~struck~~ $x^2$") == "\\~\\~struck\\~\\~ \\$x^2\\$"


def test_a_name_a_spreadsheet_would_run_is_written_to_the_csv_files_inert(tmp_path):
    """A cell that starts with = + - or @ is a formula to a spreadsheet: the CSV files put an
    apostrophe before it (and quote what CSV needs quoted), so it opens as the text it is."""
    from mcrisk.report.schedule_tables import write_csvs

    name = '=HYPERLINK("http://x", "a, b")'
    stats = {"mean": 1.0, "p50": 1.0, "p90": 2.0, "p99": 3.0, "p90_ci": [1.5, 2.5]}
    summary = {"ranking": [name], "strategies": {name: {
        **{m: dict(stats) for m in ("trough_depth", "trough_days", "shortfall_gpu_days",
                                    "homeless_days", "completion_day")},
        "power_violation": {"probability": 0.0}}}}
    write_csvs(tmp_path, summary)
    for file in ("ranking.csv", "strategies.csv"):
        with open(tmp_path / file, newline="") as f:
            assert next(csv.DictReader(f))["strategy"] == "'" + name, file
