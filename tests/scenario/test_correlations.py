"""[[correlations]] (issue 28, 3b) as read: two quantity names and a rank in (-1, 1) per entry,
each problem located at its key with what to write instead, a pair named twice refused, and
a set of ranks whose Pearson matrix is not positive definite refused at the entry that makes
it so, with the smallest eigenvalue (numpy's, checked here against a hand computation)."""
from __future__ import annotations

import math

import numpy as np
import pytest

from mcrisk.core.model import Correlation
from mcrisk.scenario import MAX_CORRELATIONS, load_scenario

from ..helpers import DATA, SCENARIOS, load_text, problems

pytestmark = pytest.mark.usefixtures("in_tmp")

GROUP_TEXT = (DATA / "copula-group.toml").read_text()
ENTRY = '''
[[correlations]]
between = {between}
rank = {rank}
'''


def with_entry(between: str = '["shared.a", "shared.b"]', rank: str = "0.5") -> str:
    """The minimal part of copula-group.toml (no correlations) with one entry."""
    return GROUP_TEXT[:GROUP_TEXT.index("[[correlations]]")] + ENTRY.format(between=between,
                                                                           rank=rank)


def test_the_shipped_example_reads_its_correlation():
    scenario = load_scenario(SCENARIOS / "correlated.toml")
    assert scenario.correlations == (Correlation(("shared.vendor", "hall.B.energized.delay"),
                                                 0.7),)
    assert load_text(with_entry()).correlations == (Correlation(("shared.a", "shared.b"), 0.5),)


@pytest.mark.parametrize("between, rank, expected", [
    ('["shared.a", "shared.b"]', "1",
     ("correlations[0].rank = 1: must be < 1 (a rank correlation of 1 makes two quantities one; "
     "lower it below 1)")),
    ('["shared.a", "shared.b"]', "-1",
     "correlations[0].rank = -1: must be > -1 (Spearman's rank correlation, in (-1, 1))"),
    ('["shared.a", "shared.b"]', '"high"',
     "correlations[0].rank = 'high': must be a number, not a string (for example rank = 0.7)"),
    ('["shared.a"]', "0.5",
     ("correlations[0].between = ['shared.a']: must be an array of two quantity names, not 1 "
     'entries (for example between = ["shared.vendor", "hall.B.energized.delay"])')),
    ('"shared.a"', "0.5",
     ("correlations[0].between = 'shared.a': must be an array of two quantity names, not a "
     'string (for example between = ["shared.vendor", "hall.B.energized.delay"])')),
    ('["shared.a", 3]', "0.5",
     ("correlations[0].between[1] = 3: must be a quantity name, not a number (for example "
     'between = ["shared.vendor", "hall.B.energized.delay"])')),
    ('["shared.a", "shared.a"]', "0.5",
     ("correlations[0].between = ['shared.a', 'shared.a']: names one quantity twice (name two "
     "different quantities)")),
])
def test_a_malformed_entry_is_located(between, rank, expected):
    assert problems(with_entry(between, rank)) == [f"x.toml: {expected}"]


def test_a_missing_key_and_an_unknown_one_are_located():
    text = with_entry().replace("rank = 0.5", "rnk = 0.5")
    assert problems(text) == [
        "x.toml: correlations[0].rnk = 0.5: unknown key (did you mean 'rank'?)",
        ("x.toml: correlations[0].rank: missing (add rank = 0.7, Spearman's rank correlation, "
        "in (-1, 1))")]


def test_a_pair_named_twice_is_refused_in_either_order():
    text = with_entry() + ENTRY.format(between='["shared.b", "shared.a"]', rank="0.2")
    assert problems(text) == [
        ("x.toml: correlations[1].between = ['shared.b', 'shared.a']: this pair is already "
        "correlated by correlations[0] (give each pair one entry)")]


def test_too_many_entries_are_refused():
    text = with_entry() + "".join(ENTRY.format(between=f'["x{i}", "y{i}"]', rank="0.1")
                                  for i in range(MAX_CORRELATIONS))
    assert problems(text) == [
        (f"x.toml: correlations: has {MAX_CORRELATIONS + 1} entries, more than "
        f"{MAX_CORRELATIONS} (every correlated quantity sums the normal scores of its group in "
        "every scenario; see Limits in the scenario format)")]


def test_ranks_that_contradict_each_other_are_refused_with_the_smallest_eigenvalue():
    """a~b 0.6, b~c -0.3, a~c 0.1 hold together; adding a~d 0.8 does not: the Schur complement
    of d leaves a a variance of 1 - r_ad^2 = 0.32, too little for its correlation 0.618 with b.
    The eigenvalue is the hand-built Pearson matrix's."""
    text = GROUP_TEXT.replace('rank = 0.5\n\n[[correlations]]\nbetween = ["risk.cdu"',
                              'rank = 0.8\n\n[[correlations]]\nbetween = ["risk.cdu"')
    assert text != GROUP_TEXT
    r = {k: 2 * math.sin(math.pi * v / 6) for k, v in
         {"ab": 0.6, "bc": -0.3, "ac": 0.1, "ad": 0.8}.items()}
    matrix = np.array([[1, r["ab"], r["ac"], r["ad"]], [r["ab"], 1, r["bc"], 0],
                       [r["ac"], r["bc"], 1, 0], [r["ad"], 0, 0, 1]])
    lowest = np.linalg.eigvalsh(matrix).min()
    assert lowest < 0
    assert problems(text) == [
        ("x.toml: correlations[3].rank = 0.8: with the entries before it, the correlation matrix "
        f"is not positive definite (the smallest eigenvalue of its Pearson matrix, 2 sin(pi rank "
        f"/ 6) = {r['ad']:.4f} here, is {lowest:.4g}) (the ranks contradict each other (A and B, B and "
        "C strongly positive, A and C negative cannot all hold): weaken this rank or the ones it "
        "meets)")]
