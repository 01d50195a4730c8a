"""The facts of a status that change the scenario itself, not only its sampled worlds.

with_facts(scenario, status) is a Scenario in, a Scenario out, as the risk register's
functions are (core.risks): the run sets it before the scenario is compiled; the plan stage
conditions the sampled worlds on the rest of the status (mcrisk.plan).
"""
from __future__ import annotations

from dataclasses import replace

from .model import Distribution, Scenario
from .quantities import QuantityLabel
from .status import Status


def with_facts(scenario: Scenario, status: Status | None) -> Scenario:
    """The scenario with the facts that change the model itself (not its sampled worlds):
    a risk that occurred is on, certain, with its recorded impact; a risk that can no longer
    occur is off; a unit type's measured per-GPU performance replaces its nominal value and
    its uncertainty; a shipment's revised promise replaces its planned day (its own delay and
    the shared ones still apply: a revised promise is still a promise). The status itself is
    attached (Scenario.status), for the plan stage, which conditions the sampled worlds on the
    rest, and for the outputs, which record it. The scenario as it is without a status. Draws
    keep their addresses (the quantities keep their names).

    A risk or a performance named in [[correlations]] keeps its distribution, its mitigated
    values and (for a risk that can no longer occur) its `enabled` as this run has them (not
    its mitigation's cost, which a settled risk never counts: mitigation_cost None): the plan
    pins its quantity to the fact (plan.conditioning.pin_quantities) and conditions its
    correlated partners on it, which needs its distribution (mcrisk/plan/copula.py). Such a
    risk that occurred is on, as any; one that can no longer occur stays on where the run has
    it on (its quantity pinned to 0, which delays nothing) and off where the run has it off
    (--risks off, --disable-risk: the risk does not exist in that run, nor its pairs)."""
    if status is None:
        return scenario
    risks = dict(status.risks)
    performance = dict(status.performance)
    promised = dict(status.promised)
    correlated = {name for c in scenario.correlations for name in c.between}

    def risk(r):
        if r.id not in risks:
            return r
        if QuantityLabel("risk", r.id).name in correlated:     # its mitigation's cost
            kept = replace(r, mitigation_cost=None)    # counts no more than another's would
            return kept if risks[r.id] is None else replace(kept, enabled=True)
        if risks[r.id] is None:
            return replace(r, enabled=False)
        certain = Distribution.fixed(risks[r.id])
        return replace(r, enabled=True, probability=1.0, impact=certain,
                       mitigated_probability=None, mitigated_impact=None)

    def unit_type(kind):
        if kind.id not in performance:
            return kind
        measured = performance[kind.id]
        if QuantityLabel("unit_type", kind.id, "h100_eq_per_gpu").name in correlated:
            return replace(kind, h100_eq_per_gpu=measured)
        drawn = None if kind.performance is None else Distribution.fixed(measured)
        return replace(kind, h100_eq_per_gpu=measured, performance=drawn)

    def shipment(ship):
        if ship.id not in promised:
            return ship
        return replace(ship, arrival=replace(ship.arrival, day=promised[ship.id]))

    executing = status.executing or scenario.executing
    return replace(scenario, risks=tuple(risk(r) for r in scenario.risks),
                   unit_types=tuple(unit_type(k) for k in scenario.unit_types),
                   shipments=tuple(shipment(s) for s in scenario.shipments),
                   executing=executing, status=status)
