"""mcrisk on Dask (mcrisk.backends.dask): the same numbers and files as one process, for a local
cluster of 2 worker processes and two chunk sizes, for run, run --precision, compare, schedule,
nightly and optimize; a worker killed mid-run (run, compare, schedule) is survived and the
retry counted, printed by the CLI (stderr, even with --quiet) and recorded in summary.json's
(and optimize.json's) `dask`; a local cluster's Numba threads share the cores; the located
errors, each fast and in one line: a malformed address at once, one nobody answers within
seconds, one that speaks another protocol or is a worker's named as such, a local cluster
larger than the machine refused up front. Skipped when dask.distributed is not installed."""
from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time

import numpy as np
import pyarrow.parquet as pq
import pytest

from mcrisk.cli import main
from mcrisk.core.errors import McriskError

from ..helpers import ROOT, schema_errors

distributed = pytest.importorskip("distributed")
pytestmark = pytest.mark.dask

from mcrisk.backends import select_backend  # noqa: E402
from mcrisk.plan.compile import compile_scenario  # noqa: E402
from mcrisk.backends.dask import dask_session, worker_threads  # noqa: E402
from mcrisk.app.run import load_for_run, run_scenario  # noqa: E402
from mcrisk.backends.chunks import simulate  # noqa: E402

SCENARIO = "scenarios/minimal.toml"
VARYING = {"wall_seconds", "created_utc"}


def _without_clock(summary: dict) -> dict:
    return {key: value for key, value in summary.items() if key not in VARYING}


def test_a_local_cluster_gives_the_files_of_one_process(tmp_path):
    # two task sizes; each against the one-process run at that chunk size (every output is
    # also independent of the chunk size: tests/backends/test_chunks.py)
    for chunk_size in (128, 700):
        alone = run_scenario(SCENARIO, samples=900, backend="numpy", report=False,
                             out_dir=tmp_path / f"alone-{chunk_size}", chunk_size=chunk_size)
        out = tmp_path / f"dask-{chunk_size}"
        remote = run_scenario(SCENARIO, samples=900, backend="numpy", out_dir=out,
                              chunk_size=chunk_size, report=False, dask="local:2")
        expected = _without_clock(json.loads((alone.out_dir / "summary.json").read_text()))
        summary = json.loads((out / "summary.json").read_text())
        assert schema_errors(summary) == []
        assert summary.pop("dask") == {"scheduler": "local:2", "workers": 2,
                                       "retried_chunks": 0}
        assert _without_clock(summary) == expected
        tables = sorted(p.name for p in alone.out_dir.glob("*.parquet"))
        assert len(tables) >= 2
        for table in tables:
            assert pq.read_table(out / table).equals(pq.read_table(alone.out_dir / table)), table
        assert np.array_equal(remote.result.metrics, alone.result.metrics)


def _kill_once_plugin(flag: str, at: str = "-400"):
    """A worker plugin that kills its worker process (os._exit) when it starts the chunk
    whose key ends with `at`, once (the file `flag` says it happened)."""
    from distributed.diagnostics.plugin import WorkerPlugin

    class KillOnce(WorkerPlugin):
        def transition(self, key, start, finish, **kwargs):
            if finish == "executing" and "mcrisk-chunk" in str(key) \
                    and str(key).endswith(at):
                try:
                    os.close(os.open(flag, os.O_CREAT | os.O_EXCL))
                except FileExistsError:
                    return
                os._exit(1)

    return KillOnce()


def test_a_worker_killed_mid_run_is_survived_and_the_retry_counted(tmp_path):
    flag = str(tmp_path / "killed")
    plan = compile_scenario(load_for_run(SCENARIO).scenario)
    alone = simulate(plan, 1200, 1, select_backend("numpy"), chunk_size=200)
    with dask_session("local:2") as session:
        session.client.register_plugin(_kill_once_plugin(flag))
        remote = simulate(plan, 1200, 1, session.backend("numpy", plan), chunk_size=200)
        assert os.path.exists(flag)           # the worker did die
        assert session.retried >= 1
    assert np.array_equal(remote.metrics, alone.metrics)
    assert np.array_equal(remote.world, alone.world)


