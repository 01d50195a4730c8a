"""Writing outputs safely.

Files: every file goes to a temporary path in its folder, then is renamed (write_atomic), so a
reader never sees a half-written file and a failed write leaves the old file intact.

Folders: the files of one run are published together or not at all (OutputFolder). A run
writes every file into a private staging folder next to its output folder DIR
(`.DIR.staging-<random>`), then switches it in with one atomic step: on Linux renameat2 with
RENAME_EXCHANGE swaps the two folders; where that is missing (other systems, file systems
without it) DIR is renamed aside and the staging folder renamed to DIR, a window of
microseconds in which DIR does not exist, but never holds two runs' files. A lock file next to
DIR (`.DIR.lock`, flock) makes a second run on the same DIR fail at once instead of mixing.
Both live in DIR's parent folder, so a run needs write access there. A run that fails or is
stopped leaves the parent as it was: its staging folder and lock file are removed, and so are
the folders it created to hold DIR (`--out new/a/b` on a full disk leaves no `new/`).

Because a run replaces DIR as a whole, it refuses a DIR that holds files mcrisk did not write
(it never deletes or hides them): those it wrote are the names in DIR's manifest
(`.mcrisk-outputs.json`, written by every run), the files of OUTPUT_FILES (folders of
versions before the manifest) and their temporary files.
"""
from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fcntl
import json
import os
import re
import shutil
import stat
import tempfile
from pathlib import Path

from .. import __version__
from .errors import McriskError
from .stops import signals_held

MANIFEST_FILE = ".mcrisk-outputs.json"
OUTPUT_FILES = ("summary.json", "metrics.parquet", "capacity_bands.parquet", "report.html",
                "summary.md")
_STAGING = ".staging-"


