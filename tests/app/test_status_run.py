"""A run with a status, end to end (issue 25): the future window, the history as facts, the
milestones reached, the executing strategy, in every output (summary.json and its schema,
metrics.parquet's and milestones.parquet's metadata and columns, summary.md, report.html,
the terminal, `mcrisk schedule`'s table).

The Status is built here in Python and passed through the run's own seam (run_status), as
run_scenario does once it takes a status: the worlds are not conditioned on it, so the tiny
migration's fixed durations make its past the same in every world, and the facts below are
what happened in swap-on-day's worlds. Every number is worked out by hand. The tiny
migration (tests/conftest.py): capacity 256 until the drains on day 10 (swap-on-day), 0 until
the racks' acceptance on day 27, 360 after; the old units removed on day 15; demand 256.
"""
from __future__ import annotations

import datetime as dt
import json

import pyarrow.parquet as pq
import pytest

from mcrisk.app.run import _run_prepared, load_for_run, prepare_backend
from mcrisk.backends.chunks import default_chunk
from mcrisk.cli import _print_run
from mcrisk.core.definitions import DAYS_PER_MONTH
from mcrisk.core.progress import QUIET
from mcrisk.core.status import Status, UnitStatus
from mcrisk.plan.compile import compile_scenario
from mcrisk.report.schedule_tables import format_schedule
from mcrisk.report.tables import STATUS_METADATA

from ..helpers import md_flat, page_text, schema_errors

SHA = "ab" * 32
AS_OF = 15.0
COSTS = """
[costs]
[[costs.power]]
hall = "H"
reserved_kw = 150
price_per_kw_month = 150

[costs.running]
old = 1500
"""


def dated(path, executing: str | None = "swap-gated", costs: bool = True):
    """The tiny scenario at `path` with a start date, an executing strategy and [costs]."""
    text = path.read_text().replace(
        "horizon_days = 100", 'horizon_days = 100\nstart_date = "2027-01-04"'
        + (f'\nexecuting = "{executing}"' if executing else ""))
    path.write_text(text + (COSTS if costs else ""))
    return path


def status(as_of: float = AS_OF) -> Status:
    """swap-on-day's facts by day 15: both old units drained on day 10 and removed on day 15."""
    return Status(path="status.toml", sha256=SHA, as_of=as_of,
                  as_of_date=dt.date(2027, 1, 4) + dt.timedelta(days=int(as_of)),
                  units=tuple(UnitStatus(u, drained=10.0, removed=15.0) for u in ("E1", "E2")))


def run_status(path, out, state: Status | None, samples: int = 40, report: bool = False):
    """A run of the scenario at `path` with `state`, through _run_prepared (run_scenario's
    seam once its backend is ready), on Numba, without the value of mitigation."""
    register = load_for_run(path)
    plan = compile_scenario(register.scenario)
    simulation = dict(samples=samples, seed=1, backend=prepare_backend("numba", plan),
                      chunk_size=default_chunk(plan, None), progress=QUIET, precision=None)
    return _run_prepared(register.scenario, plan, out, report, True, False,
                         lambda result, backend: {"risks": register.entry(), "mitigation": None},
                         simulation, status=state)


@pytest.fixture(scope="module")
def reported(tmp_path_factory):
    """One run with a status and its report (drawing the figures takes a few seconds)."""
    from ..conftest import TINY, TINY_DEFAULTS

    folder = tmp_path_factory.mktemp("status")
    path = folder / "tiny.toml"
    path.write_text(TINY.format(**TINY_DEFAULTS))
    return run_status(dated(path), folder / "out", status(), report=True)


