"""What changed between two nights' inputs: the scenario files' keys and the run settings.

A scenario file is flattened to {key path: value} (scenario_keys), with arrays of tables keyed
by their id, name or units (shipments[S1].arrival.day), so that two files compare key by key
and a change reads as one line. run_settings flattens the settings that choose a run's worlds
(seed, samples, the risk register as run) the same way.
"""
from __future__ import annotations

import json
import sys
from dataclasses import dataclass

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

_ID_KEYS = ("id", "name", "units", "hall")


@dataclass(frozen=True)
class InputChange:
    """One scenario key or run setting that was added, removed or changed."""

    key: str                   # a path like shipments[S1].arrival.day
    kind: str                  # "added" | "removed" | "changed"
    old: object = None
    new: object = None


def _element_keys(items: list[dict]) -> list[str]:
    """Labels for an array of tables: its id/name/units when unique, else the index."""
    for key in _ID_KEYS:
        labels = [item.get(key) for item in items]
        if all(isinstance(x, str) for x in labels) and len(set(labels)) == len(labels):
            return labels
    return [str(i) for i in range(len(items))]


def _flatten(value, path: str, out: dict) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _flatten(item, f"{path}.{key}" if path else key, out)
    elif isinstance(value, list) and value and all(isinstance(x, dict) for x in value):
        for label, item in zip(_element_keys(value), value):
            _flatten(item, f"{path}[{label}]", out)
    else:
        out[path] = value


def render_value(value) -> str:
    """A TOML value in one short line."""
    text = json.dumps(value, default=str, ensure_ascii=False)
    return text if len(text) <= 80 else text[:77] + "..."


def scenario_keys(text: str) -> dict:
    """A scenario file as {key path: value}, arrays of tables keyed by their id."""
    keys = {}
    _flatten(tomllib.loads(text), "", keys)
    return keys


def toml_changes(old_text: str, new_text: str) -> list[InputChange]:
    """Keys added, removed and changed between two scenario files, in the new file's order."""
    return key_changes(scenario_keys(old_text), scenario_keys(new_text))


def key_changes(old: dict, new: dict) -> list[InputChange]:
    """Keys added, removed and changed between two flattened scenario files (scenario_keys)."""
    changes = []
    for key, value in new.items():
        if key not in old:
            changes.append(InputChange(key, "added", None, value))
        elif old[key] != value:
            changes.append(InputChange(key, "changed", old[key], value))
    changes += [InputChange(key, "removed", value, None) for key, value in old.items()
                if key not in new]
    return changes


def run_settings(summary: dict) -> dict:
    """The settings of a run that choose its worlds, flattened like scenario_keys: seed,
    samples, and the risk register as run (summary.json's `risks`)."""
    out = {key: summary[key] for key in ("seed", "samples") if key in summary}
    if isinstance(summary.get("risks"), dict):
        _flatten(summary["risks"], "risks", out)
    return out

