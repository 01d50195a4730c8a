"""User strings made safe for each place the report shows them.

Strategy names, ids, descriptions, the scenario name and values read back from a history are
written by users (or by whoever edited a history folder). Each output shows them literally:

    visible       control and other invisible characters (NUL, ESC, newlines, bidi
                  overrides) as escapes like \\x1b and \\n, so they never reach a terminal, a
                  page or a figure raw; the base of every function below
    html_text     for report.html: visible, then HTML-escaped
    md_text       for Markdown inside a line and table cells: visible, then every character
                  Markdown or inline HTML would interpret (\\ ` * _ [ ] | < > &) escaped,
                  and GitHub's extensions' too: $ (math: "$1.2M ... $3.4M" was a
                  formula) and ~ (strikethrough)
    md_paragraph  md_text for text that starts a line (no heading or list item either)
    md_code       for a Markdown code span: visible, fenced with more backticks than it holds

Figures need visible only: they are drawn with mathtext off (see figures/charts.py).
"""
from __future__ import annotations

import html
import re

_MARKDOWN_SPECIAL = {"\\": "\\\\", "`": "\\`", "*": "\\*", "_": "\\_", "[": "\\[", "]": "\\]",
                     "|": "\\|", "<": "&lt;", ">": "&gt;", "&": "&amp;", "$": "\\$",
                     "~": "\\~"}
_BLOCK_START = re.compile(r"[#+=-]|\d{1,9}(?=[.)])")
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape_char(char: str) -> str:
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    code = ord(char)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}" if code < 0x10000 \
        else f"\\U{code:08x}"


def visible(text: object) -> str:
    """`text` on one line with every non-printable character written as an escape.

    Non-printable as str.isprintable() means it: control characters, line and paragraph
    separators, and format characters such as bidi overrides and zero-width spaces, any of
    which could move a terminal's cursor, end a line in a report, or make a name look like
    another.
    """
    text = str(text)
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape_char(c) for c in text)


def html_text(text: object) -> str:
    """A user string for HTML text or an attribute value."""
    return html.escape(visible(text))


def md_text(text: object) -> str:
    """A user string for Markdown prose or a table cell, inside a line, rendered literally."""
    return "".join(_MARKDOWN_SPECIAL.get(c, c) for c in visible(text))


def md_paragraph(text: object) -> str:
    """md_text for text that starts a line: a leading `#`, `+`, `-`, `=` or `12.` would
    otherwise make a heading, a list item or an underline of the line above."""
    escaped = md_text(text)
    start = _BLOCK_START.match(escaped)
    if start is None:
        return escaped
    at = start.end() if start[0][0].isdigit() else 0     # 12\. or \#
    return f"{escaped[:at]}\\{escaped[at:]}"


def md_code(text: object) -> str:
    """A user string as a Markdown code span (shown literally, in a monospace font)."""
    text = visible(text)
    longest = run = 0
    for char in text:
        run = run + 1 if char == "`" else 0
        longest = max(longest, run)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") or not text.strip() else ""
    return f"{fence}{pad}{text}{pad}{fence}"
