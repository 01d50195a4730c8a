"""The reader and the typed accessors every section is read with.

`Reader` collects the Problems of one file and the ids read so far; `Table` is a TOML
table at a key path (unknown keys reported at once); the `_as_*` functions read one value
each (number, probability, integer, string, name, choice, id list with ranges) and report
what is wrong, returning None in place of a value they could not read, so one pass finds
every problem. Also the helpers messages share: suggestions, counts, references, uniqueness.
"""
from __future__ import annotations

import difflib
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass

from mcrisk.core.errors import NO_VALUE, Problem
from mcrisk.core.model import (Distribution, ExistingUnit, Hall, IncomingUnit, Island, Row, Shipment,
                          UnitType)

from .limits import MAX_ENTRIES, MAX_ID_LENGTH, MAX_RANGE, MAX_UNITS, Limit


class Reader:
    """Collects the Problems of one file, and the ids read so far for cross-references.

    Every reading function reports what is wrong here and returns None in place of a value it
    could not read, so one pass finds every problem; the model is built only when none was
    found. A registry (dict by id) is None when its section could not be read completely:
    checks against it are skipped, because they would only repeat an earlier problem.
    """

    def __init__(self, file: str):
        self.file = file
        self.problems: list[Problem] = []
        self.shared_delays: dict[str, Distribution | None] | None = {}
        self.islands: dict[str, Island] | None = {}
        self.unit_types: dict[str, UnitType] | None = {}
        self.halls: dict[str, Hall] | None = {}
        self.rows: dict[str, Row] | None = {}
        self.has_retrofit = False
        self.existing: dict[str, ExistingUnit] | None = {}
        self.incoming: dict[str, IncomingUnit] | None = {}
        self.unit_keys: dict[str, str] = {}     # unit id -> key path that defined it
        self.shipments: dict[str, Shipment] | None = {}
        self.has_costs = False                  # whether the file has a [costs] section
        self.power_contracts: dict | None = {}  # hall id -> PowerContract ([[costs.power]])
        self.hall_step_events: dict = {}        # hall id -> [(key, event)]: its steps on events

    def report(self, key: str, value: object, message: str, hint: str = "") -> None:
        self.problems.append(Problem(self.file, key, value, message, hint))


REQUIRED = object()  # default of a key that must be given


@dataclass(frozen=True)
class Spec:
    """What a key means, for hints: `add {name} = {example}, {why}`."""

    name: str
    example: str
    why: str

    @property
    def type_hint(self) -> str:
        return f"for example {self.name} = {self.example}"


class Table:
    """A TOML table at a key path. Reports unknown keys at once; typed reads report the rest."""

    def __init__(self, r: Reader, key: str, data: dict, allowed: tuple[str, ...]):
        self.r, self.key, self.data = r, key, data
        for name, value in data.items():
            if name not in allowed:
                r.report(self.at(name), value, "unknown key",
                         did_you_mean(name, allowed, "allowed keys", compact=False))

    def at(self, name: str) -> str:
        """The key path of `name` in this table."""
        return f"{self.key}.{name}" if self.key else name

    def read(self, name: str, convert, example: str, why: str, default=REQUIRED, **options):
        """convert(reader, key, value, spec, **options) of the value at `name`, or the default.

        A missing required key is reported and reads as None.
        """
        if name not in self.data:
            if default is REQUIRED:
                self.r.report(self.at(name), NO_VALUE, "missing", f"add {name} = {example}, {why}")
                return None
            return default
        return convert(self.r, self.at(name), self.data[name], Spec(name, example, why), **options)

    def table(self, name: str, allowed: tuple[str, ...], why: str, default=REQUIRED):
        """The sub-table at `name` as a Table; None when absent (reported if required)."""
        if name not in self.data:
            if default is REQUIRED:
                self.r.report(self.at(name), NO_VALUE, "missing", f"add a [{name}] table, {why}")
            return None
        return as_table(self.r, self.at(name), self.data[name], allowed)

    def tables(self, name: str, allowed: tuple[str, ...], example: str, why: str,
               default=REQUIRED) -> list[Table | None] | None:
        """The array of tables at `name`: one Table per entry, None for an entry that is not
        a table (reported). None when the key is absent and required, or is not an array
        (both reported); `default` when absent and optional.
        """
        if name not in self.data:
            if default is REQUIRED:
                add = f"add [[{name}]] tables" if not self.key else f"add {name} = {example}"
                self.r.report(self.at(name), NO_VALUE, "missing", f"{add}, {why}")
                return None
            return default
        value, key = self.data[name], self.at(name)
        if not isinstance(value, list):
            form = f"[[{name}]] tables" if not self.key else f"{name} = {example}"
            self.r.report(key, value, f"must be an array of tables, not {type_name(value)}",
                          f"write {form}")
            return None
        if not count_ok(self.r, key, len(value), MAX_ENTRIES, "entries"):
            return None
        return [as_table(self.r, f"{key}[{i}]", item, allowed) for i, item in enumerate(value)]


