"""What a run streams while it simulates: metrics.parquet, the capacity/power reductions and
the milestones.

Performance: one chunk hook runs them side by side on the threads of core.tasks
(the Parquet writer, the bands and the milestones release the GIL in their heavy parts)."""
from __future__ import annotations

import queue
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..backends.buffers import ChunkBuffers
from ..backends.chunks import WRITER_DEPTH
from ..core.tasks import Background, run_tasks
from ..plan.record import CompiledScenario
from ..results.jobs import scenario_job_columns
from ..results.milestones import MilestoneCollector
from ..core.outputs import with_filename
from ..results.bands import BandCollector, CapacityBands, HallPower
from ..report.schedule_tables import MILESTONES_FILE, write_milestones_parquet
from ..report.tables import BANDS_FILE, METRICS_FILE, MetricsWriter, write_bands


@dataclass(frozen=True)
class RunDetail:
    """Streamed detail the report needs beyond summary.json."""

    bands: CapacityBands
    hall_power: dict[str, list[HallPower]]
    milestones: dict | None = None      # summary.json's `milestones` (mcrisk.results.milestones)


COLLECT_MILESTONES = True   # benchmarks/bench_milestones.py switches it off to time the cost


class RunCollector:
    """Chunk hooks for simulate(); a context manager that drops the temp file on failure.

        with RunCollector(plan, out) as collect:
            simulate(..., chunk_hooks=collect.hooks)
            paths, detail = collect.commit()
    """

    def __init__(self, plan: CompiledScenario, out_dir: Path, scenario=None,
                 status: dict | None = None, write_metrics: bool = True):
        """`status`: a run with a status has its block (summary.json's `status`), which
        metrics.parquet's metadata records and by which milestones reached by as_of show
        their actual day; None: neither. `write_metrics` False: no metrics.parquet (a run
        over the row budget, mcrisk.core.outputs.metrics_parquet_entry); the rest as ever."""
        self.out_dir = Path(out_dir)
        self.metrics_path = self.out_dir / METRICS_FILE
        self.metrics = (MetricsWriter(plan, self.metrics_path, scenario_job_columns(scenario),
                                      status=status) if write_metrics else None)
        self.bands = BandCollector(plan)
        as_of = status["as_of"] if status is not None else None
        self.milestones = (MilestoneCollector(plan, scenario, as_of=as_of)
                           if scenario is not None and COLLECT_MILESTONES else None)
        self.hooks = (self._chunk,)
        self._writing = Background(depth=WRITER_DEPTH, name="mcrisk-metrics")
        # the writer's buffers (mcrisk.backends.buffers): a set per chunk in its queue, each
        # reused chunk after chunk instead of fresh pages the OS zeroes every time
        self._spare: queue.SimpleQueue = queue.SimpleQueue()
        for _ in range(WRITER_DEPTH):
            self._spare.put(ChunkBuffers())
        self._committed = False
        self._committing: Background | None = None
        self._commit_result: list = []

    def __enter__(self) -> "RunCollector":
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if self._committing is not None:
            self._committing.cancel()       # a commit under way ends before anything else
        if not self._committed and self.metrics is not None:
            try:
                self._writing.cancel()
            finally:
                self.metrics.abort()

    def _chunk(self, first, metrics, world, node_times) -> None:
        """The one chunk hook: the milestones and the bands (a task per strategy each) as
        one batch of tasks on the same threads, the longest first, while metrics.parquet's
        rows are written behind (core.tasks.Background, from copies: the chunk's arrays are
        the next chunk's); returns when the batch is done, raising the first failure (the
        writer's at the next chunk or at commit).

        Performance: one batch, not the bands' tasks and then the milestones', so that no
        thread waits at a barrier between the two while the other finishes a task; the
        longest first (a strategy's milestones, ~0.15 CPU-s a 65,536-scenario chunk of the
        reference, then its bands, ~0.08 s), so that the last task to finish is a short
        one. The writer (~0.3 CPU-s a chunk) is waited for only at commit, after the
        summaries (single-threaded) have run beside it."""
        if self.metrics is not None:
            spare = self._spare.get()       # a free set: one comes back as each write ends
            try:
                copies = (spare.empty("metrics", metrics.shape), spare.empty("world",
                                                                             world.shape))
                np.copyto(copies[0], metrics)
                np.copyto(copies[1], world)
                self._writing.put(self._write_metrics, first, *copies, spare)
            except BaseException:
                self._spare.put(spare)
                raise
        tasks = []
        if self.milestones is not None:
            tasks += self.milestones.tasks(first, metrics, world, node_times)
        tasks += self.bands.tasks(first, metrics, world, node_times)
        run_tasks(tasks)

    def _write_metrics(self, first, metrics, world, spare) -> None:
        """One chunk's rows of metrics.parquet from the copies in `spare` (its columns built
        there too), which it then frees; an OSError (a full disk) names the file."""
        try:
            self.metrics(first, metrics, world, None, spare)
        except OSError as error:
            raise with_filename(error, self.metrics_path) from None
        finally:
            self._spare.put(spare)

    def commit_behind(self) -> None:
        """Begin commit() on a thread of its own (core.tasks.Background), for
        committed() to return: the bands', hall peaks' and milestones' summaries and the
        three tables written while the caller summarizes the run.

        Performance: the 64x reference at 20,000 scenarios spends 0.66 s in commit and 2.3 s
        summarizing, one after the other on one thread before."""
        self._committing = Background(depth=1, name="mcrisk-commit")
        self._committing.put(lambda: self._commit_result.append(self.commit()))

    def committed(self) -> tuple[list[Path], RunDetail]:
        """commit()'s result, once the commit begun by commit_behind is done (its error
        raised here)."""
        self._committing.finish()
        return self._commit_result[0]

    def commit(self) -> tuple[list[Path], RunDetail]:
        """Rename metrics.parquet (when written) into place, write capacity_bands.parquet (and
        milestones.parquet when milestones were collected); the paths and the RunDetail."""
        detail = RunDetail(self.bands.bands(), self.bands.hall_power(),
                           self.milestones.summary() if self.milestones is not None else None)
        try:
            if self.metrics is not None:
                self._writing.finish()
            paths = [self.metrics.commit()] if self.metrics is not None else []
        except OSError as error:
            raise with_filename(error, self.metrics_path) from None
        self._committed = True
        paths.append(write_bands(self.out_dir / BANDS_FILE, detail.bands))
        if detail.milestones is not None:
            paths.append(write_milestones_parquet(self.out_dir / MILESTONES_FILE,
                                                  detail.milestones))
        return paths, detail
