"""Atomic writes: complete files or none, with ordinary permissions."""
import os
import stat

import pytest

from mcrisk.outputs import write_atomic, write_json


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
