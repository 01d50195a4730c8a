"""The command line's grammar: every subcommand, its options, and how each option's text is
read (counts with thousands separators, seeds, fractions), so that a bad value is argparse's
exit 2 with a message before anything runs.
"""
from __future__ import annotations

import argparse
import re
from pathlib import Path

from .. import __version__
from ..results.precision import parse_precision
from ..backends import BACKEND_NAMES
from ..core.risks import RISK_MODES
from ..app.run import DEFAULT_SAMPLES, DEFAULT_SEED
from ..backends.chunks import DEFAULT_CHUNK, JOB_MIX_CHUNK, MAX_SAMPLES

# Digits, optionally grouped by thousands with commas or underscores: 20000, 20,000, 20_000.
_WHOLE_NUMBER = re.compile(r"\d+|\d{1,3}(,\d{3})+|\d{1,3}(_\d{3})+")


def _positive_int(text: str) -> int:
    """A count >= 1 and at most MAX_SAMPLES; '1,000' and '1_000' are read as 1000, but only
    when every group has three digits ('1,0,0' is an error, not 100)."""
    if not _WHOLE_NUMBER.fullmatch(text.strip()):
        raise argparse.ArgumentTypeError(
            f"{text!r} is not a whole number (write e.g. 20000, 20,000 or 20_000)")
    value = int(text.strip().replace("_", "").replace(",", ""))
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1, got {value}")
    if value > MAX_SAMPLES:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SAMPLES:,}, got {value:,}")
    return value


def _out_folder(text: str) -> Path:
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty path names no folder (name the output "
                                         "folder, e.g. --out out/run1)")
    return Path(text)


