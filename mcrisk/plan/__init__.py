"""The plan: a validated scenario compiled into flat arrays, the only thing the kernels see.

    record   the plan's interface in one table (every array's name, dtype, axes and meaning)
             and CompiledScenario, the record built from it and checked against it
    compile  compile_scenario: every strategy's network, crews, events and metrics' terms
    world    the quantities drawn or derived once per scenario, shared by every strategy
    copula   [[correlations]]: each correlated quantity's copula row (addresses, weights)
    costs    the cost arrays from [costs]
    jobs     the job-mix arrays from [[demand.jobs]]
    demand   the demand curve's points, growth quantities and medians
    contingency   contingent strategies: the rows a decision chooses between, and on what
    integration  install teams and burn-in bays: the nodes that wait for one, and their slots
    window   the metrics' window with a status: the future [as_of, horizon), the history
    conditioning  a status's facts on dates and durations: every world quantity drawn from its
             posterior (shared terms on a grid, the rest exactly given them)
    posterior     the grid posterior of one quantity as a quantile table (KIND_TABLE)
    activities    a status's facts on units and rows: strategies from today, burn-in histories,
             early failures, node pins and floors

No I/O and no simulation: the backends take a CompiledScenario and nothing else.
"""
