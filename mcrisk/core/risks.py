"""The risk register as a run uses it: which risks are on, at pre- or post-mitigation values.

Functions of the validated scenario only (a Scenario in, a Scenario out): every command that
runs a scenario (run, compare, nightly, optimize and the value of mitigation) sets the
register here before the scenario is compiled.
"""
from __future__ import annotations

from dataclasses import replace

from .model import Scenario


RISK_MODES = ("file", "off", "pre", "post")


def select_risks(scenario: Scenario, mode: str = "file", disable: tuple[str, ...] = ()) -> Scenario:
    """The scenario with its risk register set for a run.

    file: as written (each risk's `enabled`, pre-mitigation values); off: no risks;
    pre: every risk, pre-mitigation; post: every risk, mitigated values where given.
    `disable` switches named risks off in any mode. Draws are addressed by risk id, so runs
    in different modes with one seed are paired scenario by scenario.
    """
    if mode not in RISK_MODES:
        raise ValueError(f"risk mode must be one of {RISK_MODES}, got {mode!r}")
    unknown = set(disable) - {r.id for r in scenario.risks}
    if unknown:
        raise ValueError(f"unknown risk ids {sorted(unknown)}; the register has "
                         f"{[r.id for r in scenario.risks]}")
    if mode == "post":
        scenario = with_mitigation(scenario)
    risks = [replace(risk, enabled={"file": risk.enabled, "off": False}.get(mode, True)
                     and risk.id not in disable) for risk in scenario.risks]
    return replace(scenario, risks=tuple(risks))


def with_mitigation(scenario: Scenario) -> Scenario:
    """The scenario with every risk at its mitigated values (where given), each risk's
    `enabled` unchanged: the post-mitigation side of a register set by select_risks. A risk
    with mitigated values is marked `mitigation_applied`, so that its mitigation's cost
    counts (a one-off cost, mcrisk/plan/costs.py) wherever the risk is enabled."""
    return replace(scenario, risks=tuple(
        replace(risk, probability=_first(risk.mitigated_probability, risk.probability),
                impact=_first(risk.mitigated_impact, risk.impact),
                mitigation_applied=_has_mitigation(risk)) for risk in scenario.risks))


def _has_mitigation(risk) -> bool:
    return risk.mitigated_probability is not None or risk.mitigated_impact is not None


def _first(value, default):
    return default if value is None else value
