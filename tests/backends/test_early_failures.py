"""Failures after acceptance, acceptance (soak) policies and attrition (issue 15, part 3).

Checked against hand calculations on the tiny scenario (tests/conftest.py's TINY: two old
units E1, E2 of 128 H100-eq, two new racks N1, N2 of 180 H100-eq accepted on day 27 when
burn-in passes first time, demand flat at 256 = the baseline, a 100-day horizon), against a
slow obvious recomputation of the soak and outage quantities from each world's burn-in
attempts and draws, against binomial intervals for the early-failure frequency, and across
backends bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk.results import binomial
from mcrisk.backends import numba as numba_backend
from mcrisk.backends import numpy as numpy_backend
from mcrisk.backends.numpy.world import sample_world
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.definitions import METRICS
from mcrisk.scenario import load_scenario

from ..conftest import TINY, TINY_DEFAULTS
from ..helpers import problems
from ..parity import assert_parity

SWAP_GATED = """
[[strategies]]
name = "swap-gated"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N1" }, { units = "E2", on_accepted = "N2" }]
"""
SWAP_ON_DAY = """
[[strategies]]
name = "swap-on-day"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1..E2", day = 10 }]
"""
SOAK = """
[[strategies]]
name = "soak"
place = [{ units = "N1..N2", row = "R3" }]
drain = [{ units = "E1", on_accepted = "N1" }, { units = "E2", on_accepted = "N2" }]
acceptance = { soak_after_failures = 1, soak_days = { dist = "uniform", min = 3, max = 12 } }
"""


def tiny_text(strategies: str, old: str = "", new: str = "", **values) -> str:
    """TINY with `old` added to the old unit type's table and `new` to the new one's."""
    text = TINY.format(**{**TINY_DEFAULTS, **values, "strategies": strategies})
    text = text.replace('removal_days = {}\n'.format(values.get("removal", 3)),
                        'removal_days = {}\n{}\n'.format(values.get("removal", 3), old), 1)
    return text.replace("[unit_types.burn_in]", new + "\n[unit_types.burn_in]", 1)


def plan_of(tmp_path, text: str, name: str = "x.toml"):
    path = tmp_path / name
    path.write_text(text)
    return compile_scenario(load_scenario(path))


def metric(metrics: np.ndarray, s: int, name: str) -> np.ndarray:
    return metrics[:, s, METRICS.index(name)]


def attrition(rate: float, gpus: int, days: float) -> str:
    return (f"[unit_types.attrition]\ninterruptions_per_gpu_day = {rate}\n"
            f"gpus_per_interruption = {gpus}\ndays_out = {days}\n")


def early(chance, after, age, repair) -> str:
    return (f"[unit_types.early_failures]\nchance = {chance}\n"
            f"chance_after_burnin_failure = {after}\nage_days = {age}\nrepair_days = {repair}\n")


# ---- (1) attrition: the usable share scales the baseline and every capacity --------------------

def test_attrition_scales_capacity_by_the_usable_share(backend, tmp_path):
    # a = 1 - 1e-3 x 8 GPUs x 5 days = 0.96 on both types. swap-on-day: both old units drain
    # at day 10, the racks come on day 27: capacity 0 on days 10-27 with or without attrition;
    # the trough is the baseline (256 a), the shortfall against demand 256 is 256 (1 - a) on
    # days 0-10, 256 on days 10-27, and none after (360 a = 345.6 > 256).
    a = 1 - 1e-3 * 8 * 5
    plain = plan_of(tmp_path, tiny_text(SWAP_ON_DAY), "plain.toml")
    worn = plan_of(tmp_path, tiny_text(SWAP_ON_DAY, old=attrition(1e-3, 8, 5),
                                       new=attrition(1e-3, 8, 5)), "worn.toml")
    assert worn.baseline == pytest.approx(a * plain.baseline, rel=1e-15)
    np.testing.assert_allclose(worn.cap_event_delta, a * plain.cap_event_delta, rtol=1e-15)
    metrics = backend.simulate_chunk(worn, 5, 0, 8)[0]
    base = backend.simulate_chunk(plain, 5, 0, 8)[0]
    np.testing.assert_allclose(metric(metrics, 0, "trough_depth"),
                               a * metric(base, 0, "trough_depth"), rtol=1e-12)
    np.testing.assert_allclose(metric(metrics, 0, "trough_depth"), 256 * a, rtol=1e-12)
    np.testing.assert_allclose(metric(metrics, 0, "shortfall_gpu_days"),
                               256 * (1 - a) * 10 + 256 * 17, rtol=1e-12)


def test_attrition_that_takes_half_a_fleet_out_is_refused(tmp_path):
    text = tiny_text(SWAP_ON_DAY, old=attrition(0.05, 8, 3))
    assert any("unit_types[0].attrition.interruptions_per_gpu_day = 0.05: leaves a usable "
               "share of -0.2" in p and "must be above 0.5" in p and "per GPU-day" in p
               for p in problems(text, str(tmp_path / "x.toml")))


# ---- (2) Q_EARLY: the chance that applies, by burn-in history ----------------------------------

def test_early_failure_frequency_follows_the_burn_in_history(tmp_path):
    plan = plan_of(tmp_path, tiny_text(SWAP_GATED, new=early(0.2, 0.5, 10, 5), fail_first=0.4,
                                       fail_retry=0.2))
    world = sample_world(plan, 17, 0, 6000)
    for unit in ("N1", "N2"):
        x = world[:, plan.quantity_names.index(f"unit.{unit}.early_failure")]
        attempts = world[:, plan.quantity_names.index(f"unit.{unit}.burn_in.attempts")]
        assert set(np.unique(x)) == {10.0, np.inf}          # the fixed age, or none
        for passed_first, chance in ((True, 0.2), (False, 0.5)):
            group = (attempts == 1) == passed_first
            n, k = int(group.sum()), int(np.isfinite(x[group]).sum())
            assert n > 1000
            # two-sided 1e-4 test: k within the binomial's central interval
            assert binomial.cdf(k, n, chance) > 5e-5 and binomial.sf(k - 1, n, chance) > 5e-5


# ---- (3) Q_SOAK and Q_OUT against an obvious recomputation --------------------------------------

def obvious_soak_and_out(attempts, x, s, r, n_failures):
    """The brief's rule, one scenario at a time."""
    soak, out = [], []
    for a, xi, si, ri in zip(attempts, x, s, r):
        if a - 1 < n_failures:
            soak.append(0.0)
            out.append(xi)
        elif xi < si:
            soak.append(si + ri)
            out.append(np.inf)
        else:
            soak.append(si)
            out.append(xi - si)
    return np.array(soak), np.array(out)


