"""Regenerate tests/data/reference-seed1-first8.json (run from the repository root)."""
import json

from mcrisk.backends import numpy as numpy_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

if __name__ == "__main__":
    plan = compile_scenario(load_scenario("scenarios/reference-2048.toml"))
    metrics, world, _ = numpy_backend.simulate_chunk(plan, 1, 0, 8)
    doc = {"source": "NumPy reference backend, scenarios/reference-2048.toml, seed 1, "
                     "scenarios 0..7",
           "strategies": list(plan.strategy_names), "quantities": list(plan.quantity_names),
           "metrics": metrics.tolist(), "world": world.tolist()}
    with open("tests/data/reference-seed1-first8.json", "w") as handle:
        json.dump(doc, handle, indent=1)
