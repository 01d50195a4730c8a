"""The scenario file as a TOML document: its bytes (a regular file, not too large), decoded
and parsed, nested no deeper than MAX_NESTING. Every way a file can fail here is one located
Problem in a ScenarioError, never another exception. The bottom of mcrisk.scenario: it knows
nothing of what the document means.
"""
from __future__ import annotations

import os
import stat
import sys

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from mcrisk.core.errors import NO_VALUE, Problem, ScenarioError

from .limits import MAX_FILE_BYTES, MAX_NESTING


def read_file_bytes(file: str) -> bytes:
    """The file's bytes; a ScenarioError for a file that cannot be read, is not a regular file
    (a FIFO would block, /dev/zero read forever) or is larger than MAX_FILE_BYTES."""
    def refuse(message: str, hint: str):
        return ScenarioError([Problem(file, "", NO_VALUE, message, hint)])

    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it
        fd = os.open(file, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    except OSError as exc:
        raise refuse(f"cannot read the file: {exc.strerror}", "check the path") from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        raise refuse(f"not a regular file (a {_file_kind(mode)})",
                     "give the path of a scenario's .toml file")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_FILE_BYTES + 1)
        except OSError as exc:
            raise refuse(f"cannot read the file: {exc.strerror}", "check the path") from None
    if len(data) > MAX_FILE_BYTES:
        raise refuse(f"larger than {MAX_FILE_BYTES // 2**20} MiB",
                     "a scenario file is a few kB; check that this is the scenario")
    return data


def _file_kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    for test, kind in ((stat.S_ISDIR, "directory"), (stat.S_ISFIFO, "named pipe"),
                       (stat.S_ISCHR, "character device"), (stat.S_ISBLK, "block device"),
                       (stat.S_ISSOCK, "socket")):
        if test(mode):
            return kind
    return "special file"


def parse_toml(file: str, data: bytes) -> dict:
    """The TOML document. A UTF-8 byte order mark (some Windows editors write one) is skipped;
    every way the text can fail is one located Problem, never another exception."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ScenarioError([Problem(file, "", NO_VALUE, f"not UTF-8 text (byte {exc.start})",
                                     "save the file as UTF-8")]) from None
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        message, hint = f"invalid TOML: {exc}", "fix the syntax at that line and column"
    except RecursionError:
        message = (f"arrays, tables or dotted keys nested too deeply to read (at line "
                   f"{_first_failing_line(text, RecursionError)})")
        hint = "a scenario nests them a few levels deep; look for a run of [, { or ."
    except ValueError as exc:  # Python's limit on digits of an integer (4300)
        what = str(exc).split(";")[0]   # without Python's advice to raise the limit
        message = f"invalid TOML: {what} (at line {_first_failing_line(text, ValueError)})"
        hint = "a number in a scenario has a few digits"
    raise ScenarioError([Problem(file, "", NO_VALUE, message, hint)]) from None


def _first_failing_line(text: str, error: type) -> int:
    """The first line at which parsing `text` raises `error` (not a TOML syntax error): the
    smallest n such that its first n lines raise it, by bisection (parsing reads the text in
    order, so a prefix that raises it stays raising it when it grows)."""
    lines = text.split("\n")

    def raises(n: int) -> bool:
        try:
            tomllib.loads("\n".join(lines[:n]))
        except tomllib.TOMLDecodeError:
            return False
        except error:
            return True
        return False

    low, high = 1, len(lines)
    while low < high:
        middle = (low + high) // 2
        if raises(middle):
            high = middle
        else:
            low = middle + 1
    return low


def too_deep(document: dict) -> str | None:
    """The key path of a value nested more than MAX_NESTING levels deep, or None.

    tomllib reads some deep nestings that later code could not show (repr recurses)."""
    stack: list[tuple[object, str, int]] = [(document, "", 0)]
    while stack:
        node, key, depth = stack.pop()
        if depth > MAX_NESTING:
            return key
        if isinstance(node, dict):
            stack += [(v, f"{key}.{k}" if key else k, depth + 1) for k, v in node.items()]
        elif isinstance(node, list):
            stack += [(v, f"{key}[{i}]", depth + 1) for i, v in enumerate(node)]
    return None
