"""Helpers several test modules share, so that no test module imports another.

The shipped scenarios (paths and text), textual edits of a scenario and the problems loading
it reports, the summary.json schema check, the Random123 known answers, the report's charts
as the report draws them, read back from their SVG (svg_root, panel_points), and what a reader
would see as a broken figure, measured in a browser (svg_layout_problems).
Fixtures live in tests/conftest.py; backend parity (the tolerance table) in tests/parity.py; the generator of
small random scenarios in tests/random_scenarios.py.
"""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from mcrisk.core.errors import ScenarioError
from mcrisk.scenario import load_scenario
from mcrisk.schema import summary_schema

ROOT = Path(__file__).resolve().parent.parent          # the repository
DATA = ROOT / "tests" / "data"                          # inputs of the tests
SCENARIOS = ROOT / "scenarios"
REFERENCE = SCENARIOS / "reference-2048.toml"
MINIMAL = SCENARIOS / "minimal.toml"
REFERENCE_TEXT = REFERENCE.read_text()
MINIMAL_TEXT = MINIMAL.read_text()

# Random123 tests/kat_vectors, the three "philox4x32 10" lines
# (github.com/DEShawResearch/random123, tag v1.14.0): counter[4] key[2] -> output[4].
KAT_PHILOX4X32_10 = [
    ((0x00000000, 0x00000000, 0x00000000, 0x00000000), (0x00000000, 0x00000000),
     (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF), (0xFFFFFFFF, 0xFFFFFFFF),
     (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


# ---- scenario files edited as text (run in a temporary folder: fixture in_tmp) ---------------

def page_text(path) -> str:
    """report.html at `path` as its text: tags dropped, entities unescaped, spaces collapsed
    (the long form of what summary.md leaves out)."""
    import html as _html
    import re as _re

    raw = _re.sub(r"<[^>]+>", " ", Path(path).read_text())
    return " ".join(_html.unescape(raw).split())


def md_flat(text: str) -> str:
    """summary.md with its wrapped lines joined (it wraps at 100 characters)."""
    return " ".join(text.split())


def variant(*edits: tuple[str, str], text: str = REFERENCE_TEXT) -> str:
    """`text` with each (old, new) edit applied to the first occurrence of old."""
    for old, new in edits:
        assert old in text, f"edit target not found: {old!r}"
        text = text.replace(old, new, 1)
    return text


def problems(text: str, name: str = "x.toml") -> list[str]:
    """The rendered problems of loading `text` (which must fail) as file `name`."""
    Path(name).parent.mkdir(parents=True, exist_ok=True)
    Path(name).write_text(text)
    with pytest.raises(ScenarioError) as info:
        load_scenario(name)
    assert str(info.value) == "\n".join(str(p) for p in info.value.problems)
    return [str(p) for p in info.value.problems]


def load_text(text: str):
    """`text` loaded as the scenario file x.toml."""
    Path("x.toml").write_text(text)
    return load_scenario("x.toml")


# ---- summary.json against its schema ----------------------------------------------------------

def schema_errors(document) -> list[str]:
    """Every way `document` breaks the summary.json schema (formats such as dates checked),
    as 'json/path: message'."""
    # Imported here, not at the top: conftest imports this module, and the GPU check
    # (benchmarks/gpu_check.sh) runs on a machine without jsonschema.
    import jsonschema
    validator = jsonschema.Draft202012Validator(
        summary_schema(), format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER)
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"
            for e in validator.iter_errors(document)]


def exceedance_chart(metrics, names, colors, panels, title) -> str:
    """The report's exceedance chart of metrics[n, s, m], as the report submits it: each
    panel's curves from data.curve_table."""
    from mcrisk.report.figures import charts, data

    return charts.exceedance_of(data.curve_table(metrics, [m for m, _ in panels]), names,
                                colors, panels, title)


def completion_chart(metrics, names, colors, horizon, axis=None, start=None) -> str:
    """The report's completion chart of metrics[n, s, m], its axis from data.completion_axis
    unless given."""
    from mcrisk.report.figures import charts, data

    axis = data.completion_axis(metrics, names, horizon) if axis is None else axis
    return charts.completion_of(data.curve_table(metrics, ["completion_day"])["completion_day"],
                                names, colors, horizon, axis, start)


# ---- a figure as a reader sees it ------------------------------------------------------------

SVG = "{http://www.w3.org/2000/svg}"


def svg_root(chart: str):
    """The chart's SVG element, parsed as XML (a chart that is not well-formed fails here)."""
    import xml.etree.ElementTree as ET

    root = ET.fromstring(chart)
    assert root.tag == f"{SVG}svg" and root.get("role") == "img" and root.get("aria-label")
    return root


def svg_panels(root) -> list:
    """The chart's plotting areas (svg.Panel's groups), in reading order."""
    return [g for g in root.iter(f"{SVG}g") if g.get("class") == "panel"]


def panel_points(panel, element):
    """A drawn polyline's or polygon's points as data (x, y), through the panel's limits and
    box (data-xlim, data-ylim, data-box): the figure read back as numbers."""
    import numpy as np

    x_lo, x_hi = map(float, panel.get("data-xlim").split())
    y_lo, y_hi = map(float, panel.get("data-ylim").split())
    left, top, width, height = map(float, panel.get("data-box").split())
    xy = np.array([[float(v) for v in pair.split(",")] for pair in element.get("points").split()])
    x = x_lo + (xy[:, 0] - left) / width * (x_hi - x_lo)
    y = y_lo + (top + height - xy[:, 1]) / height * (y_hi - y_lo)
    return x, y, abs(x_hi - x_lo) / width, abs(y_hi - y_lo) / height   # and a pixel's worth


def svg_texts(root, css: str | None = None) -> list[str]:
    """The texts the chart shows (not its tooltips), those of elements of class `css` only if
    given (a text's own class or its group's)."""
    out = []

    def walk(node, inherited):
        here = node.get("class") or inherited
        if node.tag == f"{SVG}text" and (css is None or css in (node.get("class"), inherited)):
            out.append(node.text or "")
        for child in node:
            walk(child, here)
    walk(root, None)
    return out


_MEASURE = """<script>
const problems = [];
for (const svg of document.querySelectorAll("svg.chart")) {
  const canvas = svg.getBoundingClientRect();
  const frames = [...svg.querySelectorAll("rect.frame")].map(r => r.getBoundingClientRect());
  const texts = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim());
  const boxes = texts.map(t => t.getBoundingClientRect());
  const group = t => t.closest("g.xticks, g.yticks, g.dates");
  const over = (a, b, tol) => a.left < b.right - tol && b.left < a.right - tol &&
                              a.top < b.bottom - tol && b.top < a.bottom - tol;
  texts.forEach((t, i) => {
    const b = boxes[i], name = svg.id + " " + JSON.stringify(t.textContent);
    if (b.left < canvas.left - 0.5 || b.right > canvas.right + 0.5 ||
        b.top < canvas.top - 0.5 || b.bottom > canvas.bottom + 0.5)
      problems.push(name + " reaches past the canvas");
    if (!t.classList.contains("name") && frames.some(f => over(b, f, 1)))
      problems.push(name + " lies on a plotting area");
    if (t.classList.contains("name") && !frames.some(f => b.left >= f.left - 0.5 &&
        b.right <= f.right + 0.5 && b.top >= f.top - 0.5 && b.bottom <= f.bottom + 0.5))
      problems.push(name + " reaches out of its plotting area");
    texts.forEach((u, j) => {
      if (j > i && over(b, boxes[j], 0.5) && !(group(t) && group(t) === group(u)))
        problems.push(name + " lies on " + JSON.stringify(u.textContent));
    });
  });
}
document.title = "LAYOUT:" + JSON.stringify(problems);
</script>"""


def svg_layout_problems(charts: list[str], tmp_path) -> list[str] | None:
    """What a reader would see as broken in the charts, measured in headless Chromium with
    its own fonts: a text reaching past its canvas, lying on a plotting area (a point's name
    excepted, which must stay inside its own), or on another text (two tick labels of one
    axis excepted: they are placed apart by their step). None where there is no Chromium."""
    import html as html_module
    import re
    import shutil
    import subprocess

    browser = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                    if shutil.which(n)), None)
    if browser is None:
        return None
    page = tmp_path / "charts.html"
    page.write_text("<!doctype html><html><head><meta charset='utf-8'><title>x</title></head>"
                    "<body style='margin:0;width:1300px'>" + "".join(
                        f"<div>{c}</div>" for c in charts) + _MEASURE + "</body></html>")
    done = subprocess.run([browser, "--headless", "--no-sandbox", "--disable-gpu",
                           f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                           page.as_uri()], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "HOME": str(tmp_path)})
    match = re.search(r"<title>LAYOUT:(.*?)</title>", done.stdout, re.S)
    assert match, f"the measuring script did not run: {done.stderr[-800:]!r}"
    import json
    return json.loads(html_module.unescape(match.group(1)))


