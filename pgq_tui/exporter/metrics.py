"""The metric families of one scrape, built from the exporter's state (each queue's Snapshot, or why
there is none). Names follow Prometheus conventions: the `pgq_` prefix, base units (seconds, bytes),
`_total` for counters. Every per-queue family carries `kind` (the dialect, e.g. procrastinate) and
`target` (the queue's main table, schema.table), so a database holding several queues exports each;
`queue` and `state` are the framework's queue names and pgq-top's canonical states. Every figure is
one the Snapshot holds, never recomputed from SQL here, and a figure the dialect cannot serve is
absent, never 0 (Snapshot.unsupported), as is a count not taken at this collect (no way to count it,
its statement failed or timed out: docs/unknown-figures.md says how to alert on the absence).
Database-wide families (server, sessions) come once.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from pgq_tui.exporter.cache import ExporterState
from pgq_tui.exporter.counters import EVENTS, ThroughputCounters
from pgq_tui.exporter.latency import latency_families
from pgq_tui.exporter.schedules import schedule_families
from pgq_tui.fleet.poll import QueueOutcome
from pgq_tui.fleet.support import state_served, stuck_total, why_not
from pgq_tui.monitor import figures
from pgq_tui.monitor.collect import PANELS
from pgq_tui.monitor.snapshot import Snapshot

QUEUE_LABELS = ["kind", "target"]

EVENT_HELP = {
    "enqueued": "Jobs enqueued",
    "completed": "Jobs completed",
    "failed": "Failed attempts (retried or dead)",
    "dead": "Jobs that ran out of attempts (dead letters)",
}


def gauge(
    name: str, doc: str, value: float | None = None, labels: list[str] | None = None
) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, value=value, labels=labels)


def qgauge(name: str, doc: str, *labels: str) -> GaugeMetricFamily:
    return GaugeMetricFamily(name, doc, labels=[*QUEUE_LABELS, *labels])


def qcounter(name: str, doc: str, *labels: str) -> CounterMetricFamily:
    return CounterMetricFamily(name, doc, labels=[*QUEUE_LABELS, *labels])


def _present(families: Sequence[Metric]) -> Iterator[Metric]:
    """Only families with samples: a figure no queue serves is absent, not an empty family."""
    return (f for f in families if f.samples)


def exporter_families(state: ExporterState) -> Iterator[Metric]:
    """Always served, the database up or not."""
    yield gauge(
        "pgq_up",
        "1 if the last collect reached the database and every queue's tables, else 0",
        1 if state.up else 0,
    )
    yield gauge(
        "pgq_last_error_code",
        "Why the last collect failed, as pgq-top's exit code (3 cannot connect, 4 table missing "
        "or wrong, 5 privilege missing, 1 other); 0 when it worked",
        state.error_code,
    )
    yield CounterMetricFamily(
        "pgq_collects", "Collects run (scrapes within the minimum interval reuse one)", value=state.collects
    )
    yield CounterMetricFamily("pgq_collect_errors", "Collects that failed", value=state.failures)
    up = qgauge("pgq_queue_up", "1 if the last collect read this queue, else 0 (per detected queue)")
    for o in state.queues:
        if o.queue is not None:
            up.add_metric([o.queue.kind, o.table], 1 if isinstance(o.outcome, Snapshot) else 0)
    yield from _present([up])


def snapshot_families(state: ExporterState) -> Iterator[Metric]:
    """The families of every queue read at the last collect, and the database-wide ones once."""
    read = state.snapshots
    if not read:
        return
    first = read[0][1]
    srv = first.server
    info = gauge(
        "pgq_server_info", "The server's version (value is always 1)", labels=["version", "database"]
    )
    info.add_metric([srv.version, srv.database], 1)
    yield info
    yield gauge("pgq_server_in_recovery", "1 on a standby", 1 if srv.in_recovery else 0)
    yield from _queue_families(read, state.counters)
    yield from latency_families(read)  # wait and run time quantiles (exporter/latency.py)
    yield from _table_families(read)
    yield from schedule_families(read)
    yield from _session_families(first)


def _queue_families(
    read: Sequence[tuple[QueueOutcome, Snapshot]], counters: dict[str, ThroughputCounters]
) -> Iterator[Metric]:
    queue_info = qgauge(
        "pgq_queue_info", "A queue found in the database (value is always 1)", "version", "stuck_rule"
    )
    duration = qgauge("pgq_collect_duration_seconds", "How long the last collect took (the poll's cost)")
    taken = qgauge("pgq_snapshot_timestamp_seconds", "When the served snapshot was taken (server clock)")
    panel = qgauge(
        "pgq_panel_up",
        "0 if this panel's query failed in the last collect (panels the dialect cannot serve are absent)",
        "panel",
    )
    jobs = qgauge(
        "pgq_jobs",
        "Jobs per queue and state (stuck and dead by the framework's own rules); states the dialect "
        "cannot count, and counts not taken at this collect (failed, timed out), are absent",
        "queue",
        "state",
    )
    exact = qgauge(
        "pgq_jobs_exact",
        "1 when pgq_jobs for this queue and state is exact at this collect; 0 when it is a stale count's "
        "(its age: pgq_jobs_age_seconds) or a lower bound",
        "queue",
        "state",
    )
    figure_age = qgauge(
        "pgq_jobs_age_seconds",
        "How old pgq_jobs for this queue and state is: 0 when taken at this collect, else the age of the "
        "stale count it shows (a background count's or scan's, or the framework's own count's, e.g. "
        "pg-boss's monitor's)",
        "queue",
        "state",
    )
    rate = qgauge(
        "pgq_queue_rate_per_second",
        "The monitor's own per-queue rate over its window (any writer; from the counters table or "
        "derived from the jobs table); absent while unknown. Prefer rate() over the _total counters",
        "queue",
        "event",
    )
    age = qgauge(
        "pgq_oldest_ready_job_age_seconds", "How long the oldest ready job has waited (0: none)", "queue"
    )
    paused = qgauge(
        "pgq_queue_paused",
        "1 if the queue is paused the framework's own way (no worker claims from it), else 0; absent "
        "where the kind has no pause or does not record it (Oban OSS) or the read failed",
        "queue",
    )
    lag = qgauge(
        "pgq_background_count_lag_seconds",
        "How far behind this collect the background exact count (used above the per-poll cap) is",
    )
    stuck = qgauge("pgq_stuck_jobs", "Stuck jobs by the framework's own rule, all queues (the true total)")
    totals = {
        event: qcounter(
            f"pgq_jobs_{event}",
            f"{EVENT_HELP[event]}, all queues, since the exporter started (from the queue's per-second "
            "counters)",
        )
        for event in EVENTS
    }
    by_queue = qcounter(
        "pgq_queue_jobs_completed", "Jobs completed per queue since the exporter started", "queue"
    )
    for o, snap in read:
        who = [snap.kind, o.table]
        version = o.queue.match.version if o.queue is not None else None
        queue_info.add_metric([*who, version or "", snap.stuck_rule], 1)
        duration.add_metric(who, snap.server.collect_ms / 1000)
        taken.add_metric(who, snap.server.now.timestamp())
        for name in PANELS:
            if name not in snap.unsupported:
                panel.add_metric([*who, name], 0 if name in snap.errors else 1)
        states = [s for s in figures.STATES if state_served(snap, s)]
        for q in snap.queues:
            for s in states:
                n = figures.state_count(q, s)
                if n is None:  # not taken (no way to count it, its statement failed): absent, never 0
                    continue
                jobs.add_metric([*who, q.queue, s], n)
                exact.add_metric([*who, q.queue, s], 1 if figures.state_exact(q, s) else 0)
                figure_age.add_metric([*who, q.queue, s], figures.state_age_s(q, s, snap.server.now))
            # not taken (no index serves it, its statement failed, the background scan that reads it
            # has not landed): absent, never 0. A stale age (a background scan's) is exported as is.
            oldest = q.figures.get("oldest_ready_age_s")
            known = "oldest_ready_age_s" not in snap.unknown and (oldest is None or oldest.known)
            if why_not(snap, "oldest_ready") is None and known:
                age.add_metric([*who, q.queue], q.oldest_ready_age_s or 0.0)
            if q.paused is not None:  # unknown or no such thing: absent, never 0
                paused.add_metric([*who, q.queue], 1 if q.paused else 0)
        if "throughput" not in snap.errors:
            for name, rates in sorted(snap.throughput.per_queue.items()):
                for event in ("enqueued", "completed", "failed"):
                    value = getattr(rates, event)
                    if value is not None:
                        rate.add_metric([*who, name, event], value)
        if snap.counts is not None and snap.counts.lag_s is not None:
            lag.add_metric(who, snap.counts.lag_s)
        total = stuck_total(snap)
        if why_not(snap, "stuck") is None and total is not None:
            stuck.add_metric(who, total)
        c = counters.get(o.key)
        if c is None or c.mark is None:
            continue  # no counters table (or no grant, or not yet read): no counters, not flat ones
        for event in EVENTS:
            totals[event].add_metric(who, c.totals[event])
        for queue, n in sorted(c.completed_by_queue.items()):
            by_queue.add_metric([*who, queue], n)
    yield from _present(
        [
            queue_info,
            duration,
            taken,
            panel,
            jobs,
            exact,
            figure_age,
            age,
            paused,
            rate,
            lag,
            stuck,
            *totals.values(),
            by_queue,
        ]
    )


TABLE_GAUGES = (
    ("live_tuples", "Live tuples (pg_stat_user_tables)"),
    ("dead_tuples", "Dead tuples (pg_stat_user_tables)"),
    (
        "autovacuum_threshold",
        "Dead tuples autovacuum waits for: the effective threshold (reloptions over server settings)",
    ),
    ("autovacuum_enabled", "0 if autovacuum is off for the table"),
    ("vacuum_running", "1 while a (auto)vacuum is working on the table"),
    ("size_bytes", "Heap size"),
    ("index_size_bytes", "Size of all its indexes"),
    ("last_autovacuum_age_seconds", "Seconds since the last autovacuum"),
    ("last_vacuum_age_seconds", "Seconds since the last vacuum"),
)
TABLE_COUNTERS = (
    ("autovacuums", "Autovacuum runs (pg_stat_user_tables.autovacuum_count)"),
    ("vacuums", "Manual vacuum runs (pg_stat_user_tables.vacuum_count)"),
    ("tuples_inserted", "Tuples inserted (pg_stat_user_tables)"),
    ("tuples_updated", "Tuples updated (pg_stat_user_tables)"),
    ("tuples_deleted", "Tuples deleted (pg_stat_user_tables)"),
    ("tuples_hot_updated", "Tuples hot updated (pg_stat_user_tables)"),
)


def _table_families(read: Sequence[tuple[QueueOutcome, Snapshot]]) -> Iterator[Metric]:
    """The health of each queue's main table (`table` is the relation pg_stat_user_tables describes)."""
    gauges = {n: qgauge(f"pgq_table_{n}", doc, "table") for n, doc in TABLE_GAUGES}
    counters = {n: qcounter(f"pgq_table_{n}", doc, "table") for n, doc in TABLE_COUNTERS}
    for o, snap in read:
        if "table" in snap.errors:
            continue
        t = snap.table
        labels = [snap.kind, o.table, t.table]
        values: dict[str, float | None] = {
            "live_tuples": t.live_tuples,
            "dead_tuples": t.dead_tuples,
            "autovacuum_threshold": t.vacuum_threshold,
            "autovacuum_enabled": 1 if t.autovacuum_enabled else 0,
            "vacuum_running": 1 if t.vacuum else 0,
            "size_bytes": t.table_bytes,
            "index_size_bytes": t.index_bytes,
            # never vacuumed: no series, rather than a made-up age
            "last_autovacuum_age_seconds": figures.age_s(snap, t.last_autovacuum),
            "last_vacuum_age_seconds": figures.age_s(snap, t.last_vacuum),
        }
        for name, value in values.items():
            if value is not None:
                gauges[name].add_metric(labels, value)
        counts = {
            "autovacuums": t.autovacuum_count,
            "vacuums": t.vacuum_count,
            "tuples_inserted": t.inserted,
            "tuples_updated": t.updated,
            "tuples_deleted": t.deleted,
            "tuples_hot_updated": t.hot_updated,
        }
        for name, count in counts.items():
            counters[name].add_metric(labels, count)
    yield from _present([*gauges.values(), *counters.values()])