def count_ok(r: Reader, key: str, count: int, limit: int, what: str,
              hint: str = "every entry costs time in every scenario; see Limits in the "
                          "scenario format") -> bool:
    """Whether `count` entries are within `limit` (reports if not)."""
    if count <= limit:
        return True
    r.report(key, NO_VALUE, f"has {count:,} {what}, more than {limit:,}", hint)
    return False


def as_table(r: Reader, key: str, value: object, allowed: tuple[str, ...]) -> Table | None:
    if not isinstance(value, dict):
        r.report(key, value, f"must be a table, not {type_name(value)}",
                 f"allowed keys: {', '.join(allowed)}")
        return None
    return Table(r, key, value, allowed)


# --------------------------------------------------------------------------------------------
# Values: numbers, strings, id lists


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def type_name(value: object) -> str:
    """The TOML type of a value, for 'must be X, not Y'."""
    if isinstance(value, bool):
        return "a boolean"
    if is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return "a date-time"


def format_number(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def format_limit(number: float) -> str:
    """A limit as people read it: 7,300; 1,000,000,000 (an int to its last digit, which a
    float would round past 2**53)."""
    if isinstance(number, int):
        return f"{number:,}"
    return f"{number:,.0f}" if float(number).is_integer() else repr(float(number))


def as_number(r, key, value, spec: Spec, at_least=None, above=None,
               at_most: Limit | None = None):
    """A float within the bounds given, or None (reported)."""
    if not is_number(value):
        r.report(key, value, f"must be a number, not {type_name(value)}", spec.type_hint)
        return None
    try:
        number = float(value)
    except OverflowError:  # TOML integers are unbounded: 0xffff... is beyond any float
        r.report(key, value, "is too large for a number", spec.type_hint)
        return None
    if not math.isfinite(number):  # TOML allows inf and nan; nan would pass every bound
        r.report(key, value, "must be a finite number", spec.type_hint)
        return None
    return _within(r, key, value, number, spec, at_least, above, at_most)


def _within(r, key, value, number, spec: Spec, at_least=None, above=None,
            at_most: Limit | None = None):
    """`number` if within the bounds given, else None (reported on `value`)."""
    if at_least is not None and number < at_least:
        bound, why = f">= {format_number(at_least)}", spec.why
    elif above is not None and number <= above:
        bound, why = f"> {format_number(above)}", spec.why
    elif at_most is not None and number > at_most.value:
        bound, why = f"<= {format_limit(at_most.value)}", at_most.why
    else:
        return number
    r.report(key, value, f"must be {bound}", why)
    return None


def as_probability(r, key, value, spec: Spec):
    """A float in [0, 1], or None (reported)."""
    if is_number(value) and math.isfinite(value) and not 0 <= value <= 1:
        r.report(key, value, "must be a probability in [0, 1]", spec.why)
        return None
    return as_number(r, key, value, spec)


def as_integer(r, key, value, spec: Spec, at_least: int = 0, at_most: Limit | None = None):
    """An int in [at_least, at_most] (a whole float is accepted), or None (reported). An int
    is compared as itself: as a float, 2**63 - 1 would round up past a limit of 2**63 - 1
    (a seed), and any int past 2**53 would lose its last digits. (Without at_most, or beyond
    any float, an int goes through as_number, which says it is too large for a number.)"""
    if (isinstance(value, int) and not isinstance(value, bool) and at_most is not None
            and abs(value) <= sys.float_info.max):
        return _within(r, key, value, value, spec, at_least=at_least, at_most=at_most)
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        r.report(key, value, "must be a whole number", spec.type_hint)
        return None
    number = as_number(r, key, value, spec, at_least=at_least, at_most=at_most)
    return None if number is None else int(number)


def as_string(r, key, value, spec: Spec, empty_ok: bool = False):
    if not isinstance(value, str):
        r.report(key, value, f"must be a string, not {type_name(value)}", spec.type_hint)
        return None
    if not value and not empty_ok:
        r.report(key, value, "must not be empty", spec.type_hint)
        return None
    return value


def as_name(r, key, value, spec: Spec):
    """An id or name: a non-empty string of printable characters on one line, without
    leading or trailing spaces, at most MAX_ID_LENGTH long; or None (reported).

    Names reach the terminal, HTML, Markdown and --fail-if conditions (which strip spaces)."""
    text = as_string(r, key, value, spec)
    if text is not None and not check_name(r, key, text):
        return None
    return text


def check_name(r, key, text: str) -> bool:
    """Whether `text` is printable, one line, unpadded and short enough (reports if not)."""
    if not text.isprintable():
        bad = next(c for c in text if not c.isprintable())
        r.report(key, text, f"contains the control or unprintable character {bad!r}",
                 "ids and names are one line of printable characters")
    elif text != text.strip():
        r.report(key, text, "starts or ends with a space",
                 "remove it: names are compared exactly and --fail-if strips spaces")
    elif len(text) > MAX_ID_LENGTH:
        r.report(key, text, f"is {len(text):,} characters long, more than {MAX_ID_LENGTH}",
                 "give a shorter id: it labels tables and charts")
    else:
        return True
    return False


def as_choice(r, key, value, spec: Spec, options: tuple[str, ...]):
    text = as_string(r, key, value, spec)
    if text is not None and text not in options:
        allowed = " or ".join(repr(o) for o in options)
        r.report(key, value, f"must be {allowed}", did_you_mean(text, options, spec.name + " values"))
        return None
    return text


_NUMBERED = re.compile(r"(.*?)(\d+)")
_RANGE_HINT = 'write a range like "N01..N16": same prefix, numbers counting up'


def _expand_range(r, key, text: str) -> list[str] | None:
    """'N01..N16' -> N01, N02, ..., N16 (zero padding by the width of the first number)."""
    first, _, last = text.partition("..")
    a, b = _NUMBERED.fullmatch(first), _NUMBERED.fullmatch(last)
    if not a or not b:
        r.report(key, text, "malformed range: both ends must end in a number", _RANGE_HINT)
    elif a[1] != b[1]:
        r.report(key, text, f"malformed range: the ends have different prefixes "
                            f"({a[1]!r} and {b[1]!r})", _RANGE_HINT)
    elif int(b[2]) < int(a[2]):
        r.report(key, text, f"malformed range: the end ({int(b[2])}) is before the start "
                            f"({int(a[2])})", "write the lower number first")
    elif int(b[2]) - int(a[2]) >= MAX_RANGE:
        r.report(key, text, f"range too long: more than {MAX_RANGE} ids", _RANGE_HINT)
    else:
        width = len(a[2])
        return [f"{a[1]}{n:0{width}d}" for n in range(int(a[2]), int(b[2]) + 1)]
    return None


def as_ids(r, key, value, spec: Spec, empty_ok: bool = False):
    """An id list: a string or an array of strings, each an id or a range 'N01..N16'.

    Returns the expanded ids in order, or None (reported) if any item is bad or repeated.
    """
    if not isinstance(value, (str, list)):
        r.report(key, value, f"must be an id or an array of ids, not {type_name(value)}",
                 spec.type_hint)
        return None
    items = [(key, value)] if isinstance(value, str) else \
        [(f"{key}[{i}]", item) for i, item in enumerate(value)]
    if not items and not empty_ok:
        r.report(key, value, "must name at least one id", spec.type_hint)
        return None
    ids: list[str] = []
    ok = True
    for item_key, item in items:
        expanded = _expand_item(r, item_key, item, spec)
        ok = ok and expanded is not None
        ids.extend(expanded or ())
        if len(ids) > MAX_ENTRIES:     # stop before ranges pile up millions of ids
            r.report(key, NO_VALUE, f"names more than {MAX_ENTRIES:,} ids",
                     f"no scenario has more than {MAX_UNITS:,} units; see Limits in the "
                     "scenario format")
            return None
    for ident, count in Counter(ids).items():
        if count > 1:
            r.report(key, ident, f"names {ident} more than once", "list each id once")
            ok = False
    return tuple(ids) if ok else None


def _expand_item(r, key, item, spec: Spec) -> list[str] | None:
    if not isinstance(item, str) or not item.strip():
        what = "an empty string" if isinstance(item, str) else type_name(item)
        r.report(key, item, f"must be a non-empty id, not {what}", spec.type_hint)
        return None
    ends = item.split("..", 1)    # each end of a range is an id (and its number short)
    if not all(check_name(r, key, end) for end in ends if end):
        return None
    return _expand_range(r, key, item) if ".." in item else [item]


def did_you_mean(word: object, choices, noun: str, compact: bool = True) -> str:
    """'did you mean 'x'?' when a choice is close to `word`, else the list of choices."""
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1) if isinstance(word, str) else []
    if close:
        return f"did you mean {close[0]!r}?"
    if not choices:
        return f"no {noun} are defined"
    listed = compact_ids(choices) if compact else ", ".join(choices)
    return f"{noun}: {listed}"


