"""The command line: the only place that prints or exits.

    mcrisk run SCENARIO [--samples N] [--seed S] [--backend auto|numpy|cpu|gpu] [--out DIR]
               [--risks file|off|pre|post] [--disable-risk ID ...] [--precision 2%]
    mcrisk compare SCENARIO A B [--samples N] [--seed S] [--backend B] [--risks MODE]
    mcrisk nightly SCENARIO --history DIR [--samples N] [--seed S] [--backend B]
                   [--risks MODE] [--disable-risk ID ...] [--precision 2%]
                   [--fail-if EXPR ...] [--materiality 1%,trough_days=1] [--keep-large N]
    mcrisk validate SCENARIO [SCENARIO ...]

Exit codes: 0 ok, 2 bad input (scenario, backend, --fail-if, --out), 3 a --fail-if condition
was breached (the nightly run is still complete and registered), 130 interrupted (SIGINT,
Ctrl-C), 143 stopped by SIGTERM (what systemd and schedulers send). Both stops unwind the same
way, so every cleanup runs: no temporary file or staging folder is left behind.
"""
from __future__ import annotations

import argparse
import contextlib
import difflib
import errno
import re
import signal
import sys
import threading
import time
from pathlib import Path

from . import __version__
from .aggregate import p90_ci_min_samples
from .analysis.compare import MEAN_CI_MIN_SAMPLES
from .analysis.mitigation import mitigation_sentences, risk_mode_text
from .analysis.precision import PrecisionTarget, parse_precision
from .backends import BACKEND_NAMES
from .compile import RISK_MODES, compile_scenario, select_risks
from .errors import McriskError, ScenarioError
from .run import DEFAULT_SAMPLES, DEFAULT_SEED, RunResult, run_scenario
from .scenario import load_scenario
from .simulate import DEFAULT_CHUNK, MAX_SAMPLES, check_memory

EXIT_OK, EXIT_INPUT, EXIT_BREACHED = 0, 2, 3
EXIT_SIGNAL_BASE = 128          # stopped by signal N: exit 128 + N (SIGINT 130, SIGTERM 143)

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


def _nonnegative_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not value >= 0:
        raise argparse.ArgumentTypeError(f"must be >= 0, got {text}")
    return value


def _add_world_options(command: argparse.ArgumentParser) -> None:
    """Options that choose the sampled worlds: samples, seed, backend, risk register."""
    command.add_argument("--samples", type=_positive_int, default=DEFAULT_SAMPLES,
                         help=f"Monte Carlo scenarios (default {DEFAULT_SAMPLES:,})")
    command.add_argument("--seed", type=_seed, default=DEFAULT_SEED,
                         help=f"random seed in [0, 2**64) (default {DEFAULT_SEED})")
    command.add_argument("--backend", choices=BACKEND_NAMES, default="auto",
                         help="auto picks the GPU when CuPy and a device are present, else cpu")
    command.add_argument("--chunk-size", type=_positive_int, default=DEFAULT_CHUNK,
                         help="scenarios per kernel call; results do not depend on it")
    command.add_argument("--risks", choices=RISK_MODES, default="file",
                         help="risk register: as in the file (default), off, every risk "
                              "pre-mitigation, or post-mitigation")
    command.add_argument("--disable-risk", action="append", default=[], metavar="ID",
                         help="switch one risk of the register off (repeatable)")
    command.add_argument("--quiet", action="store_true", help="no progress bar")


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
    command.add_argument("--precision-floor", type=_nonnegative_float, default=0.5,
                         metavar="ABS", help="...or under this, in the metric's unit "
                                             "(for values near 0; default 0.5)")
    command.add_argument("--max-samples", type=_positive_int, default=10_000_000,
                         help="cap for --precision (default 10,000,000)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="mcrisk",
        description="Monte Carlo risk of the capacity trough when a GPU cluster changes generation.")
    parser.add_argument("--version", action="version", version=f"mcrisk {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)
    run = commands.add_parser("run", help="simulate every strategy of a scenario and report")
    run.add_argument("scenario", help="scenario TOML file, e.g. scenarios/reference-2048.toml")
    _add_world_options(run)
    run.add_argument("--out", type=_out_folder, default=None,
                     help="output folder (default out/<scenario file stem>, or "
                          "out/<stem>-risks-<mode> with --risks off, pre or post); a run "
                          "replaces it as a whole, so it must hold only files mcrisk wrote")
    _add_mitigation_option(run)
    _add_precision_options(run)
    run.add_argument("--csv", action="store_true",
                     help="also write ranking.csv, strategies.csv and milestones.csv")
    schedule = commands.add_parser(
        "schedule", help="milestone dates of one strategy (P10/P50/P90, criticality)",
        description="Simulate SCENARIO and print STRATEGY's milestones: P10, P50 and P90 day "
                    "(with dates when the scenario sets start_date), the P90's 95%% interval "
                    "and how often each lies on the critical path to completion.")
    schedule.add_argument("scenario", help="scenario TOML file")
    schedule.add_argument("strategy", help="strategy name")
    _add_world_options(schedule)
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
                              "'hybrid-gated.trough_days.p90.delta > 5' (repeatable; a .delta "
                              "counts only when the diff reports the change)")
    nightly.add_argument("--materiality", action="append", default=[], metavar="SPEC",
                         help="smallest change the diff reports: a share of the value, e.g. "
                              "2%%, and/or METRIC=AMOUNT in the metric's unit, e.g. "
                              "trough_days=2 (repeatable or comma-separated; default 1%% and "
                              "one unit of each metric, power_violation=0.001)")
    nightly.add_argument("--keep-large", type=_positive_int, default=None, metavar="N",
                         help="after a successful night, delete metrics.parquet and "
                              "capacity_bands.parquet of this scenario's nights older than "
                              "the latest N (the rest of their folders stays)")
    validate = commands.add_parser("validate", help="check scenario files, report every problem")
    validate.add_argument("scenario", nargs="+")
    return parser


