"""The risk mode is recorded and shown, runs of different modes are kept apart, and the paired
value of mitigation (the same worlds with the register pre vs post mitigation) is exact where
it can be worked out by hand."""
from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from mcrisk import cli
from mcrisk.results.compare import paired_difference
from mcrisk.results.mitigation import counterpart, mitigation_sentences, mitigation_value, verdict
from mcrisk.plan.compile import compile_scenario
from mcrisk.core.risks import select_risks
from mcrisk.core.definitions import METRICS
from mcrisk.core.errors import McriskError
from mcrisk.app.mitigation import fits_in_memory
from mcrisk.app.run import load_for_run, run_scenario, set_risks
from mcrisk.scenario import load_scenario
from mcrisk.schema import summary_schema

from ..conftest import REFERENCE

# A shipment slip of exactly 30 days that always happens before mitigation and never after.
# In the tiny scenario (fixed durations) S1 arrives on day 20, the racks install in 2 days and
# pass burn-in in 5: accepted on day 27 (fabric ready on day 18); with the slip, on day 57.
#  swap-on-day: both old units drain at day 10, so the trough runs from 10 to the acceptance:
#    17 days -> 47 (+30); capacity 0 against demand 256 meanwhile: shortfall +30 x 256 = 7,680;
#    no island holds the largest job (200) meanwhile: homeless +30; depth 256 either way;
#    completion = acceptance (the old units are removed by day 15): +30.
#  swap-gated: the old units drain as the racks are accepted: no trough, no shortfall, no
#    homeless time either way; completion = acceptance + 2 + 3 (drain, removal): +30.
SLIP = """
[[risks]]
id = "{id}"
description = "S1 slips by a month"
probability = {p}
impact = {impact}
applies_to = ["arrival:S1"]
enabled = {enabled}
mitigated = {{ probability = 0 }}
"""
EXPECTED = {"swap-on-day": {"trough_depth": 0.0, "trough_days": 30.0,
                            "shortfall_gpu_days": 30.0 * 256, "homeless_days": 30.0,
                            "completion_day": 30.0},
            "swap-gated": {"trough_depth": 0.0, "trough_days": 0.0, "shortfall_gpu_days": 0.0,
                           "homeless_days": 0.0, "completion_day": 30.0}}


def with_slip(tiny, risk_id="late-ship", p=1, impact="30", enabled="true"):
    path = tiny()
    path.write_text(path.read_text() + SLIP.format(id=risk_id, p=p, impact=impact,
                                                   enabled=enabled))
    return path


def schema_errors(document) -> list[str]:
    validator = jsonschema.Draft202012Validator(summary_schema())
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(document)]


# --- the mode recorded, with the values used ------------------------------------------------

def test_pre_and_post_runs_record_their_mode_and_the_values_they_used():
    """The reference's register as written (scenarios/reference-2048.toml): pre and post
    must record different, effective values; file records them all disabled."""
    runs = {mode: run_scenario(str(REFERENCE), samples=40, backend="cpu", risks=mode,
                               mitigation=False).summary["risks"]
            for mode in ("file", "pre", "post")}
    pre, post, file = runs["pre"], runs["post"], runs["file"]
    assert (pre["mode"], post["mode"], file["mode"]) == ("pre", "post", "file")
    assert pre != post
    by_id = {mode: {r["id"]: r for r in runs[mode]["register"]} for mode in runs}
    assert by_id["pre"]["cdu-recall"]["probability"] == 0.10
    assert by_id["post"]["cdu-recall"]["probability"] == 0.03
    triangular = {"kind": "triangular", "min": 14.0, "mode": 30.0, "max": 60.0}
    assert by_id["pre"]["cdu-recall"]["impact"] == triangular      # mitigation: probability
    assert by_id["post"]["cdu-recall"]["impact"] == triangular
    assert by_id["pre"]["utility-slip"]["impact"] == {"kind": "lognormal", "median": 30.0,
                                                      "p90": 90.0}
    assert by_id["post"]["utility-slip"]["impact"] == {"kind": "lognormal", "median": 10.0,
                                                       "p90": 30.0}
    assert by_id["pre"]["utility-slip"]["probability"] == by_id["post"]["utility-slip"][
        "probability"] == 0.20
    assert (by_id["pre"]["allocation-cut"]["probability"],
            by_id["post"]["allocation-cut"]["probability"]) == (0.15, 0.05)
    assert by_id["post"]["allocation-cut"]["impact"] == {"kind": "fixed", "value": 90.0}
    assert by_id["pre"]["allocation-cut"]["targets"] == ["arrival:S3"]
    assert all(r["enabled"] for mode in ("pre", "post") for r in runs[mode]["register"])
    assert not any(r["enabled"] for r in file["register"])
    assert file["enabled"] == [] and by_id["file"]["cdu-recall"]["probability"] == 0.10


