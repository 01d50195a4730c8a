"""Shared fixtures: the shipped scenarios compiled once, and a builder for tiny scenarios."""
from __future__ import annotations

from pathlib import Path

import pytest

from mcrisk.compile import compile_scenario
from mcrisk.scenario import load_scenario

ROOT = Path(__file__).resolve().parent.parent
SCENARIOS = ROOT / "scenarios"
REFERENCE = SCENARIOS / "reference-2048.toml"
MINIMAL = SCENARIOS / "minimal.toml"

# A tiny migration with fixed durations, so that every metric can be worked out by hand.
# Two air-cooled units E1, E2 (128 H100-eq each) in rows R1, R2; two liquid racks N1, N2
# (180 H100-eq each) arrive on day {arrival}; row R3 is empty at day 0.
TINY = """
[scenario]
name = "tiny"
horizon_days = 100

[demand]
points = {demand}
largest_job = 200

[[unit_types]]
id = "old"
gpus = 128
h100_eq_per_gpu = 1.0
power_kw = {old_kw}
cooling = "air"
island = "old-ib"
drain_days = 2
removal_days = {removal}

[[unit_types]]
id = "new"
gpus = 72
h100_eq_per_gpu = 2.5
power_kw = {new_kw}
cooling = "liquid"
island = "new-ib"
install_days = {install}

[unit_types.burn_in]
attempt_days = {attempt}
fail_first = {fail_first}
fail_retry = {fail_retry}
fix_days = {fix}
rma_after_failures = {rma_after}
rma_days = {rma}

[[islands]]
id = "old-ib"

[[islands]]
id = "new-ib"
delivery = {{ day = 15 }}
install_days = 3

[[halls]]
id = "H"
power_cap_kw = {cap_kw}
rows = [
  {{ id = "R1", cooling = "air", positions = 2 }},
  {{ id = "R2", cooling = "air", positions = 2 }},
  {{ id = "R3", cooling = "air", positions = 2 }},
]

[retrofit]
crews = {crews}
days = {retrofit}

[[existing]]
units = "E1..E2"
type = "old"
rows = "R1..R2"

[[incoming]]
units = "N1..N2"
type = "new"

[[shipments]]
id = "S1"
units = "N1..N2"
arrival = {{ day = {arrival}, delay = {delay} }}

{strategies}
"""

TINY_DEFAULTS = dict(
    demand="[[0, 256]]", old_kw=100, new_kw=100, removal=3, install=2, attempt=5,
    fail_first=0, fail_retry=0, fix=4, rma_after=3, rma=30, cap_kw=10000, crews=1,
    retrofit=10, arrival=20, delay=0,
    strategies="""
[[strategies]]
name = "swap-on-day"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 10 }]

[[strategies]]
name = "swap-gated"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N1" }, { units = "E2", on_accepted = "N2" }]
""")


@pytest.fixture
def tiny(tmp_path):
    """tiny(**overrides) -> path of a TINY scenario file with those template values."""
    counter = iter(range(10_000))

    def make(**overrides):
        values = {**TINY_DEFAULTS, **overrides}
        path = tmp_path / f"tiny-{next(counter)}.toml"
        path.write_text(TINY.format(**values))
        return path

    return make


@pytest.fixture(scope="session")
def reference_scenario():
    return load_scenario(str(REFERENCE.relative_to(ROOT)) if Path.cwd() == ROOT else REFERENCE)


@pytest.fixture(scope="session")
def reference_plan(reference_scenario):
    return compile_scenario(reference_scenario)


@pytest.fixture(scope="session")
def minimal_plan():
    return compile_scenario(load_scenario(MINIMAL))
