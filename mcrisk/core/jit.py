"""How mcrisk compiles with Numba: one policy for every compiled loop.

Two kinds of function, two decorators:

* helpers (`jit`, `jit_inline`): called from a compiled entry point, never from Python. They
  run without Numba's reference counting (they never allocate; counting every array passed
  between them cost 3-5x in throughput) and are not cached on their own: they are compiled
  into the entry points that call them.
* entry points (`entry(sources)`): called from Python, cached on disk. Numba checks only the
  stamp of the file that defines a cached function, but an entry point has the helpers of
  other files compiled into it. So every entry point names its `sources` (the files whose
  code it compiles in) and is cached under their digest: editing any of them recompiles it
  instead of loading its old code.

Where the cache lives: Numba's own cache locators key the cache by the install's path (beside
the source file when its folder is writable, else a user folder named after that path), so a
new virtual environment or a wheel installed elsewhere would compile every entry point again
(15-60 s). Here an entry point's cache is a folder in the user's cache folder
(~/.cache/mcrisk/numba/<digest> on Linux) named after the digest of its sources, tried after
NUMBA_CACHE_DIR (the user's explicit choice stays first) and before Numba's own: every
install of the same code finds it, other code never does. Where no cache folder can be
written, Numba's locators take over. The KEEP_VERSIONS most recently used folders are kept.

This leans on Numba's cache classes (numba.core.caching: the locator base class and a
FunctionCache's _impl_class), stable since Numba 0.49; the dispatcher's own cache is replaced.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from pathlib import Path
from typing import Callable, Iterable

import numba as nb
from numba.core import caching

# Entry points of this many source digests stay in the user's cache folder (three entry points
# per version of mcrisk: the simulation kernel, the milestones' and the bands' chunk loops).
KEEP_VERSIONS = 24

# Performance: helpers run without Numba's reference counting (`_nrt=False`): they never
# allocate. error_model="numpy": a division by zero gives inf or NaN as in the NumPy reference,
# not an exception (and no check on every division).
jit = nb.njit(nogil=True, _nrt=False, error_model="numpy")
# Performance: helpers called per draw, per node, per event or per strategy are inlined where
# they are called (Numba IR inlining; LLVM left them as calls, each passing every array as a
# dozen words): sample_world took 35% less time, the metrics 15% less.
jit_inline = nb.njit(nogil=True, _nrt=False, error_model="numpy", inline="always")
# Performance: the Numba stages take the plan as one record, `p` (a namedtuple: KernelPlan in
# mcrisk/plan/record.py), which a call passes by value, every array of it flattened into
# arguments (~600 words). A stage called per block or per lane therefore is a jit_inline:
# with schedule._time_block and world.burn_in_days as calls the record cost 9.6% of
# reference-2048's throughput against argument lists, inlined ~1% (within the noise); the
# stages called once per lane group or strategy stay calls (benchmarks/bench_plan_record.py,
# benchmarks/RESULTS.md).


def sources_digest(files: Iterable[Path]) -> str:
    """SHA-256 of the files' names and bytes, in the order given."""
    digest = hashlib.sha256()
    for file in files:
        file = Path(file)
        digest.update(file.name.encode() + b"\0" + file.read_bytes())
    return digest.hexdigest()


def entry_digest(sources: Iterable[Path]) -> str:
    """The digest an entry point over `sources` is cached under: theirs and this file's,
    which holds the compile options."""
    return sources_digest([*sources, Path(__file__)])


def entry(sources: Iterable[Path], **options) -> Callable:
    """The decorator of a compiled entry point (see the module docstring): nopython, nogil,
    cached under the digest of `sources` in the shared folder; `options` add Numba's
    (parallel=True for the simulation kernel). An entry point allocates, so it keeps Numba's
    reference counting."""
    digest = entry_digest(sources)

    def decorate(function):
        return shared_cache(nb.njit(cache=True, nogil=True, **options)(function), digest)
    return decorate


def user_cache_root() -> Path:
    """The user's cache folder for compiled entry points, as Numba's AppDirs finds it
    (~/.cache/mcrisk/numba on Linux, honouring XDG_CACHE_HOME)."""
    try:
        from numba.misc.appdirs import AppDirs
    except ImportError:                                   # a Numba without its appdirs
        return Path.home() / ".cache" / "mcrisk" / "numba"
    return Path(AppDirs("mcrisk", appauthor=False).user_cache_dir) / "numba"


def prune(root: Path, keep: int = KEEP_VERSIONS) -> None:
    """Remove all but the `keep` most recently used entry point folders under `root`."""
    try:
        folders = sorted((p for p in root.iterdir() if p.is_dir()),
                         key=lambda p: p.stat().st_mtime, reverse=True)
    except OSError:
        return
    for old in folders[keep:]:
        shutil.rmtree(old, ignore_errors=True)


def shared_locator(digest: str) -> type:
    """A Numba cache locator keeping the entry points of sources `digest` in
    user_cache_root()."""

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
