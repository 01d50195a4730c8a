"""The command line: the only place that prints or exits.

The top floor: it parses, calls the application layer (mcrisk.app.run, mcrisk.app.compare,
mcrisk.app.schedule, mcrisk.app.nightly, mcrisk.optimize.run) and prints what comes back.
Beyond `validate` (load and compile each file) it orchestrates nothing itself.

    options        the options every simulating command shares, parsed and checked
    text           the tables and sentences of run, compare and schedule
    optimize_text  the same for optimize
    contingent_text  contingent strategies: branches taken and the value of flexibility
    progress       bars with a rate and an ETA on stderr (core.progress's terminal face)

    mcrisk run SCENARIO [--samples N] [--seed S] [--backend auto|numpy|numba|cuda] [--out DIR]
               [--risks file|off|pre|post] [--disable-risk ID ...] [--precision 2%]
    mcrisk compare SCENARIO A B [--samples N] [--seed S] [--backend B] [--risks MODE]
    mcrisk schedule SCENARIO STRATEGY [--samples N] [--seed S] [--backend B] [--all]
                    [--dask local:N|ADDRESS]
    mcrisk nightly SCENARIO --history DIR [--samples N] [--seed S] [--backend B]
                   [--risks MODE] [--disable-risk ID ...] [--precision 2%]
                   [--fail-if EXPR ...] [--materiality 1%,trough_days=1] [--keep-large N]
    mcrisk optimize SEARCH [--out DIR] [--backend B] [--chunk-size N] [--quiet]
    mcrisk validate SCENARIO [SCENARIO ...]       (a search file, too: mcrisk.optimize.space)

Exit codes: 0 ok, 2 bad input (scenario, backend, --fail-if, --out), 3 a --fail-if condition
was breached (the nightly run is still complete and registered), 130 interrupted (SIGINT,
Ctrl-C), 143 stopped by SIGTERM (what systemd and schedulers send). Both stops unwind the same
way, so every cleanup runs: no temporary file or staging folder is left behind
(mcrisk.core.stops: also when the stop lands in a finalizer, and, through mcrisk.__main__,
while the modules load or the process winds down).
"""
from __future__ import annotations

import argparse
import errno
import sys
from pathlib import Path

from .. import __version__
from ..core.labels import label, unit
from ..results.mitigation import risk_mode_text
from ..results.precision import PrecisionTarget, precision_target
from ..plan.compile import compile_scenario
from ..core.risks import select_risks
from ..backends.dask import check_address, retried_chunks, retried_text
from ..core.errors import McriskError, ScenarioError
from ..core.stops import Terminated, stop_message, stop_status, stops_unwind
from ..core.outputs import metrics_parquet_text
from ..app.run import RunResult, load_for_run, run_scenario
from ..scenario import load_scenario, load_status, scenario_warnings
from ..core.facts import with_facts
from .options import build_parser
from .progress import terminal_progress
from .contingent_text import format_contingent
from .text import (count_noun, escaped, format_compare_mitigation, format_comparison,
                   format_cost_comparison,
                   format_drivers, format_horizon_warnings, format_mitigation, format_precision,
                   format_table)
from .text import (compare_window_text, format_costs, format_executing, format_jobs,
                   format_status)

__all__ = ["main", "build_parser", "default_out", "format_table", "format_costs",
           "format_horizon_warnings",
           "format_comparison", "format_drivers", "format_mitigation", "format_precision",
           "Terminated", "EXIT_OK", "EXIT_INPUT", "EXIT_BREACHED"]

EXIT_OK, EXIT_INPUT, EXIT_BREACHED = 0, 2, 3


