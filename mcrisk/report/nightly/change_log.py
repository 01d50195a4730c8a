"""The night in words: what changed between two nights as a change log a person reads, one
line per change, grouped under what happened (the status's new facts, including its facts
about the model itself: a risk that occurred or can no longer occur, a measured performance;
units whose new events read alike share a line), what the plan changed (strategies) and what
the model changed (every other scenario input: what the attribution calls model changes).

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


def late_words(day: float, promised, start=None) -> str:
    """', 27 days late (promised day 75)' / ', 3 days early (promised ...)' / ', on time'
    against a promised day ('' without). The promised day is said: the milestone table
    measures lateness against the plan's P50 instead, and the two must not read as one."""
    if not isinstance(promised, (int, float)) or isinstance(promised, bool):
        return ""
    d = day - promised
    if abs(d) < 0.5:
        return ", on time"
    n = round(abs(d))
    return (f", {n} day{'s' if n != 1 else ''} {'late' if d > 0 else 'early'} (promised "
            f"{when(promised, start)})")


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


def _unit_clauses(events: list[dict]) -> tuple[list[tuple[str, float]], bool]:
    """One unit's new events as (clause, day) pairs in reading order ('installed in row B1',
    177.0), and whether any of them is notable: a failed burn-in, an attempt still running, a
    pass after a failure, or an event the rules below do not know. A repair's end is not a
    clause (the next attempt's start says it)."""
    parts, failed, row = [], [], None
    running, notable = None, False
    for e in events:
        what, day = str(e.get("event", "")), float(e.get("day", math.nan))
        m = _ATTEMPT.fullmatch(what)
        if what.startswith("install started"):
            found = re.search(r"in row (\S+)$", what)
            row = found.group(1) if found else None
            running = (f"install started{f' in row {row}' if row else ''}", day)
        elif what == "installed":
            running = None
            parts.append((f"installed{f' in row {row}' if row else ''}", day))
        elif m and m.group(2) == "started":
            running = (f"burn-in attempt {m.group(1)} running since", day)
            notable = notable or int(m.group(1)) > 1
        elif m and m.group(2) == "failed":
            running, notable = None, True
            k = int(m.group(1))
            failed.append(("failed burn-in" if k == 1 else f"failed burn-in a {_ordinal(k)} time",
                           day))
        elif m and m.group(2) == "passed":
            running = None
            k = int(m.group(1))
            notable = notable or k > 1
            parts += failed
            failed = []
            parts.append((f"passed burn-in{f' on attempt {k}' if k > 1 else ''}", day))
        elif what.startswith("repair after attempt"):
            continue
        elif what == "accepted":
            parts.append(("accepted", day))
        elif what == "drain started":
            parts.append(("drain started", day))
        elif what == "removed":
            parts.append(("removed", day))
        else:
            notable = True
            parts.append((what, day))
    parts += failed
    if running:
        parts.append(running)
        notable = notable or running[0].startswith("burn-in attempt")
    return parts, notable


def _clause(label: str, day: float, start) -> str:
    if label.endswith(" since"):
        return f"{label} {when(day, start)}"
    return f"{label} on {when(day, start)}"


def _unit_words(events: list[dict], start) -> str:
    """One unit's new events as one clause list: 'installed in row B1 on day 177; failed
    burn-in on day 183; failed burn-in a second time on day 192; passed burn-in on attempt 3
    on day 201; accepted on day 201'."""
    return "; ".join(_clause(label, day, start) for label, day in _unit_clauses(events)[0])


def _days_words(days: list[float], start) -> str:
    """'on day 195', or 'between day 175 and day 186' for a group's range of days."""
    low, high = min(days), max(days)
    if low == high:
        return f"on {when(low, start)}"
    return f"between {when(low, start)} and {when(high, start)}"


def _id_order(ident: str) -> tuple:
    m = re.fullmatch(r"(.*?)(\d+)", ident)
    return (m.group(1), int(m.group(2)), ident) if m else (ident, -1, ident)


def unit_ids(ids: list[str]) -> str:
    """Unit ids as a short list, consecutive numbers as a range the way a scenario writes
    one: 'N01, N02, N04..N07, N09, N10'."""
    def split(ident):
        m = re.fullmatch(r"(.*?)(\d+)", ident)
        return (m.group(1), int(m.group(2)), len(m.group(2))) if m else (ident, None, 0)
    runs: list[list[str]] = []
    for ident in ids:
        prefix, n, width = split(ident)
        if runs and n is not None:
            p, last, w = split(runs[-1][-1])
            if p == prefix and last is not None and n == last + 1 and w == width:
                runs[-1].append(ident)
                continue
        runs.append([ident])
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}, {r[1]}" if len(r) == 2
                     else f"{r[0]}..{r[-1]}" for r in runs)


_FIRST_TRY = {"passed burn-in": "passed burn-in at the first attempt"}


