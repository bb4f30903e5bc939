"""The metric families of one scrape, built from the exporter's state (a Snapshot, or why there is
none). Names follow Prometheus conventions: the `pgq_` prefix, base units (seconds, bytes), `_total`
for counters, `queue` and `state` labels; every figure is one the Snapshot holds, never recomputed
from SQL here, so the exporter serves every dialect the monitor does.
"""

from __future__ import annotations

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from pgq_tui.exporter.cache import ExporterState
from pgq_tui.exporter.counters import EVENTS
from pgq_tui.monitor import figures
from pgq_tui.monitor.collect import PANELS
from pgq_tui.monitor.snapshot import Snapshot

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


def exporter_families(state: ExporterState) -> Iterator[Metric]:
    """Always served, the database up or not."""
    yield gauge(
        "pgq_up",
        "1 if the last collect reached the database and the jobs table, else 0",
        1 if state.snapshot is not None else 0,
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


def snapshot_families(snap: Snapshot, state: ExporterState) -> Iterator[Metric]:
    srv = snap.server
    info = gauge(
        "pgq_server_info", "The server's version (value is always 1)", labels=["version", "database"]
    )
    info.add_metric([srv.version, srv.database], 1)
    yield info
    yield gauge("pgq_server_in_recovery", "1 on a standby", 1 if srv.in_recovery else 0)
    yield gauge(
        "pgq_collect_duration_seconds",
        "How long the last collect took (the monitor's poll cost)",
        srv.collect_ms / 1000,
    )
    yield gauge(
        "pgq_snapshot_timestamp_seconds",
        "When the served snapshot was taken (server clock)",
        srv.now.timestamp(),
    )
    panel = gauge("pgq_panel_up", "0 if this panel's query failed in the last collect", labels=["panel"])
    for name in PANELS:
        panel.add_metric([name], 0 if name in snap.errors else 1)
    yield panel

    yield from _queue_families(snap, state)
    yield from _table_families(snap)
    yield from _session_families(snap)


def _queue_families(snap: Snapshot, state: ExporterState) -> Iterator[Metric]:
    jobs = gauge(
        "pgq_jobs",
        "Jobs per queue and state (stuck: lease expired; dead: out of attempts)",
        labels=["queue", "state"],
    )
    exact = gauge(
        "pgq_jobs_exact",
        "1 when pgq_jobs for this queue and state is exact at this collect; 0 when it is a background "
        "count's (see pgq_background_count_lag_seconds) or a lower bound",
        labels=["queue", "state"],
    )
    rate = gauge(
        "pgq_queue_rate_per_second",
        "The monitor's own per-queue rate over its window (any writer; from the counters table or "
        "derived from the jobs table); absent while unknown. Prefer rate() over the _total counters",
        labels=["queue", "event"],
    )
    age = gauge(
        "pgq_oldest_ready_job_age_seconds",
        "How long the oldest ready job has waited (0: none)",
        labels=["queue"],
    )
    for q in snap.queues:
        for s in figures.STATES:
            jobs.add_metric([q.queue, s], figures.state_count(q, s))
            exact.add_metric([q.queue, s], 1 if figures.state_exact(q, s) else 0)
        age.add_metric([q.queue], q.oldest_ready_age_s or 0.0)
    for name, rates in sorted(snap.throughput.per_queue.items()):
        for event in ("enqueued", "completed", "failed"):
            value = getattr(rates, event)
            if value is not None:
                rate.add_metric([name, event], value)
    yield jobs
    yield exact
    yield age
    if "throughput" not in snap.errors:
        yield rate
    counts = snap.counts
    if counts is not None and counts.lag_s is not None:
        yield gauge(
            "pgq_background_count_lag_seconds",
            "How far behind this collect the background exact count (used above the per-poll cap) is",
            counts.lag_s,
        )
    yield gauge(
        "pgq_stuck_jobs",
        "Expired leases, all queues (the leases panel's true total)",
        figures.totals(snap).stuck,
    )
    c = state.counters
    if c.mark is None:
        return  # no counters table (or no grant, or not yet read): no counters rather than flat ones
    for event in EVENTS:
        yield CounterMetricFamily(
            f"pgq_jobs_{event}",
            f"{EVENT_HELP[event]}, all queues, since the "
            "exporter started (from the queue's per-second counters)",
            value=c.totals[event],
        )
    by_queue = CounterMetricFamily(
        "pgq_queue_jobs_completed", "Jobs completed per queue since the exporter started", labels=["queue"]
    )
    for q, n in sorted(c.completed_by_queue.items()):
        by_queue.add_metric([q], n)
    yield by_queue


def _table_families(snap: Snapshot) -> Iterator[Metric]:
    if "table" in snap.errors:
        return
    t = snap.table

    def g(name: str, doc: str, value: float) -> GaugeMetricFamily:
        family = gauge(f"pgq_table_{name}", doc, labels=["table"])
        family.add_metric([t.table], value)
        return family

    def c(name: str, doc: str, value: float) -> CounterMetricFamily:
        family = CounterMetricFamily(f"pgq_table_{name}", doc, labels=["table"])
        family.add_metric([t.table], value)
        return family

    yield g("live_tuples", "Live tuples (pg_stat_user_tables)", t.live_tuples)
    yield g("dead_tuples", "Dead tuples (pg_stat_user_tables)", t.dead_tuples)
    yield g(
        "autovacuum_threshold",
        "Dead tuples autovacuum waits for: the effective threshold (reloptions over server settings)",
        t.vacuum_threshold,
    )
    yield g("autovacuum_enabled", "0 if autovacuum is off for the table", 1 if t.autovacuum_enabled else 0)
    yield g("vacuum_running", "1 while a (auto)vacuum is working on the table", 1 if t.vacuum else 0)
    yield g("size_bytes", "Heap size", t.table_bytes)
    yield g("index_size_bytes", "Size of all its indexes", t.index_bytes)
    for name, when in (("last_autovacuum", t.last_autovacuum), ("last_vacuum", t.last_vacuum)):
        age = figures.age_s(snap, when)
        if age is not None:  # never vacuumed: no series, rather than a made-up age
            yield g(f"{name}_age_seconds", f"Seconds since the {name.replace('_', ' ')}", age)
    yield c("autovacuums", "Autovacuum runs (pg_stat_user_tables.autovacuum_count)", t.autovacuum_count)
    yield c("vacuums", "Manual vacuum runs (pg_stat_user_tables.vacuum_count)", t.vacuum_count)
    for name, value in (
        ("inserted", t.inserted),
        ("updated", t.updated),
        ("deleted", t.deleted),
        ("hot_updated", t.hot_updated),
    ):
        yield c(f"tuples_{name}", f"Tuples {name.replace('_', ' ')} (pg_stat_user_tables)", value)


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
        "How long the oldest xmin holder (backend or prepared "
        "transaction, cluster-wide) has held the horizon back (0: none)",
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
    if state.snapshot is not None:
        yield from snapshot_families(state.snapshot, state)
