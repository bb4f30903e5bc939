"""Solid Queue: its 1.x schema from Solid Queue's own queue_schema.rb (ddl/solid_queue.sql).

Solid Queue needs Ruby gems, which do not install here, so jobs move through the same row changes
its models make (app/models/solid_queue/ in rails/solid_queue): Job.enqueue (a job row, then a ready
or scheduled execution), a worker's claim (ready -> claimed with its process id), finished! (claim
deleted, finished_at set), failed_with (claim -> failed execution with the error JSON), a
concurrency-limited job blocked, processes registering and heartbeating.
"""

from __future__ import annotations

from pathlib import Path

import psycopg

from dialect_cases import DialectCase, TruthJob, backdate_column

DDL = Path(__file__).with_name("ddl") / "solid_queue.sql"
NOW = "(now() AT TIME ZONE 'UTC')"


def install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DDL.read_text())


# Job.enqueue: the job row (ActiveJob's serialized arguments), then prepare_for_execution.
ENQUEUE = f"""
WITH job AS (
    INSERT INTO solid_queue_jobs (queue_name, class_name, arguments, priority, active_job_id, scheduled_at,
                                  concurrency_key, created_at, updated_at)
    SELECT %(queue)s::text, 'ReportJob',
           json_build_object('job_class', 'ReportJob', 'job_id', gen_random_uuid(),
                             'queue_name', %(queue)s::text, 'priority', %(priority)s::int,
                             'arguments', json_build_array(n), 'executions', 0,
                             'exception_executions', json_build_object())::text,
           %(priority)s::int, gen_random_uuid()::text, {NOW} + make_interval(secs => %(delay)s),
           %(key)s::text, {NOW}, {NOW}
    FROM generate_series(1, %(count)s) n
    RETURNING id, queue_name, priority, scheduled_at, concurrency_key
), ready AS (
    INSERT INTO solid_queue_ready_executions (job_id, queue_name, priority, created_at)
    SELECT id, queue_name, priority, {NOW} FROM job WHERE scheduled_at <= {NOW} AND concurrency_key IS NULL
), blocked AS (
    INSERT INTO solid_queue_blocked_executions (job_id, queue_name, priority, concurrency_key, expires_at,
                                                created_at)
    SELECT id, queue_name, priority, concurrency_key, {NOW} + interval '3 minutes', {NOW}
    FROM job WHERE scheduled_at <= {NOW} AND concurrency_key IS NOT NULL
)
INSERT INTO solid_queue_scheduled_executions (job_id, queue_name, priority, scheduled_at, created_at)
SELECT id, queue_name, priority, scheduled_at, {NOW} FROM job WHERE scheduled_at > {NOW}
"""
# Process#register (a worker under a supervisor), heartbeating `age` seconds ago.
REGISTER = f"""
INSERT INTO solid_queue_processes (kind, last_heartbeat_at, supervisor_id, pid, hostname, metadata,
                                   created_at, name)
VALUES ('Worker', {NOW} - make_interval(secs => %(age)s), NULL, %(pid)s, 'app-1', '{{}}', {NOW}, %(name)s)
RETURNING id
"""
# ReadyExecution.claim: by priority, job_id; claimed rows carry the process id.
CLAIM = f"""
WITH picked AS (
    SELECT id, job_id FROM solid_queue_ready_executions WHERE queue_name = %(queue)s
    ORDER BY priority, job_id LIMIT %(limit)s FOR UPDATE SKIP LOCKED
), claimed AS (
    INSERT INTO solid_queue_claimed_executions (job_id, process_id, created_at)
    SELECT job_id, %(process)s, {NOW} FROM picked RETURNING job_id
)
DELETE FROM solid_queue_ready_executions r USING picked WHERE r.id = picked.id RETURNING r.job_id
"""
FINISH = f"""
WITH done AS (DELETE FROM solid_queue_claimed_executions WHERE job_id = ANY(%s) RETURNING job_id)
UPDATE solid_queue_jobs SET finished_at = {NOW}, updated_at = {NOW} FROM done WHERE id = done.job_id
"""
FAIL = f"""
WITH gone AS (DELETE FROM solid_queue_claimed_executions WHERE job_id = ANY(%s) RETURNING job_id)
INSERT INTO solid_queue_failed_executions (job_id, error, created_at)
SELECT job_id, json_build_object('exception_class', 'RuntimeError', 'message', 'boom',
                                 'backtrace', json_build_array('app/jobs/report_job.rb:3'))::text, {NOW}
FROM gone
"""


