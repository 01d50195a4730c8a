"""JSON Schemas of the documents mcrisk writes, shipped as package data.

summary.schema.json (JSON Schema draft 2020-12) describes summary.json: the stable keys are
required with their types, every other key mcrisk writes today is described, and keys may be
added. docs/metrics.md explains each key in words. optimize.schema.json describes
`mcrisk optimize`'s optimize.json in the same way (docs/optimize.md). Validating needs a JSON Schema
library (the `jsonschema` package, in the `test` extra); mcrisk itself only ships the file:

    import jsonschema
    from mcrisk.schema import summary_schema
    jsonschema.validate(document, summary_schema())
"""
from __future__ import annotations

import json
from importlib import resources

SUMMARY_SCHEMA = "summary.schema.json"
OPTIMIZE_SCHEMA = "optimize.schema.json"


def summary_schema() -> dict:
    """The JSON Schema of summary.json, parsed (a new dict on every call)."""
    text = resources.files(__name__).joinpath(SUMMARY_SCHEMA).read_text(encoding="utf-8")
    return json.loads(text)


def optimize_schema() -> dict:
    """The JSON Schema of optimize.json (`mcrisk optimize`), parsed (a new dict on every call)."""
    text = resources.files(__name__).joinpath(OPTIMIZE_SCHEMA).read_text(encoding="utf-8")
    return json.loads(text)
