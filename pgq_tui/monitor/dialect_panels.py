"""A dialect's canonical rows -> Snapshot panels. Pure: no database, so each rule tests on its own.

Counts read at most cap1 rows per queue and state (or over all queues, for the states a dialect marks
`capped_overall`): a count that reaches cap1 is a lower bound, flagged approximate, never a guess.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
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
from pgq_tui.monitor.snapshot import DeadJob, DeadList, Lease, LeaseList, QueueStats, Rates

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


def queue_stats(
    rows: Sequence[Row], model: QueueModel, cap1: int | None, rate_queues: Mapping[str, Rates] = {}
) -> tuple[QueueStats, ...]:
    """Sum the count statements' rows per queue; flag what reached the cap."""
    values: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    extra: dict[str, dict[str, int]] = defaultdict(dict)
    approx: dict[str, set[str]] = defaultdict(set)
    oldest: dict[str, float | None] = {}
    overall: dict[str, int] = defaultdict(int)
    for r in rows:
        queue = str(r[COUNT_KEY])
        _ = values[queue]
        for key, value in r.items():
            if key == COUNT_KEY or value is None:
                continue
            if key == OLDEST_READY:
                oldest[queue] = float(value)
                continue
            n = int(value)
            name = FIELD.get(key)
            if name is not None:
                values[queue][name] += n
            else:
                extra[queue][key] = extra[queue].get(key, 0) + n
            if key in model.capped_overall:
                overall[key] += n
            elif cap1 is not None and n >= cap1:
                approx[queue].add(FIELD.get(key, key))
    for key, total in overall.items():
        if cap1 is not None and total >= cap1:
            for queue in values:
                approx[queue].add(FIELD.get(key, key))
    for queue in rate_queues:
        _ = values[queue]
    order = ("ready", "scheduled", "running", "expired", "failed", "done")
    return tuple(
        QueueStats(
            queue=q,
            ready=v["ready"],
            scheduled=v["scheduled"],
            running=v["running"],
            expired=v["expired"],
            failed=v["failed"],
            done=v["done"],
            oldest_ready_age_s=oldest.get(q),
            approximate=bool(approx.get(q)),
            approximate_fields=tuple(
                f for f in (*order, *sorted(model.extra_states)) if f in approx.get(q, ())
            ),
            extra=dict(sorted(extra.get(q, {}).items())),
        )
        for q, v in sorted(values.items())
    )


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
