"""good_job 4.19: its schema from good_job's own install migration (ddl/good_job.sql).

The good_job gem does not install here, so jobs and processes are the rows its models write
(app/models/good_job/ in bensheldon/good_job 4.19.2): Job.enqueue (a good_jobs row, scheduled_at now
or later), Job#perform (performed_at, executions_count + 1, locked_by_id the process, lock_type
advisory, one good_job_executions row), its finish (finished_at, error for a discarded job), and
Process rows with lock_type advisory (a live session holds their advisory lock) or NULL (alive by
updated_at). Running jobs hold good_job's advisory lock from live sessions, taken exactly as
good_job's advisory_lock does; a foreign advisory lock (another application's, two-int form on the
same 64 bits, and an unrelated bigint key) must not count. The sessions stay open for the test run.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import psycopg
from frameworks.cases import follow_index_advice

from dialect_cases import DialectCase, TruthJob, backdate_column

DDL = Path(__file__).with_name("ddl") / "good_job.sql"
NOW = "(now() AT TIME ZONE 'UTC')"
# good_job's key: advisory_lock_bigint_sql with its default md5 hash, on "<table>-<id>"
LOCK = (
    "SELECT pg_try_advisory_lock(('x' || substr(md5(%s::text || '-' || %s::text), 1, 16))::bit(64)::bigint)"
)
_sessions: list[psycopg.Connection] = []  # the live workers' sessions, open while the tests run


def install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DDL.read_text())


def install_advised(dsn: str) -> None:
    """The schema, then the indexes pgq-top's advice names (the waiting counts' index-only path)."""
    install(dsn)
    follow_index_advice(dsn, "good-job")


ENQUEUE = f"""
INSERT INTO good_jobs (id, active_job_id, queue_name, priority, serialized_params, scheduled_at, job_class,
                       executions_count, created_at, updated_at)
SELECT i, i, %(queue)s::text, %(priority)s::int,
       jsonb_build_object('job_class', 'ReportJob', 'job_id', i, 'queue_name', %(queue)s::text,
                          'priority', %(priority)s::int, 'arguments', jsonb_build_array(n), 'executions', 0),
       {NOW} + make_interval(secs => %(delay)s), 'ReportJob', 0, {NOW}, {NOW}
FROM (SELECT n, gen_random_uuid() AS i FROM generate_series(1, %(count)s) n) g
RETURNING id
"""
# Job#perform's start: performed_at, executions_count + 1, the lock columns, one execution row
PERFORM = f"""
WITH j AS (
    UPDATE good_jobs SET performed_at = {NOW}, executions_count = coalesce(executions_count, 0) + 1,
                         locked_by_id = %(process)s, locked_at = {NOW}, lock_type = 0, updated_at = {NOW}
    WHERE id = %(id)s RETURNING *
)
INSERT INTO good_job_executions (active_job_id, job_class, queue_name, serialized_params, scheduled_at,
                                 process_id, created_at, updated_at)
SELECT id, job_class, queue_name, serialized_params, scheduled_at, %(process)s, {NOW}, {NOW} FROM j
"""
FINISH = f"""
UPDATE good_jobs SET finished_at = {NOW}, error = %(error)s, error_event = %(event)s,
                     locked_by_id = NULL, locked_at = NULL, lock_type = NULL, updated_at = {NOW}
WHERE id = %(id)s
"""
PROCESS = f"""
INSERT INTO good_job_processes (id, state, lock_type, created_at, updated_at)
VALUES (%(id)s, jsonb_build_object('hostname', 'app-1', 'pid', %(pid)s::int), %(lock_type)s,
        {NOW}, {NOW} - make_interval(secs => %(age)s))
