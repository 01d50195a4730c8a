"""The report and the nightly history cannot be broken by what users write (issue 8).

User strings reach figures (mathtext), report.html, the Markdown files and the terminal; a
history folder can be edited or damaged by hand. Every test here would fail (or crash) before
the fix it guards.
"""
from __future__ import annotations

import re
from pathlib import Path

import matplotlib.text
import pytest

from mcrisk.cli import main
from mcrisk.report import figures as figures_module

MINIMAL = Path(__file__).resolve().parents[1] / "scenarios" / "minimal.toml"

# What mathtext, TeX, Markdown and printf-style formatting would read: a formula, a lone
# superscript (mathtext raises on it), a backslash, an underscore and a percent sign.
PREFIX = r"$x^2$\_%$^$"
IDS = ("E1..E2", "N1..N2", "R1..R2", "N1", "N2", "R1", "R2", "R3", "H", "S1", "ib-old",
       "ib-new", "h100-pod", "gb300-rack", "swap-gated", "drain-on-day", "minimal")


def _prefixed(token: str) -> str:
    return "..".join(PREFIX + part for part in token.split(".."))


def hostile_scenario(folder: Path) -> Path:
    """minimal.toml with PREFIX before every id, name and description."""
    escaped = PREFIX.replace("\\", "\\\\")          # a TOML basic string

    def rename(match: re.Match) -> str:
        token = match[1]
        if token in IDS:
            return '"' + _prefixed(token).replace("\\", "\\\\") + '"'
        return match[0]

    text = re.sub(r'"([^"\n]*)"', rename, MINIMAL.read_text())
    text = text.replace('description = "', f'description = "{escaped} ')
    path = folder / "hostile.toml"
    path.write_text(text)
    return path


def test_a_hostile_scenario_is_read_with_its_ids_as_written(tmp_path):
    from mcrisk.scenario import load_scenario

    scenario = load_scenario(hostile_scenario(tmp_path))
    assert scenario.name == PREFIX + "minimal"
    assert [s.name for s in scenario.strategies] == [PREFIX + "swap-gated", PREFIX + "drain-on-day"]
    assert [h.id for h in scenario.halls] == [PREFIX + "H"]


def test_every_user_string_in_a_figure_is_drawn_literally(tmp_path, monkeypatch):
    """Mathtext used to read `$^$` in a hall id and raise in savefig, after summary.json and
    the Parquet files were written; names with `$` were drawn as formulas."""
    drawn = []
    save = figures_module._png

    def keep(fig):
        png = save(fig)                  # draws every text (tick labels are made lazily)
        drawn.append(fig)
        return png

    monkeypatch.setattr(figures_module, "_png", keep)
    out = tmp_path / "out"
    assert main(["run", str(hostile_scenario(tmp_path)), "--samples", "200", "--backend", "cpu",
                 "--out", str(out), "--quiet"]) == 0
    assert (out / "report.html").is_file() and (out / "summary.md").is_file()
    assert len(drawn) == 6
    texts = [t for fig in drawn for t in fig.findobj(matplotlib.text.Text) if t.get_text()]
    shown = {t.get_text() for t in texts}
    assert f"hall {PREFIX}H: P90 peak draw (kW)" in shown
    assert PREFIX + "swap-gated" in shown and PREFIX + "drain-on-day" in shown
    assert all(not t.get_parse_math() for t in texts if "$" in t.get_text())
    page = (out / "report.html").read_text()
    for name in ("H", "swap-gated", "drain-on-day", "minimal"):
        assert PREFIX + name in page
