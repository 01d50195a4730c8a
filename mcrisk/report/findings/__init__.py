"""Findings: plain-language sentences computed from a run's numbers, each claimed only beyond
Monte Carlo noise.

    sentences  the run's findings: ranking, troughs, horizon, keep, power
    drivers    which metric the drivers explain, each driver's unit, the drivers sentence
    gating     two strategies that differ in one decision (trigger, soak), head to head
    words      numbers, counts and paired differences as the findings say them
    costs      the trade between trough and cost, one sentence per pair of strategies
    pairs      strategies that differ in one decision only, read from their plans
"""
