"""The work rules: lock blockers, queues no worker claims from, crashed workers, a growing backlog.
Pure functions of a Snapshot history (see rules.py)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from pgq_tui.diagnosis.findings import CRIT, WARN, Finding, Fix, Thresholds
from pgq_tui.diagnosis.history import History, at, held
from pgq_tui.diagnosis.vacuum import quote_literal
from pgq_tui.dialects.contract import OLDEST_READY
from pgq_tui.monitor.health import fmt_age, fmt_count
from pgq_tui.monitor.pauses import is_paused
from pgq_tui.monitor.snapshot import APPROXIMATE, EXACT, STALE, UNKNOWN, Blocker, QueueStats, Snapshot


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


def _idle(s: Snapshot, queue: str) -> QueueStats | None:
    """The queue when it has ready jobs, none running (exact, or a background scan's stale count)
    and no completion in the rates, and no live lease; else None. A paused queue is never idle in
    this sense: its workers were told not to claim (the paused rule says so)."""
    q = next((x for x in s.queues if x.queue == queue), None)
    if q is None or is_paused(q) or not q.ready or q.running or q.accuracy("running") not in (EXACT, STALE):
        return None
    if _completed(s, queue):
        return None
    if any(x.queue == queue and x.liveness == "alive" for x in s.leases.rows):
        return None
    return q


def _age_unknown(s: Snapshot, q: QueueStats) -> str | None:
    """Why the queue's oldest ready age is unknown at this poll (None: it is known, or none waits)."""
    figure = q.figures.get(OLDEST_READY)
    if figure is not None:
        return (figure.reason or "not taken") if figure.accuracy == UNKNOWN else None
    return s.unknown.get(OLDEST_READY) if q.oldest_ready_age_s is None else None  # built by hand


def stalled(history: History, t: Thresholds) -> list[Finding]:
    """A queue whose oldest ready job has waited `stalled_after_s` while none of its jobs runs and none
    completes: no live worker claims from it (or its claims wait on something). A stale age (a
    background scan's, on a table no index serves) counts as measured, with its as_of; an unknown
    age is never read as 0: the queue is reported with "latency unknown" once it has looked idle for
    `stalled_after_s` over the history."""
    snap = history[-1]
    out = []
    for q in snap.queues:
        if _idle(snap, q.queue) is None:
            continue
        done = _completed(snap, q.queue)
        rates = "no completion in the rates" if done is not None else "no rate known yet"
        unknown = _age_unknown(snap, q)
        if unknown is not None:

            def idle(s: Snapshot, name: str = q.queue) -> bool:
                return _idle(s, name) is not None

            seen = held(history, idle) or 0.0
            if seen < t.stalled_after_s:
                continue
            short = f"queue {q.queue}: nothing claimed for {fmt_age(seen)}, latency unknown"
            text = (
                f"queue {q.queue} looks stalled: for {fmt_age(seen)} none of its jobs has run or "
                f"completed while {fmt_count(q.ready)} are ready; latency unknown ({unknown})"
            )
            out.append(_stalled_finding(q, WARN, short, text, rates, seen))
            continue
        age = q.oldest_ready_age_s
        if age is None or age < t.stalled_after_s:
            continue
        figure = q.figures.get(OLDEST_READY)
        stale = ""
        if figure is not None and figure.accuracy == STALE and figure.as_of is not None:
            ago = max(0.0, (snap.server.now - figure.as_of).total_seconds())
            stale = f" (as of a background scan {fmt_age(ago)} ago)"
        level = CRIT if age >= 10 * max(t.stalled_after_s, 1.0) else WARN
        short = f"queue {q.queue}: nothing claimed for {fmt_age(age)}"
        text = (
            f"queue {q.queue} is stalled: its oldest ready job has waited {fmt_age(age)}{stale}, "
            f"none of its jobs is running and none completes: no live worker claims from it"
        )
        out.append(_stalled_finding(q, level, short, text, rates, age))
    return out


def _stalled_finding(q: QueueStats, level: str, short: str, text: str, rates: str, held_s: float) -> Finding:
    """The stalled finding, its age measured or unknown (the evidence, fix and causes are the same)."""
    return Finding(
        id=f"stalled:{q.queue}",
        rule="stalled",
        level=level,
        short=short,
        text=text,
        evidence=(f"{fmt_count(q.ready)} ready, 0 running, {rates}",),
        fix=Fix(
            f"start a worker for queue {q.queue} (or find why the workers do not claim)",
            line="start a worker",
        ),
        causes=("lock:", "crashed"),
        held_s=held_s,
    )


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
            # the dialect's rule in its few words: gone is its rule's verdict (DBOS's is pgq-top's own)
            short=f"{fmt_count(n)} stuck jobs, their workers gone"
            + (f": {snap.stuck_label}" if snap.stuck_label else ""),
            text=f"workers crashed: {fmt_count(n)} jobs are stuck ({snap.stuck_label or 'lease expired'}) "
            f"and their holders are gone, the oldest for {fmt_age(since)}",
            evidence=(f"holders gone: {shown}",) if shown else (),
            fix=Fix("hand the stuck jobs back to the queue", key="R", command="pgq-top requeue --stuck"),
            held_s=since,
        )
    ]


