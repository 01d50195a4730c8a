"""The report's "Job mix" table (issue 15 part 2), in report.html and summary.md: per strategy
in ranking order, the P50 and P90 of unservable_gpu_days and of each job class's homeless
days, read from summary.json (`jobs` per strategy, the top-level `jobs` block naming the
classes; mcrisk.results.jobs).

Only a run with a job mix has the table; without one both functions return nothing and the
page is what it was. The table states numbers only: no sentence ranks the strategies on
them (a difference may be Monte Carlo noise; the ranking and its paired test are the
report's Ranking section).
"""
from __future__ import annotations

from ..core.labels import label
from ..results.jobs import HOMELESS_PREFIX, UNSERVABLE
from .findings.sentences import fmt
from .html.parts import swatch
from .text import html_text, md_paragraph, md_text

STATISTICS = ("p50", "p90")
DEFINITION = ("Unservable GPU-days: demand (H100-eq × days) that total capacity could hold "
              "but the islands could not pack, since a job never spans two islands; homeless "
              "days of a class: the time during which no island holds one of its jobs. Both "
              "over days {start} to {horizon}; P50 and P90 over the scenarios.")


def job_rows(summary: dict) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(column labels, [(strategy, cells)]) of the table: strategies in ranking order, the
    cells fmt's text of each column's P50 and P90 in turn (unservable_gpu_days first, then
    each class's homeless days in the block's class order); ([], []) without a job mix."""
    block = summary.get("jobs")
    if not block:
        return [], []
    columns = [(UNSERVABLE, label(UNSERVABLE))] + [
        (f"{HOMELESS_PREFIX}{c['id']}", f"{label(HOMELESS_PREFIX + c['id'])} ({fmt(c['size'])})")
        for c in block["classes"]]
    order = summary.get("ranking") or list(summary["strategies"])
    rows = []
    for name in order:
        per = summary["strategies"][name]["jobs"]
        rows.append((name, [fmt(per[column][key]) for column, _ in columns
                            for key in STATISTICS]))
    return [label for _, label in columns], rows


def definition_text(summary: dict) -> str:
    """The table's one-line definition, with its window (0, or a status's as_of, to the
    horizon)."""
    start, end = summary["jobs"]["window_days"]
    return DEFINITION.format(start=fmt(start), horizon=fmt(end))


def jobs_html(summary: dict, colors: dict[str, str]) -> list[str]:
    """report.html's job-mix section (heading, definition, table); [] without a mix."""
    labels, rows = job_rows(summary)
    if not rows:
        return []
    # two header rows, so the table fits a page: each column once, then P50 and P90 under it
    top = "".join(f'<th class="n" colspan="{len(STATISTICS)}">{html_text(label)}</th>'
                  for label in labels)
    sub = "".join(f'<th class="n">{key.upper()}</th>' for _ in labels for key in STATISTICS)
    body = "".join(f'<tr><td class="name">{swatch(name, colors)}</td>'
                   + "".join(f'<td class="n">{html_text(cell)}</td>' for cell in cells)
                   + "</tr>" for name, cells in rows)
    return ['<h2 id="jobs">Job mix</h2>', f"<p>{html_text(definition_text(summary))}</p>",
            f'<div class="scroll"><table class="jobs"><tr><th rowspan="2">strategy</th>{top}'
            f"</tr><tr>{sub}</tr>{body}</table></div>"]


def jobs_markdown(summary: dict) -> list[str]:
    """summary.md's job-mix table, ending with a blank line; [] without a mix."""
    labels, rows = job_rows(summary)
    if not rows:
        return []
    headers = [f"{label} {key.upper()}" for label in labels for key in STATISTICS]
    lines = [md_paragraph("Job mix. " + definition_text(summary)), "",
             "| strategy | " + " | ".join(md_text(h) for h in headers) + " |",
             "|---|" + "---:|" * len(headers)]
    lines += [f"| {md_text(name)} | " + " | ".join(cells) + " |" for name, cells in rows]
    return [*lines, ""]
