"""Query rows -> Snapshot dataclasses. Pure: no database, so each rule here is testable on its own."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from pgq_tui.dialects.contract import dead_row, lease_row
from pgq_tui.monitor import health
from pgq_tui.monitor.snapshot import (
    Blocker,
    DeadJob,
    DeadList,
    Lease,
    LeaseList,
    QueueStats,
    Rates,
    Session,
    Sessions,
    TableHealth,
    Throughput,
    ThroughputPoint,
    VacuumProgress,
    XminHolder,
)

Row = Mapping[str, Any]


# -- leases and dead letters -------------------------------------------------------------------------
def _lease(r: Row) -> Lease:
    row = lease_row(r)
    return Lease(
        id=row.id,
        queue=str(row.queue),
        locked_by=row.holder,
        attempts=row.attempts or 0,
        max_attempts=row.max_attempts or 0,
        locked_until=row.expires_at,
        seconds_left=row.seconds_left if row.seconds_left is not None else 0.0,
        holder_connected=row.liveness.value == "alive",
        holder_pid=row.holder_pid,
        payload_preview=row.payload_preview,
        heartbeat_age=row.heartbeat_age,
        liveness=row.liveness.value,
    )


def list_total(shown: int, counts: Sequence[int | None], landed: bool) -> int | None:
    """A list's true total: the queues' counts (never below the rows shown); None when the list has
    not landed and some queue's count is unknown: unknown is never 0.

    >>> list_total(2, [3, 1], landed=False), list_total(0, [None, 1], landed=False)
    (4, None)
    >>> list_total(2, [None, 1], landed=True), list_total(0, [], landed=False)
    (2, 0)
    """
    if landed or all(c is not None for c in counts):
        return max(shown, sum(c or 0 for c in counts))
    return None


def lease_lists(
    rows: Sequence[Row], queues: Sequence[QueueStats], counts_missing: bool, landed: bool = True
) -> tuple[LeaseList, LeaseList]:
    """Running jobs (least time left first) and stuck ones (longest stuck first), from the dialect's
    LEASE_COLUMNS rows, each with its true total from the queue counts (or the rows seen, when the
    counts panel failed). `landed`: the rows were read (by the poll or a background scan); when not,
    a total the counts cannot give is None."""
    leases = [(_lease(r), bool(r["stuck"])) for r in rows]
    running = tuple(lease for lease, stuck in leases if not stuck)
    stuck = tuple(lease for lease, is_stuck in leases if is_stuck)
    if counts_missing:
        shown = (len(running), len(stuck)) if landed else (None, None)
        return LeaseList(running, shown[0]), LeaseList(stuck, shown[1])
    return (
        LeaseList(running, list_total(len(running), [q.running for q in queues], landed)),
        LeaseList(stuck, list_total(len(stuck), [q.stuck for q in queues], landed)),
    )


def dead_list(rows: Sequence[Row], queues: Sequence[QueueStats], landed: bool = True) -> DeadList:
    """Dead jobs from the dialect's DEAD_COLUMNS rows, newest first, with the true total (None: the
    list has not landed and some queue's dead count is unknown)."""
    jobs = []
    for r in rows:
        d = dead_row(r)
        jobs.append(
            DeadJob(
                id=d.id,
                queue=str(d.queue),
                attempts=d.attempts or 0,
                max_attempts=d.max_attempts or 0,
                finished_at=d.finished_at,
                last_error=d.error,
                payload_preview=d.payload_preview,
            )
        )
    return DeadList(tuple(jobs), list_total(len(jobs), [q.dead for q in queues], landed))


# -- throughput --------------------------------------------------------------------------------------
def window(now: datetime, seconds: int) -> tuple[datetime, datetime]:
    """[since, until): `seconds` whole seconds ending at the start of the current (incomplete) second."""
    until = now.replace(microsecond=0)
    return until, until - timedelta(seconds=seconds)


