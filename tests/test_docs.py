"""The documentation stands alone and its examples run.

- The Python examples of docs/nightly.md run against the output folder of a real (small) run.
- No tracked file points at material users never have (the project's private notes).
- docs/metrics.md describes every key of the summary.json schema.
- Every repository path that the README or docs/ name in backticks exists.
"""
from __future__ import annotations

import re
import subprocess

import pytest

from mcrisk.app.run import run_scenario
from mcrisk.schema import summary_schema

from .conftest import REFERENCE, ROOT

DOCS = ROOT / "docs"
# The marker that a ```python block below it is run by test_nightly_examples_run.
TESTED = "<!-- tested: tests/test_docs.py runs this block"
# Pointers at files outside the repository, spelled in pieces so this file does not match.
FORBIDDEN = ("shared" + "/", "REFERENCE" + "-SCENARIO", "DOMAIN" + ".md")


def python_blocks(markdown: str) -> list[tuple[bool, str]]:
    """(marked as tested, code) of every ```python block, in order."""
    pattern = re.compile(r"(?:^(<!-- tested:[^\n]*-->)\n)?^```python\n(.*?)^```", re.M | re.S)
    return [(bool(m.group(1)), m.group(2)) for m in pattern.finditer(markdown)]


@pytest.fixture(scope="module")
def run_folder(tmp_path_factory):
    """A folder holding out/reference-2048/ from a small run, as the examples expect."""
    folder = tmp_path_factory.mktemp("docs")
    run_scenario(str(REFERENCE), samples=200, backend="numpy",
                 out_dir=folder / "out" / "reference-2048", report=False)
    return folder


def test_every_python_example_of_the_nightly_doc_is_tested():
    blocks = python_blocks((DOCS / "nightly.md").read_text())
    assert len(blocks) >= 2
    untested = [code.splitlines()[0] for tested, code in blocks if not tested]
    assert not untested, f"mark these docs/nightly.md blocks with {TESTED!r}: {untested}"


NIGHTLY_EXAMPLES = [code for tested, code in python_blocks((DOCS / "nightly.md").read_text())
                    if tested]


@pytest.mark.parametrize("index", range(len(NIGHTLY_EXAMPLES)))
def test_nightly_examples_run(run_folder, index, monkeypatch, capsys):
    """Each example runs from the folder that holds out/ and prints something."""
    monkeypatch.chdir(run_folder)
    code = compile(NIGHTLY_EXAMPLES[index], f"docs/nightly.md example {index}", "exec")
    exec(code, {"__name__": "__main__"})
    assert capsys.readouterr().out.strip()


def test_python_blocks_finds_only_marked_blocks():
    text = ("```python\nuntested()\n```\n\n"
            f"{TESTED} in a folder -->\n```python\ntested()\n```\n")
    assert python_blocks(text) == [(False, "untested()\n"), (True, "tested()\n")]


def tracked_text_files() -> list:
    """Every file git tracks, as a path, skipping binary ones."""
    try:
        listing = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True,
                                 check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    paths = [ROOT / name for name in listing.decode().split("\0") if name]
    return [p for p in paths if p.is_file() and b"\0" not in p.read_bytes()[:8192]]


def test_no_tracked_file_points_outside_the_repository():
    hits = []
    for path in tracked_text_files():
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            hits += [f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
                     for word in FORBIDDEN if word in line]
    assert not hits, "point into the repository (docs/metrics.md) instead:\n" + "\n".join(hits)


def schema_keys() -> set[str]:
    """Every property name the summary.json schema describes, at any depth."""
    keys: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            keys.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(summary_schema())
    return keys


def test_metrics_doc_describes_every_summary_key():
    text = (DOCS / "metrics.md").read_text()
    missing = sorted(key for key in schema_keys() if f"`{key}`" not in text)
    assert len(schema_keys()) > 40
    assert not missing, f"describe these summary.json keys in docs/metrics.md: {missing}"


def test_paths_named_in_the_docs_exist():
    named = re.compile(r"`((?:docs|mcrisk|scenarios|benchmarks|tests|kernels|\.ci)/[\w./-]*)`")
    missing = []
    for doc in [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]:
        missing += [f"{doc.relative_to(ROOT)}: {path}"
                    for path in named.findall(doc.read_text()) if not (ROOT / path).exists()]
    assert not missing, "\n".join(missing)