def compact_ids(ids: list[str]) -> str:
    """'N01, N02, N03, B1' -> 'N01..N03, B1': runs of consecutive numbered ids as ranges,
    for people (an id may hold ", " itself: a file takes compact_runs' items)."""
    return ", ".join(compact_runs(ids))


def compact_runs(ids: list[str]) -> list[str]:
    """['N01', 'N02', 'N03', 'B1'] -> ['N01..N03', 'B1']: the items of an id list that
    expands to `ids`, runs of consecutive numbered ids as ranges."""
    runs: list[list[str]] = []
    for ident in ids:
        if runs and _next_id(runs[-1][-1]) == ident:
            runs[-1].append(ident)
        else:
            runs.append([ident])
    return [run[0] if len(run) == 1 else f"{run[0]}..{run[-1]}" for run in runs]


def _next_id(ident: str) -> str | None:
    match = _NUMBERED.fullmatch(ident)
    return match and f"{match[1]}{int(match[2]) + 1:0{len(match[2])}d}"


def count_text(n: int, noun: str) -> str:
    """'1 position', '2 positions'."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def check_ref(r, key, ident, registry, noun: str) -> bool:
    """Whether `ident` names an entry of `registry` (reports if not; True if unknowable)."""
    if registry is None or ident in registry:
        return True
    r.report(key, ident, f"unknown {noun}", did_you_mean(ident, registry, f"known {noun}s"))
    return False


def check_unique(r, seen: dict[str, str], ident, key: str, what: str) -> bool:
    """Whether `ident` is new: records where it is defined, or reports that it was before.

    `what` names the id in messages: 'island id', 'strategy name'. The first definition is
    the one later checks see, so a duplicate is reported once rather than by every user.
    """
    if ident is None:
        return False
    if ident in seen:
        r.report(key, ident, f"duplicate {what}, also at {seen[ident]}",
                 f"give each its own {what.split()[-1]}")
        return False
    seen[ident] = key
    return True
