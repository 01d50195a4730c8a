"""Writing outputs safely: every file goes to a temporary path in its folder, then is renamed,
so a reader never sees a half-written file and a failed run leaves the old file intact."""
from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_atomic(path: str | Path, data: bytes | str) -> Path:
    """Write `data` to `path` through a temporary file in the same folder and os.replace."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
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
