"""The house: mcrisk's packages are the stages of the pipeline, each on a floor above what it
uses, data flowing one way and no import circle anywhere.

Every import of an mcrisk module is read from the source (ast, so imports inside functions and
under TYPE_CHECKING count too). The floors, bottom to top, one package each:

    core       what every stage agrees on: definitions, labels, errors, rng, distributions,
               model, risks, quantities, progress, outputs, tasks, jit (plus mcrisk/schema,
               the outputs' contract)
    scenario   the TOML reader and its validation
    plan       the scenario compiled to flat arrays: compile, world, costs, jobs, the record
    backends   NumPy, Numba, CUDA; the chunk loop; Dask
    results    statistics of results: summaries, ranking, paired tests, milestones, bands
    report     files, report.html, figures, findings, the nightly's comparisons
    app        what runs things: run, compare, schedule, nightly (never prints)
    optimize   the plan search
    cli        the only printer

An import may point to its own package or a floor below, never up; results and report are
pure functions of a run's results (they never simulate, load a scenario or run anything); and
the import graph has no cycle, lazy imports included (a lazy import that dodges a cycle is a
cycle). No module is longer than 600 lines, and each package's docstring names its modules.
"""
from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "mcrisk"
MAX_LINES = 600

FLOORS = ("core", "scenario", "plan", "backends", "results", "report", "app", "optimize",
          "cli")
# A module's floor is its package's: the first dotted part after `mcrisk`. Two top-level
# entries are not stages: the package itself (__version__ only) and `python -m mcrisk`.
PLACES = {"mcrisk": "core", "mcrisk.schema": "core", "mcrisk.__main__": "cli"}
# What the pure stages must never import: they are handed results, not runs.
RUNS_THINGS = ("mcrisk.scenario", "mcrisk.backends", "mcrisk.app", "mcrisk.optimize",
               "mcrisk.cli")


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}
PACKAGES = {m for m, p in MODULES.items() if p.name == "__init__.py"}


def _resolve(name: str) -> str:
    """The module a dotted import name refers to: itself, or the longest module prefix (an
    imported attribute, say `mcrisk.report.nightly.diff.read_night`, belongs to
    mcrisk.report.nightly.diff)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def imports(module: str) -> set[str]:
    """Every mcrisk module `module` imports, at the top or inside a function. `from P import
    m` imports the module P.m where there is one (not P's __init__: Python has imported that
    already, it is no edge of ours), else the name m of P."""
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
            names = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in MODULES else base
                     for alias in node.names]
        else:
            continue
        found.update(_resolve(n) for n in names if n == "mcrisk" or n.startswith("mcrisk."))
    found.discard(module)
    return found


def floor(module: str) -> str:
    """The floor of `module`: its entry in PLACES, else its stage package's name; KeyError
    for a module that is on no floor (a new top-level module, a package of no stage)."""
    if module in PLACES:
        return PLACES[module]
    parts = module.split(".")
    if len(parts) < 2 or parts[1] not in FLOORS:
        raise KeyError(module)
    return parts[1]


GRAPH = {module: imports(module) for module in MODULES}


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative), each
    sorted: every import cycle lies in one."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in graph:
                    continue
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_import_reader_sees_relative_lazy_and_submodule_imports():
    # the reader is what every test below trusts: check it on modules whose imports are known
    assert "mcrisk.core.definitions" in imports("mcrisk.backends.chunks")     # from ..core...
    assert "mcrisk.report.nightly.diff" in imports("mcrisk.app.nightly")     # a submodule
    assert "mcrisk.app.schedule" in imports("mcrisk.cli")                    # in a function
    assert imports("mcrisk.core.definitions") == set()
    assert floor("mcrisk.report.nightly.diff") == "report" and floor("mcrisk") == "core"
    with pytest.raises(KeyError):
        floor("mcrisk.not_placed_anywhere")      # a top-level module is on no floor


def test_the_cycle_finder_finds_a_circle_and_only_circles():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set(), "c": {"a", "b"}}) == []


def test_every_module_is_in_a_stage_package():
    unplaced = []
    for module in MODULES:
        try:
            floor(module)
        except KeyError:
            unplaced.append(module)
    assert not unplaced, ("put these modules into the package of their stage (or name their "
                          "place in PLACES, tests/test_layers.py): " + ", ".join(unplaced))


def test_imports_never_climb_to_a_higher_floor():
    climbs = []
    for module, targets in GRAPH.items():
        here = FLOORS.index(floor(module))
        for target in sorted(targets):
            if FLOORS.index(floor(target)) > here:
                climbs.append(f"{module} ({floor(module)}) imports {target} ({floor(target)})")
    assert not climbs, "imports that run back up:\n" + "\n".join(climbs)


def test_there_is_no_import_cycle():
    found = cycles(GRAPH)
    assert not found, "import cycles (move what both sides need down to where both can " \
                      "import it):\n" + "\n".join(" <-> ".join(c) for c in found)


@pytest.mark.parametrize("stage", ["mcrisk.results", "mcrisk.report"])
def test_results_and_report_never_run_anything(stage):
    """They are handed results: importing a backend, the scenario loader, a run or the CLI
    would let them run (or load) something themselves."""
    offending = [f"{module} imports {target}"
                 for module in MODULES if module == stage or module.startswith(stage + ".")
                 for target in sorted(GRAPH[module])
                 if any(target == t or target.startswith(t + ".") for t in RUNS_THINGS)]
    assert not offending, "\n".join(offending)


def test_core_imports_nothing_above_it():
    offending = [f"{module} imports {target}" for module in MODULES if floor(module) == "core"
                 for target in sorted(GRAPH[module]) if floor(target) != "core"]
    assert not offending, "\n".join(offending)


@pytest.mark.parametrize("package", sorted(PACKAGES))
def test_each_package_docstring_names_its_modules(package):
    """A package says what it owns: its docstring lists every module and subpackage directly
    in it, each at the start of an indented line (`    name  what it holds`, `name.py` or
    `name/` too), so that the list a reader trusts cannot drift from the folder."""
    doc = ast.get_docstring(ast.parse(MODULES[package].read_text("utf-8")), clean=False) or ""
    children = sorted(m.rsplit(".", 1)[1] for m in MODULES
                      if m.rsplit(".", 1)[0] == package and m != package)
    listed = set(re.findall(r"^[ \t]+(\w+)(?:\.py|/)?(?:\s|$)", doc, re.MULTILINE))
    missing = [c for c in children if c not in listed]
    assert doc, f"{package} has no docstring"
    assert not missing, f"{package}'s docstring does not name " + ", ".join(missing)


def test_no_module_is_over_600_lines():
    long = {str(path.relative_to(PACKAGE.parent)): n for path in MODULES.values()
            if (n := len(path.read_text("utf-8").splitlines())) > MAX_LINES}
    assert not long, f"modules over {MAX_LINES} lines (split them by concept): " + ", ".join(
        f"{name} ({n})" for name, n in sorted(long.items()))