def _print_run(run: RunResult) -> None:
    s = run.summary
    print(f"mcrisk {s['mcrisk_version']}  {escaped(s['scenario'])}  "
          f"(sha256 {s['scenario_sha256'][:12]})")
    print(f"{s['samples']:,} scenarios x {len(s['strategies'])} strategies, seed {s['seed']}, "
          f"backend {s['backend']} ({run.backend.reason}), {s['rng']}, "
          f"{s['wall_seconds']:.2f} s")
    if s.get("start_date"):
        from ..results.milestones import weekday
        print(f"day 0 = {weekday(s['start_date'])} {s['start_date']}; horizon day "
              f"{s['horizon_days']:,.0f} = {weekday(s.get('horizon_date'))} {s.get('horizon_date') or 'n/a'}; "
              f"dates are the day each instant falls in (day 0 + floor(day))")
    print(f"baseline {s['baseline_h100_eq']:,.0f} H100-eq, horizon {s['horizon_days']:,.0f} days; "
          f"ranked by P90 {', then '.join(label(k) for k in s['ranking_rule']['criteria'])}; "
          f"a difference within Monte Carlo noise (paired test on the same worlds, at most "
          f"{s['ranking_rule']['family_alpha']:.0%} family-wise error) is a tie, shown as 3=")
    if "risks" in s:
        print(escaped(risk_mode_text(s["risks"])))
    for block in (format_status(s), format_executing(s)):
        if block:
            print()
            print(block)
    print()
    print(format_table(s))
    warnings = format_horizon_warnings(s)
    if warnings:
        print(warnings)
    for table in (format_costs(s), format_jobs(s)):
        if table:
            print()
            print(table)
    if run.out_dir is not None:
        print()
        for path in run.files or (run.out_dir / "summary.json",):
            print(f"wrote {escaped(path)}")
        sentence = metrics_parquet_text(s.get("metrics_parquet"))
        if sentence:
            print(sentence)


def _print_drivers(summary: dict) -> None:
    print()
    print(f"drivers of the P90 trough (over {summary['drivers']['scenarios']:,} scenarios; "
          "near P90 = mean shift of the input in scenarios ranked 85-95%):")
    print(format_drivers(summary))


def default_out(scenario: str, risks: str = "file", status: str | None = None) -> Path:
    """out/<scenario file stem>, or out/<stem>-risks-<mode> for a run whose risk mode is not
    `file`, and -<status file stem> for a run on a status, so that such runs do not replace
    each other's files."""
    stem = Path(scenario).stem
    stem = stem if risks == "file" else f"{stem}-risks-{risks}"
    return Path("out") / (stem if status is None else f"{stem}-{Path(status).stem}")


def _precision(args: argparse.Namespace) -> PrecisionTarget | None:
    """The --precision target of `run` and `nightly`, or None without --precision."""
    if args.precision is None:
        return None
    return precision_target(args.precision, args.precision_floor, args.samples,
                            args.max_samples)


def _cmd_run(args: argparse.Namespace) -> int:
    out = args.out if args.out is not None else default_out(args.scenario, args.risks,
                                                            args.status)
    precision = _precision(args)
    register = load_for_run(args.scenario, args.risks, tuple(args.disable_risk), args.status)
    with terminal_progress(args.quiet) as progress:
        run = run_scenario(register, samples=args.samples, seed=args.seed,
                           backend=args.backend, out_dir=out, chunk_size=args.chunk_size,
                           progress=progress, precision=precision,
                           mitigation=not args.no_mitigation, csv=args.csv,
                           dask=args.dask, scenarios_out=args.scenarios_out,
                           scenarios_budget=args.scenarios_budget)
    _warn_retries(run.backend)
    _print_warnings(register.scenario)     # after the run: a refused run prints its problem alone
    _print_run(run)
    _print_drivers(run.summary)
    if precision is not None:
        print()
        print(format_precision(run.summary["precision"]))
    if "mitigation" in run.summary:
        print()
        print(format_mitigation(run.summary["mitigation"]))
    if "contingent" in run.summary:
        print()
        print(format_contingent(run.summary["contingent"],
                                run.summary.get("costs", {}).get("currency")))
    return EXIT_OK


def _warn_retries(backend) -> None:
    """After a run on Dask that lost a worker: how many chunks were recomputed, on stderr
    even with --quiet (a planner reading a log must see it; the numbers are unchanged)."""
    retried = retried_chunks(backend)
    if retried:
        print(f"mcrisk: {retried_text(retried)} (recomputed: the numbers are unchanged)",
              file=sys.stderr)