class OutputFolderError(McriskError):
    """The output folder cannot be used for this run (exit 2, with what to do)."""


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
    mkstemp's owner-only 0600, so a report server or a colleague can read it. An OSError
    (a full disk, say) carries the path being written.
    """
    path = Path(path)
    raw = data.encode("utf-8") if isinstance(data, str) else data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise with_filename(error, path.parent) from None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as error:     # its random temporary name would mean nothing to a reader
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        os.fchmod(fd, default_mode())
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as error:
        with signals_held():               # a stop now would leave the temporary file
            if os.path.exists(tmp):
                os.unlink(tmp)
        if isinstance(error, OSError):
            raise with_filename(error, path) from None
        raise
    return path


def with_filename(error: OSError, path: str | Path) -> OSError:
    """`error`, naming `path` when it names no file (ENOSPC from write() names none).

    An OSError made from a message alone (as pyarrow raises them) keeps that message as its
    strerror, and its errno where the message gives one ("[Errno 28] ...")."""
    if error.filename is not None:
        return error
    if error.strerror is None:
        message = str(error)
        error.strerror = message
        code = re.search(r"\[errno (\d+)\]", message, re.IGNORECASE)
        if error.errno is None and code:
            error.errno = int(code.group(1))
    error.filename = str(path)
    return error


def write_json(path: str | Path, obj: object) -> Path:
    """Strict JSON: a NaN or an infinity in `obj` raises ValueError instead of being written
    as the non-standard NaN / Infinity that strict parsers reject."""
    return write_atomic(path, json.dumps(obj, indent=2, sort_keys=False, allow_nan=False) + "\n")


# ---- one run's folder, published at once --------------------------------------------------


class OutputFolder:
    """The output folder of one run, whose files appear together or not at all.

        with OutputFolder(out) as folder:   # locks, checks out, makes folder.staging
            ... write every file into folder.staging ...
            folder.publish()                 # the one atomic switch

    Leaving the block without publish() (an error, Ctrl-C, SIGTERM) removes the staging
    folder and leaves `out` as it was. `path` is the folder as named; a symlink is followed,
    so the folder it points to is replaced and the link keeps working.
    """

    def __init__(self, path: str | Path):
        if str(path).strip() == "":
            raise OutputFolderError("--out = '': an empty path names no folder (name the "
                                    "output folder, e.g. --out out/run1)")
        self.path = Path(path)
        self.target = Path(os.path.realpath(self.path))
        self.lock_path = self.target.parent / f".{self.target.name}.lock"
        self.staging: Path | None = None
        self.published = False
        self._lock_fd: int | None = None
        self._made: list[Path] = []            # folders made to hold DIR, outermost first

    def __enter__(self) -> "OutputFolder":
        self._check_replaceable()
        self._made = make_folders(self.target.parent)
        try:
            self._lock_fd = _lock(self.lock_path, self.path)
            self._remove_stale_staging()
            foreign = foreign_entries(self.target)
            if foreign:
                raise OutputFolderError(
                    f"--out = {self.path}: holds {_some(foreign)} that mcrisk did not write; a "
                    "run replaces its output folder as a whole, so that it never mixes two "
                    "runs' files (give --out a new or empty folder, or move those away)")
            self.staging = Path(tempfile.mkdtemp(prefix=f".{self.target.name}{_STAGING}",
                                                 dir=self.target.parent))
            os.chmod(self.staging, _folder_mode(self.target))
        except BaseException:
            self._release()
            raise
        return self

    def __exit__(self, kind, value, traceback) -> None:
        self._release()

    def _release(self) -> None:
        """Unlock; unless published, also remove the staging folder and the folders made to
        hold DIR, so that a failed run leaves DIR's parent as it was. A stop meanwhile is
        delivered after: it would leave half a staging folder, or the lock."""
        with signals_held():
            try:
                if not self.published and self.staging is not None:
                    shutil.rmtree(self.staging, ignore_errors=True)
            finally:
                _unlock(self._lock_fd, self.lock_path)
                self._lock_fd = None
                if not self.published:
                    remove_folders(self._made)

    def publish(self) -> None:
        """Switch the staging folder in as the output folder, in one atomic step.

        SIGINT and SIGTERM are held back meanwhile (and delivered right after), so a stop
        cannot land between the switch and the removal of the previous run's files.
        """
        staging, target = self.staging, self.target
        names = sorted(p.name for p in staging.iterdir())
        write_json(staging / MANIFEST_FILE, {"written_by": f"mcrisk {__version__}",
                                             "files": names})
        _fsync_folder(staging)
        with signals_held():
            if not target.exists():
                os.rename(staging, target)
            else:
                previous = _swap(staging, target)
                _carry_foreign(previous, target)    # anything added to DIR during the run
                shutil.rmtree(previous, ignore_errors=True)
            _fsync_folder(target.parent)
            self.published = True

    def _check_replaceable(self) -> None:
        """Refuse folders that cannot or must not be replaced as a whole."""
        target, cwd = self.target, Path.cwd().resolve()
        if target == cwd or target in cwd.parents:
            raise OutputFolderError(
                f"--out = {self.path}: is the current folder or holds it; a run replaces its "
                "output folder as a whole (name a subfolder, e.g. --out out/run1)")
        if target.exists() and not target.is_dir():
            raise OutputFolderError(f"--out = {self.path}: exists and is not a folder "
                                    "(name a folder, new or written by mcrisk)")
        if target.is_dir() and os.path.ismount(target):
            raise OutputFolderError(
                f"--out = {self.path}: is a mount point, which cannot be replaced as a whole "
                f"(name a folder inside it, e.g. --out {self.path / 'run1'})")

    def _remove_stale_staging(self) -> None:
        """Staging folders of runs on this folder that were killed (kill -9, power loss).

        Only runs holding the lock create them, and this one holds it now."""
        prefix = f".{self.target.name}{_STAGING}"
        for entry in self.target.parent.iterdir():
            if entry.name.startswith(prefix) and entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry, ignore_errors=True)


def written_by_mcrisk(folder: Path) -> set[str]:
    """Names in `folder` that mcrisk wrote: its manifest's, OUTPUT_FILES and the manifest."""
    names = set(OUTPUT_FILES) | {MANIFEST_FILE}
    try:
        manifest = json.loads((folder / MANIFEST_FILE).read_text())
        names |= {n for n in manifest.get("files", []) if isinstance(n, str) and "/" not in n}
    except (OSError, ValueError, AttributeError):
        pass
    return names


