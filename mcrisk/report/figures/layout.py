"""Where a report figure's axes, title and legends go: computed once, before the figure is drawn.

matplotlib's `tight_layout` and `savefig(bbox_inches="tight")` find the room that titles, tick
labels, axis labels and legends need by laying out every axis, tick by tick, several times,
and the tight bounding box draws the whole figure once more before the real draw: most of the
report's time went there. Here the room is reserved from what is known before drawing: the
figure's size in inches, and the size of each text as it will be drawn (its font metrics only,
measured on the real Text artists: titles, axis labels, each axis's tick labels, a legend's
box), so that nothing is clipped or overlaps, the canvas keeps its size (every figure as wide
as the page's column), and the figure is drawn exactly once, when it is saved.

Sizes are in inches. `header` puts the suptitle and a figure legend at the top; `arrange`
places a grid of axes (rows of columns, None where a cell is empty) under it; `legend_under`
hangs an axes legend under that axes's x label.

A figure keeps its width (the page's column) but not always its height: where the header (a
legend of a hundred strategies), the labels or a plot's own content (a bar per strategy) leave
its plotting areas lower than LEAST_PLOT_HEIGHT, `arrange` makes the figure taller, for
plotting areas of ROOMY_PLOT_HEIGHT, the header staying at the top. At their usual sizes the
report's figures have plotting areas of 1 to 3 inches (the lowest: the largest island's, with a
date axis), so they keep their sizes.
"""
from __future__ import annotations

import textwrap
from dataclasses import dataclass

import matplotlib as mpl
from matplotlib.backends.backend_agg import FigureCanvasAgg

PAD = 0.08          # inches between the canvas's edge and anything drawn
GAP = 0.1           # inches between blocks: title and legend, legend and axes, neighbours
LEAST_PLOT_HEIGHT = 0.9   # inches: a plotting area lower than this grows the figure ...
ROOMY_PLOT_HEIGHT = 2.0   # ... for plotting areas this high, about the report's usual ones


@dataclass(frozen=True)
class Ticks:
    """The room an axis's tick labels take: the widest and the tallest label; the tick's length
    plus the gap to its label; how far labels reach past the axis's ends (by their alignment:
    a centred label half its width, a right-aligned one all of it to the left). All 0 when the
    axis shows no labels."""

    width: float = 0.0
    height: float = 0.0
    space: float = 0.0
    before: float = 0.0
    after: float = 0.0


class Measure:
    """Sizes of a figure's artists as they will be drawn, from the Agg renderer's font
    metrics (nothing is drawn); tick labels measured once per axis."""

    def __init__(self, fig):
        canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
        self.renderer = canvas.get_renderer()
        self._ticks: dict[int, Ticks] = {}

    def size(self, artist) -> tuple[float, float]:
        """(width, height) in inches of `artist`; (0, 0) if it draws nothing."""
        if not artist.get_visible() or (hasattr(artist, "get_text") and not artist.get_text()):
            return 0.0, 0.0
        box = artist.get_window_extent(self.renderer)
        return float(box.width) / self.renderer.dpi, float(box.height) / self.renderer.dpi

    def ticks(self, axis, interval=None) -> Ticks:
        """What `axis`'s tick labels take (see _ticks); the limits must not change after."""
        if id(axis) not in self._ticks:
            self._ticks[id(axis)] = _ticks(axis, self, interval)
        return self._ticks[id(axis)]

    def forget_ticks(self) -> None:
        """Measure the tick labels again: an axis made longer may get more ticks."""
        self._ticks.clear()


def _ticks(axis, measure: Measure, interval=None) -> Ticks:
    """The tick labels `axis` will draw: those of the ticks inside its view interval (or
    `interval`: a date axis takes its limits from its parent only when drawn)."""
    labels = axis.get_majorticklabels()          # brings ticks and labels up to date
    lo, hi = sorted(axis.get_view_interval() if interval is None else interval)
    slack = 1e-9 * max(abs(lo), abs(hi), 1.0)
    shown = {id(label) for label in labels}
    sizes, space, before, after = [], 0.0, 0.0, 0.0
    for tick in axis.get_major_ticks():
        if not lo - slack <= tick.get_loc() <= hi + slack:
            continue
        for label in (tick.label1, tick.label2):
            if id(label) not in shown or not label.get_text():
                continue
            w, h = measure.size(label)
            sizes.append((w, h))
            space = max(space, (tick.get_tick_padding() + tick.get_pad()) / 72.0)
            align = label.get_horizontalalignment()
            share = {"center": 0.5, "right": 1.0, "left": 0.0}.get(align, 0.5)
            before, after = max(before, w * share), max(after, w * (1.0 - share))
    if not sizes:
        return Ticks()
    return Ticks(max(w for w, _ in sizes), max(h for _, h in sizes), space, before, after)