def test_disable_risk_is_recorded_once_and_switches_the_risk_off():
    risks = run_scenario(str(REFERENCE), samples=40, backend="cpu", risks="post",
                         disable_risks=("cdu-recall", "cdu-recall"),
                         mitigation=False).summary["risks"]
    assert risks["disabled_by_cli"] == ["cdu-recall"]
    assert risks["disabled"] == ["cdu-recall"] and "cdu-recall" not in risks["enabled"]
    assert [r["enabled"] for r in risks["register"]] == [False, True, True]


def test_a_loaded_scenario_runs_as_its_path_does_and_keeps_its_register():
    """run_scenario takes the scenario loaded, its register set (load_for_run, set_risks):
    the same numbers as the path's run; a register given twice is refused, not merged."""
    register = set_risks(load_scenario(REFERENCE), "post", ("cdu-recall",))
    loaded = run_scenario(register, samples=40, backend="cpu", mitigation=False).summary
    by_path = run_scenario(str(REFERENCE), samples=40, backend="cpu", risks="post",
                           disable_risks=("cdu-recall",), mitigation=False).summary
    for key in ("strategies", "ranking", "risks", "scenario", "scenario_sha256"):
        assert loaded[key] == by_path[key]
    assert load_for_run(str(REFERENCE), "post", ("cdu-recall",)) == register
    with pytest.raises(TypeError, match="set_risks"):
        run_scenario(register, samples=40, backend="cpu", risks="pre")
    with pytest.raises(McriskError, match=f"{REFERENCE}: .*nosuch"):
        set_risks(load_scenario(REFERENCE), "pre", ("nosuch",))


def test_default_out_folder_per_mode_and_an_explicit_out_is_kept(tmp_path):
    assert cli.default_out("scenarios/reference-2048.toml") == \
        cli.default_out("x/reference-2048.toml", "file")
    folders = {mode: cli.default_out("scenarios/reference-2048.toml", mode)
               for mode in ("file", "off", "pre", "post")}
    assert str(folders["file"]) == "out/reference-2048"
    assert str(folders["pre"]) == "out/reference-2048-risks-pre"
    assert str(folders["post"]) == "out/reference-2048-risks-post"
    assert len(set(folders.values())) == 4


