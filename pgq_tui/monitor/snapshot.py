"""The Snapshot: everything one poll learned, as frozen dataclasses.

Front ends (the dashboard, `pgq-top snapshot --json`) read only this; none of them talks SQL.
Times are timezone-aware datetimes from the server's clock; ages and durations are seconds (float).
`to_dict()` gives the stable JSON shape documented in the README.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from uuid import UUID

from pgq_tui.jobid import JobId
from pgq_tui.monitor.bloat import BloatReport
from pgq_tui.schedules.model import ScheduleReport


@dataclass(frozen=True)
class ServerInfo:
    version: str  # e.g. "18.6"
    version_num: int  # server_version_num, e.g. 180006
    now: datetime  # the server's clock at collect time
    database: str
    in_recovery: bool
    collect_ms: float  # how long collect() took, end to end
    monitor_pid: int  # our own backend pid (labelled in the sessions list)


# How a figure was obtained: every count and rate says which (README: "How each figure is obtained").
EXACT = "exact"  # true at this poll; as_of is the poll's server time
STALE = "stale"  # exact as of `as_of`, an earlier moment (a background count); show its age
APPROXIMATE = "approximate"  # the truth lies within the figure's measured `bound`
AT_LEAST = "at_least"  # a proven lower bound, nothing exact known yet: shown as "≥value"
# Unknown is never zero: a count not taken has no value (None, JSON null) and says why in `reason`.
UNKNOWN = "unknown"  # the kind has this state, but it was not counted (failed, not landed yet, not in time)
UNSUPPORTED = "unsupported"  # the kind does not record this state at all: nothing to count (n/a)
ACCURACIES = (EXACT, STALE, APPROXIMATE, AT_LEAST, UNKNOWN, UNSUPPORTED)


@dataclass(frozen=True)
class Figure:
    """Provenance of one number: its accuracy, when it was true and where it came from."""

    accuracy: str  # one of ACCURACIES
    as_of: datetime | None  # server time at which the value was (or was known to be) true
    source: str  # e.g. "poll", "background", "counters", "ids", "depth" (README lists them)
    bound: float | None = None  # approximate: the true value is in [value, value + bound]
    reason: str | None = None  # unknown / unsupported: why there is no value; at_least: why no better
    # how it was taken when no index serves it, and what would make it live (e.g. "no index serves
    # it (a scan); CREATE INDEX ... would make it live"); None for a figure an index serves
    note: str | None = None

    @property
    def exact(self) -> bool:
        return self.accuracy == EXACT

    @property
    def known(self) -> bool:
        """The figure has a value (exact, stale, approximate or a lower bound)."""
        return self.accuracy not in (UNKNOWN, UNSUPPORTED)

    @property
    def unknown(self) -> bool:
        return self.accuracy == UNKNOWN

    def stale_age_s(self, now: datetime) -> float | None:
        """How old a stale figure is at `now` (never below 0); None for any other figure."""
        if self.accuracy != STALE or self.as_of is None:
            return None
        return max(0.0, (now - self.as_of).total_seconds())


@dataclass(frozen=True)
class QueueStats:
    """Jobs per state in one queue. Each count is the best figure known: exact at this poll, exact
    as of an earlier background count (stale), or a lower bound (at_least); `figures` says which.
    A count not taken is None, never 0: its figure is `unknown` (no way to count it, its statement
    failed or timed out, not counted yet) or `unsupported` (the kind has no such state), with the
    reason. A count with no entry in `figures` is exact (snapshots built by hand, e.g. in tests)."""

    queue: str
    ready: int | None  # pending, run_at <= now()
    scheduled: int | None  # pending, run_at > now()
    running: int | None  # running, lease still valid
    stuck: int | None  # running past the framework's stuck rule (e.g. locked_until < now())
    dead: int | None  # dead letters: out of attempts (or discarded to the dead state)
    done: int | None  # kept finished rows
    oldest_ready_age_s: float | None  # now() - min(run_at) over ready jobs; None: none ready, or unknown
    # count name (and "oldest_ready_age_s": the age's own figure) -> how it was obtained
    figures: dict[str, Figure] = field(default_factory=dict)
    # a dialect's labelled extra states (cancelled...), None when not taken
    extra: dict[str, int | None] = field(default_factory=dict)
    # paused the framework's own way (no worker claims from it): None when not known (the kind
    # keeps it out of the database, or has no pause at all: paused_figure says which, and why)
    paused: bool | None = None
    paused_since: datetime | None = None
    paused_figure: Figure | None = None  # how `paused` was obtained; None: a snapshot built by hand

    def accuracy(self, name: str) -> str:
        figure = self.figures.get(name)
        if figure is not None:
            return figure.accuracy
        return EXACT if self.count(name) is not None else UNKNOWN

    def count(self, name: str) -> int | None:
        """A count by its field name or extra label; None when not taken."""
        return self.extra.get(name) if name in self.extra else getattr(self, name, None)

    def reason(self, name: str) -> str | None:
        """Why the count has no value (None when it has one)."""
        figure = self.figures.get(name)
        if figure is not None and not figure.known:
            return figure.reason or figure.accuracy
        return None if self.count(name) is not None else "not taken"

    @property
    def approximate(self) -> bool:
        """Some count taken is not exact at this poll (stale, at_least or approximate); the oldest
        ready age's figure is not a count."""
        return any(f.known and not f.exact for n, f in self.figures.items() if n != "oldest_ready_age_s")


