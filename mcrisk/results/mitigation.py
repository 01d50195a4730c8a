"""The run's risk register as recorded, and the paired value of mitigation.

A run sets the scenario's risk register with a mode (mcrisk.core.risks.select_risks): `file` (as
written), `off`, `pre` (every risk as assessed), `post` (every risk after mitigation), and
`--disable-risk` switches single risks off. `risks_entry` records that in summary.json: the
mode, what the command line switched off, and every risk with the probability and impact this
run used.

The value of mitigation is the same register before and after mitigation, simulated on the
same sampled worlds: every draw is addressed by name (a risk's occurrence and impact by
`risk.<id>`), so scenario i of a `pre` and of a `post` simulation with one seed is the same
world and differs only by the risks' values. Per strategy and metric, the distribution of
pre - post over the scenarios (mcrisk.results.compare.paired_difference): positive means
mitigation lowers the metric (every metric is better lower). A run in one mode simulates the
other once more for it: one more simulation of the same scenarios (mcrisk.app.mitigation
runs it; this module only computes from the metrics).

Claims are made from the 95% interval of the mean difference only: `helps` where it lies
above 0, `hurts` where below, `within_noise` where it contains 0 (or cannot be computed),
`unchanged` where no scenario's value changed at all.

The value of each mitigation (each_risk_value): every risk as assessed (the pre side) against
the same register with only that risk mitigated, one more simulation per risk on the same
worlds. Per strategy, how much that one mitigation lowers the P90 trough depth and the mean
shortfall and, with [costs], the mean and P90 of cost_total, against what the mitigation
itself costs (cost_mitigation, which is in the mitigated side's total): `worth_it` only where
the 95% interval of the mean of pre - mitigated total cost lies above 0, `not_worth_it` where
it lies below, else `within_noise`. A P90 is said to move only where the paired test the
ranking uses (mcrisk.results.pareto.p90_lower) tells the two apart at 5%.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

from .statistics import CI_CONFIDENCE, metric_summary
from ..core.risks import select_risks, with_mitigation
from ..core import labels
from ..core.definitions import COST_MITIGATION, COST_TOTAL, METRICS
from ..core.labels import label
from ..core.model import Distribution, Scenario
from .compare import COMPARE_METRICS, money_text, paired_difference
from .pareto import p90_lower

MODE_WORDS = {
    "file": "as written in the scenario file",
    "off": "every risk switched off",
    "pre": "every risk as assessed, before mitigation",
    "post": "every risk after mitigation",
}

VERDICTS = ("helps", "hurts", "within_noise", "unchanged")
WORTH = ("worth_it", "not_worth_it", "within_noise")
P90_CHANGES = ("lower", "higher", "within_noise", "unchanged")
# What the value of each mitigation reports per strategy: the trough (its P90 depth, its
# mean shortfall) always, cost_total with [costs].
EACH_RISK_METRICS = ("trough_depth", "shortfall_gpu_days")
EACH_RISK_DIFFERENCE = "pre - pre with only this risk mitigated"

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
    pre: Scenario | None = None       # the pre side's scenario (the run's, or `other`)

    @property
    def simulated(self) -> str:
        return "post" if self.run_is == "pre" else "pre"

    @property
    def post(self) -> Scenario:
        """The post side's scenario: every risk of the register mitigated."""
        return self.other if self.run_is == "pre" else with_mitigation(self.pre)

    def each_risk_alone(self) -> dict:
        """{risk id: the pre side with only that risk mitigated (`only`), or None where that
        is the post side's scenario itself (a register of one such risk)}."""
        post = self.post
        alone = {risk: self.only(risk) for risk in self.risks}
        return {risk: None if scenario == post else scenario for risk, scenario in alone.items()}

    def only(self, risk_id: str) -> Scenario:
        """The pre side with only `risk_id` at its mitigated values (with [costs], its
        mitigation's cost in effect): the other risks as assessed."""
        mitigated = {risk.id: risk for risk in with_mitigation(self.pre).risks}
        return replace(self.pre, risks=tuple(mitigated[risk.id] if risk.id == risk_id else risk
                                             for risk in self.pre.risks))


