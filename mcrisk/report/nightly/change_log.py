"""The night in words: what changed between two nights as a change log a person reads, one
line per change, grouped under what happened (the status's new facts), what the plan changed
(strategies) and what the model changed (every other scenario input, and the status's facts
about the model itself: a risk that occurred or can no longer occur, a measured performance).

Built from what the comparison already holds: each night's scenario file flattened
(input_changes.scenario_keys) and each night's summary.json status block (its dated events
and its `happened` lines). Days are written as dates (weekday and ISO date) where the scenario
has a start_date, as days otherwise. How late a fact came is measured against the scenario's
promise (a shipment's arrival day, a hall's energized day, an island's delivery day plus its
install days). A change the rules below cannot word gets a fallback line with its key, old
and new value: no change is dropped.
"""
from __future__ import annotations

import datetime as _dt
import math
import re
from dataclasses import dataclass

from .input_changes import InputChange, key_changes, render_value

HAPPENED, PLAN, MODEL = "what happened", "what the plan changed", "what the model changed"
GROUPS = (HAPPENED, PLAN, MODEL)


@dataclass(frozen=True)
class LogLine:
    group: str          # HAPPENED | PLAN | MODEL
    text: str           # plain text, ids as the scenario spells them (escape when writing)


def when(day: float, start: _dt.date | None) -> str:
    """'day 102', or with a start date 'Tue 2027-04-13'."""
    if start is not None and day is not None and math.isfinite(day):
        date = start + _dt.timedelta(days=math.floor(day))
        return f"{date.strftime('%a')} {date.isoformat()}"
    return f"day {_num(day)}"


def _num(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:,.0f}" if float(value).is_integer() else f"{value:,.4g}"


def late_words(day: float, promised) -> str:
    """', 27 days late' / ', 3 days early' / ', on time' against a promised day ('' without)."""
    if not isinstance(promised, (int, float)) or isinstance(promised, bool):
        return ""
    d = day - promised
    if abs(d) < 0.5:
        return ", on time"
    n = round(abs(d))
    return f", {n} day{'s' if n != 1 else ''} {'late' if d > 0 else 'early'}"


_ORDINAL = {2: "second", 3: "third", 4: "fourth", 5: "fifth"}


def _ordinal(k: int) -> str:
    return _ORDINAL.get(k, f"{k}th")


def distribution_words(value) -> str:
    """A scenario value in words: 'triangular 140 / 150 / 170', 'lognormal, median 5, P90 20',
    '2.5'; a table it cannot name is written as it is."""
    if isinstance(value, dict):
        kind = value.get("dist")
        if kind in ("triangular", "pert") and all(k in value for k in ("min", "mode", "max")):
            name = "PERT" if kind == "pert" else "triangular"
            return f"{name} {_num(value['min'])} / {_num(value['mode'])} / {_num(value['max'])}"
        if kind == "lognormal" and "median" in value and "p90" in value:
            return f"lognormal, median {_num(value['median'])}, P90 {_num(value['p90'])}"
        if kind == "uniform" and "min" in value and "max" in value:
            return f"uniform {_num(value['min'])} to {_num(value['max'])}"
        if kind == "fixed" and "value" in value:
            return _num(value["value"])
        if kind == "chance" and "p" in value:
            return f"with probability {_num(value['p'])}, {distribution_words(value.get('then'))}"
        if "day" in value and set(value) <= {"day", "delay", "shared"}:
            text = f"day {_num(value['day'])}"
            if "delay" in value:
                text += f" plus a delay ({distribution_words(value['delay'])})"
            return text
        return render_value(value)
    if value is None:
        return "none"
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(x, (str, int, float)) for x in value):
        return ", ".join(distribution_words(x) for x in value)
    return _num(value) if isinstance(value, (int, float)) else render_value(value)


def _nest(keys: dict, prefix: str):
    """The value at `prefix` rebuilt from flattened keys: a leaf, or a dict of what is under
    it (None when nothing is)."""
    if prefix in keys:
        return keys[prefix]
    out: dict = {}
    for key, value in keys.items():
        if key.startswith(prefix + "."):
            rest = key[len(prefix) + 1:]
            node = out
            parts = rest.split(".")
            for part in parts[:-1]:
                node = node.setdefault(part, {}) if isinstance(node.get(part, {}), dict) else {}
            node[parts[-1]] = value
    return out or None


