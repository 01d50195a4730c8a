"""The schedule as tables: milestones.parquet, and CSV copies of the ranking, the per-strategy
summary and the milestones for spreadsheets (`mcrisk run --csv`).

milestones.parquet / milestones.csv: one row per strategy x milestone, columns
    strategy, key, name, kind, group, level, mean, p10, p50, p90, p90_ci_low, p90_ci_high,
    criticality, samples
and, when the scenario sets start_date, p10_date, p50_date, p90_date (the calendar day each
falls on: start_date + floor(day)); with a status, `actual` (reached by as_of: the same day
in every world, a fact, not a decision floored at as_of) and `actual_day` (null where not reached), and with start_date
`actual_date`; the file's metadata then has `as_of`. Days are float64; a value that does not
exist is null (an empty cell in CSV).
"""
from __future__ import annotations

import csv
import io
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from ..results.ranking import rank_label
from ..core.definitions import METRICS
from ..results.milestones import QUANTILES
from ..core.outputs import write_atomic

MILESTONES_FILE = "milestones.parquet"
MILESTONES_CSV = "milestones.csv"
RANKING_CSV = "ranking.csv"
STRATEGIES_CSV = "strategies.csv"
STATS = ("mean", "p50", "p90", "p99")


def milestone_rows(milestones: dict) -> list[dict]:
    """Tidy rows of summary.json's `milestones`."""
    dated = milestones.get("start_date") is not None
    status = milestones.get("as_of") is not None
    rows = []
    for strategy, items in milestones["strategies"].items():
        for m in items:
            ci = m.get("p90_ci") or [None, None]
            row = {"strategy": strategy, "key": m["key"], "name": m["name"], "kind": m["kind"],
                   "group": m["group"], "level": m["level"], "mean": m["mean"],
                   "p10": m["p10"], "p50": m["p50"], "p90": m["p90"],
                   "p90_ci_low": ci[0], "p90_ci_high": ci[1],
                   "criticality": m["criticality"], "samples": milestones["samples"]}
            if dated:
                for key, _ in QUANTILES:
                    row[f"{key}_date"] = m["dates"][key]
            if status:
                row["actual"] = bool(m["actual"])
                row["actual_day"] = m.get("actual_day")
                if dated:
                    row["actual_date"] = m.get("actual_date")
            rows.append(row)
    return rows


def write_milestones_parquet(path: Path, milestones: dict) -> Path:
    rows = milestone_rows(milestones)
    fields = [pa.field(k, pa.string()) for k in ("strategy", "key", "name", "kind", "group",
                                                  "level")]
    fields += [pa.field(k, pa.float64()) for k in ("mean", "p10", "p50", "p90", "p90_ci_low",
                                                   "p90_ci_high", "criticality")]
    fields.append(pa.field("samples", pa.int64()))
    dated = milestones.get("start_date") is not None
    if dated:
        fields += [pa.field(f"{k}_date", pa.date32()) for k, _ in QUANTILES]
    if milestones.get("as_of") is not None:
        fields += [pa.field("actual", pa.bool_()), pa.field("actual_day", pa.float64())]
        fields += [pa.field("actual_date", pa.date32())] if dated else []
    schema = pa.schema(fields)
    if milestones.get("as_of") is not None:
        schema = schema.with_metadata({b"as_of": repr(float(milestones["as_of"])).encode()})
    columns = {}
    for f in schema:
        values = [r[f.name] for r in rows]
        if pa.types.is_date32(f.type):
            import datetime as _dt
            values = [_dt.date.fromisoformat(v) if v else None for v in values]
        columns[f.name] = pa.array(values, type=f.type)
    table = pa.Table.from_pydict(columns, schema=schema)
    buffer = io.BytesIO()
    pq.write_table(table, buffer)
    return write_atomic(Path(path), buffer.getvalue())


def _csv_bytes(header: list[str], rows: list[list]) -> bytes:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    for row in rows:
        writer.writerow(["" if v is None else _safe(v) for v in row])
    return text.getvalue().encode("utf-8")


def _safe(value):
    """A text cell that a spreadsheet would run as a formula (=, +, -, @ first) is quoted
    with a leading apostrophe; numbers are written as they are."""
    if isinstance(value, str) and value[:1] in ("=", "+", "-", "@", "\t", "\r"):
        return "'" + value
    return value


