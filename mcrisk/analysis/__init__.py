"""Deeper risk analysis on per-scenario results: drivers, paired comparison, precision."""
