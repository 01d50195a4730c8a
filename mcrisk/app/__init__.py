"""The application layer: what runs things end to end, for the CLI (and library callers).

    run         one run: load, compile, simulate, summarize, write every file
    collect     what a run streams while it simulates: metrics.parquet, bands and hall power,
                milestones
    precision   runs that grow until a precision target is met
    mitigation  the value of mitigation: the other side of the risk register, simulated
    compare     `mcrisk compare`: two strategies paired on the same worlds
    schedule    `mcrisk schedule`: one strategy's milestones
    nightly     `mcrisk nightly`: a dated run in a history, compared with the last night
    attribution what moved the executing plan's figures since last night (groups of changes
                re-run alone, paired), and reached milestones against the plan's forecast

These modules run and return; only the CLI prints or exits.
"""