def _unit_lines(units: dict[str, list[dict]], start) -> list[str]:
    """A line per unit with a notable event (a failed burn-in, an attempt running); units whose
    new events read alike (the same steps, the same row) share one line with their range of
    days: 'N01, N02, N04..N07, N09, N10 (8 units): installed in row B1 between day 175 and
    day 186; passed burn-in between ...; accepted between ...'. A unit alone keeps its own
    line with its own days."""
    groups: dict[tuple, list[tuple[str, list]]] = {}
    order: list[tuple] = []
    for ident, events in units.items():
        clauses, notable = _unit_clauses(events)
        key = ("notable", ident) if notable else tuple(label for label, _ in clauses)
        if key not in groups:
            groups[key] = []
            order.append(key)
        groups[key].append((ident, clauses))
    lines = []
    for key in order:
        members = groups[key]
        if len(members) == 1:
            ident, clauses = members[0]
            lines.append(f"{ident} " + "; ".join(_clause(label, day, start)
                                                 for label, day in clauses))
            continue
        ids = sorted((ident for ident, _ in members), key=_id_order)
        steps = [_days_words([clauses[k][1] for _, clauses in members], start) for k in
                 range(len(key))]
        lines.append(f"{unit_ids(ids)} ({len(members)} units): "
                     + "; ".join(f"{_FIRST_TRY.get(label, label)} {days}"
                                 for label, days in zip(key, steps)))
    return lines


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
        late = late_words(day, _promise(keys, kind, ident), start)
        if kind == "shipment" and what == "arrived":
            text = f"{ident} arrived on {when(day, start)}{late}"
        elif kind == "hall" and what == "energized":
            text = f"hall {ident} energized on {when(day, start)}{late}"
        elif kind == "island":
            text = f"island {ident}'s {what} on {when(day, start)}{late}"
        else:
            text = f"{kind} {ident} {what} on {when(day, start)}{late}"
        lines.append(LogLine(HAPPENED, text))
    lines += [LogLine(HAPPENED, text) for text in _unit_lines(units, start)]
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
    measurement, or the scenario's distribution). They are what happened, not what the model
    changed: they come in tonight's status file, and the executing plan's attribution counts
    them with the status facts (a line under 'what the model changed' beside 'model changes:
    nothing changed' read as a contradiction)."""
    before, after = _model_facts(old_status), _model_facts(new_status)
    lines = []
    for (kind, ident), value in after.items():
        if before.get((kind, ident)) == value:
            continue
        if kind == "risk":
            was = before.get((kind, ident))
            lines.append(LogLine(HAPPENED, f"risk {ident} {value}"
                                           + (f" (was: {was})" if was else "")))
        else:
            was = before.get((kind, ident))
            if was is None:
                was = distribution_words(_nest(old_keys, f"unit_types[{ident}].h100_eq_per_gpu"))
                was = f"PERT {was[5:]}" if was.startswith("PERT") else was
            else:
                was = f"measured {_num(was)}"
            lines.append(LogLine(HAPPENED, f"per-GPU performance of {ident} measured at "
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
    lines += status_model_lines(old_summary.get("status"), new_summary.get("status"), old_keys)
    lines += plan_lines(plan, names(old_keys), names(new_keys))
    lines += model_lines(model, old_keys, new_keys)
    return lines


def _risk_words(entry: dict | None) -> str:
    """A risk as run, in words: 'on with probability 1 and impact 30 days' / 'off (as
    written: probability 0.2, impact lognormal, median 30, P90 90 days)'."""
    if not isinstance(entry, dict):
        return "not in the register"
    impact = dict(entry.get("impact") or {})
    if "kind" in impact:
        impact["dist"] = impact.pop("kind")
    p = entry.get("probability")
    p = f"{p:g}" if isinstance(p, (int, float)) and not isinstance(p, bool) else p
    impact = f"{distribution_words(impact)} days"
    if entry.get("enabled"):
        return f"on with probability {p} and impact {impact}"
    return f"off (as written: probability {p}, impact {impact})"


def run_setting_lines(old_summary: dict, new_summary: dict,
                      changes: list[InputChange]) -> list[str]:
    """The run settings that changed, in words: a line per risk whose register entry changed
    (as run tonight, as run last night, and the status's fact that caused it), the seed and
    the sample count; risks.enabled / risks.disabled only where no risk line says it; any
    other setting as its key line (no change is dropped)."""
    register = lambda s: {r.get("id"): r for r in ((s.get("risks") or {}).get("register")  # noqa
                                                   or []) if isinstance(r, dict)}
    old_risks, new_risks = register(old_summary), register(new_summary)
    facts = _model_facts(new_summary.get("status"))
    lines, worded = [], set()
    for change in changes:
        found = re.fullmatch(r"risks\.register\[(.+?)\]\..*", change.key)
        if found is None or found.group(1) in worded:
            continue
        ident = found.group(1)
        worded.add(ident)
        fact = facts.get(("risk", ident))
        lines.append(f"risk {ident} {_risk_words(new_risks.get(ident))} tonight"
                     + (f", as the status records it {fact}" if fact else "")
                     + f"; last night {_risk_words(old_risks.get(ident))}")
    for change in changes:
        if change.key in ("seed", "samples") and change.kind == "changed":
            lines.append(f"{change.key} {change.new:,} (last night {change.old:,})")
        elif change.key == "risks.mode" and change.kind == "changed":
            lines.append(f"risk mode {change.new} (last night {change.old})")
        elif change.key in ("risks.enabled", "risks.disabled") and isinstance(change.old, list) \
                and isinstance(change.new, list) and set(change.old) ^ set(change.new) <= worded:
            continue
        elif change.key.startswith("risks.register["):
            continue
        else:
            lines.append(f"run setting {change.kind} {change.key}: "
                         + (f"{render_value(change.old)} -> {render_value(change.new)}"
                            if change.kind == "changed" else render_value(
                                change.new if change.kind == "added" else change.old)))
    return lines