class _Progress:
    """A one-line progress bar on stderr, shown only for runs that take a while."""

    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.started = time.perf_counter()
        self.shown = False

    def __call__(self, done: int, total: int) -> None:
        elapsed = time.perf_counter() - self.started
        if not self.enabled or (elapsed < 1.0 and not self.shown):
            return
        self.shown = True
        width = 30
        filled = int(width * done / total)
        rate = done / elapsed if elapsed > 0 else 0.0
        sys.stderr.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done:,}/{total:,} "
                         f"scenarios  {rate:,.0f}/s ")
        if done == total:
            sys.stderr.write("\n")
        sys.stderr.flush()


def _fmt(value: float | None) -> str:
    if value is None or value != value:  # not computable (summary.json: null), or nan
        return "n/a"
    return f"{value:,.0f}" if abs(value) >= 100 else f"{value:,.1f}"


def format_table(summary: dict) -> str:
    """The ranked side-by-side table of the run's summary: a shared rank shows as '3=', and
    'decided by' names the criterion that separated the strategy from the one above (for the
    first, from the one below; '-' where no criterion separates any)."""
    from .analysis.ranking import RANK_LABELS, rank_label
    from .report.text import visible

    header1 = (f"{'':4} {'strategy':24} {'trough depth (H100-eq)':>24} {'trough days':>22} "
               f"{'shortfall (H100-eq x d)':>26} {'homeless days':>15} {'completion day':>15} "
               f"{'power':>7}  {'decided by'}")
    header2 = (f"{'rank':4} {'':24} {'P50':>7} {'P90':>8} {'P99':>7}  {'P50':>6} {'P90':>7} "
               f"{'P99':>7}  {'P50':>8} {'P90':>8} {'P99':>8}  {'P50':>7} {'P90':>7} "
               f"{'P50':>7} {'P90':>7} {'P(over)':>7}")
    lines = [header1, header2]
    ranks = summary.get("ranks") or {}
    for position, name in enumerate(summary["ranking"], start=1):
        m = summary["strategies"][name]
        entry = ranks.get(name)
        decided = entry.get("decided_by") if entry else None
        cells = [f"{rank_label(entry) if entry else position:<4}", f"{visible(name)[:24]:24}"]
        for metric, width in (("trough_depth", (7, 8, 7)), ("trough_days", (6, 7, 7)),
                              ("shortfall_gpu_days", (8, 8, 8))):
            cells.append(" ".join(f"{_fmt(m[metric][k]):>{w}}"
                                  for k, w in zip(("p50", "p90", "p99"), width)) + " ")
        cells.append(f"{_fmt(m['homeless_days']['p50']):>7} {_fmt(m['homeless_days']['p90']):>7}")
        cells.append(f"{_fmt(m['completion_day']['p50']):>7} {_fmt(m['completion_day']['p90']):>7}")
        cells.append(f"{m['power_violation']['probability']:>7.1%} ")
        cells.append(RANK_LABELS.get(decided, str(decided)) if decided else "-")
        lines.append(" ".join(cells))
        if summary.get("start_date") and m.get("completion_date"):
            lines.append(f"{'':4} {'':24} completion " + ", ".join(
                f"{key.upper()} {_dated(m['completion_day'][key], m['completion_date'][key])}"
                for key in ("p50", "p90")))
    return "\n".join(lines)