def _session_families(snap: Snapshot) -> Iterator[Metric]:
    if "sessions" in snap.errors:
        return
    idle = figures.idle_in_transaction(snap)
    oldest = figures.oldest_idle_in_transaction(snap)
    holder = figures.oldest_xmin_holder(snap)
    holders = figures.xmin_holders(snap)
    yield gauge(
        "pgq_idle_in_transaction_sessions",
        "Sessions idle in a transaction (this database; pgq-top's own excluded)",
        len(idle),
    )
    yield gauge(
        "pgq_idle_in_transaction_oldest_age_seconds",
        "Age of the oldest idle-in-transaction session's transaction (0: none)",
        (oldest.xact_age_s or 0.0) if oldest else 0.0,
    )
    yield gauge(
        "pgq_xmin_horizon_age_seconds",
        "How long the oldest xmin holder that can hold this database's tables (backend or prepared "
        "transaction of this database, or a walsender's feedback) has held the horizon back (0: none)",
        (holder.age_s or 0.0) if holder else 0.0,
    )
    yield gauge(
        "pgq_xmin_horizon_age_transactions",
        "How many transactions the xmin horizon is behind (all holders, replication slots included)",
        max((h.xmin_age for h in holders), default=0),
    )
    yield gauge(
        "pgq_blocked_sessions",
        "Sessions waiting on a lock (this database)",
        len({b.blocked_pid for b in snap.sessions.blocked}),
    )
    yield gauge("pgq_backends", "Client backends", snap.sessions.total_backends)


def families(state: ExporterState) -> Iterator[Metric]:
    yield from exporter_families(state)
    yield from snapshot_families(state)
