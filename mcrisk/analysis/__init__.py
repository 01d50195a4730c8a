"""Statistics over a run's per-scenario results, for summary.json and the report.

    ranking     strategies best first, differences within Monte Carlo noise as ties
    paired      the paired tests on common random numbers that ranking and the nightly use
    compare     two strategies paired scenario by scenario (mcrisk compare, and each strategy
                against the leader in the report)
    drivers     which uncertain inputs drive each P90
    horizon     which strategies often complete after the horizon, and what would cover them
    mitigation  the risk register as run, and the paired value of mitigation
    precision   when every P90 is known well enough, and how many scenarios to try next
    device_summary  aggregate.summarize's document in NumPy or CuPy (on the GPU's metrics)
    milestone_chunks  one chunk of milestone times and critical paths, in compiled loops
    chunk_tasks  the threads the chunk hooks share (pieces of one chunk side by side)

Nothing here simulates, reads a scenario file or writes a file: the run (mcrisk.run and the
*_run modules above it) calls in with the results.
"""