def _dated(day, iso) -> str:
    """A day number with its date and weekday, '305 (Thu 2027-11-04)'; the number alone
    without a date."""
    from .milestones import weekday

    return f"{_fmt(day)} ({weekday(iso)} {iso})" if iso else _fmt(day)


def format_horizon_warnings(summary: dict) -> str:
    """'WARNING: ...' lines for strategies whose completion often lies beyond the horizon
    (mcrisk.analysis.horizon); empty when there are none."""
    from .analysis.horizon import horizon_warnings
    from .report.text import visible

    return "\n".join(f"WARNING: {visible(text)}" for text in horizon_warnings(summary))


def _print_run(run: RunResult) -> None:
    s = run.summary
    print(f"mcrisk {s['mcrisk_version']}  {s['scenario']}  (sha256 {s['scenario_sha256'][:12]})")
    print(f"{s['samples']:,} scenarios x {len(s['strategies'])} strategies, seed {s['seed']}, "
          f"backend {s['backend']} ({run.backend.reason}), {s['rng']}, "
          f"{s['wall_seconds']:.2f} s")
    if s.get("start_date"):
        from .milestones import weekday
        print(f"day 0 = {weekday(s['start_date'])} {s['start_date']}; horizon day "
              f"{s['horizon_days']:,.0f} = {weekday(s.get('horizon_date'))} {s.get('horizon_date') or 'n/a'}; "
              f"dates are the day each instant falls in (day 0 + floor(day))")
    print(f"baseline {s['baseline_h100_eq']:,.0f} H100-eq, horizon {s['horizon_days']:,.0f} days; "
          f"ranked by P90 trough depth, then trough days, then shortfall, then homeless days; "
          f"a difference within Monte Carlo noise (paired test on the same worlds, at most "
          f"{s['ranking_rule']['family_alpha']:.0%} family-wise error) is a tie, shown as 3=")
    if "risks" in s:
        print(_visible(risk_mode_text(s["risks"])))
    print()
    print(format_table(s))
    warnings = format_horizon_warnings(s)
    if warnings:
        print(warnings)
    if run.out_dir is not None:
        print()
        for path in run.files or (run.out_dir / "summary.json",):
            print(f"wrote {path}")


def format_drivers(summary: dict, top: int = 3) -> str:
    """For each strategy, what drives its P90 trough (trough days; shortfall if no trough)."""
    lines = []
    for name in summary["ranking"]:
        per_metric = summary["drivers"]["strategies"][name]
        metric = next((m for m in ("trough_days", "shortfall_gpu_days") if per_metric[m]), None)
        if metric is None:
            lines.append(f"  {name}: no metric varies")
            continue
        parts = [f"{d['label']} (rank corr {d['spearman']:+.2f}, {d['shift']:+,.1f} near P90)"
                 for d in per_metric[metric][:top]]
        lines.append(f"  {name} [{metric.replace('_', ' ')}]: " + "; ".join(parts))
    return "\n".join(lines)


def _print_drivers(summary: dict) -> None:
    print()
    print(f"drivers of the P90 trough (over {summary['drivers']['scenarios']:,} scenarios; "
          "near P90 = mean shift of the input in scenarios ranked 85-95%):")
    print(format_drivers(summary))


def default_out(scenario: str, risks: str = "file") -> Path:
    """out/<scenario file stem>, or out/<stem>-risks-<mode> for a run whose risk mode is not
    `file`, so that runs of different modes do not replace each other's files."""
    stem = Path(scenario).stem
    return Path("out") / (stem if risks == "file" else f"{stem}-risks-{risks}")


def _cmd_run(args: argparse.Namespace) -> int:
    out = args.out if args.out is not None else default_out(args.scenario, args.risks)
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    precision = None
    if args.precision is not None:
        _check_precision_cap(args.max_samples)
        precision = PrecisionTarget(relative=args.precision, floor=args.precision_floor,
                                    start=min(args.samples, 10_000), max_samples=args.max_samples)
    run = run_scenario(args.scenario, samples=args.samples, seed=args.seed,
                       backend=args.backend, out_dir=out, chunk_size=args.chunk_size,
                       progress=progress, risks=args.risks,
                       disable_risks=tuple(args.disable_risk), precision=precision,
                       mitigation=not args.no_mitigation, csv=args.csv)
    _print_run(run)
    _print_drivers(run.summary)
    if precision is not None:
        print()
        print(format_precision(run.summary["precision"]))
    if "mitigation" in run.summary:
        print()
        print(format_mitigation(run.summary["mitigation"]))
    return EXIT_OK