def _cmd_schedule(args: argparse.Namespace) -> int:
    from ..report.schedule_tables import format_schedule
    from ..app.schedule import run_schedule

    with terminal_progress(args.quiet) as progress:
        schedule = run_schedule(args.scenario, args.strategy, args.samples, args.seed,
                                args.backend, args.chunk_size, args.risks,
                                tuple(args.disable_risk), progress, dask=args.dask,
                                status=args.status)
    _warn_retries(schedule.backend)
    milestones = schedule.milestones
    print(f"{escaped(args.strategy)}: milestones over {milestones['samples']:,} scenarios "
          f"(seed {args.seed}, risks {args.risks})")
    print(format_schedule(milestones, args.strategy, everything=args.all))
    return EXIT_OK


def _cmd_compare(args: argparse.Namespace) -> int:
    from ..app.compare import run_comparison

    with terminal_progress(args.quiet) as progress:
        compared = run_comparison(args.scenario, args.a, args.b, args.samples, args.seed,
                                  args.backend, args.chunk_size, args.risks,
                                  tuple(args.disable_risk), not args.no_mitigation, progress,
                                  dask=args.dask, status=args.status)
    _warn_retries(compared.backend)
    print(f"mcrisk {__version__}  {escaped(args.scenario)}: {escaped(args.a)} (A) against "
          f"{escaped(args.b)} (B) on the same "
          f"{args.samples:,} sampled worlds (seed {args.seed}, backend {compared.backend.name})")
    print(escaped(risk_mode_text(compared.register.entry())))
    if compared.register.status is not None:
        print(compare_window_text(compared.register.status, compared.register.scenario))
    print("A - B per scenario; positive = A worse (deeper, longer, later)")
    print()
    print(format_comparison(args.a, args.b, compared.differences, args.samples))
    if compared.cost_differences:
        print()
        print(format_cost_comparison(args.a, args.b, compared.cost_differences, args.samples,
                                     compared.currency))
    if compared.job_differences:
        print()
        print(f"job mix: A - B per scenario (unservable in {unit('unservable_gpu_days')}, "
              f"homeless in {unit('homeless_days')}); positive = A worse")
        print(format_comparison(args.a, args.b, compared.job_differences, args.samples,
                                label="job column"))
    if compared.mitigation is not None:
        print()
        print(format_compare_mitigation(compared.mitigation, args.samples))
    return EXIT_OK