def counterpart(raw: Scenario, mode: str, disable=()) -> Counterpart | None:
    """The other side of the run's register (`raw`: the scenario as loaded), or None when
    mitigation changes nothing: no risk enabled in this run has mitigated values that differ
    from its assessed ones (an empty register, mode off, every risk off).

    The register on both sides is the run's: the same risks enabled (mode file: the file's
    `enabled`; pre and post: every risk; --disable-risk off in both), before and after
    mitigation. Mode file and pre run the pre side, post the post side."""
    pre = select_risks(raw, "file" if mode == "file" else "pre", tuple(disable))
    changed = tuple(r.id for r in raw.risks
                    if _enabled(pre, r.id) and _mitigation_changes(r, raw.costs is not None))
    if mode == "off" or not changed:
        return None
    if mode == "post":
        return Counterpart("post", pre, changed, pre)
    return Counterpart("pre", with_mitigation(pre), changed, pre)


def _enabled(scenario: Scenario, risk_id: str) -> bool:
    return any(r.enabled for r in scenario.risks if r.id == risk_id)


def _mitigation_changes(risk, costs: bool) -> bool:
    """Whether mitigating the risk changes a scenario: its probability, its impact, or (in a
    scenario with [costs]) a cost of its own."""
    return ((risk.mitigated_probability is not None
             and risk.mitigated_probability != risk.probability)
            or (risk.mitigated_impact is not None and risk.mitigated_impact != risk.impact)
            or (costs and risk.mitigation_cost is not None))


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


def p90_change(pre: np.ndarray, mitigated: np.ndarray, level: float = 1 - CI_CONFIDENCE) -> str:
    """lower / higher: the mitigated P90 is below / above the pre one beyond noise (the
    ranking's paired test at `level`); unchanged: equal P90s; else within_noise."""
    p90s = [_finite_p90(pre), _finite_p90(mitigated)]
    if p90s[0] == p90s[1]:
        return "unchanged"
    if p90_lower(mitigated, pre, p90s[1], p90s[0], level):
        return "lower"
    if p90_lower(pre, mitigated, p90s[0], p90s[1], level):
        return "higher"
    return "within_noise"


def _finite_p90(values: np.ndarray) -> float | None:
    with np.errstate(invalid="ignore", over="ignore"):
        value = float(np.quantile(values, 0.9))
    return value if np.isfinite(value) else None


def reduction(pre: np.ndarray, mitigated: np.ndarray) -> dict:
    """How much a mitigation lowers one measure, paired on the same worlds: the distribution
    of pre - mitigated (paired_difference: positive = lower with the mitigation) with its
    `verdict` from the interval of the mean; p90_pre and p90_mitigated, the P90s of the two
    sides (not of the difference), p90_reduction = p90_pre - p90_mitigated and p90_change,
    whether they differ beyond noise."""
    p90s = {"p90_pre": _finite_p90(pre), "p90_mitigated": _finite_p90(mitigated)}
    change = p90_change(pre, mitigated)
    d = paired_difference(pre, mitigated)
    d["verdict"] = verdict(d)
    both = None not in p90s.values()
    return {**d, **p90s,
            "p90_reduction": p90s["p90_pre"] - p90s["p90_mitigated"] if both else None,
            "p90_change": change}


def worth(total: dict) -> str:
    """worth_it / not_worth_it / within_noise from the reduction of cost_total: worth it only
    where the 95% interval of the mean of pre - mitigated lies above 0 (the mitigation, its
    own cost included, lowers the expected total beyond noise)."""
    return {"helps": "worth_it", "hurts": "not_worth_it"}.get(total["verdict"], "within_noise")


