"""A full disk leaves no debris (issue 24, item 15): a run or a nightly that fails at any one
of its writes leaves its output or history folder as it was (no lock file, no staging or
.partial folder, no folder this run created, parents included), exits 2, and its message
names the file and the command's own option (--out for run, --history for nightly).

The disk is tests/helpers.py's FullDisk: a command runs once with room for everything, which
lists its writes, then once failing at each write in turn (slow), or at the writes where
debris was found (quick)."""
from __future__ import annotations

from pathlib import Path

import pytest

from mcrisk.cli import main

from ..helpers import MINIMAL, FullDisk

WORLDS = ("--samples", "100", "--backend", "numpy", "--quiet", "--no-mitigation")


@pytest.fixture(autouse=True)
def _figures_drawn_here(monkeypatch):
    """The figures in this process: a worker's writes are its own, and the order of this
    process's writes is then the same on every run."""
    monkeypatch.setenv("MCRISK_FIGURE_WORKER", "0")


def _nightly(history: Path) -> int:
    return main(["nightly", str(MINIMAL), "--history", str(history), *WORLDS[:-1]])


def _run(out: Path) -> int:
    return main(["run", str(MINIMAL), "--out", str(out), *WORLDS])


def _tree(folder: Path) -> dict[str, bytes | None]:
    """Every path under `folder` (hidden ones too), with the bytes of each file."""
    return {str(p.relative_to(folder)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(folder.rglob("*"))}


def _writes(command, target: Path, monkeypatch) -> list[str]:
    """The writes of `command` into `target` on a disk with room for everything."""
    with monkeypatch.context() as patch:
        disk = FullDisk(patch, target.parent)
        assert command(target) == 0
    return disk.sites


def _fails_cleanly(command, target: Path, room: int, monkeypatch, capsys, option: str):
    """`command` on a disk that is full after `room` writes: exit 2, its message names the
    option, and the folder holding `target` is as it was."""
    home = next(folder for folder in target.parents if folder.exists())
    before = _tree(home)
    capsys.readouterr()
    with monkeypatch.context() as patch:
        FullDisk(patch, home, room=room)
        assert command(target) == 2
    err = capsys.readouterr().err
    assert "No space left on device" in err and f"write elsewhere with {option}" in err, err
    assert _tree(home) == before


@pytest.mark.parametrize("command, option", [(_nightly, "--history"), (_run, "--out")])
def test_a_full_disk_at_the_first_write_creates_no_folder_and_names_the_option(
        tmp_path, monkeypatch, capsys, command, option):
    _fails_cleanly(command, tmp_path / "new" / "deeper" / "out", 0, monkeypatch, capsys,
                   option)
    assert list(tmp_path.iterdir()) == []


def test_a_full_disk_at_the_index_leaves_no_lock_and_no_history_folder(
        tmp_path, monkeypatch, capsys):
    sites = _writes(_nightly, tmp_path / "counted", monkeypatch)
    index = max(k for k, site in enumerate(sites) if "index.json" in site)
    _fails_cleanly(_nightly, tmp_path / "new" / "history", index, monkeypatch, capsys,
                   "--history")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["counted"]


def test_a_full_disk_at_the_output_lock_leaves_no_lock(tmp_path, monkeypatch, capsys):
    sites = _writes(_run, tmp_path / "counted", monkeypatch)
    lock = next(k for k, site in enumerate(sites) if site.startswith("pwrite .counted.lock"))
    out = tmp_path / "out"
    assert _run(out) == 0
    _fails_cleanly(_run, out, lock, monkeypatch, capsys, "--out")


@pytest.mark.slow
@pytest.mark.parametrize("command, option", [(_nightly, "--history"), (_run, "--out")])
def test_a_full_disk_at_any_write_leaves_the_folder_as_it_was(tmp_path, monkeypatch, capsys,
                                                             command, option):
    sites = _writes(command, tmp_path / "counted", monkeypatch)
    assert len(sites) > 10, sites
    existing = tmp_path / "existing" / "target"
    assert command(existing) == 0                           # an earlier night or run
    for room in range(len(sites)):
        _fails_cleanly(command, tmp_path / f"new-{room}" / "target", room, monkeypatch,
                       capsys, option)
        assert not (tmp_path / f"new-{room}").exists(), sites[room]
        _fails_cleanly(command, existing, room, monkeypatch, capsys, option)