def test_the_cli_prints_the_retries_even_quiet_and_summary_json_records_them(
        tmp_path, monkeypatch, capsys):
    import mcrisk.app.run
    from mcrisk.cli import main

    flag = str(tmp_path / "killed")
    real_session = mcrisk.app.run.dask_session

    @contextlib.contextmanager
    def session_that_loses_a_worker(address):
        with real_session(address) as session:
            if session is not None:          # (the in-process run below opens none)
                session.client.register_plugin(_kill_once_plugin(flag))
            yield session

    monkeypatch.setattr(mcrisk.app.run, "dask_session", session_that_loses_a_worker)
    out = tmp_path / "run"
    assert main(["run", SCENARIO, "--samples", "1200", "--chunk-size", "200", "--backend",
                 "numpy", "--no-mitigation", "--quiet", "--out", str(out),
                 "--dask", "local:2"]) == 0
    assert os.path.exists(flag)
    err = capsys.readouterr().err
    summary = json.loads((out / "summary.json").read_text())
    assert schema_errors(summary) == []
    retried = summary["dask"]["retried_chunks"]
    assert retried >= 1
    assert summary["dask"]["scheduler"] == "local:2"
    assert f"mcrisk: retried {retried} chunk" in err and "after a lost worker" in err
    alone = run_scenario(SCENARIO, samples=1200, backend="numpy", report=False,
                         out_dir=tmp_path / "alone", chunk_size=200, mitigation=False)
    assert pq.read_table(out / "metrics.parquet").equals(
        pq.read_table(alone.out_dir / "metrics.parquet"))


def test_a_run_in_one_process_has_no_dask_key_and_prints_no_retries(tmp_path, capsys):
    from mcrisk.cli import main

    out = tmp_path / "run"
    assert main(["run", SCENARIO, "--samples", "50", "--backend", "numpy", "--no-mitigation",
                 "--quiet", "--out", str(out)]) == 0
    assert "dask" not in json.loads((out / "summary.json").read_text())
    assert "retried" not in capsys.readouterr().err


@pytest.mark.parametrize("workers, cores, threads", [(2, 2, 1), (2, 16, 8), (3, 16, 5),
                                                     (4, 2, 1), (1, 8, 8)])
def test_local_workers_share_the_cores_among_their_numba_threads(workers, cores, threads):
    assert worker_threads(workers, cores) == threads


def test_a_local_clusters_workers_get_their_share_of_numba_threads():
    def threads():                            # by value: run on each worker
        import numba
        return os.environ.get("NUMBA_NUM_THREADS"), numba.config.NUMBA_NUM_THREADS

    expected = worker_threads(2)
    with dask_session("local:2") as session:
        found = session.client.run(threads)
    assert sorted(found.values()) == [(str(expected), expected)] * 2


def test_a_scheduler_that_cannot_be_reached_is_a_located_error(monkeypatch):
    import mcrisk.backends.dask as dask_backend

    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(McriskError, match=r"--dask = tcp://127.0.0.1:9: could not reach"):
        with dask_session("tcp://127.0.0.1:9"):
            pass


# ---- a bad --dask value fails fast, in one line (issue 24, item 12) -------------------------

@contextlib.contextmanager
def _server(answer: bytes | None):
    """A TCP server on a free local port that accepts every connection and then sends
    `answer` (another protocol's bytes), or nothing ever (None); yields its address."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    held, stop = [], threading.Event()

    def serve():
        listener.settimeout(0.1)
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except OSError:
                continue
            held.append(connection)
            if answer is not None:
                connection.sendall(answer)

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    try:
        yield f"tcp://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        server.join()
        for connection in held:
            connection.close()
        listener.close()


def _refused_address() -> str:
    """A local port nothing listens on (bound for a moment to find it, then closed)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return f"tcp://127.0.0.1:{probe.getsockname()[1]}"


def _mcrisk_run(address: str, timeout: float = 90) -> tuple[int, str, float]:
    """`python -m mcrisk run` with --dask `address` in a fresh interpreter: (exit status,
    stderr, seconds), where stderr includes what finalizers print on the way out."""
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "mcrisk", "run", SCENARIO, "--samples", "50",
                           "--backend", "numpy", "--quiet", "--dask", address],
                          capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return done.returncode, done.stderr, time.monotonic() - started


def _one_located_line(err: str, address: str) -> None:
    assert err.count("\n") == 1 and err.startswith(f"mcrisk: --dask = {address}: "), err


