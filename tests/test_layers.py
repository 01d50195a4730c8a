"""The house: mcrisk's modules on floors, each above what it uses, and data flowing one way.

Every import of an mcrisk module is read from the source (ast, so imports inside functions
count too) and must point to the same floor or one below. The floors, bottom to top:

    foundation   definitions, quantities, errors, rng, distributions, model, schema, outputs
    scenario     the TOML reader and validation (mcrisk/scenario/)
    compile      the scenario as flat arrays (compile, world, plan)
    backends     NumPy, Numba, CUDA: sample worlds, schedule, metrics
    simulate     the chunk loop
    results      statistics of results: aggregate, milestones, analysis/
    report       files, figures, diffs, alerts, trend (report/)
    application  what runs things: run, precision_run, mitigation_run, compare_run,
                 schedule_run, nightly
    cli          the only printer (cli/, __main__)

Results and report are pure functions of a run's results: they never simulate, never load a
scenario, never run anything. No module is longer than 600 lines.
"""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcrisk"
MAX_LINES = 600

FLOORS = ("foundation", "scenario", "compile", "backends", "simulate", "results", "report",
          "application", "cli")
# Each module's floor, by the longest dotted prefix of its name listed here (a package's
# modules are where the package is; a new top-level module must be placed here).
PLACES = {
    "mcrisk": "foundation",                   # the package itself: __version__ only
    "mcrisk.definitions": "foundation", "mcrisk.quantities": "foundation",
    "mcrisk.errors": "foundation",
    "mcrisk.rng": "foundation", "mcrisk.distributions": "foundation",
    "mcrisk.model": "foundation", "mcrisk.schema": "foundation", "mcrisk.outputs": "foundation",
    "mcrisk.progress": "foundation", "mcrisk.binomial": "foundation",
    "mcrisk.scenario": "scenario",
    "mcrisk.compile": "compile", "mcrisk.world": "compile", "mcrisk.cost_plan": "compile", "mcrisk.plan": "compile",
    "mcrisk.job_plan": "compile",
    "mcrisk.backends": "backends",
    "mcrisk.simulate": "simulate",
    "mcrisk.dask_backend": "simulate",        # chunks on Dask workers (issue 16)
    "mcrisk.aggregate": "results", "mcrisk.milestones": "results", "mcrisk.analysis": "results",
    "mcrisk.cost_summary": "results", "mcrisk.job_summary": "results",
    "mcrisk.report": "report",
    "mcrisk.run": "application", "mcrisk.precision_run": "application",
    "mcrisk.mitigation_run": "application", "mcrisk.compare_run": "application",
    "mcrisk.schedule_run": "application", "mcrisk.nightly": "application",
    "mcrisk.optimize_run": "application",     # `mcrisk optimize` end to end (issue 14)
    "mcrisk.optimize": "application",          # space, candidates (issue 14)
    "mcrisk.optimize.order": "application",    # the order of waves, a knob (issue 14)
    "mcrisk.optimize.objective": "results",   # pure statistics of a race (issue 14)
    "mcrisk.optimize.race": "application", "mcrisk.optimize.evaluate": "application",
    "mcrisk.cli": "cli", "mcrisk.__main__": "cli",
}
BOTTOM = ("mcrisk.definitions", "mcrisk.errors", "mcrisk.rng", "mcrisk.distributions",
          "mcrisk.model")
# What the pure stages (analysis, report) must never import: they get results, not runs.
RUNS_THINGS = ("mcrisk.run", "mcrisk.simulate", "mcrisk.cli", "mcrisk.nightly",
               "mcrisk.backends", "mcrisk.scenario", "mcrisk.precision_run",
               "mcrisk.mitigation_run", "mcrisk.compare_run", "mcrisk.schedule_run")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _resolve(name: str) -> str:
    """The module a dotted import name refers to: itself, or the longest module prefix (an
    imported attribute, say `mcrisk.report.diff.read_night`, belongs to mcrisk.report.diff)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports(module: str) -> set[str]:
    """Every mcrisk module `module` imports, at the top or inside a function."""
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")
                anchor = anchor[:len(anchor) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            # `from mcrisk.report import diff` imports the module mcrisk.report.diff
            names = [f"{base}.{alias.name}" for alias in node.names] or [base]
            names.append(base)
        else:
            continue
        found.update(_resolve(n) for n in names if n == "mcrisk" or n.startswith("mcrisk."))
    found.discard(module)
    return found


def floor(module: str) -> str:
    """The floor of `module`: its own entry in PLACES, or its package's (never the bare
    `mcrisk` entry, which is the package's __init__ only); KeyError when it has none."""
    name = module
    while name not in PLACES:
        name = name.rsplit(".", 1)[0]
        if name == "mcrisk":
            raise KeyError(module)
    return PLACES[name]


def test_the_import_reader_sees_relative_lazy_and_submodule_imports(tmp_path):
    # the reader is what every test below trusts: check it on modules whose imports are known
    assert "mcrisk.definitions" in imports("mcrisk.simulate")           # from .definitions
    assert "mcrisk.report.diff" in imports("mcrisk.nightly")            # from .report.diff
    assert "mcrisk.report" in imports("mcrisk.nightly")                 # from .report import
    assert "mcrisk.schedule_run" in imports("mcrisk.cli")               # inside a function
    assert imports("mcrisk.definitions") == set()
    assert floor("mcrisk.report.diff") == "report" and floor("mcrisk") == "foundation"
    with pytest.raises(KeyError):
        floor("mcrisk.not_placed_anywhere")      # not the package's floor by default


def test_every_module_has_a_floor():
    unplaced = []
    for module in MODULES:
        try:
            floor(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, ("place these modules on a floor (PLACES in tests/test_layers.py): "
                          + ", ".join(unplaced))


def test_imports_never_climb_to_a_higher_floor():
    climbs = []
    for module in MODULES:
        here = FLOORS.index(floor(module))
        for target in sorted(imports(module)):
            if FLOORS.index(floor(target)) > here:
                climbs.append(f"{module} ({floor(module)}) imports {target} ({floor(target)})")
    assert not climbs, "imports that run back up:\n" + "\n".join(climbs)


@pytest.mark.parametrize("stage", ["mcrisk.analysis", "mcrisk.report"])
def test_analysis_and_report_never_run_anything(stage):
    """They are handed results: importing a run, the chunk loop, a backend, the scenario
    loader, the nightly or the CLI would let them run (or load) something themselves."""
    offending = [f"{module} imports {target}"
                 for module in MODULES if module == stage or module.startswith(stage + ".")
                 for target in sorted(imports(module))
                 if any(target == t or target.startswith(t + ".") for t in RUNS_THINGS)]
    assert not offending, "\n".join(offending)


def test_the_bottom_modules_import_nothing_above_them():
    offending = [f"{module} imports {target}" for module in BOTTOM
                 for target in sorted(imports(module)) if target not in BOTTOM]
    assert not offending, "\n".join(offending)


def test_no_module_is_over_600_lines():
    long = {str(path.relative_to(PACKAGE.parent)): n for path in MODULES.values()
            if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): " + ", ".join(
        f"{name} ({n})" for name, n in sorted(long.items()))