@dataclass(frozen=True)
class Lease:
    id: JobId
    queue: str
    locked_by: str | None
    attempts: int
    max_attempts: int
    locked_until: datetime | None
    seconds_left: float  # negative once expired
    holder_connected: bool  # a backend whose application_name == locked_by exists
    holder_pid: int | None
    payload_preview: str | None = None  # first 200 characters of the payload text (untrusted); None if big
    heartbeat_age: float | None = None  # seconds since the holder last renewed it; None: not renewed yet
    liveness: str = ""  # "alive" | "gone" | "unknown" (a dialect that cannot know says unknown)


@dataclass(frozen=True)
class LeaseList:
    rows: tuple[Lease, ...]
    total: int | None  # true total (rows is capped for display); None: not known (JSON null, "?")
    figure: Figure | None = None  # None: read by this poll; else a background scan's (stale) or unknown


@dataclass(frozen=True)
class DeadJob:
    """A failed (dead-letter) job, listed so the dashboard can retry or discard it."""

    id: JobId
    queue: str
    attempts: int
    max_attempts: int
    finished_at: datetime | None
    last_error: str | None  # untrusted text: render it as rich Text
    payload_preview: str | None = None  # first 200 characters of the payload text (untrusted); None if big


@dataclass(frozen=True)
class DeadList:
    rows: tuple[DeadJob, ...]  # newest first, capped for display
    total: int | None  # None: not known (the list has not landed, a count is unknown)
    figure: Figure | None = None  # None: read by this poll; else a background scan's (stale) or unknown


@dataclass(frozen=True)
class Rates:
    """Per-second rates. A per-queue rate that could not be derived this poll is None (shown "—");
    `figures` says for each rate its source and accuracy (no entry: the counters table, exact)."""

    enqueued: float | None  # per second
    completed: float | None  # left the queue: deleted or marked done
    failed: float | None  # counters: failed attempts (retried or dead); table: net new dead letters
    dead: float | None = 0.0  # failed attempts that sent the job to the dead letters
    figures: dict[str, Figure] = field(default_factory=dict)


@dataclass(frozen=True)
class ThroughputPoint:
    """One second's jobs, all queues. A counters table's seconds are counts (a second with no row is
    0). The table-derived ones spread each poll interval's rates over its seconds; a second no
    interval rated (before the first two polls, or a kind with no rate source) or a rate no queue had
    is None: unknown, never 0 (a chart draws nothing there, never "idle")."""

    at: datetime  # start of the one-second bucket
    enqueued: int | None
    completed: int | None
    failed: int | None
    dead: int | None


@dataclass(frozen=True)
class TableRates:
    """Table-wide row changes per second from pg_stat_user_tables (n_tup_ins/upd/del deltas between
    polls): every writer counts, aborted inserts too; the server flushes these counters about once a
    second, so they lag by up to ~1 s."""

    interval_s: float
    inserted: float
    updated: float
    deleted: float