@pytest.mark.parametrize("address, says", [
    ("foo", "no port; a scheduler listens on 8786"),
    ("tcp://", "not a Dask scheduler's address"),
    ("inproc://x", "reaches only a scheduler inside this process"),
    ("http://host:8787", "a web address (the dashboard's?)"),
    ("tcp://host:99999", "port 99999 is not a port"),
    ("local:0", "local:N needs a worker count"),
])
def test_a_malformed_address_fails_at_once_in_one_located_line(address, says, capsys):
    started = time.monotonic()
    assert main(["run", SCENARIO, "--samples", "50", "--backend", "numpy", "--quiet",
                 "--dask", address]) == 2
    assert time.monotonic() - started < 1.0
    err = capsys.readouterr().err
    _one_located_line(err, address)
    assert says in err


def test_a_malformed_address_leaves_no_finalizer_noise_on_the_way_out():
    # the half-made client of an address Dask could not parse closed itself for 20 s on the
    # way out, printing "Exception ignored in: <function Client.__del__>" and a traceback
    status, err, seconds = _mcrisk_run("foo")
    assert status == 2 and seconds < 10, (seconds, err)
    _one_located_line(err, "foo")


def test_a_refused_port_fails_at_once():
    address = _refused_address()
    started = time.monotonic()
    with pytest.raises(McriskError, match=rf"--dask = {address}: could not reach the Dask "
                                          r"scheduler: nothing listens at"):
        with dask_session(address):
            pass
    assert time.monotonic() - started < 2.0          # Dask's client retried for 10 s


def test_an_endpoint_that_never_answers_fails_within_the_connect_timeout():
    # Dask's client waits for the handshake with no time limit: it hung for good
    from mcrisk.backends.dask import CONNECT_TIMEOUT_S

    with _server(answer=None) as address:
        status, err, seconds = _mcrisk_run(address, timeout=60)
    assert status == 2 and seconds < CONNECT_TIMEOUT_S + 10, (seconds, err)
    _one_located_line(err, address)
    assert f"did not answer as a Dask scheduler within {CONNECT_TIMEOUT_S} s" in err


