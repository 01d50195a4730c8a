"""Risk register, uncertain performance and software-maturity ramp, against hand calculations."""
import numpy as np
import pytest

from mcrisk.backends import numba as numba_backend
from mcrisk.backends import numpy as numpy_backend
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.risks import select_risks
from mcrisk.core.definitions import METRICS
from mcrisk.core.errors import ScenarioError
from mcrisk.scenario import load_scenario

from ..conftest import REFERENCE

BACKENDS = [pytest.param(numpy_backend, id="numpy"), pytest.param(numba_backend, id="numba")]
M = {name: k for k, name in enumerate(METRICS)}

RISK = """
[[risks]]
id = "cdu-recall"
probability = {p}
impact = {impact}
applies_to = {targets}
"""


def with_risk(tiny, p, impact="14", targets='["retrofit"]', **overrides):
    path = tiny(**overrides)
    path.write_text(path.read_text() + RISK.format(p=p, impact=impact, targets=targets))
    return path


def metrics_of(path, backend, samples=1, mode="file"):
    plan = compile_scenario(select_risks(load_scenario(path), mode))
    metrics, world, _ = backend.simulate_chunk(plan, 1, 0, samples)
    return plan, metrics, world


@pytest.mark.parametrize("backend", BACKENDS)
def test_risk_with_p0_changes_nothing_and_p1_shifts_by_its_impact(tiny, backend):
    # reuse-rows: E1 drains at 0, E2 at 1; one crew retrofits R1 (5..15) then R2 (15..25);
    # N2 installs at 25 and is accepted at 32. A retrofit risk of +14 days hits both rows:
    # R1 5..29, R2 29..53, N2 accepted at 60.
    strategies = """
[[strategies]]
name = "reuse-rows"
place = [{ units = "N1", row = "R1" }, { units = "N2", row = "R2" }]
drain = [{ units = "E1", day = 0 }, { units = "E2", day = 1 }]
"""
    _, base, _ = metrics_of(tiny(strategies=strategies), backend)
    _, never, _ = metrics_of(with_risk(tiny, 0, strategies=strategies), backend, samples=50)
    _, always, _ = metrics_of(with_risk(tiny, 1, strategies=strategies), backend)
    np.testing.assert_array_equal(never, np.repeat(base, 50, axis=0))
    assert base[0, 0, M["completion_day"]] == 32.0
    assert always[0, 0, M["completion_day"]] == 60.0


@pytest.mark.parametrize("backend", BACKENDS)
def test_risk_on_one_shipment_moves_only_that_date(tiny, backend):
    path = with_risk(tiny, 1, impact="90", targets='["arrival:S1"]')
    plan, metrics, world = metrics_of(path, backend)
    arrival = world[0, plan.quantity_names.index("shipment.S1.arrival")]
    assert arrival == 20 + 90
    # swap-on-day: trough from 10 until acceptance at 110 + 7 = 117, cut at the horizon (100)
    s = plan.strategy_names.index("swap-on-day")
    assert metrics[0, s, M["trough_days"]] == 90.0


def test_risk_occurs_with_its_probability_and_is_shared_by_targets(tiny):
    path = with_risk(tiny, 0.3, impact='{ dist = "uniform", min = 10, max = 20 }',
                     targets='["install"]')
    plan, _, world = metrics_of(path, numba_backend, samples=20_000)
    risk = world[:, plan.quantity_names.index("risk.cdu-recall")]
    assert np.mean(risk > 0) == pytest.approx(0.3, abs=0.015)
    assert risk[risk > 0].min() >= 10 and risk.max() <= 20
    n1 = world[:, plan.quantity_names.index("unit.N1.install.with_risks")]
    n2 = world[:, plan.quantity_names.index("unit.N2.install.with_risks")]
    np.testing.assert_allclose(n1, 2 + risk, rtol=1e-15)   # install is fixed at 2 days
    np.testing.assert_allclose(n2, 2 + risk, rtol=1e-15)   # one draw, every target


