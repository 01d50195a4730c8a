"""Package discovery, which pyproject.toml cannot express alone.

Every package under mcrisk/ is found (find_packages), and the top-level kernels/ folder, which
pyproject.toml maps to mcrisk.kernels, is added by name: a finder only sees packages where they
stand on disk. Everything else about the build is in pyproject.toml.
"""
from setuptools import find_packages, setup

setup(packages=[*find_packages(include=["mcrisk", "mcrisk.*"]), "mcrisk.kernels"])