def enqueue(conn: psycopg.Connection, queue: str, count: int, *, delay: float = 0, priority: int = 0,
            key: str | None = None) -> None:  # fmt: skip
    conn.execute(ENQUEUE, {"queue": queue, "count": count, "delay": delay, "priority": priority, "key": key})


def register(conn: psycopg.Connection, name: str, pid: int, age: float = 0) -> int:
    return int(conn.execute(REGISTER, {"age": age, "pid": pid, "name": name}).fetchone()[0])  # type: ignore[index]


def claim(conn: psycopg.Connection, queue: str, limit: int, process: int) -> list[int]:
    rows = conn.execute(CLAIM, {"queue": queue, "limit": limit, "process": process}).fetchall()
    return [r[0] for r in rows]


def populate(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        alive = register(conn, "worker-alive", 4101)
        silent = register(conn, "worker-silent", 4102, age=600)  # pruned at the next supervisor pass
        vanished = register(conn, "worker-vanished", 4103)
        for queue in ("default", "mailers"):
            enqueue(conn, queue, 8)
            enqueue(conn, queue, 2, priority=5)
            enqueue(conn, queue, 3, delay=3600)
            conn.execute(FINISH, (claim(conn, queue, 2, alive),))
            claim(conn, queue, 1, alive)  # running
            claim(conn, queue, 1, silent)  # stuck: heartbeat 10 min old
            conn.execute(FAIL, (claim(conn, queue, 1, alive),))  # failed
        claim(conn, "mailers", 1, vanished)
        conn.execute("DELETE FROM solid_queue_processes WHERE id = %s", (vanished,))  # orphaned claim
        enqueue(conn, "billing", 2, key="ReportJob/account-7")  # blocked by its concurrency limit


TRUTH = f"""
SELECT j.id, j.queue_name::text,
       CASE WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN EXISTS (SELECT 1 FROM solid_queue_ready_executions e WHERE e.job_id = j.id) THEN 'ready'
            WHEN EXISTS (SELECT 1 FROM solid_queue_scheduled_executions e WHERE e.job_id = j.id)
                 THEN 'scheduled'
            WHEN EXISTS (SELECT 1 FROM solid_queue_failed_executions e WHERE e.job_id = j.id) THEN 'dead'
            WHEN EXISTS (SELECT 1 FROM solid_queue_blocked_executions e WHERE e.job_id = j.id) THEN 'blocked'
            WHEN EXISTS (SELECT 1 FROM solid_queue_claimed_executions c
                         JOIN solid_queue_processes p ON p.id = c.process_id
                         WHERE c.job_id = j.id AND p.last_heartbeat_at > {NOW} - interval '5 minutes')
                 THEN 'running'
            WHEN EXISTS (SELECT 1 FROM solid_queue_claimed_executions c WHERE c.job_id = j.id) THEN 'stuck'
       END AS state
FROM solid_queue_jobs j ORDER BY j.id
"""


def truth(conn: psycopg.Connection) -> list[TruthJob]:
    return [TruthJob(*r) for r in conn.execute(TRUTH).fetchall()]


# the dialect reads each priority's first ready execution by job_id (Solid Queue's own order)
READY_SINCE = backdate_column("public", "solid_queue_ready_executions", "created_at", "job_id", NOW)
CASES = [
    DialectCase(
        "solid-queue",
        "solid-queue",
        "public",
        "solid_queue_jobs",
        install,
        populate,
        truth,
        backdate=READY_SINCE,
        ready_in_id_order=True,
    )
]
