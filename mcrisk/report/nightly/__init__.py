"""Night over night: what changed between two nights of a nightly history, and what it means.

    night           one night of a history read back: its summary, scenario and settings
    input_changes   what changed in the scenario file and the run settings
    status_changes  how the status changed between two nights: as_of, the new facts
    intervals       each night's intervals, for comparing two nights unpaired
    significance    whether a statistic changed beyond Monte Carlo noise
    materiality     whether a change beyond noise is large enough to report
    metric_changes  a comparison's result, as every output reads it
    diff            the comparison of two nights (diff.md)
    diff_text       its text: a line per reported change
    lead            the executing plan's figures, what moved them, milestones against plan
    change_log      the night in words: a line per change, grouped (happened, plan, model)
    columns         what a --fail-if condition can name: every column the run reports
    alerts          --fail-if conditions: parsed, checked, evaluated
    trend           each strategy's P90s across the nights of a history, with its chart
    burndown        the executing plan's risk burn-down over the history (inline SVG)
"""
