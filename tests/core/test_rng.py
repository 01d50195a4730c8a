"""The random stream: Random123 known answers (the vectors: tests/helpers.py), bit-identical
words across implementations, and addresses that do not collide (or, if they ever did, a clear
error from validate)."""
import numpy as np
import pytest

from mcrisk import cli
from mcrisk.core import rng
from mcrisk.backends import numba as numba_backend
from mcrisk.backends import numpy as numpy_backend
from mcrisk.backends.numba import random as numba_random
from mcrisk.plan.compile import compile_scenario
from mcrisk.scenario import load_scenario

from ..helpers import KAT_PHILOX4X32_10, MINIMAL
from ..parity import assert_parity


@pytest.mark.parametrize("counter, key, expected", KAT_PHILOX4X32_10)
def test_numpy_philox_matches_random123(counter, key, expected):
    assert tuple(int(w) for w in rng.philox4x32_10(counter, key)) == expected


@pytest.mark.parametrize("counter, key, expected", KAT_PHILOX4X32_10)
def test_numba_philox_matches_random123(counter, key, expected):
    words = numba_random.philox4x32_10(*(np.uint64(c) for c in counter),
                                       *(np.uint64(k) for k in key))
    assert tuple(int(w) for w in words) == expected


def test_numba_and_numpy_words_are_bit_identical():
    gen = np.random.default_rng(7)
    counters = gen.integers(0, 2 ** 32, size=(2000, 4), dtype=np.uint64)
    keys = gen.integers(0, 2 ** 32, size=(2000, 2), dtype=np.uint64)
    expected = np.stack(rng.philox4x32_10(counters.T, keys.T), axis=1)
    got = np.array([numba_random.philox4x32_10(*c, *k) for c, k in zip(counters, keys)],
                   dtype=np.uint64)
    np.testing.assert_array_equal(got, expected)


def test_uniforms_are_identical_and_strictly_inside_the_unit_interval():
    seed = 2 ** 40 + 12345
    scenario = np.arange(5000, dtype=np.uint64) + np.uint64(2 ** 32 - 5000)   # the last ones
    u1, u2 = rng.uniforms(seed, scenario, rng.address_id("unit.N01.install"), 3)
    lo, hi = rng.split_seed(seed)
    for i in range(0, 5000, 97):
        v1, v2 = numba_random.uniforms(np.uint64(lo), np.uint64(hi), scenario[i],
                              rng.address_id("unit.N01.install"), 3)
        assert (v1, v2) == (u1[i], u2[i])
    assert 0.0 < min(u1.min(), u2.min()) and max(u1.max(), u2.max()) < 1.0


def test_extreme_words_map_inside_the_interval():
    zero = rng.words_to_uniform(np.uint64(0), np.uint64(0))
    top = rng.words_to_uniform(np.uint64(0xFFFFFFFF), np.uint64(0xFFFFFFFF))
    assert zero == 0.5 * 2.0 ** -52 and top == 1.0 - 0.5 * 2.0 ** -52


def test_uniforms_look_uniform_and_independent_across_addresses():
    from scipy import stats
    scenario = np.arange(50_000, dtype=np.uint64)
    a, b = rng.uniforms(1, scenario, rng.address_id("a"), 0)
    c, _ = rng.uniforms(1, scenario, rng.address_id("b"), 0)
    assert stats.kstest(a, "uniform").pvalue > 1e-3
    assert stats.kstest(b, "uniform").pvalue > 1e-3
    assert abs(np.corrcoef(a, c)[0, 1]) < 0.02
    assert abs(np.corrcoef(a, b)[0, 1]) < 0.02


def test_address_is_a_pure_function_of_its_parts():
    assert rng.address_id("unit.N01.install") == rng.address_id("unit.N01.install")
    assert rng.address_id("unit.N01.install") != rng.address_id("unit.N02.install")
    first = rng.uniforms(9, np.array([17], dtype=np.uint64), 123, 0)
    again = rng.uniforms(9, np.array([17], dtype=np.uint64), 123, 0)
    other_seed = rng.uniforms(10, np.array([17], dtype=np.uint64), 123, 0)
    assert first == again and first != other_seed