def foreign_entries(folder: Path) -> list[str]:
    """Entries of `folder` mcrisk did not write (its temporaries `.NAME.*.tmp` count as its
    own: a run killed before this version left them); [] when the folder does not exist."""
    if not folder.is_dir():
        return []
    ours = written_by_mcrisk(folder)
    return sorted(entry.name for entry in folder.iterdir()
                  if entry.name not in ours and not _is_our_temporary(entry.name, ours))


def _is_our_temporary(name: str, ours: set[str]) -> bool:
    return name.endswith(".tmp") and any(name.startswith(f".{own}.") for own in ours)


def _some(names: list[str]) -> str:
    shown = ", ".join(repr(n) for n in names[:5])
    return shown + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _folder_mode(target: Path) -> int:
    """The mode the new folder gets: the previous folder's, else what mkdir would give."""
    try:
        return stat.S_IMODE(target.stat().st_mode)
    except OSError:
        return 0o777 & ~_umask()


def _carry_foreign(previous: Path, target: Path) -> None:
    """Move entries of the replaced folder that mcrisk did not write into the new one."""
    for name in foreign_entries(previous):
        if not (target / name).exists():
            os.rename(previous / name, target / name)


def _swap(staging: Path, target: Path) -> Path:
    """Put `staging` at `target`; returns where the previous `target` folder now is."""
    if exchange(staging, target):
        return staging
    aside = Path(tempfile.mkdtemp(prefix=f".{target.name}{_STAGING}", dir=target.parent))
    os.rename(target, aside)              # onto an empty folder: POSIX replaces it
    try:
        os.rename(staging, target)
    except BaseException:
        os.rename(aside, target)
        raise
    return aside


_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
_UNSUPPORTED = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP}


def exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 with RENAME_EXCHANGE, through ctypes).

    False where the C library or the file system lacks it (the caller then falls back);
    other failures raise OSError."""
    renameat2 = _renameat2()
    if renameat2 is None:
        return False
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _UNSUPPORTED:
        return False
    raise OSError(code, os.strerror(code), str(b))


def _renameat2():
    """libc's renameat2 (glibc 2.28+), or None."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        function = libc.renameat2
    except (OSError, AttributeError):
        return None
    function.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                         ctypes.c_uint)
    function.restype = ctypes.c_int
    return function