_LABELS = (   # (pattern of a key path, its label): the model's inputs in words
    (r"unit_types\[(.+)\]\.h100_eq_per_gpu", r"per-GPU performance of \1"),
    (r"unit_types\[(.+)\]\.(\w+)", r"\2 of unit type \1"),
    (r"shipments\[(.+)\]\.arrival", r"arrival of shipment \1"),
    (r"halls\[(.+)\]\.energized", r"energization of hall \1"),
    (r"halls\[(.+)\]\.power_cap_kw", r"power cap of hall \1 (kW)"),
    (r"islands\[(.+)\]\.delivery", r"delivery of island \1's fabric"),
    (r"costs\.power\[(.+)\]\.price_per_kw_month", r"hall \1's power price per kW-month"),
    (r"costs\.power\[(.+)\]\.energy_per_kwh", r"hall \1's energy price per kWh"),
    (r"costs\.power\[(.+)\]\.(\w+)", r"\2 of hall \1's power contract"),
    (r"costs\.running\.(.+)", r"running cost of \1 per unit-day"),
    (r"costs\.waiting\.(.+)", r"waiting cost of \1 per unit-day"),
    (r"costs\.shortfall\.per_h100_eq_hour", "shortfall (backfill) price per H100-eq hour"),
    (r"costs\.crews\.per_crew_day", "crew cost per crew-day"),
    (r"risks\[(.+)\]\.(\w+)", r"\2 of risk \1"),
    (r"shared_delays\.(.+)", r"shared delay \1"),
    (r"retrofit\.(\w+)", r"retrofit \1"),
    (r"demand\.(.+)", r"demand \1"),
)


def _label(path: str) -> str:
    for pattern, label in _LABELS:
        if re.fullmatch(pattern, path):
            return re.sub(pattern, label, path).replace("_", " ")
    return path


def _subject(path: str, old: dict, new: dict) -> str:
    """The path of the whole input a changed key belongs to: the outermost ancestor that is a
    distribution or a dated value (has a `dist` or `day` key in either night), else the key."""
    parts = path.split(".")
    for cut in range(1, len(parts)):
        prefix = ".".join(parts[:cut])
        if any(f"{prefix}.{k}" in d for d in (old, new) for k in ("dist", "day")):
            return prefix
    return path


def model_lines(changes: list[InputChange], old: dict, new: dict) -> list[LogLine]:
    """A line per changed model input (every scenario key outside the strategies): the input
    in words, new and old value."""
    lines, seen = [], set()
    for change in changes:
        subject = _subject(change.key, old, new)
        if subject in seen:
            continue
        seen.add(subject)
        before, after = _nest(old, subject), _nest(new, subject)
        label = _label(subject)
        if before is None:
            text = f"{label} added: {distribution_words(after)}"
        elif after is None:
            text = f"{label} removed (was {distribution_words(before)})"
        else:
            text = f"{label}: {distribution_words(after)} (was {distribution_words(before)})"
        if label == subject:          # no words for this key: say so, with the raw line
            text = f"{text} [not worded: key {subject}]"
        lines.append(LogLine(MODEL, text))
    return lines


_STRATEGY = re.compile(r"strategies\[(?P<name>[^\]]+)\]\.?(?P<rest>.*)")
_STRATEGY_FIELDS = (
    (r"drain\[(.+)\]\.(on_accepted|on_arrival|day|lag_days)", "drain of {0}: {1} {new} (was {old})"),
    (r"drain\[(.+)\]", "drain of {0}: {new} (was {old})"),
    (r"place\[(.+)\]\.row", "placement of {0}: row {new} (was row {old})"),
    (r"place\[(.+)\]", "placement of {0}: {new} (was {old})"),
    (r"crews", "retrofit crews: {new} (was {old})"),
    (r"keep", "units kept in service: {new} (was {old})"),
    (r"description", "description changed"),
)
_TRIGGERS = {"on_accepted": "on acceptance of", "on_arrival": "on arrival of",
             "day": "on day", "lag_days": "lag days"}


