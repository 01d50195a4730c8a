"""mcrisk: Monte Carlo risk engine for moving a live GPU cluster to a new GPU generation.

Floors, each importing only its own or lower ones (tests/test_layers.py): foundation
(definitions, rng, distributions, model, errors, outputs) -> scenario/ (load and validate a
TOML file) -> compile (plan.py's one table of flat arrays; world.py) -> backends/ (numpy,
numba, cuda, cuda-host: sample worlds, schedule, per-scenario metrics) -> simulate (chunked
driver) -> results (aggregate, milestones, analysis/) -> report/ -> the application layer
(run, nightly, precision_run, mitigation_run, compare_run, schedule_run) -> cli/.
"""

__version__ = "0.1.0"