"""


def _session(dsn: str) -> psycopg.Connection:
    conn = psycopg.connect(dsn, autocommit=True, application_name="good_job-worker")
    _sessions.append(conn)
    return conn


def take_lock(conn: psycopg.Connection, table: str, row_id: object) -> None:
    row = conn.execute(LOCK, (table, str(row_id))).fetchone()
    assert row is not None and row[0], (table, row_id)


def enqueue(
    conn: psycopg.Connection, queue: str, count: int, *, delay: float = 0, priority: int = 0
) -> list[str]:
    rows = conn.execute(ENQUEUE, {"queue": queue, "count": count, "delay": delay, "priority": priority})
    return [str(r[0]) for r in rows.fetchall()]


def process(conn: psycopg.Connection, pid: int, lock_type: int | None, age: float = 0) -> str:
    pid_id = str(uuid.uuid4())
    conn.execute(PROCESS, {"id": pid_id, "pid": pid, "lock_type": lock_type, "age": age})
    return pid_id


def perform(conn: psycopg.Connection, job: str, proc: str | None) -> None:
    conn.execute(PERFORM, {"id": job, "process": proc})


def finish(conn: psycopg.Connection, job: str, error: str | None = None) -> None:
    conn.execute(FINISH, {"id": job, "error": error, "event": 1 if error else None})


def populate(dsn: str) -> None:
    worker = _session(dsn)  # a live good_job process (advisory mode): holds its process lock and jobs
    with psycopg.connect(dsn, autocommit=True) as conn:
        live = process(conn, 5101, 0)
        take_lock(worker, "good_job_processes", live)
        recent = process(conn, 5102, None, age=20)  # lock_type NULL, refreshed 20 s ago: alive
        expired = process(conn, 5103, None, age=600)  # older than EXPIRED_INTERVAL (5 min)
        unlocked = process(conn, 5104, 0, age=5)  # lock_type advisory, its lock gone (SIGKILLed)
        for queue in ("default", "mailers"):
            enqueue(conn, queue, 5)
            enqueue(conn, queue, 2, priority=-5)
            enqueue(conn, queue, 3, delay=3600)  # scheduled
            done = enqueue(conn, queue, 4)
            for j in done:
                perform(conn, j, live)
                finish(conn, j)
            (failed,) = enqueue(conn, queue, 1)
            perform(conn, failed, live)
            finish(conn, failed, "RuntimeError: boom")  # discarded
            held = enqueue(conn, queue, 2)
            for j in held:  # running: performed by the live process, its advisory lock held
                perform(conn, j, live)
                take_lock(worker, "good_jobs", j)
            (skip,) = enqueue(conn, queue, 1)
            perform(conn, skip, recent)  # running, skiplocked mode: locked_by_id an alive process
            (gone,) = enqueue(conn, queue, 1)
            perform(conn, gone, expired)  # stuck: its process expired, no lock
        (lost,) = enqueue(conn, "mailers", 1)
        perform(conn, lost, unlocked)  # stuck: lock_type advisory, the process lock gone
        (orphan,) = enqueue(conn, "mailers", 1)
        perform(conn, orphan, str(uuid.uuid4()))  # stuck: no such process row
        (locked,) = enqueue(conn, "default", 1)
        perform(conn, locked, expired)  # running: its process expired, but its lock is held
        take_lock(worker, "good_jobs", locked)
        (released,) = enqueue(conn, "default", 1)
        perform(conn, released, None)  # released: Process.cleanup cleared its locked_by_id
        # two more in another queue: three in all, past the conformance suite's cap of 2, so the
        # advised released count (capped over all queues together) is checked as such
        for more in enqueue(conn, "mailers", 2):
            perform(conn, more, None)
        # another application's advisory locks: the same 64 bits as a stuck job's key, taken in the
        # two-int form (objsubid 2), and a plain bigint key; neither makes a job running
        (foreign,) = enqueue(conn, "billing", 1)
        perform(conn, foreign, expired)
        other = _session(dsn)
        other.execute(
            "SELECT pg_advisory_lock((k >> 32)::int, (k & 4294967295)::bit(32)::int),"
            " pg_advisory_lock(424242)"
            " FROM (SELECT ('x' || substr(md5('good_jobs-' || %s::text), 1, 16))::bit(64)::bigint AS k) x",
            (foreign,),
        )


# Ground truth, in plain SQL written apart from the dialect's: a key's 64 bits as two unsigned halves
# compared with pg_locks' (classid, objid) of single-key (objsubid 1) advisory locks; good_job's
# scopes for the states; GoodJob::Process.active for a process.
TRUTH = f"""
WITH held AS (
    SELECT l.classid::bigint AS hi, l.objid::bigint AS lo FROM pg_locks l
    WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted AND l.pid <> pg_backend_pid()
), alive AS (
    SELECT p.id FROM good_job_processes p,
         LATERAL (SELECT ('x' || substr(md5('good_job_processes-' || p.id::text), 1, 16))::bit(64)::bigint
                  AS k) x
    WHERE (p.lock_type = 0 AND ((x.k >> 32) & 4294967295, x.k & 4294967295) IN (SELECT hi, lo FROM held))
       OR (p.lock_type IS NULL AND p.updated_at > {NOW} - interval '5 minutes')
), jobs AS (
    SELECT j.*, ((x.k >> 32) & 4294967295, x.k & 4294967295) IN (SELECT hi, lo FROM held) AS locked
    FROM good_jobs j,
         LATERAL (SELECT ('x' || substr(md5('good_jobs-' || j.id::text), 1, 16))::bit(64)::bigint AS k) x
)
SELECT j.id::text, j.queue_name,
       CASE WHEN j.finished_at IS NOT NULL AND j.error IS NOT NULL THEN 'dead'
            WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN j.performed_at IS NULL AND j.scheduled_at > {NOW} THEN 'scheduled'
            WHEN j.performed_at IS NULL THEN 'ready'
            WHEN j.locked_by_id IS NULL THEN 'released'
            WHEN j.locked THEN 'running'
            WHEN j.locked_by_id IN (SELECT id FROM alive) THEN 'running'
            ELSE 'stuck' END AS state
FROM jobs j ORDER BY j.id
"""


def truth(conn: psycopg.Connection) -> list[TruthJob]:
    return [TruthJob(*r) for r in conn.execute(TRUTH).fetchall()]


CASES = [
    DialectCase(
        case_id,
        "good-job",
        "public",
        "good_jobs",
        installer,
        populate,
        truth,
        backdate=backdate_column("public", "good_jobs", "scheduled_at", now=NOW),
    )
    for case_id, installer in (("good-job-stock", install), ("good-job", install_advised))
]
