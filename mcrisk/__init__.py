"""mcrisk: Monte Carlo risk engine for moving a live GPU cluster to a new GPU generation.

The packages are the stages of the pipeline, bottom to top; each imports only its own floor
or lower ones, and no import circles back (tests/test_layers.py):

    core      what every stage agrees on: metric and cost definitions, labels, errors, the
              random stream, distributions, the validated model, the risk register, progress,
              safe file writing, the threads a chunk's reduction shares, the Numba compile
              policy
    scenario  a TOML scenario file read and validated into core.model.Scenario
    plan      the scenario compiled to flat arrays, the only thing the kernels see
    backends  NumPy, Numba and CUDA simulate chunks of scenarios; the chunk loop; Dask
    results   statistics of the per-scenario results: summaries, ranking, paired tests,
              milestones, capacity bands, drivers, costs, the job mix
    report    the files a run writes: Parquet tables, report.html, summary.md, figures,
              findings, the nightly's comparisons
    app       what runs things end to end: run, compare, schedule, nightly (never prints)
    optimize  the search over sequencing plans (`mcrisk optimize`)
    cli       the command line, the only printer
    schema    JSON Schemas of summary.json and optimize.json (data files)
    __main__  `python -m mcrisk`

The CUDA sources live in the repository's kernels/ folder and ship as mcrisk.kernels.
"""
__version__ = "0.1.0"
