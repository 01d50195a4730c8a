"""Errors a user can act on. The CLI prints them and exits; nothing else does."""
from __future__ import annotations

from dataclasses import dataclass


class McriskError(Exception):
    """An error caused by input or environment, with a message fit for the user."""

    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One located problem in a scenario file (or a status or search file).

    Renders as `file: key.path = value: what is wrong (hint)`, or `file:line: ...` where the
    line of the key is known (status files); `key` is a dotted path with 0-based indices into
    arrays (`shipments[1].arrival.delay.p90`).
    """

    file: str
    key: str
    value: object
    message: str
    hint: str = ""
    line: int | None = None

    def __str__(self) -> str:
        file, key = one_line(self.file), one_line(self.key)
        if self.line is not None:
            file = f"{file}:{self.line}"
        where = f"{file}: {key}" if key else file
        value = "" if self.value is _NO_VALUE else f" = {_render(self.value)}"
        hint = f" ({one_line(self.hint)})" if self.hint else ""
        return f"{where}{value}: {one_line(self.message)}{hint}"


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE = _NoValue()
NO_VALUE = _NO_VALUE


VALUE_WIDTH = 60   # characters a rendered value may take, "..." included


def _render(value: object) -> str:
    """The value as the file would show it, on one line and at most VALUE_WIDTH characters.

    Strings are quoted and escaped as repr does (a NUL, ESC or newline in a value must not reach
    the terminal raw); whole floats print without '.0' unless they are too large to read so.
    """
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        text = str(int(value))
    else:
        text = one_line(_safe_repr(value))
    return text if len(text) <= VALUE_WIDTH else text[:VALUE_WIDTH - 3] + "..."


def _safe_repr(value: object) -> str:
    """repr(value), or a short description when it cannot be shown: nested too deeply, or an
    integer beyond Python's digit limit for conversion to text."""
    try:
        return repr(value)
    except RecursionError:
        return f"<{type(value).__name__} nested too deeply to show>"
    except ValueError:
        if isinstance(value, int):
            return f"<an integer of about {int(value.bit_length() * 0.30103) + 1} digits>"
        return f"<{type(value).__name__} too large to show>"


def one_line(text: str) -> str:
    """`text` with every character that is not printable (control characters such as NUL,
    ESC and newlines, line separators, bidi overrides) escaped as repr would write it."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class ScenarioError(McriskError):
    """A scenario file failed validation; carries every problem found in one pass."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class BackendUnavailable(McriskError):
    """A backend was asked for by name and cannot run here."""