def _cmd_schedule(args: argparse.Namespace) -> int:
    from .milestones import run_schedule
    from .report.schedule_tables import format_schedule

    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    milestones = run_schedule(args.scenario, args.strategy, args.samples, args.seed,
                              args.backend, args.chunk_size, args.risks,
                              tuple(args.disable_risk), progress)
    print(f"{args.strategy}: milestones over {milestones['samples']:,} scenarios "
          f"(seed {args.seed}, risks {args.risks})")
    print(format_schedule(milestones, args.strategy, everything=args.all))
    return EXIT_OK


def _check_precision_cap(max_samples: int) -> None:
    """--precision cannot be met below the sample count at which P90 intervals exist."""
    needed = p90_ci_min_samples()
    if max_samples < needed:
        raise McriskError(f"--max-samples = {max_samples:,}: --precision can never be met, "
                          f"since a 95% interval of the P90 needs at least {needed} scenarios "
                          f"(use --max-samples {needed} or more)")


def format_precision(p: dict) -> str:
    """Whether the --precision target was met, and the P90 interval farthest from it."""
    w = p["widest"]
    state = "met" if p["met"] else f"NOT met (stopped at --max-samples {p['max_samples']:,})"
    if w["half_width"] is None:
        widest = (f"{w['strategy']} {w['metric']} has no interval "
                  f"({w.get('interval_unavailable', 'not computable')})")
    else:
        widest = (f"{w['strategy']} {w['metric']} +-{w['half_width']:,.3g} of "
                  f"{w['p90']:,.6g} (allowed {w['allowed']:,.3g})")
    return (f"precision {p['relative']:.1%} (floor {p['floor']}): {state} after "
            f"{p['samples']:,} scenarios; widest P90 interval: {widest}")


def format_comparison(a: str, b: str, comparison: dict, samples: int,
                      difference: str = "A - B", worse: str = "P(A worse)",
                      better: str = "P(A better)") -> str:
    """One line per metric of the paired difference A - B over `samples` scenarios (or of
    another paired difference, named by `difference`, `worse` and `better`); a `verdict`
    column where the differences carry one (the value of mitigation)."""
    verdicts = any("verdict" in d for d in comparison.values())
    lines = [f"{f'metric ({difference})':22} {'mean [95% CI]':>30} {'P50':>10} "
             f"{'P90 [95% CI]':>34} {worse:>11} {better:>12}"
             + ("  verdict (mean)" if verdicts else "")]
    for metric, d in comparison.items():
        mean = f"{_fmt(d['mean'])} {_interval(d['mean_ci'], MEAN_CI_MIN_SAMPLES, samples)}"
        p90 = f"{_fmt(d['p90'])} {_interval(d['p90_ci'], p90_ci_min_samples(), samples)}"
        lines.append(f"{metric:22} {mean:>30} {_fmt(d['p50']):>10} {p90:>34} "
                     f"{d['p_a_worse']:>11.1%} {d['p_a_better']:>12.1%}"
                     + (f"  {d['verdict'].replace('_', ' ')}" if "verdict" in d else ""))
    return "\n".join(lines)


def _visible(text: str) -> str:
    """User text (risk ids, strategy names) with invisible characters shown as escapes."""
    from .report.text import visible
    return visible(text)


def _mitigation_header(m: dict) -> str:
    """What the value of mitigation is computed from, in one line."""
    return (f"value of mitigation: pre - post mitigation of {', '.join(map(_visible, m['risks']))} "
            f"on the same sampled worlds; positive = mitigation lowers the metric. This run is "
            f"the {m['run_is']} side; the {m['simulated']} side was simulated too"
            + (f" (one more simulation of {m['samples']:,} scenarios, {m['wall_seconds']:.2f} s)"
               if "samples" in m else ""))


def format_mitigation(m: dict) -> str:
    """The value of mitigation of a run, in sentences: a claim only where the 95% interval
    of the mean difference excludes 0 (summary.json and report.html have every number)."""
    lines = [_mitigation_header(m) + ":"]
    lines += [f"  {_visible(sentence)}" for sentence in mitigation_sentences(m)]
    return "\n".join(lines)