def test_soak_and_outage_quantities_follow_the_rule(tmp_path):
    text = tiny_text(SWAP_GATED + SOAK.replace("soak_after_failures = 1", "soak_after_failures = 2"),
                     new=early(0.3, 0.7, '{ dist = "uniform", min = 0, max = 20 }',
                               '{ dist = "uniform", min = 1, max = 9 }'),
                     fail_first=0.6, fail_retry=0.5)
    plan = plan_of(tmp_path, text)
    world = sample_world(plan, 23, 0, 4000)
    column = {name: world[:, q] for q, name in enumerate(plan.quantity_names)}
    for unit in ("N1", "N2"):
        soak, out = obvious_soak_and_out(column[f"unit.{unit}.burn_in.attempts"],
                                         column[f"unit.{unit}.early_failure"],
                                         column[f"unit.{unit}.soak_days"],
                                         column[f"unit.{unit}.early_failure.repair"], 2)
        np.testing.assert_array_equal(column[f"unit.{unit}.acceptance0.soak"], soak)
        np.testing.assert_array_equal(column[f"unit.{unit}.acceptance0.out"], out)
        # every branch is taken
        assert (soak == 0).any() and np.isinf(out[soak > 0]).any() \
            and np.isfinite(out[soak > 0]).any()


# ---- (4) the outage by hand ---------------------------------------------------------------------

