"""The whole run as a user waits for it, this checkout against an earlier commit, in one run.

    python benchmarks/end_to_end.py [--before REF ...] [--after REF]
        [--scenario scenarios/reference-2048.toml] [--repeats 3] [--big-samples 1000000]
        [--simpy-samples 200] [--skip cold,big,...]

Times `mcrisk run` as a subprocess (imports, compile or cache load, simulation, summaries,
every output file, the report), wall clock, for this checkout ("after"; with --after, a git
worktree of REF, so that other work in progress in the checkout is not measured) and, with
--before (repeatable: each REF a column), a git worktree of each REF, each run with the same
interpreter and PYTHONPATH pointing at its own source tree, taking turns version by version so
that a noisy neighbour hurts all alike. Every version reads after's --scenario file (the same
input: a later version's scenario may have sections an earlier one does not know).

  warm      the default run (report included), Numba's cache already filled: min of --repeats
  cold      the same run with an empty NUMBA_CACHE_DIR, so every kernel compiles first
  big       --samples --big-samples (every output), once; its summary.json's wall_seconds is
            the simulation's share, the rest is everything else (outputs, imports, report)
  simpy     benchmarks/simpy_model.py, the SimPy model of the same migration, one core: the
            peer every rate is divided by (scenario-strategies per second)

Prints a table with ratios (after over each before) and the command that reproduces it, with
the load average at the start and the end (what else loaded the machine); --json FILE keeps
the rows. Machines here are shared and noisy: quote ratios from one run, never absolute seconds
alone.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))


def worktree(ref: str, into: Path) -> Path:
    """A detached git worktree of `ref` (removed by the caller's temporary folder)."""
    path = into / f"tree-{ref[:12].replace('~', '-').replace('^', '-')}"
    subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-f", str(path), ref],
                   check=True, capture_output=True)
    return path


def run_mcrisk(source: Path, args: list[str], env_extra: dict | None = None) -> float:
    """Wall seconds of `python -m mcrisk run ...` importing mcrisk from `source`."""
    env = dict(os.environ, PYTHONPATH=str(source), **(env_extra or {}))
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mcrisk", "run", *args], cwd=source, env=env,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mcrisk run {' '.join(args)} failed in {source}:\n{done.stderr[-2000:]}")
    return seconds


def simpy_rate(scenario: Path, samples: int) -> float:
    """Scenario-strategies per second of the SimPy model on one core."""
    import simpy_model
    plans = simpy_model.read_plans(scenario)
    simpy_model.simulate(plans, 5, seed=1)                       # imports, first-call costs
    started = time.perf_counter()
    simpy_model.simulate(plans, samples, seed=2, first=10)
    return samples * len(plans) / (time.perf_counter() - started)


def measure(args) -> dict:
    """The measurements of every version, from worktrees removed afterwards (also on error)."""
    tmp = Path(tempfile.mkdtemp(prefix="mcrisk-e2e-"))
    versions = {version_name(ref, args.before): worktree(ref, tmp) for ref in args.before}
    versions["after"] = worktree(args.after, tmp) if args.after else ROOT
    try:
        return measure_versions(versions, tmp, args)
    finally:
        for source in versions.values():
            if source != ROOT:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                str(source)], capture_output=True)


