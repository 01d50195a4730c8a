"""Load a scenario file (TOML), validate all of it in one pass, and build `mcrisk.model.Scenario`.

    load_scenario(path) -> Scenario        raises ScenarioError carrying every Problem found
    read_scenario(path) -> (Scenario, bytes)   the same, with the bytes it was built from
    scenario_sha256(path) -> str           hex SHA-256 of the file's bytes

The format is documented in docs/scenario-format.md. Sections are read in dependency order
(shared delays, islands, unit types, halls, retrofit, fleets, shipments, strategies), so each
section checks its references against the ones read before it, whatever their order in the file.
Times are days from the plan's day 0, capacity is in H100-eq, power in kW.
"""
from __future__ import annotations

import datetime as _dt
import difflib
import hashlib
import math
import os
import re
import stat
import sys
from collections import Counter, defaultdict
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

from mcrisk.errors import NO_VALUE, Problem, ScenarioError
from mcrisk.model import (
    DISTRIBUTION_KINDS, ZERO, BurnIn, DateSpec, Demand, Distribution, ExistingUnit, Hall,
    IncomingUnit, Island, Ramp, Retrofit, Risk, Row, Scenario, Shipment, Strategy, Trigger,
    UnitType,
)

__all__ = ["load_scenario", "read_scenario", "scenario_sha256"]

COOLINGS = ("air", "liquid")
NO_RETROFIT = Retrofit(crews=1, days=ZERO)  # stands in when the file has no [retrofit]; never used

# Limits: values past them validate as numbers but crash, exhaust memory or hang a run, or mean
# nothing for a migration. docs/scenario-format.md (Limits) gives the reason for each.
MAX_FILE_BYTES = 16 * 2**20       # a scenario is a few kB; this is no scenario file
MAX_NESTING = 32                  # arrays and tables inside each other; a scenario uses ~6
MAX_ID_LENGTH = 100               # characters in an id or name
MAX_ENTRIES = 10_000              # entries of any array (rows, demand points, ...)
MAX_UNITS = 10_000                # existing and incoming units together
MAX_RANGE = MAX_UNITS             # ids one range may expand to
MAX_STRATEGIES = 100
MAX_HORIZON_DAYS = 7_300          # 20 years
MAX_DAYS = 36_500                 # any date, duration or lag: 100 years
MAX_LOGNORMAL_SPREAD = 1_000      # p90 / median
MAX_PERT_LAMBDA = 1_000
MAX_GPUS = 1_000_000              # GPUs in one unit
MAX_H100_EQ_PER_GPU = 1_000       # also the largest value a performance distribution can draw
MAX_TOTAL = 1e9                   # H100-eq of all units together, kW of all units, a hall's cap
MAX_RAMP_STEPS = 100
MAX_RMA_AFTER_FAILURES = 100
MAX_BURN_IN_ATTEMPTS = 1_000      # expected attempts of one unit's burn-in
RESERVED_STRATEGY_NAMES = ("any", "all")   # --fail-if targets meaning every strategy


# --------------------------------------------------------------------------------------------
# Public API


def scenario_sha256(path: str | os.PathLike) -> str:
    """Hex SHA-256 of the file's bytes, as recorded in `Scenario.sha256` and summary.json."""
    return hashlib.sha256(_read_bytes(os.fsdecode(path))).hexdigest()


def load_scenario(path: str | os.PathLike) -> Scenario:
    """Read, validate and build the scenario at `path`.

    Raises ScenarioError with every Problem found (file, key path, value, what is wrong, hint);
    never another exception for a bad file. `Scenario.path` is `path` as given, as a str.
    """
    return read_scenario(path)[0]


def read_scenario(path: str | os.PathLike) -> tuple[Scenario, bytes]:
    """load_scenario, and the bytes the Scenario was built from: the file is read once, so a
    caller that keeps a copy (the nightly's scenario.toml) keeps exactly the bytes that were
    parsed and that Scenario.sha256 hashes, even if the file changes meanwhile."""
    file = os.fsdecode(path)
    data = _read_bytes(file)
    document = _parse_toml(file, data)
    too_deep = _too_deep(document)
    if too_deep is not None:
        raise ScenarioError([Problem(file, too_deep, NO_VALUE, f"nested more than {MAX_NESTING} "
                                     "levels deep", "a scenario nests arrays and tables a few "
                                     "levels deep; look for a run of [ or {")])
    reader = _Reader(file)
    parts = _read_document(reader, document)
    if reader.problems:
        raise ScenarioError(reader.problems)
    return Scenario(path=file, sha256=hashlib.sha256(data).hexdigest(), **parts), data


def _read_bytes(file: str) -> bytes:
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


def _parse_toml(file: str, data: bytes) -> dict:
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


def _too_deep(document: dict) -> str | None:
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


# --------------------------------------------------------------------------------------------
# The reader: collects problems and what has been read so far


class _Reader:
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
        self.rows: dict[str, Row] | None = {}
        self.has_retrofit = False
        self.existing: dict[str, ExistingUnit] | None = {}
        self.incoming: dict[str, IncomingUnit] | None = {}
        self.unit_keys: dict[str, str] = {}     # unit id -> key path that defined it
        self.shipments: dict[str, Shipment] | None = {}

    def report(self, key: str, value: object, message: str, hint: str = "") -> None:
        self.problems.append(Problem(self.file, key, value, message, hint))


_REQUIRED = object()  # default of a key that must be given


@dataclass(frozen=True)
class _Spec:
    """What a key means, for hints: `add {name} = {example}, {why}`."""

    name: str
    example: str
    why: str

    @property
    def type_hint(self) -> str:
        return f"for example {self.name} = {self.example}"


class _Table:
    """A TOML table at a key path. Reports unknown keys at once; typed reads report the rest."""

    def __init__(self, r: _Reader, key: str, data: dict, allowed: tuple[str, ...]):
        self.r, self.key, self.data = r, key, data
        for name, value in data.items():
            if name not in allowed:
                r.report(self.at(name), value, "unknown key",
                         _suggest(name, allowed, "allowed keys", compact=False))

    def at(self, name: str) -> str:
        """The key path of `name` in this table."""
        return f"{self.key}.{name}" if self.key else name

    def read(self, name: str, convert, example: str, why: str, default=_REQUIRED, **options):
        """convert(reader, key, value, spec, **options) of the value at `name`, or the default.

        A missing required key is reported and reads as None.
        """
        if name not in self.data:
            if default is _REQUIRED:
                self.r.report(self.at(name), NO_VALUE, "missing", f"add {name} = {example}, {why}")
                return None
            return default
        return convert(self.r, self.at(name), self.data[name], _Spec(name, example, why), **options)

    def table(self, name: str, allowed: tuple[str, ...], why: str, default=_REQUIRED):
        """The sub-table at `name` as a _Table; None when absent (reported if required)."""
        if name not in self.data:
            if default is _REQUIRED:
                self.r.report(self.at(name), NO_VALUE, "missing", f"add a [{name}] table, {why}")
            return None
        return _as_table(self.r, self.at(name), self.data[name], allowed)

    def tables(self, name: str, allowed: tuple[str, ...], example: str, why: str,
               default=_REQUIRED) -> list[_Table | None] | None:
        """The array of tables at `name`: one _Table per entry, None for an entry that is not
        a table (reported). None when the key is absent and required, or is not an array
        (both reported); `default` when absent and optional.
        """
        if name not in self.data:
            if default is _REQUIRED:
                add = f"add [[{name}]] tables" if not self.key else f"add {name} = {example}"
                self.r.report(self.at(name), NO_VALUE, "missing", f"{add}, {why}")
                return None
            return default
        value, key = self.data[name], self.at(name)
        if not isinstance(value, list):
            form = f"[[{name}]] tables" if not self.key else f"{name} = {example}"
            self.r.report(key, value, f"must be an array of tables, not {_kind(value)}",
                          f"write {form}")
            return None
        if not _count_ok(self.r, key, len(value), MAX_ENTRIES, "entries"):
            return None
        return [_as_table(self.r, f"{key}[{i}]", item, allowed) for i, item in enumerate(value)]


def _count_ok(r: _Reader, key: str, count: int, limit: int, what: str,
              hint: str = "every entry costs time in every scenario; see Limits in the "
                          "scenario format") -> bool:
    """Whether `count` entries are within `limit` (reports if not)."""
    if count <= limit:
        return True
    r.report(key, NO_VALUE, f"has {count:,} {what}, more than {limit:,}", hint)
    return False


