"""An idle-in-transaction session pins the xmin horizon: VACUUM runs but removes nothing, and the
verdict names that session's pid (the one the sessions panel lists)."""

from __future__ import annotations

import time

import psycopg
from monitor_support import pgq_monitor

from pgq_tui.monitor import health
from pgq_tui.monitor.collect import Monitor
from pgq_tui.queue import JobQueue


def _delete_all(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DELETE FROM jobs")
        conn.execute("SELECT pg_stat_force_next_flush()")  # n_dead_tup visible now, not in 1-10 s


def _horizon_past(sql: psycopg.Connection, xid: str) -> None:
    """Wait until no other session of this database holds a snapshot taken while `xid` ran: only
    then can VACUUM remove what `xid` kept. The monitor's own latency pass is one such session: a
    pass that began before the holder rolled back pins the horizon until it ends (measured: 18-75 ms
    under load, overlapping the VACUUM that follows the rollback)."""
    for _ in range(100):
        held = sql.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND age(backend_xmin) >= age(%s::xid)",
            [xid],
        ).fetchone()
        if held is not None and held[0] == 0:
            return
        time.sleep(0.05)
    raise AssertionError(f"a session still holds a snapshot from before xid {xid} ended")


def _settled(monitor: Monitor, dead_at_least: int) -> None:
    for _ in range(50):
        if monitor.collect().table.dead_tuples >= dead_at_least:
            return
        time.sleep(0.1)
    raise AssertionError("n_dead_tup never showed the deletes")


def test_idle_in_transaction_blocks_vacuum_and_is_named(
    dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    sql.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")  # only our VACUUM runs
    queue.enqueue("q", [{}] * 2000)
    holder = psycopg.connect(dsn, application_name="forgotten-tx")
    try:
        holder.execute("SELECT txid_current()")  # idle in transaction from here on, holding its xid
        row = holder.execute(
            "SELECT backend_xid::text FROM pg_stat_activity WHERE pid = pg_backend_pid()"
        ).fetchone()
        assert row is not None
        held_xid = str(row[0])
        _delete_all(dsn)
        with pgq_monitor(dsn) as monitor:
            _settled(monitor, 2000)
            sql.execute("VACUUM jobs")
            snap = monitor.collect()
            assert snap.table.vacuum_count >= 1  # vacuum did run...
            assert snap.table.dead_tuples >= 2000  # ...and could remove none of them
            block = snap.bloat.xmin_block if snap.bloat else None
            assert block is not None, snap.bloat
            assert block.pid == holder.info.backend_pid
            assert f"pid {holder.info.backend_pid}" in block.message and "forgotten-tx" in block.message
            # the same pid is the one the sessions panel lists as idle in transaction
            assert holder.info.backend_pid in {s.pid for s in snap.sessions.idle_in_transaction}
            verdicts = [v for v in health.verdicts(snap) if "xmin horizon" in v.message]
            assert verdicts and verdicts[0].level == "crit" and verdicts[0].panel == "sessions"

            holder.rollback()  # the transaction ends: the next vacuum removes them, the verdict goes
            _horizon_past(sql, held_xid)
            sql.execute("VACUUM jobs")
            after = monitor.collect()
            assert after.table.dead_tuples < 100
            assert after.bloat is not None and after.bloat.xmin_block is None
    finally:
        holder.close()


def test_vacuum_that_removes_rows_is_not_blamed_on_anyone(
    dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    sql.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
    queue.enqueue("q", [{}] * 2000)
    _delete_all(dsn)
    with pgq_monitor(dsn) as monitor:
        _settled(monitor, 2000)
        sql.execute("VACUUM jobs")
        snap = monitor.collect()
    assert snap.bloat is not None and snap.bloat.xmin_block is None
    assert snap.table.dead_tuples < 100