def risk_value(pre: np.ndarray, mitigated: np.ndarray, pre_costs: np.ndarray | None,
               mitigated_costs: np.ndarray | None, strategy_names) -> dict:
    """{strategy: value of one mitigation} from the metrics [scenarios, strategies, metrics]
    (and with [costs] the costs [scenarios, strategies, n_costs]) of the pre side and of the
    pre side with only that risk mitigated, on the same worlds: the reduction of each of
    EACH_RISK_METRICS and, with costs, of cost_total, what the mitigation costs
    (`mitigation_cost`: the summary of the mitigated side's cost_mitigation less the pre
    side's) and `worth`."""
    out = {}
    for s, name in enumerate(strategy_names):
        entry = {metric: reduction(pre[:, s, METRICS.index(metric)],
                                   mitigated[:, s, METRICS.index(metric)])
                 for metric in EACH_RISK_METRICS}
        if pre_costs is not None:
            total, own = COST_TOTAL, COST_MITIGATION
            entry["cost_total"] = reduction(pre_costs[:, s, total], mitigated_costs[:, s, total])
            entry["mitigation_cost"] = metric_summary(mitigated_costs[:, s, own]
                                                      - pre_costs[:, s, own], overwrite=True)
            entry["worth"] = worth(entry["cost_total"])
        out[name] = entry
    return out


def each_risk_entry(values: dict, seconds: dict, currency: str | None) -> dict:
    """summary.json's `mitigation.each_risk`: per risk id, what simulating its side took
    (`wall_seconds`, 0 where the post side was that side already) and risk_value's
    `strategies`; `currency` with [costs]."""
    return {"difference": EACH_RISK_DIFFERENCE, **({"currency": currency} if currency else {}),
            "risks": {risk: {"wall_seconds": round(seconds[risk], 3), "strategies": value}
                      for risk, value in values.items()}}


def skipped_entry(side: Counterpart, reason: str) -> dict:
    """summary.json's `mitigation` when the other side was not simulated, and why."""
    return {"run_is": side.run_is, "simulated": side.simulated, "risks": list(side.risks),
            "skipped": reason}


# The nightly's materiality floor (mcrisk.report.nightly.materiality): a mean difference
# smaller than one unit of the metric is no verdict, beyond noise or not.
MATERIALITY_FLOORS = {"trough_depth": 1.0, "trough_days": 1.0, "shortfall_gpu_days": 1.0,
                      "homeless_days": 1.0, "completion_day": 1.0, "power_violation": 0.001}


def shown_verdict(metric: str, d: dict) -> str:
    """The verdict as the report says it: helps / hurts only where the mean difference is
    beyond noise (`verdict`) and at least the metric's materiality floor; `immaterial` where
    it is beyond noise but smaller."""
    v = d["verdict"]
    if v in ("helps", "hurts") and abs(d["mean"]) < MATERIALITY_FLOORS.get(metric, 0.0):
        return "immaterial"
    return v


def mitigation_sentences(mitigation: dict, order=None) -> list[str]:
    """Plain-text sentences on the value of mitigation: a claim (helps, hurts) only where
    the 95% interval of the mean difference excludes 0; the rest named as within noise or
    unchanged. `order`: the strategies' order (default: as in `mitigation`)."""
    if "strategies" not in mitigation:
        return [f"Value of mitigation {mitigation.get('skipped', 'not computed')}."]
    sentences, noise, unchanged, small = [], [], [], []
    for name in order or mitigation["strategies"]:
        per_metric = mitigation["strategies"][name]
        helps, hurts = [], []
        for metric, d in per_metric.items():
            words, unit = label(metric), labels.unit(metric)
            shown = shown_verdict(metric, d)
            if shown == "immaterial":
                small.append(f"{name} {words} ({_num(d['mean'])} {unit})")
            elif d["verdict"] == "helps":
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
    if small:
        sentences.append("No claim where the mean difference, beyond noise, is below the "
                         "materiality floor of one unit of the metric (the nightly's): "
                         f"{', '.join(small)}.")
    if unchanged:
        sentences.append(f"Mitigation changed no scenario's value of: {', '.join(unchanged)}.")
    return sentences


_WORTH_WORDS = {"worth_it": "worth it", "not_worth_it": "not worth it",
                "within_noise": "within noise"}