def test_risk_modes_and_common_random_numbers(tmp_path):
    scenario = load_scenario(REFERENCE)
    assert {r.id for r in scenario.risks} >= {"cdu-recall", "utility-slip", "allocation-cut"}
    assert not any(r.enabled for r in scenario.risks)     # the contract's numbers by default
    off = compile_scenario(select_risks(scenario, "file"))
    pre = compile_scenario(select_risks(scenario, "pre"))
    post = compile_scenario(select_risks(scenario, "post"))
    m_off, _, _ = numba_backend.simulate_chunk(off, 1, 0, 4000)
    m_pre, _, _ = numba_backend.simulate_chunk(pre, 1, 0, 4000)
    m_post, _, _ = numba_backend.simulate_chunk(post, 1, 0, 4000)
    done = M["completion_day"]
    # risks delay on average, mitigation removes part of it. Not scenario by scenario: a
    # later-emptying row can reorder the crew's queue and finish sooner (a Graham anomaly).
    assert m_pre[:, :, done].mean() > m_post[:, :, done].mean() > m_off[:, :, done].mean()
    same = np.isclose(m_pre, m_off).all(axis=(1, 2))
    assert 0.4 < same.mean() < 0.9           # scenarios where no risk fired are identical
    with pytest.raises(ValueError, match="unknown risk ids"):
        select_risks(scenario, "pre", disable=("nope",))
    only = compile_scenario(select_risks(scenario, "pre", disable=("cdu-recall",)))
    assert "risk.cdu-recall" not in only.quantity_names


@pytest.mark.parametrize("backend", BACKENDS)
def test_uncertain_performance_scales_new_capacity(tiny, backend):
    # swap-gated: both racks accepted at 27 as both old units drain, so C = 144 x perf from
    # then on. perf ~ Uniform(1, 3): depth = max(0, 256 - 144 perf), whose mean is
    # 0.5 * integral_1^(16/9) (256 - 144 u) du = 0.5 * (227.556 - 184) = 21.778.
    path = tiny()
    path.write_text(path.read_text().replace(
        "h100_eq_per_gpu = 2.5", 'h100_eq_per_gpu = { dist = "uniform", min = 1, max = 3 }'))
    plan = compile_scenario(load_scenario(path))
    samples = 40_000 if backend is numba_backend else 10_000
    metrics, world, _ = backend.simulate_chunk(plan, 2, 0, samples)
    perf = world[:, plan.quantity_names.index("unit_type.new.h100_eq_per_gpu")]
    depth = metrics[:, plan.strategy_names.index("swap-gated"), M["trough_depth"]]
    np.testing.assert_allclose(depth, np.maximum(0, 256 - 144 * perf), atol=1e-9)
    exact = 0.5 * ((256 * 16 / 9 - 72 * (16 / 9) ** 2) - (256 - 72))
    assert depth.mean() == pytest.approx(exact, rel=0.05)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ramp_steps_capacity_up_after_acceptance(tiny, backend):
    # Racks accepted at 27 deliver 50%, then +12.5% at 32, 37, 42, 47 (20 days, 4 steps):
    # C = 180 on [27, 32), 225 on [32, 37), 270 from 37: below 256 until 37.
    path = tiny()
    path.write_text(path.read_text().replace(
        "[[islands]]", "[unit_types.ramp]\nstart_fraction = 0.5\ndays = 20\nsteps = 4\n\n"
        "[[islands]]", 1))
    plan = compile_scenario(load_scenario(path))
    metrics, _, _ = backend.simulate_chunk(plan, 1, 0, 1)
    s = plan.strategy_names.index("swap-on-day")
    assert metrics[0, s, M["trough_days"]] == 27.0
    assert metrics[0, s, M["trough_depth"]] == 256.0
    shortfall = 256 * 17 + 76 * 5 + 31 * 5
    assert metrics[0, s, M["shortfall_gpu_days"]] == pytest.approx(shortfall)
    assert metrics[0, s, M["completion_day"]] == 27.0     # acceptance, not full maturity


@pytest.mark.parametrize("edit, message", [
    ('applies_to = ["retrofit"]', None),
    ('applies_to = ["retrofits"]', "unknown risk target"),
    ('applies_to = ["install:N9"]', "unknown incoming unit"),
])
def test_risk_validation(tiny, edit, message):
    path = with_risk(tiny, 0.1)
    path.write_text(path.read_text().replace('applies_to = ["retrofit"]', edit))
    if message is None:
        load_scenario(path)
        return
    with pytest.raises(ScenarioError) as error:
        load_scenario(path)
    assert message in str(error.value) and "risks[0].applies_to" in str(error.value)


def test_existing_units_need_fixed_performance(tiny):
    path = tiny()
    text = path.read_text().replace("h100_eq_per_gpu = 1.0",
                                    'h100_eq_per_gpu = { dist = "uniform", min = 1, max = 2 }')
    path.write_text(text)
    with pytest.raises(ScenarioError, match=r"existing\[0\]\.type = 'old': units in service"):
        load_scenario(path)
