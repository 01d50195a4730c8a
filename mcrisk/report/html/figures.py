"""The figures of report.html with their captions: what each chart shows and how to read it,
where its axis is cut, and for the band charts a table of the whole scenarios drawn over the
bands (which scenario each line is, and its own numbers)."""
from __future__ import annotations

from ...core.labels import heading, label
from ..findings.sentences import fmt
from .parts import figure_html, swatch
from ..text import html_text


def _paths_table(paths: dict, colors: dict[str, str], columns: list) -> str:
    """What each drawn scenario line is: per strategy and quantile, the scenario's index and
    its own numbers. A scenario picked at two quantiles (equal values) is one row."""
    if not paths:
        return ""
    rows = []
    for name, picked in paths.items():
        groups: list[list] = []
        for path in picked:
            if groups and groups[-1][0].scenario == path.scenario:
                groups[-1].append(path)
            else:
                groups.append([path])
        for i, group in enumerate(groups):
            first = (f'<td class="name" rowspan="{len(groups)}">{swatch(name, colors)}</td>'
                     if i == 0 else "")
            style = "thick, strategy colour" if group[0] is picked[0] else "thin, black"
            if len(group) > 1:
                style = "both lines, on each other"
            line = " and ".join(p.label for p in group)
            rows.append(f"<tr>{first}<td>{line} <span class='ci'>({style})</span></td>"
                        f"<td class='n'>{group[0].scenario:,}</td>"
                        + "".join(f"<td class='n'>{cell(group[0])}</td>" for _, cell in columns)
                        + "</tr>")
    head = "".join(f"<th class='n'>{html_text(title)}</th>" for title, _ in columns)
    return ("<div class='scroll'><table><tr><th>strategy</th><th>line: the scenario at</th>"
            f"<th class='n'>scenario index</th>{head}</tr>" + "".join(rows) + "</table></div>")


def _heading(metric: str) -> str:
    """A metric's column in a table of drawn scenarios, as the page sets it (core.labels)."""
    return heading(metric, typeset=True)


def _band_caption(what: str, samples: int, severity: str, reason: str, ends: str) -> str:
    """How to read a band chart: the shaded band, the whole scenarios drawn over it, why they
    were picked (`reason`) and what the chart's lines are (`ends`)."""
    return (f"Shaded: at each day, the P10 to P90 of {what} over the {samples:,} scenarios. Its "
            "edges are percentiles taken day by day, not scenarios: no scenario follows them, "
            "and one scenario's dip can reach far below the lower edge. Lines: whole scenarios, "
            "replayed from their draws and drawn as they happened, in continuous time: per "
            "strategy the scenario at the P50 (thick, strategy colour) and the one at the P90 "
            f"(thin, black) of {severity} (nearest rank; of scenarios with equal values, the "
            f"lowest index). {reason} The table gives each line's scenario and its own numbers, "
            f"which are not percentiles. {ends}")


def _horizon_note(plan) -> str:
    """The band charts stop at the horizon, as the metrics do: say so, not silently."""
    return (f" The day axis ends at the horizon, day {fmt(plan.horizon)}, where the metrics "
            "stop counting; capacity after it is not drawn (the completion chart shows how "
            "often a plan is not complete by then).")


def fan_figure(figures, s: dict, plan, colors: dict[str, str]) -> str:
    """The fan chart of capacity in service, with the table of its drawn scenarios."""
    caption = _band_caption(
        "capacity in service", s["samples"], "shortfall against demand",
        "Shortfall picks them because it counts depth and duration together, against demand, "
        "and differs from scenario to scenario, where trough depth often takes a few values "
        "only.", f"Dashed: baseline B = {fmt(plan.baseline)} H100-eq; dotted: demand."
        + _horizon_note(plan))
    columns = [
        (_heading("shortfall_gpu_days"), lambda p: fmt(p.metrics["shortfall_gpu_days"])),
        (_heading("trough_depth"), lambda p: fmt(p.metrics["trough_depth"])),
        ("lowest capacity (H100-eq)", lambda p: fmt(p.total.minimum())),
        (_heading("trough_days"), lambda p: fmt(p.metrics["trough_days"]))]
    table = _paths_table(getattr(figures, "paths", {}).get("fan"), colors, columns)
    return figure_html(figures["fan"], "fan charts of capacity over time per strategy", caption,
                       table)


