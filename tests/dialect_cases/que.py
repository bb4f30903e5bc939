"""Que 2.4 (schema version 7): its schema as Que's own migrations 1..7 leave it (ddl/que.sql).

The Que gem does not install here, so jobs move through the row changes Que's own SQL makes
(lib/que/job.rb insert_job, job_methods.rb finish_job / expire_job / set_error / destroy_job), and a
job runs the way Que's locker runs it (lib/que/locker.rb): a session registers in que_lockers by its
backend pid (register_locker, after clean_lockers), names itself 'Que Locker: <pid>', and holds
pg_try_advisory_lock(id) on each job it works. Those sessions stay open (LOCKERS) while the tests
read: a session advisory lock lives as long as its session.

Besides them: another application's advisory locks, which must never count: one on a job's id from
a session not in que_lockers, one from a registered locker on a key that is no job's id, and one on
a job's id in the two-int4 form (objsubid 2).

The ground truth is plain SQL of its own (TRUTH): pg_locks joined with que_lockers by pid, as
Que.job_states does, and Que's que_determine_job_state order.
"""

from __future__ import annotations

from pathlib import Path

import psycopg
from frameworks.cases import follow_index_advice

from dialect_cases import DialectCase, TruthJob, backdate_column

DDL = Path(__file__).with_name("ddl") / "que.sql"
# dsn -> the sessions holding locks (kept open for the module: their locks are the running jobs)
LOCKERS: dict[str, list[psycopg.Connection]] = {}

INSERT = """
INSERT INTO que_jobs (queue, priority, run_at, job_class, args, kwargs, data, job_schema_version)
SELECT %(queue)s::text, %(priority)s::smallint, now() + make_interval(secs => %(delay)s), 'ReportJob',
       jsonb_build_array(n), '{}'::jsonb, '{}'::jsonb, 2
FROM generate_series(1, %(count)s) n
RETURNING id
"""
# Locker#startup: clean_lockers, then register_locker (lib/que/locker.rb)
CLEAN = """
DELETE FROM public.que_lockers WHERE pid = pg_backend_pid()
   OR NOT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = public.que_lockers.pid)
"""
REGISTER = """
INSERT INTO public.que_lockers (pid, worker_count, worker_priorities, ruby_pid, ruby_hostname, listening,
                                queues, job_schema_version)
VALUES (pg_backend_pid(), 6, '{10,30,50,NULL,NULL,NULL}', %s, 'app-1', true, %s, 2)
"""
FINISH = "UPDATE public.que_jobs SET finished_at = now() WHERE id = ANY(%s)"
EXPIRE = "UPDATE public.que_jobs SET error_count = error_count + 1, expired_at = now() WHERE id = ANY(%s)"
SET_ERROR = """
UPDATE public.que_jobs
SET error_count = error_count + 1, run_at = now() + %s::float * '1 second'::interval,
    last_error_message = left(%s::text, 500), last_error_backtrace = left(%s::text, 10000)
WHERE id = ANY(%s)
"""


def install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DDL.read_text())


def install_advised(dsn: str) -> None:
    """The schema, then the indexes pgq-top's advice names (the waiting counts' index-only path)."""
    install(dsn)
    follow_index_advice(dsn, "que")


def enqueue(conn: psycopg.Connection, queue: str, count: int, *, delay: float = 0, priority: int = 100
            ) -> list[int]:  # fmt: skip
    rows = conn.execute(INSERT, {"queue": queue, "count": count, "delay": delay, "priority": priority})
    return [r[0] for r in rows.fetchall()]


def locker(dsn: str, queues: list[str], *, register: bool = True, ruby_pid: int = 4100) -> psycopg.Connection:
    """A session doing what a Que locker does at startup; kept open in LOCKERS."""
    conn = psycopg.connect(dsn, autocommit=True)
    conn.execute("SELECT set_config('application_name', 'Que Locker: ' || pg_backend_pid(), false)")
    if register:
        conn.execute(CLEAN)
        conn.execute(REGISTER, (ruby_pid, queues))
    LOCKERS.setdefault(dsn, []).append(conn)
    return conn