@pytest.mark.parametrize("ramp, trough_days, shortfall", [
    # no ramp: both racks fail at age 10 (day 37), back on day 42; E1 and E2 left on day 27:
    # nothing in service on days 37-42
    ("", 5.0, 256 * 5.0),
    # ramp 0.5 over 20 days in 2 steps: each rack gives 90 at day 27, +45 at day 37 and day 47.
    # Days 27-37: 180 (76 short); 37-42: the outage takes all 270 out; from 42: 270 >= 256
    ("[unit_types.ramp]\nstart_fraction = 0.5\ndays = 20\nsteps = 2\n", 15.0,
     76 * 10.0 + 256 * 5.0),
])
def test_a_certain_early_failure_takes_the_unit_out_for_its_repair(backend, tmp_path, ramp,
                                                                   trough_days, shortfall):
    plan = plan_of(tmp_path, tiny_text(SWAP_GATED, new=early(1, 1, 10, 5) + ramp))
    metrics = backend.simulate_chunk(plan, 5, 0, 8)[0]
    assert (metric(metrics, 0, "trough_depth") == 256).all()
    np.testing.assert_allclose(metric(metrics, 0, "trough_days"), trough_days, rtol=1e-12)
    np.testing.assert_allclose(metric(metrics, 0, "shortfall_gpu_days"), shortfall, rtol=1e-12)
    assert (metric(metrics, 0, "completion_day") == 32).all()   # removals end day 32


# ---- (5) paired policies -----------------------------------------------------------------------

def test_the_soak_policy_is_paired_with_first_pass_on_the_same_worlds(tmp_path):
    plan = plan_of(tmp_path, tiny_text(SWAP_GATED + SOAK, new=early(0.3, 0.8, '{ dist = "uniform", min = 0, max = 20 }', 5),
                                       fail_first=0.5, fail_retry=0.3))
    _, world, nodes = numba_backend.simulate_chunk(plan, 31, 0, 3000, keep_nodes=True)
    first_pass, soak = 0, 1
    for unit in ("N1", "N2"):
        accepted = plan.node_names.index(f"{unit} accepted")
        out = plan.node_names.index(f"{unit} fails early")
        added = world[:, plan.quantity_names.index(f"unit.{unit}.acceptance0.soak")]
        np.testing.assert_array_equal(nodes[:, soak, accepted],
                                      nodes[:, first_pass, accepted] + added)
        soaked = added > 0
        assert soaked.any() and (~soaked).any()
        outage = np.isfinite(nodes[:, soak, out])
        assert outage.any()
        assert np.isfinite(nodes[outage, first_pass, out]).all()
        # a soak catches a failure due within it: fewer outages after acceptance
        assert outage.sum() < np.isfinite(nodes[:, first_pass, out]).sum()


# ---- (6) backends bit for bit ------------------------------------------------------------------

@pytest.fixture
def failures_plan(tmp_path):
    ramp = "[unit_types.ramp]\nstart_fraction = 0.6\ndays = 30\nsteps = 3\n"
    return plan_of(tmp_path, tiny_text(
        SWAP_GATED + SWAP_ON_DAY + SOAK, old=attrition(4.7e-4, 8, 3),
        new=attrition(1e-3, 8, 2) + ramp + early(
            0.2, 0.5, '{ dist = "lognormal", median = 10, p90 = 40 }',
            '{ dist = "triangular", min = 2, mode = 5, max = 21 }'),
        fail_first=0.4, fail_retry=0.2, delay='{ dist = "uniform", min = 0, max = 10 }'))


def test_numba_matches_numpy_with_failures(failures_plan):
    assert_parity(numba_backend.simulate_chunk(failures_plan, 11, 1000, 300, keep_nodes=True),
                  numpy_backend.simulate_chunk(failures_plan, 11, 1000, 300, keep_nodes=True),
                  ("numba", "numpy"), failures_plan)


def test_cuda_host_matches_numba_with_failures(host, failures_plan):
    assert_parity(host.simulate_chunk(failures_plan, 3, 0, 1000, keep_nodes=True),
                  numba_backend.simulate_chunk(failures_plan, 3, 0, 1000, keep_nodes=True),
                  ("cuda-host", "numba"), failures_plan)


# ---- validation --------------------------------------------------------------------------------