def throughput(rows: Sequence[Row], until: datetime, history_s: int, rate_window_s: int) -> Throughput:
    """Rates over the last `rate_window_s` complete seconds and per-second history over `history_s`.

    Buckets are the writer's clock_timestamp() second (server clock), so the current second is still
    filling and is left out; a transaction that counted in the previous second but commits after the
    poll is missed by a few milliseconds' worth of jobs at most.
    """
    rate_since = until - timedelta(seconds=rate_window_s)
    hist_since = until - timedelta(seconds=history_s)
    per_second: dict[datetime, list[int]] = {}
    per_queue: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    queue_completed: dict[str, dict[datetime, int]] = defaultdict(dict)
    for r in rows:
        bucket = r["bucket"]
        if bucket >= until:  # the current second (still filling), or an operator's removal in it
            continue
        counts = [int(r["enqueued"]), int(r["completed"]), int(r["failed"]), int(r["dead"])]
        if bucket >= hist_since:
            slot = per_second.setdefault(bucket, [0, 0, 0, 0])
            for i, n in enumerate(counts):
                slot[i] += n
            queue_completed[r["queue"]][bucket] = counts[1]
        if bucket >= rate_since:
            for i, n in enumerate(counts):
                per_queue[r["queue"]][i] += n
        else:
            _ = per_queue[r["queue"]]  # seen in the history window: listed
    seconds = [hist_since + timedelta(seconds=i) for i in range(history_s)]
    history = tuple(ThroughputPoint(at, *per_second.get(at, (0, 0, 0, 0))) for at in seconds)

    def rates(c: Sequence[int]) -> Rates:
        enqueued, completed, failed, dead = (health.rate(n, rate_window_s) for n in c)
        return Rates(enqueued, completed, failed, dead)

    totals = [sum(c[i] for c in per_queue.values()) for i in range(4)]
    return Throughput(
        interval_s=float(rate_window_s),
        total=rates(totals),
        per_queue={q: rates(c) for q, c in sorted(per_queue.items())},
        history=history,
        queue_history={q: tuple(queue_completed[q].get(at, 0) for at in seconds) for q in sorted(per_queue)},
    )


# -- table -------------------------------------------------------------------------------------------
def empty_table(name: str) -> TableHealth:
    return TableHealth(
        table=name,
        live_tuples=0,
        dead_tuples=0,
        dead_ratio=0.0,
        table_bytes=0,
        index_bytes=0,
        total_rows_estimate=0,
        last_vacuum=None,
        last_autovacuum=None,
        last_analyze=None,
        last_autoanalyze=None,
        vacuum_count=0,
        autovacuum_count=0,
        autovacuum_enabled=True,
        vacuum_threshold=0.0,
        vacuum_scale_factor=0.0,
        vacuum_base_threshold=0,
        until_autovacuum=0.0,
        vacuum=None,
    )


def table_health(row: Row, progress: Sequence[Row], name: str) -> TableHealth:
    """Effective autovacuum settings: the table's reloptions override the server's."""
    opts = health.reloptions_dict(row["reloptions"])
    enabled = (
        health.parse_bool(row["autovacuum"])
        and health.parse_bool(row["track_counts"])
        and health.parse_bool(opts.get("autovacuum_enabled"), default=True)
    )
    base_key, factor_key = "autovacuum_vacuum_threshold", "autovacuum_vacuum_scale_factor"
    base = int(opts[base_key] if base_key in opts else row["vacuum_threshold"])
    scale = float(opts[factor_key] if factor_key in opts else row["vacuum_scale_factor"])
    raw_max = opts.get("autovacuum_vacuum_max_threshold", row["vacuum_max_threshold"])
    max_threshold = int(raw_max) if raw_max is not None and int(raw_max) >= 0 else None
    reltuples = float(row["reltuples"])
    threshold = health.vacuum_threshold(base, scale, reltuples, max_threshold)
    live, dead = int(row["live_tuples"]), int(row["dead_tuples"])
    vacuum = None
    if progress:
        p = progress[0]
        total, scanned = p["heap_blks_total"], p["heap_blks_scanned"]
        vacuum = VacuumProgress(
            pid=p["pid"],
            phase=p["phase"],
            percent=100.0 * scanned / total if total else None,
            dead_tuples=p["dead_tuples"],
        )
    return TableHealth(
        table=name,
        live_tuples=live,
        dead_tuples=dead,
        dead_ratio=dead / (live + dead) if live + dead else 0.0,
        table_bytes=int(row["table_bytes"]),
        index_bytes=int(row["index_bytes"]),
        total_rows_estimate=max(0, round(reltuples)),
        last_vacuum=row["last_vacuum"],
        last_autovacuum=row["last_autovacuum"],
        last_analyze=row["last_analyze"],
        last_autoanalyze=row["last_autoanalyze"],
        vacuum_count=int(row["vacuum_count"]),
        autovacuum_count=int(row["autovacuum_count"]),
        autovacuum_enabled=enabled,
        vacuum_threshold=threshold,
        vacuum_scale_factor=scale,
        vacuum_base_threshold=base,
        until_autovacuum=health.dead_tuples_until_autovacuum(dead, threshold),
        vacuum=vacuum,
        vacuum_max_threshold=max_threshold,
        inserted=int(row["n_tup_ins"]),
        updated=int(row["n_tup_upd"]),
        deleted=int(row["n_tup_del"]),
        hot_updated=int(row["n_tup_hot_upd"]),
    )


