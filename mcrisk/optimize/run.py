"""One `mcrisk optimize` run, end to end without printing: read the search, generate the
candidates, race them, evaluate the chosen plans on a fresh seed, write the files.

The application layer over mcrisk.optimize (space, candidates, objective, race, evaluate):
this module only sequences the phases (mcrisk.core.progress: compile, generate, then the race's
and the evaluation's simulations, each a `simulate` phase whose note says which, "race stage
k of n" or "evaluate", then write) and turns their results into the optimize.json document
(schema: mcrisk/schema/optimize.schema.json; docs/optimize.md). With an output folder it writes
optimize.json, strategies.toml (each chosen plan as a [[strategies]] block that `mcrisk run`
accepts) and report.html (mcrisk.report.html.optimize) there, together or not at all: into a
staging folder that replaces the output folder in one atomic step (mcrisk.core.outputs.OutputFolder,
as `mcrisk run` does), so an error, Ctrl-C or SIGTERM leaves the folder as it was. The folder
is claimed before anything is computed, so a bad --out costs nothing.
"""
from __future__ import annotations

import datetime as _dt
import hashlib
import math
import os
import time
from dataclasses import dataclass, replace
from pathlib import Path

from .. import __version__
from ..backends import Backend
from ..plan.compile import compile_scenario
from ..backends.dask import dask_entry, dask_session
from ..core.errors import McriskError
from ..core.outputs import OutputFolder, with_filename, write_atomic, write_json
from ..core.progress import QUIET, WRITE, Progress, Steps, as_progress
from ..core.rng import RNG_NAME
from ..app.run import compiles_noted, prepare_backend
from ..core.facts import with_facts
from ..scenario import load_status

FORMAT = "mcrisk-optimize/1"
GENERATE = "generate"      # the phase that builds the candidates and rejects the infeasible
WRITE_STEPS = ("optimize.json", "strategies.toml", "report.html")


@dataclass(frozen=True)
class OptimizeResult:
    """What a search found: the optimize.json document, and with an output folder the files
    written there (in the order they appear in) and the folder."""

    document: dict
    strategies_toml: str
    out_dir: Path | None = None
    files: tuple[Path, ...] = ()
    backend: Backend | None = None          # where it ran (a Dask backend: retried_chunks)


def file_sha256(path: str | os.PathLike) -> str:
    """SHA-256 of a file's bytes, lower-case hex."""
    try:
        with open(path, "rb") as handle:
            return hashlib.file_digest(handle, "sha256").hexdigest()
    except AttributeError:                          # Python before 3.11
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def run_optimize(search: str | os.PathLike, out_dir: str | Path | None = None,
                 backend: str = "auto", chunk_size: int | None = None,
                 progress: Progress | None = None, report: bool = True,
                 dask: str | None = None,
                 status: str | os.PathLike | None = None) -> OptimizeResult:
    """Search the plans of the search file `search` (docs/optimize.md): generate, race,
    evaluate, and with `out_dir` write optimize.json, strategies.toml and (if `report`)
    report.html there, published together. A bad search file is a ScenarioError naming the
    file and key (exit 2 at the command line), before anything is simulated.

    With `dask` (`local:N` or a scheduler's address), every simulation of the search (each
    race stage and the evaluation) runs its chunks on the workers of one Dask session
    (mcrisk.backends.dask), with the same numbers; the result's `backend` tells how many
    chunks were retried after a lost worker, and optimize.json records the session (`dask`).
    With `status` (a status file's path), every plan is raced and evaluated from its status
    date on, conditioned on what has happened (docs/status.md)."""
    from .space import read_search

    progress = as_progress(progress)
    space = read_search(search)
    if status is not None:
        space = replace(space, scenario=with_facts(
            space.scenario, load_status(status, space.scenario)))
    search_sha256 = file_sha256(search)
    if out_dir is None:
        with dask_session(dask) as session:
            return _search(space, search_sha256, backend, chunk_size, progress, session)
    out = Path(out_dir)
    try:
        with OutputFolder(out) as folder:
            with dask_session(dask) as session:
                found = _search(space, search_sha256, backend, chunk_size, progress, session)
            files = write_outputs(found, folder.staging, progress, report)
            folder.publish()
    except OSError as error:          # one that names no file (EIO, ENOSPC): name the folder
        raise with_filename(error, out) from None
    return replace(found, out_dir=out, files=tuple(out / path.name for path in files))