def _interval(ci: list[float] | None, needs: int, samples: int) -> str:
    """[low, high], or why there is none: never a zero-width interval from too few samples."""
    if ci is not None:
        return f"[{_fmt(ci[0])}, {_fmt(ci[1])}]"
    return f"n/a (needs >= {needs} scenarios)" if samples < needs else "n/a"


def _cmd_compare(args: argparse.Namespace) -> int:
    from .analysis.compare import compare_strategies
    from .backends import select_backend
    from .run import load_for_run, mitigation_entry
    from .simulate import simulate

    register = load_for_run(args.scenario, args.risks, tuple(args.disable_risk))
    plan = compile_scenario(register.scenario)
    for label, name in (("A", args.a), ("B", args.b)):
        if name not in plan.strategy_names:
            close = difflib.get_close_matches(name, plan.strategy_names, n=1)
            guess = f"did you mean {close[0]!r}? " if close else ""
            raise McriskError(f"{args.scenario}: strategy {label} = {name!r}: no strategy "
                              f"{name!r} in this file ({guess}it has "
                              f"{', '.join(plan.strategy_names)})")
    check_memory(plan, args.samples, args.chunk_size)
    backend = select_backend(args.backend)
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    result = simulate(plan, args.samples, args.seed, backend, chunk_size=args.chunk_size,
                      progress=progress, keep_world=0)
    comparison = compare_strategies(result.metrics, list(plan.strategy_names), args.a, args.b)
    side = None if args.no_mitigation else register.counterpart()
    mitigation = None
    if side is not None:
        mitigation = mitigation_entry(side, compile_scenario(side.other), result, backend,
                                      args.chunk_size, strategies=list(dict.fromkeys(
                                          (args.a, args.b))))
    print(f"mcrisk {__version__}  {args.scenario}: {args.a} (A) against {args.b} (B) on the same "
          f"{args.samples:,} sampled worlds (seed {args.seed}, backend {backend.name})")
    print(_visible(risk_mode_text(register.entry())))
    print("A - B per scenario; positive = A worse (deeper, longer, later)")
    print()
    print(format_comparison(args.a, args.b, comparison, args.samples))
    if mitigation is not None:
        print()
        print(format_compare_mitigation(mitigation, args.samples))
    return EXIT_OK


def format_compare_mitigation(m: dict, samples: int) -> str:
    """compare's "value of mitigation" section: per strategy, the table of pre - post."""
    lines = [_mitigation_header(m) + "."]
    if "strategies" not in m:
        return "\n".join(lines + [f"  {m['skipped']}"])
    lines.append("P(helps) / P(hurts): share of scenarios where mitigation lowers / raises "
                 "it; verdict from the 95% interval of the mean: helps or hurts only where "
                 "it excludes 0")
    for name, per_metric in m["strategies"].items():
        lines += ["", f"{_visible(name)}:",
                  format_comparison(name, name, per_metric, samples, difference="pre - post",
                                    worse="P(helps)", better="P(hurts)")]
    return "\n".join(lines)


def _cmd_nightly(args: argparse.Namespace) -> int:
    from .report.alerts import parse_conditions
    from .report.diff import change_line, input_change_line, parse_materiality
    from .report.nightly import run_nightly
    from .report.text import visible

    conditions = parse_conditions(args.fail_if)      # every bad one, exit 2 before running
    try:
        materiality = parse_materiality(args.materiality)
    except ValueError as error:
        raise McriskError(f"--materiality: {error}") from None
    precision = None
    if args.precision is not None:
        _check_precision_cap(args.max_samples)
        precision = PrecisionTarget(relative=args.precision, floor=args.precision_floor,
                                    start=min(args.samples, 10_000), max_samples=args.max_samples)
    progress = _Progress(enabled=not args.quiet and sys.stderr.isatty())
    night = run_nightly(args.scenario, args.history, conditions, samples=args.samples,
                        seed=args.seed, backend=args.backend, chunk_size=args.chunk_size,
                        progress=progress, risks=args.risks,
                        disable_risks=tuple(args.disable_risk), precision=precision,
                        materiality=materiality, keep_large=args.keep_large)
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
        for change in d.input_changes[:20]:
            print(f"  input {input_change_line(change, code=visible, escape=visible)}")
        if len(d.input_changes) > 20:
            print(f"  ... and {len(d.input_changes) - 20} more inputs (diff.md lists every one)")
        for change in d.run_changes:
            print(f"  run setting {input_change_line(change, code=visible, escape=visible)}")
        for c in d.reported:
            print(f"  {change_line(c, escape=visible)}")
        if d.immaterial:
            print(f"  ({len(d.immaterial)} more beyond noise but below the materiality "
                  "threshold: see diff.md)")
    if night.pruned:
        print(f"--keep-large {args.keep_large}: deleted the large files (metrics.parquet, "
              f"capacity_bands.parquet) of {len(night.pruned)} older night(s): "
              + ", ".join(visible(r) for r in night.pruned))
    for note in night.notes:
        print(f"note: {note}")
    if night.breaches:
        print(f"mcrisk nightly: {len(night.breaches)} --fail-if breach(es):", file=sys.stderr)
        for breach in night.breaches:
            print(f"  BREACH {breach}", file=sys.stderr)
        return EXIT_BREACHED
    return EXIT_OK


