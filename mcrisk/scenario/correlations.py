"""[[correlations]]: Spearman rank correlations between drawn quantities (a Gaussian copula,
mcrisk/core/copula.py).

Each entry names two world quantities as the outputs name them (`between`) and their rank
correlation (`rank`, in (-1, 1)). Read here: the form, a pair named twice, and the Pearson
matrix being positive definite (located at the first entry whose rank makes it not, with the
smallest eigenvalue). Whether each name is a quantity the plan draws, and may be correlated,
is checked when the plan is compiled (mcrisk/plan/copula.py): quantity names come from there.
"""
from __future__ import annotations

from mcrisk.core.copula import MIN_EIGENVALUE, pearson_of_spearman, smallest_eigenvalue
from mcrisk.core.model import Correlation

from .limits import MAX_CORRELATIONS
from .reader import Spec, Table, as_number, count_ok, type_name

_EXAMPLE = '["shared.vendor", "hall.B.energized.delay"]'


def read_correlations(root: Table) -> tuple[Correlation, ...]:
    """The [[correlations]] entries, in file order (() when absent or unreadable)."""
    tables = root.tables("correlations", ("between", "rank"), "", "", default=None)
    if tables is None:
        return ()
    if not count_ok(root.r, "correlations", len(tables), MAX_CORRELATIONS, "entries",
                    "every correlated quantity sums the normal scores of its group in every "
                    "scenario; see Limits in the scenario format"):
        return ()
    entries, seen, complete = [], {}, True
    for i, t in enumerate(tables):
        entry = _read_entry(t) if t is not None else None
        if entry is None:
            complete = False
            continue
        pair = frozenset(entry.between)
        if pair in seen:
            t.r.report(t.at("between"), list(entry.between),
                       f"this pair is already correlated by correlations[{seen[pair]}]",
                       "give each pair one entry")
            complete = False
            continue
        seen[pair] = i
        entries.append((i, entry))
    if complete:
        _check_positive_definite(root, entries)
    return tuple(entry for _, entry in entries)


def _read_entry(t: Table) -> Correlation | None:
    between = t.read("between", _as_pair, _EXAMPLE, "the two quantities to correlate, named "
                     "as a driver names its input")
    rank = t.read("rank", as_number, "0.7", "Spearman's rank correlation, in (-1, 1)",
                  above=-1.0)
    if rank is not None and rank >= 1.0:
        t.r.report(t.at("rank"), t.data["rank"], "must be < 1",
                   "a rank correlation of 1 makes two quantities one; lower it below 1")
        rank = None
    if between is None or rank is None:
        return None
    return Correlation(between, rank)


def _as_pair(r, key, value, spec: Spec):
    """Two different non-empty strings, or None (reported)."""
    if not isinstance(value, list) or len(value) != 2:
        what = f"{len(value)} entries" if isinstance(value, list) else type_name(value)
        r.report(key, value, f"must be an array of two quantity names, not {what}",
                 spec.type_hint)
        return None
    names = []
    for j, item in enumerate(value):
        if not isinstance(item, str) or not item:
            what = "an empty string" if isinstance(item, str) else type_name(item)
            r.report(f"{key}[{j}]", item, f"must be a quantity name, not {what}",
                     spec.type_hint)
            return None
        names.append(item)
    if names[0] == names[1]:
        r.report(key, value, "names one quantity twice", "name two different quantities")
        return None
    return tuple(names)


def _check_positive_definite(root: Table, entries: list[tuple[int, Correlation]]) -> None:
    """Report the first entry with which the Pearson matrix stops being positive definite."""
    pairs = []
    for i, entry in entries:
        pairs.append((*entry.between, entry.rank))
        lowest = smallest_eigenvalue(pairs)
        if lowest <= MIN_EIGENVALUE:
            root.r.report(f"correlations[{i}].rank", entry.rank,
                          f"with the entries before it, the correlation matrix is not positive "
                          f"definite (the smallest eigenvalue of its Pearson matrix, "
                          f"2 sin(pi rank / 6) = {pearson_of_spearman(entry.rank):.4f} here, is "
                          f"{lowest:.4g})",
                          "the ranks contradict each other (A and B, B and C strongly "
                          "positive, A and C negative cannot all hold): weaken this rank or "
                          "the ones it meets")
            return