def test_the_counter_is_scenario_address_lo_address_hi_draw():
    # The layout every backend mirrors (numba/random.py, kernels/random.cuh), pinned here.
    address = 0x0123_4567_89AB_CDEF
    seed = 0xFEDC_BA98_7654_3210
    w0, w1, w2, w3 = rng.philox4x32_10((77, 0x89AB_CDEF, 0x0123_4567, 5),
                                       (0x7654_3210, 0xFEDC_BA98))
    u1, u2 = rng.uniforms(seed, 77, address, 5)
    assert (u1, u2) == (rng.words_to_uniform(w0, w1), rng.words_to_uniform(w2, w3))


def test_address_ids_are_64_bit_blake2b():
    import hashlib
    digest = hashlib.blake2b(b"unit.N01.install", digest_size=8).digest()
    assert rng.address_id("unit.N01.install") == int.from_bytes(digest, "little")
    assert max(rng.address_id(f"x{i}") for i in range(100)) >= 2 ** 32   # the high word is used


BURN_IN_PARTS = ("attempt", "outcome", "fix", "rma")


def _old_32_bit_id(name: str) -> int:
    import hashlib
    return int.from_bytes(hashlib.blake2b(name.encode(), digest_size=4).digest(), "little")


def test_names_whose_32_bit_hashes_collided_get_distinct_addresses():
    # Issue 8: rack8309's burn-in RMA and rack14157's burn-in attempt shared a 32-bit id.
    a, b = "unit.rack8309.burn_in.rma", "unit.rack14157.burn_in.attempt"
    assert _old_32_bit_id(a) == _old_32_bit_id(b)
    assert rng.address_id(a) != rng.address_id(b)
    names = [f"unit.rack{n}.{kind}" for n in (8309, 14157)
             for kind in ("drain", "removal", "install", "burn_in")
             + tuple(f"burn_in.{p}" for p in BURN_IN_PARTS)]
    assert len({rng.address_id(n) for n in names}) == len(names)


def test_every_address_of_units_n1_to_n15171_is_distinct():
    # The range whose 32-bit ids collided (N15171's RMA and N10267's outcome): every address
    # a unit can have, over the whole range.
    names = [f"unit.N{i}.{kind}" for i in range(1, 15172)
             for kind in ("drain", "removal", "install") + tuple(f"burn_in.{p}"
                                                                for p in BURN_IN_PARTS)]
    assert len({_old_32_bit_id(n) for n in names}) < len(names)
    assert len({rng.address_id(n) for n in names}) == len(names)


def test_scenario_indices_stop_below_2_to_the_32():
    rng.check_scenarios(0, 0)
    rng.check_scenarios(2 ** 32 - 10, 10)
    for first, count in ((2 ** 32 - 10, 11), (2 ** 32, 1), (-1, 5), (0, -1)):
        with pytest.raises(ValueError):
            rng.check_scenarios(first, count)
    with pytest.raises(ValueError, match="below 2\\*\\*32"):
        rng.uniforms(1, np.array([0, 2 ** 32], dtype=np.uint64), 123, 0)


def test_seed_out_of_range_is_rejected():
    with pytest.raises(ValueError):
        rng.split_seed(2 ** 64)
    with pytest.raises(ValueError):
        rng.split_seed(-1)


# ---- whole scenarios whose names collided in 32 bits ------------------------------------------

