"""The claim-cost probe: what one claim costs right now, measured without claiming anything.

It runs the dialect's claim candidate scan (the SELECT inside the claim, `LIMIT 1`, no `FOR UPDATE`)
under `EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON)`, inside a `READ ONLY` transaction with
its own short statement timeout, all in one round trip. It locks no row and writes nothing (the
server refuses writes in a read-only transaction), so a claim never waits for it; like any reader
it takes only ACCESS SHARE on the table and its indexes. The buffers it touched are the pages one
claim walks before it finds its row: 5-10 on a healthy queue, hundreds once dead index entries pile
up in front of the ready jobs. That rises long before the throughput falls: a leading signal.

`cost_verdict()` and `buffers_per_dead()` are pure, over the recorded ProbePoints.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from pgq_tui.monitor.bloat import ProbePoint

OK, WARN, CRIT = "ok", "warn", "crit"

EXPLAIN = sql.SQL("EXPLAIN (ANALYZE, BUFFERS, TIMING OFF, FORMAT JSON) ")
# A probe is a plain SELECT: a locking clause would make claims wait on it, a data-modifying CTE
# would write (the READ ONLY transaction refuses that anyway; this catches it before the server).
_FORBIDDEN = re.compile(
    r"\bFOR\s+(NO\s+KEY\s+)?(UPDATE|SHARE|KEY\s+SHARE)\b|\b(INSERT|UPDATE|DELETE|MERGE)\b", re.I
)


def check_probe_text(text: str) -> None:
    """Refuse a probe statement that could lock or write.

    >>> check_probe_text("SELECT id FROM jobs WHERE status = 'pending' LIMIT 1")
    >>> check_probe_text("SELECT id FROM jobs LIMIT 1 FOR UPDATE SKIP LOCKED")
    Traceback (most recent call last):
    ValueError: a claim probe must be a plain SELECT (no locking clause, no writes)
    """
    body = re.sub(r"--[^\n]*", "", text)
    if not body.lstrip().upper().startswith(("SELECT", "WITH")) or _FORBIDDEN.search(body):
        raise ValueError("a claim probe must be a plain SELECT (no locking clause, no writes)")


def parse_explain(doc: Any) -> tuple[int, int, float, bool]:
    """(buffers, read, execution ms, found a row) from EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON).

    >>> parse_explain([{"Plan": {"Shared Hit Blocks": 7, "Shared Read Blocks": 2, "Actual Rows": 1.0},
    ...                 "Execution Time": 0.05}])
    (9, 2, 0.05, True)
    """
    top = doc[0] if isinstance(doc, list) else doc
    plan = top["Plan"]
    read = int(plan.get("Shared Read Blocks", 0))
    buffers = int(plan.get("Shared Hit Blocks", 0)) + read
    return buffers, read, float(top.get("Execution Time", 0.0)), float(plan.get("Actual Rows", 0)) > 0


def run_probe(
    conn: psycopg.Connection,
    statement: sql.Composable,
    params: Mapping[str, Any],
    *,
    at: datetime,
    dead_tuples: int,
    timeout_ms: int = 1000,
) -> ProbePoint:
    """One probe on an autocommit connection, in one round trip (a pipeline): its own READ ONLY
    transaction with a LOCAL statement timeout. On an error the transaction is rolled back."""
    check_probe_text(statement.as_string(conn))
    try:
        with conn.pipeline():
            conn.execute("BEGIN READ ONLY")
            conn.execute("SELECT set_config('statement_timeout', %s, true)", (str(timeout_ms),))
            cur = conn.execute(EXPLAIN + statement, params)
            conn.execute("COMMIT")
    except psycopg.Error:
        if not (conn.closed or conn.broken) and conn.info.transaction_status != TransactionStatus.IDLE:
            conn.execute("ROLLBACK")
        raise
    row = cur.fetchone()
    assert row is not None
    buffers, read, ms, found = parse_explain(row[0])
    return ProbePoint(at=at, buffers=buffers, read=read, ms=ms, found=found, dead_tuples=dead_tuples)


def floor_of(points: Sequence[ProbePoint]) -> int | None:
    """The recent floor: the cheapest claim seen in the window (never below 1 buffer)."""
    return max(1, min(p.buffers for p in points)) if points else None


def cost_verdict(
    points: Sequence[ProbePoint], multiple: float = 4.0, crit_multiple: float = 16.0, min_excess: int = 24
) -> tuple[str, int | None, float | None, str]:
    """(level, floor, ratio, message): warn when the latest claim walks `multiple` times its recent
    floor and at least `min_excess` buffers more (a 2 -> 9 jitter on a tiny table is no signal),
    crit at `crit_multiple`.

    >>> at = datetime(2026, 1, 1)
    >>> pts = [ProbePoint(at, b, 0, 0.1, True, 0) for b in (6, 7, 6, 40)]
    >>> cost_verdict(pts)[:3]
    ('warn', 6, 6.666666666666667)
    >>> cost_verdict(pts[:3])[0], cost_verdict([*pts[:3], ProbePoint(at, 700, 0, 3.0, True, 0)])[0]
    ('ok', 'crit')
    """
    if not points:
        return OK, None, None, "claim cost: no probe yet"
    floor = floor_of(points)
    assert floor is not None
    latest = points[-1]
    ratio = latest.buffers / floor
    level = OK
    if latest.buffers - floor >= min_excess:
        level = CRIT if ratio >= crit_multiple else (WARN if ratio >= multiple else OK)
    what = f"a claim walks {latest.buffers} buffers ({ratio:.1f}x its recent floor of {floor})"
    if level == OK:
        return OK, floor, ratio, f"claim cost: {what}"
    return (
        level,
        floor,
        ratio,
        (
            f"claims are getting slower: {what}; dead index entries in front of the ready jobs "
            "(see pacing: autovacuum is behind)"
        ),
    )


def buffers_per_dead(points: Sequence[ProbePoint]) -> float | None:
    """Least-squares slope of buffers against n_dead_tup: what each dead tuple adds to a claim.
    None without enough spread in dead tuples to tell.

    >>> at = datetime(2026, 1, 1)
    >>> pts = [ProbePoint(at, 6 + d // 500, 0, 0.1, True, d) for d in range(0, 100_000, 5000)]
    >>> round(buffers_per_dead(pts), 4)
    0.002
    """
    if len(points) < 3:
        return None
    xs = [float(p.dead_tuples) for p in points]
    ys = [float(p.buffers) for p in points]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    if max(xs) - min(xs) < 1000 or sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys, strict=True)) / sxx
    return slope if slope > 0 else None
