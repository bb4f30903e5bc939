"""The dashboard's long-lived objects, kept out of the cyclic garbage collector's full passes.

A full collection visits every tracked object the process holds: at 160x48 over 50 queues the
dashboard holds about 76,000 once its first screen is drawn (the modules, textual's and rich's, the
app and its widgets) and 140,000 a minute later, and CPython ran a full pass 4-5 times a minute at a
1 s interval, each 84-110 ms with the GIL held: the poll's thread and the screen both stood still. Those
objects live as long as the process, so once the first screen is drawn they are collected once and
frozen (`gc.freeze`: moved to a generation no pass visits); the passes then visit what came after (the
snapshots the diagnosis keeps, the render caches): 38-52 ms (benchmarks/bench_gc_pauses.py). Only the
dashboard a user starts does this (launch.py), never an app a test builds: frozen objects are never
collected, so a process that builds many apps would keep every one of them. For the same reason the
launcher thaws them when the dashboard closes (the fleet opens one dashboard after another in one
process).
"""

from __future__ import annotations

import gc


def freeze_long_lived() -> None:
    """Collect what is garbage now, then freeze every object left (they stay for the process's life)."""
    gc.collect()
    gc.freeze()


def thaw() -> None:
    """Give the frozen objects back to the collector (the dashboard that froze them has closed)."""
    gc.unfreeze()