def _count(n: int, one: str, many: str | None = None) -> str:
    """'1 strategy', '2 strategies': a count with its noun in the right number."""
    return f"{n:,} {one if n == 1 else (many or one + 's')}"


def _cmd_validate(args: argparse.Namespace) -> int:
    failed = False
    for path in args.scenario:
        try:
            scenario = load_scenario(path)
            # Compiled too, so that what `run` would find (two names sharing a random-stream
            # address) is found here; with every risk enabled, as some --risks mode may do.
            compile_scenario(select_risks(scenario, "pre"))
        except ScenarioError as error:
            failed = True
            print(str(error), file=sys.stderr)
            continue
        print(f"{path}: ok ({_count(len(scenario.strategies), 'strategy', 'strategies')}, "
              f"{_count(len(scenario.existing), 'existing unit')}, "
              f"{_count(len(scenario.incoming), 'incoming unit')})")
    return EXIT_INPUT if failed else EXIT_OK


class Terminated(KeyboardInterrupt):
    """Raised by the SIGTERM handler wherever the program is, so that a SIGTERM unwinds
    exactly like Ctrl-C: every `finally` and `except BaseException` cleanup runs (temporary
    files, the staging folder, nightly's .partial folder, the output lock)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


@contextlib.contextmanager
def _sigterm_unwinds():
    """Inside the block, SIGTERM raises Terminated (once: a second SIGTERM while cleaning up
    is ignored, so that the cleanup completes; SIGKILL still stops the process)."""
    if threading.current_thread() is not threading.main_thread():
        yield                         # handlers can only be set from the main thread
        return
    fired = []

    def terminate(signum, _frame):
        if not fired:
            fired.append(signum)
            raise Terminated(signum)

    previous = signal.signal(signal.SIGTERM, terminate)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_DFL if previous is None else previous)


def _describe_os_error(error: OSError) -> str:
    """`path: what went wrong (what to do)` for an OSError from reading or writing files."""
    what = error.strerror or str(error)
    full = error.errno == errno.ENOSPC or "No space left" in str(error)
    hint = ("free some space, or write elsewhere with --out" if full
            else "check the path and its permissions")
    where = f"{error.filename}: " if error.filename else ""
    return f"{where}{what} ({hint})"


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        with _sigterm_unwinds():
            if args.command == "run":
                return _cmd_run(args)
            if args.command == "nightly":
                return _cmd_nightly(args)
            if args.command == "compare":
                return _cmd_compare(args)
            if args.command == "schedule":
                return _cmd_schedule(args)
            return _cmd_validate(args)
    except McriskError as error:
        print(f"mcrisk: {error}" if not isinstance(error, ScenarioError) else str(error),
              file=sys.stderr)
        return error.exit_code
    except BrokenPipeError:          # output piped into `head`: not an error of ours
        sys.stderr.close()
        return EXIT_OK
    except OSError as error:
        print(f"mcrisk: {_describe_os_error(error)}", file=sys.stderr)
        return EXIT_INPUT
    except KeyboardInterrupt as stop:
        signum = getattr(stop, "signum", signal.SIGINT)
        name = "SIGTERM" if signum == signal.SIGTERM else "Ctrl-C (SIGINT)"
        print(f"mcrisk: stopped by {name}; nothing is half-written: each output folder holds "
              "the previous run's files or, if this run had finished, all of its own",
              file=sys.stderr)
        return EXIT_SIGNAL_BASE + signum


if __name__ == "__main__":
    sys.exit(main())