def _label(axis, measure, vertical: bool) -> float:
    """Depth of an axis label with its pad (its height; a y label's width), 0 without one."""
    w, h = measure.size(axis.label)
    depth = w if vertical else h
    return depth + axis.labelpad / 72.0 if depth else 0.0


def _date_axes(ax) -> list:
    """The secondary x axes drawn on top of `ax` (charts.date_axis)."""
    return [child for child in ax.child_axes if hasattr(child, "set_functions")]


def _x_ticks(ax, measure) -> list[Ticks]:
    """The x tick labels of `ax` and of its date axes (same days, so the same limits)."""
    limits = ax.xaxis.get_view_interval()
    return [measure.ticks(ax.xaxis), *(measure.ticks(a.xaxis, limits) for a in _date_axes(ax))]


def _half_y_label(ax, measure) -> float:
    """How far the y tick labels at the ends of the axis reach past its top or bottom."""
    return measure.ticks(ax.yaxis).height / 2.0


def above(ax, measure) -> float:
    """Room above the plotting area: the date axis's tick labels, then the axes title."""
    room = max([0.0, *(t.height + t.space for t in _x_ticks(ax, measure)[1:])])
    _, title = measure.size(ax.title)
    if title:
        room += title + mpl.rcParams["axes.titlepad"] / 72.0
    return max(room, _half_y_label(ax, measure))


def below(ax, measure) -> float:
    """Room under the plotting area: x tick labels, then the x label (every line of it)."""
    t = measure.ticks(ax.xaxis)
    room = t.height + t.space + _label(ax.xaxis, measure, False)
    return max(room, _half_y_label(ax, measure))


def left_of(ax, measure) -> float:
    """Room left of the plotting area: the y label and the y tick labels, or the x tick labels
    (and the date axis's) reaching past the axis's left end, whichever is more."""
    t = measure.ticks(ax.yaxis)
    labels = t.width + t.space + _label(ax.yaxis, measure, True)
    return max([labels, *(t.before for t in _x_ticks(ax, measure))])


def right_of(ax, measure) -> float:
    """Room right of the plotting area: x tick labels reaching past the axis's right end."""
    return max(t.after for t in _x_ticks(ax, measure))


def fit(text, measure, width: float) -> None:
    """Break a text's lines at spaces, shorter and shorter, until it is no wider than `width`
    inches (every word stays; a word longer than a line is split)."""
    lines = text.get_text().split("\n")
    chars = max(len(line) for line in lines)
    while measure.size(text)[0] > width and chars > 8:
        chars = int(chars * 0.92)
        text.set_text("\n".join(part for line in lines
                                for part in (textwrap.wrap(line, chars) or [""])))


@dataclass(frozen=True)
class Header:
    """What `header` put at the top of a figure: the inches it takes, its title, and its
    legend with the depth (inches under the canvas's top) it hangs from, so that `arrange` can
    keep both at the top when it makes the figure taller."""

    height: float
    title: object
    legend: object = None
    legend_depth: float = 0.0

    def hang(self, fig) -> None:
        """Put the title and the legend at their depths under the top of `fig` (as tall as
        it is now)."""
        height = fig.get_size_inches()[1]
        self.title.set_y(1.0 - PAD / height)
        if self.legend is not None:
            self.legend.set_bbox_to_anchor((0.5, 1.0 - self.legend_depth / height),
                                           fig.transFigure)


