"""What a user waits for before the first scenario is simulated: this checkout against an
earlier commit, alternated in one run.

    python benchmarks/startup.py --before REF [--repeats 5] [--rounds 2]
        [--skip imports,compile,install] [--scenario scenarios/reference-2048.toml]

  imports   `python -c "import mcrisk.cli"` and `mcrisk validate SCENARIO`, wall seconds,
            min of --repeats (what a command pays before it does anything: scipy.stats,
            Numba, pyarrow and matplotlib are loaded only by the commands and phases that
            use them)
  compile   the Numba kernel's cold compile alone: the first call on one scenario
            (driver.prepare where a version has it) in a fresh interpreter with an empty
            NUMBA_CACHE_DIR, wall and CPU seconds, min of --rounds
  install   the first `mcrisk run SCENARIO` (20,000 x 5, every output and the report) of a
            fresh install, a copy of the package at a new path, NUMBA_CACHE_DIR unset: before,
            Numba's cache sits beside the installed source, so a new install compiles; after,
            the kernel's cache is in the user's cache folder (XDG_CACHE_HOME, a temporary
            folder here), filled by one earlier install of the same code. Min of --rounds.

Machines here are shared and noisy: quote the ratios of one run, with this command.
"""
from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

COMPILE_CHILD = r"""
import json, resource, sys, time
from mcrisk.backends.numba import driver
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario
plan = compile_scenario(load_scenario(sys.argv[1]))
before, started = resource.getrusage(resource.RUSAGE_SELF), time.perf_counter()
driver.prepare(plan) if hasattr(driver, "prepare") else driver.simulate_chunk(plan, 0, 0, 1)
wall, after = time.perf_counter() - started, resource.getrusage(resource.RUSAGE_SELF)
cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
print(json.dumps({"wall": wall, "cpu": cpu}))
"""


def worktree(ref: str, into: Path) -> Path:
    """A detached git worktree of `ref` (removed at the end)."""
    path = into / f"before-{ref[:12]}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), ref],
                   check=True, capture_output=True)
    return path


def timed(args: list[str], source: Path, env_extra: dict | None = None,
          drop: tuple[str, ...] = ()) -> tuple[float, str]:
    """(wall seconds, stdout) of `python ARGS` importing mcrisk from `source`."""
    env = {k: v for k, v in os.environ.items() if k not in drop}
    env.update(PYTHONPATH=str(source), **(env_extra or {}))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, *args], cwd=source, env=env, capture_output=True,
                          text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"python {' '.join(args)} failed in {source}:\n{done.stderr[-2000:]}")
    return seconds, done.stdout


def imports(versions: dict, scenario: str, repeats: int) -> dict:
    commands = {"import_s": ["-c", "import mcrisk.cli"],
                "validate_s": ["-m", "mcrisk", "validate", scenario]}
    best = {(key, name): float("inf") for key in commands for name in versions}
    for _ in range(repeats):
        for key, args in commands.items():
            for name, source in versions.items():
                best[key, name] = min(best[key, name], timed(args, source)[0])
    return {name: {key: best[key, name] for key in commands} for name in versions}


def compile_times(versions: dict, scenario: str, rounds: int, tmp: Path) -> dict:
    rows = {name: [] for name in versions}
    for _ in range(rounds):
        for name, source in versions.items():
            cache = tempfile.mkdtemp(prefix="numba-cold-", dir=tmp)
            out = timed(["-c", COMPILE_CHILD, scenario], source, {"NUMBA_CACHE_DIR": cache})[1]
            rows[name].append(json.loads(out.splitlines()[-1]))
    return {name: {"compile_wall_s": min(r["wall"] for r in got),
                   "compile_cpu_s": min(r["cpu"] for r in got)} for name, got in rows.items()}


def installs(versions: dict, scenario: str, rounds: int, tmp: Path) -> dict:
    user_cache = {"XDG_CACHE_HOME": str(tmp / "user-cache")}

    def first_run(name: str, label: str) -> float:
        root = tmp / f"install-{label}"
        shutil.copytree(versions[name] / "mcrisk", root / "mcrisk",
                        ignore=shutil.ignore_patterns("__pycache__"))
        return timed(["-m", "mcrisk", "run", scenario, "--quiet", "--out", str(root / "out")],
                     root, user_cache, drop=("NUMBA_CACHE_DIR",))[0]

    for name in versions:
        first_run(name, f"{name}-earlier")          # an earlier install of the same code
    best = {name: float("inf") for name in versions}
    for r in range(rounds):
        for name in versions:
            best[name] = min(best[name], first_run(name, f"{name}-{r}"))
    return {name: {"fresh_install_run_s": best[name]} for name in versions}


LABELS = {"import_s": "import mcrisk.cli, s", "validate_s": "mcrisk validate, s",
          "compile_wall_s": "kernel cold compile, wall s",
          "compile_cpu_s": "kernel cold compile, CPU s",
          "fresh_install_run_s": "first run of a fresh install, s"}


def table(result: dict) -> str:
    names = [n for n in ("before", "after") if n in result]
    rows = [("quantity", *names, "after/before" if len(names) == 2 else "")]
    for key, label in LABELS.items():
        values = [result[n].get(key) for n in names]
        if any(v is None for v in values):
            continue
        ratio = f"{values[1] / values[0]:.2f}x" if len(values) == 2 and values[0] else ""
        rows.append((label, *(f"{v:.2f}" for v in values), ratio))
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="git ref to compare with")
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--skip", default="", help="comma-separated: imports,compile,install")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args()
    skip = set(filter(None, args.skip.split(",")))
    tmp = Path(tempfile.mkdtemp(prefix="mcrisk-startup-"))
    versions = {"after": ROOT}
    if args.before:
        versions = {"before": worktree(args.before, tmp), "after": ROOT}
    scenario = str(ROOT / args.scenario)
    result = {name: {} for name in versions}
    try:
        for part, measure in (("imports", lambda: imports(versions, scenario, args.repeats)),
                              ("compile", lambda: compile_times(versions, scenario,
                                                                args.rounds, tmp)),
                              ("install", lambda: installs(versions, scenario, args.rounds,
                                                           tmp))):
            if part not in skip:
                for name, values in measure().items():
                    result[name].update(values)
    finally:
        if args.before:
            subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                            str(versions["before"])], capture_output=True)
        shutil.rmtree(tmp, ignore_errors=True)
    print(table(result))
    print(f"\ncommand: python benchmarks/startup.py {' '.join(sys.argv[1:])}")
    print(f"cores: {os.cpu_count()}, python {sys.version.split()[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