def plan_lines(changes: list[InputChange], old_names: list[str],
               new_names: list[str]) -> list[LogLine]:
    """A line per strategy added or removed, and per changed field of a kept strategy."""
    lines = [LogLine(PLAN, f"strategy {n} added") for n in new_names if n not in old_names]
    lines += [LogLine(PLAN, f"strategy {n} removed") for n in old_names if n not in new_names]
    gone = set(old_names) ^ set(new_names)
    for change in changes:
        if change.key == "scenario.executing":
            lines.append(LogLine(PLAN, f"the plan being executed ([scenario] executing): "
                                       f"{change.new} (was {change.old})"))
            continue
        found = _STRATEGY.fullmatch(change.key)
        if found is None or found["name"] in gone:
            continue
        name, rest = found["name"], found["rest"]
        old = "none" if change.old is None else distribution_words(change.old)
        new = "none" if change.new is None else distribution_words(change.new)
        for pattern, words in _STRATEGY_FIELDS:
            m = re.fullmatch(pattern, rest)
            if m:
                groups = [_TRIGGERS.get(g, g) for g in m.groups()]
                lines.append(LogLine(PLAN, f"strategy {name}: "
                                     + words.format(*groups, new=new, old=old)))
                break
        else:
            lines.append(LogLine(PLAN, f"strategy {name}: {rest or 'its table'} {new} (was "
                                       f"{old}) [not worded: key {change.key}]"))
    return lines


def _promise(keys: dict, kind: str, ident: str):
    """The scenario's promised day of an event ('' when it names none)."""
    if kind == "shipment":
        return keys.get(f"shipments[{ident}].arrival.day")
    if kind == "hall":
        return keys.get(f"halls[{ident}].energized.day")
    if kind == "island":
        day = keys.get(f"islands[{ident}].delivery.day")
        install = keys.get(f"islands[{ident}].install_days")
        if isinstance(day, (int, float)) and isinstance(install, (int, float)):
            return day + install
        return day
    return None


_ATTEMPT = re.compile(r"burn-in attempt (\d+) (started|failed|passed)")


def _unit_words(events: list[dict], start) -> str:
    """One unit's new events as one clause list: 'installed in row B1 on day 177; failed
    burn-in on day 183 and a second time on day 192; passed on day 201; accepted on day 201'."""
    parts, failed, row = [], [], None
    running = None
    for e in events:
        what, day = str(e.get("event", "")), float(e.get("day", math.nan))
        m = _ATTEMPT.fullmatch(what)
        if what.startswith("install started"):
            found = re.search(r"in row (\S+)$", what)
            row = found.group(1) if found else None
            running = f"install started{f' in row {row}' if row else ''} on {when(day, start)}"
        elif what == "installed":
            running = None
            parts.append(f"installed{f' in row {row}' if row else ''} on {when(day, start)}")
        elif m and m.group(2) == "started":
            running = f"burn-in attempt {m.group(1)} running since {when(day, start)}"
        elif m and m.group(2) == "failed":
            running = None
            k = int(m.group(1))
            failed.append(f"failed burn-in on {when(day, start)}" if k == 1 else
                          f"failed burn-in a {_ordinal(k)} time on {when(day, start)}")
        elif m and m.group(2) == "passed":
            running = None
            k = int(m.group(1))
            parts += failed
            failed = []
            parts.append(f"passed burn-in{f' on attempt {k}' if k > 1 else ''} on "
                         f"{when(day, start)}")
        elif what.startswith("repair after attempt"):
            continue
        elif what == "accepted":
            parts.append(f"accepted on {when(day, start)}")
        elif what == "drain started":
            parts.append(f"drained from {when(day, start)}")
        elif what == "removed":
            parts.append(f"removed on {when(day, start)}")
        else:
            parts.append(f"{what} on {when(day, start)}")
    parts += failed
    if running:
        parts.append(running)
    return "; ".join(parts)


def _event_key(e: dict) -> tuple:
    return (e.get("kind"), e.get("id"), e.get("event"), e.get("day"))


