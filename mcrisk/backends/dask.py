"""The kernel's chunks run on Dask workers (issue 16: run, compare, schedule, nightly, optimize).

Dask is only a place to run chunks: every chunk is a task, a pure function of the plan, the
seed, the first scenario, the count and the backend's name (the draws are addressed by
scenario index), so a task retried after a lost worker gives the same arrays. The client
keeps at most IN_FLIGHT_PER_WORKER tasks per worker in flight (memory) and consumes the
results in scenario order (DaskBackend.chunks, which mcrisk.backends.chunks's chunk loop uses in
place of calling simulate_chunk itself), running the same chunk hooks as an in-process run:
summary.json, every Parquet table and the report are the same for any number of workers and
any chunk size.

Each worker prepares the plan's kernel once (compiles it or loads it from Numba's cache) and
keeps it, keyed by the plan's Dask token. Each chunk task carries the plan itself (a
scattered plan lost with its worker made the tasks that needed it fail).
`dask_session` opens the client (`local:N`, a local cluster of N worker processes, or the
address of an existing scheduler), checks that every worker runs this mcrisk version, and
counts the chunks that ran more than once (a lost worker's) from the scheduler's transition
log; the CLI prints that count after the run and summary.json records it (`dask`, see
dask_entry). A local cluster's workers get cores // N Numba threads each (worker_threads),
so N workers running the numba backend do not oversubscribe the cores. Errors are
McriskError naming --dask and the fix.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import os
from collections import deque
from typing import Iterator

from .. import __version__
from . import select_backend
from ..core.errors import McriskError

LOCAL = "local:"
CONNECT_TIMEOUT_S = 10
IN_FLIGHT_PER_WORKER = 2          # chunks computed or waiting per worker: memory stays bounded
PREPARED_KEPT = 4                 # plans whose prepared backend a worker keeps
INSTALL_FIX = "install it with: pip install 'mcrisk[dask]'"

_PREPARED: dict = {}              # on a worker: (plan token, backend name) -> prepared Backend


def _worker_backend(plan, token: str, name: str):
    """On a worker: the backend `name` prepared for `plan`, prepared once and kept."""
    key = (token, name)
    backend = _PREPARED.get(key)
    if backend is None:
        backend = select_backend(name)
        backend.prepare(plan)
        while len(_PREPARED) >= PREPARED_KEPT:
            _PREPARED.pop(next(iter(_PREPARED)))
        _PREPARED[key] = backend
    return backend


def _chunk_task(plan, token: str, name: str, seed: int, first: int, count: int,
                keep_nodes: bool):
    """On a worker: one chunk's (metrics, world, node_times), as Backend.simulate_chunk."""
    return _worker_backend(plan, token, name).simulate_chunk(plan, seed, first, count,
                                                             keep_nodes)


def _prepare_on_worker(plan, token: str, name: str) -> None:
    """On a worker (client.run): the plan's kernel ready before the first chunk arrives."""
    _worker_backend(plan, token, name)


def _backend_identity(plan, token: str, name: str) -> tuple[str, str]:
    """On a worker: the name and reason of the backend `name` resolves to there (auto)."""
    backend = _worker_backend(plan, token, name)
    return backend.name, backend.reason


class DaskBackend:
    """A Backend whose chunks run on the session's workers. Its name and reason are those of
    the backend the workers chose, so a run's summary.json reads as an in-process run's."""

    def __init__(self, session: "DaskSession", requested: str):
        self.session = session
        self.requested = requested
        self.name = requested
        self.reason = "requested"
        self._tokens: dict[int, tuple] = {}        # id(plan) -> (plan, its Dask token)

    def prepare(self, plan) -> None:
        """Prepare the plan's kernel on every worker (once)."""
        token = self._token(plan)
        self.session.client.run(_prepare_on_worker, plan, token, self.requested)
        future = self.session.client.submit(_backend_identity, plan, token,
                                            self.requested, pure=False)
        self.name, self.reason = future.result()

    def simulate_chunk(self, plan, seed, first, count, keep_nodes=False):
        """One chunk computed on a worker (the report's replay of a single scenario)."""
        return next(self.chunks(plan, seed, first, count, count, keep_nodes))[1]

    def chunks(self, plan, seed: int, first: int, samples: int, chunk_size: int,
               keep_nodes: bool) -> Iterator[tuple[int, tuple]]:
        """(first scenario, (metrics, world, node_times)) of every chunk of scenarios
        first .. first + samples - 1, in scenario order, computed on the workers."""
        client = self.session.client
        token = self._token(plan)          # the plan travels in each task (module doc)
        spans = iter([(first + offset, min(chunk_size, samples - offset))
                      for offset in range(0, samples, chunk_size)])
        call = next(self.session.calls)
        keys = []
        pending: deque = deque()

        def submit_next() -> None:
            span = next(spans, None)
            if span is not None:
                key = f"mcrisk-chunk-{token}-{call}-{span[0]}"
                keys.append(key)
                pending.append((span[0], client.submit(
                    _chunk_task, plan, token, self.requested, seed, *span, keep_nodes,
                    key=key)))

        for _ in range(IN_FLIGHT_PER_WORKER * self.session.workers()):
            submit_next()
        try:
            while pending:
                start, future = pending.popleft()
                arrays = future.result()
                future.release()
                submit_next()
                yield start, arrays
        finally:
            for _, future in pending:
                future.cancel()
            self.session.count_retries(keys)

    def _token(self, plan) -> str:
        """The plan's Dask token (the workers' cache key), computed once per plan."""
        entry = self._tokens.get(id(plan))
        if entry is None or entry[0] is not plan:
            from dask.base import tokenize

            entry = self._tokens[id(plan)] = (plan, tokenize(plan))
        return entry[1]


