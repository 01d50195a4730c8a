"""A migration in flight in every output: the status (file, hash, as_of), what has happened,
the history realized so far as facts, what the other numbers are about, and the executing
strategy's block; read from summary.json (`status`, built by mcrisk.results.history, and
`executing`).

The words are made here once, as plain text (status_words, history_rows, executing_words);
status_markdown / status_html and executing_markdown / executing_html set them for
summary.md and report.html, and the terminal (mcrisk.cli.text) prints the same lines. A run
without a status has no `status` block and one without an executing strategy no
`executing`: every function then returns nothing and the outputs are what they were.
"""
from __future__ import annotations

from ..core.labels import heading, label
from ..results.compare import money_text
from ..results.history import HISTORY_METRICS, same_for_every_strategy
from ..results.ranking import rank_label
from .findings.sentences import fmt
from .html.parts import swatch
from .text import html_text, md_code, md_paragraph, md_text

EVERY_STRATEGY = "every strategy"
UNCERTAIN_MARK = "~"


def day_with_date(day: float | None, iso: str | None) -> str:
    """'day 150 (2027-06-01)', or 'day 150' without a date."""
    return f"day {fmt(day)}" + (f" ({iso})" if iso else "")


def status_words(s: dict) -> dict | None:
    """The status's lines as plain text, or None without a status: `title` (as of when, from
    which file and hash), `window` (what the ranking, P90s, alerts and optimize are about),
    `happened` (a line per kind of fact) and `history` (what the history table holds)."""
    st = s.get("status")
    if not st:
        return None
    start, end = st["window_days"]
    history = st["history"]
    worlds = history["worlds"]
    return {
        "title": (f"Status as of {day_with_date(st['as_of'], st.get('as_of_date'))}, from "
                  f"{st['path']} (sha256 {st['sha256'][:12]})"),
        "window": (f"The ranking, every P90 and percentile, the alerts and optimize are about "
                   f"what is still at risk: days {fmt(start)} to {fmt(end)} (the horizon). "
                   f"Days 0 to {fmt(start)} are history, the same in every world "
                   "conditioned on the status, and are reported here apart, as facts; the "
                   "baseline is still the capacity at day 0, and completion and milestone "
                   "days still count from day 0."),
        "happened": list(st["happened"]),
        "history": (f"Realized so far (days 0 to {fmt(start)}), measured once on {worlds} "
                    "worlds of the run"
                    + ("" if history["certain"] else
                       f"; a figure marked {UNCERTAIN_MARK} is not a fact: it differs "
                       "between those worlds, as it depends on a quantity the status does not "
                       "fix (a price drawn per world, a demand forecast's growth, a per-GPU "
                       "performance not measured); their mean and range are shown")
                    + ". One-off costs (a mitigation's) have no date and count with the "
                    "future."),
    }


def _cell(f: dict, money: str | None = None) -> str:
    """A history figure as text: its value, or '~mean (min-max)' when it is not a fact."""
    def show(x):
        return money_text(x, money) if money is not None else fmt(x)

    if f["certain"]:
        return show(f["value"])
    return f"{UNCERTAIN_MARK}{show(f['value'])} ({show(f['min'])}-{show(f['max'])})"


def history_rows(s: dict) -> tuple[list[str], list[tuple[str, list[str]]]]:
    """(headers, [(strategy, cells)]) of the history table: trough depth, trough days,
    shortfall, homeless days and, with costs, cost spent (cost_total); one row for every
    strategy when their histories are the same, else one per strategy in ranking order.
    ([], []) without a status."""
    st = s.get("status")
    if not st:
        return [], []
    history = st["history"]["strategies"]
    currency = (s.get("costs") or {}).get("currency")
    headers = [heading(m) for m in HISTORY_METRICS]
    if currency is not None:
        headers.append(f"cost spent ({currency})")

    def cells(row: dict) -> list[str]:
        out = [_cell(row[m]) for m in HISTORY_METRICS]
        if currency is not None:
            out.append(_cell(row["costs"]["cost_total"], currency))
        return out

    if same_for_every_strategy(history):
        return headers, [(EVERY_STRATEGY, cells(next(iter(history.values()))))]
    order = [n for n in s.get("ranking") or history if n in history]
    return headers, [(name, cells(history[name])) for name in order]