@pytest.mark.slow
def test_cli_pre_and_post_runs_land_in_different_folders(tiny, tmp_path, monkeypatch, capsys):
    path = with_slip(tiny, enabled="false")
    monkeypatch.chdir(tmp_path)
    for mode in ("pre", "post"):
        assert cli.main(["run", str(path), "--samples", "40", "--backend", "cpu",
                         "--risks", mode, "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "risk mode pre (every risk as assessed, before mitigation)" in out
    assert "risk mode post (every risk after mitigation)" in out
    pre = json.loads((tmp_path / "out" / f"{path.stem}-risks-pre" / "summary.json").read_text())
    post = json.loads((tmp_path / "out" / f"{path.stem}-risks-post" / "summary.json").read_text())
    assert pre["risks"]["mode"] == "pre" and post["risks"]["mode"] == "post"
    assert pre["risks"]["register"][0]["probability"] == 1.0
    assert post["risks"]["register"][0]["probability"] == 0.0
    # the two sides of one register: the same value of mitigation from either run
    assert pre["mitigation"]["strategies"] == post["mitigation"]["strategies"]
    assert (pre["mitigation"]["run_is"], post["mitigation"]["run_is"]) == ("pre", "post")
    md = (tmp_path / "out" / f"{path.stem}-risks-post" / "summary.md").read_text()
    assert "Risk register set on the command line: risk mode post (every risk after mitigation)" in " ".join(md.split())
    assert not (tmp_path / "out" / path.stem).exists()


# --- the value of mitigation ----------------------------------------------------------------

@pytest.mark.parametrize("mode,enabled", [("pre", "false"), ("post", "false"),
                                          ("file", "true")])
def test_value_of_mitigation_equals_a_certain_impact_exactly(tiny, mode, enabled):
    path = with_slip(tiny, enabled=enabled)
    run = run_scenario(str(path), samples=40, backend="cpu", risks=mode)
    m = run.summary["mitigation"]
    assert (m["run_is"], m["simulated"]) == (("post", "pre") if mode == "post" else ("pre", "post"))
    assert m["risks"] == ["late-ship"] and m["samples"] == 40 and m["difference"] == "pre - post"
    for name, per_metric in EXPECTED.items():
        for metric, value in per_metric.items():
            d = m["strategies"][name][metric]
            assert (d["mean"], d["p50"], d["p90"], d["p99"]) == (value,) * 4, (name, metric)
            assert d["mean_ci"] == [value, value] and d["p90_ci"] == [value, value]
            assert d["p_a_worse"] == (1.0 if value else 0.0)
            assert d["verdict"] == ("helps" if value else "unchanged"), (name, metric)
    assert schema_errors(run.summary) == []


def test_value_of_mitigation_is_the_drawn_impact_scenario_by_scenario(tiny):
    """With a drawn impact, pre - post is that scenario's draw (the same world on both
    sides): swap-gated's completion moves by exactly the risk's draw."""
    path = with_slip(tiny, impact='{ dist = "uniform", min = 5, max = 50 }')
    scenario = load_scenario(path)
    pre = compile_scenario(select_risks(scenario, "pre"))
    post = compile_scenario(select_risks(scenario, "post"))
    from mcrisk.backends import numba as numba_backend
    m_pre, world, _ = numba_backend.simulate_chunk(pre, 7, 0, 200)
    m_post, _, _ = numba_backend.simulate_chunk(post, 7, 0, 200)
    draw = world[:, pre.quantity_names.index("risk.late-ship")]
    assert draw.min() >= 5 and draw.max() <= 50 and np.unique(draw).size == 200
    s, done = pre.strategy_names.index("swap-gated"), METRICS.index("completion_day")
    np.testing.assert_allclose(m_pre[:, s, done] - m_post[:, s, done], draw, rtol=1e-12)
    value = mitigation_value(m_pre, m_post, pre.strategy_names)
    assert value["swap-gated"]["completion_day"]["mean"] == pytest.approx(draw.mean(), rel=1e-12)


def test_compare_prints_the_value_of_mitigation_for_a_and_b(tiny, capsys):
    path = with_slip(tiny, enabled="false")
    assert cli.main(["compare", str(path), "swap-on-day", "swap-gated", "--samples", "40",
                     "--backend", "cpu", "--risks", "pre", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "risk mode pre (every risk as assessed, before mitigation); 1 of 1 risk enabled: " \
           "late-ship" in out
    section = out[out.index("value of mitigation: pre - post mitigation of late-ship"):]
    assert "one more simulation of 40 scenarios" in section
    on_day = section[section.index("swap-on-day:"):section.index("swap-gated:")]
    gated = section[section.index("swap-gated:"):]
    assert _row(on_day, "trough_days")[:3] == ["30.0", "[30.0,", "30.0]"]
    assert _row(on_day, "trough_days")[-1] == "helps"
    assert _row(on_day, "shortfall_gpu_days")[:3] == ["7,680", "[7,680,", "7,680]"]
    assert _row(on_day, "trough_depth")[-1] == "unchanged"
    assert _row(gated, "completion_day")[-1] == "helps"
    assert _row(gated, "trough_days")[-1] == "unchanged"
    assert cli.main(["compare", str(path), "swap-on-day", "swap-gated", "--samples", "40",
                     "--backend", "cpu", "--risks", "pre", "--quiet", "--no-mitigation"]) == 0
    assert "value of mitigation" not in capsys.readouterr().out


def _row(block: str, metric: str) -> list[str]:
    return next(line.split()[1:] for line in block.splitlines() if line.startswith(metric + " "))


def test_no_value_of_mitigation_without_an_enabled_risk_that_mitigation_changes(tiny):
    reference = load_scenario(REFERENCE)
    assert counterpart(reference, "file") is None             # every risk disabled in the file
    assert counterpart(reference, "off") is None
    assert counterpart(reference, "pre", ("cdu-recall", "utility-slip", "allocation-cut")) is None
    side = counterpart(reference, "pre", ("utility-slip",))
    assert side.risks == ("cdu-recall", "allocation-cut") and side.simulated == "post"
    unmitigated = tiny()
    unmitigated.write_text(unmitigated.read_text() + SLIP.format(
        id="x", p=1, impact=30, enabled="true").replace("mitigated = { probability = 0 }", ""))
    assert counterpart(load_scenario(unmitigated), "pre") is None
    same = tiny()
    same.write_text(same.read_text() + SLIP.format(id="x", p=0, impact=30, enabled="true"))
    assert counterpart(load_scenario(same), "pre") is None    # mitigated p 0 = assessed p 0
    summary = run_scenario(str(REFERENCE), samples=40, backend="cpu").summary
    assert "mitigation" not in summary
    assert "mitigation" not in run_scenario(str(with_slip(tiny)), samples=40, backend="cpu",
                                            risks="pre", mitigation=False).summary


def test_verdict_claims_only_where_the_interval_of_the_mean_excludes_zero():
    def d(diff):
        return paired_difference(np.asarray(diff, float), np.zeros(len(diff)))

    assert verdict(d([1.0, 2.0, 3.0, 2.0])) == "helps"
    assert verdict(d([-1.0, -2.0, -3.0, -2.0])) == "hurts"
    assert verdict(d([1.0, -1.0] * 50)) == "within_noise"        # mean 0
    assert verdict(d([0.0] * 99 + [30.0])) == "within_noise"     # one scenario in 100
    assert verdict(d([0.0] * 10)) == "unchanged"
    assert verdict(d([5.0])) == "within_noise"                   # one scenario: no interval
    # the sentences follow the verdicts: no claim where the interval contains 0
    pre = np.zeros((100, 2, len(METRICS)))
    post = np.zeros_like(pre)
    pre[:, 0, METRICS.index("trough_days")] = np.tile([1.0, -1.0], 50) + 0.01
    pre[:, 1, METRICS.index("trough_days")] = 2.0
    value = mitigation_value(pre, post, ["a", "b"], which=("trough_days",))
    text = " ".join(mitigation_sentences({"strategies": value}))
    assert "Mitigation helps b: it lowers the mean trough days by 2 days [95% CI 2, 2]." in text
    assert "helps a" not in text and "hurts a" not in text
    assert "within Monte Carlo noise): a trough days." in text


def test_value_of_mitigation_skipped_when_it_would_not_fit_in_memory(tiny, monkeypatch):
    scenario = load_scenario(with_slip(tiny))
    plan = compile_scenario(select_risks(scenario, "pre"))
    assert fits_in_memory(plan, plan, 1000, 1000, available=10**12) is None
    reason = fits_in_memory(plan, plan, 1000, 1000, available=1000)
    assert reason.startswith("not computed: simulating the other side")
    monkeypatch.setattr("mcrisk.app.mitigation.fits_in_memory", lambda *args, **kw: reason)
    summary = run_scenario(str(with_slip(tiny)), samples=40, backend="cpu",
                           risks="pre").summary
    assert summary["mitigation"] == {"run_is": "pre", "simulated": "post",
                                     "risks": ["late-ship"], "skipped": reason}
    assert schema_errors(summary) == []
    broken = dict(summary, mitigation=dict(summary["mitigation"], strategies={}))
    assert schema_errors(broken)          # computed and skipped at once: refused


@pytest.mark.slow
def test_report_shows_the_mode_and_the_value_of_mitigation_escaped(tiny, tmp_path, capsys):
    path = with_slip(tiny, risk_id="late<i>ship")
    assert cli.main(["run", str(path), "--samples", "40", "--backend", "cpu", "--risks", "post",
                     "--out", str(tmp_path / "r"), "--quiet"]) == 0     # an explicit --out
    assert "Mitigation helps swap-on-day" in capsys.readouterr().out
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["risks"]["mode"] == "post"
    page = (tmp_path / "r" / "report.html").read_text()
    md = (tmp_path / "r" / "summary.md").read_text()
    assert "<i>" not in page and "late&lt;i&gt;ship" in page
    top = page[:page.index('id="findings"')]
    assert "Risk register set on the command line" in top and "risk mode post" in top
    assert '<th>risk register</th><td>risk mode post (every risk after mitigation)' in page
    section = page[page.index('id="mitigation"'):page.index('id="capacity"')]
    assert ("Mitigation helps swap-on-day: it lowers the mean trough days by 30 days [95% CI "
            "30, 30], the mean shortfall by 7,680 H100-eq x days [95% CI 7,680, 7,680], the "
            "mean homeless days by 30 days [95% CI 30, 30] and the mean completion day by 30 "
            "days [95% CI 30, 30].") in section
    assert "This run is the post side; it simulated the pre side too" in section
    assert "late\\<i\\>ship" in md or "late&lt;i&gt;ship" in md
    assert "<i>" not in md
    plain = run_scenario(str(path), samples=40, backend="cpu", out_dir=tmp_path / "f")
    page = (tmp_path / "f" / "report.html").read_text()
    assert "Risk register set on the command line" not in page
    assert plain.summary["risks"]["mode"] == "file"
