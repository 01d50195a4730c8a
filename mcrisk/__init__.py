"""mcrisk: Monte Carlo risk engine for moving a live GPU cluster to a new GPU generation.

Stages, each in its own module: scenario (load and validate a TOML file into the frozen model)
-> compile (flat arrays) -> backends (sample worlds, schedule, per-scenario metrics)
-> simulate (chunked driver) -> aggregate (percentiles, confidence intervals, ranking)
-> report and cli.
"""

__version__ = "0.1.0"