def measure_versions(versions: dict, tmp: Path, args) -> dict:
    """Every measurement not skipped, for each version's source tree."""
    scenario = str(versions["after"] / args.scenario)    # one input for every version
    out = {name: {} for name in versions}
    out["load_average"] = {"start": os.getloadavg()}
    skip = set(args.skip.split(",")) if args.skip else set()
    for name, source in versions.items():               # fill each tree's Numba cache
        run_mcrisk(source, [scenario, "--quiet", "--samples", "1000", "--out", str(tmp / "w")])
    if "warm" not in skip:
        best = {name: float("inf") for name in versions}
        for _ in range(args.repeats):
            for name, source in versions.items():
                best[name] = min(best[name], run_mcrisk(
                    source, [scenario, "--quiet", "--out", str(tmp / f"warm-{name}")]))
        for name in versions:
            out[name]["warm_s"] = best[name]
    if "cold" not in skip:
        for name, source in versions.items():
            cache = tempfile.mkdtemp(prefix="numba-cold-", dir=tmp)
            out[name]["cold_s"] = run_mcrisk(
                source, [scenario, "--quiet", "--out", str(tmp / f"cold-{name}")],
                {"NUMBA_CACHE_DIR": cache})
    if "big" not in skip:
        for name, source in versions.items():
            folder = tmp / f"big-{name}"
            total = run_mcrisk(source, [scenario, "--quiet", "--samples", str(args.big_samples),
                                        "--out", str(folder)])
            summary = json.loads((folder / "summary.json").read_text())
            simulate = summary["wall_seconds"]
            out[name].update(big_total_s=total, big_simulate_s=simulate,
                             big_rest_s=total - simulate,
                             big_rate=args.big_samples * len(summary["strategies"]) / total)
    if "simpy" not in skip:
        out["simpy_rate"] = simpy_rate(Path(scenario), args.simpy_samples)
    out["load_average"]["end"] = os.getloadavg()
    return out


def version_name(ref: str, befores: list[str]) -> str:
    """A before's column: "before" when there is one, "before REF" when there are several."""
    return "before" if len(befores) == 1 else f"before {ref}"


def table(result: dict, args) -> str:
    befores = [version_name(ref, args.before) for ref in args.before]
    names = [*befores, "after"]
    rows = [("quantity", *names, *(f"after/{b}" for b in befores))]

    def row(label, key, fmt="{:.2f}", ratio=True):
        values = [result[n].get(key) for n in names]
        if any(v is None for v in values):
            return
        cells = [fmt.format(v) for v in values]
        ratios = [f"{values[-1] / v:.2f}x" if ratio and v else "" for v in values[:-1]]
        rows.append((label, *cells, *ratios))

    row("warm default run, s", "warm_s")
    row("cold first run, s", "cold_s")
    row(f"{args.big_samples:,} x 5 whole run, s", "big_total_s")
    row("  of which simulation, s", "big_simulate_s")
    row("  of which everything else, s", "big_rest_s")
    simpy = result.get("simpy_rate")
    if simpy:
        rows.append(("SimPy model, scenario-strategies/s (1 core)", f"{simpy:,.0f}",
                     *[""] * (2 * len(befores))))
        for n in names:
            if "big_rate" in result[n]:
                result[n]["big_vs_simpy"] = result[n]["big_rate"] / simpy
        row(f"whole run at {args.big_samples:,} x 5 / SimPy", "big_vs_simpy", "{:.0f}x", False)
    for n in names:
        if "big_simulate_s" in result[n]:
            result[n]["rest_over_sim"] = result[n]["big_rest_s"] / result[n]["big_simulate_s"]
    row("everything else / simulation", "rest_over_sim", "{:.2f}", False)
    widths = [max(len(str(r[i])) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(str(c).ljust(w) for c, w in zip(r, widths)) for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    load = result["load_average"]
    lines.append("\nload average (1, 5, 15 min): "
                 + ", ".join(f"{moment} {' '.join(f'{v:.2f}' for v in load[moment])}"
                             for moment in ("start", "end")))
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--before", action="append", default=[],
                        help="git ref to compare against (a worktree of it); repeatable")
    parser.add_argument("--after", help="git ref to measure instead of this checkout")
    parser.add_argument("--scenario", default="scenarios/reference-2048.toml")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--big-samples", type=int, default=1_000_000)
    parser.add_argument("--simpy-samples", type=int, default=200)
    parser.add_argument("--skip", default="", help="comma list of warm,cold,big,simpy")
    parser.add_argument("--json", help="also write the measurements here")
    args = parser.parse_args(argv)
    result = measure(args)
    print(table(result, args))
    print(f"\ncommand: python benchmarks/end_to_end.py {' '.join(argv or sys.argv[1:])}")
    print(f"cores: {os.cpu_count()}, python {sys.version.split()[0]}")
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
