"""What changed between two nights' statuses (a migration in flight, --status): one sentence.

Each night's summary.json records its status (its `status` block: file, sha256, as_of and
every dated fact as an event). The sentence says whether the status changed (by sha256),
how its as_of moved, and which dated facts tonight's status records that last night's did
not: counted by what happened, named by id where few. It says what the data shows and no
more: which facts are new, and that the two nights count different windows when as_of moved;
never that a metric moved because of them (tonight's numbers differ by the new facts, the
shorter window and any scenario change together, and the comparison does not separate them).
"""
from __future__ import annotations

import re

_NAMED = 4          # ids named in a group of new facts when it has at most this many units


def _day(value) -> str:
    return f"day {value:g}" if isinstance(value, (int, float)) else f"day {value}"


def _what(event: dict) -> str:
    """What an event says happened, without its row or attempt number: 'install started',
    'burn-in attempt failed'."""
    text = re.sub(r" in row \S+$", "", str(event.get("event", "")))
    return re.sub(r"attempt \d+", "attempt", text)


_NOUNS = {"shipment": ("shipment", "shipments"), "hall": ("hall", "halls"),
          "island": ("island", "islands"), "row": ("row", "rows"),
          "unit": ("unit", "units")}


def _key(event: dict) -> tuple:
    return (event.get("kind"), event.get("id"), event.get("event"), event.get("day"))


def new_facts(previous: list[dict], current: list[dict]) -> list[str]:
    """Tonight's dated facts that last night's status did not record, grouped by what happened,
    in tonight's order: '2 shipments arrived (S3, S4)', 'burn-in attempt failed: 5 times, on
    4 units (N03, N08, N11, N12)'; units named where a group has at most _NAMED."""
    seen = {_key(e) for e in previous}
    groups: dict[tuple[str, str], list[str]] = {}
    for event in current:
        if _key(event) not in seen:
            groups.setdefault((str(event.get("kind")), _what(event)), []).append(
                str(event.get("id")))
    parts = []
    for (kind, what), ids in groups.items():
        one, many = _NOUNS.get(kind, (kind, kind + "s"))
        units = list(dict.fromkeys(ids))
        named = f" ({', '.join(units)})" if len(units) <= _NAMED else ""
        if len(ids) == len(units) and "attempt" not in what:
            parts.append(f"{len(ids)} {one if len(ids) == 1 else many} {what}{named}")
        else:                       # burn-in attempts: a unit may have several
            times = "once" if len(ids) == 1 else f"{len(ids)} times"
            parts.append(f"{what}: {times}, on {len(units)} "
                         f"{one if len(units) == 1 else many}{named}")
    return parts


def status_change(previous: dict, current: dict) -> str | None:
    """One sentence on how tonight's status differs from last night's (their summary.json
    documents), or None when neither night had a status. Plain text, ids as the scenario
    spells them: each output escapes the sentence as it writes it."""
    old, new = previous.get("status"), current.get("status")
    if not isinstance(old, dict) and not isinstance(new, dict):
        return None
    if not isinstance(old, dict):
        return (f"Tonight is conditioned on a status as of {_day(new.get('as_of'))} and last "
                "night on none, so tonight counts its metrics and costs from that day and last "
                "night from day 0.")
    if not isinstance(new, dict):
        return (f"Last night was conditioned on a status as of {_day(old.get('as_of'))} and "
                "tonight on none, so tonight counts its metrics and costs from day 0.")
    if old.get("sha256") == new.get("sha256"):
        return (f"Status unchanged since last night (same sha256, as of "
                f"{_day(new.get('as_of'))}).")
    before, after = old.get("as_of"), new.get("as_of")
    if before == after:
        moved = f"still as of {_day(after)}"
    else:
        moved = (f"as_of moved from {_day(before)} to {_day(after)}, so tonight's metrics and "
                 f"costs count from day {after:g} and last night's from day {before:g}" if isinstance(
                     before, (int, float)) and isinstance(after, (int, float))
                 else f"as_of moved from {_day(before)} to {_day(after)}")
    prev_events = old.get("events") or []
    cur_events = new.get("events") or []
    parts = new_facts(prev_events, cur_events)
    current_keys = {_key(e) for e in cur_events}
    gone = sum(1 for e in prev_events if _key(e) not in current_keys)
    facts = ("new dated facts: " + "; ".join(parts) if parts
             else "no new dated facts")
    dropped = (f"; {gone} dated fact{'s' if gone != 1 else ''} of last night's status "
               f"{'are' if gone != 1 else 'is'} not in tonight's as recorded then"
               if gone else "")
    return f"The status changed ({moved}): {facts}{dropped}."