class DaskSession:
    """A connected client: backends on its workers, and the chunks retried so far."""

    def __init__(self, client, address: str):
        self.client = client
        self.address = address
        self.retried = 0
        self.calls = itertools.count()

    def entry(self) -> dict:
        """summary.json's `dask` key: where the chunks ran and how many were retried."""
        return {"scheduler": self.address, "workers": self.workers(),
                "retried_chunks": self.retried}

    def backend(self, name: str, plan) -> DaskBackend:
        """The backend `name` on the workers, prepared for `plan`."""
        chosen = DaskBackend(self, name)
        chosen.prepare(plan)
        return chosen

    def workers(self) -> int:
        return max(1, len(self.client.scheduler_info().get("workers", {})))

    def count_retries(self, keys: list[str]) -> None:
        """Add the chunks of `keys` that the scheduler started more than once."""
        def started_twice(dask_scheduler=None, keys=()):   # by value: the scheduler need
            wanted, seen, twice = set(keys), set(), set()   # not have mcrisk
            for entry in dask_scheduler.transition_log:
                if entry[0] in wanted and entry[2] == "processing":
                    (twice if entry[0] in seen else seen).add(entry[0])
            return len(twice)

        if keys:
            self.retried += self.client.run_on_scheduler(started_twice, keys=keys)


def retried_text(retried: int) -> str:
    return f"retried {retried} chunk{'s' if retried != 1 else ''} after a lost worker"


def dask_entry(backend) -> dict | None:
    """summary.json's `dask` entry of a run on `backend`: DaskSession.entry for a DaskBackend,
    None for a backend in this process."""
    session = getattr(backend, "session", None)
    return session.entry() if isinstance(session, DaskSession) else None


def retried_chunks(backend) -> int:
    """The chunks retried after a lost worker in the run on `backend` (0 in one process);
    readable after the session closed."""
    session = getattr(backend, "session", None)
    return session.retried if isinstance(session, DaskSession) else 0


def worker_threads(workers: int, cores: int | None = None) -> int:
    """Numba threads for each of `workers` local workers: the cores shared out, at least 1."""
    cores = cores if cores is not None else (os.cpu_count() or 1)
    return max(1, cores // workers)


@contextlib.contextmanager
def dask_session(address: str | None) -> Iterator[DaskSession | None]:
    """A DaskSession on `address` (`local:N`: a local cluster of N worker processes, closed
    at the end), None when `address` is None. The chunks it retried stay counted on the
    session after it closes (retried_chunks: the CLI prints them, summary.json records them).
    An open DaskSession is used as it is and left open (nightly holds one for its report's
    replays, after run_scenario returns)."""
    if address is None or isinstance(address, DaskSession):
        yield address
        return
    distributed = _import_distributed()
    cluster = _local_cluster(distributed, address) if address.startswith(LOCAL) else None
    try:
        client = _connect(distributed, cluster if cluster is not None else address, address)
        try:
            check_versions(client, address)
            session = DaskSession(client, address)
            yield session
        finally:
            client.close()
    finally:
        if cluster is not None:
            cluster.close()


def _import_distributed():
    try:
        import distributed
    except ImportError:
        raise McriskError(f"--dask: dask.distributed is not installed ({INSTALL_FIX})") \
            from None
    return distributed


def _local_cluster(distributed, address: str):
    """A local cluster of N worker processes for `local:N`: one Dask thread each (a chunk
    at a time) and worker_threads(N) Numba threads each, so that the numba backend's
    parallel kernel uses the cores once, not N times over."""
    text = address[len(LOCAL):]
    if not text.isdigit() or int(text) < 1:
        raise McriskError(f"--dask = {address}: local:N needs a worker count N >= 1 "
                          f"(e.g. local:2)")
    workers = int(text)
    return distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                    processes=True, dashboard_address=None,
                                    silence_logs=logging.ERROR,
                                    env={"NUMBA_NUM_THREADS": str(worker_threads(workers))})


def _connect(distributed, target, address: str):
    """A client of the scheduler (or local cluster) `target`; a McriskError when it cannot
    be reached within CONNECT_TIMEOUT_S."""
    try:
        return distributed.Client(target, timeout=CONNECT_TIMEOUT_S,
                                  set_as_default=False)
    except (OSError, TimeoutError, ValueError) as error:
        raise McriskError(f"--dask = {address}: could not reach the Dask scheduler within "
                          f"{CONNECT_TIMEOUT_S} s ({error}) (start it with `dask scheduler`, "
                          f"check the address, or use --dask local:N)") from None


def check_versions(client, address: str) -> None:
    """Every worker must run this mcrisk version (the same draws and kernels)."""
    def version():                      # by value: a worker without mcrisk can run it
        try:
            import mcrisk
        except ImportError:
            return None
        return mcrisk.__version__

    found = client.run(version)
    wrong = {worker: got for worker, got in found.items() if got != __version__}
    if wrong:
        worker, got = next(iter(sorted(wrong.items())))
        what = "does not have mcrisk" if got is None else f"runs mcrisk {got}"
        raise McriskError(f"--dask = {address}: worker {worker} {what}, this client runs "
                          f"mcrisk {__version__} ({len(wrong)} of {len(found)} workers "
                          f"differ: install mcrisk {__version__} on every worker)")
