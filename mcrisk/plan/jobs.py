"""The job-mix arrays of the compiled plan (plan.record's `jobs` group) from [[demand.jobs]].

A job mix adds 1 + J columns after the metrics and the cost columns
(definitions.job_columns): unservable_gpu_days, then homeless_days.<id> per class in file
order. The kernels pack the classes in `job_order` (largest size first, ties in file order:
docs/metrics.md gives the rule) on cells of `job_step` days. Without a mix the plan says
n_job_cols = 0 and holds one placeholder class the kernels never read.
"""
from __future__ import annotations

import numpy as np

from ..core.definitions import job_columns
from ..core.model import Scenario


def job_arrays(scenario: Scenario) -> dict:
    """The plan's job fields: n_job_cols, job_size, job_share, job_order, job_step."""
    jobs = scenario.demand.jobs
    if not jobs:
        return dict(n_job_cols=0, job_size=np.zeros(1), job_share=np.zeros(1),
                    job_order=np.zeros(1, dtype=np.int32),
                    job_step=float(scenario.demand.packing_step_days))
    sizes = [job.size for job in jobs]
    # largest first; sorted() is stable, so equal sizes keep their file order
    order = sorted(range(len(jobs)), key=lambda j: -sizes[j])
    return dict(n_job_cols=len(job_columns(job.id for job in jobs)),
                job_size=np.array(sizes, dtype=np.float64),
                job_share=np.array([job.share for job in jobs], dtype=np.float64),
                job_order=np.array(order, dtype=np.int32),
                job_step=float(scenario.demand.packing_step_days))