def _as_table(r: _Reader, key: str, value: object, allowed: tuple[str, ...]) -> _Table | None:
    if not isinstance(value, dict):
        r.report(key, value, f"must be a table, not {_kind(value)}",
                 f"allowed keys: {', '.join(allowed)}")
        return None
    return _Table(r, key, value, allowed)


# --------------------------------------------------------------------------------------------
# Values: numbers, strings, id lists


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _kind(value: object) -> str:
    """The TOML type of a value, for 'must be X, not Y'."""
    if isinstance(value, bool):
        return "a boolean"
    if _is_number(value):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return "a date-time"


def _fmt(number: float) -> str:
    return str(int(number)) if float(number).is_integer() else repr(float(number))


def _fmt_limit(number: float) -> str:
    """A limit as people read it: 7,300; 1,000,000,000."""
    return f"{number:,.0f}" if float(number).is_integer() else repr(float(number))


@dataclass(frozen=True)
class _Limit:
    """An upper bound of a value and why it exists (the hint when it is passed)."""

    value: float
    why: str


DAYS = _Limit(MAX_DAYS, "100 years: a migration's dates and durations are far shorter, and "
              "every sum of times stays finite")
TOTAL_H100_EQ = _Limit(MAX_TOTAL, "1e9 H100-eq is a thousand times the largest cluster; "
                       "capacity bands count in millionths of an H100-eq within 2**53")
TOTAL_KW = _Limit(MAX_TOTAL, "1e9 kW is a terawatt; power is counted in millionths of a kW "
                  "within 2**53")


def _as_number(r, key, value, spec: _Spec, at_least=None, above=None,
               at_most: _Limit | None = None):
    """A float within the bounds given, or None (reported)."""
    if not _is_number(value):
        r.report(key, value, f"must be a number, not {_kind(value)}", spec.type_hint)
        return None
    try:
        number = float(value)
    except OverflowError:  # TOML integers are unbounded: 0xffff... is beyond any float
        r.report(key, value, "is too large for a number", spec.type_hint)
        return None
    if not math.isfinite(number):  # TOML allows inf and nan; nan would pass every bound
        r.report(key, value, "must be a finite number", spec.type_hint)
        return None
    if at_least is not None and number < at_least:
        bound, why = f">= {_fmt(at_least)}", spec.why
    elif above is not None and number <= above:
        bound, why = f"> {_fmt(above)}", spec.why
    elif at_most is not None and number > at_most.value:
        bound, why = f"<= {_fmt_limit(at_most.value)}", at_most.why
    else:
        return number
    r.report(key, value, f"must be {bound}", why)
    return None


def _as_probability(r, key, value, spec: _Spec):
    """A float in [0, 1], or None (reported)."""
    if _is_number(value) and math.isfinite(value) and not 0 <= value <= 1:
        r.report(key, value, "must be a probability in [0, 1]", spec.why)
        return None
    return _as_number(r, key, value, spec)


def _as_integer(r, key, value, spec: _Spec, at_least: int = 0, at_most: _Limit | None = None):
    """An int in [at_least, at_most] (a whole float is accepted), or None (reported)."""
    if isinstance(value, float) and math.isfinite(value) and not value.is_integer():
        r.report(key, value, "must be a whole number", spec.type_hint)
        return None
    number = _as_number(r, key, value, spec, at_least=at_least, at_most=at_most)
    return None if number is None else int(number)


def _as_string(r, key, value, spec: _Spec, empty_ok: bool = False):
    if not isinstance(value, str):
        r.report(key, value, f"must be a string, not {_kind(value)}", spec.type_hint)
        return None
    if not value and not empty_ok:
        r.report(key, value, "must not be empty", spec.type_hint)
        return None
    return value


def _as_name(r, key, value, spec: _Spec):
    """An id or name: a non-empty string of printable characters on one line, without
    leading or trailing spaces, at most MAX_ID_LENGTH long; or None (reported).

    Names reach the terminal, HTML, Markdown and --fail-if conditions (which strip spaces)."""
    text = _as_string(r, key, value, spec)
    if text is not None and not _check_name(r, key, text):
        return None
    return text


def _check_name(r, key, text: str) -> bool:
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


def _as_choice(r, key, value, spec: _Spec, options: tuple[str, ...]):
    text = _as_string(r, key, value, spec)
    if text is not None and text not in options:
        allowed = " or ".join(repr(o) for o in options)
        r.report(key, value, f"must be {allowed}", _suggest(text, options, spec.name + " values"))
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