def header(fig, measure: Measure, title: str, title_size: float, legend=None,
           ncol: int = 1) -> Header:
    """Put the suptitle at the top and under it the figure legend that `legend(ncols)` makes
    (loc 'upper center'), made again with fewer columns while it is wider than the canvas
    (a legend's columns are fixed when it is made); returns what they take (Header)."""
    width, height = fig.get_size_inches()
    text = fig.suptitle(title, fontsize=title_size, y=1.0 - PAD / height, va="top")
    used = PAD + measure.size(text)[1]
    if legend is None:
        return Header(used + GAP, text)
    made = legend(ncol)
    while ncol > 1 and measure.size(made)[0] > width - 2 * PAD:
        made.remove()
        ncol -= 1
        made = legend(ncol)
    placed = Header(used + GAP / 2 + measure.size(made)[1] + GAP, text, made, used + GAP / 2)
    placed.hang(fig)
    return placed


def arrange(fig, grid, measure, top: Header, under: float = 0.0,
            least_height: float = LEAST_PLOT_HEIGHT,
            grown_height: float = ROOMY_PLOT_HEIGHT) -> None:
    """Place the axes of `grid` (rows of columns; None or a hidden axes: an empty cell) under
    the `top` header, with the room each row and column needs around its plotting areas; the
    cells share one width and one height. Cells lower than `least_height` inches make the
    figure taller, for cells `grown_height` high (the header kept at the top). `under`:
    inches kept free under each row's labels (for legend_under)."""
    width, height = fig.get_size_inches()
    cells = [[ax if ax is not None and ax.get_visible() else None for ax in row] for row in grid]
    rows, cols = len(cells), len(cells[0])

    def most(values) -> float:
        return max([0.0, *values])

    lefts = [most(left_of(row[c], measure) for row in cells if row[c]) for c in range(cols)]
    rights = [most(right_of(row[c], measure) for row in cells if row[c]) for c in range(cols)]
    left, right = PAD + lefts[0], PAD + rights[-1]
    col_gap = most(rights[c - 1] + lefts[c] + GAP for c in range(1, cols))
    cell_w = (width - left - right - (cols - 1) * col_gap) / cols
    for c in range(cols):                        # titles and x labels no wider than their room
        centre = left + c * (cell_w + col_gap) + cell_w / 2
        half = min(centre - PAD if c == 0 else (cell_w + col_gap) / 2,
                   width - PAD - centre if c == cols - 1 else (cell_w + col_gap) / 2)
        for ax in (row[c] for row in cells if row[c]):
            fit(ax.title, measure, 2 * half)
            fit(ax.xaxis.label, measure, 2 * half)
    ups = [most(above(ax, measure) for ax in row if ax) for row in cells]
    downs = [most(below(ax, measure) for ax in row if ax) + under for row in cells]
    top_room, bottom = top.height + ups[0], PAD + downs[-1]
    row_gap = most(downs[r - 1] + ups[r] + GAP for r in range(1, rows))
    cell_h = (height - top_room - bottom - (rows - 1) * row_gap) / rows
    if cell_w > 0.5 and cell_h < least_height:
        fig.set_size_inches(width, height + rows * (max(grown_height, least_height) - cell_h))
        top.hang(fig)
        measure.forget_ticks()              # taller axes may have more ticks: measure again
        return arrange(fig, grid, measure, top, under, least_height=0.0)
    if cell_w <= 0.5 or cell_h <= 0.5:
        raise ValueError(f"figure too small for its labels: plotting areas of {cell_w:.2f} x "
                         f"{cell_h:.2f} inches")
    fig.subplots_adjust(left=left / width, right=1.0 - right / width,
                        top=1.0 - top_room / height, bottom=bottom / height,
                        wspace=col_gap / cell_w, hspace=row_gap / cell_h)


def legend_room(legend, measure) -> float:
    """The room, in inches, that legend_under needs under an axes's labels."""
    return GAP / 2 + measure.size(legend)[1]


def legend_under(ax, measure, legend) -> None:
    """Hang an axes legend (loc 'upper center') under the axes's x label; call after arrange,
    which placed the axes."""
    depth = below(ax, measure) + GAP / 2
    cell_h = ax.figure.get_size_inches()[1] * ax.get_position().height
    legend.set_bbox_to_anchor((0.5, -depth / cell_h), ax.transAxes)
