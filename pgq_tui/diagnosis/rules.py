"""The diagnosis rules: pure functions from a Snapshot history (oldest first, the latest last) to
Findings. No database, no clock: the times are the snapshots' own (`server.now`), so a recorded
history gives the same answer as the live one.

Signal from noise: evidence the server dates itself (a transaction's start, a lock wait's start, a
lease's expiry, the oldest ready job's age) counts from that date, against its own threshold; any
other evidence (a slow probe, a growing backlog, a dead-tuple count) must have held on every poll for
`Thresholds.min_duration_s` before it becomes a finding, so one slow poll raises nothing.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from pgq_tui.diagnosis.findings import CRIT, DEFAULTS, OK, WARN, Finding, Fix, Thresholds
from pgq_tui.monitor.health import fmt_age, fmt_count
from pgq_tui.monitor.snapshot import Blocker, Session, Snapshot, XminHolder

History = Sequence[Snapshot]
Rule = Callable[[History, Thresholds], list[Finding]]


# -- time -------------------------------------------------------------------------------------------
def _t(s: Snapshot) -> float:
    return s.server.now.timestamp()


def held(history: History, holds: Callable[[Snapshot], bool]) -> float | None:
    """Seconds `holds` has been true on every snapshot up to the latest (0.0: only the latest); None
    when it is false on the latest."""
    if not history or not holds(history[-1]):
        return None
    start = history[-1]
    for s in reversed(history[:-1]):
        if not holds(s):
            break
        start = s
    return _t(history[-1]) - _t(start)


def _steady(history: History, holds: Callable[[Snapshot], bool], t: Thresholds) -> float | None:
    """Held long enough to be signal (undated evidence): its duration, else None."""
    d = held(history, holds)
    return d if d is not None and d >= t.min_duration_s else None


# -- display quoting (the SQL of a fix is shown for a person to run; pgq-top never executes it) ------
def quote_literal(text: str) -> str:
    """
    >>> quote_literal("it's")
    "'it''s'"
    """
    return "'" + text.replace("'", "''") + "'"


def quote_relation(relation: str) -> str:
    """schema.table as a quoted name (split at the first dot, as Snapshot.table writes it).

    >>> print(quote_relation("public.jobs"), quote_relation('my"q.jobs'))
    "public"."jobs" "my""q"."jobs"
    """
    return ".".join('"' + p.replace('"', '""') + '"' for p in relation.split(".", 1))


# -- the xmin horizon ---------------------------------------------------------------------------------
def holder_id(h: XminHolder) -> str:
    return f"xmin:{h.kind}:{h.name}"


def _blocks_tables(h: XminHolder) -> bool:
    """A logical slot holds only catalog_xmin: it keeps WAL and catalog rows, not the queue's dead
    tuples. Every other holder holds back vacuum on every table."""
    return h.kind != "replication slot" or re.search(r"(^| )xmin age ", h.detail or "") is not None


def _session(snap: Snapshot, pid: int) -> Session | None:
    return next((s for s in snap.sessions.idle_in_transaction if s.pid == pid), None)


def _who(h: XminHolder) -> str:
    if h.kind == "backend":
        return f"pid {h.name}"
    if h.kind == "prepared transaction":
        return f"prepared xact {quote_literal(h.name)}"
    return f"slot {quote_literal(h.name)}"


def _holder_note(snap: Snapshot, h: XminHolder) -> tuple[str, tuple[str, ...]]:
    """The "(idle in tx, app 'report', 10.0.0.5)" note, and evidence lines about the holder."""
    if h.kind == "backend":
        s = _session(snap, int(h.name))
        if s is not None:
            parts = ["idle in tx"]
            if s.application:
                parts.append(f"app {quote_literal(s.application)}")
            if s.client:
                parts.append(s.client)
            evidence = (f"its last query: {s.query}",) if s.query else ()
            return f"({', '.join(parts)})", evidence
    return (f"({h.detail})" if h.detail else ""), ()


def _holder_fix(h: XminHolder) -> Fix:
    if h.kind == "backend":
        return Fix(f"terminate pid {h.name}", key="K", sql=f"SELECT pg_terminate_backend({int(h.name)});")
    if h.kind == "prepared transaction":
        return Fix(
            f"roll back prepared transaction {quote_literal(h.name)} (in its database: {h.detail})",
            sql=f"ROLLBACK PREPARED {quote_literal(h.name)};",
            line="ROLLBACK PREPARED",
        )
    return Fix(
        f"drop replication slot {quote_literal(h.name)} (if nothing consumes it any more)",
        sql=f"SELECT pg_drop_replication_slot({quote_literal(h.name)});",
        line="drop the slot",
    )


def xmin_holders(history: History, t: Thresholds) -> list[Finding]:
    """Each transaction, prepared transaction or replication slot that has held the xmin horizon for
    `xmin_hold_s` (a slot's hold is undated: counted from the first poll that saw it), or sooner when
    a vacuum ran and could not remove the dead tuples because of it (bloat.xmin_block)."""
    snap = history[-1]
    block = snap.bloat.xmin_block if snap.bloat else None
    waits_on: dict[str, list[int]] = {}
    for b in snap.sessions.blocked:
        waits_on.setdefault(str(b.blocked_pid), []).append(b.blocking_pid)
    out = []
    for h in snap.sessions.xmin_holders:
        if h.is_pgq_top:
            continue
        seen = held(
            history, lambda s, h=h: any(holder_id(x) == holder_id(h) for x in s.sessions.xmin_holders)
        )
        age = max(h.age_s or 0.0, seen or 0.0)
        # a vacuum that ran and removed nothing names its holder: evidence enough, however young
        blamed = block is not None and block.holder_kind == h.kind and block.holder == h.name
        young = age < max(t.xmin_hold_s, 0.0) or (h.age_s is None and age < t.min_duration_s)
        if young and not blamed:
            continue
        note, evidence = _holder_note(snap, h)
        what = (
            "vacuum cannot remove any row of any table deleted or updated since"
            if _blocks_tables(h)
            else "it keeps WAL and catalog rows (catalog_xmin), not the queue's dead tuples"
        )
        evidence = (
            f"{h.kind} {h.name}: {fmt_count(h.xmin_age)} transactions behind the current one",
            *((block.message,) if blamed and block is not None else ()),
            *evidence,
        )
        out.append(
            Finding(
                id=holder_id(h),
                rule="xmin_holder",
                level=CRIT if blamed or age >= 10 * max(t.xmin_hold_s, 1.0) else WARN,
                short=f"xmin held {fmt_age(age)} by {_who(h)}",
                text=f"the xmin horizon has been held for {fmt_age(age)} by {h.kind} {h.name} {note}: {what}",
                evidence=evidence,
                fix=_holder_fix(h),
                # a session waiting on a lock holds its snapshot because of that lock
                causes=tuple(f"lock:{pid}" for pid in waits_on.get(h.name, ())),
                held_s=age,
                note=note,
                pid=int(h.name) if h.kind == "backend" else None,
            )
        )
    return out


# -- dead tuples and autovacuum -------------------------------------------------------------------------
def _piling(s: Snapshot) -> bool:
    tab = s.table
    blocked = s.bloat is not None and s.bloat.xmin_block is not None
    return blocked or (tab.dead_tuples >= 1000 and tab.dead_tuples > 2 * tab.vacuum_threshold)


def dead_tuples(history: History, t: Thresholds) -> list[Finding]:
    """Dead tuples piling up in the queue table (twice the autovacuum threshold, or a vacuum that
    removed almost none), for as long as `min_duration_s`. It needs a cause: an xmin holder, autovacuum
    off or too slowly paced; without one it is just the churn between two vacuums, and says nothing."""
    snap = history[-1]
    d = _steady(history, _piling, t)
    if d is None and not (snap.bloat and snap.bloat.xmin_block):  # a seen block is dated by the vacuum
        return []
    tab = snap.table
    block = snap.bloat.xmin_block if snap.bloat else None
    holders = sorted(
        (h for h in snap.sessions.xmin_holders if not h.is_pgq_top and _blocks_tables(h)),
        key=lambda h: (-h.xmin_age, -(h.age_s or 0.0)),
    )
    causes = [f"xmin:{block.holder_kind}:{block.holder}"] if block and block.holder else []
    causes += [holder_id(h) for h in holders]
    causes += ["autovacuum_off", "autovacuum_pacing"]
    stuck = block is not None or bool(holders)
    n = fmt_count(tab.dead_tuples)
    short = f"{n} dead tuples vacuum can't remove" if stuck else f"{n} dead tuples piling up"
    evidence = [
        f"n_dead_tup {tab.dead_tuples} in {tab.table}, autovacuum threshold {round(tab.vacuum_threshold)}",
    ]
    if block is not None:
        evidence.append(block.message)
    return [
        Finding(
            id="dead_tuples",
            rule="dead_tuples",
            level=CRIT if block is not None or tab.dead_tuples > 20 * max(tab.vacuum_threshold, 1) else WARN,
            short=short,
            text=f"{n} dead tuples in {tab.table}"
            + (": vacuum cannot remove them" if stuck else ", more than autovacuum clears"),
            evidence=tuple(evidence),
            causes=tuple(causes),
            held_s=d or 0.0,
            needs_cause=True,
        )
    ]


def autovacuum_off(history: History, t: Thresholds) -> list[Finding]:
    """Autovacuum disabled on the queue table (a setting: one poll is enough)."""
    tab = history[-1].table
    if tab.autovacuum_enabled:
        return []
    rel = quote_relation(tab.table)
    return [
        Finding(
            id="autovacuum_off",
            rule="autovacuum_off",
            level=WARN,
            short=f"autovacuum off on {tab.table}",
            text=f"autovacuum is disabled on {tab.table}: its dead tuples grow until someone runs VACUUM",
            evidence=(f"{tab.table} reloptions: autovacuum_enabled = false",),
            fix=Fix(
                f"enable autovacuum on {tab.table}",
                sql=f"ALTER TABLE {rel} RESET (autovacuum_enabled);",
                line="RESET autovacuum_enabled",
            ),
        )
    ]


def autovacuum_pacing(history: History, t: Thresholds) -> list[Finding]:
    """The pacing verdict (monitor/pacing.py) not OK for `min_duration_s`: autovacuum too slow for
    the churn. Disabled autovacuum is `autovacuum_off`'s."""

    def slow(s: Snapshot) -> bool:
        p = s.bloat.pacing if s.bloat else None
        return p is not None and p.level != OK and p.limiter != "disabled"

    d = _steady(history, slow, t)
    p = history[-1].bloat.pacing if history[-1].bloat else None
    if d is None or p is None:
        return []
    return [
        Finding(
            id="autovacuum_pacing",
            rule="autovacuum_pacing",
            level=p.level,
            short=f"autovacuum too slow for the churn ({p.limiter})",
            text=f"autovacuum is paced too slowly for the churn: {p.message}",
            evidence=(
                f"{fmt_count(round(p.dead_per_s or 0))} dead tuples/s, "
                f"threshold {fmt_count(round(p.threshold))}",
            ),
            fix=Fix("tune autovacuum for this table (the advisor shows the settings)", key="A"),
            held_s=d,
        )
    ]


def claims_slow(history: History, t: Thresholds) -> list[Finding]:
    """The claim-cost probe above its floor (monitor/probe.py) for `min_duration_s`."""

    def slow(s: Snapshot) -> bool:
        return s.bloat is not None and s.bloat.probe.level != OK

    d = _steady(history, slow, t)
    probe = history[-1].bloat.probe if history[-1].bloat else None
    if d is None or probe is None:
        return []
    ratio = f"{probe.ratio:.0f}x" if probe.ratio is not None else "much"
    latest = probe.latest
    return [
        Finding(
            id="claims_slow",
            rule="claims_slow",
            level=probe.level,
            short=f"claims {ratio} slower",
            text=probe.message,
            evidence=(
                f"a claim walks {latest.buffers if latest else '?'} buffers, floor {probe.floor}"
                f" (queue {probe.queue})",
            ),
            fix=Fix("see what autovacuum can do (the advisor)", key="A"),
            causes=("dead_tuples", "lock:"),
            held_s=d,
        )
    ]


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
        seen = held(history, lambda s, pid=pid: any(b.blocking_pid == pid for b in s.sessions.blocked)) or 0.0
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
    """A queue whose oldest ready job has waited `ready_age_s` while none of its jobs runs and none
    completes: no live worker claims from it (or its claims wait on something)."""
    snap = history[-1]
    out = []
    for q in snap.queues:
        age = q.oldest_ready_age_s
        if not q.ready or age is None or age < t.ready_age_s or q.running or q.accuracy("running") != "exact":
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
                level=CRIT if age >= 10 * max(t.ready_age_s, 1.0) else WARN,
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
        x for x in snap.expired.rows if (x.liveness == "gone") or (not x.liveness and not x.holder_connected)
    ]
    if not gone:
        return []
    since = max(-x.seconds_left for x in gone)
    holders = sorted({x.locked_by for x in gone if x.locked_by})
    shown = ", ".join(holders[:3]) + (f" (+{len(holders) - 3})" if len(holders) > 3 else "")
    n = len(gone) if len(gone) < snap.expired.total else snap.expired.total
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