def lock(conn: psycopg.Connection, ids: list[int]) -> None:
    """Locker#lock_jobs: pg_try_advisory_lock(id) on each job, all taken."""
    rows = conn.execute(
        "WITH jobs AS MATERIALIZED (SELECT * FROM que_jobs WHERE id = ANY(%s))"
        " SELECT id FROM jobs WHERE pg_try_advisory_lock(id)",
        (ids,),
    ).fetchall()
    assert sorted(r[0] for r in rows) == sorted(ids)


def close(dsn: str) -> None:
    for conn in LOCKERS.pop(dsn, []):
        conn.close()


def populate(dsn: str) -> None:
    close(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        work: dict[str, list[int]] = {}
        for queue in ("default", "mailers"):
            ids = enqueue(conn, queue, 8)
            enqueue(conn, queue, 2, priority=5)
            enqueue(conn, queue, 3, delay=3600)
            conn.execute(FINISH, (ids[:2],))  # done
            conn.execute(EXPIRE, (ids[2:3],))  # dead
            error = ("RuntimeError: boom", "app/jobs/report_job.rb:3")
            conn.execute(SET_ERROR, (84, *error, ids[3:4]))  # errored, retry in 84 s
            work[queue] = ids[4:]
        busy = locker(dsn, ["default", "mailers"])
        lock(busy, work["default"][:2] + work["mailers"][:1])  # running
        lost = locker(dsn, ["mailers"], register=False)  # a Que locker whose que_lockers row is missing
        lock(lost, work["mailers"][1:2])  # stuck
        # another application's advisory locks: never a Que job's lock
        foreign = psycopg.connect(dsn, autocommit=True, application_name="billing-app")
        LOCKERS[dsn].append(foreign)
        foreign.execute("SELECT pg_advisory_lock(%s)", (work["default"][2],))  # a job's id, not a locker
        foreign.execute("SELECT pg_advisory_lock(%s, %s)", (0, work["default"][3]))  # two-int4 form
        busy.execute("SELECT pg_advisory_lock(%s)", (10**12,))  # a registered locker, no such job


TRUTH = """
WITH que_locks AS (
    SELECT (l.classid::bigint << 32) + l.objid::bigint AS id, k.pid AS locker
    FROM pg_locks l
    LEFT JOIN que_lockers k ON k.pid = l.pid
    JOIN pg_stat_activity a ON a.pid = l.pid
    WHERE l.locktype = 'advisory' AND l.objsubid = 1 AND l.granted
      AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
      AND (k.pid IS NOT NULL OR a.application_name = 'Que Locker: ' || l.pid)
)
SELECT j.id, j.queue,
       CASE WHEN j.expired_at IS NOT NULL THEN 'dead'
            WHEN j.finished_at IS NOT NULL THEN 'done'
            WHEN q.id IS NOT NULL AND q.locker IS NOT NULL THEN 'running'
            WHEN q.id IS NOT NULL THEN 'stuck'
            WHEN j.error_count > 0 THEN 'errored'
            WHEN j.run_at > now() THEN 'scheduled'
            ELSE 'ready' END AS state
FROM que_jobs j LEFT JOIN que_locks q ON q.id = j.id
ORDER BY j.id
"""


def truth(conn: psycopg.Connection) -> list[TruthJob]:
    return [TruthJob(*r) for r in conn.execute(TRUTH).fetchall()]


CASES = [
    DialectCase(
        case_id,
        "que",
        "public",
        "que_jobs",
        installer,
        populate,
        truth,
        backdate=backdate_column("public", "que_jobs", "run_at"),
    )
    for case_id, installer in (("que-stock", install), ("que", install_advised))
]