def _seed(text: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer seed") from None
    if not 0 <= value < 2 ** 64:
        raise argparse.ArgumentTypeError("the seed must be in [0, 2**64)")
    return value


def _precision(text: str) -> float:
    try:
        return parse_precision(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _precision_floor(text: str) -> float:
    """--precision-floor: a number > 0. With 0, a P90 of 0 (no trough in any scenario, say)
    would have to be known to within 0, which no interval can be: the run could not end."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0 < value < float("inf"):
        raise argparse.ArgumentTypeError(
            f"must be a number > 0, got {text} (a P90 of 0 can never be known to within 0; "
            f"use a small amount in the metric's unit, e.g. 0.5)")
    return value


def _add_world_options(command: argparse.ArgumentParser) -> None:
    """Options that choose the sampled worlds: samples, seed, backend, risk register."""
    command.add_argument("--samples", type=_positive_int, default=DEFAULT_SAMPLES,
                         help=f"Monte Carlo scenarios (default {DEFAULT_SAMPLES:,})")
    command.add_argument("--seed", type=_seed, default=DEFAULT_SEED,
                         help=f"random seed in [0, 2**64) (default {DEFAULT_SEED})")
    command.add_argument("--backend", choices=BACKEND_NAMES, default="auto",
                         help="numpy (reference), numba (CPU), cuda (GPU through CuPy) or "
                              "cuda-host (the CUDA sources built for this CPU with a C++ "
                              "compiler, one thread: parity checks); auto picks cuda when CuPy "
                              "and a device are present, else numba; cpu and gpu are aliases "
                              "of numba and cuda")
    command.add_argument("--chunk-size", type=_positive_int, default=None,
                         help=f"scenarios per kernel call (default {DEFAULT_CHUNK:,}, "
                              f"{JOB_MIX_CHUNK:,} with a job mix, whose scenarios cost more, "
                              "fewer for a very large plan; a stop comes between calls); "
                              "results do not depend on it")
    command.add_argument("--status", default=None, metavar="FILE",
                         help="a migration in flight: the status file of what has happened "
                              "by its status date (docs/status.md); every number is then "
                              "conditioned on it, and the metrics cover the days after it")
    command.add_argument("--risks", choices=RISK_MODES, default="file",
                         help="risk register: as in the file (default), off, every risk "
                              "pre-mitigation, or post-mitigation")
    command.add_argument("--disable-risk", action="append", default=[], metavar="ID",
                         help="switch one risk of the register off (repeatable)")
    command.add_argument("--quiet", action="store_true",
                         help="no progress on stderr (shown only on a terminal: the phases "
                              "compile, simulate, summarize and write, with rate and ETA)")


def _add_dask_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--dask", default=None, metavar="ADDRESS",
                         help="run the chunks on Dask: local:N (a local cluster of N worker "
                              "processes, N at most the cores) or an existing scheduler's "
                              "address, e.g. tcp://host:8786 (a bad one fails within 5 s); "
                              "the same numbers as in one process (needs "
                              "pip install 'mcrisk[dask]'; docs/dask.md)")


def _add_scenarios_out_options(command: argparse.ArgumentParser) -> None:
    """--scenarios-out / --no-scenarios-out and --scenarios-budget: when metrics.parquet,
    one row per scenario x strategy, is written (mcrisk.core.outputs.metrics_parquet_entry)."""
    command.add_argument("--scenarios-out", action=argparse.BooleanOptionalAction,
                         default=None,
                         help="write metrics.parquet (one row per scenario x strategy) even "
                              "over the row budget; --no-scenarios-out: never (default: "
                              "written up to --scenarios-budget rows)")
    command.add_argument("--scenarios-budget", type=_positive_int, default=None,
                         metavar="ROWS",
                         help="the most scenario x strategy rows metrics.parquet is written "
                              "with by default (default 5,000,000: 1e6 scenarios x 5 "
                              "strategies; docs/metrics.md)")


def _add_mitigation_option(command: argparse.ArgumentParser) -> None:
    command.add_argument("--no-mitigation", action="store_true",
                         help="skip the value of mitigation (by default, when a risk of the "
                              "run has mitigated values, the other side of the register, pre "
                              "or post, is simulated too on the same worlds: one more "
                              "simulation)")


def _add_precision_options(command: argparse.ArgumentParser) -> None:
    """--precision, --precision-floor and --max-samples, as `run` has them."""
    command.add_argument("--precision", type=_precision, default=None, metavar="FRACTION",
                         help="instead of --samples: sample until every P90's 95%% interval "
                              "half-width is under this fraction of it, e.g. 2%%")
    command.add_argument("--precision-floor", type=_precision_floor, default=0.5,
                         metavar="ABS", help="...or under this, in the metric's unit "
                                             "(for values near 0; default 0.5)")
    command.add_argument("--max-samples", type=_positive_int, default=10_000_000,
                         help="cap for --precision (default 10,000,000)")


def _add_optimize_command(commands) -> None:
    """`mcrisk optimize SEARCH --out DIR`: search sequencing plans (docs/optimize.md). The
    seeds, scenario counts and objective are the search file's, so the command has few
    options of its own."""
    optimize = commands.add_parser(
        "optimize", help="search sequencing plans on the same sampled worlds",
        description="Read the search file SEARCH (its [search] section names the scenario, "
                    "the template strategy and the knobs), race every candidate plan on the "
                    "same sampled worlds, evaluate the best on a fresh seed against the "
                    "written strategies, and write optimize.json, strategies.toml and "
                    "report.html to --out. See docs/optimize.md.")
    optimize.add_argument("search", help="search TOML file, e.g. scenarios/reference-search.toml")
    optimize.add_argument("--out", type=_out_folder, default=None,
                          help="output folder (default out/<search file stem>); replaced as "
                               "a whole, so it must hold only files mcrisk wrote")
    optimize.add_argument("--status", default=None, metavar="FILE",
                          help="a migration in flight: search the plans from its status date "
                               "on (docs/status.md)")
    optimize.add_argument("--backend", choices=BACKEND_NAMES, default="auto",
                          help="numpy, numba, cuda or cuda-host, as for run (auto: cuda when "
                               "a device is present, else numba); the plans do not depend on it")
    optimize.add_argument("--chunk-size", type=_positive_int, default=None,
                          help="scenarios per kernel call; results do not depend on it")
    optimize.add_argument("--quiet", action="store_true",
                          help="no progress on stderr (the phases generate, race stage k, "
                               "evaluate and write)")
    _add_dask_option(optimize)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcrisk",
        description="Monte Carlo risk of the capacity trough when a GPU cluster changes generation.")
    parser.add_argument("--version", action="version", version=f"mcrisk {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="simulate every strategy of a scenario and report")
    run.add_argument("scenario", help="scenario TOML file, e.g. scenarios/reference-2048.toml")
    _add_world_options(run)
    _add_dask_option(run)
    run.add_argument("--out", type=_out_folder, default=None,
                     help="output folder (default out/<scenario file stem>, or "
                          "out/<stem>-risks-<mode> with --risks off, pre or post); a run "
                          "replaces it as a whole, so it must hold only files mcrisk wrote")
    _add_mitigation_option(run)
    _add_precision_options(run)
    run.add_argument("--csv", action="store_true",
                     help="also write ranking.csv, strategies.csv and milestones.csv")
    _add_scenarios_out_options(run)
    schedule = commands.add_parser(
        "schedule", help="milestone dates of one strategy (P10/P50/P90, criticality)",
        description="Simulate SCENARIO and print STRATEGY's milestones: P10, P50 and P90 day "
                    "(with dates when the scenario sets start_date), the P90's 95%% interval "
                    "and how often each lies on the critical path to completion.")
    schedule.add_argument("scenario", help="scenario TOML file")
    schedule.add_argument("strategy", help="strategy name")
    _add_world_options(schedule)
    _add_dask_option(schedule)
    schedule.add_argument("--all", action="store_true",
                          help="every per-unit milestone too (default: waves, rows, halls, "
                               "shipments, islands and completion)")
    compare = commands.add_parser(
        "compare", help="paired comparison of two strategies on the same sampled worlds",
        description="Simulate SCENARIO and compare strategy A with strategy B scenario by "
                    "scenario (common random numbers): the distribution of A - B per metric, "
                    "its P90 with a 95%% interval, and P(A worse than B).")
    compare.add_argument("scenario", help="scenario TOML file")
    compare.add_argument("a", help="strategy A")
    compare.add_argument("b", help="strategy B")
    _add_world_options(compare)
    _add_dask_option(compare)
    _add_mitigation_option(compare)
    nightly = commands.add_parser(
        "nightly", help="a dated run in a history folder, compared with the previous night",
        description="Run SCENARIO into a new dated folder of --history, compare it with the "
                    "previous successful run (diff.md, in report.html too), and check "
                    "--fail-if conditions: exit 3 when one is breached. See docs/nightly.md.")
    nightly.add_argument("scenario", help="scenario TOML file")
    nightly.add_argument("--history", type=Path, required=True,
                         help="history folder: one subfolder per run, and index.json")
    _add_world_options(nightly)      # keep --samples and --seed fixed night to night: paired
    _add_precision_options(nightly)
    nightly.add_argument("--fail-if", action="append", default=[], metavar="EXPR",
                         help="exit 3 when EXPR holds, e.g. 'hybrid-gated.trough_depth.p90 > 0', "
                              "'any.power_violation.probability > 0', "
                              "'hybrid-gated.trough_days.p90.delta > 5', on any column the run "
                              "reports: 'big-bang.cost_total.p90 > 6e7', "
                              "'any.homeless_days.frontier.p90 > 10', "
                              "'hybrid-gated.milestone.completion.p90.date > 2027-11-30' "
                              "(repeatable; a .delta counts only when the diff reports the "
                              "change; docs/nightly.md)")
    nightly.add_argument("--materiality", action="append", default=[], metavar="SPEC",
                         help="smallest change the diff reports: a share of the value, e.g. "
                              "2%%, and/or METRIC=AMOUNT in the metric's unit, e.g. "
                              "trough_days=2 (repeatable or comma-separated; default 1%% and "
                              "one unit of each metric, power_violation=0.001)")
    nightly.add_argument("--keep-large", type=_positive_int, default=None, metavar="N",
                         help="after a successful night, delete metrics.parquet and "
                              "capacity_bands.parquet of this scenario's nights older than "
                              "the latest N (the rest of their folders stays)")
    _add_dask_option(nightly)
    _add_scenarios_out_options(nightly)
    _add_optimize_command(commands)
    validate = commands.add_parser("validate", help="check scenario files (and optimize's "
                                                    "search files), report every problem")
    validate.add_argument("scenario", nargs="+")
    validate.add_argument("--status", default=None, metavar="FILE",
                          help="also check this status file against the scenario (one "
                               "scenario): its facts, and that the scenario allows them")
    return parser