def _fsync_folder(folder: Path) -> None:
    """Make renames inside `folder` durable (a crash after publishing keeps them)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    except OSError:
        pass                      # some file systems cannot fsync a folder
    finally:
        os.close(fd)


def make_folders(folder: Path) -> list[Path]:
    """Make `folder` and its missing parents; the folders made, outermost first (none when
    it exists), so that a caller that fails can remove them again (remove_folders). If one
    cannot be made (a full disk), those made are removed and the OSError names it."""
    missing = []
    for path in (folder, *folder.parents):
        if os.path.lexists(path):
            break
        missing.append(path)
    made: list[Path] = []
    for path in reversed(missing):
        try:
            path.mkdir()
        except FileExistsError:
            if path.is_dir():                 # made meanwhile by another run: not ours
                continue
            remove_folders(made)
            raise
        except OSError as error:
            remove_folders(made)
            raise with_filename(error, path) from None
        made.append(path)
    return made


def remove_folders(made: list[Path]) -> None:
    """Remove the folders make_folders made, innermost first, as long as they are empty (a
    folder that holds something now holds another run's files: it stays, with its parents)."""
    for path in reversed(made):
        try:
            path.rmdir()
        except OSError:
            return


def lock_file(lock_path: Path, wait: bool = False) -> tuple[int, bool] | None:
    """An exclusive flock on `lock_path`: (its descriptor, whether this call created the
    file), or None when another process holds it and `wait` is False.

    A lock file may be removed by its holder (unlock_file), so after locking check that the
    path still names the locked file (else a holder that just finished removed it: try
    again); one removed that way is never used by two processes at once."""
    while True:
        try:
            fd, created = os.open(lock_path, os.O_RDWR | os.O_CREAT | os.O_EXCL,
                                  default_mode()), True
        except FileExistsError:
            try:
                fd, created = os.open(lock_path, os.O_RDWR), False
            except FileNotFoundError:          # removed meanwhile: create it
                continue
            except OSError as error:
                raise with_filename(error, lock_path) from None
        except OSError as error:
            raise with_filename(error, lock_path) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            os.close(fd)
            return None
        except BaseException:
            os.close(fd)
            raise
        try:
            current = os.stat(lock_path).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:
            current = False
        if current:
            return fd, created
        os.close(fd)


def unlock_file(fd: int, lock_path: Path) -> None:
    """Remove the lock file and release it (removed while still locked: see lock_file)."""
    try:
        lock_path.unlink(missing_ok=True)
    finally:
        os.close(fd)


def _lock(lock_path: Path, shown: Path) -> int:
    """An exclusive flock on `lock_path` holding this process's id, or OutputFolderError at
    once if a run holds it. A lock that cannot be written (a full disk) is removed again."""
    locked = lock_file(lock_path)
    if locked is None:
        try:
            with open(lock_path, "rb") as handle:
                holder = handle.read(32).decode("ascii", "replace").strip()
        except OSError:
            holder = ""
        who = f" (pid {holder})" if holder.isdigit() else ""
        raise OutputFolderError(
            f"--out = {shown}: another mcrisk run{who} is writing this folder, and two "
            "runs would mix their files (wait for it to finish, or give this run another "
            "--out)")
    fd, _ = locked
    try:
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
    except BaseException as error:
        unlock_file(fd, lock_path)
        if isinstance(error, OSError):
            raise with_filename(error, lock_path) from None
        raise
    return fd


def _unlock(fd: int | None, lock_path: Path) -> None:
    if fd is not None:
        unlock_file(fd, lock_path)


# metrics.parquet (one row per scenario x strategy) is the one output whose size grows with
# the sample count: a run of more rows than this writes it only when asked (--scenarios-out,
# or a larger --scenarios-budget). docs/metrics.md gives the measured cost behind the number.
METRICS_ROW_BUDGET = 5_000_000       # 1e6 scenarios x 5 strategies


def metrics_parquet_entry(rows: int, scenarios_out: bool | None = None,
                          budget: int | None = None) -> tuple[bool, dict | None]:
    """(write metrics.parquet?, summary.json's `metrics_parquet` entry or None) of a run of
    `rows` rows (scenarios x strategies). `scenarios_out`: True always writes it, False never,
    None (the default) writes it up to `budget` rows (None: METRICS_ROW_BUDGET, read now).
    The entry is None for the plain case (under the budget, nothing asked)."""
    budget = METRICS_ROW_BUDGET if budget is None else int(budget)
    base = {"rows": int(rows), "budget": budget}
    if scenarios_out is False:
        return False, {"written": False, **base, "why": "--no-scenarios-out"}
    if rows <= budget:
        return True, None
    if scenarios_out:
        return True, {"written": True, **base, "why": "--scenarios-out"}
    return False, {"written": False, **base, "why": "over the row budget"}


def metrics_parquet_text(entry: dict | None) -> str | None:
    """One sentence on a metrics.parquet not written (with the option that writes it), or
    written over the budget because asked; None for the plain case."""
    if not entry:
        return None
    rows, budget = f"{entry['rows']:,}", f"{entry['budget']:,}"
    if entry["written"]:
        return (f"metrics.parquet written with {rows} rows, over the row budget of {budget}, "
                f"as {entry['why']} asked.")
    if entry["why"] == "--no-scenarios-out":
        return (f"metrics.parquet not written ({rows} scenario x strategy rows): "
                "--no-scenarios-out; run without it to get the per-scenario rows.")
    why = ("--precision may grow to --max-samples, whose rows exceed the row budget of "
           f"{budget}" if entry["why"].startswith("--max-samples") else
           f"{rows} scenario x strategy rows exceed the row budget of {budget}")
    return (f"metrics.parquet not written: {why}; --scenarios-out (or a larger "
            "--scenarios-budget) writes it. summary.json, the bands, the milestones and the "
            "report do not need it.")
