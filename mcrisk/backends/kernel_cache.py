"""Where the Numba kernel's compiled code is kept: one cache shared by every install.

Numba's own cache locators key the cache by the install's path: beside the source file when
its folder is writable, else a user folder named after that path. A new virtual environment,
a wheel installed system-wide or a reinstall elsewhere therefore compiles the kernel again,
15-60 s. shared_cache() gives the kernel's dispatcher a locator of its own, tried after
NUMBA_CACHE_DIR (the user's explicit choice stays first) and before Numba's: a folder in the
user's cache folder (~/.cache/mcrisk/numba/<digest> on Linux) named after the digest of every
source compiled into the kernel, which is also the source stamp Numba checks. Every install of
the same code finds it; other code never does. Where no cache folder can be written, Numba's
locators take over as before. The KEEP_VERSIONS most recently used folders are kept.

This leans on Numba's cache classes (numba.core.caching: the locator base class and a
FunctionCache's _impl_class), stable since Numba 0.49; the dispatcher's own cache is replaced.
"""
from __future__ import annotations

import os
import shutil
from pathlib import Path

from numba.core import caching

KEEP_VERSIONS = 8       # kernels of this many source digests stay in the user's cache folder


def user_cache_root() -> Path:
    """The user's cache folder for compiled kernels, as Numba's AppDirs finds it
    (~/.cache/mcrisk/numba on Linux, honouring XDG_CACHE_HOME)."""
    try:
        from numba.misc.appdirs import AppDirs
    except ImportError:                                   # a Numba without its appdirs
        return Path.home() / ".cache" / "mcrisk" / "numba"
    return Path(AppDirs("mcrisk", appauthor=False).user_cache_dir) / "numba"


def prune(root: Path, keep: int = KEEP_VERSIONS) -> None:
    """Remove all but the `keep` most recently used kernel folders under `root`."""
    try:
        folders = sorted((p for p in root.iterdir() if p.is_dir()),
                         key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def shared_locator(digest: str) -> type:
    """A Numba cache locator keeping the kernel of sources `digest` in user_cache_root()."""

    class SharedCacheLocator(caching._CacheLocator):
        def __init__(self, py_func, py_file):
            self._path = user_cache_root() / digest[:24]
            self._lineno = py_func.__code__.co_firstlineno

        def get_cache_path(self) -> str:
            return str(self._path)

        def get_source_stamp(self) -> str:
            return digest

        def get_disambiguator(self) -> str:
            return str(self._lineno)

        def ensure_cache_path(self) -> None:
            super().ensure_cache_path()
            os.utime(self._path)              # the most recently used: prune keeps it
            prune(self._path.parent)

        @classmethod
        def from_function(cls, py_func, py_file):
            locator = cls(py_func, py_file)
            try:
                locator.ensure_cache_path()
            except OSError:                   # not writable here: Numba's own locators
                return None
            return locator

    return SharedCacheLocator


def shared_cache(dispatcher, digest: str):
    """`dispatcher` (a function jitted with cache=True whose compiled code depends on the
    sources of `digest`) caching through shared_locator(digest); returns it."""
    base = caching.FunctionCache._impl_class
    own = list(base._locator_classes)
    first = [c for c in own[:1] if "UserProvided" in c.__name__]    # NUMBA_CACHE_DIR

    class Impl(base):
        _locator_classes = [*first, shared_locator(digest), *own[len(first):]]

    class SharedFunctionCache(caching.FunctionCache):
        _impl_class = Impl

    dispatcher._cache = SharedFunctionCache(dispatcher.py_func)
    return dispatcher
