"""Throughput under a real worker pool agrees with the pool's own counters."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

import psycopg
from monitor_support import pgq_monitor

from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

JOBS = 1500


def test_throughput_matches_the_pool(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("tp", [{"n": i} for i in range(JOBS)])
    config = WorkerConfig(conninfo=dsn, queues=("tp",), batch=10, lease=30.0, idle_sleep=0.05)
    with pgq_monitor(dsn, history_s=120) as monitor:
        # the baseline poll before any work: the history counts from the counters this poll reads, so
        # jobs finished before the first poll (a slow first poll on a busy machine) would not be in it
        monitor.collect()
        pool = WorkerPool(config, concurrency=2, reap_interval=0).start()
        try:
            deadline = time.monotonic() + 60
            while pool.counts()["completed"] < JOBS and time.monotonic() < deadline:
                snap = monitor.collect()  # polling while the workers run must not disturb them
                assert snap.errors == {}
                time.sleep(0.05)
        finally:
            pool.stop(timeout=10)
        completed = pool.counts()["completed"]
        assert completed == JOBS
        time.sleep(1.05)  # let the last second's bucket complete
        snap = monitor.collect()
    tp = snap.throughput
    assert sum(p.completed for p in tp.history) == completed, (tp.source, tp.per_queue)
    assert sum(tp.queue_history["tp"]) == completed
    assert sum(p.enqueued for p in tp.history) == JOBS and sum(p.failed for p in tp.history) == 0
    # the rate is the window's count over its length
    window = [p.completed for p in tp.history[-int(tp.interval_s) :]]
    assert tp.per_queue["tp"].completed == sum(window) / tp.interval_s
    (q,) = snap.queues
    assert (q.ready, q.running, q.done) == (0, 0, 0)  # completed jobs are deleted: counters still count


def test_steady_load_rate_within_five_percent(dsn: str, queue: JobQueue, sql: psycopg.Connection) -> None:
    """A producer paced at about 200 jobs/s while two workers drain (keeping finished rows): the
    monitor's enqueue and completion rates over its 3 s window agree within 5% with what the table
    itself says happened in that window (created_at and finished_at). The truth is measured, not
    assumed: on a loaded machine the workers start late and catch up, or the producer lags, and the
    real rate in the window is then not 200/s."""
    rate, step, seconds = 200, 0.1, 5.0
    stop = threading.Event()

    def produce() -> None:
        with JobQueue(dsn) as producer:
            next_at = time.monotonic()
            while not stop.is_set():
                producer.enqueue("steady", [{}] * int(rate * step))
                next_at += step
                time.sleep(max(0.0, next_at - time.monotonic()))

    config = WorkerConfig(conninfo=dsn, queues=("steady",), batch=10, idle_sleep=0.02, keep=True)
    with WorkerPool(config, concurrency=2, reap_interval=0), pgq_monitor(dsn, rate_window_s=3) as monitor:
        # both workers up (listening) before the load starts: a worker process that starts seconds
        # late on a busy machine would leave the window with hardly any completion to compare
        deadline = time.monotonic() + 30
        while listening(sql) < 2:
            assert time.monotonic() < deadline, "the workers never started listening"
            time.sleep(0.05)
        thread = threading.Thread(target=produce, daemon=True)
        thread.start()
        time.sleep(seconds)
        snap = monitor.collect()
        stop.set()
        thread.join(5)
    rates = snap.throughput.per_queue["steady"]
    window = snap.throughput.interval_s
    until = snap.server.now.replace(microsecond=0)
    since = until - timedelta(seconds=window)
    enqueued, completed = sql.execute(
        "SELECT count(*) FILTER (WHERE created_at >= %(since)s AND created_at < %(until)s),"
        " count(*) FILTER (WHERE finished_at >= %(since)s AND finished_at < %(until)s)"
        " FROM jobs WHERE queue = 'steady'",
        {"since": since, "until": until},
    ).fetchone()
    assert enqueued > 0.5 * rate * window and completed > 0.5 * rate * window, (enqueued, completed)
    assert abs(rates.enqueued - enqueued / window) <= 0.05 * enqueued / window, (rates, enqueued)
    assert abs(rates.completed - completed / window) <= 0.05 * completed / window, (rates, completed)


def listening(sql: psycopg.Connection) -> int:
    return int(
        sql.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND query LIKE 'LISTEN %%'"
        ).fetchone()[0]
    )
