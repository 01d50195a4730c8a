"""The job mix in the kernels (issue 15 part 2): the packing rule against brute force, known
answers worked out by hand, the midpoint rule, and NumPy = Numba = host CUDA bit for bit.

docs/metrics.md states the rule: classes largest size first (ties: file order), each a fluid
share x D(t) of jobs of its size, the islands visited by descending free capacity (ties:
island order), each taking whole-job slots. Every expected value here is computed without the
code under test: an exhaustive search over whole-job assignments, a job-by-job loop of the
rule, or arithmetic by hand on scenarios whose capacity is known day by day.
"""
from __future__ import annotations

import collections
import itertools
import random
from types import SimpleNamespace

import numpy as np
import pytest

from mcrisk.backends.numba.metrics import pack_jobs as numba_pack_jobs
from mcrisk.backends.numpy.driver import simulate_chunk as numpy_chunk
from mcrisk.backends.numpy.metrics import pack_jobs
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import N_METRICS, job_columns

from ..helpers import load_text, problems
from ..parity import BIT_IDENTICAL_PLATFORM

pytestmark = pytest.mark.usefixtures("in_tmp")   # files are named x.toml in messages

# ---- the rule against brute force -----------------------------------------------------------


def optimum(sizes, counts, caps) -> int:
    """The most H100-eq of whole jobs (counts[j] jobs of sizes[j]) that fit in islands of
    capacities caps, a job never spanning islands: every assignment, exhaustively."""
    best = 0

    def place(j, room, placed):
        nonlocal best
        if j == len(sizes):
            best = max(best, placed)
            return
        # every way to spread up to counts[j] jobs of class j over the islands
        for split in itertools.product(*(range(r // sizes[j] + 1) for r in room)):
            if sum(split) <= counts[j]:
                place(j + 1, [r - k * sizes[j] for r, k in zip(room, split)],
                      placed + sum(split) * sizes[j])

    place(0, list(caps), 0)
    return best


def rule_job_by_job(sizes, counts, caps) -> int:
    """THE RULE, one whole job at a time: classes by size descending (ties: file order), for
    each the islands by free capacity descending (ties: island order), each island taking jobs
    while one fits and some are left."""
    free = list(caps)
    placed = 0
    for j in sorted(range(len(sizes)), key=lambda j: (-sizes[j], j)):
        left = counts[j]
        for i in sorted(range(len(free)), key=lambda i: (-free[i], i)):
            while left > 0 and free[i] >= sizes[j]:
                free[i] -= sizes[j]
                placed += sizes[j]
                left -= 1
    return placed


def packed(sizes, counts, caps) -> float:
    """The NumPy reference's pack_jobs on one instant: demand = the jobs' total, shares =
    each class's part of it."""
    demand = sum(g * k for g, k in zip(sizes, counts))
    plan = SimpleNamespace(
        job_size=np.array(sizes, dtype=float),
        job_share=np.array([g * k / demand for g, k in zip(sizes, counts)]),
        job_order=np.array(sorted(range(len(sizes)), key=lambda j: -sizes[j]), dtype=np.int32))
    return float(pack_jobs(plan, np.array([caps], dtype=float), np.array([float(demand)]))[0])


def random_case(rng: random.Random, divisible: bool):
    n_islands, n_classes = rng.randint(2, 3), rng.randint(2, 3)
    if divisible:       # each size divides the next larger one
        base = rng.randint(1, 3)
        sizes = [base * 2 ** rng.randint(0, 3) for _ in range(n_classes)]
    else:
        sizes = [rng.randint(1, 9) for _ in range(n_classes)]
    counts = [rng.randint(1, 4) for _ in range(n_classes)]
    caps = [rng.randint(0, 20) for _ in range(n_islands)]
    return sizes, counts, caps


def test_rule_never_beats_the_optimum_and_matches_it_job_by_job():
    rng = random.Random(15)
    for _ in range(300):
        sizes, counts, caps = random_case(rng, divisible=False)
        rule = rule_job_by_job(sizes, counts, caps)
        assert rule <= optimum(sizes, counts, caps)
        assert packed(sizes, counts, caps) == pytest.approx(rule, abs=1e-9), (sizes, counts, caps)


def test_rule_is_optimal_when_sizes_divide_each_other():
    rng = random.Random(16)
    for _ in range(300):
        sizes, counts, caps = random_case(rng, divisible=True)
        best = optimum(sizes, counts, caps)
        assert rule_job_by_job(sizes, counts, caps) == best, (sizes, counts, caps)
        assert packed(sizes, counts, caps) == pytest.approx(best, abs=1e-9)


def test_rule_can_miss_the_optimum_without_divisibility():
    # one 5-job and two 3-jobs into islands of 2 and 6: the rule puts the 5 into the 6 (the
    # larger), leaving 1 and 2, where no 3 fits: 5 placed; two 3s in the 6 would place 6
    sizes, counts, caps = [5, 3], [1, 2], [2, 6]
    assert rule_job_by_job(sizes, counts, caps) == 5
    assert optimum(sizes, counts, caps) == 6
    assert packed(sizes, counts, caps) == 5


# The fields of the plan that pack_jobs reads, as a record: both backends' pack_jobs take it
# (the Numba one as its plan record p, mcrisk/plan/record.py's KernelPlan).
JobFields = collections.namedtuple("JobFields", ["job_size", "job_share", "job_order"])


def test_numba_pack_jobs_equals_the_reference_bit_for_bit():
    rng = random.Random(17)
    for _ in range(200):
        sizes, counts, caps = random_case(rng, divisible=False)
        caps = [c * 1.37 for c in caps]          # non-integer capacities and demand
        demand = sum(g * k for g, k in zip(sizes, counts)) * 0.91
        shares = np.array([g * k for g, k in zip(sizes, counts)], dtype=float)
        plan = JobFields(job_size=np.array(sizes, dtype=float),
                         job_share=shares / shares.sum(),
                         job_order=np.array(sorted(range(len(sizes)), key=lambda j: -sizes[j]),
                                            dtype=np.int32))
        want = pack_jobs(plan, np.array([caps]), np.array([demand]))[0]
        got = numba_pack_jobs(plan, demand, np.array(caps), np.empty(len(caps)),
                              np.empty(len(caps), dtype=np.bool_))
        assert got == want


# ---- scenarios worked out by hand -----------------------------------------------------------

# Islands a and b hold E1 and E2 (100 H100-eq each) from day 0; N1 arrives after the horizon,
# so capacity is 100 + 100 for 100 days unless a strategy drains E2 on a day.
HAND = """
[scenario]
name = "jobs-by-hand"
horizon_days = 100

[demand]
{demand}
{jobs}

[[unit_types]]
id = "old-a"
gpus = 100
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "a"

[[unit_types]]
id = "old-b"
gpus = 100
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "b"

[[unit_types]]
id = "new"
gpus = 100
h100_eq_per_gpu = 1.0
power_kw = 10
cooling = "air"
island = "a"

[[islands]]
id = "a"

[[islands]]
id = "b"

[[halls]]
id = "H"
power_cap_kw = 1000
rows = [
  {{ id = "R1", cooling = "air", positions = 2 }},
  {{ id = "R2", cooling = "air", positions = 2 }},
  {{ id = "R3", cooling = "air", positions = 2 }},
]

[[existing]]
units = "E1..E2"
type = "old-a"
rows = "R1..R2"

[[incoming]]
units = "N1"
type = "new"

[[shipments]]
id = "S1"
units = "N1"
arrival = {{ day = 1000 }}

[[strategies]]
name = "hold"
place = [{{ units = "N1", row = "R3" }}]
drain = [{{ units = "E1..E2", on_accepted = "N1" }}]

[[strategies]]
name = "drain-b-day-10"
place = [{{ units = "N1", row = "R3" }}]
drain = [{{ units = "E1", on_accepted = "N1" }}, {{ units = "E2", day = 10 }}]
"""


def hand_text(jobs: str, demand: str = "points = [[0, 150]]", step: float | None = None):
    text = HAND.format(demand=demand + (f"\npacking_step_days = {step}" if step else ""),
                       jobs=jobs)
    # E2 is of type old-b (island b): the template lists E1..E2 as old-a, so split them
    return text.replace('units = "E1..E2"\ntype = "old-a"\nrows = "R1..R2"',
                        'units = "E1"\ntype = "old-a"\nrows = "R1"\n\n[[existing]]\n'
                        'units = "E2"\ntype = "old-b"\nrows = "R2"')


def job_table(*classes) -> str:
    return "\n".join(f'[[demand.jobs]]\nid = "{i}"\nsize = {g}\nshare = {s}\n'
                     for i, g, s in classes)


def run_numpy(text: str, samples: int = 2):
    plan = compile_scenario(load_text(text))
    metrics, _, _ = numpy_chunk(plan, 1, 0, samples)
    return plan, metrics


def test_a_big_class_no_island_holds_is_unservable_though_capacity_suffices():
    # demand 150 <= capacity 200; the big class (150, half of demand: 75) fits in neither
    # island of 100, the small class (size 1, 75) all fits: unservable 75 x 100 days
    plan, m = run_numpy(hand_text(job_table(("big", 150, 0.5), ("small", 1, 0.5))))
    assert plan.largest_job == 150          # omitted: the largest class size
    hold = m[0, 0]
    assert hold[2] == 0.0                   # no shortfall: capacity sufficed
    first = N_METRICS + plan.n_costs
    assert hold[first:].tolist() == [75 * 100, 100.0, 0.0]
    assert hold[3] == 100.0                 # homeless_days of largest_job, the same class


def test_two_islands_each_half_the_big_job_make_it_homeless_by_hand():
    # big = 200 needs one island of 200; a and b hold 100 each: homeless all 100 days, while
    # a 100 class fits; with E2 drained on day 10, a 150 class is homeless throughout and a
    # 100 class never (island a keeps its 100)
    plan, m = run_numpy(hand_text(job_table(("big", 200, 0.25), ("half", 100, 0.25),
                                            ("mid", 150, 0.5))))
    first = N_METRICS + plan.n_costs
    assert [c for c in job_columns(["big", "half", "mid"])] == [
        "unservable_gpu_days", "homeless_days.big", "homeless_days.half", "homeless_days.mid"]
    for s in range(2):
        assert m[0, s, first + 1:].tolist() == [100.0, 0.0, 100.0]


def test_midpoint_rule_is_exact_when_capacity_changes_on_cell_boundaries():
    # before day 10: big (100, 75 of demand 150) into a, small (30, 75) 3 slots of b: all
    # placed. From day 10 (E2 drains): big 75 into a, 25 left there holds no 30-job:
    # placed 75 of min(150, 100): unservable 25 a day for 90 days = 2250.
    jobs = job_table(("big", 100, 0.5), ("small", 30, 0.5))
    plan, m = run_numpy(hand_text(jobs, step=10))
    first = N_METRICS + plan.n_costs
    drained = m[0, 1]
    assert drained[1] == 90.0               # capacity below baseline from day 10: the premise
    assert drained[first] == 25 * 90
    assert m[0, 0, first] == 0.0            # "hold": nothing unservable
    # a step of 7 puts the change inside the cell [7, 14), counted whole from its midpoint
    # 10.5: 25 x 93, within the documented bound (jump 25) x h of the exact 2250
    _, m7 = run_numpy(hand_text(jobs, step=7))
    assert m7[0, 1, first] == 25 * 93
    assert abs(m7[0, 1, first] - 2250) <= 25 * 7


def test_unservable_follows_a_demand_curve_at_cell_midpoints():
    # demand rising 100 -> 200 over 100 days, one class of 60 (share 1): islands of 100 hold
    # one job each, 120 in all; unservable(t) = min(D, 200) - min(D, 120). With cells of 50
    # days the midpoints are 25 and 75: D = 125 and 175, unservable 5 and 55: 50 x 60 = 3000
    plan, m = run_numpy(hand_text(job_table(("only", 60, 1)),
                                  demand="points = [[0, 100], [100, 200]]", step=50))
    assert m[0, 0, N_METRICS + plan.n_costs] == 50 * 5 + 50 * 55


# ---- validation -----------------------------------------------------------------------------

@pytest.mark.parametrize("jobs, message", [
    (job_table(("a", 10, 0.5), ("b", 5, 0.4)),
     "demand.jobs: shares sum to 0.9, not 1 (give each class its share of demand, the shares "
     "adding up to 1)"),
    (job_table(("a", 10, 0.5), ("a", 5, 0.5)),
     "demand.jobs[1].id = 'a': duplicate job class id, also at demand.jobs[0].id"),
    (job_table(("a b", 10, 1)), "demand.jobs[0].id = 'a b': must be letters, digits"),
    (job_table(("a", 0, 1)), "demand.jobs[0].size = 0: must be > 0"),
    (job_table(("a", 10, 0)), "demand.jobs[0].share = 0: must be > 0"),
    ("jobs = []", "demand.jobs = []: is empty: a job mix has at least one class"),
])
def test_bad_job_mixes_are_located(jobs, message):
    found = problems(hand_text(jobs))
    assert any(message in p for p in found), found
    assert len(found) == 1, found           # and nothing else (largest_job may be omitted)


def test_largest_job_must_equal_the_largest_class_size():
    text = hand_text(job_table(("a", 10, 0.5), ("b", 5, 0.5))).replace(
        "points = [[0, 150]]", "points = [[0, 150]]\nlargest_job = 8")
    found = problems(text)
    assert any("demand.largest_job = 8: differs from the largest job class's size (10)" in p
               for p in found), found
    assert load_text(text.replace("largest_job = 8", "largest_job = 10")).demand.largest_job == 10


def test_bad_packing_step_is_located():
    found = problems(hand_text(job_table(("a", 10, 1)), step=-1))
    assert any("demand.packing_step_days = -1: must be > 0" in p for p in found), found
    # 100 days / 0.0009 = 111,112 cells, over the 100,000 a run may pack
    found = problems(hand_text(job_table(("a", 10, 1)), step=0.0009))
    assert found == ["x.toml: demand.packing_step_days = 0.0009: cuts the 100-day horizon into "
                     "111,112 cells, more than 100,000 (use at least 0.001 days: every cell "
                     "packs the job mix for every scenario and strategy)"]
    assert load_text(hand_text(job_table(("a", 10, 1)), step=0.001)).demand.jobs
    # without a mix the step is not used, so not checked; a bad horizon is [scenario]'s
    assert load_text(hand_text("largest_job = 10", step=0.0009)).demand.jobs == ()
    found = problems(hand_text(job_table(("a", 10, 1)), step=0.0009).replace(
        "horizon_days = 100", "horizon_days = 1e308"))
    assert len(found) == 1 and "scenario.horizon_days = 1e+308" in found[0], found


# ---- every backend bit for bit --------------------------------------------------------------

FORECAST = ('forecast = { workload_at_day0 = 150, growth_per_year = { dist = "uniform", '
            'min = 0, max = 3 }, points_every_days = 30 }')


def mixed_text(demand: str) -> str:
    """A mix of three classes (a tie in size, to test file order) on `demand`, with N1's
    arrival and install drawn (E1 drains on its acceptance), and a packing step that does not
    divide the horizon."""
    text = hand_text(job_table(("x", 60, 0.3), ("y", 150, 0.2), ("z", 60, 0.5)),
                     demand=demand, step=3.3)
    return (text.replace("arrival = { day = 1000 }",
                         'arrival = { day = 40, delay = { dist = "uniform", min = 0, max = 50 } }')
                .replace('island = "a"\n\n[[islands]]', 'island = "a"\ninstall_days = '
                         '{ dist = "uniform", min = 0, max = 20 }\n\n[[islands]]'))


# a forecast (demand changes in every cell), and a fixed curve flat after day 40 (the kernels
# then reuse a cell's packing for the next: a shortcut the reference does not take)
@pytest.mark.skipif(not BIT_IDENTICAL_PLATFORM, reason="bit parity is measured on x86-64 glibc")
@pytest.mark.parametrize("demand", [FORECAST, "points = [[0, 150], [40, 170]]"])
def test_numpy_numba_and_host_cuda_agree_bit_for_bit_on_a_mix(host, demand):
    from mcrisk.backends.numba.driver import simulate_chunk as numba_chunk

    plan = compile_scenario(load_text(mixed_text(demand)))
    assert plan.n_job_cols == 4 and plan.job_order.tolist() == [1, 0, 2]
    reference, world, _ = numpy_chunk(plan, 5, 3, 150)
    first = N_METRICS + plan.n_costs
    assert reference.shape[2] == first + 4
    assert np.ptp(reference[:, :, first], axis=0).max() > 0     # unservable varies
    assert (reference[:, :, first + 2] == 100).all()            # y (150) fits nowhere
    assert np.ptp(world, axis=0).max() > 0          # the delays (and growth) are drawn
    for chunk in (numba_chunk, host.simulate_chunk):
        metrics, _, _ = chunk(plan, 5, 3, 150)
        np.testing.assert_array_equal(metrics, reference)


def test_without_a_mix_the_plan_and_output_keep_their_width(reference_plan):
    assert reference_plan.n_job_cols == 0
    metrics, _, _ = numpy_chunk(reference_plan, 1, 0, 2)
    assert metrics.shape[2] == N_METRICS + reference_plan.n_costs