@dataclass(frozen=True)
class Ready:
    """The ready jobs of every queue as one figure: its value, its kind and when it was true."""

    total: int
    kind: tuple[tuple[str, str], ...]  # (queue, accuracy) per queue: two figures compare if equal
    at: float  # exact: the poll's time; stale: the background count's as_of (epoch seconds)


def _ready(s: Snapshot) -> Ready | None:
    """The ready jobs of every queue not paused (a paused queue's backlog grows by design); None
    when one queue's count is unknown (unknown is never 0), a lower bound (the cap's ≥1,000) or an
    estimate: a growth needs two figures of the same kind."""
    running = [q for q in s.queues if not is_paused(q)]
    counts = [q.ready for q in running]
    kind = tuple(sorted((q.queue, q.accuracy("ready")) for q in running))
    if None in counts or any(a not in (EXACT, STALE) for _, a in kind):
        return None
    stale = [f.as_of for q in running if (f := q.figures.get("ready")) is not None and f.accuracy == STALE]
    if None in stale:
        return None  # a stale figure that does not say when it was true: not comparable
    when = min(a.timestamp() for a in stale if a is not None) if stale else at(s)
    return Ready(sum(n for n in counts if n is not None), kind, when)


def _rate(s: Snapshot, name: str) -> float | None:
    """The total rate when it is a figure to compare with (exact, stale or a measured estimate);
    None when unknown or a lower bound (a foreign writer's share missing)."""
    value: float | None = getattr(s.throughput.total, name)
    figure = s.throughput.total.figures.get(name)
    if value is None or (figure is not None and figure.accuracy not in (EXACT, STALE, APPROXIMATE)):
        return None
    return value


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


def since(history: History, window_s: float) -> History:
    """The snapshots of the last `window_s` seconds, from the newest one at least that old when there
    is one: polls further apart than usual (a slow poll, a busy machine) still give a growth over the
    whole window, never over a part of it too short to judge (polls 0.8 s apart in a 1.5 s window
    left two snapshots 0.8 s apart, under a min_duration_s of 1 s).

    >>> from types import SimpleNamespace as S
    >>> from datetime import datetime, timezone
    >>> h = [S(server=S(now=datetime.fromtimestamp(t, timezone.utc))) for t in (0.0, 0.8, 1.6, 2.4)]
    >>> [at(s) for s in since(h, 1.5)], [at(s) for s in since(h, 1.7)], len(since(h, 9.0))
    ([0.8, 1.6, 2.4], [0.0, 0.8, 1.6, 2.4], 4)
    """
    last = at(history[-1])
    start = next((i for i in range(len(history) - 1, -1, -1) if last - at(history[i]) >= window_s), 0)
    return history[start:]


def backlog(history: History, t: Thresholds) -> list[Finding]:
    """The ready backlog growing by more than `backlog_growth_per_s` over the last `backlog_window_s`
    (since(): from the newest poll at least that old; at least `min_duration_s` of history),
    enqueues outpacing completions."""
    snap = history[-1]
    window = since(history, t.backlog_window_s)
    now = _ready(snap)
    if now is None:
        return []  # a growth that rests on an unknown count (or a lower bound) is not judged
    # like with like: the earliest figure of the window of the same kind (both exact, or both stale
    # from two background counts), never the cap's lower bound against a later exact count
    then = next((r for r in map(_ready, window) if r is not None and r.kind == now.kind), None)
    if then is None or now.at - then.at <= 0 or now.at - then.at < t.min_duration_s:
        return []
    span = now.at - then.at
    now_ready = now.total
    growth = (now_ready - then.total) / span
    if growth < max(t.backlog_growth_per_s, 1e-9):
        return []
    enq = [r for s in window if (r := _rate(s, "enqueued")) is not None]
    done = [r for s in window if (r := _rate(s, "completed")) is not None]
    e = sum(enq) / len(enq) if enq else None
    c = sum(done) / len(done) if done else None
    if e is not None and c is not None and e <= c:
        return []  # the ready count grew for another reason (scheduled jobs came due), not the load
    if e is not None and c is not None:
        # each poll's rates average its own window (Throughput.interval_s): over a span shorter than
        # that, the rates reach back further than the growth does
        drain = drain_text(now_ready, e, c, max(span, snap.throughput.interval_s))
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
                f"ready {fmt_count(then.total)} -> {fmt_count(now_ready)} in {fmt_age(span)}; {rates}",
            ),
            fix=Fix("add workers (or make the handlers faster)", line="add workers"),
            causes=("claims_slow", "stalled:", "lock:", "crashed"),
            held_s=span,
        )
    ]
