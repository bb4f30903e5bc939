"""A dialect's canonical rows -> Snapshot panels. Pure: no database, so each rule tests on its own.

Counts read at most cap1 rows per queue and state (or over all queues, for the states a dialect marks
`capped_overall`). A count below the cap is exact at this poll; one that reached it is the background
counter's exact value (stale, with its as_of) or else a proven lower bound (at_least): never a guess.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from pgq_tui.dialects.contract import (
    COUNT_KEY,
    OLDEST_READY,
    Capability,
    QueueModel,
    State,
    dead_row,
    lease_row,
)
from pgq_tui.monitor.background import BackgroundCount
from pgq_tui.monitor.counting import BACKGROUND, POLL
from pgq_tui.monitor.snapshot import (
    AT_LEAST,
    EXACT,
    STALE,
    DeadJob,
    DeadList,
    Figure,
    Lease,
    LeaseList,
    QueueStats,
)

Row = Mapping[str, Any]

# canonical state -> the QueueStats field it fills (the Snapshot keeps its established names)
FIELD = {
    State.READY.value: "ready",
    State.SCHEDULED.value: "scheduled",
    State.RUNNING.value: "running",
    State.STUCK.value: "expired",
    State.DEAD.value: "failed",
    State.DONE.value: "done",
}
# the panel each capability feeds, for Snapshot.unsupported
PANEL = {
    Capability.COUNTS: "queues",
    Capability.LEASES: "leases",
    Capability.DEAD: "dead",
    Capability.THROUGHPUT: "throughput",
    Capability.OLDEST_READY: "oldest_ready",
    Capability.DONE: "done",
    Capability.DETAIL: "detail",
}


def poll_reads(rows: Sequence[Row]) -> tuple[dict[str, dict[str, int]], dict[str, float]]:
    """queue -> count name -> rows read (several statements summed), and queue -> oldest ready age."""
    reads: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    oldest: dict[str, float] = {}
    for r in rows:
        queue = str(r[COUNT_KEY])
        _ = reads[queue]
        for key, value in r.items():
            if key == COUNT_KEY or value is None:
                continue
            if key == OLDEST_READY:
                oldest[queue] = float(value)
            else:
                reads[queue][FIELD.get(key, key)] += int(value)
    return reads, oldest


def over_cap(reads: Mapping[str, Mapping[str, int]], model: QueueModel, cap1: int) -> frozenset[str]:
    """The count names that reached cap1 at this poll (per queue, or in sum for capped_overall)."""
    overall = {FIELD.get(s, s) for s in model.capped_overall}
    out = {n for c in reads.values() for n, v in c.items() if n not in overall and v >= cap1}
    out |= {n for n in overall if sum(c.get(n, 0) for c in reads.values()) >= cap1}
    return frozenset(out)


def figure(
    name: str,
    read: int,
    capped: bool,
    overall: bool,
    cap1: int,
    bg: BackgroundCount | None,
    queue: str,
    now: datetime,
) -> tuple[int, Figure]:
    """The poll's exact read; above the cap the background's exact count when it agrees, else the
    proven lower bound (cap1 - 1 per queue, or the rows seen when the cap is over all queues)."""
    if not capped:
        return read, Figure(EXACT, now, POLL)
    floor = read if overall else cap1 - 1
    value = bg.counts.get((queue, name), 0) if bg is not None else None
    if value is not None and bg is not None and value > floor:
        return value, Figure(STALE, bg.as_of, BACKGROUND)
    return floor, Figure(AT_LEAST, now, POLL)


def queue_stats(
    rows: Sequence[Row],
    model: QueueModel,
    cap1: int,
    now: datetime,
    bg: BackgroundCount | None = None,
    also: Iterable[str] = (),
) -> tuple[QueueStats, ...]:
    """Sum the count statements' rows per queue; each count with its Figure."""
    reads, oldest = poll_reads(rows)
    capped = over_cap(reads, model, cap1)
    overall = {FIELD.get(s, s) for s in model.capped_overall}
    queues = set(reads) | set(also)
    if bg is not None:
        queues |= {q for q, n in bg.counts if n in capped}  # queues the capped reads did not reach
    served = {FIELD.get(c, c) for c in model.count_columns()} - {COUNT_KEY, OLDEST_READY}
    out = []
    for q in sorted(queues):
        values: dict[str, int] = dict.fromkeys(FIELD.values(), 0)
        extra: dict[str, int] = {}
        figures: dict[str, Figure] = {}
        for name in sorted(served):
            read = reads.get(q, {}).get(name, 0)
            # a per-queue cap binds only the queues whose read reached it (others are exact)
            capped_here = name in capped and (name in overall or read >= cap1)
            n, f = figure(name, read, capped_here, name in overall, cap1, bg, q, now)
            figures[name] = f
            if name in values:
                values[name] = n
            else:
                extra[name] = n
        out.append(
            QueueStats(queue=q, **values, oldest_ready_age_s=oldest.get(q), figures=figures, extra=extra)
        )
    return tuple(out)


def _lease(r: Row) -> Lease:
    row = lease_row(r)
    return Lease(
        id=row.id,  # type: ignore[arg-type]  # any job id type
        queue=str(row.queue),
        locked_by=row.holder,
        attempts=row.attempts or 0,
        max_attempts=row.max_attempts or 0,
        locked_until=row.expires_at,
        seconds_left=row.seconds_left if row.seconds_left is not None else 0.0,
        holder_connected=row.liveness.value == "alive",
        holder_pid=row.holder_pid,
        payload_preview=row.payload_preview,
        liveness=row.liveness.value,
    )


def lease_lists(rows: Sequence[Row], queues: Sequence[QueueStats]) -> tuple[LeaseList, LeaseList]:
    """Running and stuck jobs, each with its true total from the counts when those are known."""
    leases = [(_lease(r), bool(r["stuck"])) for r in rows]
    running = tuple(lease for lease, stuck in leases if not stuck)
    stuck = tuple(lease for lease, is_stuck in leases if is_stuck)
    return (
        LeaseList(running, max(len(running), sum(q.running for q in queues))),
        LeaseList(stuck, max(len(stuck), sum(q.expired for q in queues))),
    )


def dead_list(rows: Sequence[Row], queues: Sequence[QueueStats]) -> DeadList:
    jobs = []
    for r in rows:
        d = dead_row(r)
        jobs.append(
            DeadJob(
                id=d.id,  # type: ignore[arg-type]
                queue=str(d.queue),
                attempts=d.attempts or 0,
                max_attempts=d.max_attempts or 0,
                finished_at=d.finished_at,
                last_error=d.error,
                payload_preview=d.payload_preview,
            )
        )
    return DeadList(tuple(jobs), max(len(jobs), sum(q.failed for q in queues)))


def unsupported(model: QueueModel) -> dict[str, str]:
    """Panel -> why this dialect cannot serve it (shown as unsupported, never as an error)."""
    out: dict[str, str] = {}
    for capability, panel in PANEL.items():
        support = model.support(capability)
        if not support.ok:
            out[panel] = str(support.reason)
    for advice in model.advice:
        for state in advice.states:
            out.setdefault(FIELD.get(state, state), f"needs an index: {advice.definition}")
    counted = model.count_columns()
    for state, name in FIELD.items():  # a count the dialect cannot give is shown as n/a, not as 0
        if state not in counted:
            out.setdefault(name, f"{model.title} does not record {state} jobs")
    return out