def test_summary_has_the_status_its_window_and_the_history_by_hand(reported):
    s = reported.summary
    assert schema_errors(s) == []
    st = s["status"]
    assert (st["path"], st["sha256"], st["as_of"], st["as_of_date"]) == (
        "status.toml", SHA, 15.0, "2027-01-19")
    assert st["window_days"] == [15.0, 100.0] and st["history"]["window_days"] == [0.0, 15.0]
    assert st["happened"] == ["Old units: 2 of 2 drained, 2 removed"]
    assert [(e["day"], e["id"], e["event"]) for e in st["events"]] == [
        (10.0, "E1", "drain started"), (10.0, "E2", "drain started"),
        (15.0, "E1", "removed"), (15.0, "E2", "removed")]
    history = st["history"]["strategies"]
    assert st["history"]["certain"]             # fixed durations: every world agrees
    on_day, gated = history["swap-on-day"], history["swap-gated"]
    # swap-on-day: no capacity on [10, 15), demand 256; swap-gated: nothing happened yet
    assert {m: on_day[m]["value"] for m in ("trough_depth", "trough_days",
                                            "shortfall_gpu_days", "homeless_days")} == {
        "trough_depth": 256.0, "trough_days": 5.0, "shortfall_gpu_days": 1280.0,
        "homeless_days": 5.0}
    assert all(gated[m]["value"] == 0.0 for m in ("trough_depth", "trough_days"))
    # spent by day 15: 150 kW reserved x 15 days, both old units run 15 days
    reserved = 150 * 15 / DAYS_PER_MONTH * 150
    for row in (on_day, gated):
        assert row["costs"]["cost_power_reserved"]["value"] == pytest.approx(reserved)
        assert row["costs"]["cost_old_fleet"]["value"] == 2 * 15 * 1500
        assert row["costs"]["cost_total"]["value"] == pytest.approx(reserved + 45_000)
    assert s["costs"]["window_days"] == [15.0, 100.0]
    assert s["executing"] == "swap-gated"


def test_the_run_s_numbers_count_the_future(reported):
    m = reported.summary["strategies"]["swap-on-day"]
    assert m["trough_days"]["p90"] == 12.0                  # [15, 27)
    assert m["shortfall_gpu_days"]["p90"] == 256.0 * 12
    assert m["trough_depth"]["p90"] == 256.0                # against the day-0 baseline
    assert m["completion_day"]["p90"] == 27.0               # a day of the plan
    assert reported.plan.window_start == 15.0
    # costs from day 15: the reservation's 85 days, the old fleet nothing (removed on day 15)
    costs = m["costs"]
    assert costs["cost_power_reserved"]["p90"] == pytest.approx(150 * 85 / DAYS_PER_MONTH * 150)
    assert costs["cost_old_fleet"]["p90"] == 0.0


def test_milestones_reached_by_as_of_show_their_actual_day(reported):
    milestones = reported.summary["milestones"]
    assert milestones["as_of"] == 15.0
    on_day = {m["key"]: m for m in milestones["strategies"]["swap-on-day"]}
    assert on_day["drain:E1"]["actual"] and on_day["drain:E1"]["actual_day"] == 10.0
    assert on_day["drain:E1"]["actual_date"] == "2027-01-14"
    assert on_day["removed:E2"]["actual"] and on_day["removed:E2"]["actual_day"] == 15.0
    assert not on_day["arrival:S1"]["actual"] and "actual_day" not in on_day["arrival:S1"]
    gated = {m["key"]: m for m in milestones["strategies"]["swap-gated"]}
    assert not gated["drain:E1"]["actual"]      # drains on acceptance, day 27
    table = pq.read_table(reported.out_dir / "milestones.parquet")
    assert table.schema.names[-3:] == ["actual", "actual_day", "actual_date"]
    assert table.schema.metadata[b"as_of"] == b"15.0"
    rows = [r for r in table.to_pylist() if r["strategy"] == "swap-on-day"
            and r["key"] == "drain:E1"]
    assert rows[0]["actual"] and rows[0]["actual_date"] == dt.date(2027, 1, 14)
    text = format_schedule(milestones, "swap-on-day", everything=True)
    line = next(x for x in text.splitlines() if x.startswith("E1 drain starts"))
    assert "actual" in line and "10.0" in line and "2027-01-14" in line
    assert "reached by the status date, day 15.0" in text


def test_metrics_parquet_records_the_status(reported):
    metadata = pq.read_schema(reported.out_dir / "metrics.parquet").metadata
    assert metadata[b"status_sha256"] == SHA.encode() and metadata[b"as_of"] == b"15.0"
    assert json.loads(metadata[b"window_days"]) == [15.0, 100.0]
    block = json.loads(metadata[STATUS_METADATA])
    assert block == reported.summary["status"]


def test_summary_md_leads_with_the_executing_strategy_then_the_status(reported):
    # summary.md is the short form (issue 26): the executing plan, the status in a line, the
    # ranking; report.html keeps the status section, its provenance and the history table
    md = md_flat((reported.out_dir / "summary.md").read_text())
    executing = md.index("**Executing: swap-gated, ranked ")
    status = md.index("Status as of day 15 (")
    ranking = md.index("Ranking, best first")
    assert executing < status < ranking
    assert "2027-01-19" in md[status:ranking] and "Old units: 2 of 2 drained, 2 removed" in md
    assert "| swap-gated (executing) |" in md and "the status" in md.split("long form")[-1]
    page = page_text(reported.out_dir / "report.html")
    assert SHA in page and "Old units: 2 of 2 drained, 2 removed" in page
    assert "swap-on-day 256 5 1,280 5" in page
    assert "over days 15 to 100" in page