def _search(space, search_sha256: str, backend_name: str, chunk_size: int | None,
            progress: Progress, session=None) -> OptimizeResult:
    """Generate, race and evaluate: the document and the strategies.toml text. With a Dask
    `session`, every simulation runs on its workers."""
    from .candidates import generate
    from .evaluate import evaluate
    from .race import race
    from .threshold import anticipative_decisions

    started = time.perf_counter()
    scenario = space.scenario
    backend = prepare_backend(backend_name, compile_scenario(scenario), progress, session)
    extra = {} if chunk_size is None else {"chunk_size": chunk_size}
    with compiles_noted(progress):      # a contingent search's thresholds checked first
        unsafe = anticipative_decisions(space, scenario, backend, progress, **extra)
    with progress.phase(GENERATE):
        generated = generate(space, scenario, unsafe)
    if not generated.candidates:
        raise McriskError(f"{space.path}: every candidate of the search space was rejected "
                          f"before simulation ({_reasons(generated.rejected)}); widen the "
                          "knobs' values (docs/optimize.md)")
    with compiles_noted(progress):
        raced = race(space, scenario, generated.candidates, backend, progress, **extra)
        evaluated = evaluate(space, scenario, generated.candidates, raced, backend, progress,
                             **extra)
    document = build_document(space, search_sha256, generated, raced, evaluated, backend,
                              time.perf_counter() - started)
    return OptimizeResult(document, strategies_toml_text(document), backend=backend)


def _reasons(rejected) -> str:
    return ", ".join(f"{count} {reason}" for reason, count in sorted(rejected.items())) \
        or "no reason recorded"


# ---- the files ----------------------------------------------------------------------------


def write_outputs(found: OptimizeResult, folder: Path, progress: Progress = QUIET,
                  report: bool = True) -> tuple[Path, ...]:
    """optimize.json, strategies.toml and (if `report`) report.html into `folder`, each
    atomically (mcrisk.core.outputs.write_atomic): the `write` phase, a step per file."""
    names = WRITE_STEPS if report else WRITE_STEPS[:2]
    with progress.phase(WRITE, total=len(names)) as phase:
        steps = Steps(phase, names)
        files = [write_json(folder / "optimize.json", found.document)]
        steps.next()
        files.append(write_atomic(folder / "strategies.toml", found.strategies_toml))
        steps.next()
        if report:
            from ..report.html.optimize import render_optimize_report

            files.append(write_atomic(folder / "report.html",
                                      render_optimize_report(found.document)))
            steps.next()
    return tuple(files)


def strategies_toml_text(document: dict) -> str:
    """strategies.toml: a header that says where the plans come from and how to use them,
    then each chosen plan's [[strategies]] block (mcrisk.optimize.candidates.strategy_toml,
    with `crews = N` where its crews differ from the scenario's), best first."""
    from ..report.html.optimize_words import (found_lines, no_plan_text, objective_text,
                                              statistic_label)
    from ..report.text import visible       # a comment line: no newline or control char

    evaluation = document["evaluation"]
    if document["objective"]["kind"] == "pareto":
        first = statistic_label(document["objective"]["statistics"][0])
        order = (f"the {objective_text(document)}, by {first}, lowest first, on "
                 f"{evaluation['samples']:,} fresh scenarios, seed {evaluation['seed']}")
    else:
        order = (f"best first by the objective ({objective_text(document)}) on "
                 f"{evaluation['samples']:,} fresh scenarios, seed {evaluation['seed']}")
    header = [
        f"# Plans found by `mcrisk optimize` (mcrisk {document['mcrisk_version']}) for "
        f"{visible(document['scenario'])}",
        f"# search: {visible(document['search'])} (sha256 {document['search_sha256']})",
        f"# {visible(order)}",
        "# (optimize.json has their figures). Each block is a [[strategies]] entry that "
        "`mcrisk run`",
        "# accepts unchanged: append it to the scenario file (docs/optimize.md).",
        ""]
    header += [f"# {line}" for line in found_lines(document)]
    if found_lines(document):
        header.append("")
    blocks = [plan["strategy_toml"].rstrip("\n") + "\n" for plan in document["plans"]
              if plan.get("strategy_toml")]
    if not blocks:
        blocks = [f"# {visible(no_plan_text(document))}\n"]
    return "\n".join(header) + "\n" + "\n".join(blocks)


