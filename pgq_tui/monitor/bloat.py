"""What the bloat watch learned in one poll: the claim-cost probe, the autovacuum pacing verdict and
an xmin-horizon block, as frozen dataclasses carried by `Snapshot.bloat` (and its JSON).

Computed by `monitor.bloatwatch.BloatWatch` from the probe (`monitor.probe`), the pacing arithmetic
(`monitor.pacing`) and the table's counters; the advisor (`monitor.advice`) reads it back.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class ProbePoint:
    """One EXPLAIN (ANALYZE, BUFFERS) of the claim's candidate scan with LIMIT 1, no row lock."""

    at: datetime  # the server's clock
    buffers: int  # shared buffers hit + read: what one claim walks before it finds its row
    read: int  # of which read from outside shared buffers
    ms: float  # the probe's execution time
    found: bool  # a ready job was there (an empty queue still walks the dead entries)
    dead_tuples: int  # n_dead_tup when it ran (relates cost to bloat for the advisor)


@dataclass(frozen=True)
class ClaimCost:
    queue: str | None  # the queue probed (the one with the most ready jobs)
    history: tuple[ProbePoint, ...]  # oldest first, the latest last
    floor: int | None  # lowest buffers per claim in the recent window
    ratio: float | None  # latest / floor
    level: str  # ok / warn / crit
    message: str
    interval_s: float  # the probe runs at most this often
    buffers_per_dead: float | None = None  # slope of buffers against dead tuples (None: not measured)
    error: str | None = None  # why the last probe failed, if it did

    @property
    def latest(self) -> ProbePoint | None:
        return self.history[-1] if self.history else None


@dataclass(frozen=True)
class AutovacuumSettings:
    """Server settings and the table's reloptions that pace autovacuum on the jobs table."""

    naptime_s: float
    max_workers: int
    workers_elsewhere: int  # autovacuum workers busy on other tables right now
    cost_limit: int  # effective for autovacuum (autovacuum_vacuum_cost_limit, -1: vacuum_cost_limit)
    cost_delay_ms: float  # autovacuum_vacuum_cost_delay (effective for this table)
    idle_tx_timeout_ms: float  # idle_in_transaction_session_timeout (0: off)
    fillfactor: int  # the table's (100 when unset)
    reloptions: tuple[str, ...] = ()  # the table's own, raw ("key=value")


@dataclass(frozen=True)
class Pacing:
    """The autovacuum pacing verdict for the jobs table at the measured dead-tuple rate."""

    dead_per_s: float | None  # dead tuples produced per second (deletes + non-HOT updates)
    threshold: float  # effective autovacuum threshold (dead tuples)
    fill_s: float | None  # seconds for the threshold to fill at that rate
    trigger_interval_s: float | None  # seconds between two vacuum starts (naptime ticks, duration)
    vacuum_s: float | None  # last (or mean) vacuum duration on this table
    vacuum_s_source: str  # "measured", "mean of N", "unknown"
    predicted_peak: float | None  # dead tuples just before a vacuum finishes
    limiter: str  # naptime / threshold / workers / cannot keep up / disabled / idle
    keeps_up: bool | None
    level: str
    message: str


@dataclass(frozen=True)
class XminBlock:
    """Vacuum ran but could not remove the dead tuples: the xmin horizon is older than them."""

    vacuumed_at: datetime | None
    dead_before: int | None
    dead_after: int
    holder_kind: str | None  # backend / prepared transaction / replication slot; None: none seen
    holder: str | None  # pid, gid or slot name
    holder_age_s: float | None
    holder_detail: str | None
    message: str

    @property
    def pid(self) -> int | None:
        return int(self.holder) if self.holder_kind == "backend" and self.holder else None


@dataclass(frozen=True)
class BloatReport:
    probe: ClaimCost
    pacing: Pacing | None
    xmin_block: XminBlock | None
    settings: AutovacuumSettings | None
