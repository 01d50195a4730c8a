"""The drawing primitives of the report's figures: inline SVG built as text (as the Gantt is,
html/gantt.py), in milliseconds, sharp at any zoom and in print, no plotting library.

    Canvas      one figure: a title, a legend, panels; its SVG element as a string
    Panel       a plotting area with its data limits: ticks, grid, frame, labels, and what is
                drawn inside it (step lines, step bands, lines, bars, markers), clipped to it
    Legend      keys (a line, a band's patch, a marker, a tick) with their labels, in as many
                columns as fit the width
    text_width  the width a text takes, from DejaVu Sans's advance widths (the browser's
                sans-serif here, and wider than Helvetica or Arial, so that room measured with
                it is room enough in any of them)

Sizes are pixels of a 1200-pixel-wide canvas (what a figure of 12 inches at 100 dpi was):
the page scales the SVG to its column, keeping its proportions. Every text goes through
text.visible and is escaped: a name is shown as written. Each panel's group carries its data
limits and its box (data-xlim, data-ylim, data-box), so that a test can read a drawn point
back as data.
"""
from __future__ import annotations

import math
import textwrap
from dataclasses import dataclass, field
from html import escape

import numpy as np

from ..text import visible

FONT = "DejaVu Sans, Verdana, Arial, Helvetica, sans-serif"
PT = 100 / 72                      # pixels per point: line widths were given in points
WIDTH = 1200
PAD = 8                            # pixels between the canvas's edge and anything drawn
GAP = 10                           # between blocks: title and legend, legend and panels
TICK_SIZE, LABEL_SIZE, KEY_SIZE, TITLE_SIZE, PANEL_TITLE_SIZE = 13.0, 13.0, 12.5, 16.5, 15.0
TICK_LENGTH, TICK_PAD = 5.0, 4.0
GRID = "#e3e3e3"

# DejaVu Sans advance widths (em) of the printable ASCII characters, from the font itself
_ADVANCE = (
    0.318, 0.401, 0.46, 0.838, 0.636, 0.95, 0.78, 0.275, 0.39, 0.39, 0.5, 0.838, 0.318, 0.361,
    0.318, 0.337, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.636, 0.337,
    0.337, 0.838, 0.838, 0.838, 0.531, 1.0, 0.684, 0.686, 0.698, 0.77, 0.632, 0.575, 0.775,
    0.752, 0.295, 0.295, 0.656, 0.557, 0.863, 0.748, 0.787, 0.603, 0.787, 0.695, 0.635, 0.611,
    0.732, 0.684, 0.989, 0.685, 0.611, 0.685, 0.39, 0.337, 0.39, 0.838, 0.5, 0.5, 0.613, 0.635,
    0.55, 0.635, 0.615, 0.352, 0.635, 0.634, 0.278, 0.278, 0.579, 0.278, 0.974, 0.634, 0.612,
    0.635, 0.635, 0.411, 0.521, 0.392, 0.634, 0.592, 0.818, 0.592, 0.592, 0.525, 0.636, 0.337,
    0.636, 0.838)
_WIDE = 1.0                        # any other character: as wide as an em (CJK, symbols)
_BOLD = 1.1                        # bold DejaVu Sans is about this much wider


def text_width(text: str, size: float, bold: bool = False) -> float:
    """Pixels that `text` (one line) takes at `size` pixels."""
    em = sum(_ADVANCE[o - 32] if 32 <= (o := ord(c)) < 127 else
             (0.5 if c in "–’‘" else _WIDE) for c in text)
    return em * size * (_BOLD if bold else 1.0)


def esc(text) -> str:
    return escape(visible(str(text)), quote=True)


def wrap(text: str, width: float, size: float) -> list[str]:
    """`text` broken at spaces (and at its own newlines) into lines no wider than `width`
    pixels; a word longer than a line is split."""
    lines = []
    for line in text.split("\n"):
        chars = len(line)
        parts = [line]
        while chars > 8 and max(text_width(p, size) for p in parts) > width:
            chars = int(chars * 0.92)
            parts = textwrap.wrap(line, chars) or [""]
        lines.extend(parts)
    return lines


def num(value: float) -> str:
    """A coordinate: one decimal, no '-0.0'."""
    text = f"{value:.1f}"
    return "0.0" if text == "-0.0" else text


def points(x: np.ndarray, y: np.ndarray) -> str:
    """'x,y x,y ...' of pixel coordinates, one decimal."""
    xy = np.round(np.column_stack([x, y]).astype(float), 1) + 0.0
    return " ".join(f"{a:.1f},{b:.1f}" for a, b in xy.tolist())