def status_markdown(s: dict) -> list[str]:
    """summary.md's status section (before the ranking), ending with a blank line; [] without
    a status."""
    words = status_words(s)
    if words is None:
        return []
    st = s["status"]
    headers, rows = history_rows(s)
    lines = ["## A migration in flight", "",
             md_paragraph(f"Status as of {day_with_date(st['as_of'], st.get('as_of_date'))}, "
                          "from ") + md_code(st["path"]) + f" (sha256 {md_text(st['sha256'])}).",
             "", md_paragraph(words["window"]), "", "What has happened:", ""]
    lines += [f"- {md_text(line)}" for line in words["happened"]]
    lines += ["", md_paragraph(words["history"]), "",
              "| strategy | " + " | ".join(md_text(h) for h in headers) + " |",
              "|---|" + "---:|" * len(headers)]
    lines += [f"| {md_text(name)} | " + " | ".join(md_text(c) for c in cells) + " |"
              for name, cells in rows]
    start, end = st["window_days"]
    return [*lines, "", f"## Ranking: days {fmt(start)} to {fmt(end)}", ""]


def status_html(s: dict, colors: dict[str, str]) -> list[str]:
    """report.html's status section (before the ranking): heading, the status, the window,
    what has happened (and every dated fact, folded) and the history table; [] without a
    status."""
    words = status_words(s)
    if words is None:
        return []
    st = s["status"]
    headers, rows = history_rows(s)
    events = "".join(
        f"<tr><td class=\"n\">{html_text(day_with_date(e['day'], e.get('date')))}</td>"
        f"<td>{html_text(e['kind'])} {html_text(e['id'])}</td><td>{html_text(e['event'])}</td>"
        "</tr>" for e in st["events"])
    table = ("<table><tr><th>strategy</th>"
             + "".join(f'<th class="n">{html_text(h)}</th>' for h in headers) + "</tr>"
             + "".join('<tr><td class="name">'
                       + (html_text(name) if name == EVERY_STRATEGY else swatch(name, colors))
                       + "</td>" + "".join(f'<td class="n">{html_text(c)}</td>' for c in cells)
                       + "</tr>" for name, cells in rows) + "</table>")
    return ['<h2 id="status">A migration in flight</h2>',
            f'<div class="findings"><p><b>{html_text(words["title"])}</b>.</p>'
            f"<p>{html_text(words['window'])}</p></div>",
            "<h3>What has happened</h3><ul>"
            + "".join(f"<li>{html_text(line)}</li>" for line in words["happened"]) + "</ul>",
            *([f"<details><summary>Every dated fact ({len(st['events']):,})</summary>"
               f"<table><tr><th>when</th><th>what</th><th>event</th></tr>{events}</table>"
               "</details>"] if st["events"] else []),
            "<h3>Realized so far</h3>", f"<p>{html_text(words['history'])}</p>", table]


def executing_words(s: dict) -> str | None:
    """The executing strategy's block as one paragraph of plain text (where it ranks, its
    P90 trough depth and shortfall, its completion P50 / P90 and, with costs, its cost), or
    None when the scenario names none."""
    name = s.get("executing")
    if not name or name not in s.get("strategies", {}):
        return None
    m = s["strategies"][name]
    ranking = s.get("ranking") or []
    entry = (s.get("ranks") or {}).get(name)
    place = rank_label(entry) if entry else str(ranking.index(name) + 1)
    first = entry["rank"] == 1 if entry else ranking[:1] == [name]
    tied = entry.get("tied_with") if entry else []
    where = (f"ranked {place} of {len(ranking)}"
             + (f" (tied with {', '.join(tied)})" if tied else "")
             + ("" if first else f"; the leader is {ranking[0]}"))
    dates = m.get("completion_date") or {}
    completion = " / ".join(day_with_date(m["completion_day"][k], dates.get(k))
                            for k in ("p50", "p90"))
    window = (s.get("status") or {}).get("window_days")
    text = (f"Executing: {name}, {where}. P90 {label('trough_depth')} "
            f"{fmt(m['trough_depth']['p90'])} H100-eq, P90 {label('shortfall_gpu_days')} "
            f"{fmt(m['shortfall_gpu_days']['p90'])} H100-eq x days, completion P50 / P90 "
            f"{completion}")
    if "costs" in m and s.get("costs"):
        currency = s["costs"]["currency"]
        total = m["costs"]["cost_total"]
        text += (f", cost mean {money_text(total['mean'], currency)}, P90 "
                 f"{money_text(total['p90'], currency)}")
    if window:
        text += f" (over days {fmt(window[0])} to {fmt(window[1])}, what is still at risk)"
    return text + "."


def executing_markdown(s: dict) -> list[str]:
    """summary.md's executing block, first after the header; [] without one."""
    text = executing_words(s)
    return [f"**{md_text(text)}**", ""] if text else []


def executing_html(s: dict, colors: dict[str, str]) -> list[str]:
    """report.html's executing block, first after the header; [] without one."""
    text = executing_words(s)
    if text is None:
        return []
    color = colors.get(s["executing"])
    mark = f'<span class="swatch" style="background:{color}"></span>' if color else ""
    return [f'<div class="findings executing" id="executing"><p>{mark}<b>{html_text(text)}</b>'
            "</p></div>"]
