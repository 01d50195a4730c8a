"""Atomic writes: complete files or none, with ordinary permissions; a run's folder is
published whole or not at all, by one run at a time."""
import errno
import os
import signal
import stat
import time

import pytest

from mcrisk.core import outputs
from mcrisk.core.outputs import (MANIFEST_FILE, OutputFolder, OutputFolderError, write_atomic,
                            write_json)


def test_write_atomic_replaces_whole_files_with_umask_permissions(tmp_path):
    old = os.umask(0o022)
    try:
        path = write_atomic(tmp_path / "a" / "x.txt", "one")
        assert path.read_text() == "one"
        assert stat.S_IMODE(path.stat().st_mode) == 0o644
        write_json(path, {"two": 2})
        assert path.read_text() == '{\n  "two": 2\n}\n'
        assert [p.name for p in path.parent.iterdir()] == ["x.txt"]   # no temporary left
    finally:
        os.umask(old)


def test_a_failed_write_leaves_the_old_file(tmp_path):
    path = write_atomic(tmp_path / "x.json", "old")

    class Boom:
        def encode(self, _):
            raise RuntimeError("boom")

    with pytest.raises(Exception):
        write_atomic(path, Boom())
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["x.json"]


def test_json_is_strict_a_nan_raises_and_nothing_is_written(tmp_path):
    with pytest.raises(ValueError, match="JSON compliant"):
        write_json(tmp_path / "s.json", {"p90_ci": [1.0, float("nan")]})
    with pytest.raises(ValueError):
        write_json(tmp_path / "s.json", {"mean": float("inf")})
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_names_the_file_being_written(tmp_path, monkeypatch):
    path = write_atomic(tmp_path / "x.json", "old")

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")   # write() names no file

    monkeypatch.setattr(outputs.os, "fsync", full)
    with pytest.raises(OSError) as error:
        write_atomic(path, "new")
    assert error.value.errno == errno.ENOSPC and error.value.filename == str(path)
    assert path.read_text() == "old" and [p.name for p in tmp_path.iterdir()] == ["x.json"]


# ---- OutputFolder: a run's files appear together or not at all ----------------------------


def _publish(out, files: dict[str, str], fail: bool = False) -> None:
    """A run writing `files` into `out` through an OutputFolder (and failing if asked)."""
    with OutputFolder(out) as folder:
        for name, text in files.items():
            write_atomic(folder.staging / name, text)
        if fail:
            raise RuntimeError("the report failed")
        folder.publish()


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


def test_publishing_replaces_the_whole_folder_and_leaves_nothing_beside_it(tmp_path):
    out = tmp_path / "out"
    _publish(out, {"summary.json": "1", "report.html": "1"})
    assert _listing(out) == [MANIFEST_FILE, "report.html", "summary.json"]
    _publish(out, {"summary.json": "2"})                   # a run without a report
    assert _listing(out) == [MANIFEST_FILE, "summary.json"]  # run 1's report is gone too
    assert (out / "summary.json").read_text() == "2"
    assert _listing(tmp_path) == ["out"]                   # no staging folder, no lock file


def test_a_failed_run_leaves_the_previous_files_and_no_staging(tmp_path):
    out = tmp_path / "out"
    _publish(out, {"summary.json": "1", "metrics.parquet": "1"})
    with pytest.raises(RuntimeError):
        _publish(out, {"summary.json": "2", "metrics.parquet": "2"}, fail=True)
    assert (out / "summary.json").read_text() == (out / "metrics.parquet").read_text() == "1"
    assert _listing(tmp_path) == ["out"]


def test_without_renameat2_the_fallback_still_switches_whole_folders(tmp_path, monkeypatch):
    monkeypatch.setattr(outputs, "exchange", lambda a, b: False)
    out = tmp_path / "out"
    _publish(out, {"summary.json": "1"})
    _publish(out, {"summary.json": "2"})
    assert (out / "summary.json").read_text() == "2" and _listing(tmp_path) == ["out"]


def test_exchange_swaps_two_folders(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "x").write_text("a")
    if not outputs.exchange(tmp_path / "a", tmp_path / "b"):
        pytest.skip("no renameat2(RENAME_EXCHANGE) here")
    assert (tmp_path / "b" / "x").read_text() == "a" and _listing(tmp_path / "a") == []


def test_a_folder_with_files_mcrisk_did_not_write_is_refused_untouched(tmp_path):
    out = tmp_path / "out"
    _publish(out, {"summary.json": "1"})
    (out / "notes.txt").write_text("mine")
    (out / ".summary.json.abc123.tmp").write_text("debris of an old version")   # counts as ours
    with pytest.raises(OutputFolderError, match=r"'notes.txt' that mcrisk did not write"):
        _publish(out, {"summary.json": "2"})
    assert (out / "notes.txt").read_text() == "mine" and (out / "summary.json").read_text() == "1"
    assert _listing(tmp_path) == ["out"]


def test_a_second_run_on_the_same_folder_fails_at_once(tmp_path):
    out = tmp_path / "out"
    with OutputFolder(out):
        with pytest.raises(OutputFolderError, match=r"another mcrisk run \(pid \d+\) is writing"):
            OutputFolder(out).__enter__()
    _publish(out, {"summary.json": "1"})                   # free again once the first is done


def test_killed_runs_staging_folders_are_removed_by_the_next_run(tmp_path):
    stale = tmp_path / ".out.staging-dead"
    stale.mkdir()
    (stale / "metrics.parquet").write_text("half")
    _publish(tmp_path / "out", {"summary.json": "1"})
    assert _listing(tmp_path) == ["out"]


def test_a_symlinked_output_folder_keeps_its_link(tmp_path):
    (tmp_path / "runs").mkdir()
    _publish(tmp_path / "runs" / "r1", {"summary.json": "1"})
    (tmp_path / "latest").symlink_to(tmp_path / "runs" / "r1")
    _publish(tmp_path / "latest", {"summary.json": "2"})
    assert (tmp_path / "latest").is_symlink()
    assert (tmp_path / "runs" / "r1" / "summary.json").read_text() == "2"


@pytest.mark.parametrize("name", ["", " "])
def test_an_empty_path_is_refused(name):
    with pytest.raises(OutputFolderError, match="empty path"):
        OutputFolder(name)


def test_the_current_folder_and_its_parents_are_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for out in (".", tmp_path.parent):
        with pytest.raises(OutputFolderError, match="current folder"):
            OutputFolder(out).__enter__()


def test_a_stop_during_publishing_is_delivered_after_it(tmp_path):
    from mcrisk.core.stops import Terminated, stops_unwind as _sigterm_unwinds

    finished = []
    with _sigterm_unwinds(), pytest.raises(Terminated):
        with outputs.signals_held():
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.05)                 # the handler would run here, between bytecodes
            finished.append(True)
    assert finished == [True]
