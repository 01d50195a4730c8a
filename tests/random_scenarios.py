"""A generator of small random scenario files that validate and cannot deadlock.

The parity tests (tests/backends/test_cuda_host.py, test_backends.py, test_cuda.py, the
cost parity tests) run every backend on these: crews chained through gated drains, several
crews, ramps, risks, every distribution kind. tests/backends/test_cuda_host.py checks that,
over its cases, the generator reaches every feature it is meant to exercise.
"""
from __future__ import annotations

import random


def random_scenario_text(seed: int) -> str:
    """A small random scenario file that validates and cannot deadlock.

    Random counts of halls, rows, islands, unit types, units and shipments; every distribution
    kind; drains on days, arrivals and acceptances; uncertain performance, ramps and a risk
    register (some risks enabled). Deadlocks are avoided by construction: a
    drain waits only for the acceptance of units placed in rows that hold no existing unit.
    """
    g = random.Random(seed)
    out: list[str] = []
    shared = [f"v{k}" for k in range(g.randint(0, 2))]

    def number(lo: float, hi: float) -> float:
        return round(g.uniform(lo, hi), 2)

    def dist(inner: bool = False) -> str:
        kind = g.choice(["bare", "fixed", "uniform", "triangular", "pert", "lognormal"]
                        + ([] if inner else ["chance", "chance"]))
        low = number(0, 10)
        if kind == "bare":
            return str(low)
        if kind == "fixed":
            return f'{{ dist = "fixed", value = {low} }}'
        high = round(low + number(0.5, 30), 2)
        if kind == "uniform":
            return f'{{ dist = "uniform", min = {low}, max = {high} }}'
        mode = g.choice([low, high, number(low, high)])
        if kind == "triangular":
            return f'{{ dist = "triangular", min = {low}, mode = {mode}, max = {high} }}'
        if kind == "pert":
            lam = f", lambda = {number(0.5, 8)}" if g.random() < 0.5 else ""
            return f'{{ dist = "pert", min = {low}, mode = {mode}, max = {high}{lam} }}'
        if kind == "lognormal":
            median = number(0.5, 20)
            return f'{{ dist = "lognormal", median = {median}, p90 = {round(median * number(1.1, 5), 2)} }}'
        return f'{{ dist = "chance", p = {g.choice([0, 1, number(0, 1)])}, then = {dist(inner=True)} }}'

    def date() -> str:
        names = g.sample(shared, g.randint(0, len(shared)))
        extra = f", shared = {ids(names)}" if names else ""
        delay = f", delay = {dist()}" if g.random() < 0.8 else ""
        return f"{{ day = {number(0, 120)}{delay}{extra} }}"

    def ids(items) -> str:
        return "[" + ", ".join(f'"{i}"' for i in items) + "]"

    points, day = [], 0.0
    for _ in range(g.randint(1, 4)):
        points.append(f"[{day}, {number(0, 1500)}]")
        day = round(day + number(1, 200), 2)
    out += ["[scenario]", f'name = "random-{seed}"', f"horizon_days = {number(60, 600)}", "",
            "[demand]", f"points = [{', '.join(points)}]", f"largest_job = {number(0, 400)}", ""]
    if shared:
        out += ["[shared_delays]"] + [f"{n} = {dist()}" for n in shared] + [""]
    islands = [f"ib{k}" for k in range(g.randint(1, 3))]
    for k, island in enumerate(islands):
        out += ["[[islands]]", f'id = "{island}"']
        if k > 0 and g.random() < 0.7:
            out += [f"delivery = {date()}", f"install_days = {dist()}"]
        out += [""]
    old_types = [f"old{k}" for k in range(g.randint(1, 2))]
    new_types = [f"new{k}" for k in range(g.randint(1, 2))]
    for t in old_types + new_types:
        performance = g.choice([0.5, 1.0, 2.5])
        if t.startswith("new") and g.random() < 0.4:      # uncertain: drawn per scenario
            performance = g.choice(['{ dist = "uniform", min = 1.5, max = 3 }',
                                    '{ dist = "triangular", min = 2, mode = 2.5, max = 2.6 }',
                                    '{ dist = "lognormal", median = 2.4, p90 = 2.7 }'])
        out += ["[[unit_types]]", f'id = "{t}"', f"gpus = {g.randint(8, 256)}",
                f"h100_eq_per_gpu = {performance}",
                f"power_kw = {number(5, 400)}",
                f'cooling = "{"air" if t.startswith("old") else g.choice(["air", "liquid", "liquid"])}"',
                f'island = "{g.choice(islands)}"']
        if t.startswith("old"):
            out += [f"drain_days = {dist()}", f"removal_days = {dist()}", ""]
            continue
        out += [f"install_days = {dist()}"]
        if g.random() < 0.4:
            out += [f"ramp = {{ start_fraction = {number(0, 1)}, days = {number(1, 90)}, "
                    f"steps = {g.randint(1, 5)} }}"]
        out += [""]
        if g.random() < 0.75:
            rma_after = g.randint(1, 4)
            out += ["[unit_types.burn_in]", f"attempt_days = {dist()}",
                    f"fail_first = {number(0, 0.8)}", f"fail_retry = {number(0, 0.8)}",
                    f"fix_days = {dist()}", f"rma_after_failures = {rma_after}",
                    f"rma_days = {dist()}", ""]
    n_existing, n_incoming = g.randint(1, 6), g.randint(1, 8)
    rows: list[tuple[str, str, int]] = []          # (row, hall, positions)
    halls = [f"H{k}" for k in range(g.randint(1, 2))]
    for h, hall in enumerate(halls):
        hall_rows = [(f"R{h}{k}", g.choice(["air", "air", "liquid"]), g.randint(0, 4))
                     for k in range(g.randint(1, 4))]
        if h == len(halls) - 1:                     # room for every new unit, once empty
            hall_rows.append((f"R{h}x", g.choice(["air", "liquid"]), n_incoming))
        rows += [(r, hall, p) for r, _, p in hall_rows]
        cap = number(100, 3000) if g.random() < 0.5 else 100000
        energized = f"energized = {date()}" if g.random() < 0.4 else ""
        out += ["[[halls]]", f'id = "{hall}"', f"power_cap_kw = {cap}", energized, "rows = ["]
        out += [f'  {{ id = "{r}", cooling = "{c}", positions = {p} }},' for r, c, p in hall_rows]
        out += ["]", ""]
    out += ["[retrofit]", f"crews = {g.randint(1, 3)}", f"days = {dist()}", ""]
    row_of_existing = {f"E{k}": g.choice(rows)[0] for k in range(n_existing)}
    for unit, row in row_of_existing.items():
        out += ["[[existing]]", f'units = "{unit}"', f'type = "{g.choice(old_types)}"',
                f'rows = "{row}"', ""]
    incoming = [f"N{k}" for k in range(n_incoming)]
    for unit in incoming:
        out += ["[[incoming]]", f'units = "{unit}"', f'type = "{g.choice(new_types)}"', ""]
    n_shipments = g.randint(1, min(3, n_incoming))
    cuts = sorted(g.sample(range(1, n_incoming), n_shipments - 1))
    shipments = {f"S{k}": incoming[a:b] for k, (a, b) in
                 enumerate(zip([0] + cuts, cuts + [n_incoming]))}
    for ship, units in shipments.items():
        out += ["[[shipments]]", f'id = "{ship}"', f"units = {ids(units)}",
                f"arrival = {date()}", ""]
    occupied = set(row_of_existing.values())
    for s in range(g.randint(1, 4)):
        free = {r: p for r, _, p in rows}
        placement = []
        for unit in incoming:
            row = g.choice([r for r, p in free.items() if p > 0])
            free[row] -= 1
            placement.append((unit, row))
        safe = [u for u, r in placement if r not in occupied]
        out += ["[[strategies]]", f'name = "strategy-{s}"', "place = ["]
        out += [f'  {{ units = "{u}", row = "{r}" }},' for u, r in placement]
        out += ["]", "drain = ["]
        for unit in row_of_existing:
            trigger = []
            if g.random() < 0.5 or not safe:
                trigger.append(f"day = {number(0, 150)}")
            if g.random() < 0.4:
                trigger.append(f"on_arrival = {ids(g.sample(list(shipments), 1))}")
            if safe and (g.random() < 0.5 or not trigger):
                trigger.append(f"on_accepted = {ids(g.sample(safe, g.randint(1, len(safe))))}")
            if g.random() < 0.3:
                trigger.append(f"lag_days = {number(0, 10)}")
            out += [f'  {{ units = "{unit}", {", ".join(trigger)} }},']
        out += ["]", ""]
    targets = (["retrofit", "install", "removal", "burn_in", "arrival"]
               + [f"{kind}:{ident}" for kind, idents in (
                   ("retrofit", [r for r, _, _ in rows]), ("install", incoming),
                   ("burn_in", incoming), ("removal", list(row_of_existing)),
                   ("arrival", list(shipments)), ("energized", halls), ("fabric", islands))
                  for ident in idents])
    for k in range(g.randint(0, 3)):
        out += ["[[risks]]", f'id = "risk-{k}"', f"probability = {g.choice([1, number(0, 1)])}",
                f"impact = {dist(inner=True)}",
                f"applies_to = {ids(g.sample(targets, g.randint(1, 3)))}",
                f"enabled = {g.choice(['true', 'true', 'false'])}", ""]
    return "\n".join(out) + "\n"
