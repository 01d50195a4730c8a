"""Errors a user can act on. The CLI prints them and exits; nothing else does."""
from __future__ import annotations

from dataclasses import dataclass


class McriskError(Exception):
    """An error caused by input or environment, with a message fit for the user."""

    exit_code = 2


@dataclass(frozen=True)
class Problem:
    """One located problem in a scenario file.

    Renders as `file: key.path = value: what is wrong (hint)`; `key` is a dotted path with
    0-based indices into arrays (`shipments[1].arrival.delay.p90`).
    """

    file: str
    key: str
    value: object
    message: str
    hint: str = ""

    def __str__(self) -> str:
        where = f"{self.file}: {self.key}" if self.key else self.file
        value = "" if self.value is _NO_VALUE else f" = {_render(self.value)}"
        hint = f" ({self.hint})" if self.hint else ""
        return f"{where}{value}: {self.message}{hint}"


class _NoValue:
    def __repr__(self) -> str:
        return "<no value>"


_NO_VALUE = _NoValue()
NO_VALUE = _NO_VALUE


def _render(value: object) -> str:
    if isinstance(value, str):
        return repr(value) if value != "" else "''"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class ScenarioError(McriskError):
    """A scenario file failed validation; carries every problem found in one pass."""

    def __init__(self, problems: list[Problem]):
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


class BackendUnavailable(McriskError):
    """A backend was asked for by name and cannot run here."""
