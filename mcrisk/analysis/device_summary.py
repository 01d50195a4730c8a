"""aggregate.summarize's document computed in any array module: the summary of the GPU's
metrics without copying them to the host.

The one-sort summary itself lives in mcrisk.aggregate (summarize_with, with the order
statistics it reads, summary_ranks, and the formula that turns them into a summary,
summary_of_order_statistics), where the host's summarize uses the same formula; this module
keeps the names the CUDA path, its benchmark and the parity tests import. With xp = cupy the
sort and the means run on the device and only the few order statistics come back; with
xp = numpy it is the same code on the host, which is how every CI run holds it to
aggregate.summarize (tests/test_gpu_parity.py). Like the rest of analysis/, it never
simulates: it takes the metrics array.
"""
from __future__ import annotations

from ..aggregate import lerp, quantile_position, summarize_with

__all__ = ["lerp", "quantile_position", "summarize_with"]