def steps_post(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The corners of a step line (matplotlib's where='post'): y[i] from x[i] to x[i + 1]."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.size < 2:
        return x, y
    return np.repeat(x, 2)[1:], np.repeat(y, 2)[:-1]


# ---- ticks -------------------------------------------------------------------------------

def nice_ticks(lo: float, hi: float, target: int = 6) -> list[float]:
    """Round values spanning [lo, hi], about `target` of them (1, 2, 2.5 or 5 times a power
    of ten apart), only those inside."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / max(target, 1)
    power = 10.0 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw * 0.999)
    first = math.ceil(lo / step - 1e-9)
    ticks = []
    k = first
    while k * step <= hi + step * 1e-9:
        ticks.append(round(k * step, 12) + 0.0)
        k += 1
    return ticks


def thousands(value: float, step: float = 1.0) -> str:
    """A tick label with thousands separators and the decimals its step needs."""
    decimals = 0 if step >= 1 or step <= 0 else min(6, -math.floor(math.log10(step) + 1e-9))
    text = f"{value:,.{decimals}f}"
    return "0" if text.strip("-0.,") == "" else text


def compact(value: float, step: float = 1.0) -> str:
    """Large values as 200k or 1.5M, so that tick labels stay apart."""
    if abs(value) >= 1e6:
        return f"{value / 1e6:,.3g}M"
    if abs(value) >= 1e4:
        return f"{value / 1e3:,.3g}k"
    return thousands(value, step)


def percent(value: float, step: float = 0.2) -> str:
    return f"{value * 100:.0f}%"


# ---- legend --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Key:
    """A legend entry: how its key is drawn and its label. kind: 'line' (style: stroke,
    width in px, dash, opacity), 'patch' (fill, opacity), 'marker' (fill, stroke: a circle),
    'tick' (a short vertical bar)."""

    kind: str
    label: str
    style: dict = field(default_factory=dict)


_KEY_W, _KEY_GAP, _COL_GAP = 30.0, 7.0, 26.0


def _key_svg(key: Key, x: float, y: float) -> str:
    """The key's symbol, its left end at x, centred on y."""
    s = key.style
    if key.kind == "patch":
        return (f'<rect x="{num(x)}" y="{num(y - 5)}" width="{_KEY_W - 4:.0f}" height="10" '
                f'fill="{s["fill"]}" fill-opacity="{s.get("opacity", 1)}"/>')
    if key.kind == "marker":
        return (f'<circle cx="{num(x + _KEY_W / 2)}" cy="{num(y)}" r="4.5" '
                f'fill="{s.get("fill", "none")}" stroke="{s.get("stroke", s.get("fill"))}" '
                f'stroke-width="{s.get("width", 1.5)}"/>')
    if key.kind == "tick":
        return (f'<line x1="{num(x + _KEY_W / 2)}" x2="{num(x + _KEY_W / 2)}" '
                f'y1="{num(y - 8)}" y2="{num(y + 8)}" stroke="black" stroke-width="2"/>')
    return f'<line x1="{num(x)}" x2="{num(x + _KEY_W - 4)}" y1="{num(y)}" y2="{num(y)}" ' \
           f'{stroke(**s)}/>'


def stroke(color: str = "black", width: float = 1.0, dash: str | None = None,
           offset: float = 0.0, opacity: float = 1.0) -> str:
    """The stroke attributes of a line."""
    out = f'stroke="{color}" stroke-width="{width:.2f}" fill="none"'
    if dash:
        out += f' stroke-dasharray="{dash}"'
        if offset:
            out += f' stroke-dashoffset="{offset:.1f}"'
    if opacity != 1.0:
        out += f' stroke-opacity="{opacity}"'
    return out


@dataclass
class Legend:
    """Keys laid out in rows of `ncol` columns (fewer while wider than `width`), each
    column as wide as its widest entry."""

    keys: list[Key]
    ncol: int
    width: float
    size: float = KEY_SIZE

    def __post_init__(self):
        self.ncol = max(1, min(self.ncol, len(self.keys)))
        while self.ncol > 1 and sum(self._columns(self.ncol)) > self.width:
            self.ncol -= 1
        self.columns = self._columns(self.ncol)
        if sum(self.columns) > self.width:             # one column still too wide: wrap
            room = self.width - _KEY_W - _KEY_GAP
            self.lines = [wrap(k.label, room, self.size) for k in self.keys]
            self.columns = [min(self.width, max(_KEY_W + _KEY_GAP + max(
                text_width(line, self.size) for line in lines) for lines in self.lines))]
        else:
            self.lines = [[k.label] for k in self.keys]
        rows = [self.lines[r * self.ncol:(r + 1) * self.ncol]
                for r in range(math.ceil(len(self.keys) / self.ncol))]
        self.row_heights = [max(len(lines) for lines in row) * self.size * 1.25 + 4
                            for row in rows]
        self.height = sum(self.row_heights)

    def _columns(self, ncol: int) -> list[float]:
        widths = [_KEY_W + _KEY_GAP + text_width(k.label, self.size) for k in self.keys]
        return [max(widths[c::ncol]) + (_COL_GAP if c < ncol - 1 else 0) for c in range(ncol)]

    def svg(self, centre: float, top: float) -> str:
        """The legend centred on x = centre, its top at y = top."""
        left = centre - sum(self.columns) / 2
        out = ['<g class="legend">']
        y = top
        for r, height in enumerate(self.row_heights):
            x = left
            for c in range(self.ncol):
                i = r * self.ncol + c
                if i >= len(self.keys):
                    break
                key, lines = self.keys[i], self.lines[i]
                middle = y + self.size * 0.75
                out.append(_key_svg(key, x, middle))
                for j, line in enumerate(lines):
                    out.append(f'<text x="{num(x + _KEY_W + _KEY_GAP - 4)}" '
                               f'y="{num(middle + self.size * 0.36 + j * self.size * 1.25)}" '
                               f'font-size="{self.size}">{esc(line)}</text>')
                x += self.columns[c]
            y += height
        out.append("</g>")
        return "".join(out)


# ---- panels --------------------------------------------------------------------------------

@dataclass
class Axis:
    """One axis of a panel: limits, tick positions with their labels, its label (lines)."""

    lo: float
    hi: float
    ticks: list[float]
    labels: list[str]
    title: list[str] = field(default_factory=list)
    show_labels: bool = True

    @classmethod
    def linear(cls, lo: float, hi: float, formatter=thousands, target: int = 6,
               title: str | list[str] = "") -> "Axis":
        ticks = nice_ticks(lo, hi, target)
        step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
        return cls(lo, hi, ticks, [formatter(t, step) for t in ticks],
                   [title] if isinstance(title, str) and title else list(title or []))

    def tick_width(self) -> float:
        return max([0.0, *(text_width(t, TICK_SIZE) for t in self.labels)]) \
            if self.show_labels else 0.0


def padded(lo: float, hi: float, margin: float = 0.05) -> tuple[float, float]:
    """matplotlib's automatic limits: the data's range and `margin` of it on either side."""
    if not (math.isfinite(lo) and math.isfinite(hi)):
        return 0.0, 1.0
    span = hi - lo
    if span <= 0:
        span = abs(lo) or 1.0
        return lo - margin * span * 10, hi + margin * span * 10
    return lo - margin * span, hi + margin * span


class Panel:
    """A plotting area at (x, y, w, h) pixels showing x.lo..x.hi and y.lo..y.hi; draw into it
    with its methods, then svg() gives it with its frame, grid, ticks and labels."""

    def __init__(self, fid: str, x: float, y: float, w: float, h: float, xaxis: Axis,
                 yaxis: Axis, title: str = "", title_color: str = "black",
                 top_ticks: list[tuple[float, str]] | None = None, grid: str = "both",
                 categories: list[str] | None = None):
        self.fid, self.x, self.y, self.w, self.h = fid, x, y, w, h
        self.xaxis, self.yaxis, self.title, self.title_color = xaxis, yaxis, title, title_color
        self.top_ticks, self.grid, self.categories = top_ticks, grid, categories
        self.body: list[str] = []

    def X(self, v):
        a = self.xaxis
        return self.x + (np.asarray(v, dtype=float) - a.lo) / ((a.hi - a.lo) or 1.0) * self.w

    def Y(self, v):
        a = self.yaxis
        return self.y + self.h - (np.asarray(v, dtype=float) - a.lo) / ((a.hi - a.lo) or 1.0) \
            * self.h

    def _tip(self, tip: str | None) -> str:
        return f"<title>{esc(tip)}</title>" if tip else ""

    def step(self, x, y, css: str, tip: str | None = None, **style) -> None:
        """A step line (y[i] from x[i] to x[i + 1])."""
        sx, sy = steps_post(x, y)
        self.line(sx, sy, css, tip, **style)

    def line(self, x, y, css: str, tip: str | None = None, **style) -> None:
        x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
        keep = np.isfinite(x) & np.isfinite(y)
        self.body.append(f'<polyline class="{css}" points="{points(self.X(x[keep]), self.Y(y[keep]))}" '
                         f'{stroke(**style)} stroke-linejoin="miter">{self._tip(tip)}</polyline>')

    def band(self, x, lo, hi, color: str, opacity: float, css: str = "band",
             tip: str | None = None) -> None:
        """The area between two step functions of x (where='post')."""
        sx, slo = steps_post(x, lo)
        _, shi = steps_post(x, hi)
        px = np.concatenate([self.X(sx), self.X(sx[::-1])])
        py = np.concatenate([self.Y(shi), self.Y(slo[::-1])])
        self.body.append(f'<polygon class="{css}" points="{points(px, py)}" fill="{color}" '
                         f'fill-opacity="{opacity}" stroke="none">{self._tip(tip)}</polygon>')

    def hline(self, y: float, css: str, **style) -> None:
        py = num(float(self.Y(y)))
        self.body.append(f'<line class="{css}" x1="{num(self.x)}" x2="{num(self.x + self.w)}" '
                         f'y1="{py}" y2="{py}" {stroke(**style)}/>')

    def vline(self, x: float, css: str, tip: str | None = None, **style) -> None:
        px = num(float(self.X(x)))
        self.body.append(f'<line class="{css}" x1="{px}" x2="{px}" y1="{num(self.y)}" '
                         f'y2="{num(self.y + self.h)}" {stroke(**style)}>{self._tip(tip)}</line>')

    def raw(self, svg: str) -> None:
        self.body.append(svg)

    # room the panel's texts take around its plotting area
    def room_left(self) -> float:
        label = len(self.yaxis.title) * LABEL_SIZE * 1.2 + 6 if self.yaxis.title else 0.0
        width = (max(text_width(c, TICK_SIZE * 0.8) for c in self.categories)
                 if self.categories else self.yaxis.tick_width())
        return width + TICK_LENGTH + TICK_PAD + label

    def room_below(self) -> float:
        ticks = TICK_SIZE + TICK_LENGTH + TICK_PAD if self.xaxis.show_labels else 0.0
        return ticks + len(self.xaxis.title) * LABEL_SIZE * 1.2 + (4 if self.xaxis.title else 0)

    def room_above(self) -> float:
        room = TICK_SIZE * 0.85 + TICK_LENGTH + TICK_PAD if self.top_ticks else 0.0
        if self.title:
            room += PANEL_TITLE_SIZE * 1.2 + 4
        return max(room, TICK_SIZE / 2 + 2)

    def room_right(self) -> float:
        last = self.xaxis.labels[-1] if self.xaxis.labels and self.xaxis.show_labels else ""
        at_end = self.xaxis.ticks and abs(self.xaxis.ticks[-1] - self.xaxis.hi) < \
            1e-9 * max(1.0, abs(self.xaxis.hi))
        room = text_width(last, TICK_SIZE) / 2 if at_end else 0.0
        span = abs(self.xaxis.hi - self.xaxis.lo) or 1.0
        for day, label in self.top_ticks or ():      # a date near the right end: half of it
            if self.xaxis.hi - 0.08 * span <= day <= self.xaxis.hi:
                room = max(room, text_width(label, TICK_SIZE * 0.85) / 2)
        return room

    def svg(self) -> str:
        x0, y0, w, h = self.x, self.y, self.w, self.h
        clip = f"{self.fid}-clip"
        out = [f'<g class="panel" data-xlim="{self.xaxis.lo!r} {self.xaxis.hi!r}" '
               f'data-ylim="{self.yaxis.lo!r} {self.yaxis.hi!r}" '
               f'data-box="{x0!r} {y0!r} {w!r} {h!r}">',
               f'<clipPath id="{clip}"><rect x="{num(x0)}" y="{num(y0)}" width="{num(w)}" '
               f'height="{num(h)}"/></clipPath>']
        grid = []
        if self.grid in ("both", "x"):
            grid += [f'<line x1="{num(float(self.X(t)))}" x2="{num(float(self.X(t)))}" '
                     f'y1="{num(y0)}" y2="{num(y0 + h)}"/>' for t in self.xaxis.ticks]
        if self.grid in ("both", "y"):
            grid += [f'<line x1="{num(x0)}" x2="{num(x0 + w)}" y1="{num(float(self.Y(t)))}" '
                     f'y2="{num(float(self.Y(t)))}"/>' for t in self.yaxis.ticks]
        out.append(f'<g class="grid" stroke="{GRID}" stroke-width="1">{"".join(grid)}</g>')
        out.append(f'<g clip-path="url(#{clip})">{"".join(self.body)}</g>')
        out.append(f'<rect class="frame" x="{num(x0)}" y="{num(y0)}" width="{num(w)}" '
                   f'height="{num(h)}" fill="none" stroke="black" stroke-width="1"/>')
        ticks = ['<g class="xticks" font-size="%.1f" text-anchor="middle">' % TICK_SIZE]
        for t, label in zip(self.xaxis.ticks, self.xaxis.labels):
            px = num(float(self.X(t)))
            ticks.append(f'<line x1="{px}" x2="{px}" y1="{num(y0 + h)}" '
                         f'y2="{num(y0 + h + TICK_LENGTH)}" stroke="black"/>')
            if self.xaxis.show_labels:
                ticks.append(f'<text x="{px}" y="{num(y0 + h + TICK_LENGTH + TICK_PAD + TICK_SIZE * 0.8)}">'
                             f'{esc(label)}</text>')
        ticks.append("</g>")
        if self.categories:
            ticks.append('<g class="yticks" font-size="%.1f" text-anchor="end">'
                         % (TICK_SIZE * 0.8))
            for t, label in zip(self.yaxis.ticks, self.categories):
                py = num(float(self.Y(t)))
                ticks.append(f'<line x1="{num(x0 - TICK_LENGTH)}" x2="{num(x0)}" y1="{py}" '
                             f'y2="{py}" stroke="black"/><text x="{num(x0 - TICK_LENGTH - TICK_PAD)}" '
                             f'y="{num(float(self.Y(t)) + TICK_SIZE * 0.28)}">{esc(label)}</text>')
        else:
            ticks.append('<g class="yticks" font-size="%.1f" text-anchor="end">' % TICK_SIZE)
            for t, label in zip(self.yaxis.ticks, self.yaxis.labels):
                py = num(float(self.Y(t)))
                ticks.append(f'<line x1="{num(x0 - TICK_LENGTH)}" x2="{num(x0)}" y1="{py}" '
                             f'y2="{py}" stroke="black"/>')
                if self.yaxis.show_labels:
                    ticks.append(f'<text x="{num(x0 - TICK_LENGTH - TICK_PAD)}" '
                                 f'y="{num(float(self.Y(t)) + TICK_SIZE * 0.35)}">{esc(label)}</text>')
        ticks.append("</g>")
        out.extend(ticks)
        top = y0
        if self.top_ticks:
            out.append('<g class="dates" font-size="%.1f" text-anchor="middle">'
                       % (TICK_SIZE * 0.85))
            for day, label in self.top_ticks:
                if not self.xaxis.lo - 1e-9 <= day <= self.xaxis.hi + 1e-9:
                    continue
                px = num(float(self.X(day)))
                out.append(f'<line x1="{px}" x2="{px}" y1="{num(y0 - TICK_LENGTH)}" '
                           f'y2="{num(y0)}" stroke="black"/><text x="{px}" '
                           f'y="{num(y0 - TICK_LENGTH - TICK_PAD)}">{esc(label)}</text>')
            out.append("</g>")
            top -= TICK_SIZE * 0.85 + TICK_LENGTH + TICK_PAD
        if self.title:
            out.append(f'<text class="panel-title" x="{num(x0 + w / 2)}" y="{num(top - 6)}" '
                       f'text-anchor="middle" font-size="{PANEL_TITLE_SIZE}" font-weight="bold" '
                       f'fill="{self.title_color}">{esc(self.title)}</text>')
        if self.xaxis.title:
            base = y0 + h + (TICK_SIZE + TICK_LENGTH + TICK_PAD if self.xaxis.show_labels else 0)
            for j, line in enumerate(self.xaxis.title):
                out.append(f'<text class="xlabel" x="{num(x0 + w / 2)}" '
                           f'y="{num(base + 4 + LABEL_SIZE * (0.95 + 1.2 * j))}" '
                           f'text-anchor="middle" font-size="{LABEL_SIZE}">{esc(line)}</text>')
        if self.yaxis.title:
            width = (max(text_width(c, TICK_SIZE * 0.8) for c in self.categories)
                     if self.categories else self.yaxis.tick_width())
            for j, line in enumerate(self.yaxis.title):
                px = x0 - width - TICK_LENGTH - TICK_PAD - 6 - LABEL_SIZE * 0.25 \
                    - LABEL_SIZE * 1.2 * (len(self.yaxis.title) - 1 - j)
                out.append(f'<text class="ylabel" x="{num(px)}" y="{num(y0 + h / 2)}" '
                           f'transform="rotate(-90 {num(px)} {num(y0 + h / 2)})" '
                           f'text-anchor="middle" font-size="{LABEL_SIZE}">{esc(line)}</text>')
        out.append("</g>")
        return "".join(out)


# ---- a whole figure ------------------------------------------------------------------------

@dataclass
class Header:
    """The title and the legend over a figure's panels, and the pixels they take."""

    title: str
    legend: Legend | None = None

    @property
    def height(self) -> float:
        return PAD + TITLE_SIZE * 1.2 + (GAP / 2 + self.legend.height if self.legend else 0) \
            + GAP

    def svg(self, width: float = WIDTH) -> str:
        out = [f'<text class="title" x="{width / 2:.1f}" y="{PAD + TITLE_SIZE:.1f}" '
               f'text-anchor="middle" font-size="{TITLE_SIZE}">{esc(self.title)}</text>']
        if self.legend is not None:
            out.append(self.legend.svg(width / 2, PAD + TITLE_SIZE * 1.2 + GAP / 2))
        return "".join(out)


def figure_svg(fid: str, label: str, height: float, parts: list[str],
               width: float = WIDTH) -> str:
    """The figure's SVG element: an image for assistive technology, named `label`."""
    return (f'<svg class="chart" id="{fid}" xmlns="http://www.w3.org/2000/svg" '
            f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
            f'role="img" aria-label="{esc(label)}" font-family="{FONT}" fill="black">'
            f'<title>{esc(label)}</title><rect width="100%" height="100%" fill="white"/>'
            + "".join(parts) + "</svg>")


@dataclass
class Cell:
    """What a grid cell's panel needs before it is placed: its axes, title and extras."""

    xaxis: Axis
    yaxis: Axis
    title: str = ""
    title_color: str = "black"
    top_ticks: list | None = None
    grid: str = "both"
    categories: list[str] | None = None
    under: float = 0.0              # pixels kept free under its labels (a legend)


def arrange(fid: str, cells: list[list[Cell | None]], top: float, least: float,
            width: float = WIDTH, plot_height: float | None = None) -> tuple[list, float]:
    """Panels for a grid of cells under `top` pixels of header: every column as wide and every
    row as high as the others, with the room their labels need; plotting areas
    `plot_height` high (at least `least`). Returns (panels in reading order, canvas
    height)."""
    rows, cols = len(cells), len(cells[0])
    probe = [[Panel(fid, 0, 0, 1, 1, c.xaxis, c.yaxis, c.title, c.title_color, c.top_ticks,
                    c.grid, c.categories) if c else None for c in row] for row in cells]
    lefts = [max([0.0, *(row[c].room_left() for row in probe if row[c])]) for c in range(cols)]
    rights = [max([0.0, *(row[c].room_right() for row in probe if row[c])])
              for c in range(cols)]
    ups = [max([0.0, *(p.room_above() for p in row if p)]) for row in probe]
    downs = [max([0.0, *(p.room_below() + cells[r][c].under
                         for c, p in enumerate(row) if p)]) for r, row in enumerate(probe)]
    left, right = PAD + lefts[0], PAD + rights[-1]
    col_gap = max([0.0, *(rights[c - 1] + lefts[c] + GAP * 2 for c in range(1, cols))])
    cell_w = (width - left - right - (cols - 1) * col_gap) / cols
    row_gap = max([0.0, *(downs[r - 1] + ups[r] + GAP for r in range(1, rows))])
    cell_h = max(least, plot_height or least)
    panels = []
    y = top + ups[0]
    for r, row in enumerate(cells):
        for c, cell in enumerate(row):
            if cell is None:
                continue
            panel = Panel(f"{fid}-{r}-{c}", left + c * (cell_w + col_gap), y, cell_w, cell_h,
                          cell.xaxis, cell.yaxis, cell.title, cell.title_color, cell.top_ticks,
                          cell.grid, cell.categories)
            panels.append(panel)
        y += cell_h + (row_gap if r < rows - 1 else 0)
    return panels, y + downs[-1] + PAD
