"""A night-over-night comparison's result, as diff.md, the report, summary.md and the alerts
read it: each statistic's change (MetricChange), judged against Monte Carlo noise at level
ALPHA (mcrisk.report.nightly.significance) and against the materiality threshold
(mcrisk.report.nightly.materiality), and the whole comparison (NightDiff).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .input_changes import InputChange
from .materiality import Materiality

ALPHA = 0.01                                      # beyond noise: p < ALPHA
COMPARED_STATS = ("mean", "p50", "p90", "p99")    # of each continuous metric; power: probability


@dataclass(frozen=True)
class MetricChange:
    """One statistic of one strategy's metric, last night and tonight, and how it was judged."""

    strategy: str
    metric: str
    stat: str                  # mean | p50 | p90 | p99 | probability
    old: float
    new: float
    significant: bool | None   # beyond Monte Carlo noise; None: not testable
    method: str                # how significance was judged, in words
    p_value: float | None = None
    material: bool | None = True     # at least the materiality threshold; None: a value missing
    threshold: float = 0.0           # that threshold, in the metric's unit

    @property
    def delta(self) -> float:
        return self.new - self.old

    @property
    def relative(self) -> float:
        """|new - old| / max(|old|, |new|): 0 for no change, 1 for a change from 0, NaN when a
        value is missing."""
        scale = max(abs(self.old), abs(self.new))
        return 0.0 if scale == 0 else abs(self.delta) / scale

    @property
    def reported(self) -> bool:
        """Beyond noise and material: a change the diff reports."""
        return bool(self.significant) and bool(self.material)

    def why_not_reported(self) -> str:
        """In words, why this change is not reported ("" when it is)."""
        if self.reported:
            return ""
        if self.material is None:
            return "not computable (a value is missing)"
        if self.delta == 0:
            return "unchanged"
        if self.significant is None:
            return f"not testable against noise ({self.method})"
        if not self.significant:
            return f"within Monte Carlo noise ({self.method})"
        return (f"beyond noise but below the materiality threshold "
                f"(|change| {abs(self.delta):,.4g} < {self.threshold:,.4g})")


@dataclass(frozen=True)
class NightDiff:
    """Tonight against the night compared with: inputs that changed and every judged change."""

    current: str
    previous: str
    paired: bool
    pairing_note: str
    same_file: bool
    input_changes: list[InputChange]
    changes: list[MetricChange]
    deltas: dict = field(default_factory=dict)   # (strategy, metric, stat) -> raw delta, all stats
    added_strategies: list[str] = field(default_factory=list)
    removed_strategies: list[str] = field(default_factory=list)
    skipped: tuple[str, ...] = ()                # later nights not compared with, and why
    materiality: Materiality = Materiality()
    run_changes: list[InputChange] = field(default_factory=list)   # seed, samples, risks
    run_lines: list[str] = field(default_factory=list)   # run_changes in words (unescaped)
    status_change: str | None = None   # how the status changed (status_changes), unescaped
    change_log: list = field(default_factory=list)   # change_log.LogLine: the night in words
    milestones: list = field(default_factory=list)   # lead.MilestoneActual: reached, vs plan
    lead: object = None                # lead.Lead: the executing plan's figures, what moved them

    def delta(self, strategy: str, metric: str, stat: str) -> float | None:
        """The raw change of a statistic, noise or not (None when not in both nights)."""
        return self.deltas.get((strategy, metric, stat))

    def change(self, strategy: str, metric: str, stat: str) -> MetricChange | None:
        """The judged change of a statistic, or None when it was not compared."""
        for c in self.changes:
            if (c.strategy, c.metric, c.stat) == (strategy, metric, stat):
                return c
        return None

    @property
    def significant(self) -> list[MetricChange]:
        """Changes beyond noise, material or not, in the order compared."""
        return [c for c in self.changes if c.significant]

    @property
    def reported(self) -> list[MetricChange]:
        """Changes beyond noise and material, largest relative change first."""
        return sorted((c for c in self.changes if c.reported), key=lambda c: -c.relative)

    @property
    def immaterial(self) -> list[MetricChange]:
        """Changes beyond noise but below the materiality threshold."""
        return [c for c in self.changes if c.significant and c.material is False]

