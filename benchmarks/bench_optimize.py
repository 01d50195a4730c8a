"""How fast `mcrisk optimize` searches (issue 14): candidates x scenarios per second, and the
wall time of 1,000 candidates on the reference raced up to 20,000 scenarios, in one run.

    python benchmarks/bench_optimize.py [--search scenarios/reference-search.toml]
        [--candidates 1000] [--stages 500,2000,20000] [--keep 0.25] [--evaluate 20000]
        [--no-constraints] [--backend numba] [--json FILE]

Writes a copy of the search file beside nothing the repository holds (a temporary folder):
its scenario made absolute, max_candidates = --candidates, race.scenarios = --stages and,
when given, race.keep and evaluate.samples; every other knob as the file says. Then times
`mcrisk optimize COPY --out TMP --backend B --quiet` as a subprocess (imports, the Numba
cache load, generate, every race stage, the fresh-seed evaluation, the outputs), wall
clock, once, and reads optimize.json for each race stage's candidates, scenarios and
seconds: the rate of a stage is candidates_in x scenarios / seconds (one candidate on one
scenario is one strategy of one simulated world). The target of issue 14: the whole command
under 5 minutes with 1,000 candidates raced up to 20,000 scenarios on this 2-core machine.
A sample of --candidates loses the candidates rejected before simulation (row positions, power,
deadlocks), so ask for more to race 1,000. `--keep 1 --no-constraints` races every candidate
on every stage (nothing is infeasible, every one is kept): the worst case of the target.

Prints the table, the command that reproduced it and the load average at the start and the
end (what else loaded the machine). Machines here are shared and noisy: quote one run, with
its command and its load.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TARGET_SECONDS = 300.0


def replace_key(text: str, table: str, key: str, value: str) -> str:
    """`text` with `key = ...` of TOML table `table` set to `value` (added when absent).

    Works on the plain layout the search files use: a `[table]` header line, then one
    `key = value` per line; the value may not span lines."""
    header = re.search(rf"^\[{re.escape(table)}\][ \t]*(#.*)?$", text, flags=re.M)
    if header is None:
        raise SystemExit(f"the search file has no [{table}] table to set {key} in")
    start = header.end()
    following = re.search(r"^\[", text[start:], flags=re.M)
    end = start + following.start() if following else len(text)
    body = text[start:end]
    line = re.compile(rf"^{re.escape(key)}[ \t]*=.*$", flags=re.M)
    if line.search(body):
        body = line.sub(f"{key} = {value}", body, count=1)
    else:
        body = f"\n{key} = {value}" + body
    return text[:start] + body + text[end:]


def remove_table(text: str, table: str) -> str:
    """`text` without TOML table [table] (its header line and every line up to the next
    table); unchanged when it has none."""
    header = re.search(rf"^\[{re.escape(table)}\][ \t]*(#.*)?$", text, flags=re.M)
    if header is None:
        return text
    following = re.search(r"^\[", text[header.end():], flags=re.M)
    end = header.end() + following.start() if following else len(text)
    return text[:header.start()] + text[end:]


def bench_search(args, into: Path) -> Path:
    """The benchmark's copy of the search file, in `into`."""
    source = Path(args.search).resolve()
    text = source.read_text(encoding="utf-8")
    scenario = re.search(r'^scenario[ \t]*=[ \t]*"([^"]+)"', text, flags=re.M)
    if scenario is None:
        raise SystemExit(f"{source}: no search.scenario line to make absolute")
    absolute = (source.parent / scenario.group(1)).resolve()
    text = replace_key(text, "search", "scenario", json.dumps(str(absolute)))
    text = replace_key(text, "search", "max_candidates", str(args.candidates))
    text = replace_key(text, "search.race", "scenarios", f"[{', '.join(map(str, args.stages))}]")
    if args.keep is not None:
        text = replace_key(text, "search.race", "keep", repr(args.keep))
    if args.evaluate is not None:
        text = replace_key(text, "search.evaluate", "samples", str(args.evaluate))
    if args.no_constraints:
        text = remove_table(text, "search.constraints")
    copy = into / "bench-search.toml"
    copy.write_text(text, encoding="utf-8")
    return copy


