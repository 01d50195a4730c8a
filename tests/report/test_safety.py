"""The report and the nightly history cannot be broken by what users write (issue 8).

User strings reach figures (mathtext), report.html, the Markdown files and the terminal; a
history folder can be edited or damaged by hand. Every test here would fail (or crash) before
the fix it guards.
"""
from __future__ import annotations

import datetime as dt
import json
import re
import shutil
from pathlib import Path

import pytest

from mcrisk.cli import main
from mcrisk.app import nightly as nightly_module
from mcrisk.report import tables as tables_module
from mcrisk.report.nightly.alerts import evaluate, parse_condition
from mcrisk.report.nightly.diff import InputChange, MetricChange, NightDiff, diff_markdown
from mcrisk.report.html.page import diff_html
from mcrisk.report.markdown import summary_markdown
from mcrisk.app.nightly import _ENTRY_FIELDS as ENTRY_FIELDS
from mcrisk.app.nightly import check_index, read_index, run_nightly
from mcrisk.report.text import html_text, md_code, md_paragraph, md_text, visible
from ..helpers import ROOT, svg_root, svg_texts

MINIMAL = ROOT / "scenarios" / "minimal.toml"
NOW = dt.datetime(2026, 12, 2, 3, 15, 0, tzinfo=dt.timezone.utc)

# What mathtext, TeX, Markdown and printf-style formatting would read: a formula, a lone
# superscript (mathtext raises on it), a backslash, an underscore and a percent sign.
PREFIX = r"$x^2$\_%$^$"
IDS = ("E1..E2", "N1..N2", "R1..R2", "N1", "N2", "R1", "R2", "R3", "H", "S1", "ib-old",
       "ib-new", "h100-pod", "gb300-rack", "swap-gated", "drain-on-day", "minimal")


def _prefixed(token: str) -> str:
    return "..".join(PREFIX + part for part in token.split(".."))


def hostile_scenario(folder: Path) -> Path:
    """minimal.toml with PREFIX before every id, name and description."""
    escaped = PREFIX.replace("\\", "\\\\")          # a TOML basic string

    def rename(match: re.Match) -> str:
        token = match[1]
        if token in IDS:
            return '"' + _prefixed(token).replace("\\", "\\\\") + '"'
        return match[0]

    text = re.sub(r'"([^"\n]*)"', rename, MINIMAL.read_text())
    text = text.replace('description = "', f'description = "{escaped} ')
    path = folder / "hostile.toml"
    path.write_text(text)
    return path


def test_a_hostile_scenario_is_read_with_its_ids_as_written(tmp_path):
    from mcrisk.scenario import load_scenario

    scenario = load_scenario(hostile_scenario(tmp_path))
    assert scenario.name == PREFIX + "minimal"
    assert [s.name for s in scenario.strategies] == [PREFIX + "swap-gated", PREFIX + "drain-on-day"]
    assert [h.id for h in scenario.halls] == [PREFIX + "H"]