def _as_ids(r, key, value, spec: _Spec, empty_ok: bool = False):
    """An id list: a string or an array of strings, each an id or a range 'N01..N16'.

    Returns the expanded ids in order, or None (reported) if any item is bad or repeated.
    """
    if not isinstance(value, (str, list)):
        r.report(key, value, f"must be an id or an array of ids, not {_kind(value)}",
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


def _expand_item(r, key, item, spec: _Spec) -> list[str] | None:
    if not isinstance(item, str) or not item.strip():
        what = "an empty string" if isinstance(item, str) else _kind(item)
        r.report(key, item, f"must be a non-empty id, not {what}", spec.type_hint)
        return None
    ends = item.split("..", 1)    # each end of a range is an id (and its number short)
    if not all(_check_name(r, key, end) for end in ends if end):
        return None
    return _expand_range(r, key, item) if ".." in item else [item]


def _suggest(word: object, choices, noun: str, compact: bool = True) -> str:
    """'did you mean 'x'?' when a choice is close to `word`, else the list of choices."""
    choices = list(choices)
    close = difflib.get_close_matches(word, choices, n=1) if isinstance(word, str) else []
    if close:
        return f"did you mean {close[0]!r}?"
    if not choices:
        return f"no {noun} are defined"
    listed = _compact(choices) if compact else ", ".join(choices)
    return f"{noun}: {listed}"


def _compact(ids: list[str]) -> str:
    """'N01, N02, N03, B1' -> 'N01..N03, B1': runs of consecutive numbered ids as ranges."""
    runs: list[list[str]] = []
    for ident in ids:
        if runs and _next_id(runs[-1][-1]) == ident:
            runs[-1].append(ident)
        else:
            runs.append([ident])
    return ", ".join(run[0] if len(run) == 1 else f"{run[0]}..{run[-1]}" for run in runs)


def _next_id(ident: str) -> str | None:
    match = _NUMBERED.fullmatch(ident)
    return match and f"{match[1]}{int(match[2]) + 1:0{len(match[2])}d}"


def _count(n: int, noun: str) -> str:
    """'1 position', '2 positions'."""
    return f"{n:,} {noun}" if n == 1 else f"{n:,} {noun}s"


def _check_ref(r, key, ident, registry, noun: str) -> bool:
    """Whether `ident` names an entry of `registry` (reports if not; True if unknowable)."""
    if registry is None or ident in registry:
        return True
    r.report(key, ident, f"unknown {noun}", _suggest(ident, registry, f"known {noun}s"))
    return False


def _check_unique(r, seen: dict[str, str], ident, key: str, what: str) -> bool:
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


# --------------------------------------------------------------------------------------------
# Distributions and dates

_DIST_PARAMS = {
    "fixed": ("value",),
    "uniform": ("min", "max"),
    "triangular": ("min", "mode", "max"),
    "pert": ("min", "mode", "max", "lambda"),
    "lognormal": ("median", "p90"),
    "chance": ("p", "then"),
}
_PARAM_SPECS = {                       # example, meaning
    "value": ("5", "a duration in days"),
    "min": ("2", "the shortest duration in days"),
    "mode": ("4", "the most likely duration in days"),
    "max": ("10", "the longest duration in days"),
    "lambda": ("4", "the weight of the mode; 4 is classic PERT"),
    "median": ("14", "the median duration in days"),
    "p90": ("45", "the 90th percentile in days"),
    "p": ("0.35", "the probability that the duration is drawn, else it is 0"),
}
_DIST_EXAMPLE = '{ dist = "triangular", min = 2, mode = 4, max = 10 }'


def _as_distribution(r, key, value, spec: _Spec, inner: bool = False, limit: _Limit = DAYS):
    """A Distribution of days: a bare number (fixed) or a table with `dist`; None if bad.

    Every parameter but lambda and p is at most `limit` (DAYS unless the distribution is of
    something else, such as performance)."""
    if _is_number(value):
        days = _as_number(r, key, value, spec, at_least=0, at_most=limit)
        return None if days is None else Distribution.fixed(days)
    if not isinstance(value, dict):
        r.report(key, value, f"must be a number of days or a distribution table, not "
                             f"{_kind(value)}", f"for example {spec.name} = {_DIST_EXAMPLE}")
        return None
    kind = _dist_kind(r, key, value, inner)
    if kind is None:
        return None
    t = _Table(r, key, value, ("dist",) + _DIST_PARAMS[kind])
    return _DIST_READERS[kind](t, limit)


def _dist_kind(r, key, table: dict, inner: bool) -> str | None:
    kinds = ", ".join(DISTRIBUTION_KINDS)
    kind = table.get("dist", NO_VALUE)
    if kind is NO_VALUE:
        r.report(f"{key}.dist", NO_VALUE, "missing", f'add dist = "...", one of {kinds}')
    elif not isinstance(kind, str) or kind not in DISTRIBUTION_KINDS:
        r.report(f"{key}.dist", kind, "unknown distribution",
                 _suggest(kind, DISTRIBUTION_KINDS, "known distributions", compact=False))
    elif inner and kind == "chance":
        r.report(f"{key}.dist", kind, "a chance cannot draw from another chance",
                 "multiply the two probabilities into one chance")
    else:
        return kind
    return None


def _param(t: _Table, name: str, limit: _Limit, **bounds):
    """A distribution parameter in days (or lambda), in [0, limit] unless bounds say otherwise."""
    example, why = _PARAM_SPECS[name]
    return t.read(name, _as_number, example, why, **({"at_least": 0, "at_most": limit} | bounds))


def _compare(t: _Table, name: str, value, relation: str, other_name: str, other,
             hint: str) -> bool:
    """Whether `value relation other` holds (True when either failed to read); reports on
    `name` if it does not."""
    if value is None or other is None:
        return True
    holds = {">": value > other, ">=": value >= other, "<=": value <= other}[relation]
    if not holds:
        t.r.report(t.at(name), value, f"must be {relation} {other_name} ({_fmt(other)})", hint)
    return holds


_ORDER_HINT = "min <= mode <= max, with min < max"
_CERTAIN_HINT = "for a certain duration write the number alone"


def _read_fixed(t: _Table, limit: _Limit):
    value = _param(t, "value", limit)
    return None if value is None else Distribution.fixed(value)


def _read_uniform(t: _Table, limit: _Limit):
    low, high = _param(t, "min", limit), _param(t, "max", limit)
    ordered = _compare(t, "max", high, ">", "min", low,
                       _CERTAIN_HINT if low == high else "min < max")
    return Distribution("uniform", (low, high)) if ordered and None not in (low, high) else None


_LAMBDA = _Limit(MAX_PERT_LAMBDA, "beyond it a PERT is its mode to within 0.1%: write the "
                 "mode alone; far beyond, its quantiles cannot be computed")


def _read_triangular(t: _Table, limit: _Limit, kind: str = "triangular"):
    """triangular (min, mode, max) or pert (min, mode, max, lambda = 4).

    A degenerate one (min == max) is refused: a fixed number says the same more plainly.
    """
    low, mode, high = (_param(t, name, limit) for name in ("min", "mode", "max"))
    params = [low, mode, high]
    if kind == "pert":
        params.append(_param(t, "lambda", _LAMBDA, default=4.0, at_least=None, above=0))
    ordered = all([
        _compare(t, "max", high, ">", "min", low, _CERTAIN_HINT if low == high else _ORDER_HINT),
        _compare(t, "mode", mode, ">=", "min", low, _ORDER_HINT),
        _compare(t, "mode", mode, "<=", "max", high, _ORDER_HINT)])
    return Distribution(kind, tuple(params)) if ordered and None not in params else None


def _read_lognormal(t: _Table, limit: _Limit):
    median = _param(t, "median", limit, at_least=None, above=0)
    p90 = _param(t, "p90", limit)
    ordered = _compare(t, "p90", p90, ">", "median", median,
                       "the 90th percentile lies above the median; " + _CERTAIN_HINT)
    if ordered and None not in (median, p90) and p90 > MAX_LOGNORMAL_SPREAD * median:
        t.r.report(t.at("p90"), p90, f"must be <= {MAX_LOGNORMAL_SPREAD:,} x median "
                   f"({_fmt(MAX_LOGNORMAL_SPREAD * median)})",
                   "a wider lognormal's far tail (the generator reaches 8.2 sigma) passes "
                   "1e19 x the median; for 'usually nothing, sometimes long' use a chance")
        return None
    return Distribution("lognormal", (median, p90)) if ordered and None not in (median, p90) \
        else None


def _read_chance(t: _Table, limit: _Limit):
    p = t.read("p", _as_probability, *_PARAM_SPECS["p"])
    then = t.read("then", _as_distribution, _DIST_EXAMPLE,
                  "the duration drawn with probability p", inner=True, limit=limit)
    return None if p is None or then is None else Distribution("chance", (p,), then)


_DIST_READERS = {
    "fixed": _read_fixed,
    "uniform": _read_uniform,
    "triangular": _read_triangular,
    "pert": lambda t, limit: _read_triangular(t, limit, "pert"),
    "lognormal": _read_lognormal,
    "chance": _read_chance,
}


def _as_date(r, key, value, spec: _Spec):
    """A DateSpec from { day, delay?, shared? }, days from day 0; None if bad."""
    t = _as_table(r, key, value, ("day", "delay", "shared"))
    if t is None:
        return None
    day = t.read("day", _as_number, "75", "the planned day, from day 0", at_least=0,
                 at_most=DAYS)
    delay = t.read("delay", _as_distribution, _DIST_EXAMPLE, "the date's own slip in days",
                   default=ZERO)
    shared = t.read("shared", _as_ids, '["vendor"]', "names of [shared_delays] added to it",
                    default=(), empty_ok=True)
    known = all([_check_ref(r, t.at("shared"), name, r.shared_delays, "shared delay")
                 for name in shared or ()])
    return DateSpec(day, delay, shared) if known and None not in (day, delay, shared) else None


# --------------------------------------------------------------------------------------------
# Sections

_TOP_KEYS = ("scenario", "demand", "unit_types", "islands", "halls", "retrofit", "existing",
             "incoming", "shared_delays", "shipments", "risks", "strategies")
_DESCRIPTION = ('"..."', "one line for people")


def _read_description(t: _Table) -> str:
    return t.read("description", _as_description, *_DESCRIPTION, default="")


def _as_description(r, key, value, spec: _Spec):
    """One line of text for people: any printable characters and spaces, no control
    characters (a newline or an ESC would reach terminals, HTML and Markdown tables)."""
    text = _as_string(r, key, value, spec, empty_ok=True)
    bad = next((c for c in text or "" if not c.isprintable() and not c.isspace()
                or c in "\t\n\r\v\f\x1c\x1d\x1e\x1f\x85\u2028\u2029"), None)
    if bad is not None:
        r.report(key, value, f"contains the control character {bad!r}",
                 "a description is one line of printable text")
        return None
    return text


def _read_id(t: _Table, example: str, why: str):
    """An entry's id: a name (printable, one line, short) without '..' (which id lists read as
    a range)."""
    ident = t.read("id", _as_name, example, why)
    if ident is not None and ".." in ident:
        t.r.report(t.at("id"), ident, "must not contain '..', which marks a range in id lists",
                   f"for example id = {example}")
        return None
    return ident


def _read_document(r: _Reader, document: dict) -> dict:
    """Every section, in dependency order; returns the Scenario's fields but path and sha256."""
    root = _Table(r, "", document, _TOP_KEYS)
    parts = _read_header(root)
    parts["demand"] = _read_demand(root)
    parts["shared_delays"] = _read_shared_delays(root)
    parts["islands"] = _read_islands(root)
    parts["unit_types"] = _read_unit_types(root)
    parts["halls"] = _read_halls(root)
    parts["retrofit"] = _read_retrofit(root)
    parts["existing"] = _read_existing(root)
    parts["incoming"] = _read_incoming(root)
    _check_fleets(r)
    parts["shipments"] = _read_shipments(root)
    parts["risks"] = _read_risks(root, parts["halls"])
    parts["strategies"] = _read_strategies(root)
    return parts


def _read_header(root: _Table) -> dict:
    """[scenario]: name, description, horizon_days (> 0, the days metrics are taken over)."""
    t = root.table("scenario", ("name", "description", "horizon_days", "start_date"),
                   "with name and horizon_days")
    if t is None:
        return dict(name=None, description="", horizon_days=None)
    return dict(
        name=t.read("name", _as_name, '"reference-2048"', "how reports name this scenario"),
        description=_read_description(t),
        horizon_days=t.read("horizon_days", _as_number, "540",
                            "the days to evaluate metrics over", above=0, at_most=_HORIZON),
        start_date=t.read("start_date", _as_calendar_date, "2027-01-04",
                          "the calendar date of day 0 (outputs then show dates)",
                          default=None))


def _as_calendar_date(r, key, value, spec: _Spec):
    """A calendar date: a TOML local date (2027-01-04) or an ISO string "2027-01-04";
    a date-time or anything else is reported."""
    if isinstance(value, _dt.datetime) or isinstance(value, _dt.time):
        r.report(key, value, "must be a date without a time of day",
                 f"for example {spec.name} = {spec.example}")
        return None
    if isinstance(value, _dt.date):
        return value
    if isinstance(value, str):
        try:
            return _dt.date.fromisoformat(value)
        except ValueError:
            pass
    r.report(key, value, "must be an ISO date YYYY-MM-DD",
             f"for example {spec.name} = {spec.example}")
    return None


_HORIZON = _Limit(MAX_HORIZON_DAYS, "20 years: capacity bands keep every day of the horizon "
                  "for every strategy")


def _read_demand(root: _Table) -> Demand | None:
    """[demand]: points [[day, H100-eq], ...] and largest_job (H100-eq in one island)."""
    t = root.table("demand", ("points", "largest_job"), "with points and largest_job")
    if t is None:
        return None
    points = t.read("points", _as_points, "[[0, 2048], [150, 2048]]",
                    "[day, H100-eq] pairs, days increasing")
    largest_job = t.read("largest_job", _as_number, "1024",
                         "the H100-eq the largest job needs in one island", at_least=0,
                         at_most=TOTAL_H100_EQ)
    return Demand(points, largest_job)


def _as_points(r, key, value, spec: _Spec):
    """Demand points: [[day, H100-eq], ...], days >= 0 strictly increasing, values >= 0."""
    if not isinstance(value, list) or not value:
        what = "an empty array" if value == [] else _kind(value)
        r.report(key, value, f"must be an array of [day, H100-eq] pairs, not {what}",
                 spec.type_hint)
        return None
    if not _count_ok(r, key, len(value), MAX_ENTRIES, "points", "every scenario walks the "
                     "demand curve: a point a day for 20 years is 7,300; drop points on "
                     "straight stretches"):
        return None
    points, previous = [], None
    for i, pair in enumerate(value):
        points.append(_as_point(r, f"{key}[{i}]", pair, previous))
        previous = points[-1][0] if points[-1] else previous
    return None if None in points else tuple(points)


def _as_point(r, key, pair, previous: float | None):
    if not isinstance(pair, list) or len(pair) != 2:
        r.report(key, pair, "must be a [day, H100-eq] pair", "for example [150, 2048]")
        return None
    day = _as_number(r, f"{key}[0]", pair[0], _Spec("day", "150", "days from day 0"),
                     at_least=0, at_most=DAYS)
    demand = _as_number(r, f"{key}[1]", pair[1], _Spec("demand", "2048", "H100-eq"),
                        at_least=0, at_most=TOTAL_H100_EQ)
    if day is not None and previous is not None and day <= previous:
        r.report(f"{key}[0]", pair[0], f"must be > the previous point's day ({_fmt(previous)})",
                 "list points with days strictly increasing")
        return None
    return None if day is None or demand is None else (day, demand)


def _read_shared_delays(root: _Table):
    """[shared_delays] name = distribution: drawn once per scenario, added to every date that
    names it in `shared`."""
    value = root.data.get("shared_delays", {})
    if not isinstance(value, dict):
        root.r.report("shared_delays", value, f"must be a table, not {_kind(value)}",
                      f"write [shared_delays] with lines like vendor = {_DIST_EXAMPLE}")
        root.r.shared_delays = None
        return None
    if not _count_ok(root.r, "shared_delays", len(value), MAX_ENTRIES, "shared delays"):
        root.r.shared_delays = None
        return None
    delays = {name: _as_distribution(root.r, f"shared_delays.{name}", dist,
                                     _Spec(name, _DIST_EXAMPLE, "a delay in days"))
              for name, dist in value.items()
              if _check_name(root.r, f"shared_delays.{name}", name)}
    root.r.shared_delays = delays if len(delays) == len(value) else None
    return tuple(delays.items())


def _read_entries(root: _Table, name: str, allowed, read_entry, what: str, why: str,
                  default=_REQUIRED):
    """An array of tables with unique ids: read_entry(table) -> an object with `.id`.

    Returns (objects, registry by id); the registry is None unless every entry and id was read.
    """
    tables = root.tables(name, allowed, "", why, default=default)
    if tables is None:
        return None, None
    objects, seen, registry = [], {}, {}
    for t in filter(None, tables):
        objects.append(read_entry(t))
        if _check_unique(root.r, seen, objects[-1].id, t.at("id"), what):
            registry[objects[-1].id] = objects[-1]
    complete = None not in tables and all(obj.id is not None for obj in objects)
    return tuple(objects), (registry if complete else None)


def _read_islands(root: _Table):
    islands, root.r.islands = _read_entries(
        root, "islands", ("id", "description", "delivery", "install_days"), _read_island,
        "island id", "one per fabric island, each a job pool")
    return islands


def _read_island(t: _Table) -> Island:
    """An island is ready at day 0, or at its delivery plus install_days."""
    island_id = _read_id(t, '"xdr"', "the name unit types give in island")
    description = _read_description(t)
    delivery = t.read("delivery", _as_date, "{ day = 90 }", "when the fabric arrives",
                      default=None)
    install = t.read("install_days", _as_distribution, "14", "days to install after delivery",
                     default=ZERO)
    if "install_days" in t.data and "delivery" not in t.data:
        t.r.report(t.at("install_days"), t.data["install_days"],
                   "install_days without delivery: an island without delivery is ready at day 0",
                   "add delivery = { day = ... } or remove install_days")
    return Island(island_id, delivery, install, description)


_UNIT_TYPE_KEYS = ("id", "description", "gpus", "h100_eq_per_gpu", "power_kw", "cooling",
                   "island", "install_days", "drain_days", "removal_days", "burn_in", "ramp")
_RAMP_KEYS = ("start_fraction", "days", "steps")
_BURN_IN_KEYS = ("attempt_days", "fail_first", "fail_retry", "fix_days", "rma_after_failures",
                 "rma_days")


def _read_unit_types(root: _Table):
    types, root.r.unit_types = _read_entries(root, "unit_types", _UNIT_TYPE_KEYS,
                                             _read_unit_type, "unit type id",
                                             "one per kind of unit")
    return types


def _read_unit_type(t: _Table) -> UnitType:
    """What a unit is (GPUs, H100-eq, kW, cooling, island) and how long work on it takes."""
    fields = dict(
        id=_read_id(t, '"gb300-nvl72"', "the name fleets give in type"),
        description=_read_description(t),
        gpus=t.read("gpus", _as_integer, "72", "GPUs per unit", at_least=1, at_most=_GPUS),
        h100_eq_per_gpu=(performance := _read_performance(t))[0],
        power_kw=t.read("power_kw", _as_number, "135", "the power one unit draws, in kW",
                        at_least=0, at_most=TOTAL_KW),
        cooling=t.read("cooling", _as_choice, '"liquid"', "what the unit needs from its row",
                       options=COOLINGS),
        island=t.read("island", _as_string, '"xdr"', "the fabric island the unit joins"))
    if fields["island"] is not None:
        _check_ref(t.r, t.at("island"), fields["island"], t.r.islands, "island")
    for name, why in (("install_days", "days to install a new unit"),
                      ("drain_days", "days from drain start to removal start"),
                      ("removal_days", "days to remove a drained unit")):
        fields[name] = t.read(name, _as_distribution, "2", why, default=ZERO)
    fields["performance"] = performance[1]
    burn_in = t.table("burn_in", _BURN_IN_KEYS, "", default=None)
    ramp = t.table("ramp", _RAMP_KEYS, "", default=None)
    return UnitType(burn_in=burn_in and _read_burn_in(burn_in), ramp=ramp and _read_ramp(ramp),
                    **fields)


_GPUS = _Limit(MAX_GPUS, "a unit is a rack, a pod or a scalable unit; no cluster has more GPUs")
_PERFORMANCE = _Limit(MAX_H100_EQ_PER_GPU, "H100-eq per GPU: far beyond any roadmap; it keeps "
                      "capacities exact in the bands")


def _read_performance(t: _Table):
    """h100_eq_per_gpu: a number, or a distribution drawn once per scenario for the type.

    Returns (nominal value, the distribution or None); nominal is the median.
    """
    value = t.data.get("h100_eq_per_gpu")
    if not isinstance(value, dict):
        return t.read("h100_eq_per_gpu", _as_number, "2.5",
                      "performance of one GPU relative to one H100", above=0,
                      at_most=_PERFORMANCE), None
    dist = t.read("h100_eq_per_gpu", _as_distribution, '{ dist = "triangular", min = 2.0, '
                  'mode = 2.5, max = 2.6 }', "performance of one GPU relative to one H100",
                  limit=_PERFORMANCE)
    if dist is None:
        return None, None
    if dist.kind == "chance":
        t.r.report(t.at("h100_eq_per_gpu.dist"), "chance",
                   "performance cannot be a chance (it would be 0 otherwise)",
                   "use triangular, pert, uniform or lognormal")
        return None, None
    from mcrisk.distributions import median
    nominal = median(dist)
    if not nominal > 0:
        t.r.report(t.at("h100_eq_per_gpu"), value, "must have a median above 0",
                   "performance relative to one H100 is a positive number")
        return None, None
    # only a lognormal can pass here: the other distributions' parameters are within the limit
    if largest_draw(dist) > MAX_H100_EQ_PER_GPU:
        t.r.report(t.at("h100_eq_per_gpu.p90"), dist.params[1],
                   f"lets a draw reach {largest_draw(dist):,.4g} H100-eq per GPU, more than "
                   f"{MAX_H100_EQ_PER_GPU:,}", "the generator reaches 8.2 sigma; narrow the "
                   "lognormal, its p90 closer to the median, or use pert or triangular")
        return None, None
    return nominal, dist


def largest_draw(dist: Distribution) -> float:
    """The largest value the random stream can draw from `dist`: the maximum of a bounded
    distribution; a lognormal's quantile at the largest uniform, 1 - 2**-53 (8.2 sigma)."""
    if dist.kind == "chance":
        return largest_draw(dist.inner)
    if dist.kind != "lognormal":
        return max(dist.params[:3] if dist.kind == "pert" else dist.params)
    from mcrisk.distributions import lognormal_sigma
    median, p90 = dist.params
    return median * math.exp(_Z_LARGEST * lognormal_sigma(median, p90))


_Z_LARGEST = 8.209536151601387   # -ndtri(2**-53): the standard normal at the largest uniform


def _read_ramp(t: _Table) -> Ramp | None:
    """[unit_types.ramp]: start_fraction of capacity at acceptance, all of it after days."""
    start = t.read("start_fraction", _as_probability, "0.7",
                   "the fraction of capacity a unit delivers when accepted")
    days = t.read("days", _as_number, "90", "days from acceptance to full capacity", above=0,
                  at_most=DAYS)
    steps = t.read("steps", _as_integer, "4", "steps the ramp is taken in", default=4,
                   at_least=1, at_most=_RAMP_STEPS)
    return None if None in (start, days, steps) else Ramp(start, days, steps)


_RAMP_STEPS = _Limit(MAX_RAMP_STEPS, "100 steps are within 1% of a linear ramp, and every step "
                     "is a capacity event of every unit in every scenario")
_RMA_AFTER = _Limit(MAX_RMA_AFTER_FAILURES, "a rack is replaced after a handful of failed "
                    "attempts, and every attempt is drawn in every scenario")


def _read_burn_in(t: _Table) -> BurnIn:
    """Attempts until one passes; after `rma_after_failures` failures in a row, an RMA."""
    burn_in = BurnIn(
        attempt_days=t.read("attempt_days", _as_distribution, _DIST_EXAMPLE,
                            "days one attempt takes"),
        fail_first=t.read("fail_first", _as_probability, "0.3",
                          "the failure probability of a unit's first attempt"),
        fail_retry=t.read("fail_retry", _as_probability, "0.1",
                          "the failure probability of every later attempt"),
        fix_days=t.read("fix_days", _as_distribution, _DIST_EXAMPLE,
                        "days to fix a unit after a failed attempt"),
        rma_after_failures=t.read("rma_after_failures", _as_integer, "3",
                                  "failures in a row after which the unit is replaced",
                                  at_least=1, at_most=_RMA_AFTER),
        rma_days=t.read("rma_days", _as_distribution, _DIST_EXAMPLE,
                        "days to replace a unit (RMA)"))
    if _check_burn_in_ends(t, burn_in):
        _check_burn_in_attempts(t, burn_in)
    return burn_in


def _check_burn_in_ends(t: _Table, b: BurnIn) -> bool:
    """Burn-in ends with probability 1 unless a whole round (first attempt, then retries until
    the RMA) fails surely: fail_first = 1 and (no retries, or fail_retry = 1). Whether it can
    end (reports if not)."""
    if None in (b.fail_first, b.fail_retry, b.rma_after_failures) or b.fail_first < 1:
        return True
    if b.rma_after_failures == 1:
        t.r.report(t.at("fail_first"), b.fail_first,
                   "must be < 1 when rma_after_failures = 1: burn-in would never end",
                   "every first attempt fails, and every RMA restarts with a first attempt")
    elif b.fail_retry == 1:
        t.r.report(t.at("fail_retry"), b.fail_retry,
                   "must be < 1 when fail_first = 1: burn-in would never end",
                   "every attempt fails; lower fail_retry or fail_first")
    else:
        return True
    return False


def _check_burn_in_attempts(t: _Table, b: BurnIn) -> None:
    """A unit's expected number of attempts stays within MAX_BURN_IN_ATTEMPTS: burn-in that
    fails almost surely ends in theory but not in a run's time (every attempt is drawn)."""
    if None in (b.fail_first, b.fail_retry, b.rma_after_failures):
        return
    expected = expected_burn_in_attempts(b.fail_first, b.fail_retry, b.rma_after_failures)
    if expected > MAX_BURN_IN_ATTEMPTS:
        t.r.report(t.key, NO_VALUE, f"a unit needs {expected:,.0f} attempts on average "
                   f"(fail_first = {_fmt(b.fail_first)}, fail_retry = {_fmt(b.fail_retry)}, "
                   f"rma_after_failures = {b.rma_after_failures}), more than "
                   f"{MAX_BURN_IN_ATTEMPTS:,}", "lower fail_first or fail_retry: every attempt "
                   "is drawn in every scenario")


def expected_burn_in_attempts(fail_first: float, fail_retry: float, rma_after: int) -> float:
    """Mean attempts until a unit passes burn-in (inf if it never can).

    A round is a first attempt and up to rma_after - 1 retries; it fails (and restarts after an
    RMA) with probability fail_first * fail_retry**(rma_after - 1)."""
    per_round = 1 + fail_first * sum(fail_retry ** j for j in range(rma_after - 1))
    round_fails = fail_first * fail_retry ** (rma_after - 1)
    return math.inf if round_fails >= 1 else per_round / (1 - round_fails)


def _read_halls(root: _Table):
    seen_rows: dict[str, str] = {}
    halls, registry = _read_entries(
        root, "halls", ("id", "description", "power_cap_kw", "energized", "rows"),
        lambda t: _read_hall(t, seen_rows), "hall id", "one per data hall")
    rows = [row for hall in halls or () for row in hall.rows or ()]
    complete = registry is not None and all(hall.rows is not None for hall in halls) \
        and all(row.id is not None for row in rows)
    complete = _count_ok(root.r, "halls", len(rows), MAX_ENTRIES, "rows in all halls") \
        and complete
    rows_by_id: dict[str, Row] = {}
    for row in rows:                   # in file order; a duplicate id keeps its first row
        rows_by_id.setdefault(row.id, row)
    root.r.rows = rows_by_id if complete else None
    return halls


def _read_hall(t: _Table, seen_rows: dict[str, str]) -> Hall:
    """A hall: IT power cap (kW), when it is energized (day 0 if absent), and its rows."""
    hall_id = _read_id(t, '"A"', "the hall's name")
    description = _read_description(t)
    power_cap_kw = t.read("power_cap_kw", _as_number, "3000", "the hall's IT power cap in kW",
                          above=0, at_most=TOTAL_KW)
    energized = t.read("energized", _as_date, "{ day = 120 }", "when the hall has power",
                       default=None)
    tables = t.tables("rows", ("id", "cooling", "positions"),
                      '[{ id = "A1", cooling = "air", positions = 2 }]', "the hall's rows")
    rows = tuple(_read_row(row, hall_id, seen_rows) for row in filter(None, tables or ()))
    complete = tables is not None and None not in tables
    return Hall(hall_id, power_cap_kw, rows if complete else None, energized, description)


def _read_row(t: _Table, hall_id, seen_rows: dict[str, str]) -> Row:
    row_id = _read_id(t, '"A1"', "the name fleets and strategies give in row")
    _check_unique(t.r, seen_rows, row_id, t.at("id"), "row id")
    return Row(
        id=row_id, hall=hall_id,
        cooling=t.read("cooling", _as_choice, '"air"', "the cooling the row has now",
                       options=COOLINGS),
        positions=t.read("positions", _as_integer, "2",
                         "how many new units the row holds once empty", at_least=0,
                         at_most=_Limit(MAX_UNITS, "no scenario has more units")))


def _read_retrofit(root: _Table) -> Retrofit:
    """[retrofit]: crews (default 1) and days per row; NO_RETROFIT when absent."""
    root.r.has_retrofit = "retrofit" in root.data
    t = root.table("retrofit", ("crews", "days"), "", default=None)
    if t is None:
        return NO_RETROFIT
    rows = MAX_ENTRIES if root.r.rows is None else max(1, len(root.r.rows))
    crews = _Limit(rows, f"one crew per row, {_count(rows, 'row')}: more crews than rows never "
                   "work at once")
    return Retrofit(
        crews=t.read("crews", _as_integer, "1", "rows retrofitted at the same time", default=1,
                     at_least=1, at_most=crews),
        days=t.read("days", _as_distribution, _DIST_EXAMPLE, "days to retrofit one empty row"))


# --------------------------------------------------------------------------------------------
# Fleets and shipments


def _read_existing(root: _Table):
    """[[existing]] units, type, rows: units in service at day 0, each standing in a row."""
    tables = root.tables("existing", ("units", "type", "rows"), "", "the units in service at "
                         "day 0", default=[])
    units = [unit for t in filter(None, tables or ()) for unit in _read_existing_entry(t)]
    complete = tables is not None and None not in tables and None not in units
    root.r.existing = {unit.id: unit for unit in units} if complete else None
    return None if tables is None else tuple(units)


def _read_existing_entry(t: _Table) -> list[ExistingUnit | None]:
    unit_ids, unit_type = _read_fleet_entry(t, "existing")
    rows = t.read("rows", _as_ids, '"A1..A8"', "the row of each unit: one for all, or one "
                  "per unit in order")
    for row in rows or ():
        _check_ref(t.r, t.at("rows"), row, t.r.rows, "row")
    if unit_ids is None:
        return [None]
    if rows is not None and len(rows) not in (1, len(unit_ids)):
        t.r.report(t.at("rows"), t.data["rows"],
                   f"names {_count(len(rows), 'row')} for {_count(len(unit_ids), 'unit')}",
                   "give one row for all units, or one row per unit in the same order")
        rows = None
    rows = (rows * len(unit_ids) if rows and len(rows) == 1 else rows) or [None] * len(unit_ids)
    kind = (t.r.unit_types or {}).get(unit_type) if unit_type else None
    if kind is not None and (kind.performance is not None or kind.ramp is not None):
        t.r.report(t.at("type"), unit_type,
                   "units in service at day 0 need a fixed h100_eq_per_gpu and no ramp: "
                   "they define the baseline", "give existing units a unit type of their own")
    return [ExistingUnit(unit, unit_type, row) for unit, row in zip(unit_ids, rows)]


def _read_incoming(root: _Table):
    """[[incoming]] units, type: new units that shipments deliver and strategies place."""
    tables = root.tables("incoming", ("units", "type"), "", "the new units", default=[])
    units = []
    for t in filter(None, tables or ()):
        unit_ids, unit_type = _read_fleet_entry(t, "incoming")
        units += [None] if unit_ids is None else [IncomingUnit(u, unit_type) for u in unit_ids]
    complete = tables is not None and None not in tables and None not in units
    root.r.incoming = {unit.id: unit for unit in units} if complete else None
    return None if tables is None else tuple(units)


def _read_fleet_entry(t: _Table, fleet: str):
    """units and type of one [[existing]] or [[incoming]] entry; unit ids are unique across
    both fleets."""
    unit_ids = t.read("units", _as_ids, '"N01..N16"', f"the ids of the {fleet} units")
    unit_type = t.read("type", _as_string, '"gb300-nvl72"', "the id of their [[unit_types]]")
    if unit_type is not None:
        _check_ref(t.r, t.at("type"), unit_type, t.r.unit_types, "unit type")
    if unit_ids is not None:  # a duplicate stays with the fleet that defined it first
        before = len(t.r.unit_keys)
        unit_ids = tuple(unit for unit in unit_ids
                         if _check_unique(t.r, t.r.unit_keys, unit, t.at("units"), "unit id"))
        if before <= MAX_UNITS < len(t.r.unit_keys):
            t.r.report(t.at("units"), unit_ids[MAX_UNITS - before],
                       f"is unit {MAX_UNITS + 1:,}: at most {MAX_UNITS:,} existing and incoming "
                       "units together", "model larger units (a rack or a scalable unit, not "
                       "a node): every unit is work drawn in every scenario")
            unit_ids = None
    return unit_ids, unit_type


def _check_fleets(r: _Reader) -> None:
    """Some unit to migrate, and totals within limits: the capacity of every unit at its
    largest possible performance, and the power of every unit, at most MAX_TOTAL each (the
    capacity bands and power peaks count in millionths, exactly below 2**53)."""
    if r.existing is None or r.incoming is None:
        return
    if not r.existing and not r.incoming:
        r.report("", NO_VALUE, "no units: [[existing]] and [[incoming]] name none",
                 "add the units in service at day 0 as [[existing]] and the new ones as "
                 "[[incoming]]: there is nothing to migrate")
        return
    if r.unit_types is None:
        return
    units = [*r.existing.values(), *r.incoming.values()]
    kinds = [r.unit_types.get(unit.type) for unit in units]
    if None in kinds or any(k.gpus is None or k.h100_eq_per_gpu is None or k.power_kw is None
                            for k in kinds):
        return
    capacity = [k.gpus * (largest_draw(k.performance) if k.performance else k.h100_eq_per_gpu)
                for k in kinds]
    _check_total(r, units, capacity, "capacity", "H100-eq", TOTAL_H100_EQ)
    _check_total(r, units, [k.power_kw for k in kinds], "power draw", "kW", TOTAL_KW)


def _check_total(r: _Reader, units, amounts: list[float], what: str, unit_name: str,
                 limit: _Limit) -> None:
    """Reports, on the unit that takes the running total of `amounts` past the limit."""
    total = 0.0
    for unit, amount in zip(units, amounts):
        total += amount
        if total > limit.value:
            r.report(r.unit_keys[unit.id], unit.id, f"takes the {what} of all units to "
                     f"{total:,.0f} {unit_name}, more than {_fmt_limit(limit.value)}",
                     f"{limit.why}; check gpus, h100_eq_per_gpu and power_kw of its type")
            return


def _check_fleet(r: _Reader, key: str, unit: str, fleet: str, role: str, hint: str) -> bool:
    """Whether `unit` is a unit of `fleet` ('existing' or 'incoming'); reports if not.

    True also when the fleet could not be read (nothing to check against).
    """
    mine, other, other_fleet = (r.incoming, r.existing, "existing") if fleet == "incoming" \
        else (r.existing, r.incoming, "incoming")
    if mine is None or unit in mine:
        return True
    if other is not None and unit in other:
        r.report(key, unit, f"{unit} is an {other_fleet} unit; {role}", hint)
    else:
        r.report(key, unit, "unknown unit", _suggest(unit, mine, f"known {fleet} units"))
    return False


def _read_shipments(root: _Table):
    """[[shipments]] id, units, arrival: each incoming unit arrives in exactly one shipment."""
    delivered_by: dict[str, str] = {}
    shipments, registry = _read_entries(
        root, "shipments", ("id", "units", "arrival"),
        lambda t: _read_shipment(t, delivered_by), "shipment id", "what arrives when",
        default=[])
    root.r.shipments = registry
    if registry is not None and root.r.incoming is not None \
            and all(s.units is not None for s in shipments):
        for unit in root.r.incoming:
            if unit not in delivered_by:
                root.r.report(root.r.unit_keys[unit], unit,
                              f"{unit} is not delivered by any shipment",
                              "add it to the units of a [[shipments]] entry")
    return shipments


def _read_shipment(t: _Table, delivered_by: dict[str, str]) -> Shipment:
    ship_id = _read_id(t, '"S1"', "the name triggers give in on_arrival")
    units = t.read("units", _as_ids, '"N01..N04"', "the incoming units it delivers")
    for unit in units or ():
        if not _check_fleet(t.r, t.at("units"), unit, "incoming",
                            "shipments deliver incoming units", "remove it from the shipment"):
            continue
        if unit in delivered_by:
            t.r.report(t.at("units"), unit, f"{unit} is already delivered by shipment "
                       f"{delivered_by[unit]!r}", "each incoming unit arrives in one shipment")
        delivered_by.setdefault(unit, ship_id)
    arrival = t.read("arrival", _as_date, "{ day = 75 }", "when the shipment arrives")
    return Shipment(ship_id, units, arrival)


# --------------------------------------------------------------------------------------------
# Risk register

_RISK_KEYS = ("id", "description", "probability", "impact", "applies_to", "enabled",
              "mitigated")
# target kind -> (what it names, example id)
RISK_TARGETS = {
    "retrofit": ("row", "A1"), "install": ("incoming unit", "N07"),
    "removal": ("existing unit", "SU3"), "burn_in": ("incoming unit", "N07"),
    "arrival": ("shipment", "S2"), "energized": ("hall", "B"), "fabric": ("island", "xdr"),
}


def _read_risks(root: _Table, halls):
    """[[risks]]: discrete events, each once per scenario with a probability, adding an
    impact in days to every activity or date it applies to."""
    hall_ids = {hall.id: hall for hall in halls or () if hall.id is not None}
    risks, _ = _read_entries(root, "risks", _RISK_KEYS, lambda t: _read_risk(t, hall_ids),
                             "risk id", "one per risk", default=None)
    return risks or ()


def _read_risk(t: _Table, hall_ids: dict) -> Risk:
    risk_id = _read_id(t, '"cdu-recall"', "the name --disable-risk and reports use")
    description = _read_description(t)
    probability = t.read("probability", _as_probability, "0.1",
                         "the chance the risk occurs in a scenario")
    impact = _read_impact(t, "impact")
    applies_to = t.read("applies_to", _as_targets, '["retrofit"]',
                        "what the impact delays", hall_ids=hall_ids)
    enabled = t.read("enabled", _as_bool, "true", "whether runs include it", default=True)
    mitigated = t.table("mitigated", ("probability", "impact"), "", default=None)
    m_probability = m_impact = None
    if mitigated is not None:
        m_probability = mitigated.read("probability", _as_probability, "0.02",
                                       "the chance after mitigation", default=None)
        m_impact = _read_impact(mitigated, "impact", required=False)
        if "probability" not in mitigated.data and "impact" not in mitigated.data:
            t.r.report(t.at("mitigated"), mitigated.data, "says nothing",
                       "give probability and/or impact after mitigation, or remove it")
    return Risk(risk_id, probability, impact, applies_to, enabled, m_probability, m_impact,
                description)


def _read_impact(t: _Table, name: str, required: bool = True):
    impact = t.read(name, _as_distribution, _DIST_EXAMPLE, "the days the risk adds",
                    **({} if required else {"default": None}))
    if impact is not None and impact.kind == "chance":
        t.r.report(t.at(f"{name}.dist"), "chance",
                   "an impact cannot be a chance: the risk's probability already is one",
                   "fold p into the risk's probability")
        return None
    return impact


def _as_bool(r, key, value, spec: _Spec):
    if not isinstance(value, bool):
        r.report(key, value, f"must be true or false, not {_kind(value)}", spec.type_hint)
        return None
    return value


def _as_targets(r, key, value, spec: _Spec, hall_ids: dict):
    """Risk targets: "retrofit" (all rows) or "retrofit:A1", and so on for RISK_TARGETS."""
    items = value if isinstance(value, list) else [value]
    if not _count_ok(r, key, len(items), MAX_ENTRIES, "targets"):
        return None
    targets = []
    for i, item in enumerate(items):
        at = f"{key}[{i}]" if isinstance(value, list) else key
        if not isinstance(item, str):
            r.report(at, item, f"must be a string, not {_kind(item)}", spec.type_hint)
            return None
        kind, _, ident = item.partition(":")
        if kind not in RISK_TARGETS:
            r.report(at, item, "unknown risk target",
                     _suggest(kind, tuple(RISK_TARGETS), "targets", compact=False)
                     + '; add ":<id>" for one of them')
            return None
        if ident and not _target_known(r, at, kind, ident, hall_ids):
            return None
        targets.append(item)
    if not targets:
        r.report(key, value, "must name at least one target", spec.type_hint)
        return None
    return tuple(targets)


def _target_known(r, key, kind: str, ident: str, hall_ids: dict) -> bool:
    registry = {"retrofit": r.rows, "install": r.incoming, "burn_in": r.incoming,
                "removal": r.existing, "arrival": r.shipments, "energized": hall_ids,
                "fabric": r.islands}[kind]
    return _check_ref(r, key, ident, registry, RISK_TARGETS[kind][0])


# --------------------------------------------------------------------------------------------
# Strategies


@dataclass(frozen=True)
class _Place:
    """One `place` entry, with its key path for later checks."""

    key: str
    units: tuple[str, ...] | None
    row: str | None


@dataclass(frozen=True)
class _Drain:
    """One `drain` entry, with its key path for later checks; trigger None if unreadable."""

    key: str
    units: tuple[str, ...] | None
    trigger: Trigger | None


def _read_strategies(root: _Table):
    """[[strategies]] name, description, place, drain: at least one, names unique."""
    tables = root.tables("strategies", ("name", "description", "place", "drain"), "",
                         "the plans to compare")
    if tables == []:
        root.r.report("strategies", [], "must have at least one strategy",
                      "add [[strategies]] tables, the plans to compare")
    if tables and not _count_ok(root.r, "strategies", len(tables), MAX_STRATEGIES,
                                "strategies", "every strategy is simulated in every scenario "
                                "and keeps its own capacity bands; compare fewer at a time"):
        return None
    seen: dict[str, str] = {}
    strategies = []
    for t in filter(None, tables or ()):
        strategies.append(_read_strategy(t))
        _check_unique(root.r, seen, strategies[-1].name, t.at("name"), "strategy name")
    return None if tables is None else tuple(strategies)


def _read_strategy(t: _Table) -> Strategy:
    name = t.read("name", _as_strategy_name, '"big-bang"', "the strategy's name in reports")
    description = _read_description(t)
    place = _read_list(t, "place", _PLACE_KEYS, _read_place, '[{ units = "N01..N02", row = '
                       '"A1" }]', "where each incoming unit goes")
    drain = _read_list(t, "drain", _DRAIN_KEYS, _read_drain, '[{ units = "SU1", day = 60 }]',
                       "when each existing unit starts to drain")
    label = name if name is not None else t.key
    if place is not None:
        _check_placement(t, label, place)
    if drain is not None:
        _check_drains(t, label, drain)
    if place is not None and drain is not None:
        _check_deadlocks(t.r, place, drain)
    # None stays None (the strategy is not built then); an empty tuple stays a tuple
    placement = place and tuple((u, e.row) for e in place for u in e.units or ())
    drains = drain and tuple((u, e.trigger) for e in drain for u in e.units or ())
    return Strategy(name, placement, drains, description)


def _as_strategy_name(r, key, value, spec: _Spec):
    """A name (see _as_name) that --fail-if can target: not `any` or `all`, which mean every
    strategy there. (--fail-if reads the last two dotted parts as metric and statistic, so
    dots and operators in a name are fine; spaces at either end are not, and _as_name refuses
    them.)"""
    name = _as_name(r, key, value, spec)
    if name in RESERVED_STRATEGY_NAMES:
        r.report(key, name, f"is reserved: --fail-if reads '{name}' as every strategy",
                 f'give the strategy another name, for example "{name}-units"')
        return None
    return name


def _read_list(t: _Table, name, allowed, read_entry, example, why):
    """The entries of an inline array of tables; None unless all of them are tables."""
    tables = t.tables(name, allowed, example, why)
    entries = tuple(read_entry(entry) for entry in filter(None, tables or ()))
    return None if tables is None or None in tables else entries


_PLACE_KEYS = ("units", "row")
_DRAIN_KEYS = ("units", "day", "on_arrival", "on_accepted", "lag_days")


def _read_place(t: _Table) -> _Place:
    units = t.read("units", _as_ids, '"N01..N02"', "the incoming units to place")
    row = t.read("row", _as_string, '"A1"', "the row they go in")
    if row is not None and not _check_ref(t.r, t.at("row"), row, t.r.rows, "row"):
        row = None
    return _Place(t.key, units, row)


def _read_drain(t: _Table) -> _Drain:
    units = t.read("units", _as_ids, '"SU1..SU2"', "the existing units to drain")
    return _Drain(t.key, units, _read_trigger(t))


def _read_trigger(t: _Table) -> Trigger | None:
    """When a drain starts: the latest of day, on_arrival and on_accepted given, + lag_days."""
    day = t.read("day", _as_number, "60", "the earliest day the drain starts", default=None,
                 at_least=0, at_most=DAYS)
    on_arrival = t.read("on_arrival", _as_ids, '"S1"', "shipments whose arrival starts it",
                        default=())
    on_accepted = t.read("on_accepted", _as_ids, '"N01..N02"',
                         "incoming units whose acceptance starts it", default=())
    lag_days = t.read("lag_days", _as_number, "0", "days to wait after the conditions",
                      default=0.0, at_least=0, at_most=DAYS)
    for shipment in on_arrival or ():
        _check_ref(t.r, t.at("on_arrival"), shipment, t.r.shipments, "shipment")
    for unit in on_accepted or ():
        _check_fleet(t.r, t.at("on_accepted"), unit, "incoming",
                     "on_accepted waits for incoming units", "name new units, or use day")
    if not any(name in t.data for name in ("day", "on_arrival", "on_accepted")):
        t.r.report(t.key, NO_VALUE, "no trigger: a drain needs day, on_arrival or on_accepted",
                   'add day = 60, on_arrival = "S1" or on_accepted = "N01"')
        return None
    if None in (on_arrival, on_accepted, lag_days) or (day is None and "day" in t.data):
        return None
    return Trigger(day, on_arrival, on_accepted, lag_days)


def _check_placement(t: _Table, name: str, place: tuple[_Place, ...]) -> None:
    """Each incoming unit placed exactly once; rows hold what they can, cooled as needed."""
    r, placed_at = t.r, {}
    units_by_row: dict[str, list[tuple[_Place, str]]] = defaultdict(list)
    for entry in place:
        key = f"{entry.key}.units"
        for unit in entry.units or ():
            if not _check_fleet(r, key, unit, "incoming", "place takes incoming units",
                                "list existing units under drain"):
                continue
            if unit in placed_at:
                r.report(key, unit, f"{unit} is placed twice in strategy {name!r}, also at "
                         f"{placed_at[unit]}", "place each incoming unit once")
                continue
            placed_at[unit] = key
            if entry.row is not None:
                units_by_row[entry.row].append((entry, unit))
    if r.incoming is not None and all(entry.units is not None for entry in place):
        for unit in r.incoming:
            if unit not in placed_at:
                r.report(t.at("place"), NO_VALUE, f"{unit} is never placed in strategy {name!r}",
                         f'add {{ units = "{unit}", row = "..." }} to place')
    retrofit_reported = False  # once per strategy: the same fix serves every row
    for row_id, entries in units_by_row.items():
        if r.rows is not None and row_id in r.rows:
            _check_row_fits(r, r.rows[row_id], entries)
            retrofit_reported = retrofit_reported or _needs_retrofit(r, r.rows[row_id], entries)


def _check_row_fits(r: _Reader, row: Row, entries: list[tuple[_Place, str]]) -> None:
    """At most `positions` new units in a row; reported on the entry that overfills it."""
    if row.positions is None or len(entries) <= row.positions:
        return
    entry = entries[row.positions][0]
    placed = f"{_count(len(entries), 'new unit')} {'is' if len(entries) == 1 else 'are'}"
    r.report(f"{entry.key}.row", row.id, f"{placed} placed in row {row.id}, which has "
             f"{_count(row.positions, 'position')}",
             f"place {len(entries) - row.positions} of them in another row, or raise positions "
             f"of row {row.id}")


def _needs_retrofit(r: _Reader, row: Row, entries: list[tuple[_Place, str]]) -> bool:
    """Whether a liquid unit is placed in air row `row` while there is no [retrofit] (which
    converts empty air rows to liquid); reports it on the first such entry. An air unit in a
    liquid row needs nothing."""
    if r.has_retrofit or row.cooling != "air":
        return False
    for entry, unit in entries:
        if _cooling_of(r, unit) == "liquid":
            r.report(f"{entry.key}.row", row.id, f"row {row.id} is air-cooled, {unit} is "
                     "liquid-cooled, and there is no [retrofit] to convert the row",
                     "add a [retrofit] table with crews and days, or place liquid units in "
                     "liquid-cooled rows")
            return True
    return False


def _cooling_of(r: _Reader, unit: str) -> str | None:
    incoming = (r.incoming or {}).get(unit)
    unit_type = incoming and (r.unit_types or {}).get(incoming.type)
    return unit_type.cooling if unit_type else None


def _check_drains(t: _Table, name: str, drain: tuple[_Drain, ...]) -> None:
    """Each existing unit drained exactly once."""
    r, drained_at = t.r, {}
    for entry in drain:
        key = f"{entry.key}.units"
        for unit in entry.units or ():
            if not _check_fleet(r, key, unit, "existing", "drain takes existing units",
                                "list incoming units under place"):
                continue
            if unit in drained_at:
                r.report(key, unit, f"{unit} is drained twice in strategy {name!r}, also at "
                         f"{drained_at[unit]}", "drain each existing unit once")
            drained_at.setdefault(unit, key)
    if r.existing is not None and all(entry.units is not None for entry in drain):
        for unit in r.existing:
            if unit not in drained_at:
                r.report(t.at("drain"), NO_VALUE, f"{unit} is never drained in strategy "
                         f"{name!r}", f'add {{ units = "{unit}", day = ... }} to drain: every '
                         "existing unit is removed")


def _check_deadlocks(r: _Reader, place: tuple[_Place, ...], drain: tuple[_Drain, ...]) -> None:
    """Report each cycle of waits, once, on the drain entry of its first unit.

    Wait-for graph: drain(u) waits on accepted(n) for n in u's on_accepted; accepted(n) on
    ready(row of n); ready(row) on drain(v) of every existing unit v standing in that row.
    Arrivals and days wait on nothing, so only on_accepted can close a cycle.
    """
    if r.existing is None:
        return
    row_of_new = {u: e.row for e in place for u in e.units or () if e.row is not None}
    units_in_row: dict[str, list[str]] = defaultdict(list)
    for unit in r.existing.values():
        units_in_row[unit.row].append(unit.id)
    entry_of = {}
    for entry in drain:
        for unit in entry.units or ():
            if unit in r.existing and entry.trigger is not None:
                entry_of.setdefault(unit, entry)

    def waits(unit: str):
        """(new unit, its row, existing unit in that row) for each wait of drain(unit)."""
        for new in entry_of[unit].trigger.on_accepted if unit in entry_of else ():
            row = row_of_new.get(new)
            for blocker in units_in_row.get(row, ()) if row is not None else ():
                yield new, row, blocker

    on_a_cycle: set[str] = set()
    for unit, entry in entry_of.items():
        cycle = None if unit in on_a_cycle else _shortest_cycle(unit, waits)
        if cycle:
            on_a_cycle.update(step[0] for step in cycle)
            r.report(f"{entry.key}.on_accepted", list(entry.trigger.on_accepted),
                     "deadlock: " + _describe_cycle(cycle),
                     f"drain on units placed elsewhere, or place {cycle[0][1]} in an empty row")


def _shortest_cycle(start: str, waits) -> list[tuple[str, str, str, str]] | None:
    """Breadth-first: the shortest chain of waits from drain(start) back to itself, as steps
    (unit, new unit it waits for, that unit's row, existing unit in the row); None if none."""
    came_from: dict[str, tuple[str, str, str, str]] = {}
    frontier = [start]
    while frontier:
        next_frontier = []
        for unit in frontier:
            for new, row, blocker in waits(unit):
                step = (unit, new, row, blocker)
                if blocker == start:
                    steps = [step]
                    while steps[-1][0] != start:
                        steps.append(came_from[steps[-1][0]])
                    return steps[::-1]
                if blocker not in came_from:
                    came_from[blocker] = step
                    next_frontier.append(blocker)
        frontier = next_frontier
    return None


def _describe_cycle(cycle: list[tuple[str, str, str, str]]) -> str:
    return ", ".join(f"{unit} drains after {new} is accepted, {new} is placed in row {row}, "
                     f"row {row} is free only after {blocker} drains"
                     for unit, new, row, blocker in cycle)