def _cmd_nightly(args: argparse.Namespace) -> int:
    from ..app.nightly import run_nightly
    from ..report.nightly.alerts import parse_conditions
    from ..report.nightly.diff import parse_materiality
    from ..report.nightly.diff_text import change_log_groups, top_change_lines
    from ..report.nightly.lead import milestone_terminal_lines, milestones_line
    from ..report.nightly.lead import lead_lines
    from ..report.text import visible

    conditions = parse_conditions(args.fail_if)      # every bad one, exit 2 before running
    try:
        materiality = parse_materiality(args.materiality)
    except ValueError as error:
        raise McriskError(f"--materiality: {error}") from None
    precision = _precision(args)
    with terminal_progress(args.quiet) as progress:
        night = run_nightly(args.scenario, args.history, conditions, samples=args.samples,
                            seed=args.seed, backend=args.backend, chunk_size=args.chunk_size,
                            progress=progress, risks=args.risks,
                            disable_risks=tuple(args.disable_risk), precision=precision,
                            materiality=materiality, keep_large=args.keep_large,
                            dask=args.dask, status=args.status,
                            scenarios_out=args.scenarios_out,
                            scenarios_budget=args.scenarios_budget)
    _warn_retries(night.run.backend)
    _print_run(night.run)
    if precision is not None:
        print()
        print(format_precision(night.run.summary["precision"]))
    print()
    if night.diff is None:
        print("no previous run of this scenario in the history: nothing to compare with")
    else:
        d = night.diff
        print(f"compared with {visible(d.previous)}: {len(d.input_changes)} scenario input(s) "
              f"changed, {len(d.reported)} change(s) beyond Monte Carlo noise and material "
              f"({d.pairing_note})")
        if d.status_change:
            print(f"  {visible(d.status_change)}")
        if night.lead is not None:
            for line in lead_lines(night.lead):
                print(f"  {visible(line)}")
        for group, texts in change_log_groups(d):
            print(f"  {group}:")
            for text in texts:
                print(f"    {visible(text)}")
        if d.input_changes:
            print(f"  ({len(d.input_changes)} scenario key(s) changed: diff.md lists each one)")
        for line in d.run_lines:
            print(f"  run setting: {visible(line)}")
        if d.milestones:
            print(f"  {milestones_line(d.milestones)}")
            for line in milestone_terminal_lines(d.milestones):
                print(f"    {visible(line)}")
        if d.reported:
            print("  the most material reported changes (a strategy's column on a line):")
        for line in top_change_lines(d, escape=visible):
            print(f"    {line}")
        if d.immaterial:
            print(f"  ({len(d.immaterial)} more beyond noise but below the materiality "
                  "threshold: see diff.md)")
    if night.pruned:
        print(f"--keep-large {args.keep_large}: deleted the large files (metrics.parquet, "
              f"capacity_bands.parquet) of {len(night.pruned)} older night(s): "
              + ", ".join(visible(r) for r in night.pruned))
    for note in night.notes:
        print(f"note: {escaped(note)}")
    if night.breaches:
        print(f"mcrisk nightly: {len(night.breaches)} --fail-if breach(es):", file=sys.stderr)
        for breach in night.breaches:
            print(f"  BREACH {breach}", file=sys.stderr)
        return EXIT_BREACHED
    return EXIT_OK


def _cmd_optimize(args: argparse.Namespace) -> int:
    """`mcrisk optimize`: the search, then its table and the files written."""
    from ..optimize.run import run_optimize
    from .optimize_text import format_optimize

    stem = Path(args.search).stem
    if args.status is not None:
        stem = f"{stem}-{Path(args.status).stem}"
    out = args.out if args.out is not None else Path("out") / stem
    with terminal_progress(args.quiet) as progress:
        found = run_optimize(args.search, out, backend=args.backend,
                             chunk_size=args.chunk_size, progress=progress, dask=args.dask,
                             status=args.status)
    _warn_retries(found.backend)
    print(format_optimize(found.document))
    print()
    for path in found.files:
        print(f"wrote {escaped(path)}")
    return EXIT_OK


def _is_search_file(path: str) -> bool:
    """Whether `path` is an `mcrisk optimize` search file (a TOML file with a top-level
    [search] table) rather than a scenario; False for anything unreadable (a missing file,
    bad TOML, nesting too deep to parse), which the scenario reader then reports."""
    try:
        import tomllib
    except ModuleNotFoundError:          # Python 3.10: the backport, as the scenario reader
        import tomli as tomllib
    try:
        return isinstance(tomllib.loads(Path(path).read_text("utf-8")).get("search"), dict)
    except (OSError, ValueError, RecursionError):   # deep nesting: the reader reports it
        return False


def _validate_search(path: str) -> str:
    """Read the search file (and the scenario it names) as `mcrisk optimize` would; the
    line `validate` prints, or ScenarioError with every problem."""
    from ..optimize.space import read_search

    space = read_search(path)
    return (f"{escaped(path)}: ok (search over {escaped(space.scenario.name)}: "
            f"{count_noun(space.size, 'combination')} of the knobs, template "
            f"{escaped(space.template)})")


def _print_warnings(scenario) -> None:
    """The scenario's sanity warnings (mcrisk/scenario/sanity.py), one 'warning: ' line each
    on stderr: valid input that is most likely not meant."""
    from ..report.text import visible
    for warning in scenario_warnings(scenario):
        print(f"warning: {visible(warning)}", file=sys.stderr)