@pytest.mark.slow
def test_every_user_string_in_a_figure_is_drawn_literally(tmp_path, monkeypatch):
    """Mathtext used to read `$^$` in a hall id and raise in savefig, after summary.json and
    the Parquet files were written; names with `$` were drawn as formulas. The SVG figures
    show each name as written (escaped, parsed back here as the same text)."""
    out = tmp_path / "out"
    assert main(["run", str(hostile_scenario(tmp_path)), "--samples", "200", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    assert (out / "report.html").is_file() and (out / "summary.md").is_file()
    charts = re.findall(r'<svg class="chart".*?</svg>', (out / "report.html").read_text(), re.S)
    assert len(charts) == 6
    shown = {text for chart in charts for text in svg_texts(svg_root(chart))}
    assert f"hall {PREFIX}H: P90 peak draw (kW)" in shown
    assert PREFIX + "swap-gated" in shown and PREFIX + "drain-on-day" in shown
    page = (out / "report.html").read_text()
    for name in ("H", "swap-gated", "drain-on-day", "minimal"):
        assert PREFIX + name in page


# -- Markdown, HTML and terminal text (item 11) ------------------------------------------------

HOSTILE = "<script>alert(1)</script> | <img src=x onerror=alert(2)> [a](javascript:x) `x` *b*"
INVISIBLE = "\x00\x1b[31mred\nnext line\u202e"


def hostile_diff() -> NightDiff:
    """A comparison whose every user string is hostile, as if read back from a history."""
    name = HOSTILE + INVISIBLE
    change = MetricChange(name, "trough_days", "p90", 1.0, 20.0, True, "paired test p=1e-05",
                          1e-5)
    return NightDiff(
        current="2026-12-03T031500Z" + INVISIBLE, previous="<u>prev</u>" + INVISIBLE,
        paired=True, pairing_note="paired", same_file=False,
        input_changes=[InputChange("strategies[" + name + "].description", "changed",
                                   HOSTILE, INVISIBLE),
                       InputChange("a`b``c" + INVISIBLE, "added", None, name)],
        changes=[change], added_strategies=[name], removed_strategies=["<s>old</s>"])


def assert_literal(text: str) -> None:
    """No markup of a user string survives, and no invisible character gets through raw."""
    for raw in ("<script", "<img", "<u>", "<s>"):
        assert raw not in text
    assert not any(c in text for c in "\x00\x1b\u202e")


def outside_code_spans(md: str) -> str:
    """Markdown without its code spans (whose content Markdown shows literally anyway)."""
    return re.sub(r"(?<![`\\])(`+)(?!`).*?(?<!`)\1(?!`)", "CODE", md)


def test_diff_md_shows_every_user_string_literally():
    md = diff_markdown(hostile_diff())
    assert_literal(outside_code_spans(md))
    assert not re.search(r"(?<!\\)\]\(javascript", outside_code_spans(md))   # a live link
    assert not any(c in md for c in "\x00\x1b\u202e")
    assert "\\x1b\\[31mred\\\\nnext line" in md          # visible, and Markdown-escaped
    assert "&lt;script&gt;alert(1)&lt;/script&gt; \\| &lt;img" in md
    # the strategy's row of the table is one line, with the 9 borders of the table's 8 cells
    rows = [line for line in md.splitlines() if line.startswith("| ") and "trough_days" in line]
    assert len(rows) == 1 and len(re.findall(r"(?<!\\)\|", rows[0])) == 9
    assert "- added ```a`b``c\\x00" in md                    # a fence longer than any run


def test_report_html_diff_section_shows_every_user_string_literally():
    page = diff_html(hostile_diff())
    assert_literal(page)
    assert "\\x1b[31mred\\nnext line\\u202e" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_text_helpers_escape_what_each_output_would_interpret():
    assert visible("a\x00b\x1b\n\t\u202ec\u2028") == "a\\x00b\\x1b\\n\\t\\u202ec\\u2028"
    assert visible("ordinary $x^2$ \\ _ % é 漢") == "ordinary $x^2$ \\ _ % é 漢"
    assert html_text("<a href='x'>&\x00") == "&lt;a href=&#x27;x&#x27;&gt;&amp;\\x00"
    assert md_text("a_b*c|d") == "a\\_b\\*c\\|d" and md_text("0.1.0") == "0.1.0"
    assert md_paragraph("# a_b") == "\\# a\\_b" and md_paragraph("- x") == "\\- x"
    assert md_paragraph("1. x") == "1\\. x" and md_paragraph("2026-12") == "2026-12"
    assert md_code("a`b") == "``a`b``" and md_code("`a") == "`` `a ``"


@pytest.mark.slow
def test_a_hostile_description_change_reaches_diff_md_escaped(tmp_path):
    """diff.md wrote changed values raw: an <img onerror> in a description was live HTML."""
    history = tmp_path / "h"
    scenario = tmp_path / "s.toml"
    scenario.write_text(MINIMAL.read_text())
    night_kwargs = dict(samples=200, seed=1, backend="cpu")
    run_nightly(str(scenario), history, now=NOW, **night_kwargs)
    scenario.write_text(MINIMAL.read_text().replace(
        'description = "Both racks', 'description = "<img src=x onerror=alert(2)> Both racks', 1))
    second = run_nightly(str(scenario), history, now=NOW + dt.timedelta(days=1), **night_kwargs)
    md = (second.folder / "diff.md").read_text()
    assert "changed `strategies[swap-gated].description`" in md
    assert "<img" not in md and "&lt;img src=x onerror=alert(2)&gt; Both racks" in md
    assert "<img src=x" not in (second.folder / "report.html").read_text()


def summary_with(name: str) -> dict:
    """A summary.json-shaped dict with one strategy called `name`."""
    stats = {"mean": 1.0, "p50": 1.0, "p90": 2.0, "p99": 3.0, "p90_ci": [1.5, 2.5]}
    metrics = {m: dict(stats) for m in ("trough_depth", "trough_days", "shortfall_gpu_days",
                                         "homeless_days", "completion_day")}
    metrics["power_violation"] = {"probability": 0.0}
    return {"scenario": "s.toml", "scenario_name": name, "scenario_sha256": "0" * 64,
            "samples": 100, "seed": 1, "backend": "cpu", "mcrisk_version": "0",
            "ranking": [name], "strategies": {name: metrics}}


def test_summary_md_shows_names_and_paragraphs_literally():
    name = HOSTILE + INVISIBLE
    md = summary_markdown(summary_with(name), [f"{name} wins", "# not a heading"],
                          run_label="<u>run</u>\x1b", notes=("skipped " + name,))
    assert_literal(outside_code_spans(md))
    assert not any(c in md for c in "\x00\x1b\u202e")
    assert "\n- \\# not a heading\n" in md          # a finding, not a heading
    row = next(line for line in md.splitlines() if line.startswith("| 1 |"))
    assert len(re.findall(r"(?<!\\)\|", row)) == 8          # 7 columns, with "decided by"


def test_breaches_and_notes_for_the_terminal_show_invisible_characters_escaped():
    name = "evil\x1b[2J\nname"
    summary = summary_with(name)
    conditions = [parse_condition("any.trough_depth.p90 > 0"),
                  parse_condition("any.trough_depth.p90.delta > 0")]
    diff = NightDiff("b", "a", True, "", True, [], [], deltas={})
    breaches, notes = evaluate(conditions, summary, diff)
    for text in [str(b) for b in breaches] + notes:
        assert "\x1b" not in text and "\n" not in text and "evil\\x1b[2J\\nname" in text


# -- a damaged history index (item 9) ----------------------------------------------------------

ENTRY = {"id": "2026-12-01T031500Z", "folder": "2026-12-01T031500Z", "status": "ok",
         "scenario_name": "minimal"}


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def nightly_cli(scenario: Path, history: Path, *extra: str) -> list[str]:
    return ["nightly", str(scenario), "--history", str(history), "--samples", "100",
            "--backend", "cpu", "--quiet", *extra]


@pytest.mark.parametrize("index, where, what", [
    ({"runs": [1, 2]}, ": schema", "missing"),
    ({"schema": 1, "runs": [1, 2]}, ": runs[0]", "must be an object"),
    ({"schema": 1, "runs": [{k: v for k, v in ENTRY.items() if k != "folder"}]},
     ": runs[0].folder", "missing"),
    ({"schema": 1, "runs": [{**ENTRY, "folder": 5}]}, ": runs[0].folder = 5", "must be text"),
    ({"schema": 2, "runs": []}, ": schema = 2", "unknown history schema"),
    ({"schema": 1, "runs": {"a": 1}}, ": runs", "must be a list"),
    ({"schema": 1, "runs": [ENTRY, {**ENTRY, "seed": "one"}]}, ": runs[1].seed = 'one'",
     "must be a whole number"),
    ({"schema": 1, "runs": [{**ENTRY, "folder": "../elsewhere"}]},
     ": runs[0].folder = '../elsewhere'", "inside the history"),
    ({"schema": 1, "runs": [{**ENTRY, "folder": "/tmp"}]}, ": runs[0].folder = '/tmp'",
     "inside the history"),
    ({"schema": 1, "runs": [{**ENTRY, "id": "x\x1b[2J"}]}, ": runs[0].id = 'x\\x1b[2J'",
     "must be printable text"),
    ([], " = []", "must be a JSON object"),
])
def test_a_malformed_index_is_exit_2_naming_the_entry(tmp_path, capsys, index, where, what):
    """These crashed nightly with a traceback (exit 1), or followed a folder out of the
    history; now: exit 2, the entry, what is wrong and what to do, and nothing changed."""
    history = tmp_path / "h"
    history.mkdir()
    (history / "index.json").write_text(json.dumps(index))
    before = snapshot(history)
    assert main(nightly_cli(MINIMAL, history)) == 2
    err = capsys.readouterr().err
    assert f"index.json{where}" in err and what in err
    assert "move index.json aside to start a new history" in err
    assert "Traceback" not in err
    assert snapshot(history) == before and sorted(p.name for p in history.iterdir()) == \
        ["index.json"]


@pytest.mark.slow
def test_an_index_entry_never_leads_out_of_the_history(tmp_path, capsys):
    """A folder "../elsewhere", or a link to it, used to be compared with as a night."""
    history = tmp_path / "h"
    first = run_nightly(str(MINIMAL), history, samples=200, backend="cpu", now=NOW)
    elsewhere = tmp_path / "elsewhere"
    (history / first.run_id).rename(elsewhere)
    index = json.loads((history / "index.json").read_text())
    for folder in ("../elsewhere", "link"):
        if folder == "link":
            (history / "link").symlink_to(elsewhere)
        index["runs"][0]["folder"] = folder
        (history / "index.json").write_text(json.dumps(index))
        assert main(nightly_cli(MINIMAL, history)) == 2
        err = capsys.readouterr().err
        assert f"runs[0].folder = '{folder}'" in err and "history" in err
        assert not list(history.glob("*partial-*"))


@pytest.mark.slow
def test_nightly_accepts_the_index_it_writes(tmp_path):
    history = tmp_path / "h"
    run_nightly(str(MINIMAL), history, samples=200, backend="cpu", now=NOW)
    index = json.loads((history / "index.json").read_text())
    assert check_index(history, index) == []
    status_fields = {"status_file", "status_sha256", "status_as_of"}     # with --status only
    assert set(index["runs"][0]) == set(ENTRY_FIELDS) - status_fields


# -- a damaged earlier night (item 10) ---------------------------------------------------------

def _corrupt(path: Path) -> None:
    path.write_bytes(b"\x00garbage{[" + path.read_bytes()[:40])


DAMAGE = {
    "summary.json corrupt": ("summary.json", _corrupt),
    "summary.json missing": ("summary.json", Path.unlink),
    "summary.json of the wrong shape": ("summary.json", lambda p: p.write_text('{"seed": 1}')),
    "scenario.toml corrupt": ("scenario.toml", _corrupt),
    "scenario.toml missing": ("scenario.toml", Path.unlink),
    "metrics.parquet corrupt": ("metrics.parquet", _corrupt),
    # (a missing metrics.parquet is no damage: --keep-large deletes it, and the night is then
    # compared unpaired; tests/app/test_nightly.py covers that)
    "run folder missing": ("", lambda p: shutil.rmtree(p)),
}


@pytest.fixture(scope="module")
def two_good_nights(tmp_path_factory):
    """A history with two nights of minimal.toml (S1 promised on day 30, then day 40)."""
    base = tmp_path_factory.mktemp("damaged")
    history = base / "history"
    scenario = base / "minimal.toml"
    scenario.write_text(MINIMAL.read_text())
    first = run_nightly(str(scenario), history, samples=200, backend="cpu", now=NOW)
    scenario.write_text(MINIMAL.read_text().replace("arrival = { day = 30,", "arrival = { day = 40,"))
    second = run_nightly(str(scenario), history, samples=200, backend="cpu",
                         now=NOW + dt.timedelta(days=1))
    return history, scenario, first.run_id, second.run_id


@pytest.mark.slow
@pytest.mark.parametrize("damage", list(DAMAGE))
def test_a_damaged_night_is_skipped_and_the_last_readable_one_compared(
        two_good_nights, tmp_path, capsys, damage):
    """A damaged previous night made every later night crash (the pipeline stayed down)."""
    source, scenario, first, second = two_good_nights
    history = tmp_path / "history"
    shutil.copytree(source, history)
    name, spoil = DAMAGE[damage]
    spoil(history / second / name if name else history / second)
    assert main(nightly_cli(scenario, history)) == 0
    out = capsys.readouterr().out
    assert f"note: comparison with {second} skipped: " in out
    if name:
        assert f"{second}/{name}" in out
    assert f"compared with {first}:" in out
    runs = json.loads((history / "index.json").read_text())["runs"]
    assert [r["previous"] for r in runs] == [None, first, first]
    tonight = history / runs[-1]["folder"]
    diff_md = (tonight / "diff.md").read_text()
    assert f"vs {first}" in diff_md and f"comparison with {second} skipped" in diff_md
    assert "changed `shipments[S1].arrival.day`: 30 -> 40" in diff_md   # against the first
    assert f"comparison with {second} skipped" in (tonight / "report.html").read_text()
    assert json.loads((tonight / "alerts.json").read_text())["notes"][0].startswith(
        f"comparison with {second} skipped")


@pytest.mark.slow
def test_with_no_readable_night_the_run_still_completes_and_says_why(two_good_nights, tmp_path,
                                                                      capsys):
    source, scenario, first, second = two_good_nights
    history = tmp_path / "history"
    shutil.copytree(source, history)
    for run_id in (first, second):
        _corrupt(history / run_id / "summary.json")
    assert main(nightly_cli(scenario, history,
                            "--fail-if", "any.trough_days.p90.delta > 0")) == 0
    out = capsys.readouterr().out
    assert out.count("skipped: ") == 2 and "no earlier run of this scenario could be read" in out
    runs = json.loads((history / "index.json").read_text())["runs"]
    tonight = history / runs[-1]["folder"]
    assert runs[-1]["previous"] is None and not (tonight / "diff.md").exists()
    for name in ("report.html", "summary.md"):
        assert f"comparison with {second} skipped" in (tonight / name).read_text()


# -- a stop inside the nightly (SIGTERM unwinds like KeyboardInterrupt) --------------------------

@pytest.mark.slow
@pytest.mark.parametrize("stop, where", [(KeyboardInterrupt, "simulation"),
                                         (KeyboardInterrupt, "report"),
                                         (KeyboardInterrupt, "register"),
                                         (SystemExit, "register")])
def test_a_stopped_night_leaves_no_partial_folder_and_the_index_intact(
        two_good_nights, tmp_path, monkeypatch, stop, where):
    """A stop (Ctrl-C, the CLI's SIGTERM, which unwinds as a KeyboardInterrupt, or
    sys.exit) anywhere in a night removes its folders and registers nothing."""
    source, scenario, first, second = two_good_nights
    history = tmp_path / "history"
    shutil.copytree(source, history)
    before = snapshot(history)

    def halt(*args, **kwargs):
        raise stop()

    target = {"simulation": (tables_module, "metrics_batch"),
              "report": (nightly_module, "write_report"),
              "register": (nightly_module, "_register")}[where]
    monkeypatch.setattr(*target, halt)
    with pytest.raises(stop):
        run_nightly(str(scenario), history, samples=100, backend="cpu",
                    now=NOW + dt.timedelta(days=2))
    assert not [p for p in history.iterdir() if "partial" in p.name or "staging" in p.name]
    assert snapshot(history) == before
    assert [r["id"] for r in read_index(history)["runs"]] == [first, second]
