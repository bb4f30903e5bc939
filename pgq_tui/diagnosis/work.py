"""The work rules: lock blockers, queues no worker claims from, crashed workers, a growing backlog.
Pure functions of a Snapshot history (see rules.py)."""

from __future__ import annotations

from collections.abc import Sequence

from pgq_tui.diagnosis.findings import CRIT, WARN, Finding, Fix, Thresholds
from pgq_tui.diagnosis.history import History, at, held
from pgq_tui.diagnosis.vacuum import quote_literal
from pgq_tui.monitor.health import fmt_age, fmt_count
from pgq_tui.monitor.snapshot import Blocker, Snapshot


# -- locks --------------------------------------------------------------------------------------------
def _heads(blocked: Sequence[Blocker]) -> dict[int, list[Blocker]]:
    """Blockers that wait on nobody themselves (the head of each wait queue), with who waits on them;
    in a cycle every blocker is a head."""
    waiting = {b.blocked_pid for b in blocked}
    heads: dict[int, list[Blocker]] = {}
    for b in blocked:
        if b.blocking_pid not in waiting:
            heads.setdefault(b.blocking_pid, []).append(b)
    if not heads:
        for b in blocked:
            heads.setdefault(b.blocking_pid, []).append(b)
    return heads


def locks(history: History, t: Thresholds) -> list[Finding]:
    """A session holding a lock others have waited on for `lock_wait_s` (the wait is dated by the
    server: pg_locks.waitstart)."""
    snap = history[-1]
    out = []
    for pid, waits in _heads(snap.sessions.blocked).items():

        def blocks(s: Snapshot, pid: int = pid) -> bool:
            return any(b.blocking_pid == pid for b in s.sessions.blocked)

        seen = held(history, blocks) or 0.0
        wait = max(max((b.blocked_wait_s or 0.0) for b in waits), seen)
        if wait < t.lock_wait_s:
            continue
        first = waits[0]
        parts = [p for p in (first.blocking_state, first.blocking_application) if p]
        if first.blocking_application:
            parts[-1] = f"app {quote_literal(first.blocking_application)}"
        note = f"({', '.join(parts)})" if parts else ""
        n = len({b.blocked_pid for b in waits})
        evidence = [f"pid {pid} is running: {first.blocking_query}"] if first.blocking_query else []
        evidence += [
            f"pid {b.blocked_pid} waits {fmt_age(b.blocked_wait_s)}: {b.blocked_query}" for b in waits
        ]
        out.append(
            Finding(
                id=f"lock:{pid}",
                rule="lock",
                level=CRIT if wait >= 6 * max(t.lock_wait_s, 1.0) else WARN,
                short=f"{n} waiting {fmt_age(wait)} on a lock held by pid {pid}",
                text=f"pid {pid} {note} holds a lock {n} session(s) have waited on for {fmt_age(wait)}",
                evidence=tuple(evidence),
                fix=Fix(
                    f"terminate pid {pid} (or cancel its query: C)",
                    key="K",
                    sql=f"SELECT pg_terminate_backend({pid});",
                ),
                held_s=wait,
                note=note,
                pid=pid,
            )
        )
    return out


# -- workers ------------------------------------------------------------------------------------------
def _completed(s: Snapshot, queue: str) -> float | None:
    r = s.throughput.per_queue.get(queue)
    return r.completed if r is not None else None


def stalled(history: History, t: Thresholds) -> list[Finding]:
    """A queue whose oldest ready job has waited `stalled_after_s` while none of its jobs runs and none
    completes: no live worker claims from it (or its claims wait on something)."""
    snap = history[-1]
    out = []
    for q in snap.queues:
        age = q.oldest_ready_age_s
        if (
            not q.ready
            or age is None
            or age < t.stalled_after_s
            or q.running
            or q.accuracy("running") != "exact"
        ):
            continue
        done = _completed(snap, q.queue)
        if done:
            continue
        alive = [x for x in snap.leases.rows if x.queue == q.queue and x.liveness == "alive"]
        if alive:
            continue
        rates = "no completion in the rates" if done is not None else "no rate known yet"
        out.append(
            Finding(
                id=f"stalled:{q.queue}",
                rule="stalled",
                level=CRIT if age >= 10 * max(t.stalled_after_s, 1.0) else WARN,
                short=f"queue {q.queue}: nothing claimed for {fmt_age(age)}",
                text=f"queue {q.queue} is stalled: its oldest ready job has waited {fmt_age(age)}, none of "
                f"its jobs is running and none completes: no live worker claims from it",
                evidence=(f"{fmt_count(q.ready)} ready, 0 running, {rates}",),
                fix=Fix(
                    f"start a worker for queue {q.queue} (or find why the workers do not claim)",
                    line="start a worker",
                ),
                causes=("lock:", "crashed"),
                held_s=age,
            )
        )
    return out


