"""The vacuum rules: who holds the xmin horizon, dead tuples piling up, autovacuum off or paced too
slowly, and the claims they make slower. Pure functions of a Snapshot history (see rules.py)."""

from __future__ import annotations

from pgq_tui.diagnosis.findings import CRIT, OK, WARN, Finding, Fix, Thresholds
from pgq_tui.diagnosis.history import History, held, steady
from pgq_tui.monitor.health import fmt_age, fmt_bytes, fmt_count
from pgq_tui.monitor.snapshot import Session, Snapshot, XminHolder


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


# A logical slot keeping this much WAL is a finding of its own (the disk fills; on a primary with
# max_slot_wal_keep_size the slot is lost). Less is a live consumer's ordinary lag: nothing to say.
SLOT_WAL_WARN_BYTES = 1 << 30


def _slot_wal(history: History, t: Thresholds, h: XminHolder) -> Finding | None:
    """A logical slot holds catalog_xmin (catalog rows) and WAL, never the queue's dead tuples: it is
    named for its WAL only, and its advice is about its consumer, not about vacuum."""
    if h.wal_bytes is None or h.wal_bytes < SLOT_WAL_WARN_BYTES:
        return None

    def keeps(s: Snapshot) -> bool:
        return any(
            holder_id(x) == holder_id(h) and (x.wal_bytes or 0) >= SLOT_WAL_WARN_BYTES
            for x in s.sessions.xmin_holders
        )

    seen = held(history, keeps) or 0.0
    if seen < t.min_duration_s:
        return None
    size = fmt_bytes(h.wal_bytes)
    return Finding(
        id=f"slot_wal:{h.name}",
        rule="slot_wal",
        level=WARN,
        short=f"slot {quote_literal(h.name)} keeps {size} of WAL",
        text=f"replication slot {h.name} ({h.detail}) keeps {size} of WAL: its consumer is behind or gone. "
        "A logical slot holds catalog_xmin only: it does not keep the queue's dead tuples",
        evidence=(f"{h.kind} {h.name}: {size} of WAL behind the current position",),
        fix=Fix(
            f"check the consumer of slot {quote_literal(h.name)} (pg_stat_replication); drop the slot "
            "only if nothing consumes it any more: a CDC pipeline reading it would lose its changes",
            line="check its consumer",
        ),
        held_s=seen,
    )


def xmin_holders(history: History, t: Thresholds) -> list[Finding]:
    """Each holder that can keep this database's dead tuples (XminHolder.holds_tables: a transaction
    or prepared transaction of this database, a physical slot or a standby's feedback) and has held
    the xmin horizon for `xmin_hold_s` (a slot's hold is undated: counted from the first poll that
    saw it), or sooner when a vacuum ran and could not remove the dead tuples because of it
    (bloat.xmin_block). A transaction in another database holds none of this one's rows: not named.
    A logical slot (catalog_xmin only) is named for its WAL alone (_slot_wal)."""
    snap = history[-1]
    block = snap.bloat.xmin_block if snap.bloat else None
    waits_on: dict[str, list[int]] = {}
    for b in snap.sessions.blocked:
        waits_on.setdefault(str(b.blocked_pid), []).append(b.blocking_pid)
    out = []
    for h in snap.sessions.xmin_holders:
        if h.is_pgq_top:
            continue
        if not h.holds_tables:
            wal = _slot_wal(history, t, h) if h.kind == "replication slot" else None
            out += [wal] if wal is not None else []
            continue

        def holds(s: Snapshot, h: XminHolder = h) -> bool:
            return any(holder_id(x) == holder_id(h) for x in s.sessions.xmin_holders)

        seen = held(history, holds)
        age = max(h.age_s or 0.0, seen or 0.0)
        # a vacuum that ran and removed nothing names its holder: evidence enough, however young
        blamed = block is not None and block.holder_kind == h.kind and block.holder == h.name
        young = age < max(t.xmin_hold_s, 0.0) or (h.age_s is None and age < t.min_duration_s)
        if young and not blamed:
            continue
        note, evidence = _holder_note(snap, h)
        what = (
            "vacuum cannot remove any row of any database's tables deleted or updated since"
            if h.scope == "cluster"
            else "vacuum cannot remove any row of this database's tables deleted or updated since"
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
    d = steady(history, _piling, t)
    if d is None and not (snap.bloat and snap.bloat.xmin_block):  # a seen block is dated by the vacuum
        return []
    tab = snap.table
    block = snap.bloat.xmin_block if snap.bloat else None
    # Only what can hold this table's rows is a cause (a logical slot or another database's
    # transaction never is), and "vacuum can't remove" needs a vacuum that ran and left them.
    holders = sorted(
        (h for h in snap.sessions.xmin_holders if not h.is_pgq_top and h.holds_tables),
        key=lambda h: (-h.xmin_age, -(h.age_s or 0.0)),
    )
    causes = [f"xmin:{block.holder_kind}:{block.holder}"] if block and block.holder else []
    causes += [holder_id(h) for h in holders]
    causes += ["autovacuum_off", "autovacuum_pacing"]
    stuck = block is not None
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
            + (": vacuum ran and could not remove them" if stuck else ", more than autovacuum clears"),
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

    d = steady(history, slow, t)
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

    d = steady(history, slow, t)
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
