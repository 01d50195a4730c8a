"""mcrisk on Dask (mcrisk.dask_backend): the same numbers and files as one process, for a local
cluster of 2 worker processes and two chunk sizes; a worker killed mid-run is survived and the
retry counted; the located errors. Skipped when dask.distributed is not installed."""
from __future__ import annotations

import json
import os

import numpy as np
import pyarrow.parquet as pq
import pytest

from mcrisk.errors import McriskError

distributed = pytest.importorskip("distributed")

from mcrisk.backends import select_backend  # noqa: E402
from mcrisk.compile import compile_scenario  # noqa: E402
from mcrisk.dask_backend import dask_session  # noqa: E402
from mcrisk.run import load_for_run, run_scenario  # noqa: E402
from mcrisk.simulate import simulate  # noqa: E402

SCENARIO = "scenarios/minimal.toml"
VARYING = {"wall_seconds", "created_utc"}


def _without_clock(summary: dict) -> dict:
    return {key: value for key, value in summary.items() if key not in VARYING}


@pytest.mark.slow
def test_a_local_cluster_gives_the_files_of_one_process(tmp_path):
    # per chunk size: a milestone mean's float sum depends on the chunking even in one process
    for chunk_size in (128, 700):
        alone = run_scenario(SCENARIO, samples=900, backend="numpy", report=False,
                             out_dir=tmp_path / f"alone-{chunk_size}", chunk_size=chunk_size)
        out = tmp_path / f"dask-{chunk_size}"
        remote = run_scenario(SCENARIO, samples=900, backend="numpy", out_dir=out,
                              chunk_size=chunk_size, report=False, dask="local:2")
        expected = _without_clock(json.loads((alone.out_dir / "summary.json").read_text()))
        assert _without_clock(json.loads((out / "summary.json").read_text())) == expected
        tables = sorted(p.name for p in alone.out_dir.glob("*.parquet"))
        assert len(tables) >= 2
        for table in tables:
            assert pq.read_table(out / table).equals(pq.read_table(alone.out_dir / table)), table
        assert np.array_equal(remote.result.metrics, alone.result.metrics)


@pytest.mark.slow
def test_a_worker_killed_mid_run_is_survived_and_the_retry_counted(tmp_path):
    flag = str(tmp_path / "killed")

    def kill_once_plugin():                   # defined here: pickled by value to the workers
        from distributed.diagnostics.plugin import WorkerPlugin

        class KillOnce(WorkerPlugin):
            def transition(self, key, start, finish, **kwargs):
                if finish == "executing" and "mcrisk-chunk" in str(key) \
                        and str(key).endswith("-400"):
                    try:
                        os.close(os.open(flag, os.O_CREAT | os.O_EXCL))
                    except FileExistsError:
                        return
                    os._exit(1)

        return KillOnce()

    plan = compile_scenario(load_for_run(SCENARIO).scenario)
    alone = simulate(plan, 1200, 1, select_backend("numpy"), chunk_size=200)
    notes = []

    class Notes:
        def note(self, text):
            notes.append(text)

    with dask_session("local:2", Notes()) as session:
        session.client.register_plugin(kill_once_plugin())
        remote = simulate(plan, 1200, 1, session.backend("numpy", plan), chunk_size=200)
        assert os.path.exists(flag)           # the worker did die
        assert session.retried >= 1
    assert np.array_equal(remote.metrics, alone.metrics)
    assert np.array_equal(remote.world, alone.world)
    assert any(note.startswith("retried ") and "after a lost worker" in note
               for note in notes)


def test_a_scheduler_that_cannot_be_reached_is_a_located_error(monkeypatch):
    import mcrisk.dask_backend as dask_backend

    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT_S", 1)
    with pytest.raises(McriskError, match=r"--dask = tcp://127.0.0.1:9: could not reach"):
        with dask_session("tcp://127.0.0.1:9"):
            pass


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
    from mcrisk.dask_backend import check_versions

    class Client:
        def run(self, function):
            return {"tcp://w1:1": function(), "tcp://w2:2": "0.0.1"}

    with pytest.raises(McriskError, match=r"worker tcp://w2:2 runs mcrisk 0.0.1"):
        check_versions(Client(), "tcp://s:8786")
