"""Calendar dates in every output when the scenario sets start_date (issue 10).

The rule (docs/metrics.md): day 0 is all of start_date, so day t falls on start_date +
floor(t) days. The minimal scenario's copy below starts on Monday 2027-01-04, so its
200-day horizon falls on Friday 2027-07-23 (Jan 4 + 27 = Jan 31, + 28 = Feb 28, + 31, + 30,
+ 31, + 30 = Jun 30 at day 177; + 23 = Jul 23 at day 200; 200 = 28 weeks + 4 days: Monday +
4 = Friday)."""
import contextlib
import datetime as dt
import io
import json
import re

import pytest

from mcrisk.cli import main
from mcrisk.results.milestones import day_date
from mcrisk.report.figures import charts as figures

from ..conftest import MINIMAL

START = dt.date(2027, 1, 4)
HORIZON_DATE = "Fri 2027-07-23"
ISO = re.compile(r"\b20\d\d-\d\d-\d\d\b")


def _by_hand(day: float) -> str:
    """start + floor(day), counted here with integer division, not the package's helper."""
    whole = int(day // 1)
    date = START + dt.timedelta(days=whole)
    return date.isoformat()


def test_the_rule_by_hand():
    assert day_date(START, 0.0) == "2027-01-04"
    assert day_date(START, 0.99) == "2027-01-04"      # an instant late on day 0 is still day 0
    assert day_date(START, 1.0) == "2027-01-05"
    assert day_date(START, 27.5) == "2027-01-31"
    assert day_date(START, 28.0) == "2027-02-01"
    assert day_date(START, 200.0) == "2027-07-23"
    assert day_date(START, float("inf")) is None
    assert day_date(None, 3.0) is None


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The minimal scenario with and without start_date, the same seed and samples."""
    base = tmp_path_factory.mktemp("dates")
    text = MINIMAL.read_text()
    assert "start_date" not in text
    dated = base / "dated.toml"
    dated.write_text(text.replace("horizon_days = 200\n",
                                  "horizon_days = 200\nstart_date = 2027-01-04\n", 1))
    assert "start_date" in dated.read_text()
    out = {}
    for key, path in (("dated", dated), ("plain", MINIMAL)):
        folder = base / key
        buffer = io.StringIO()
        axes = []                             # (start, lo, hi) of every date-axis request

        def spy(start, lo, hi, real=figures.date_ticks):
            axes.append((start, lo, hi))
            return real(start, lo, hi)

        with contextlib.redirect_stdout(buffer), pytest.MonkeyPatch.context() as mp:
            mp.setattr(figures, "date_ticks", spy)
            assert main(["run", str(path), "--samples", "200", "--seed", "5", "--out",
                         str(folder), "--quiet"]) == 0
        out[key] = {"terminal": buffer.getvalue(), "date_axes": axes,
                    "summary": json.loads((folder / "summary.json").read_text()),
                    "md": (folder / "summary.md").read_text(),
                    "html": (folder / "report.html").read_text()}
    return out


def test_summary_json_has_the_dates(runs):
    s = runs["dated"]["summary"]
    assert s["start_date"] == "2027-01-04"
    assert s["horizon_date"] == "2027-07-23"
    for name, m in s["strategies"].items():
        for key in ("p50", "p90", "p99"):
            assert m["completion_date"][key] == _by_hand(m["completion_day"][key]), (name, key)
    plain = runs["plain"]["summary"]
    assert "start_date" not in plain and "horizon_date" not in plain
    assert all("completion_date" not in m for m in plain["strategies"].values())


def test_terminal_shows_day_0_and_completion_dates(runs):
    text = runs["dated"]["terminal"]
    s = runs["dated"]["summary"]
    assert "day 0 = Mon 2027-01-04" in text
    assert "horizon day 200 = " + HORIZON_DATE in text
    for m in s["strategies"].values():
        for key in ("p50", "p90"):
            iso = _by_hand(m["completion_day"][key])
            weekday = dt.date.fromisoformat(iso).strftime("%a")
            assert f"{key.upper()} {m['completion_day'][key]:.1f} ({weekday} {iso})" in text
    assert not ISO.search(runs["plain"]["terminal"])


def test_summary_md_and_report_show_the_dates(runs):
    s = runs["dated"]["summary"]
    md, page = runs["dated"]["md"], runs["dated"]["html"]
    assert "day 0 = Mon 2027-01-04" in page       # summary.md (short) dates its P90s only
    assert "horizon 200 days (" + HORIZON_DATE + ")" in page
    for m in s["strategies"].values():
        for key in ("p50", "p90"):
            iso = _by_hand(m["completion_day"][key])
            weekday = dt.date.fromisoformat(iso).strftime("%a")
            assert f"({weekday} {iso})" in md or key == "p50"
            assert f"<small>{weekday} {iso}</small>" in page
    # findings name the horizon with its date
    assert f"200-day horizon (until {HORIZON_DATE})" in md
    assert f"200-day horizon (until {HORIZON_DATE})" in page
    assert not ISO.search(runs["plain"]["md"])
    plain_page = runs["plain"]["html"]
    assert "day 0 =" not in plain_page and "(until " not in plain_page
    # the only date in the undated report is the run's creation time
    assert set(ISO.findall(plain_page)) <= {runs["plain"]["summary"]["created_utc"][:10]}


def test_findings_date_a_late_completion():
    """A strategy completing after the horizon: its P50 and P99 completion days get dates
    (numpy's linear quantile of 10 days 50..59 is 54.5 -> day 54; P99 58.91 -> day 58)."""
    import numpy as np

    from mcrisk.report.findings.sentences import _horizon_note

    done = np.arange(50.0, 60.0)
    col = lambda name, metric: done                      # noqa: E731
    text = _horizon_note(col, "s", 10, 55.0, START)
    # Jan 4 + 55 = Feb 28 (Sun); + 54 = Feb 27 (Sat); + 58 = Mar 3 (Wed)
    assert "55-day horizon (until Sun 2027-02-28)" in text
    assert "P50 completion day 54.5 (Sat 2027-02-27)" in text
    assert "P99 58.9 (Wed 2027-03-03)" in text
    assert "2027" not in _horizon_note(col, "s", 10, 55.0)


def test_dated_summary_fits_the_schema(runs):
    from ..helpers import schema_errors as errors

    assert errors(runs["dated"]["summary"]) == []
    broken = json.loads(json.dumps(runs["dated"]["summary"]))
    broken["strategies"][next(iter(broken["strategies"]))]["completion_date"]["p50"] = 305
    assert errors(broken)                  # a date must be a string (or null)


def test_date_axis_ticks_fall_on_the_first_of_each_month():
    """Jan 4 + 28 = Feb 1, + 28 = Mar 1, + 31 = Apr 1, + 30 = May 1, + 31 = Jun 1, + 30 = Jul 1."""
    assert figures.date_ticks(START, 0, 200) == [
        (28.0, "Feb 2027"), (56.0, "Mar"), (87.0, "Apr"), (117.0, "May"), (148.0, "Jun"),
        (178.0, "Jul")]
    assert figures.date_ticks(None, 0, 200) is None


def test_charts_get_a_date_axis_only_with_start_date(runs):
    """The fan and largest-island charts (0..H, every panel) and the completion chart ask
    for the months on top; with start_date they are drawn, without it none."""
    dated = runs["dated"]["date_axes"]
    assert [a for a in dated if a[1:] == (0, 200)] == [(START, 0, 200)] * 2
    assert len(dated) == 3 and all(a[0] == START for a in dated)
    plain = runs["plain"]["date_axes"]
    assert len(plain) == 3 and all(a[0] is None for a in plain)
    figures_html = [re.findall(r"<figure class=\"svg\">.*?</figure>", runs[k]["html"], re.S)
                    for k in ("dated", "plain")]
    assert sum("Feb 2027" in f for f in figures_html[0]) >= 2      # the fan, the island
    assert not any("Feb 2027" in f for f in figures_html[1])


# -- the calendar's ends (issue 24 item 11) ------------------------------------------------------
# Python's dates run from 0001-01-01 to 9999-12-31. 9999-12-31 minus 100 years is 9899-12-31
# (24 leap days: 9904 to 9996, 9900 is none), minus 176 more days is 9899-07-08: the latest
# start_date of a 200-day plan, whose horizon and the 36,500 days after it must have dates.

LATEST = "9899-07-08"
RUN_FILES = ["capacity_bands.parquet", "metrics.parquet", "milestones.csv",
             "milestones.parquet", "ranking.csv", "report.html", "strategies.csv",
             "summary.json", "summary.md"]


def _starting(start: str, *edits: tuple[str, str]) -> str:
    text = MINIMAL.read_text().replace("horizon_days = 200\n",
                                       f"horizon_days = 200\nstart_date = {start}\n", 1)
    for old, new in edits:
        assert old in text
        text = text.replace(old, new, 1)
    return text


def _run(tmp_path, text: str, capsys) -> tuple:
    path, out = tmp_path / "x.toml", tmp_path / "out"
    path.write_text(text)
    code = main(["run", str(path), "--samples", "200", "--out", str(out), "--quiet", "--csv"])
    captured = capsys.readouterr()
    return code, captured.out, captured.err, out


@pytest.mark.parametrize("start, shown", [("9999-12-01", "9999-12-01"),
                                          ('"9899-07-09"', "'9899-07-09'")])
def test_a_start_date_too_late_to_date_the_plan_is_a_located_error(tmp_path, capsys, start,
                                                                   shown):
    """9999-12-01 passed validate, and run crashed with a traceback (OverflowError: date
    value out of range) after the simulation."""
    path = tmp_path / "x.toml"
    path.write_text(_starting(start))
    assert main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == (f"{path}: scenario.start_date = {shown}: is too late to date the plan: "
                   "the horizon (day 200) and the 36,500 days (100 years) after it, where "
                   "milestones and completions may fall, must end by 9999-12-31, the last day "
                   f"of the calendar (start on {LATEST} or earlier)\n")
    assert main(["run", str(path), "--out", str(tmp_path / "out")]) == 2
    assert "Traceback" not in capsys.readouterr().err and not (tmp_path / "out").exists()


@pytest.mark.slow
def test_a_plan_from_year_1_runs_and_writes_every_file(tmp_path, capsys):
    """0001-01-01 passed validate, and run crashed with a traceback in the Gantt's date
    axis, which pads the axis to before day 0, past the calendar's first day."""
    code, out, err, folder = _run(tmp_path, _starting("0001-01-01"), capsys)
    assert code == 0, err
    assert sorted(p.name for p in folder.iterdir() if p.name[0] != ".") == RUN_FILES
    summary = json.loads((folder / "summary.json").read_text())
    assert (summary["start_date"], summary["horizon_date"]) == ("0001-01-01", "0001-07-20")
    assert "day 0 = Mon 0001-01-01; horizon day 200 = Fri 0001-07-20" in out
    assert "Jan 1" in (folder / "report.html").read_text()     # the Gantt's first date tick


@pytest.mark.slow
def test_the_latest_start_date_runs_and_leaves_dates_past_the_calendar_out(tmp_path, capsys):
    """A shipment 36,500 days late (the longest date and delay there are) puts completion
    past 9999-12-31: the day numbers are shown without a date, nothing crashes."""
    late = ("arrival = { day = 30, delay = { dist = \"triangular\", min = 0, mode = 3, "
            "max = 10 } }", "arrival = { day = 36500, delay = 36500 }")
    code, out, err, folder = _run(tmp_path, _starting(LATEST, late), capsys)
    assert code == 0, err
    assert sorted(p.name for p in folder.iterdir() if p.name[0] != ".") == RUN_FILES
    summary = json.loads((folder / "summary.json").read_text())
    assert summary["horizon_date"] == "9900-01-24"
    for name, strategy in summary["strategies"].items():
        assert strategy["completion_day"]["p50"] > 73_000, name
        assert strategy["completion_date"] == {"p50": None, "p90": None, "p99": None}
    from ..helpers import schema_errors
    assert schema_errors(summary) == []
    # the days, with no date to print beside them
    assert re.search(r"\n +completion P50 7\d,\d{3}, P90 7\d,\d{3}\n", out), out


def test_date_ticks_stop_at_the_ends_of_the_calendar():
    from mcrisk.report.html.gantt import date_ticks

    first = dt.date(1, 1, 1)
    ticks = date_ticks(first, -500.0, 400.0)                # from 500 days before 0001-01-01
    assert ticks[0] == (0.0, "Jan 1") and all(day >= 0 for day, _ in ticks)
    last = dt.date(9999, 12, 1)
    ticks = date_ticks(last, -100.0, 80_000.0)              # 80,000 days after, past 9999
    assert 3 <= len(ticks) <= 9 and ticks[-1][0] <= 30      # every few months, up to Dec 1
    assert date_ticks(last, 100.0, 200.0) == []             # no day of it is a date
    # a 100-year axis: a tick every 20 years, not every year
    ticks = date_ticks(START, 0.0, 36_525.0)
    assert [label for _, label in ticks] == [f"Jan {year}" for year in range(2040, 2127, 20)]