@dataclass(frozen=True)
class Throughput:
    interval_s: float  # window the `total`/`per_queue` rates are averaged over
    total: Rates
    per_queue: dict[str, Rates]
    history: tuple[ThroughputPoint, ...]  # all queues, one point per second, oldest first
    queue_history: dict[str, tuple[int, ...]]  # completed per second per queue (sparklines)
    source: str = "counters"  # "counters" (<table>_stats), "table" (derived from the jobs table), "mixed"
    table: TableRates | None = None  # None until two polls have been seen
    window_s: float | None = None  # the table-derived rates' window: first to last poll in it
    # the timestamps' rates' window (monitor/finished.py): first to last poll's window end, a little
    # before the poll when it planned its statements ahead (monitor/ahead.py); None: no such rate
    timestamps_window_s: float | None = None
    # the counters table's cross-check (monitor/foreign.py): why writers other than pgq_tui.queue are
    # present, in one sentence; None: no sign of them, or no counters table
    foreign: str | None = None
    # why rates from the framework's timestamps are not known at this poll (monitor/finished.py)
    rates_note: str | None = None


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
    # a partitioned table: its leaf partitions ((schema, table), recursively; () when not partitioned).
    # The figures above are their sums; the autovacuum threshold and `until_autovacuum` are those of
    # `worst_partition`, the partition closest to (or furthest past) its own autovacuum trigger.
    partitions: tuple[tuple[str, str], ...] = ()
    worst_partition: str | None = None  # schema.table
    worst_dead_tuples: int = 0  # dead tuples of worst_partition (what its autovacuum trigger counts)

    @property
    def trigger_dead(self) -> int:
        """The dead tuples the autovacuum threshold is compared with (the worst partition's)."""
        return self.worst_dead_tuples if self.partitions else self.dead_tuples


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
    # with the pid, names this one session (a pid is reused after its session ends): cancel and
    # terminate signal the pid only while it still has this backend_start
    backend_start: datetime | None = None


@dataclass(frozen=True)
class XminHolder:
    kind: str  # "backend", "prepared transaction", "replication slot"
    name: str  # pid, gid or slot name
    xmin_age: int  # transactions behind the current one
    age_s: float | None  # how long it has held it, where known
    detail: str | None
    is_pgq_top: bool = False  # held by one of pgq-top's own sessions
    # How far it reaches (db/sql/xmin_holders.sql): "database" (this database's tables), "cluster"
    # (every database's: a physical slot's or a standby's feedback xmin), "other database" (none of
    # this database's rows), "catalog" (a logical slot's catalog_xmin: catalog rows and WAL only).
    # None: not read (a recording made before it was).
    scope: str | None = None
    wal_bytes: int | None = None  # WAL a replication slot keeps (None: not a slot, or not known)

    @property
    def holds_tables(self) -> bool:
        """Can it keep this database's dead tuples from vacuum? A logical slot's catalog_xmin and a
        transaction in another database cannot; without a scope only the slot rule is known."""
        if self.scope is not None:
            return self.scope in ("database", "cluster")
        return self.kind != "replication slot" or re.search(r"(^| )xmin age ", self.detail or "") is not None


@dataclass(frozen=True)
class Blocker:
    blocked_pid: int
    blocked_query: str | None
    blocked_wait_s: float | None
    blocking_pid: int
    blocking_state: str | None
    blocking_query: str | None
    blocking_application: str | None
    blocking_backend_start: datetime | None = None  # with blocking_pid, names that one session


@dataclass(frozen=True)
class Sessions:
    idle_in_transaction: tuple[Session, ...]
    xmin_holders: tuple[XminHolder, ...]
    blocked: tuple[Blocker, ...]
    total_backends: int


@dataclass(frozen=True)
class CountStatus:
    """The counting machinery: the per-poll cap and the background exact count above it.

    Every poll counts each queue-and-state exactly up to `cap` (cost bounded by the cap). Above it, a
    background thread on its own connection runs exact `count(*)`s with its own statement_timeout
    (`budget_ms`); its results are shown as stale with their age until the next one lands.
    """

    cap: int
    background: str  # "idle" (no count above the cap), "waiting" (no result yet), "ready", "failed"
    budget_ms: int  # the background count's statement_timeout
    max_lag_s: float  # stated bound on a background figure's age: pacing wait + 2x the last count's cost
    as_of: datetime | None = None  # snapshot time of the newest background count
    cost_ms: float | None = None  # how long that count took (its own connection, not the poll's)
    lag_s: float | None = None  # how far behind this poll it is (poll's now - as_of)
    error: str | None = None  # why the last background count failed (e.g. its statement_timeout)


