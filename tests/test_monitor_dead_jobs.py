"""The dead-letter list: the most recent dead jobs by finished_at, read through the dead index in that
order, so its cost stays flat however many dead jobs pile up (EXPLAIN guard)."""

from __future__ import annotations

import json
from typing import Any

import psycopg
from monitor_support import pgq_monitor
from psycopg import sql as pgsql

from pgq_tui.dialects.pgq.statements import monitor_sql

ROWS = 20


def add_dead(conn: psycopg.Connection, n: int) -> None:
    """n dead jobs over 3 queues, finished_at shuffled against id (so id order is no shortcut), with
    a few that have no finished_at (a foreign writer's or a seed-schema row): they sort last."""
    conn.execute(
        "INSERT INTO jobs (queue, status, attempts, max_attempts, last_error, finished_at) "
        "SELECT 'q' || mod(g, 3), 'failed', 5, 5, 'boom', "
        "CASE WHEN mod(g, 97) <> 0 THEN now() - make_interval(secs => mod(g * 7919, %(n)s)) END "
        "FROM generate_series(1, %(n)s) g",
        {"n": n},
    )
    conn.execute("VACUUM ANALYZE jobs")


def expected_ids(conn: psycopg.Connection) -> list[int]:
    query = (
        "SELECT id FROM jobs WHERE status = 'failed' ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT %s"
    )
    return [r[0] for r in conn.execute(query, (ROWS,)).fetchall()]


def test_most_recent_dead_jobs_are_the_most_recent(dsn: str, sql: psycopg.Connection) -> None:
    add_dead(sql, 600)  # 200 per queue: ten times the rows listed
    with pgq_monitor(dsn, lease_rows=ROWS) as monitor:
        snap = monitor.collect()
    assert [d.id for d in snap.dead.rows] == expected_ids(sql)
    assert snap.dead.total == 600


def dead_jobs_sql() -> pgsql.Composed:
    text = monitor_sql("dead_jobs")
    return pgsql.SQL(text).format(jobs=pgsql.Identifier("public", "jobs"))


def _buffers(conn: psycopg.Connection) -> tuple[int, list[dict[str, Any]]]:
    query = dead_jobs_sql()
    (row,) = conn.execute(
        pgsql.SQL("EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ") + query, {"rows": ROWS}
    ).fetchall()
    plan = (row[0] if isinstance(row[0], list) else json.loads(row[0]))[0]["Plan"]
    return plan["Shared Hit Blocks"] + plan["Shared Read Blocks"], [plan]


def test_dead_jobs_cost_stays_flat(dsn: str, sql: psycopg.Connection) -> None:
    add_dead(sql, 1_000)
    small, _ = _buffers(sql)
    assert expected_ids(sql) == [r[0] for r in sql.execute(
        dead_jobs_sql(), {"rows": ROWS}
    ).fetchall()]  # fmt: skip
    add_dead(sql, 100_000)
    large, plan = _buffers(sql)
    print(f"\ndead_jobs buffers: {small} at 1,000 dead jobs, {large} at 101,000")
    # 100x the dead jobs: a few more index levels at most, never a read of every dead row.
    assert large <= 2 * small + 20, (small, large, plan)