def crashed(history: History, t: Thresholds) -> list[Finding]:
    """Stuck leases whose holders are known to be gone (a dialect that cannot know says "unknown":
    never counted). Dated by the lease's expiry."""
    snap = history[-1]
    gone = [
        x for x in snap.stuck.rows if (x.liveness == "gone") or (not x.liveness and not x.holder_connected)
    ]
    if not gone:
        return []
    since = max(-x.seconds_left for x in gone)
    holders = sorted({x.locked_by for x in gone if x.locked_by})
    shown = ", ".join(holders[:3]) + (f" (+{len(holders) - 3})" if len(holders) > 3 else "")
    total = snap.stuck.total if snap.stuck.total is not None else len(gone)
    n = min(len(gone), total)
    return [
        Finding(
            id="crashed",
            rule="crashed",
            level=CRIT,
            short=f"{fmt_count(n)} stuck jobs, their workers gone",
            text=f"workers crashed: {fmt_count(n)} jobs are stuck ({snap.stuck_label or 'lease expired'}) "
            f"and their holders are gone, the oldest for {fmt_age(since)}",
            evidence=(f"holders gone: {shown}",) if shown else (),
            fix=Fix("hand the stuck jobs back to the queue", key="R", command="pgq-top requeue --stuck"),
            held_s=since,
        )
    ]


def _ready(s: Snapshot) -> int | None:
    """The ready jobs of every queue; None when one queue's count is unknown (unknown is never 0)."""
    counts = [q.ready for q in s.queues]
    return None if None in counts else sum(n for n in counts if n is not None)


def drain_text(backlog: int, enqueued: float, completed: float, window_s: float) -> str:
    """The drain estimate in words.

    >>> drain_text(12_000, 10.0, 60.0, 300)
    "at the last 5m00s' rates the 12k backlog clears in 4m00s"
    >>> drain_text(12_000, 40.0, 10.0, 300)
    "at the last 5m00s' rates the 12k backlog grows by 30/s"
    """
    net = completed - enqueued
    where = f"at the last {fmt_age(window_s)}' rates the {fmt_count(backlog)} backlog"
    if net > 0:
        return f"{where} clears in {fmt_age(backlog / net)}"
    return f"{where} grows by {fmt_count(-net)}/s"


def backlog(history: History, t: Thresholds) -> list[Finding]:
    """The ready backlog growing by more than `backlog_growth_per_s` over the last `backlog_window_s`
    (at least `min_duration_s` of history), enqueues outpacing completions."""
    snap = history[-1]
    window = [s for s in history if at(snap) - at(s) <= t.backlog_window_s]
    first = window[0]
    span = at(snap) - at(first)
    if span <= 0 or span < t.min_duration_s:
        return []
    now_ready, first_ready = _ready(snap), _ready(first)
    if now_ready is None or first_ready is None:
        return []  # a growth that rests on an unknown count is not judged
    growth = (now_ready - first_ready) / span
    if growth < max(t.backlog_growth_per_s, 1e-9):
        return []
    enq = [s.throughput.total.enqueued for s in window if s.throughput.total.enqueued is not None]
    done = [s.throughput.total.completed for s in window if s.throughput.total.completed is not None]
    e = sum(enq) / len(enq) if enq else None
    c = sum(done) / len(done) if done else None
    if e is not None and c is not None and e <= c:
        return []  # the ready count grew for another reason (scheduled jobs came due), not the load
    if e is not None and c is not None:
        drain = drain_text(now_ready, e, c, span)
        rates = f"enqueued {e:.1f}/s, completed {c:.1f}/s"
    else:
        drain = f"the {fmt_count(now_ready)} backlog grows by {growth:.1f}/s"
        rates = "rates unknown"
    return [
        Finding(
            id="backlog",
            rule="backlog",
            level=WARN,
            short=f"backlog {fmt_count(now_ready)} grows {growth:.0f}/s",
            text=f"the backlog grows: enqueues outpace completions; {drain}",
            evidence=(
                f"ready {fmt_count(_ready(first))} -> {fmt_count(now_ready)} in {fmt_age(span)}; {rates}",
            ),
            fix=Fix("add workers (or make the handlers faster)", line="add workers"),
            causes=("claims_slow", "stalled:", "lock:", "crashed"),
            held_s=span,
        )
    ]
