"""Small pieces of report.html that every section uses: a strategy's colour swatch with its
name, an interval in brackets, a table cell's text and a column heading that wrap only between
their parts, a figure with its caption, the horizon's date, and a box of nightly remarks.
User strings are written through text.html_text (escaped, invisible characters shown)."""
from __future__ import annotations

import base64
import re

from ..findings.sentences import fmt
from ..text import html_text

# The parts of a cell such as '21,146 [14,056, 28,237] helps' or '$61.1M to $56.3M within
# noise': an interval in brackets, 'a to b', a run of words, any other run of non-spaces.
_PART = re.compile(r"\[[^\]]*\]|\S+ to \S+|[A-Za-z][A-Za-z ]*[A-Za-z]|\S+")


def parts_html(text: str) -> str:
    """A table cell's plain text as HTML that may wrap between its parts (value, interval,
    verdict) but never inside one: each part with a space in it is a span of class `u`
    (white-space: nowrap). The text reads the same; only a narrow table (in print) wraps it."""
    out, end = [], 0
    for m in _PART.finditer(text):
        part = html_text(m.group())
        out += [html_text(text[end:m.start()]),
                f"<span class='u'>{part}</span>" if " " in m.group() else part]
        end = m.end()
    return "".join(out) + html_text(text[end:])


def heading_html(text: str) -> str:
    """A column heading that wraps between words but not inside a short group in brackets or
    parentheses: '(H100-eq)' and '[95% CI]' stay whole (spans of class u)."""
    return re.sub(r"[\[(][^\])]{1,12}[\])]", lambda m: f"<span class='u'>{m.group()}</span>",
                  html_text(text))


def figure_html(chart: str | bytes, alt: str, caption: str, extra: str = "") -> str:
    """A figure (an SVG element, figures.svg: every text in it escaped where it was built;
    or PNG bytes, the nightly's trend chart) with its caption (plain text, escaped here) and
    `extra`, HTML built by the caller from escaped parts (a table of what the lines are).
    `alt` names the chart for assistive technology, in place of the chart's own label."""
    if isinstance(chart, bytes):
        data = base64.b64encode(chart).decode("ascii")
        return (f'<figure><img alt="{html_text(alt)}" src="data:image/png;base64,{data}">'
                f"<figcaption>{html_text(caption)}{extra}</figcaption></figure>")
    start = chart.index('aria-label="')
    end = chart.index('"', start + len('aria-label="'))
    chart = f'{chart[:start]}aria-label="{html_text(alt)}{chart[end:]}'
    return (f'<figure class="svg">{chart}'
            f"<figcaption>{html_text(caption)}{extra}</figcaption></figure>")


def swatch(name: str, colors: dict[str, str]) -> str:
    """The strategy's name after a square of its colour (the same in every figure)."""
    return f'<span class="swatch" style="background:{colors[name]}"></span>{html_text(name)}'


def interval_text(m: dict, key: str = "p90_ci") -> str:
    """[low, high] of the interval m[key], or [n/a] where summary.json has none (null: too
    few scenarios for it to exist)."""
    if m.get(key) is None:
        return "[n/a]"
    low, high = m[key]
    return f"[{fmt(low)}, {fmt(high)}]"


def horizon_date_text(summary: dict) -> str:
    """' (Fri 2027-07-23), day 0 = Mon 2027-01-04' after the horizon when the run has a
    start_date; empty otherwise."""
    from ...results.milestones import weekday

    start, end = summary.get("start_date"), summary.get("horizon_date")
    if not start:
        return ""
    return (f" ({weekday(end)} {html_text(end)})" if end else "") + \
        f" · day 0 = {weekday(start)} {html_text(start)}"


def notes_html(notes) -> str:
    """Nightly remarks (an earlier night that could not be compared with, and why)."""
    if not notes:
        return ""
    return ('<div class="warn"><ul>' + "".join(f"<li>{html_text(n)}</li>" for n in notes)
            + "</ul></div>")