# ---- the document -------------------------------------------------------------------------


def build_document(space, search_sha256: str, generated, raced, evaluated, backend: Backend,
                   wall_seconds: float) -> dict:
    """The optimize.json document (mcrisk/schema/optimize.schema.json)."""
    scenario = space.scenario
    return {
        "format": FORMAT,
        "search": str(space.path),
        "search_sha256": search_sha256,
        "scenario": str(space.scenario_path),
        "scenario_name": scenario.name,
        "scenario_sha256": scenario.sha256,
        "currency": scenario.costs.currency if scenario.costs is not None else None,
        "template": space.template,
        "seeds": {"race": int(space.race.seed), "fresh": int(space.evaluate.seed)},
        "mcrisk_version": __version__,
        "backend": backend.name,
        "backend_reason": backend.reason,
        "rng": RNG_NAME,
        "created_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "wall_seconds": round(wall_seconds, 3),
        "objective": objective_entry(space.objective),
        "constraints": [{"statistic": c.statistic, "max": c.max} for c in space.constraints],
        "space": space_entry(space, generated),
        "race": race_entry(space, raced),
        **evaluation_entries(space, generated.candidates, evaluated),
        **dask_key(backend),
    }


def dask_key(backend: Backend) -> dict:
    """optimize.json's `dask` key, as summary.json's (mcrisk.backends.dask.dask_entry): where
    the search's chunks ran and how many were retried, counted over every race stage and the
    evaluation; none for a search in this process."""
    entry = dask_entry(backend)
    return {"dask": entry} if entry is not None else {}


def objective_entry(objective) -> dict:
    """search.objective: its kind, its statistics, and for a weighted sum the weights."""
    entry = {"kind": objective.kind, "statistics": list(objective.statistics)}
    if objective.kind == "weights":
        entry["weights"] = {label: weight for label, weight in objective.terms}
    return entry


def space_entry(space, generated) -> dict:
    """The space's size, how the candidates came from it, and what was rejected, by reason."""
    rejected = {reason: int(count) for reason, count in sorted(generated.rejected.items())
                if count}
    return {"size": int(generated.space_size), "sampled": generated.sampler is not None,
            "sampler": generated.sampler, "max_candidates": int(space.max_candidates),
            "candidates": len(generated.candidates),
            "duplicates": int(generated.duplicates),
            "rejected": rejected, "rejected_total": sum(rejected.values())}


def race_entry(space, raced) -> dict:
    """The race's stages: scenarios, candidates in, re-admitted and out, dropped as
    infeasible, seconds."""
    stages = [{"stage": int(stage.number), "scenarios": int(stage.scenarios),
               "candidates_in": int(stage.candidates_in),
               "readmitted": int(stage.readmitted),
               "candidates_out": int(stage.candidates_out),
               "infeasible": int(stage.infeasible), "seconds": round(float(stage.seconds), 3)}
              for stage in raced.stages]
    return {"keep": float(space.race.keep), "stages": stages}