def run_optimize(search: Path, out: Path, backend: str) -> float:
    """Wall seconds of `python -m mcrisk optimize SEARCH --out OUT --backend B --quiet`."""
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "mcrisk", "optimize", str(search), "--out",
                           str(out), "--backend", backend, "--quiet"], cwd=ROOT,
                          capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"mcrisk optimize failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return seconds


def stage_rows(document: dict) -> list[dict]:
    """Per race stage: scenarios, candidates in and out, seconds, candidate-scenarios/s."""
    rows = []
    for stage in document["race"]["stages"]:
        work = stage["candidates_in"] * stage["scenarios"]
        seconds = stage.get("seconds")
        rows.append({**stage, "candidate_scenarios": work,
                     "rate": work / seconds if seconds else None})
    return rows


def print_table(rows: list[dict], document: dict, wall: float) -> None:
    print(f"{'stage':>5} {'scenarios':>10} {'cand in':>8} {'cand out':>8} {'seconds':>9} "
          f"{'cand x scen/s':>14}")
    for row in rows:
        rate = f"{row['rate']:,.0f}" if row["rate"] else "n/a"
        print(f"{row['stage']:>5} {row['scenarios']:>10,} {row['candidates_in']:>8,} "
              f"{row['candidates_out']:>8,} {row.get('seconds', 0.0):>9.2f} {rate:>14}")
    work = sum(row["candidate_scenarios"] for row in rows)
    race_seconds = sum(row.get("seconds", 0.0) for row in rows)
    space = document["space"]
    evaluation = document["evaluation"]
    print(f"race: {work:,} candidate-scenarios in {race_seconds:.2f} s = "
          f"{work / race_seconds:,.0f} per second" if race_seconds else "race: no time recorded")
    print(f"space: {space['size']:,} combinations, {space['candidates']:,} candidates raced, "
          f"rejected before simulation {space.get('rejected_total', 0):,} "
          f"{json.dumps(space['rejected'])}")
    print(f"evaluation: {len(document['plans'])} plans + {len(document['written'])} written "
          f"on {evaluation['samples']:,} fresh scenarios in "
          f"{evaluation.get('seconds', float('nan')):.2f} s")
    print(f"optimize.json wall_seconds {document.get('wall_seconds', float('nan')):.2f} s; "
          f"the whole command {wall:.2f} s (target {TARGET_SECONDS:.0f} s: "
          f"{'met' if wall < TARGET_SECONDS else 'NOT met'}); backend {document['backend']}")
    best = document["plans"][0] if document["plans"] else None
    if best:
        print(f"best plan: {best['name']}, objective {best['objective']['value']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--search", default=str(ROOT / "scenarios" / "reference-search.toml"))
    parser.add_argument("--candidates", type=int, default=1000)
    parser.add_argument("--stages", default="500,2000,20000",
                        type=lambda s: [int(x) for x in s.split(",")])
    parser.add_argument("--keep", type=float, default=None)
    parser.add_argument("--evaluate", type=int, default=None)
    parser.add_argument("--no-constraints", action="store_true",
                        help="drop [search.constraints]: with --keep 1 no candidate leaves the "
                             "race, so every one runs every stage (the worst case)")
    parser.add_argument("--backend", default="numba")
    parser.add_argument("--json", default=None, help="also write the rows to this file")
    args = parser.parse_args(argv)
    load_start = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mcrisk-bench-optimize-") as tmp:
        search = bench_search(args, Path(tmp))
        wall = run_optimize(search, Path(tmp) / "out", args.backend)
        document = json.loads((Path(tmp) / "out" / "optimize.json").read_text())
    rows = stage_rows(document)
    print_table(rows, document, wall)
    load_end = os.getloadavg()
    print(f"load average (1 min) {load_start[0]:.2f} at the start, {load_end[0]:.2f} at the end; "
          f"{os.cpu_count()} CPUs")
    print("command: python benchmarks/bench_optimize.py " + " ".join(argv or sys.argv[1:]))
    if args.json:
        Path(args.json).write_text(json.dumps({"wall_seconds": wall, "stages": rows,
                                               "space": document["space"]}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