# A partitioned table's figures: those its partitions add up to, and those of its worst partition.
_PARTITIONS_ADD = (
    "table_bytes", "index_bytes", "total_rows_estimate", "vacuum_count", "autovacuum_count",
    "inserted", "updated", "deleted", "hot_updated",
)  # fmt: skip
_WORST_PARTITION = (
    "last_vacuum", "last_autovacuum", "last_analyze", "last_autoanalyze", "vacuum_threshold",
    "vacuum_scale_factor", "vacuum_base_threshold", "until_autovacuum", "vacuum_max_threshold",
)  # fmt: skip


def table_health_of(rows: Sequence[Row], progress: Sequence[Row], name: str) -> TableHealth:
    """The table_health.sql rows of one table: the table itself, or each leaf partition of a
    partitioned table. Partitions are summed; the autovacuum figures (threshold, dead tuples to go,
    last vacuums) are the worst partition's: the one closest to, or furthest past, its own trigger,
    since autovacuum visits each partition on its own. The empty parent is never the one named.

    >>> row = {"reloptions": [], "autovacuum": "on", "track_counts": "on", "vacuum_threshold": "50",
    ...        "vacuum_scale_factor": "0.2", "vacuum_max_threshold": None, "table_bytes": 8192,
    ...        "index_bytes": 0, "last_vacuum": None, "last_autovacuum": None, "last_analyze": None,
    ...        "last_autoanalyze": None, "vacuum_count": 0, "autovacuum_count": 0, "n_tup_ins": 10,
    ...        "n_tup_upd": 0, "n_tup_del": 0, "n_tup_hot_upd": 0, "isleaf": True, "level": 1}
    >>> a = {**row, "rel_schema": "s", "rel_name": "p1", "reltuples": 100, "live_tuples": 100,
    ...      "dead_tuples": 60}
    >>> b = {**row, "rel_schema": "s", "rel_name": "p2", "reltuples": 1000, "live_tuples": 1000,
    ...      "dead_tuples": 200}
    >>> t = table_health_of([a, b], [], "s.parent")
    >>> t.live_tuples, t.dead_tuples, t.worst_partition, t.until_autovacuum, t.partitions
    (1100, 260, 's.p1', 11, (('s', 'p1'), ('s', 'p2')))
    """
    leaves = [r for r in rows if r.get("isleaf", True) and int(r.get("level", 0)) > 0]
    if not leaves:  # a plain table (or a partitioned one with no partition yet)
        return table_health(rows[0], progress, name)
    parts = [table_health(r, (), f"{r['rel_schema']}.{r['rel_name']}") for r in leaves]
    worst = min(parts, key=lambda p: p.until_autovacuum)
    live, dead = sum(p.live_tuples for p in parts), sum(p.dead_tuples for p in parts)
    summed = table_health({**rows[0], "reloptions": leaves[0]["reloptions"]}, progress, name)
    return dataclasses.replace(
        summed,
        live_tuples=live,
        dead_tuples=dead,
        dead_ratio=dead / (live + dead) if live + dead else 0.0,
        autovacuum_enabled=all(p.autovacuum_enabled for p in parts),
        partitions=tuple((str(r["rel_schema"]), str(r["rel_name"])) for r in leaves),
        worst_partition=worst.table,
        worst_dead_tuples=worst.dead_tuples,
        **{f: sum(getattr(p, f) for p in parts) for f in _PARTITIONS_ADD},
        **{f: getattr(worst, f) for f in _WORST_PARTITION},
    )


# -- sessions ----------------------------------------------------------------------------------------
def sessions(idle: Sequence[Row], xmin: Sequence[Row], blocked: Sequence[Row], total: int) -> Sessions:
    return Sessions(
        idle_in_transaction=tuple(Session(**r) for r in idle),
        xmin_holders=tuple(XminHolder(**r) for r in xmin),
        blocked=tuple(Blocker(**r) for r in blocked),
        total_backends=int(total),
    )
