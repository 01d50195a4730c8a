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

A bad --dask value fails fast, with one sentence and nothing left running. check_address
refuses a malformed one before anything runs (no scheme, host or port Dask could reach), and
a `local:N` this machine cannot hold: more workers than cores (they would only take turns on
the same cores, and starting them can outlast Dask's start-up wait) or than its memory
holds. Before a client is made, probe_scheduler asks the address what it is, within
CONNECT_TIMEOUT_S in all: a refused connection or an unknown host fails at once, and an
endpoint that is not a Dask scheduler (a silent port, a web server, a Dask worker) is named
as such. Dask's own client would wait forever for a handshake that never comes, read another
protocol's bytes as a length (MemoryError), and leave a half-made client whose finalizer
prints a traceback on the way out.
"""
from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
import re
import socket
import threading
import time
from collections import deque
from typing import Iterator

from .. import __version__
from . import select_backend
from .chunks import MEMORY_SHARE, physical_memory
from ..core.errors import McriskError
from ..core.stops import signals_held

LOCAL = "local:"
CONNECT_TIMEOUT_S = 5             # the most a scheduler's address may take to answer as one
IN_FLIGHT_PER_WORKER = 2          # chunks computed or waiting per worker: memory stays bounded
PREPARED_KEPT = 4                 # plans whose prepared backend a worker keeps
INSTALL_FIX = "install it with: pip install 'mcrisk[dask]'"
# A local worker process: the interpreter with NumPy, Numba, Dask and mcrisk (0.2 GB measured
# after a run of the minimal scenario) and its chunks in flight (0.09 GB each at 65,536
# scenarios of the reference).
LOCAL_WORKER_BYTES = 500_000_000
SCHEMES = ("tcp", "tls", "ws", "wss", "ucx")      # the protocols a scheduler listens on
STREAM_SCHEMES = ("tcp", "tls", "ws", "wss")      # ... those over a TCP connection
ADDRESS_FORM = ("a running scheduler's tcp://HOST:PORT (e.g. tcp://10.0.0.5:8786), or local:N "
                "for a local cluster of N worker processes")
REACH_FIX = "start it with `dask scheduler`, check the address, or use --dask local:N"
# [SCHEME://]HOST:PORT, the host a name, an IPv4 address or a bracketed IPv6 address
_ADDRESS = re.compile(r"(?:[^:/]*://)?(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+)"
                      r"(?::(?P<port>\d+))?")

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


def usable_cores() -> int:
    """The cores this process may run on (its affinity where the OS says, else all)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


def check_address(address: str, cores: int | None = None, memory: int | None = None) -> None:
    """Refuse at once, with a McriskError saying why, a --dask value that names nothing Dask
    could reach (module docstring) or a `local:N` this machine cannot hold: more workers
    than `cores` (default: usable_cores) or than `memory` bytes (default: this machine's)
    hold at LOCAL_WORKER_BYTES each. Reaches no network and imports no Dask."""
    if address.startswith(LOCAL):
        _check_local(address, cores, memory)
        return
    _, _, port = _address_parts(address)
    if not 1 <= port <= 65535:
        raise McriskError(f"--dask = {address}: port {port} is not a port (1 to 65535)")


def _check_local(address: str, cores: int | None, memory: int | None) -> None:
    text = address[len(LOCAL):]
    if not text.isdigit() or int(text) < 1:
        raise McriskError(f"--dask = {address}: local:N needs a worker count N >= 1 "
                          f"(e.g. local:2)")
    workers = int(text)
    cores = usable_cores() if cores is None else cores
    if workers > cores:
        raise McriskError(
            f"--dask = {address}: more workers than this machine's {cores} "
            f"core{'s' if cores != 1 else ''}; a local cluster runs at most one worker process "
            f"per core (each computes one chunk at a time, so more would only take turns on "
            f"the same cores, and starting {workers} can outlast Dask's start-up wait): use "
            f"local:{cores} or fewer, or a cluster's scheduler address")
    memory = physical_memory() if memory is None else memory
    if memory is not None and workers * LOCAL_WORKER_BYTES > MEMORY_SHARE * memory:
        fits = max(1, int(MEMORY_SHARE * memory // LOCAL_WORKER_BYTES))
        raise McriskError(
            f"--dask = {address}: {workers} worker processes need about "
            f"{workers * LOCAL_WORKER_BYTES / 1e9:,.1f} GB of memory (about "
            f"{LOCAL_WORKER_BYTES / 1e9:.1f} GB each: an interpreter with NumPy, Numba and "
            f"Dask, and its chunks in flight) and this machine has {memory / 1e9:,.1f} GB: use "
            f"local:{fits} or fewer, or a cluster's scheduler address")


def _address_parts(address: str) -> tuple[str, str, int]:
    """(scheme, host, port) of a scheduler's address (scheme tcp when none is written), or a
    McriskError saying what is wrong with it."""
    match = _ADDRESS.fullmatch(address)
    scheme = address.split("://", 1)[0] if "://" in address else "tcp"
    if scheme in ("http", "https"):
        raise McriskError(f"--dask = {address}: a web address (the dashboard's?), not a "
                          f"scheduler's; give {ADDRESS_FORM}")
    if scheme == "inproc":
        raise McriskError(f"--dask = {address}: inproc:// reaches only a scheduler inside "
                          f"this process; give {ADDRESS_FORM}")
    if scheme not in SCHEMES:
        raise McriskError(f"--dask = {address}: unknown protocol {scheme!r} (Dask's are "
                          f"{', '.join(s + '://' for s in SCHEMES)}); give {ADDRESS_FORM}")
    if not match:
        raise McriskError(f"--dask = {address}: not a Dask scheduler's address; give "
                          f"{ADDRESS_FORM}")
    if match.group("port") is None:
        raise McriskError(f"--dask = {address}: no port; a scheduler listens on 8786 unless "
                          f"told otherwise (e.g. --dask {scheme}://{match.group('host')}:8786)")
    return scheme, match.group("host"), int(match.group("port"))


def probe_scheduler(distributed, address: str, seconds: float | None = None) -> None:
    """Make sure a Dask scheduler answers at `address` within `seconds` (CONNECT_TIMEOUT_S)
    in all, or raise a McriskError naming what answers instead: nothing (a refused
    connection, an unknown host: at once), a silent endpoint, another protocol, a worker."""
    seconds = CONNECT_TIMEOUT_S if seconds is None else seconds
    deadline = time.monotonic() + seconds
    scheme, host, port = _address_parts(address)
    where = f"{host}:{port}"
    if scheme in STREAM_SCHEMES:
        _connects(address, host.strip("[]"), port, seconds, deadline)
    try:
        identity = _identity(distributed, address, deadline)
    except TimeoutError:
        raise McriskError(
            f"--dask = {address}: {where} accepts connections but did not answer as a Dask "
            f"scheduler within {seconds:g} s (another service there? a scheduler listens on "
            f"8786 unless told otherwise, its dashboard on 8787); {REACH_FIX}") from None
    except Exception:       # another protocol's bytes, read as Dask's: MemoryError, say
        raise McriskError(
            f"--dask = {address}: {where} answers, but not as a Dask scheduler (what it sent "
            f"is not Dask's protocol: a web server? a proxy?); {REACH_FIX}") from None
    kind = identity.get("type") if isinstance(identity, dict) else None
    if kind != "Scheduler":
        what = f"a Dask {kind.lower()}" if isinstance(kind, str) else "not a Dask server"
        raise McriskError(
            f"--dask = {address}: {where} is {what}, not the scheduler; give the scheduler's "
            f"address (the one its workers were started with: dask worker tcp://HOST:8786)")


def _connects(address: str, host: str, port: int, seconds: float, deadline: float) -> None:
    """A TCP connection to host:port before `deadline`, or a McriskError saying why not. In a
    daemon thread: a name lookup that hangs is left behind, not waited for."""
    outcome: list[BaseException | None] = []

    def connect() -> None:
        try:
            socket.create_connection((host, port),
                                     timeout=max(0.01, deadline - time.monotonic())).close()
            outcome.append(None)
        except BaseException as error:        # handed to the caller, which raises it
            outcome.append(error)

    attempt = threading.Thread(target=connect, name="mcrisk-dask-probe", daemon=True)
    attempt.start()
    attempt.join(max(0.0, deadline - time.monotonic()))
    error = outcome[0] if outcome else TimeoutError()
    if error is None:
        return
    if isinstance(error, socket.gaierror):
        why = f"the host {host!r} is not known ({error.strerror or error})"
    elif isinstance(error, ConnectionRefusedError):
        why = f"nothing listens at {host}:{port} (connection refused)"
    elif isinstance(error, TimeoutError):
        why = f"no answer from {host}:{port} within {seconds:g} s"
    else:
        why = f"{host}:{port}: {getattr(error, 'strerror', None) or error}"
    raise McriskError(f"--dask = {address}: could not reach the Dask scheduler: {why} "
                      f"({REACH_FIX})")


def _identity(distributed, address: str, deadline: float):
    """What the server at `address` says it is (Dask's handshake, then its `identity`), read
    before `deadline` (TimeoutError after it), on an event loop of its own."""
    from distributed.comm import connect

    async def ask():
        comm = await connect(address, timeout=max(0.01, deadline - time.monotonic()),
                             **distributed.Security().get_connection_args("client"))
        try:
            await comm.write({"op": "identity", "reply": True})
            return await comm.read()
        finally:
            comm.abort()

    loop = asyncio.new_event_loop()
    try:
        return loop.run_until_complete(
            asyncio.wait_for(ask(), max(0.01, deadline - time.monotonic())))
    except asyncio.TimeoutError:
        raise TimeoutError from None
    finally:
        loop.close()


@contextlib.contextmanager
def dask_session(address: str | None) -> Iterator[DaskSession | None]:
    """A DaskSession on `address` (`local:N`: a local cluster of N worker processes, closed
    at the end), None when `address` is None. The chunks it retried stay counted on the
    session after it closes (retried_chunks: the CLI prints them, summary.json records them).
    An open DaskSession is used as it is and left open (nightly holds one for its report's
    replays, after run_scenario returns). A bad address is a McriskError within
    CONNECT_TIMEOUT_S (check_address, probe_scheduler)."""
    if address is None or isinstance(address, DaskSession):
        yield address
        return
    check_address(address)
    distributed = _import_distributed()
    local = address.startswith(LOCAL)
    if not local:
        probe_scheduler(distributed, address)
    cluster = _local_cluster(distributed, address) if local else None
    try:
        client = _connect(distributed, cluster if cluster is not None else address, address)
        try:
            check_versions(client, address)
            session = DaskSession(client, address)
            yield session
        finally:
            with signals_held():     # a client closed half way closes again for 20 s at exit
                client.close()
    finally:
        if cluster is not None:
            with signals_held():     # ... and a cluster half way leaves worker processes
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
    workers = int(address[len(LOCAL):])            # check_address has checked it
    try:
        return distributed.LocalCluster(n_workers=workers, threads_per_worker=1,
                                        processes=True, dashboard_address=None,
                                        silence_logs=logging.ERROR,
                                        env={"NUMBA_NUM_THREADS": str(worker_threads(workers))})
    except (OSError, RuntimeError, TimeoutError) as error:
        raise McriskError(f"--dask = {address}: the local cluster's {workers} worker "
                          f"process{'es' if workers != 1 else ''} did not start "
                          f"({type(error).__name__}: {error}); try fewer workers, or run "
                          f"without --dask") from None


def _connect(distributed, target, address: str):
    """A client of the scheduler (or local cluster) `target`, which probe_scheduler found
    answering; a McriskError when it cannot connect within CONNECT_TIMEOUT_S after all."""
    try:
        return distributed.Client(target, timeout=CONNECT_TIMEOUT_S,
                                  set_as_default=False)
    except (OSError, TimeoutError, ValueError, ImportError) as error:
        raise McriskError(f"--dask = {address}: could not reach the Dask scheduler within "
                          f"{CONNECT_TIMEOUT_S} s ({error}) ({REACH_FIX})") from None


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
