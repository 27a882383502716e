"""Python's cyclic garbage collector runs far less often in an emulator's process.

Found: with CPython's default thresholds (a young-generation pass every 700 net allocations, an
older one every 10 of those, a full one every 10 of the older ones), a process running moto
and botocore in process spends a large share of its CPU in the collector. Every call builds
and drops thousands of small objects (requests, parsed shapes, item copies), and each full pass
walks the millions of long-lived ones: botocore's service models, moto's backends, the loaded
modules. Measured on ``tests/functional/test_api.py`` with two e2e files in one process: 35 to
39 CPU-seconds with the defaults, 29 to 31 with these thresholds, the same as with the
collector off. Over ``tests/functional`` on four workers the gain is smaller (a few percent):
each worker's heap is smaller.

Changed: the thresholds only, to (100 000, 50, 100): a young pass about 140 times less often, an
older one about 700 times, a full one several thousand times (and, as before, only once the
objects that survived a pass since the last full one are a quarter of the old generation).
Nothing in the emulator or in tickwork relies on when a cycle is collected (reference counting
still frees everything that is not in a cycle at once), and cycles are still collected, so
memory stays bounded. The deployed functions keep Python's defaults: this is for the processes
that run the emulator, the local stack (``tickwork local``) and the test suite.
"""

from __future__ import annotations

import gc

__all__ = ["EMULATOR_THRESHOLDS", "collect_less_often"]

EMULATOR_THRESHOLDS = (100_000, 50, 100)


def collect_less_often() -> None:
    """Set this process's collector thresholds for running the emulator (for the whole
    process: the collector has one set)."""
    gc.set_threshold(*EMULATOR_THRESHOLDS)