def minimal_with_racks(tmp_path, first: str, second: str, last: int | None = None):
    """scenarios/minimal.toml with its racks N1, N2 renamed (or, with `last`, N1..N<last>
    racks, all in row R3 of a hall without a binding power cap)."""
    text = MINIMAL.read_text()
    if last is None:
        text = (text.replace('"N1..N2"', f'["{first}", "{second}"]')
                .replace('"N1"', f'"{first}"').replace('"N2"', f'"{second}"'))
    else:
        text = (text.replace('units = "N1..N2"', f'units = "N1..N{last}"')
                .replace('on_accepted = "N1..N2"', 'on_accepted = "N1"')
                .replace('{ id = "R3", cooling = "air", positions = 2 }',
                         f'{{ id = "R3", cooling = "air", positions = {last} }}')
                .replace("power_cap_kw = 500", "power_cap_kw = 10000000"))
        text = text.partition('[[strategies]]\nname = "drain-on-day"')[0]
    path = tmp_path / "racks.toml"
    path.write_text(text)
    return path


@pytest.mark.slow
def test_units_whose_32_bit_ids_collided_validate_and_run(tmp_path, capsys):
    path = minimal_with_racks(tmp_path, "rack8309", "rack14157")
    assert cli.main(["validate", str(path)]) == 0
    plan = compile_scenario(load_scenario(path))
    assert_parity(numba_backend.simulate_chunk(plan, 1, 0, 200),
                  numpy_backend.simulate_chunk(plan, 1, 0, 200), ("numba", "numpy"), plan)
    assert cli.main(["run", str(path), "--samples", "300", "--backend", "cpu", "--quiet",
                     "--out", str(tmp_path / "out")]) == 0
    assert (tmp_path / "out" / "summary.json").exists()


@pytest.mark.slow
def test_as_many_units_as_validation_allows_validate_and_run(tmp_path):
    # 9,998 racks and 2 pods, the 10,000 units a scenario may have (about 3 s): the most
    # names a plan hashes. (N1..N15171, whose 32-bit ids collided, is beyond that cap.)
    path = minimal_with_racks(tmp_path, "", "", last=9_998)
    assert cli.main(["validate", str(path)]) == 0
    plan = compile_scenario(load_scenario(path))
    metrics, world, _ = numba_backend.simulate_chunk(plan, 1, 0, 10)
    assert np.isfinite(world).all() and np.isfinite(metrics).all()


def test_a_forced_address_collision_is_reported_by_validate(tmp_path, monkeypatch, capsys):
    # 64-bit ids do not collide in practice, so force two names onto one id: compile raises a
    # ScenarioError naming both, which `validate` reports (exit 2) and `run` too, never a
    # traceback.
    path = minimal_with_racks(tmp_path, "rack8309", "rack14157")
    real = rng.address_id
    clash = {"unit.rack8309.burn_in.rma", "unit.rack14157.burn_in.attempt"}
    monkeypatch.setattr(rng, "address_id", lambda name: 7 if name in clash else real(name))
    assert cli.main(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"{path}: incoming.units = 'rack14157': ")
    for part in ("'unit.rack14157.burn_in.attempt'", "'unit.rack8309.burn_in.rma'",
                 "incoming.units = 'rack8309'", "collide", "(rename 'rack14157' or 'rack8309')"):
        assert part in lines[0], part
    assert cli.main(["run", str(path), "--samples", "10", "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "collide" in err and "Traceback" not in err
    assert not (tmp_path / "o").exists()


def test_a_collision_names_the_file_keys_of_both_things(tmp_path, monkeypatch):
    # A shared delay against a row's retrofit: each is located by its own key.
    from mcrisk.core.errors import ScenarioError
    real = rng.address_id
    clash = {"row.R3.retrofit", "shipment.S1.arrival.delay"}
    monkeypatch.setattr(rng, "address_id", lambda name: 9 if name in clash else real(name))
    with pytest.raises(ScenarioError) as caught:
        compile_scenario(load_scenario(MINIMAL))
    (problem,) = caught.value.problems
    assert (problem.file, problem.key, problem.value) == (str(MINIMAL), "halls[0].rows[2].id",
                                                          "R3")
    assert "(shipments[0].id = 'S1')" in problem.message