def evaluation_entries(space, candidates, evaluated) -> dict:
    """evaluation, plans, written, set_aside and pareto, from the fresh-seed evaluation
    (mcrisk.optimize.evaluate.Evaluation); `candidates` are the race's, whose knobs and
    [[strategies]] block each plan found takes. A plan set aside (it broke a constraint on
    the fresh worlds) keeps its figures and knobs, but no rank, no block and no comparison
    with the written strategies: it is not a plan found."""
    from .candidates import strategy_toml

    scenario = space.scenario
    plans = []
    for rank, figures in enumerate(shown_order(space.objective, evaluated.plans), start=1):
        candidate = candidates[figures.candidate]
        plans.append(plan_entry(figures, rank, candidate.knobs,
                                strategy_toml(candidate, scenario)))
    set_aside = []
    for figures in evaluated.set_aside:
        entry = plan_entry(figures, knobs=candidates[figures.candidate].knobs)
        del entry["against_best_written"]
        set_aside.append(entry)
    return {"evaluation": {"seed": int(evaluated.seed), "samples": int(evaluated.samples),
                           "top": int(space.evaluate.top),
                           "best_written": evaluated.best_written,
                           "replacements": int(evaluated.replacements),
                           "resamples": int(evaluated.resamples),
                           "seconds": round(float(evaluated.seconds), 3)},
            "plans": plans,
            "written": [plan_entry(f) for f in shown_order(space.objective, evaluated.written)],
            "set_aside": set_aside,
            "pareto": list(evaluated.pareto),
            "pareto_support": {name: round(share, 6)
                               for name, share in evaluated.pareto_support.items()}}


def shown_order(objective, plans) -> list:
    """The chosen plans (or the written strategies) in the order they are listed and
    ranked: best first by the objective as the evaluation gives them; a Pareto set has no
    best (the evaluation orders it by the sum of each plan's ranks on the objectives, which
    says little to a reader), so it is listed by its first objective, lowest first (ties as
    the evaluation ordered them): along a two-objective frontier, from one end to the
    other."""
    plans = list(plans)
    if objective.kind != "pareto":
        return plans
    first = objective.statistics[0]

    def key(figures):
        value = figures.statistics[first].value if first in figures.statistics else None
        return (value is None, value if value is not None else 0.0)
    return sorted(plans, key=key)


def plan_entry(figures, rank: int | None = None, knobs=(), block: str | None = None) -> dict:
    """One plan (or written strategy: no rank, knobs or block) of the evaluation."""
    entry = {"name": figures.name, **({"rank": rank} if rank is not None else {}),
             "written": bool(figures.written), "crews": int(figures.crews),
             "knobs": [{"knob": knob, "value": value} for knob, value in knobs],
             "objective": _estimate(figures.objective),
             "statistics": {label: _estimate(e) for label, e in figures.statistics.items()},
             "constraints": {label: {"verdict": v, **figures.evidence.get(label, {})}
                             for label, v in figures.constraints.items()},
             "feasible": bool(figures.feasible),
             "against_best_written": _paired(figures.against_best_written)}
    if block is not None:
        entry["strategy_toml"] = block
    return entry


def _paired(paired) -> dict | None:
    """A plan against the best written strategy, or None for that strategy itself."""
    if paired is None:
        return None
    return {"strategy": paired.strategy, "objective": _estimate(paired.objective),
            "verdict": paired.verdict, "columns": _finite_json(paired.columns)}


def _estimate(estimate) -> dict:
    """{"value", "ci"} of an Estimate (ci None or (low, high)); not finite becomes null."""
    ci = estimate.ci
    return {"value": _number(estimate.value),
            "ci": None if ci is None else [_number(c) for c in ci]}


def _finite_json(value):
    """`value` with every float that is not finite as None (strict JSON), tuples as lists."""
    if isinstance(value, dict):
        return {k: _finite_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite_json(v) for v in value]
    if isinstance(value, float) or hasattr(value, "dtype"):
        return _number(value)
    return value


def _number(value) -> float | None:
    """A float, or None where not finite (strict JSON has no NaN or Infinity)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None