def _ready(s: Snapshot) -> int:
    return sum(q.ready for q in s.queues)


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
    window = [s for s in history if _t(snap) - _t(s) <= t.backlog_window_s]
    first = window[0]
    span = _t(snap) - _t(first)
    if span <= 0 or span < t.min_duration_s:
        return []
    growth = (_ready(snap) - _ready(first)) / span
    if growth < max(t.backlog_growth_per_s, 1e-9):
        return []
    enq = [s.throughput.total.enqueued for s in window if s.throughput.total.enqueued is not None]
    done = [s.throughput.total.completed for s in window if s.throughput.total.completed is not None]
    e = sum(enq) / len(enq) if enq else None
    c = sum(done) / len(done) if done else None
    if e is not None and c is not None and e <= c:
        return []  # the ready count grew for another reason (scheduled jobs came due), not the load
    if e is not None and c is not None:
        drain = drain_text(_ready(snap), e, c, span)
        rates = f"enqueued {e:.1f}/s, completed {c:.1f}/s"
    else:
        drain = f"the {fmt_count(_ready(snap))} backlog grows by {growth:.1f}/s"
        rates = "rates unknown"
    return [
        Finding(
            id="backlog",
            rule="backlog",
            level=WARN,
            short=f"backlog {fmt_count(_ready(snap))} grows {growth:.0f}/s",
            text=f"the backlog grows: enqueues outpace completions; {drain}",
            evidence=(
                f"ready {fmt_count(_ready(first))} -> {fmt_count(_ready(snap))} in {fmt_age(span)}; {rates}",
            ),
            fix=Fix("add workers (or make the handlers faster)", line="add workers"),
            causes=("claims_slow", "stalled:", "lock:", "crashed"),
            held_s=span,
        )
    ]


RULES: tuple[Rule, ...] = (
    xmin_holders,
    dead_tuples,
    autovacuum_off,
    autovacuum_pacing,
    claims_slow,
    locks,
    stalled,
    crashed,
    backlog,
)


def findings(history: History, t: Thresholds = DEFAULTS) -> list[Finding]:
    """Every rule over the history (oldest first); nothing for an empty one."""
    snaps = tuple(history)  # a deque (the dashboard's) does not slice
    if not snaps:
        return []
    return [f for rule in RULES for f in rule(snaps, t)]
