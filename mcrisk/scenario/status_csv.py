"""A status as a tracking system exports it: a flat CSV of one fact per row.

    section,id,field,value
    status,,as_of,2027-06-01
    shipments,S1,arrived,2027-04-13
    units,N03,installed.row,B1
    units,N03,installed.start,118
    units,N03,burn_in.0.start,122
    units,N03,burn_in.0.passed,false
    risks,port-strike,occurred.impact,12
    risks,cdu-recall,occurred,false

`field` is the key path inside the entry, dotted; a number in it is an index into an array
(burn_in.0 is the first attempt). Values are read as a TOML value would be where they look
like one (numbers, true/false, dates) and as text otherwise. The rows become the document a
TOML status file holds, so both are validated by the same reader (status.py); each row's line
is where its Problems point.
"""
from __future__ import annotations

import csv
import datetime as _dt
import io
import re

from mcrisk.core.errors import NO_VALUE, Problem, ScenarioError

from .status_lines import KeyLines

HEADER = ["section", "id", "field", "value"]
_NUMBER = re.compile(r"^-?\d+(\.\d+)?([eE][-+]?\d+)?$")


def csv_document(file: str, data: bytes) -> tuple[dict, KeyLines]:
    """The document of a CSV status export and the line of each of its keys."""
    def refuse(line, message, hint):
        raise ScenarioError([Problem(file, "", NO_VALUE, message, hint, line=line)])

    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        refuse(None, "not UTF-8 text", "export the status as UTF-8 CSV")
    rows = list(csv.reader(io.StringIO(text)))
    if not rows or [c.strip().lower() for c in rows[0]] != HEADER:
        refuse(1, "the first row must be the header section,id,field,value",
               "export one fact per row under that header")
    document: dict = {}
    lines: dict[str, int] = {}
    for number, row in enumerate(rows[1:], start=2):
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) != 4:
            refuse(number, f"has {len(row)} cells, not 4", "section,id,field,value")
        section, ident, field, value = (c.strip() for c in row)
        path = [section] + ([ident] if section != "status" else []) + field.split(".")
        key = ".".join(path[:2]) if section != "status" else "status"
        lines.setdefault(key, number)
        _put(document, path, _value(value), file, number)
        lines.setdefault(_key_of(path), number)
    return document, KeyLines(lines)


def _key_of(path: list[str]) -> str:
    """The reader's key path of `path`: an index as [i]."""
    key = ""
    for part in path:
        key = f"{key}[{part}]" if part.isdigit() else (f"{key}.{part}" if key else part)
    return key


def _value(text: str):
    if text.lower() in ("true", "false"):
        return text.lower() == "true"
    if _NUMBER.match(text):
        return float(text) if any(c in text for c in ".eE") else int(text)
    try:
        return _dt.date.fromisoformat(text)
    except ValueError:
        return text


def _put(document: dict, path: list[str], value, file: str, line: int) -> None:
    """document[path] = value, creating tables and arrays (an index part) on the way."""
    node = document
    for i, part in enumerate(path):
        last = i == len(path) - 1
        nxt = path[i + 1] if not last else None
        if isinstance(node, list):
            index = int(part)
            while len(node) <= index:
                node.append({})
            if last:
                node[index] = value
            else:
                node = node[index]
            continue
        if last:
            if part in node:
                raise ScenarioError([Problem(file, _key_of(path), value, "given twice",
                                             "one row per fact", line=line)])
            node[part] = value
        else:
            node = node.setdefault(part, [] if nxt.isdigit() else {})