def write_csvs(folder: Path, summary: dict) -> list[Path]:
    """ranking.csv, strategies.csv and (when the summary has milestones) milestones.csv."""
    folder = Path(folder)
    ranks = summary.get("ranks") or {}
    ranking = []
    for k, name in enumerate(summary["ranking"]):
        entry = ranks.get(name)
        ranking.append([rank_label(entry) if entry else k + 1, name,
                        ", ".join(entry.get("tied_with") or ()) if entry else "",
                        (entry.get("decided_by") or "") if entry else ""])
    paths = [write_atomic(folder / RANKING_CSV,
                          _csv_bytes(["rank", "strategy", "tied_with", "decided_by"], ranking))]
    timed = [m for m in METRICS if m != "power_violation"]
    header = ["strategy"] + [f"{m}_{s}" for m in timed for s in STATS]
    header += [f"{m}_p90_ci_{end}" for m in timed for end in ("low", "high")]
    header.append("power_violation_probability")
    rows = []
    for name in summary["ranking"]:
        entry = summary["strategies"][name]
        row = [name] + [entry[m].get(s) for m in timed for s in STATS]
        row += [end for m in timed for end in (entry[m].get("p90_ci") or [None, None])]
        row.append(entry["power_violation"].get("probability"))
        rows.append(row)
    paths.append(write_atomic(folder / STRATEGIES_CSV, _csv_bytes(header, rows)))
    if summary.get("milestones"):
        tidy = milestone_rows(summary["milestones"])
        head = list(tidy[0]) if tidy else ["strategy", "key"]
        paths.append(write_atomic(folder / MILESTONES_CSV,
                                  _csv_bytes(head, [[r[k] for k in head] for r in tidy])))
    return paths


def _day(value) -> str:
    return "n/a" if value is None else f"{value:,.1f}"


def format_schedule(milestones: dict, strategy: str, everything: bool = False) -> str:
    """The milestone table of one strategy for the terminal: P10, P50, P90 with its 95%
    interval, criticality, and with start_date the P50 and P90 dates with weekdays. Waves
    only unless `everything` (then per-unit milestones too). With a status, a milestone
    reached by as_of shows 'actual' and its day (and date) instead."""
    from ..results.milestones import share_text, weekday
    from .text import visible

    dated = milestones.get("start_date") is not None
    items = [m for m in milestones["strategies"][strategy]
             if everything or m["level"] == "wave"]
    width = max([len("milestone")] + [len(visible(m["name"])) for m in items])
    head = (f"{'milestone':{width}}  {'P10':>7} {'P50':>7} {'P90 [95% CI]':>24}  {'critical':>8}")
    if dated:
        head += f"  {'P50 date':>14}  {'P90 date':>14}"
    lines = [head]
    for m in items:
        if m.get("actual"):
            lines.append(_actual_line(m, width, dated))
            continue
        ci = m.get("p90_ci")
        interval = f"[{ci[0]:,.1f}, {ci[1]:,.1f}]" if ci else "[n/a]"
        line = (f"{visible(m['name']):{width}}  {_day(m['p10']):>7} {_day(m['p50']):>7} "
                f"{_day(m['p90']) + ' ' + interval:>24}  {share_text(m['criticality']):>8}")
        if dated:
            for key in ("p50", "p90"):
                iso = m["dates"][key]
                line += f"  {(weekday(iso) + ' ' + iso) if iso else 'n/a':>14}"
        lines.append(line)
    start = milestones.get("start_date")
    exact = ("exact" if milestones["exact"] else
             f"within {milestones.get('widest_bin_days', milestones['bin_days']) / 2:g} day "
             f"(binned past "
             f"{milestones['exact_up_to']:,} scenarios)")
    lines.append(f"days from day 0{f' = {start} ({weekday(start)})' if start else ''}; "
                 f"percentiles over {milestones['samples']:,} scenarios, {exact}; critical = "
                 "share of scenarios in which it lies on the critical path to completion")
    if milestones.get("as_of") is not None:
        lines.append(f"actual: reached by the status date, day {_day(milestones['as_of'])}: "
                     "the same day in every world (a fact), shown instead of percentiles")
    return "\n".join(lines)


def _actual_line(m: dict, width: int, dated: bool) -> str:
    """A reached milestone's row: 'actual' and its day across the percentile columns, its
    date in the date columns."""
    from ..results.milestones import weekday
    from .text import visible

    line = (f"{visible(m['name']):{width}}  {'actual':>7} {_day(m['actual_day']):>7} "
            f"{'':>24}  {'':>8}")
    if dated:
        iso = m.get("actual_date")
        line += f"  {(weekday(iso) + ' ' + iso) if iso else 'n/a':>14}  {'':>14}"
    return line.rstrip()
