"""Statistics of a run's per-scenario results, for summary.json, the report and the CLI.

    quantiles   numpy.quantile's default method one value at a time (position, lerp), and
                order statistics (sorted values at given ranks) read without a sort
    selection   those order statistics in compiled loops (quantiles is the spec)
    binomial    the binomial distribution's few functions, without scipy.stats
    statistics  mean, P50, P90, P99 and the distribution-free interval of the P90
    paired      the paired tests on common random numbers that ranking and the nightly use
    ranking     strategies best first, differences within Monte Carlo noise as ties
    compare     two strategies paired scenario by scenario (mcrisk compare, and each strategy
                against the leader in the report)
    pareto      the frontier of risk against cost, never drawn on Monte Carlo noise
    drivers     which uncertain inputs drive each P90
    horizon     which strategies often complete after the horizon, and what would cover them
    contingency  contingent strategies: branches taken, metrics by branch, the value of
                 flexibility
    mitigation  the risk register as run, and the paired value of mitigation
    precision   when every P90 is known well enough, and how many scenarios to try next
    costs       summary.json's cost columns per strategy
    jobs        summary.json's job-mix columns per strategy
    history     a run with a status: the history before as_of as facts, the `status` block
    facts       what a status says has happened, in the scenario's terms
    exact_sums  sums over scenarios that do not depend on the chunking
    milestones  the plan as a schedule: every milestone's days, intervals and criticality,
                reduced chunk by chunk
    milestone_store   the milestones' times past the exact ones: windows of bins, exact tails
    milestone_chunks  one chunk of milestones in compiled loops (milestones is the spec)
    bands       capacity bands and per-hall power, exact streaming histograms over chunks
    band_chunks one chunk of bands and hall power in compiled loops (bands is the spec)
    band_histograms  the exact, sparse and binned per-day histograms the bands count in

Nothing here simulates, reads a scenario file or writes a file: the application layer
(mcrisk.app) calls in with the results, chunk by chunk or at the end.
"""
