"""What each world quantity is about, as a record instead of a name to parse.

plan.world's builder (compile_world) gives every quantity a QuantityLabel: the scenario
section it belongs to, the id of the thing there (its subject) and which attribute of it the
quantity is (its part). The quantity's name is spelled from the label ("unit.SU1.burn_in",
"shipment.S1.arrival.delay") and must stay exactly as it is: it is also the quantity's
random-number address (rng.address_id(name)) and its metrics.parquet column. Whoever needs to
know what a quantity is about (the drivers analysis, plan.world's collision messages) reads the
label, never the name: ids may contain dots, so a name cannot be split back into its parts.
"""
from __future__ import annotations

from dataclasses import dataclass

# the sections a quantity can belong to, as they start its name
# ("cost": a price of [costs] given as a distribution, "cost.A.price_per_kw_month";
# "demand": the drawn growth of a demand forecast, "demand.forecast.growth_per_year")
SECTIONS = ("shared", "risk", "shipment", "hall", "island", "unit_type", "unit", "row", "cost",
            "demand")


@dataclass(frozen=True)
class QuantityLabel:
    """section: one of SECTIONS; subject: the id (a shared delay's name, a unit's id, ...);
    part: the attribute, dotted when it is derived ("arrival.delay", "burn_in.attempts"),
    "" for a quantity that is the subject itself (a shared delay, a risk)."""

    section: str
    subject: str
    part: str = ""

    def __post_init__(self):
        if self.section not in SECTIONS:
            raise ValueError(f"unknown quantity section {self.section!r}; one of {SECTIONS}")

    @property
    def name(self) -> str:
        """The quantity's name: section.subject[.part]."""
        return f"{self.section}.{self.subject}" + (f".{self.part}" if self.part else "")

    def derived(self, suffix: str) -> QuantityLabel:
        """The label of a quantity derived from this one: its part with `.suffix` added
        ("install" -> "install.with_risks")."""
        return QuantityLabel(self.section, self.subject,
                             f"{self.part}.{suffix}" if self.part else suffix)