def test_an_endpoint_speaking_another_protocol_is_named_not_a_memory_error():
    # Dask read the first eight bytes of an HTTP answer as a frame length and tried to
    # allocate 3 EiB for it: MemoryError, with a traceback
    with _server(answer=b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n") as address:
        with pytest.raises(McriskError, match="answers, but not as a Dask scheduler"):
            with dask_session(address):
                pass


def test_a_workers_address_is_named_as_a_worker_not_the_scheduler():
    with dask_session("local:1") as session:
        worker = next(iter(session.client.scheduler_info()["workers"]))
        with pytest.raises(McriskError, match=rf"--dask = {worker}: .* is a Dask worker, not "
                                              r"the scheduler"):
            with dask_session(worker):
                pass


def test_a_local_cluster_beyond_the_cores_is_refused_up_front_saying_why(capsys):
    # local:64 on 2 cores started 64 workers and ended in a timeout that did not say why
    from mcrisk.backends.dask import usable_cores

    address = f"local:{usable_cores() + 1}"
    started = time.monotonic()
    assert main(["run", SCENARIO, "--samples", "50", "--backend", "numpy", "--quiet",
                 "--dask", address]) == 2
    assert time.monotonic() - started < 1.0
    err = capsys.readouterr().err
    _one_located_line(err, address)
    assert f"more workers than this machine's {usable_cores()} core" in err
    assert f"use local:{usable_cores()} or fewer" in err


def test_a_local_cluster_beyond_the_memory_is_refused_saying_how_many_fit():
    from mcrisk.backends.dask import check_address

    check_address("local:8", cores=8, memory=64 * 10**9)            # fits
    with pytest.raises(McriskError, match=r"--dask = local:8: 8 worker processes need about "
                                          r"4.0 GB of memory .* this machine has 2.0 GB: "
                                          r"use local:3 or fewer"):
        check_address("local:8", cores=8, memory=2 * 10**9)


@pytest.mark.parametrize("address", ["local:0", "local:x"])
def test_a_bad_local_worker_count_is_a_located_error(address):
    with pytest.raises(McriskError, match="local:N needs a worker count"):
        with dask_session(address):
            pass


def test_without_distributed_the_error_says_how_to_install(monkeypatch):
    import builtins

    real_import = builtins.__import__

    def no_distributed(name, *args, **kwargs):
        if name == "distributed":
            raise ImportError(name)
        return real_import(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_distributed)
    with pytest.raises(McriskError, match=r"mcrisk\[dask\]"):
        with dask_session("local:1"):
            pass


def test_a_worker_with_another_mcrisk_version_is_a_located_error():
    from mcrisk.backends.dask import check_versions

    class Client:
        def run(self, function):
            return {"tcp://w1:1": function(), "tcp://w2:2": "0.0.1"}

    with pytest.raises(McriskError, match=r"worker tcp://w2:2 runs mcrisk 0.0.1"):
        check_versions(Client(), "tcp://s:8786")


CLOCKS = {"wall_seconds", "created_utc", "seconds"}


def _without_clocks(document):
    """`document` without its clock readings (at any depth): what must equal to the bit."""
    if isinstance(document, dict):
        return {k: _without_clocks(v) for k, v in document.items() if k not in CLOCKS}
    if isinstance(document, list):
        return [_without_clocks(v) for v in document]
    return document


def test_nightly_on_a_local_cluster_writes_the_summary_of_one_process(tmp_path):
    from mcrisk.app.nightly import run_nightly

    alone = run_nightly(SCENARIO, tmp_path / "alone", samples=600, backend="numpy",
                        chunk_size=128)
    remote = run_nightly(SCENARIO, tmp_path / "dask", samples=600, backend="numpy",
                         chunk_size=128, dask="local:2")
    expected = json.loads((alone.folder / "summary.json").read_text())
    summary = json.loads((remote.folder / "summary.json").read_text())
    assert "dask" not in expected
    assert summary.pop("dask") == {"scheduler": "local:2", "workers": 2, "retried_chunks": 0}
    assert _without_clocks(summary) == _without_clocks(expected)
    assert np.array_equal(remote.run.result.metrics, alone.run.result.metrics)


def test_optimize_on_a_local_cluster_finds_the_numbers_of_one_process(tmp_path):
    from mcrisk.optimize.run import run_optimize

    search = "tests/data/optimize-known-search.toml"
    alone = run_optimize(search, tmp_path / "alone", backend="numpy", chunk_size=256,
                         report=False)
    remote = run_optimize(search, tmp_path / "dask", backend="numpy", chunk_size=256,
                          report=False, dask="local:2")
    assert remote.backend.session.address == "local:2"    # it really ran on the cluster
    expected = json.loads((alone.out_dir / "optimize.json").read_text())
    document = json.loads((remote.out_dir / "optimize.json").read_text())
    assert _optimize_schema_errors(document) == []
    assert "dask" not in expected                          # in one process: no session
    assert document.pop("dask") == {"scheduler": "local:2", "workers": 2,
                                    "retried_chunks": 0}
    assert _without_clocks(document) == _without_clocks(expected)
    assert (remote.out_dir / "strategies.toml").read_text() == \
        (alone.out_dir / "strategies.toml").read_text()


def test_schedule_on_a_local_cluster_gives_the_milestones_of_one_process():
    from mcrisk.app.schedule import run_schedule

    alone = run_schedule(SCENARIO, "swap-gated", 900, 2, backend="numpy", chunk_size=128)
    remote = run_schedule(SCENARIO, "swap-gated", 900, 2, backend="numpy", chunk_size=128,
                          dask="local:2")
    assert remote.backend.session.address == "local:2"    # it really ran on the cluster
    assert alone.backend.name == remote.backend.name == "numpy"
    assert remote.milestones == alone.milestones
    assert remote.milestones["strategies"]["swap-gated"]   # there is something to compare


def test_schedule_survives_a_lost_worker_and_the_cli_prints_the_retries(
        tmp_path, monkeypatch, capsys):
    import mcrisk.app.schedule
    from mcrisk.cli import main

    argv = ["schedule", SCENARIO, "swap-gated", "--samples", "1200", "--chunk-size", "200",
            "--backend", "numpy", "--quiet"]
    assert main(argv) == 0
    alone = capsys.readouterr()
    assert "retried" not in alone.err
    flag = str(tmp_path / "killed")
    monkeypatch.setattr(mcrisk.app.schedule, "dask_session",
                        _session_that_loses_a_worker(mcrisk.app.schedule.dask_session, flag))
    assert main(argv + ["--dask", "local:2"]) == 0
    assert os.path.exists(flag)
    remote = capsys.readouterr()
    assert "mcrisk: retried" in remote.err and "after a lost worker" in remote.err
    assert remote.out == alone.out


def _session_that_loses_a_worker(real_session, flag: str):
    """A dask_session whose cluster kills one worker mid-run (_kill_once_plugin)."""
    @contextlib.contextmanager
    def session(address):
        with real_session(address) as opened:
            if opened is not None:
                opened.client.register_plugin(_kill_once_plugin(flag))
            yield opened

    return session


def _optimize_schema_errors(document: dict) -> list[str]:
    import jsonschema

    from mcrisk.schema import optimize_schema

    validator = jsonschema.Draft202012Validator(optimize_schema())
    return [error.message for error in validator.iter_errors(document)]


def test_optimize_json_schema_takes_the_dask_key_of_summary_json_and_nothing_else():
    good = {"scheduler": "tcp://h:8786", "workers": 3, "retried_chunks": 1}
    dask = __import__("mcrisk.schema", fromlist=["optimize_schema"]).optimize_schema()[
        "properties"]["dask"]
    import jsonschema

    assert list(jsonschema.Draft202012Validator(dask).iter_errors(good)) == []
    for bad in ({**good, "workers": 0}, {**good, "retried_chunks": -1}, {**good, "extra": 1},
                {"scheduler": "local:2", "workers": 2}):
        assert list(jsonschema.Draft202012Validator(dask).iter_errors(bad)), bad


def test_precision_on_a_local_cluster_grows_to_the_summary_of_one_process(tmp_path):
    # a target that cannot be met: the run grows 500 -> ... -> 3000 scenarios in several
    # steps, each step's chunks starting where the last stopped (not at a chunk boundary)
    from mcrisk.results.precision import precision_target

    def precise(out, **dask):
        return run_scenario(SCENARIO, samples=500, backend="numpy", out_dir=out,
                            chunk_size=256, report=False, mitigation=False,
                            precision=precision_target(1e-6, 1e-6, 500, 3000), **dask)

    alone = precise(tmp_path / "alone")
    remote = precise(tmp_path / "dask", dask="local:2")
    expected = _without_clock(json.loads((alone.out_dir / "summary.json").read_text()))
    summary = json.loads((remote.out_dir / "summary.json").read_text())
    assert schema_errors(summary) == []
    assert summary.pop("dask") == {"scheduler": "local:2", "workers": 2, "retried_chunks": 0}
    assert summary["samples"] == 3000 and "precision" in summary   # it grew, to the cap
    assert _without_clock(summary) == expected
    assert pq.read_table(remote.out_dir / "metrics.parquet").equals(
        pq.read_table(alone.out_dir / "metrics.parquet"))


def test_compare_survives_a_lost_worker_with_the_numbers_of_one_process(
        tmp_path, monkeypatch, capsys):
    import mcrisk.app.compare
    from mcrisk.cli import main

    found = []
    real_compare = mcrisk.app.compare.run_comparison

    def recorded(*args, **kwargs):
        found.append(real_compare(*args, **kwargs))
        return found[-1]

    monkeypatch.setattr(mcrisk.app.compare, "run_comparison", recorded)
    argv = ["compare", SCENARIO, "swap-gated", "drain-on-day", "--samples", "1200",
            "--chunk-size", "200", "--backend", "numpy", "--quiet"]
    assert main(argv) == 0
    alone = capsys.readouterr()
    flag = str(tmp_path / "killed")
    monkeypatch.setattr(mcrisk.app.compare, "dask_session",
                        _session_that_loses_a_worker(mcrisk.app.compare.dask_session, flag))
    assert main(argv + ["--dask", "local:2"]) == 0
    assert os.path.exists(flag)                    # the worker did die
    remote = capsys.readouterr()
    retried = found[1].backend.session.retried
    assert retried >= 1
    assert f"mcrisk: retried {retried} chunk" in remote.err and "after a lost worker" in \
        remote.err
    assert "retried" not in alone.err
    # every paired difference to the bit (repr: NaN equals NaN), and the printed tables
    assert found[0].differences["trough_days"]["p90_ci"][0] != \
        found[0].differences["trough_days"]["p90_ci"][1]          # figures that vary
    assert repr(found[1].differences) == repr(found[0].differences)
    assert remote.out == alone.out