_P90_WORDS = {"lower": "lower", "higher": "higher", "within_noise": "within noise",
              "unchanged": "same"}


def each_risk_headers(costs: bool) -> list[str]:
    """The column names of a table of the value of each mitigation (risk_value_cells)."""
    return ([f"P90 {labels.heading('trough_depth')}",
             f"mean {label('shortfall_gpu_days')} reduction [95% CI]"]
            + (["mean cost reduction [95% CI]", "P90 cost", "it costs (mean)", "verdict"]
               if costs else []))


def risk_value_cells(entry: dict, currency: str | None) -> list[str]:
    """One strategy's value of one mitigation (risk_value's entry) as plain-text cells, in
    each_risk_headers' order: the P90 trough depth before -> with the mitigation and whether
    it moved beyond noise, the mean shortfall it saves with its interval and verdict and, with
    costs, the mean total cost it saves, the P90 total cost before -> with it, its own cost
    and whether it is worth it."""
    cells = [_moved(entry["trough_depth"], _num),
             _reduced(entry["shortfall_gpu_days"], _num) + " "
             + shown_verdict("shortfall_gpu_days", entry["shortfall_gpu_days"])
             .replace("immaterial", "below materiality").replace("_", " ")]
    if "cost_total" in entry:
        def money(value):
            return money_text(value, currency or "USD")

        cells += [_reduced(entry["cost_total"], money), _moved(entry["cost_total"], money),
                  money(entry["mitigation_cost"]["mean"]), _WORTH_WORDS[entry["worth"]]]
    return cells


def _moved(d: dict, fmt) -> str:
    return f"{fmt(d['p90_pre'])} to {fmt(d['p90_mitigated'])} {_P90_WORDS[d['p90_change']]}"


def _reduced(d: dict, fmt) -> str:
    ci = d["mean_ci"]
    return f"{fmt(d['mean'])} " + (f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci is not None else "n/a")


def each_risk_sentences(each: dict, order=None) -> list[str]:
    """One sentence per risk on the value of mitigating it alone: with costs, for which
    strategies it is worth it, not worth it or within noise; without, whose P90 trough depth
    it moves and whose mean shortfall it lowers or raises beyond noise (the rest named as
    no claim). `order`: the strategies' order (default: as in `each`)."""
    sentences = []
    for risk, value in each["risks"].items():
        names = [n for n in (order or value["strategies"]) if n in value["strategies"]]
        entries = [(n, value["strategies"][n]) for n in names]
        if entries and "worth" in entries[0][1]:
            groups = {w: [n for n, e in entries if e["worth"] == w] for w in _WORTH_WORDS}
            parts = [f"{_WORTH_WORDS[w]} for {_join(groups[w])}" for w in _WORTH_WORDS
                     if groups[w]]
            sentences.append(f"Mitigating {risk} alone (its own cost included) is "
                             f"{'; '.join(parts)}.")
            continue
        parts = []
        for statistic, measure, key, good, bad in (
                ("P90", "trough_depth", "p90_change", "lower", "higher"),
                ("mean", "shortfall_gpu_days", "verdict", "helps", "hurts")):
            words = f"{statistic} {label(measure)}"
            said = (lambda e: shown_verdict(measure, e[measure]) if key == "verdict"  # noqa: E731
                    else e[measure][key])
            lower = [n for n, e in entries if said(e) == good]
            higher = [n for n, e in entries if said(e) == bad]
            parts += [f"lowers the {words} of {_join(lower)}"] if lower else []
            parts += [f"raises the {words} of {_join(higher)}"] if higher else []
        sentences.append(f"Mitigating {risk} alone " + (
            _join(parts) if parts else "moves neither the P90 trough depth nor the mean "
                                       "shortfall of any strategy beyond noise") + ".")
    return sentences


def _num(value: float | None) -> str:
    if value is None:
        return "n/a"
    if abs(value) >= 100 or float(value).is_integer():
        return f"{value:,.0f}"
    return f"{value:,.1f}" if abs(value) >= 1 else f"{value:,.2g}"


def _join(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]
