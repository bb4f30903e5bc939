"""A deterministic bloat report for the fixed sample snapshot: claims getting dearer under a naptime-
limited autovacuum, as bench_bloat.py's run 1 records it."""

from __future__ import annotations

from datetime import datetime, timedelta

from pgq_tui.monitor.bloat import AutovacuumSettings, BloatReport, ClaimCost, Pacing, ProbePoint
from pgq_tui.monitor.pacing import pacing


def sample_bloat(now: datetime) -> BloatReport:
    buffers = (6, 6, 7, 6, 9, 14, 22, 31, 45, 58)
    history = tuple(
        ProbePoint(now - timedelta(seconds=10 * (len(buffers) - i)), b, 0, 0.02 * b, True, 3000 * i)
        for i, b in enumerate(buffers)
    )
    probe = ClaimCost(
        queue="emails",
        history=history,
        floor=6,
        ratio=58 / 6,
        level="warn",
        message="claims are getting slower: a claim walks 58 buffers (9.7x its recent floor of 6)",
        interval_s=10.0,
        buffers_per_dead=0.0019,
    )
    pace: Pacing = pacing(rate=2400.0, threshold=40_050.0, naptime_s=60.0, vacuum_s=1.8, peak_budget=9_500.0)
    settings = AutovacuumSettings(60.0, 3, 0, 200, 2.0, 0.0, 100)
    return BloatReport(probe=probe, pacing=pace, xmin_block=None, settings=settings)
