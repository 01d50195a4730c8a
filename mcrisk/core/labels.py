"""Every column's words: the one table of labels and units that the terminal, the report, the
findings, the figures, the nightly and optimize all read, so that a metric is called the same
thing in every room ("trough days", never "days below baseline" in one and "trough days" in
another).

COLUMNS is keyed by column name: each metric (definitions.METRICS), each cost column
(definitions.COSTS) and the job columns' two forms (definitions.job_columns:
unservable_gpu_days, and JOB_CLASS for every homeless_days.<id>). Each entry (Words) holds

    label      a short noun phrase, the column's name for people: "trough depth"
    unit       the unit as plain text (terminal, Markdown, sentences, summary.json, parquet
               metadata): "H100-eq x days"; "" for a share, and for money (a cost column is in
               the run's currency)
    typeset    the unit as report.html and the figures set it, where it differs: "H100-eq × days"
    axis       what the number counts, typeset, for a figure's axis: "H100-eq below baseline"
    meaning    one line on what it counts (summary.json's costs.columns and jobs.columns)
    says_unit  whether the label already names the unit ("trough days"), so that a heading
               puts no unit in brackets after it

and the rooms take their forms from the functions below rather than joining their own:

    label(column)                    "trough depth"
    unit(column, typeset=False)      "H100-eq x days", or typeset "H100-eq × days"
    heading(column, typeset=False)   a table heading: "trough depth (H100-eq)", "trough days"
    axis_label(column)               a figure axis: "trough depth (H100-eq below baseline)"
    share_label(column)              the share of scenarios where it holds: "P(power over cap)"
    meaning(column)                  the one line of summary.json

A job class's column (homeless_days.<id>) reads JOB_CLASS with its id put in. The words of
sentences (findings, warnings) stay in their rooms; the names they call a column by come
from here. docs/metrics.md and docs/costs.md define the columns exactly.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .definitions import COSTS, METRICS


@dataclass(frozen=True)
class Words:
    """A column's words (the module docstring says what each field is for)."""
    label: str
    unit: str = ""
    typeset: str = ""
    axis: str = ""
    meaning: str = ""
    says_unit: bool = False


# A job class's column: "homeless_days." then the class id (definitions.job_columns); the
# entry's {id} is the class's id.
JOB_CLASS = "homeless_days.{id}"
_JOB_CLASS_PREFIX = JOB_CLASS[:JOB_CLASS.index("{")]

_DAYS = "days"
_GPU_DAYS, _GPU_DAYS_TYPESET = "H100-eq x days", "H100-eq × days"

COLUMNS: dict[str, Words] = {
    # the metrics, in METRICS order
    "trough_depth": Words("trough depth", "H100-eq", axis="H100-eq below baseline"),
    "trough_days": Words("trough days", _DAYS, axis="days below baseline", says_unit=True),
    "shortfall_gpu_days": Words("shortfall", _GPU_DAYS, _GPU_DAYS_TYPESET,
                                axis=f"{_GPU_DAYS_TYPESET} against demand"),
    "homeless_days": Words("homeless days", _DAYS, axis="days with no island big enough",
                           says_unit=True),
    "completion_day": Words("completion day", _DAYS,
                            axis="last old unit removed and last new unit accepted",
                            says_unit=True),
    "power_violation": Words("power over cap", axis="some hall's draw over its power cap"),
    # the cost columns, in COSTS order: money, in the run's currency
    "cost_total": Words("total", meaning="every cost below, added up"),
    "cost_power_reserved": Words(
        "reserved power", meaning="reserved power: each reservation step's kW for its days, "
                                  "at the price per kW-month"),
    "cost_power_over": Words(
        "power over the reservation", meaning="drawing above the reservation: the excess kW "
                                              "for its days, at the price per kW-month of excess"),
    "cost_energy": Words(
        "energy", meaning="metered energy: the halls' draw x load factor x PUE, at the price "
                          "per kWh"),
    "cost_old_fleet": Words(
        "old fleet running", meaning="running the old fleet: each existing unit from day 0 "
                                     "until its removal"),
    "cost_new_waiting": Words(
        "new units waiting", meaning="new units waiting: each new unit from its shipment's "
                                     "arrival until its acceptance"),
    "cost_shortfall": Words(
        "shortfall (backfill)", meaning=f"the shortfall against demand ({_GPU_DAYS}), priced "
                                        "as backfill per H100-eq-hour"),
    "cost_crews": Words(
        "retrofit crews", meaning="the retrofit crews, from the first retrofit's start to the "
                                  "last one's end (and any priced install teams and burn-in "
                                  "bays, each pool from its first start to its last end)"),
    "cost_mitigation": Words("mitigation", meaning="what the mitigations in effect cost, once each"),
    # the job columns ([[demand.jobs]]), in definitions.job_columns' order
    "unservable_gpu_days": Words(
        "unservable GPU-days", _GPU_DAYS, _GPU_DAYS_TYPESET,
        meaning="demand that total capacity could hold but the islands could not pack (a job "
                "never spans two islands), integrated over [0, H) by the midpoint rule on "
                "cells of packing_step_days"),
    JOB_CLASS: Words(
        "homeless days {id}", _DAYS, says_unit=True,
        meaning="time in [0, H) during which no island's capacity holds one job of class {id}"),
}
assert tuple(COLUMNS)[:len(METRICS)] == METRICS, "the metrics first, in METRICS order"
assert tuple(COLUMNS)[len(METRICS):len(METRICS) + len(COSTS)] == COSTS, "then COSTS, in order"


def words(column: str) -> Words:
    """The entry of `column`: its own, or for a job class's column (homeless_days.<id>)
    JOB_CLASS's with the id put in. KeyError for a column the table does not know."""
    found = COLUMNS.get(column)
    if found is not None:
        return found
    if column.startswith(_JOB_CLASS_PREFIX):
        job = column[len(_JOB_CLASS_PREFIX):]
        form = COLUMNS[JOB_CLASS]
        return replace(form, label=form.label.format(id=job),
                       meaning=form.meaning.format(id=job))
    raise KeyError(f"no words for column {column!r} (mcrisk.core.labels.COLUMNS)")


def label(column: str) -> str:
    """The column's name for people: 'trough depth', 'shortfall', 'total'."""
    return words(column).label


def unit(column: str, typeset: bool = False) -> str:
    """The column's unit: as plain text ('H100-eq x days'), or as report.html and the figures
    set it (typeset: 'H100-eq × days'); '' for a share and for money."""
    entry = words(column)
    return (entry.typeset or entry.unit) if typeset else entry.unit


def heading(column: str, typeset: bool = False) -> str:
    """A table's heading of the column: the label with its unit in brackets, 'trough depth
    (H100-eq)', 'shortfall (H100-eq x days)'; the label alone where it names its unit
    ('trough days', 'completion day') or there is none ('power over cap')."""
    entry = words(column)
    shown = unit(column, typeset)
    return entry.label if entry.says_unit or not shown else f"{entry.label} ({shown})"


def axis_label(column: str) -> str:
    """A figure's axis of the column: the label with what the number counts, typeset,
    'trough depth (H100-eq below baseline)'; the label alone where the table has no axis."""
    entry = words(column)
    return f"{entry.label} ({entry.axis})" if entry.axis else entry.label


def share_label(column: str) -> str:
    """The share of scenarios in which the column holds: 'P(power over cap)'."""
    return f"P({label(column)})"


def meaning(column: str) -> str:
    """What the column counts, in one line (summary.json's costs.columns, jobs.columns)."""
    return words(column).meaning