def happened_lines(old_status: dict | None, new_status: dict | None, keys: dict,
                   start) -> list[LogLine]:
    """What the status records tonight that it did not last night, a line per shipment, hall,
    island and unit; and a line for a fact of last night's status that tonight's does not
    record as it was (a correction)."""
    if not isinstance(new_status, dict):
        return []
    before = (old_status or {}).get("events") or [] if isinstance(old_status, dict) else []
    seen = {_event_key(e) for e in before}
    fresh = [e for e in new_status.get("events") or [] if _event_key(e) not in seen]
    lines, units = [], {}
    for e in fresh:
        kind, ident, what = e.get("kind"), str(e.get("id")), str(e.get("event", ""))
        day = float(e.get("day", math.nan))
        if kind == "unit":
            units.setdefault(ident, []).append(e)
            continue
        late = late_words(day, _promise(keys, kind, ident))
        if kind == "shipment" and what == "arrived":
            text = f"{ident} arrived on {when(day, start)}{late}"
        elif kind == "hall" and what == "energized":
            text = f"hall {ident} energized on {when(day, start)}{late}"
        elif kind == "island":
            text = f"island {ident}'s {what} on {when(day, start)}{late}"
        else:
            text = f"{kind} {ident} {what} on {when(day, start)}{late}"
        lines.append(LogLine(HAPPENED, text))
    for ident, events in units.items():
        lines.append(LogLine(HAPPENED, f"{ident} {_unit_words(events, start)}"))
    now = {_event_key(e) for e in new_status.get("events") or []}
    gone = [e for e in before if _event_key(e) not in now]
    for e in gone:
        lines.append(LogLine(HAPPENED, f"corrected: {e.get('kind')} {e.get('id')} "
                                       f"{e.get('event')} on {when(float(e.get('day')), start)} "
                                       "is no longer recorded as it was"))
    return lines


_RISKS = re.compile(r"Risks: (.*)")
_PERFORMANCE = re.compile(r"Measured performance: (.*)")


def _split(listed: str) -> list[str]:
    return [p.strip() for p in re.split(r", | and ", listed) if p.strip()]


def _model_facts(status: dict | None) -> dict:
    """{('risk', id): 'occurred (30 days)' | 'can no longer occur', ('performance', type):
    value} from a status block's `happened` lines."""
    facts: dict = {}
    if not isinstance(status, dict):
        return facts
    for line in status.get("happened") or []:
        m = _RISKS.fullmatch(str(line))
        if m:
            for part in m.group(1).split("; "):
                head, _, listed = part.partition(": ")
                for item in _split(listed):
                    found = re.fullmatch(r"(\S+) \((.+)\)", item)
                    ident = found.group(1) if found else item
                    facts[("risk", ident)] = (f"occurred ({found.group(2)})" if found
                                              else head)
        m = _PERFORMANCE.fullmatch(str(line))
        if m:
            for item in _split(m.group(1)):
                found = re.fullmatch(r"(\S+) ([\d.,]+) H100-eq per GPU", item)
                if found:
                    facts[("performance", found.group(1))] = float(found.group(2).replace(",", ""))
    return facts


def status_model_lines(old_status, new_status, old_keys: dict) -> list[LogLine]:
    """The status's facts about the model that are new tonight: a risk that occurred or can
    no longer occur, a measured per-GPU performance (against last night's value: its
    measurement, or the scenario's distribution)."""
    before, after = _model_facts(old_status), _model_facts(new_status)
    lines = []
    for (kind, ident), value in after.items():
        if before.get((kind, ident)) == value:
            continue
        if kind == "risk":
            was = before.get((kind, ident))
            lines.append(LogLine(MODEL, f"risk {ident} {value}, from the status"
                                        + (f" (was: {was})" if was else "")))
        else:
            was = before.get((kind, ident))
            if was is None:
                was = distribution_words(_nest(old_keys, f"unit_types[{ident}].h100_eq_per_gpu"))
                was = f"PERT {was[5:]}" if was.startswith("PERT") else was
            else:
                was = f"measured {_num(was)}"
            lines.append(LogLine(MODEL, f"per-GPU performance of {ident} measured at "
                                        f"{_num(value)} (was {was})"))
    return lines


def change_log(old_keys: dict, new_keys: dict, old_summary: dict,
               new_summary: dict) -> list[LogLine]:
    """The night in words: every change between two nights, a line each, in GROUPS order."""
    start = new_summary.get("start_date")
    try:
        start = _dt.date.fromisoformat(start) if isinstance(start, str) else None
    except ValueError:
        start = None
    changes = key_changes(old_keys, new_keys)
    plan = [c for c in changes if c.key.startswith("strategies[") or c.key == "scenario.executing"]
    model = [c for c in changes if c not in plan]
    names = lambda keys: list(dict.fromkeys(  # noqa: E731
        m.group("name") for m in map(_STRATEGY.fullmatch, keys) if m))
    lines = happened_lines(old_summary.get("status"), new_summary.get("status"), new_keys, start)
    lines += plan_lines(plan, names(old_keys), names(new_keys))
    lines += status_model_lines(old_summary.get("status"), new_summary.get("status"), old_keys)
    lines += model_lines(model, old_keys, new_keys)
    return lines
