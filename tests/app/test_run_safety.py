"""No stop or failure breaks a run's outputs: SIGTERM and Ctrl-C unwind and clean up, a run's
files are published together or not at all, and two runs never mix their files."""
import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import mcrisk.report
from mcrisk.cli import main
from mcrisk.core.outputs import OutputFolder
from mcrisk.report import tables
from mcrisk.app.run import run_scenario

from ..conftest import MINIMAL

MINIMAL_STRATEGIES = 2


def _run(out: Path, samples: int, *extra: str) -> int:
    return main(["run", str(MINIMAL), "--samples", str(samples), "--backend", "numpy",
                 "--out", str(out), "--quiet", *extra])


def _api_run(out: Path, samples: int) -> None:
    """A run without the (slower) report stage."""
    run_scenario(str(MINIMAL), samples=samples, backend="numpy", out_dir=out, report=False)


def _snapshot(folder: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _samples_of_each_file(out: Path) -> set[int]:
    """The sample count each file of a run says it has: they must all agree."""
    summary = json.loads((out / "summary.json").read_text())
    rows = pq.read_metadata(out / "metrics.parquet").num_rows
    bands = pq.read_schema(out / "capacity_bands.parquet").metadata[b"samples"]
    return {summary["samples"], rows // MINIMAL_STRATEGIES, int(bands)}


def test_a_failing_report_leaves_the_previous_run_whole(tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    _api_run(out, 300)
    before = _snapshot(out)

    def broken_report(run, *args, **kwargs):
        (Path(run.out_dir) / "report.html").write_text("half a report")
        raise OSError(errno.EIO, "Input/output error")       # names no file

    monkeypatch.setattr(mcrisk.report, "write_report", broken_report)
    assert _run(out, 200) == 2
    assert f"mcrisk: {out}: Input/output error" in capsys.readouterr().err
    assert _snapshot(out) == before                     # every file of the 300-sample run
    assert _samples_of_each_file(out) == {300}
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]      # no staging, no lock
    _api_run(out, 200)
    assert _samples_of_each_file(out) == {200}


def test_a_full_disk_while_streaming_names_the_file_and_keeps_the_previous_run(
        tmp_path, monkeypatch, capsys):
    out = tmp_path / "out"
    _api_run(out, 100)
    before = _snapshot(out)

    def disk_full(self, *args):
        raise OSError("[Errno 28] Error writing bytes to file. Detail: [errno 28] No space "
                      "left on device")             # as pyarrow raises it: no errno, no file

    monkeypatch.setattr(tables.MetricsWriter, "__call__", disk_full)
    assert _run(out, 200) == 2
    err = capsys.readouterr().err
    assert "metrics.parquet: [Errno 28]" in err and "free some space" in err
    assert _snapshot(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_second_run_on_a_busy_folder_fails_at_once_with_what_to_do(tmp_path, capsys):
    out = tmp_path / "out"
    _api_run(out, 100)
    before = _snapshot(out)
    with OutputFolder(out):                      # another run is writing `out`
        started = time.perf_counter()
        assert _run(out, 100) == 2
        assert time.perf_counter() - started < 5
    err = capsys.readouterr().err
    assert f"--out = {out}: another mcrisk run (pid {os.getpid()}) is writing this folder" in err
    assert "give this run another --out" in err
    assert _snapshot(out) == before


def test_a_folder_holding_other_files_is_refused_and_left_alone(tmp_path, capsys):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert _run(out, 100) == 2
    assert "'notes.txt' that mcrisk did not write" in capsys.readouterr().err
    assert _snapshot(out) == {"notes.txt": b"mine"}


def test_an_empty_out_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["run", str(MINIMAL), "--out", ""])
    assert stop.value.code == 2 and "--out: an empty path" in capsys.readouterr().err


def test_the_current_folder_as_out_is_refused(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _run(Path("."), 10) == 2
    assert "--out = .: is the current folder" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


# ---- stops from outside: a real process, a real signal ----------------------------------


def _start(*args: str, cwd: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "mcrisk", *args], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(pattern: str, folder: Path, process: subprocess.Popen, timeout: float = 60):
    """Wait until a file matching `pattern` under `folder` has data (the run is mid-way)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if any(p.stat().st_size > 0 for p in folder.glob(pattern) if p.is_file()):
            return
        assert process.poll() is None, process.communicate()
        time.sleep(0.05)
    process.kill()
    raise AssertionError(f"no {pattern} in {folder} after {timeout} s")


LONG_RUN = ("--samples", "50,000,000", "--chunk-size", "2000", "--backend", "numpy", "--quiet",
            "--scenarios-out")   # over the row budget: streamed only when asked


@pytest.mark.slow
@pytest.mark.parametrize("stop, status", [(signal.SIGTERM, 143), (signal.SIGINT, 130)],
                         ids=["SIGTERM", "SIGINT"])
def test_a_stopped_run_exits_128_plus_the_signal_and_leaves_no_debris(stop, status, tmp_path,
                                                                      capsys):
    out = tmp_path / "out"
    _api_run(out, 100)
    before = _snapshot(out)
    process = _start("run", str(MINIMAL), "--out", str(out), *LONG_RUN, cwd=tmp_path)
    _wait_for(".out.staging-*/.metrics.parquet.*.tmp", tmp_path, process)
    assert _run(out, 100) == 2                            # meanwhile: busy, said at once
    assert "another mcrisk run" in capsys.readouterr().err
    process.send_signal(stop)
    _, err = process.communicate(timeout=60)
    assert process.returncode == status, err
    assert "Traceback" not in err and "stopped by" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]    # no staging, tmp, lock
    assert _snapshot(out) == before


@pytest.mark.slow
def test_a_nightly_stopped_by_sigterm_leaves_no_partial_folder_and_the_index_intact(tmp_path):
    history = tmp_path / "history"
    nightly = ("nightly", str(MINIMAL), "--history", str(history))
    assert main([*nightly, "--samples", "100", "--backend", "numpy", "--quiet"]) == 0
    index = (history / "index.json").read_bytes()
    before = sorted(p.name for p in history.iterdir())
    process = _start(*nightly, *LONG_RUN, cwd=tmp_path)
    _wait_for(".partial-*/.metrics.parquet.*.tmp", history, process)
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143, err
    assert sorted(p.name for p in history.iterdir()) == before      # no .partial-* left
    assert (history / "index.json").read_bytes() == index


def test_a_run_stopped_while_its_progress_shows_ends_the_bar_before_the_message(
        tmp_path, monkeypatch):
    # On a terminal, the interrupted phase's bar is closed (its line ended) before the stop
    # message, and the progress clock thread is gone: nothing prints after the exit code.
    import io
    import threading

    import mcrisk.cli.progress as cli_progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    def stopped_report(run, *args, **kwargs):
        raise KeyboardInterrupt

    stderr = Terminal()
    monkeypatch.setattr(cli_progress, "DELAY", 0.0)
    monkeypatch.setattr("sys.stderr", stderr)
    monkeypatch.setattr(mcrisk.report, "write_report", stopped_report)
    out = tmp_path / "out"
    assert main(["run", str(MINIMAL), "--samples", "200", "--backend", "numpy",
                 "--out", str(out)]) == 130
    *_, bar, message, end = stderr.getvalue().split("\n")
    assert bar.split("\r")[-1].startswith("write:") and end == ""
    assert message.startswith("mcrisk: stopped by Ctrl-C (SIGINT)")
    assert not [t for t in threading.enumerate() if t.name == "mcrisk-progress"]
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == []
