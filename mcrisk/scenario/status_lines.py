"""Where a key of a status file is written: the line a Problem points to.

TOML and JSON parsers give a document without positions, so the lines are found again in the
text: for TOML, every `[table]` header and `key = value` line (and each entry of an array of
inline tables written one per line) is recorded under its key path; a CSV export records each
row's key path (status_csv.py). A key not recorded (a key inside an inline table) points to
the nearest recorded key above it in the path, and a path with nothing recorded to no line.
"""
from __future__ import annotations

import re

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$")
_ASSIGN = re.compile(r"^\s*([A-Za-z0-9_\-\"'. ]+?)\s*=")
_INDEX = re.compile(r"\[(\d+)\]$")


def _parts(dotted: str) -> list[str]:
    """The parts of a TOML dotted key, quotes removed (`units."N-03".end`)."""
    return [p.strip().strip("\"'") for p in re.findall(r'"[^"]*"|\'[^\']*\'|[^.]+', dotted)]


class KeyLines:
    """Key path -> 1-based line number, for what a file's text shows."""

    def __init__(self, lines: dict[str, int] | None = None):
        self.lines = dict(lines or {})

    @classmethod
    def of_text(cls, text: str, suffix: str) -> KeyLines:
        return cls(_toml_lines(text)) if suffix not in (".json", ".csv") else cls()

    def line_of(self, key: str) -> int | None:
        """The line of `key`, or of its nearest recorded parent; None when none is."""
        while key:
            if key in self.lines:
                return self.lines[key]
            stripped = _INDEX.sub("", key)
            key = stripped if stripped != key else key.rpartition(".")[0]
        return None


def _toml_lines(text: str) -> dict[str, int]:
    found: dict[str, int] = {}
    table: list[str] = []
    array_key, entry = None, 0
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("#", 1)[0] if '"' not in line and "'" not in line else line
        header = _HEADER.match(code)
        if header and "=" not in code:
            table, array_key = _parts(header.group(1)), None
            found.setdefault(".".join(table), number)
            continue
        if array_key is not None:
            if code.lstrip().startswith("{"):
                found.setdefault(f"{array_key}[{entry}]", number)
                entry += 1
            if "]" in code and "{" not in code.split("]")[-1]:
                array_key = None
            continue
        assign = _ASSIGN.match(code)
        if assign:
            key = ".".join(table + _parts(assign.group(1)))
            found.setdefault(key, number)
            rest = code[assign.end():].strip()
            if rest.startswith("[") and "]" not in rest:
                array_key, entry = key, 0
                if rest[1:].lstrip().startswith("{"):
                    found.setdefault(f"{key}[0]", number)
                    entry = 1
    return found