@pytest.mark.parametrize("old, new, strategies, expected", [
    ("", early(0.3, 0.1, 10, 5), SWAP_GATED,
     "unit_types[1].early_failures.chance_after_burnin_failure = 0.1: must be at least chance"),
    ("", early(1.5, 1.5, 10, 5), SWAP_GATED, "unit_types[1].early_failures.chance = 1.5: must "
     "be a probability in [0, 1]"),
    ("", early(0.1, 0.2, 10, 5) + "colour = 1\n", SWAP_GATED,
     "unit_types[1].early_failures.colour = 1: unknown key"),
    (early(0.1, 0.2, 10, 5), "", SWAP_GATED,
     "existing[0].type = 'old': early_failures are failures after acceptance"),
    ("", "", SOAK.replace("soak_after_failures = 1", "soak_after_failures = 0"),
     "strategies[0].acceptance.soak_after_failures = 0: must be >= 1"),
    ("", "", SOAK.replace("soak_after_failures = 1", "soak_after_failures = 1.5"),
     "strategies[0].acceptance.soak_after_failures = 1.5: must be a whole number"),
])
def test_bad_failure_keys_are_reported_where_they_are(tmp_path, old, new, strategies, expected):
    found = problems(tiny_text(strategies, old=old, new=new), str(tmp_path / "x.toml"))
    assert any(expected in p for p in found), found


def test_a_soak_that_can_never_start_is_refused(tmp_path):
    text = tiny_text(SOAK).replace("[unit_types.burn_in]", "[unit_types.unused]", 1)
    text = text.split("[unit_types.unused]")[0] + "\n[[islands]]" + \
        text.split("[[islands]]", 1)[1]
    found = problems(text, str(tmp_path / "x.toml"))
    assert any("strategies[0].acceptance" in p and "the soak can never start" in p
               for p in found), found


def test_policies_with_other_soak_days_share_each_units_draws(tmp_path):
    # soak_days uniform(3, 12) and uniform(6, 24) at one address per unit: the second is
    # twice the first in every world (6 + 18 u = 2 (3 + 9 u)), so the policies are paired
    longer = SOAK.replace('"soak"', '"soak-longer"').replace("min = 3, max = 12",
                                                             "min = 6, max = 24")
    plan = plan_of(tmp_path, tiny_text(SWAP_GATED + SOAK + longer, new=early(0.3, 0.8, 15, 5),
                                       fail_first=0.5))
    world = sample_world(plan, 3, 0, 500)
    for unit in ("N1", "N2"):
        short = world[:, plan.quantity_names.index(f"unit.{unit}.soak_days")]
        long_ = world[:, plan.quantity_names.index(f"unit.{unit}.soak_days.1")]
        np.testing.assert_allclose(long_, 2 * short, rtol=1e-14)
        assert len(np.unique(short)) > 400


# ---- drivers: whether a unit fails after acceptance, and how many do --------------------------

def test_an_early_failure_is_a_driver_as_fails_or_not(failures_plan):
    # The quantity is a service age, +inf where the unit does not fail: as a driver input it
    # reads 1 (fails) or 0, and the group over units counts the failures, so summary.json's
    # driver means stay finite (JSON has no Infinity).
    from mcrisk.results.drivers import driver_inputs
    world = sample_world(failures_plan, 5, 0, 400)
    names, labels, values = driver_inputs(failures_plan, world)
    ages = {u: world[:, failures_plan.quantity_names.index(f"unit.{u}.early_failure")]
            for u in ("N1", "N2")}
    for unit, age in ages.items():
        column = values[:, names.index(f"unit.{unit}.early_failure")]
        np.testing.assert_array_equal(column, np.isfinite(age).astype(float))
        assert labels[names.index(f"unit.{unit}.early_failure")] == \
            f"{unit} fails after acceptance (1: yes, 0: no)"
    count = values[:, names.index("unit.*.early_failure")]
    np.testing.assert_array_equal(count, np.isfinite(ages["N1"]).astype(int)
                                  + np.isfinite(ages["N2"]).astype(int))
    assert np.isfinite(values).all()
    assert "repair days after an early failure of every unit (sum over 2)" in labels
