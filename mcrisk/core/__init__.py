"""The foundation every stage reads: names, numbers and rules defined once.

    definitions  the metrics, cost columns, quantity and node kinds, tolerances, and the
                 formulas the kernels share with the report (demand, event sizes)
    labels       every column's label and unit (metrics, costs, job columns): the one table
                 the terminal, the report, the findings and optimize read
    errors       errors a user can act on (the CLI prints them)
    rng          the random stream: Philox4x32-10 with every draw at an address
    distributions  distributions as functions of uniforms: encoding and the NumPy reference
    copula       rank correlations between quantities: the Gaussian copula's groups, weights
                 and the NumPy reference of a correlated draw
    quantities   what each world quantity is about (section, subject, part)
    model        the validated scenario as frozen dataclasses
    status       the validated status of a migration in flight: what happened by a day
    facts        the facts of a status that change the scenario itself (risks, performance)
    risks        the risk register as a run uses it (on, off, pre- or post-mitigation)
    progress     named phases a run reports through, for the CLI to show
    outputs      writing files and output folders atomically
    stops        how a stop (Ctrl-C, SIGTERM) unwinds the program, wherever it lands
    tasks        the threads side-by-side pieces of one chunk's reduction share
    jit          how mcrisk compiles with Numba: the options and the shared on-disk cache

Nothing here imports any other stage of mcrisk.
"""