# the nightly's trend chart is still matplotlib's (report/nightly/trend.py)

def drawn_texts(fig, monkeypatch) -> list:
    """Every non-empty text the figure draws (ticks outside the view are not drawn), after one
    draw at its own size, as the report saves it."""
    import matplotlib.text

    texts = []
    draw = matplotlib.text.Text.draw

    def spy(self, renderer):
        if self.get_visible() and self.get_text():
            texts.append(self)
        return draw(self, renderer)

    with monkeypatch.context() as patch:
        patch.setattr(matplotlib.text.Text, "draw", spy)
        fig.canvas.draw()
    return texts


def overlaps(a, b, tol: float = 0.5) -> bool:
    return (a.x0 < b.x1 - tol and b.x0 < a.x1 - tol and a.y0 < b.y1 - tol and b.y0 < a.y1 - tol)


def tick_axis(fig) -> dict[int, int]:
    """id of each tick label -> id of its Axis (a date axis's included)."""
    owner = {}
    for ax in fig.axes:
        for a in (ax, *ax.child_axes):
            for axis in (a.xaxis, a.yaxis):
                for tick in axis.get_major_ticks():
                    owner[id(tick.label1)] = owner[id(tick.label2)] = id(axis)
    return owner


def layout_problems(fig, monkeypatch) -> list[str]:
    """What a reader would see as broken: a text or legend reaching past the canvas, lying on
    a plotting area, or on another text (two tick labels of one axis excepted)."""
    texts = drawn_texts(fig, monkeypatch)
    render = fig.canvas.get_renderer()
    canvas, owner = fig.bbox, tick_axis(fig)
    plots = [ax.bbox for ax in fig.axes if ax.get_visible()]
    legends = [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]
    boxes = [(repr(t.get_text()), t.get_window_extent(render)) for t in texts]
    problems = []
    for name, box in [*boxes, *((f"legend {i}", legend.get_window_extent(render))
                                for i, legend in enumerate(legends))]:
        if not (box.x0 >= canvas.x0 - 0.5 and box.x1 <= canvas.x1 + 0.5
                and box.y0 >= canvas.y0 - 0.5 and box.y1 <= canvas.y1 + 0.5):
            problems.append(f"{name} reaches past the canvas: {box.bounds} in {canvas.bounds}")
        problems += [f"{name} lies on a plotting area" for plot in plots if overlaps(box, plot)]
    for i, (text, (name, box)) in enumerate(zip(texts, boxes)):
        for other, (other_name, other_box) in zip(texts[i + 1:], boxes[i + 1:]):
            same_axis = owner.get(id(text), -1) == owner.get(id(other), -2)
            if overlaps(box, other_box) and not same_axis:
                problems.append(f"{name} lies on {other_name}")
    return problems

