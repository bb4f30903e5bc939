"""Wake on NOTIFY: idle workers start jobs when notified, not by polling; scheduled jobs start when
due; a lost notification does not strand a job; a burst of jobs or notifications is no claim storm.

Every pool here has a 60 s safety poll, so a job that starts within seconds was started by a
notification (or a due time), never by the poll.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone

import psycopg
from psycopg import sql as pgsql

from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

POLL = 60.0


def config(dsn: str, **kw: object) -> WorkerConfig:
    base: dict = {"conninfo": dsn, "queues": ("q",), "poll": POLL, "reconnect_max": 0.2}
    return WorkerConfig(**{**base, **kw})


@contextmanager
def idle_pool(cfg: WorkerConfig, sql: psycopg.Connection, workers: int = 1) -> Iterator[WorkerPool]:
    pool = WorkerPool(cfg, concurrency=workers, reap_interval=0).start()
    try:
        wait_for(lambda: listeners(sql) == workers, 20, "workers never started listening")
        wait_for(lambda: pool.counts()["claims"] >= workers, 10, "workers never made their first claims")
        # A worker claims once at start and once more when its listener has connected, unless the
        # listener connected before that first claim (then one claim covers both). Counting claims
        # cannot tell the two apart, so wait until no worker has claimed for a while: with a 60 s
        # safety poll and nothing enqueued, that means every worker is idle.
        quiet(pool, 0.5, 20)
        yield pool
    finally:
        pool.stop(timeout=10)


def quiet(pool: WorkerPool, seconds: float, limit: float) -> None:
    """Return once no claim was made for `seconds` (fail after `limit` seconds)."""
    started = time.monotonic()
    last, since = pool.counts()["claims"], time.monotonic()
    while time.monotonic() - since < seconds:
        assert time.monotonic() - started < limit, "the workers never went idle"
        time.sleep(0.05)
        now = pool.counts()["claims"]
        if now != last:
            last, since = now, time.monotonic()


def listeners(sql: psycopg.Connection) -> int:
    return sql.execute(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND query LIKE 'LISTEN %%'"
    ).fetchone()[0]


def wait_for(check: Callable[[], bool], seconds: float, message: str) -> float:
    started = time.monotonic()
    while not check():
        assert time.monotonic() - started < seconds, message
        time.sleep(0.02)
    return time.monotonic() - started


def left(sql: psycopg.Connection) -> int:
    return sql.execute("SELECT count(*) FROM jobs").fetchone()[0]


def test_notify_is_delivered_only_when_the_enqueue_commits(queue: JobQueue, sql: psycopg.Connection) -> None:
    # (What is notified, and when not, is tests/test_queue_core.py, on both APIs.)
    sql.execute(pgsql.SQL("LISTEN {}").format(pgsql.Identifier(queue.channel)))
    with queue.conn.transaction():
        queue.enqueue("q", [{}])
        assert list(sql.notifies(timeout=0.2)) == [], "notified before commit"
    assert [n.payload for n in sql.notifies(timeout=0.3)] == ["q"]


def test_idle_worker_starts_a_job_on_notify_without_polling(
    crash_env: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    with idle_pool(config(crash_env, handler="crash_handler:record"), sql) as pool:
        before = pool.counts()["claims"]
        time.sleep(1.0)
        assert pool.counts()["claims"] == before, "an idle worker claimed without a notification"
        queue.enqueue("q", [{"ms": 1}])
        wait_for(lambda: left(sql) == 0, 5, "a notified worker did not run the job")
        (waited,) = sql.execute(
            "SELECT extract(epoch FROM r.started_at - s.bucket) FROM handler_runs r, jobs_stats s"
        ).fetchone()
        assert waited < 5, waited


def test_scheduled_job_starts_when_due_without_a_notify(
    crash_env: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    # Scheduled an hour ahead, so however long the worker process takes to start, the job cannot be
    # claimed before the worker is idle. Then it is moved to 3 s ahead and the worker woken once, as
    # a change to the queue would: that claim finds nothing due, the worker reads when the job falls
    # due and sleeps until then. Nothing notifies it again: only its timer starts the job.
    (job,) = queue.enqueue("q", [{"ms": 1}], run_at=datetime.now(timezone.utc) + timedelta(hours=1))
    with idle_pool(config(crash_env, handler="crash_handler:record"), sql) as pool:
        claims = pool.counts()["claims"]
        (due,) = sql.execute(
            "UPDATE jobs SET run_at = clock_timestamp() + interval '3 s' WHERE id = %s RETURNING run_at",
            (job,),
        ).fetchone()
        sql.execute("SELECT pg_notify(%s, 'q')", (queue.channel,))
        wait_for(lambda: pool.counts()["claims"] > claims, 20, "the woken worker never claimed")
        wait_for(lambda: left(sql) == 0, 60, "a scheduled job was not started when due")
        wait_for(lambda: pool.counts()["completed"] == 1, 5, "the completion was not counted")  # (above)
    ((started,),) = sql.execute("SELECT started_at FROM handler_runs").fetchall()
    assert due <= started < due + timedelta(seconds=1), (due, started)


def test_notification_lost_while_the_listener_reconnects_strands_nothing(
    server_dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    dbname = pgsql.Identifier(sql.info.dbname)
    admin = psycopg.connect(server_dsn, autocommit=True)
    queue.seconds_until_due(["q"])  # connect the producer now: new connections will be refused
    with admin, idle_pool(config(queue.conninfo), sql) as pool:
        # The listener loses its connection and can't get a new one: the notification is lost.
        admin.execute(pgsql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS false").format(dbname))
        try:
            sql.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
                " WHERE datname = current_database() AND query LIKE 'LISTEN %%'"
            )
            wait_for(lambda: listeners(sql) == 0, 5, "the listener was not disconnected")
            queue.enqueue("q", [{}])  # its NOTIFY reaches nobody
            time.sleep(1.0)
            assert left(sql) == 1, "claimed while the listener was down (so nothing was tested)"
        finally:
            admin.execute(pgsql.SQL("ALTER DATABASE {} ALLOW_CONNECTIONS true").format(dbname))
        # Reconnected, it claims once: the job runs long before the 60 s safety poll.
        wait_for(lambda: left(sql) == 0, 5, "a ready job was stranded after the listener reconnected")
        # the worker counts a completion once its statement has returned, after the row is gone (a
        # loaded machine can run this check between the two: CI saw 0)
        wait_for(lambda: pool.counts()["completed"] == 1, 5, "the completion was not counted")
        assert pool.counts()["completed"] == 1


def test_ten_thousand_jobs_in_one_transaction_wake_the_pool_without_a_claim_storm(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    workers, batch = 4, 10
    with idle_pool(config(queue.conninfo, batch=batch), sql, workers) as pool:
        before = pool.counts()
        queue.enqueue("q", [{"n": i} for i in range(10_000)])
        wait_for(lambda: left(sql) == 0, 120, "the pool did not drain the burst")
        time.sleep(0.5)
        after = pool.counts()
    claims = after["claims"] - before["claims"]
    empty = after["empty_claims"] - before["empty_claims"]
    assert after["completed"] - before["completed"] == 10_000
    # 1,000 full claims, then each worker's one empty claim (plus a few when several workers race
    # for the last rows): not one claim per job, nor per notification.
    assert empty <= 3 * workers, (claims, empty)
    assert claims <= 10_000 // batch + empty + workers, (claims, empty)


def test_a_burst_of_ten_thousand_notifications_is_coalesced(queue: JobQueue, sql: psycopg.Connection) -> None:
    workers = 4
    with idle_pool(config(queue.conninfo), sql, workers) as pool:
        before = pool.counts()["claims"]
        started = time.monotonic()
        # 10,000 transactions, each committing one notification for the workers' queue.
        sql.execute(
            "DO $$ BEGIN FOR i IN 1..10000 LOOP PERFORM pg_notify(%s, 'q'); COMMIT; END LOOP; END $$".replace(
                "%s", pgsql.Literal(queue.channel).as_string(sql)
            )
        )
        burst = time.monotonic() - started
        time.sleep(0.5)
        claims = pool.counts()["claims"] - before
    # At most one claim per worker per WAKE_GAP (10 ms) while the burst lasts, plus one each after it.
    assert claims <= workers * (burst / 0.01 + 2), (claims, burst)
    assert claims < 10_000 / 5, claims
