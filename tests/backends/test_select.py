"""Backends are named by what they are (numpy, numba, cuda, cuda-host); cpu and gpu, the names
of earlier versions, keep working as aliases, and a run records the name the backend has now."""
from __future__ import annotations

import numpy as np
import pytest

from mcrisk import backends
from mcrisk.backends import cuda_host, select_backend
from mcrisk.backends import numba as numba_backend
from mcrisk.cli import main
from mcrisk.core.errors import BackendUnavailable
from mcrisk.app.run import run_scenario

from ..conftest import MINIMAL


def test_the_names_and_the_aliases():
    assert backends.BACKENDS == ("numpy", "numba", "cuda", "cuda-host")
    assert backends.BACKEND_NAMES == ("auto", "numpy", "numba", "cuda", "cuda-host", "cpu", "gpu")
    assert backends.ALIASES == {"cpu": "numba", "gpu": "cuda"}


@pytest.mark.parametrize("name, canonical", [("numpy", "numpy"), ("numba", "numba"),
                                             ("cpu", "numba")])
def test_selecting_by_name_or_alias(name, canonical):
    backend = select_backend(name)
    assert backend.name == canonical
    assert backend.module.__name__ == f"mcrisk.backends.{canonical}"
    assert backend.reason == ("requested" if name == canonical
                              else f"requested as {name}, now named {canonical}")


def test_auto_picks_cuda_or_numba():
    backend = select_backend("auto")
    expected = "cuda" if backends.gpu_unavailable_reason() is None else "numba"
    assert backend.name == expected and backend.reason.startswith("auto")


@pytest.mark.parametrize("name", ["cuda", "gpu"])
def test_cuda_without_a_gpu_names_the_name_asked_for(name):
    if backends.gpu_unavailable_reason() is None:
        pytest.skip("a GPU is present here")
    with pytest.raises(BackendUnavailable, match=f"--backend {name} cannot run here: "):
        select_backend(name)


def test_cuda_host_without_a_compiler_says_it_needs_one(monkeypatch):
    monkeypatch.setenv("CXX", "no-such-compiler-mcrisk")
    with pytest.raises(BackendUnavailable) as caught:
        select_backend("cuda-host")
    message = str(caught.value)
    assert "--backend cuda-host cannot run here" in message
    assert "C++ compiler" in message and "install g++" in message and "--backend numba" in message


@pytest.mark.slow          # the first call builds the host library (~10 s), cached after
def test_cuda_host_is_a_backend_equal_to_numba(minimal_plan):
    if cuda_host.host_compiler() is None:
        pytest.skip("no C++ compiler here")
    backend = select_backend("cuda-host")            # builds the library, or says why not
    assert backend.name == "cuda-host" and backend.module is cuda_host
    got = backend.simulate_chunk(minimal_plan, 3, 100, 200, keep_nodes=True)
    expected = numba_backend.simulate_chunk(minimal_plan, 3, 100, 200, keep_nodes=True)
    for a, b in zip(got, expected):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=0)


def test_a_run_with_an_old_name_records_the_new_one():
    summary = run_scenario(str(MINIMAL), samples=50, backend="cpu", out_dir=None).summary
    assert summary["backend"] == "numba"
    assert summary["backend_reason"] == "requested as cpu, now named numba"


def test_help_says_which_names_are_aliases(capsys):
    with pytest.raises(SystemExit):
        main(["run", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "{auto,numpy,numba,cuda,cuda-host,cpu,gpu}" in text
    assert "cpu and gpu are aliases of numba and cuda" in text
