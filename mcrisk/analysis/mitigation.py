"""The run's risk register as recorded, and the paired value of mitigation.

A run sets the scenario's risk register with a mode (mcrisk.compile.select_risks): `file` (as
written), `off`, `pre` (every risk as assessed), `post` (every risk after mitigation), and
`--disable-risk` switches single risks off. `risks_entry` records that in summary.json: the
mode, what the command line switched off, and every risk with the probability and impact this
run used.

The value of mitigation is the same register before and after mitigation, simulated on the
same sampled worlds: every draw is addressed by name (a risk's occurrence and impact by
`risk.<id>`), so scenario i of a `pre` and of a `post` simulation with one seed is the same
world and differs only by the risks' values. Per strategy and metric, the distribution of
pre - post over the scenarios (mcrisk.analysis.compare.paired_difference): positive means
mitigation lowers the metric (every metric is better lower). A run in one mode simulates the
other once more for it: one more simulation of the same scenarios (mcrisk.mitigation_run
runs it; this module only computes from the metrics).

Claims are made from the 95% interval of the mean difference only: `helps` where it lies
above 0, `hurts` where below, `within_noise` where it contains 0 (or cannot be computed),
`unchanged` where no scenario's value changed at all.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..compile import select_risks, with_mitigation
from ..definitions import METRICS
from ..model import Distribution, Scenario
from .compare import COMPARE_METRICS, paired_difference

MODE_WORDS = {
    "file": "as written in the scenario file",
    "off": "every risk switched off",
    "pre": "every risk as assessed, before mitigation",
    "post": "every risk after mitigation",
}

VERDICTS = ("helps", "hurts", "within_noise", "unchanged")

# The metric's name and unit for sentences.
_WORDS = {"trough_depth": ("trough depth", "H100-eq"), "trough_days": ("trough days", "days"),
          "shortfall_gpu_days": ("shortfall", "H100-eq x days"),
          "homeless_days": ("homeless days", "days"), "completion_day": ("completion day", "days")}

_PARAM_NAMES = {"fixed": ("value",), "uniform": ("min", "max"),
                "triangular": ("min", "mode", "max"), "pert": ("min", "mode", "max", "lambda"),
                "lognormal": ("median", "p90"), "chance": ("p",)}


def distribution_entry(dist: Distribution) -> dict:
    """{kind, <parameter>: value, ...} with the parameter names of the scenario format (a
    chance's inner distribution under `then`)."""
    entry: dict = {"kind": dist.kind}
    entry.update({name: float(value) for name, value in zip(_PARAM_NAMES[dist.kind], dist.params)})
    if dist.inner is not None:
        entry["then"] = distribution_entry(dist.inner)
    return entry


def risks_entry(scenario: Scenario, mode: str = "file", disabled_by_cli=()) -> dict:
    """summary.json's `risks`: the mode, the ids switched off by --disable-risk, the ids
    enabled and disabled, and `register`: every risk as this run used it (`scenario` is the
    one select_risks returned, so probability and impact are the mode's)."""
    return {
        "mode": mode,
        "disabled_by_cli": list(disabled_by_cli),
        "enabled": [r.id for r in scenario.risks if r.enabled],
        "disabled": [r.id for r in scenario.risks if not r.enabled],
        "register": [{"id": r.id, "enabled": r.enabled, "probability": float(r.probability),
                      "impact": distribution_entry(r.impact),
                      "targets": list(r.applies_to)} for r in scenario.risks],
    }


def risk_mode_text(risks: dict) -> str:
    """The run's risk register in one plain-text line (escape it where it is shown)."""
    mode = risks.get("mode", "file")
    enabled, total = len(risks["enabled"]), len(risks["enabled"]) + len(risks["disabled"])
    text = f"risk mode {mode} ({MODE_WORDS.get(mode, mode)})"
    if total == 0:
        return text + "; the scenario has no risk register"
    text += f"; {enabled} of {total} risk{'s' if total != 1 else ''} enabled"
    if enabled:
        text += ": " + ", ".join(risks["enabled"])
    if risks.get("disabled_by_cli"):
        text += "; switched off by --disable-risk: " + ", ".join(risks["disabled_by_cli"])
    return text


@dataclass(frozen=True)
class Counterpart:
    """What the value of mitigation needs besides the run itself: which side the run is
    (`pre` or `post`), the other side's scenario, and the risks whose mitigation changes them."""

    run_is: str
    other: Scenario
    risks: tuple[str, ...]

    @property
    def simulated(self) -> str:
        return "post" if self.run_is == "pre" else "pre"


def counterpart(raw: Scenario, mode: str, disable=()) -> Counterpart | None:
    """The other side of the run's register (`raw`: the scenario as loaded), or None when
    mitigation changes nothing: no risk enabled in this run has mitigated values that differ
    from its assessed ones (an empty register, mode off, every risk off).

    The register on both sides is the run's: the same risks enabled (mode file: the file's
    `enabled`; pre and post: every risk; --disable-risk off in both), before and after
    mitigation. Mode file and pre run the pre side, post the post side."""
    pre = select_risks(raw, "file" if mode == "file" else "pre", tuple(disable))
    changed = tuple(r.id for r in raw.risks if _enabled(pre, r.id) and _mitigation_changes(r))
    if mode == "off" or not changed:
        return None
    if mode == "post":
        return Counterpart("post", pre, changed)
    return Counterpart("pre", with_mitigation(pre), changed)


def _enabled(scenario: Scenario, risk_id: str) -> bool:
    return any(r.enabled for r in scenario.risks if r.id == risk_id)


def _mitigation_changes(risk) -> bool:
    return ((risk.mitigated_probability is not None
             and risk.mitigated_probability != risk.probability)
            or (risk.mitigated_impact is not None and risk.mitigated_impact != risk.impact))


def verdict(d: dict) -> str:
    """helps / hurts / within_noise / unchanged, from the paired difference pre - post: a
    claim only where the 95% interval of the mean difference excludes 0."""
    if d["p_equal"] == 1.0:
        return "unchanged"
    ci = d.get("mean_ci")
    if ci is None:
        return "within_noise"
    if ci[0] > 0:
        return "helps"
    if ci[1] < 0:
        return "hurts"
    return "within_noise"


def mitigation_value(pre: np.ndarray, post: np.ndarray, strategy_names,
                     which=COMPARE_METRICS) -> dict:
    """{strategy: {metric: paired difference pre - post, with its `verdict`}} of two
    metrics arrays [scenarios, strategies, metrics] over the same worlds."""
    out = {}
    for s, name in enumerate(strategy_names):
        per_metric = {}
        for metric in which:
            m = METRICS.index(metric)
            d = paired_difference(pre[:, s, m], post[:, s, m])
            d["verdict"] = verdict(d)
            per_metric[metric] = d
        out[name] = per_metric
    return out


def counterpart_entry(side: Counterpart, run_metrics: np.ndarray, other_metrics: np.ndarray,
                      strategy_names, seed: int, wall_seconds: float, strategies=None) -> dict:
    """summary.json's `mitigation`: the run's metrics [scenarios, strategies, metrics] paired
    with the other side's on the same scenarios (`wall_seconds`: what simulating the other
    side took); `strategies` limits the analysis to some strategy names (compare's A and B)."""
    pre, post = ((run_metrics, other_metrics) if side.run_is == "pre"
                 else (other_metrics, run_metrics))
    names = list(strategy_names)
    keep = [names.index(n) for n in (strategies or names)]
    value = mitigation_value(pre[:, keep], post[:, keep], [names[k] for k in keep])
    return {"run_is": side.run_is, "simulated": side.simulated, "risks": list(side.risks),
            "difference": "pre - post", "samples": int(run_metrics.shape[0]),
            "seed": int(seed), "wall_seconds": round(wall_seconds, 3), "strategies": value}


def skipped_entry(side: Counterpart, reason: str) -> dict:
    """summary.json's `mitigation` when the other side was not simulated, and why."""
    return {"run_is": side.run_is, "simulated": side.simulated, "risks": list(side.risks),
            "skipped": reason}


def mitigation_sentences(mitigation: dict, order=None) -> list[str]:
    """Plain-text sentences on the value of mitigation: a claim (helps, hurts) only where
    the 95% interval of the mean difference excludes 0; the rest named as within noise or
    unchanged. `order`: the strategies' order (default: as in `mitigation`)."""
    if "strategies" not in mitigation:
        return [f"Value of mitigation {mitigation.get('skipped', 'not computed')}."]
    sentences, noise, unchanged = [], [], []
    for name in order or mitigation["strategies"]:
        per_metric = mitigation["strategies"][name]
        helps, hurts = [], []
        for metric, d in per_metric.items():
            words, unit = _WORDS.get(metric, (metric, ""))
            if d["verdict"] == "helps":
                low, high = d["mean_ci"]
                helps.append(f"the mean {words} by {_num(d['mean'])} {unit} "
                             f"[95% CI {_num(low)}, {_num(high)}]")
            elif d["verdict"] == "hurts":
                low, high = d["mean_ci"]
                hurts.append(f"the mean {words} by {_num(-d['mean'])} {unit} "
                             f"[95% CI {_num(-high)}, {_num(-low)}]")
            elif d["verdict"] == "unchanged":
                unchanged.append(f"{name} {words}")
            else:
                noise.append(f"{name} {words}")
        if helps and hurts:
            sentences.append(f"Mitigation helps {name} on some metrics and hurts it on "
                             f"others: it lowers {_join(helps)}, and raises {_join(hurts)}.")
        elif helps:
            sentences.append(f"Mitigation helps {name}: it lowers {_join(helps)}.")
        elif hurts:
            sentences.append(f"Mitigation hurts {name}: it raises {_join(hurts)}.")
    if noise:
        sentences.append("No claim where the 95% interval of the mean difference contains 0 "
                         f"(within Monte Carlo noise): {', '.join(noise)}.")
    if unchanged:
        sentences.append(f"Mitigation changed no scenario's value of: {', '.join(unchanged)}.")
    return sentences


def _num(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 1 else f"{value:,.2g}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