@dataclass(frozen=True)
class Percentiles:
    """p50, p95, p99 (interpolated) and the max of a duration, in seconds; None where not recorded."""

    p50: float | None
    p95: float | None
    p99: float | None
    max: float | None


@dataclass(frozen=True)
class SpanLatency:
    """One queue's wait (due -> started) and run (started -> finished) times over one span ("5m",
    "1h") of finished jobs. `figure` says how they were read: stale (exact as of its as_of, from the
    background pass), approximate (over the newest jobs only) or unknown (why: `figure.reason`); a
    side the framework did not time is None with the reason too, never 0."""

    span: str
    jobs: int | None  # finished jobs the figures are over; None: not read
    wait: Percentiles | None
    run: Percentiles | None
    figure: Figure


@dataclass(frozen=True)
class QueueLatency:
    queue: str
    spans: tuple[SpanLatency, ...]


@dataclass(frozen=True)
class Latency:
    """The latency pass's latest result (monitor/latency.py): per queue, the spans it read; `reason`
    says why there is nothing (the kind does not time its jobs, no pass landed yet, it failed)."""

    queues: tuple[QueueLatency, ...]
    as_of: datetime | None
    reason: str | None = None
    error: str | None = None  # the last pass failed (its figures are the previous pass's, stale)
    cost_ms: float | None = None
    note: str | None = None  # how it is read (e.g. "no index serves it (a scan)")
    unsupported: bool = False  # the kind does not time its jobs (reason says so): never an alert
    gap: str = ""  # why a queue may show no finished job although jobs finished (QueueModel.latency_gap)


@dataclass(frozen=True)
class Snapshot:
    server: ServerInfo
    queues: tuple[QueueStats, ...]
    leases: LeaseList
    stuck: LeaseList  # the stuck jobs, listed (running past the stuck rule)
    throughput: Throughput
    table: TableHealth
    sessions: Sessions
    errors: dict[str, str] = field(default_factory=dict)  # panel -> why it is stale (e.g. a timeout)
    # Added for the dashboard's retry/discard keys; a monitor that does not fill it reports none
    # ("dead" is also its panel name in `errors`).
    dead: DeadList = field(default_factory=lambda: DeadList(rows=(), total=0))
    counts: CountStatus | None = None  # None: a snapshot built by hand (every count exact)
    # Which queue this is (dialects): its kind, where it lives, the framework's stuck rule, and the
    # panels it cannot serve (panel -> why, e.g. the index it wants): unsupported, not an error.
    kind: str = "pgq"
    target: str = ""
    stuck_rule: str = ""
    unsupported: dict[str, str] = field(default_factory=dict)
    # Claim-cost probe, autovacuum pacing and xmin block (monitor/bloat.py); None when not collected.
    bloat: BloatReport | None = None
    stuck_label: str = ""  # the stuck rule in a few words for one-line verdicts ("lease expired"), or ""
    # Counts not taken at this poll for any queue (count name -> why): a count the kind records but
    # has no way to count, or whose statement failed (e.g. its statement_timeout). Each queue's
    # figure for it is `unknown` with the same reason; this says it even when no queue is listed.
    # "oldest_ready_age_s": the oldest ready job's age was not taken (no index serves it, or failed).
    unknown: dict[str, str] = field(default_factory=dict)
    # The kind's periodic schedules (monitor/schedules.py), read at most every INTERVAL_S (its as_of
    # says when); None: not read (a snapshot built by hand, or the read failed: errors["schedules"])
    schedules: ScheduleReport | None = None
    # wait and run time percentiles per queue (monitor/latency.py); None: not read (built by hand,
    # recorded before they existed): every figure unknown
    latency: Latency | None = None

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = _jsonable(dataclasses.asdict(self))
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Snapshot:
        """Rebuild a Snapshot from `to_dict()` output (e.g. parsed `pgq-top snapshot --json`), also
        one written before 0.2 with the old names (monitor/legacy.py)."""
        from pgq_tui.monitor.codec import from_dict
        from pgq_tui.monitor.legacy import upgrade

        return from_dict(cls, upgrade(data))


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, UUID):  # a mapped table's uuid job id
        return str(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value