# ---- a disk that fills up --------------------------------------------------------------------

class FullDisk:
    """The disk under `under` fills up after `room` writes: every later write there raises
    OSError(ENOSPC), as a full disk does, while reading, renaming and deleting still work.

    A write is anything that takes space: creating a folder (os.mkdir, under Path.mkdir and
    tempfile.mkdtemp) or a file (os.open with O_CREAT, under tempfile.mkstemp and the locks),
    writing bytes (os.write, os.pwrite, a file object os.fdopen returned, as write_atomic
    uses), and pyarrow's Parquet writer on a file (a row group, the footer on close). Writes
    elsewhere (Python's and Numba's caches, buffers in memory) do not count. `sites` records
    what each write was, in order, so that a test can run a command once with room for
    everything, then once failing at each write in turn."""

    def __init__(self, monkeypatch, under: Path, room: float = float("inf")):
        import errno

        import pyarrow.parquet as pq

        self.room, self.sites = room, []
        under = Path(os.path.realpath(under))
        disk = self

        def take(what: str, path, named: bool = True) -> None:
            """One write of `what` to `path`; `named`: whether the system call's error names
            the path (write() takes a descriptor, and names none)."""
            path = Path(os.path.realpath(path))
            if path != under and under not in path.parents:
                return
            if len(disk.sites) >= disk.room:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC),
                              *([str(path)] if named else []))
            disk.sites.append(f"{what} {path.name}")

        real_mkdir, real_open, real_fdopen = os.mkdir, os.open, os.fdopen
        real_write, real_pwrite = os.write, os.pwrite

        def mkdir(path, *args, **kwargs):
            if not os.path.lexists(path) and os.path.isdir(os.path.dirname(path) or "."):
                take("mkdir", path)                # else ENOENT or EEXIST, full or not
            return real_mkdir(path, *args, **kwargs)

        def open_(path, flags, *args, **kwargs):
            if flags & os.O_CREAT and not os.path.lexists(path):
                take("create", path)
            return real_open(path, flags, *args, **kwargs)

        def write(fd, data):
            take("write", _path_of(fd), named=False)
            return real_write(fd, data)

        def pwrite(fd, data, offset):
            take("pwrite", _path_of(fd), named=False)
            return real_pwrite(fd, data, offset)

        class Writer:                                  # a file object that fills the disk
            def __init__(self, handle):
                self.handle = handle

            def write(self, data):
                take("write", _path_of(self.handle.fileno()), named=False)
                return self.handle.write(data)

            def __getattr__(self, name):
                return getattr(self.handle, name)

            def __enter__(self):
                return self

            def __exit__(self, *exc):
                self.handle.close()

        def fdopen(fd, mode="r", *args, **kwargs):
            handle = real_fdopen(fd, mode, *args, **kwargs)
            return Writer(handle) if any(c in mode for c in "wax+") else handle

        for name, function in (("mkdir", mkdir), ("open", open_), ("write", write),
                               ("pwrite", pwrite), ("fdopen", fdopen)):
            monkeypatch.setattr(os, name, function)
        real_write_table, real_close = pq.ParquetWriter.write_table, pq.ParquetWriter.close

        def on_disk(writer) -> bool:
            return isinstance(writer.where, (str, os.PathLike))

        def write_table(writer, *args, **kwargs):
            if on_disk(writer):
                take("parquet row group", writer.where, named=False)
            return real_write_table(writer, *args, **kwargs)

        def close(writer):
            if getattr(writer, "is_open", False) and on_disk(writer):
                try:
                    take("parquet footer", writer.where, named=False)
                except OSError:
                    real_close(writer)          # the file is released, as a failed close does
                    raise
            return real_close(writer)

        monkeypatch.setattr(pq.ParquetWriter, "write_table", write_table)
        monkeypatch.setattr(pq.ParquetWriter, "close", close)


def _path_of(fd: int) -> str:
    """The path of the file open as `fd` (Linux's /proc), else '' (which counts nowhere)."""
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return ""
