"""Writing outputs safely: every file goes to a temporary path in its folder, then is renamed,
so a reader never sees a half-written file and a failed run leaves the old file intact."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def default_mode() -> int:
    """The mode a plain open() gives a new file: 0666 less the process umask."""
    return 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and os.replace.

    The file gets the permissions a plain open() would give (0666 less the umask), not
    mkstemp's owner-only 0600, so a report server or a colleague can read it.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, default_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json(path: str | Path, obj: object) -> Path:
    return write_atomic(path, json.dumps(obj, indent=2, sort_keys=False) + "\n")
