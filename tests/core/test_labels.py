"""One table of words (issue 23): every column's label and unit live in mcrisk.core.labels, and
no room (terminal, report, findings, figures, nightly, optimize) keeps a label of its own.

The table covers every metric, every cost column and both job-column forms; its forms
(heading, axis_label, share_label) are what the rooms print. The source of every room is read
(ast, docstrings aside) for a string that is a metric's label or one of its forms, a cost's
label of more than one word, or a unit of two parts ("H100-eq x days"): such a string belongs
in core/labels.py only. A dict keyed by column names with words for values is a room's own
label table, and is refused too.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mcrisk.core import labels
from mcrisk.core.definitions import COSTS, METRICS, job_columns

PACKAGE = Path(labels.__file__).resolve().parents[1]
TABLE = Path(labels.__file__).resolve()
# The rooms: every floor that shows a column to people. Below them (scenario, plan, backends)
# "shortfall" is a TOML key and a price, not a label.
ROOMS = ("results", "report", "app", "optimize", "cli")


def test_the_table_covers_every_metric_cost_and_job_column():
    assert tuple(labels.COLUMNS)[:len(METRICS)] == METRICS
    assert tuple(labels.COLUMNS)[len(METRICS):len(METRICS) + len(COSTS)] == COSTS
    for column in (*METRICS, *COSTS, *job_columns(("a", "big.one"))):
        words = labels.words(column)
        assert words.label and words.label == words.label.strip()
        assert words.unit == words.unit.strip() and "×" not in words.unit    # plain text
    for cost in COSTS:                      # money: in the run's currency, said by the rooms
        assert labels.unit(cost) == "" and labels.meaning(cost)
    with pytest.raises(KeyError):
        labels.words("trough_dept")


def test_each_metric_has_one_label_and_every_form_reads_it():
    assert len({labels.label(m) for m in METRICS}) == len(METRICS)
    assert labels.label("trough_days") == "trough days"
    assert labels.heading("trough_days") == "trough days"              # names its unit
    assert labels.heading("completion_day") == "completion day"
    assert labels.heading("trough_depth") == "trough depth (H100-eq)"
    assert labels.heading("shortfall_gpu_days") == "shortfall (H100-eq x days)"
    assert labels.heading("shortfall_gpu_days", typeset=True) == "shortfall (H100-eq × days)"
    assert labels.heading("power_violation") == "power over cap"        # no unit, no brackets
    assert labels.share_label("power_violation") == "P(power over cap)"
    assert labels.axis_label("trough_days") == "trough days (days below baseline)"
    for metric in METRICS:
        for form in (labels.heading(metric), labels.heading(metric, typeset=True),
                     labels.axis_label(metric), labels.share_label(metric)):
            assert labels.label(metric) in form


def test_a_job_class_column_reads_the_class_form_with_its_id():
    assert labels.label("unservable_gpu_days") == "unservable GPU-days"
    assert labels.unit("unservable_gpu_days") == "H100-eq x days"
    column = job_columns(("x{y}",))[1]                 # an id with braces is text, not a field
    assert labels.label(column) == "homeless days x{y}"
    assert labels.unit(column) == "days"
    assert labels.meaning(column).endswith("one job of class x{y}")


def _forbidden() -> dict[str, str]:
    """Each string only core/labels.py may hold, with the column it names."""
    words = {}
    for metric in METRICS:
        for form in (labels.label(metric), labels.heading(metric),
                     labels.heading(metric, typeset=True), labels.axis_label(metric),
                     labels.share_label(metric)):
            words[form] = metric
    for column in (*COSTS, "unservable_gpu_days"):
        if " " in labels.label(column):          # "energy", "total": plain words elsewhere
            words[labels.label(column)] = column
    for metric in METRICS:
        if " " in labels.unit(metric):
            words[labels.unit(metric)] = metric
            words[labels.unit(metric, typeset=True)] = metric
    return words


def _docstrings(tree: ast.AST) -> set[int]:
    """ids of the docstring constants of a module, its classes and functions."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


# Words of sentences, not labels: how a sentence says that a metric went up or down.
SENTENCE_WORDS = {("report/findings/gating.py", "_GATING_WORDS")}


def _room_sources():
    for room in ROOMS:
        for path in sorted((PACKAGE / room).rglob("*.py")):
            yield (path.relative_to(PACKAGE).as_posix(),
                   ast.parse(path.read_text("utf-8"), str(path)))


def _spelled(tree: ast.AST, forbidden: dict[str, str]) -> list[tuple[int, str]]:
    """(line, string) of every string outside a docstring that is a forbidden word, give or
    take the punctuation round it (an f-string's parts count one by one)."""
    skip = _docstrings(tree)
    return [(node.lineno, node.value) for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and id(node) not in skip and _named(node.value, forbidden)]


def _named(text: str, forbidden: dict[str, str]) -> str | None:
    """The column a string spells a forbidden word of (None: it spells none)."""
    for word in (text.strip(), text.strip(" ;:,()[]")):
        if word in forbidden:
            return forbidden[word]
    return None


def _tables(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, name) of every dict written with column names for keys and words (a string, or
    a tuple with one) for a value."""
    columns = set(METRICS) | set(COSTS) | {"unservable_gpu_days"}
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and isinstance(node.value, ast.Dict):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            name = ",".join(t.id for t in targets if isinstance(t, ast.Name))
            keys = [k.value for k in node.value.keys if isinstance(k, ast.Constant)]
            words = [v for v in node.value.values
                     if (isinstance(v, ast.Constant) and isinstance(v.value, str))
                     or (isinstance(v, ast.Tuple) and any(isinstance(e, ast.Constant)
                                                          and isinstance(e.value, str)
                                                          for e in v.elts))]
            if keys and columns.issuperset(keys) and words:
                found.append((node.lineno, name))
    return found


def test_no_room_spells_a_label_of_its_own():
    forbidden = _forbidden()
    found = [f"{path}:{line}: {text!r} (read core.labels for {_named(text, forbidden)})"
             for path, tree in _room_sources() for line, text in _spelled(tree, forbidden)]
    assert not found, "labels spelled outside mcrisk/core/labels.py:\n" + "\n".join(found)


def test_no_room_keeps_a_table_of_words_by_column():
    found = [f"{path}:{line} {name}" for path, tree in _room_sources()
             for line, name in _tables(tree) if (path, name) not in SENTENCE_WORDS]
    assert not found, "tables of words by column outside core/labels.py: " + ", ".join(found)


def test_the_guards_find_what_they_guard():
    """The two checks find a room's own table and a spelled label, so that their passing
    means something; core/labels.py itself is all tables and labels."""
    tree = ast.parse('"""Docstring: trough days."""\n'
                     'X = {"trough_days": "days below baseline"}\n'
                     'Y = f"{a} trough days"\n'
                     'Z = f"{b} ({n} H100-eq x days)"\n'
                     'W = {"trough_days": 1.0}\n'
                     'V = "P(power over cap)"\n')
    assert _tables(tree) == [(2, "X")]
    assert sorted(_spelled(tree, _forbidden())) == [(3, " trough days"), (4, " H100-eq x days)"),
                                                    (6, "P(power over cap)")]
    assert len(_spelled(ast.parse(TABLE.read_text("utf-8")), _forbidden())) >= len(METRICS)
