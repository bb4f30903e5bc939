"""The Snapshot: everything one poll learned, as frozen dataclasses.

Front ends (the dashboard, `pgq-top snapshot --json`) read only this; none of them talks SQL.
Times are timezone-aware datetimes from the server's clock; ages and durations are seconds (float).
`to_dict()` gives the stable JSON shape documented in the README.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class ServerInfo:
    version: str  # e.g. "18.6"
    version_num: int  # server_version_num, e.g. 180006
    now: datetime  # the server's clock at collect time
    database: str
    in_recovery: bool
    collect_ms: float  # how long collect() took, end to end
    monitor_pid: int  # our own backend pid (labelled in the sessions list)


@dataclass(frozen=True)
class QueueStats:
    queue: str
    ready: int  # pending, run_at <= now()
    scheduled: int  # pending, run_at > now()
    running: int  # running, lease still valid
    expired: int  # running, locked_until < now(): stuck
    failed: int  # dead letters
    done: int  # kept finished rows (0 when completed jobs are deleted)
    oldest_ready_age_s: float | None  # now() - min(run_at) over ready jobs; None when none is ready
    approximate: bool = False  # a count hit its cap and is an estimate
    approximate_fields: tuple[str, ...] = ()  # which counts are estimates (e.g. ("ready", "done"))


@dataclass(frozen=True)
class Lease:
    id: int
    queue: str
    locked_by: str | None
    attempts: int
    max_attempts: int
    locked_until: datetime | None
    seconds_left: float  # negative once expired
    holder_connected: bool  # a backend whose application_name == locked_by exists
    holder_pid: int | None
    payload_preview: str | None = None  # first 200 characters of the payload text (untrusted); None if big
    heartbeat_age: float | None = None  # seconds since the holder claimed or last renewed it; None: unknown


@dataclass(frozen=True)
class LeaseList:
    rows: tuple[Lease, ...]
    total: int  # true total (rows is capped for display)


@dataclass(frozen=True)
class DeadJob:
    """A failed (dead-letter) job, listed so the dashboard can retry or discard it."""

    id: int
    queue: str
    attempts: int
    max_attempts: int
    finished_at: datetime | None
    last_error: str | None  # untrusted text: render it as rich Text
    payload_preview: str | None = None  # first 200 characters of the payload text (untrusted); None if big


@dataclass(frozen=True)
class DeadList:
    rows: tuple[DeadJob, ...]  # newest first, capped for display
    total: int


@dataclass(frozen=True)
class Rates:
    enqueued: float  # per second
    completed: float
    failed: float  # failed attempts (retried or dead)
    dead: float = 0.0  # failed attempts that sent the job to the dead letters


@dataclass(frozen=True)
class ThroughputPoint:
    at: datetime  # start of the one-second bucket
    enqueued: int
    completed: int
    failed: int
    dead: int = 0


@dataclass(frozen=True)
class Throughput:
    interval_s: float  # window the `total`/`per_queue` rates are averaged over
    total: Rates
    per_queue: dict[str, Rates]
    history: tuple[ThroughputPoint, ...]  # all queues, one point per second, oldest first
    queue_history: dict[str, tuple[int, ...]]  # completed per second per queue (sparklines)


@dataclass(frozen=True)
class VacuumProgress:
    pid: int
    phase: str
    percent: float | None  # heap blocks scanned / total
    dead_tuples: int | None  # dead item ids collected so far (column renamed in PG 17)


@dataclass(frozen=True)
class TableHealth:
    table: str  # schema.table
    live_tuples: int
    dead_tuples: int
    dead_ratio: float  # dead / (live + dead)
    table_bytes: int
    index_bytes: int
    total_rows_estimate: int  # pg_class.reltuples
    last_vacuum: datetime | None
    last_autovacuum: datetime | None
    last_analyze: datetime | None
    last_autoanalyze: datetime | None
    vacuum_count: int
    autovacuum_count: int
    autovacuum_enabled: bool
    vacuum_threshold: float  # effective: threshold + scale_factor * reltuples
    vacuum_scale_factor: float
    vacuum_base_threshold: int
    until_autovacuum: float  # dead tuples still needed before autovacuum triggers (<= 0: due)
    vacuum: VacuumProgress | None
    vacuum_max_threshold: int | None = None  # PostgreSQL 18+ cap on the threshold (None: no cap)
    inserted: int = 0  # pg_stat_user_tables n_tup_ins, n_tup_upd, n_tup_del, n_tup_hot_upd
    updated: int = 0
    deleted: int = 0
    hot_updated: int = 0


@dataclass(frozen=True)
class Session:
    pid: int
    user: str | None
    application: str | None
    client: str | None
    state: str | None
    xact_age_s: float | None
    state_age_s: float | None
    query: str | None
    backend_xmin_age: int | None  # in transactions (age(backend_xmin))
    wait_event: str | None
    is_pgq_top: bool  # one of pgq-top's own sessions (labelled, never hidden)


@dataclass(frozen=True)
class XminHolder:
    kind: str  # "backend", "prepared transaction", "replication slot"
    name: str  # pid, gid or slot name
    xmin_age: int  # transactions behind the current one
    age_s: float | None  # how long it has held it, where known
    detail: str | None
    is_pgq_top: bool = False  # held by one of pgq-top's own sessions


@dataclass(frozen=True)
class Blocker:
    blocked_pid: int
    blocked_query: str | None
    blocked_wait_s: float | None
    blocking_pid: int
    blocking_state: str | None
    blocking_query: str | None
    blocking_application: str | None


@dataclass(frozen=True)
class Sessions:
    idle_in_transaction: tuple[Session, ...]
    xmin_holders: tuple[XminHolder, ...]
    blocked: tuple[Blocker, ...]
    total_backends: int


@dataclass(frozen=True)
class Snapshot:
    server: ServerInfo
    queues: tuple[QueueStats, ...]
    leases: LeaseList
    expired: LeaseList
    throughput: Throughput
    table: TableHealth
    sessions: Sessions
    errors: dict[str, str] = field(default_factory=dict)  # panel -> why it is stale (e.g. a timeout)
    # Added for the dashboard's retry/discard keys; a monitor that does not fill it reports none
    # ("dead" is also its panel name in `errors`).
    dead: DeadList = field(default_factory=lambda: DeadList(rows=(), total=0))

    def to_dict(self) -> dict[str, Any]:
        return _jsonable(dataclasses.asdict(self))

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        """Rebuild a Snapshot from `to_dict()` output (e.g. parsed `pgq-top snapshot --json`)."""
        from pgq_tui.monitor.codec import from_dict

        return from_dict(cls, data)


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