def test_report_html_has_the_executing_block_the_status_and_its_provenance(reported):
    page = (reported.out_dir / "report.html").read_text()
    assert page.index('id="executing"') < page.index('id="status"') < page.index(
        'id="findings"') < page.index('id="ranking"')
    assert "Executing: swap-gated" in page and "<h3>Realized so far</h3>" in page
    assert f"<code>{SHA}</code>" in page            # provenance
    assert "status as of day 15 (2027-01-19)" in page
    assert "(actual)</text>" in page                # the Gantt's reached milestones
    assert "What each strategy costs over the window [15, 100] days" in page
    assert "<b>Status</b> as of day 15: every metric above and every cost count" in page


def test_terminal_shows_the_status_and_marks_the_executing_strategy(reported, capsys):
    _print_run(reported)
    out = capsys.readouterr().out
    assert f"Status as of day 15 (2027-01-19), from status.toml (sha256 {SHA[:12]})" in out
    assert "days 15 to 100 (the horizon)" in out
    assert "Executing: swap-gated, ranked" in out
    assert next(line for line in out.splitlines() if "swap-gated" in line
                and line.endswith("<- executing"))
    assert "cost in USD over days 15-100" in out


def test_a_history_figure_that_differs_between_worlds_is_not_a_fact(tiny, tmp_path):
    # the racks' arrival drawn in [20, 30]: acceptance in [27, 37], so swap-on-day's trough
    # before day 30 lasts 17 to 20 days, world by world
    path = dated(tiny(delay='{ dist = "uniform", min = 0, max = 10 }'), costs=False)
    run = run_status(path, None, status(30.0))
    figure = run.summary["status"]["history"]["strategies"]["swap-on-day"]["trough_days"]
    assert not figure["certain"] and not run.summary["status"]["history"]["certain"]
    assert 17.0 <= figure["min"] < figure["value"] < figure["max"] <= 20.0
    assert figure["value"] == pytest.approx((figure["min"] + figure["max"]) / 2, abs=1.0)
    assert run.summary["strategies"]["swap-on-day"]["trough_days"]["p90"] <= 7.0
    assert schema_errors(run.summary) == []


def test_without_a_status_there_is_no_status_key_and_no_window(tiny, tmp_path):
    run = run_status(dated(tiny(), executing=None), tmp_path / "out", None)
    assert "status" not in run.summary and "executing" not in run.summary
    assert run.plan.window_start == 0.0 and run.summary["costs"]["window_days"] == [0.0, 100.0]
    assert "as_of" not in run.summary["milestones"]
    assert all("actual" not in m for m in run.summary["milestones"]["strategies"]["swap-gated"])
    assert pq.read_schema(tmp_path / "out" / "metrics.parquet").metadata is None
    assert "actual" not in pq.read_schema(tmp_path / "out" / "milestones.parquet").names


def test_the_executing_strategy_leads_without_a_status_too(tiny, tmp_path, capsys):
    run = run_status(dated(tiny()), None, None)
    assert run.summary["executing"] == "swap-gated"
    _print_run(run)
    out = capsys.readouterr().out
    assert "Executing: swap-gated, ranked 1= of 2 (tied with swap-on-day). P90 trough depth 0" \
        in out and "still at risk" not in out and "leader" not in out


def test_a_decision_floored_at_as_of_is_not_an_actual_milestone():
    # day150.toml records no drain: big-bang's day-60 drain happens at as_of in every world,
    # the same day everywhere, yet it has not happened; the arrivals it records have.
    from mcrisk.app.schedule import run_schedule
    from ..helpers import ROOT
    schedule = run_schedule(ROOT / "scenarios/reference-2048.toml", "big-bang", 200, 1,
                            backend="numpy",
                            status=ROOT / "scenarios/reference-2048-status/day150.toml")
    rows = {m["name"]: m for m in schedule.milestones["strategies"]["big-bang"]}
    drain = rows["SU1..SU8: first drain starts"]
    assert drain["p10"] == drain["p90"] == 150.0 and not drain["actual"]
    assert rows["shipment S1 arrives"]["actual"]
    assert rows["shipment S1 arrives"]["actual_day"] == 102.0