def _cmd_validate(args: argparse.Namespace) -> int:
    failed = False
    if args.status is not None and len(args.scenario) != 1:
        raise McriskError("validate --status: give the one scenario the status file is of")
    for path in args.scenario:
        if _is_search_file(path):
            try:
                print(_validate_search(path))
            except ScenarioError as error:
                failed = True
                print(str(error), file=sys.stderr)
            continue
        try:
            scenario = load_scenario(path)
            if args.status is not None:
                scenario = with_facts(scenario, load_status(args.status, scenario))
            # Compiled too, so that what `run` would find (two names sharing a random-stream
            # address; with a status, a fact the scenario cannot produce) is found here; with
            # every risk enabled, as some --risks mode may do.
            compile_scenario(with_facts(select_risks(scenario, "pre"), scenario.status))
        except ScenarioError as error:
            failed = True
            print(str(error), file=sys.stderr)
            continue
        _print_warnings(scenario)
        if args.status is not None:
            print(f"{escaped(args.status)}: ok (as of day {scenario.status.as_of:g}, "
                  f"{count_noun(len(scenario.status.units), 'unit')} with facts)")
        print(f"{escaped(path)}: ok "
              f"({count_noun(len(scenario.strategies), 'strategy', 'strategies')}, "
              f"{count_noun(len(scenario.existing), 'existing unit')}, "
              f"{count_noun(len(scenario.incoming), 'incoming unit')})")
    return EXIT_INPUT if failed else EXIT_OK


# The option that names where each command writes, for the hint of an error writing there.
OUTPUT_OPTIONS = {"run": "--out", "optimize": "--out", "nightly": "--history"}


def _describe_os_error(error: OSError, command: str | None = None) -> str:
    """`path: what went wrong (what to do)` for an OSError from reading or writing files; the
    hint names `command`'s own output option (OUTPUT_OPTIONS), none for a command that
    writes no files."""
    what = error.strerror or str(error)
    full = error.errno == errno.ENOSPC or "No space left" in str(error)
    option = OUTPUT_OPTIONS.get(command)
    if full:
        hint = "free some space" + (f", or write elsewhere with {option}" if option else "")
    else:
        hint = "check the path and its permissions"
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{what} ({hint})"


def _lines(message: str) -> str:
    """A message for the terminal: its lines, with invisible characters (from a file name or
    a user string in it) escaped on each."""
    return "\n".join(escaped(line) for line in message.split("\n"))


def main(argv: list[str] | None = None) -> int:
    """The command line: exit status 0, 2 (bad input), 3 (a breach), or 128 + the signal of a
    stop, whose one-line message it prints, wherever the stop landed (mcrisk.core.stops: in
    a finalizer too). The `mcrisk` command enters through mcrisk.__main__, which handles a
    stop while this module is still being imported, and while the process winds down."""
    with stops_unwind() as stops:
        try:
            status = _command(argv)
            stops.settle()                # a stop a finalizer swallowed, not raised again yet
            return status
        except KeyboardInterrupt as stop:
            signum = stops.caught(stop)   # a second stop meanwhile is ignored
            print(stop_message(signum), file=sys.stderr)
            return stop_status(signum)


def _command(argv: list[str] | None) -> int:
    """Parse and run one command; its errors printed, as exit statuses."""
    args = build_parser().parse_args(argv)
    try:
        if getattr(args, "dask", None) is not None:
            check_address(args.dask)     # a malformed --dask fails before anything runs
        if args.command == "run":
            return _cmd_run(args)
        if args.command == "nightly":
            return _cmd_nightly(args)
        if args.command == "compare":
            return _cmd_compare(args)
        if args.command == "schedule":
            return _cmd_schedule(args)
        if args.command == "optimize":
            return _cmd_optimize(args)
        return _cmd_validate(args)
    except McriskError as error:            # its lines, each with invisible characters shown
        print(_lines(f"mcrisk: {error}" if not isinstance(error, ScenarioError) else
                     str(error)), file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:          # output piped into `head`: not an error of ours
        sys.stderr.close()
        return EXIT_OK
    except OSError as error:
        print(_lines(f"mcrisk: {_describe_os_error(error, args.command)}"), file=sys.stderr)
        return EXIT_INPUT


if __name__ == "__main__":
    sys.exit(main())