def island_figure(figures, s: dict, plan, colors: dict[str, str]) -> str:
    """The largest island's capacity over time, with the table of its drawn scenarios."""
    caption = _band_caption(
        "the largest island's capacity", s["samples"], label("homeless_days"),
        "Homeless days (the time the largest job has no island big enough) pick them, since "
        "this chart is about the largest job.",
        f"Red dashed: the largest job ({fmt(plan.largest_job)} H100-eq)." + _horizon_note(plan))
    columns = [
        (_heading("homeless_days"), lambda p: fmt(p.metrics["homeless_days"])),
        ("lowest largest island (H100-eq)", lambda p: fmt(p.largest.minimum()))]
    table = _paths_table(getattr(figures, "paths", {}).get("island"), colors, columns)
    return figure_html(figures["island"], "largest island capacity over time", caption, table)


def completion_caption(axis) -> str:
    """What the completion chart shows, and where (and why) its day axis is cut."""
    text = ("Share of scenarios in which the migration is complete by each day (the last old "
            "unit removed and the last new unit accepted; not cut at the horizon).")
    if axis is None:
        return text
    if axis.cut:
        if axis.widest is not None:
            text += (f" The day axis ends at day {fmt(axis.right)}, just past the largest P99.9 "
                     f"of any strategy ({axis.widest}: day {fmt(axis.p999[axis.widest])})")
        else:
            text += (f" The day axis ends at day {fmt(axis.right)}, just past the horizon, which "
                     "is later than every strategy's P99.9")
        text += (f"; the tail beyond it is cut: up to {max(axis.beyond.values()):.2%} of a "
                 f"strategy's scenarios complete later, the latest on day {fmt(axis.latest)} "
                 f"({axis.latest_strategy}).")
    else:
        text += f" Every completion lies on the axis (the latest: day {fmt(axis.latest)})."
    never = {name: k for name, k in axis.never.items() if k}
    if never:
        text += " Never complete (a burn-in that never passes): " + ", ".join(
            f"{name} in {k:,} scenario{'' if k == 1 else 's'}" for name, k in never.items()) + "."
    return text


def trough_figure(figures) -> str:
    """The exceedance curves of trough depth, days and shortfall."""
    return figure_html(figures["trough"], "exceedance curves of trough depth, days and shortfall",
                       "Probability that the metric exceeds the value on the x-axis, over all "
                       "scenarios; read a strategy's P90 where its curve crosses the dotted "
                       "1-in-10 line. Curves are drawn widest first, so one that runs under "
                       "another shows at its edges; strategies with identical curves are dashed "
                       "and named under the axis.")


def completion_figure(figures) -> str:
    """The completion S-curves, with where their day axis is cut."""
    return figure_html(figures["completion"], "completion S-curves",
                       completion_caption(getattr(figures, "completion", None)))


def homeless_figure(figures, plan) -> str:
    """The exceedance curve of the largest job's homeless days."""
    return figure_html(figures["homeless"], "exceedance curve of homeless days",
                       f"Probability that the largest job ({fmt(plan.largest_job)} H100-eq) has "
                       "no island big enough for longer than the days on the x-axis, in total "
                       "over the horizon.")


def power_figure(figures) -> str:
    """Peak power draw per hall against its cap."""
    return figure_html(figures["power"], "peak power draw per hall", "Bars: P90 peak draw; tick: "
                       "the highest in any scenario; red line: the hall's cap.")
