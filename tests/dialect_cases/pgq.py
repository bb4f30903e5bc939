"""pgq-top's own table: installed by `JobQueue.install()`, driven by its own client."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import psycopg

from dialect_cases import DialectCase, TruthJob, backdate_column
from pgq_tui.queue import JobQueue


def install(dsn: str) -> None:
    with JobQueue(dsn) as q:
        q.install()


def populate(dsn: str) -> None:
    """Every state in two queues: ready (two jobs, so the oldest can be told apart), scheduled,
    running, stuck (lease expired), dead, done."""
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    with JobQueue(dsn, worker_id="case-worker") as q:
        for queue in ("emails", "reports"):
            q.enqueue(queue, [{"n": i} for i in range(6)])  # two stay ready
            q.enqueue(queue, [{"later": i} for i in range(3)], run_at=later)
            done = q.claim(queue, limit=2)
            q.complete(done, keep=True)
            q.claim(queue, limit=1, lease=600)  # running
            q.claim(queue, limit=1, lease=0.001)  # stuck once its lease passes
        q.enqueue("billing", [{"doomed": 1}], max_attempts=1)
        (job,) = q.claim("billing", limit=1)
        q.fail(job, "boom")


TRUTH = """
SELECT id, queue,
       CASE status WHEN 'pending' THEN CASE WHEN run_at <= now() THEN 'ready' ELSE 'scheduled' END
                   WHEN 'running' THEN CASE WHEN locked_until < now() THEN 'stuck' ELSE 'running' END
                   WHEN 'failed' THEN 'dead' ELSE status END AS state
FROM jobs ORDER BY id
"""


def truth(conn: psycopg.Connection) -> list[TruthJob]:
    return [TruthJob(*r) for r in conn.execute(TRUTH).fetchall()]


RUN_AT = backdate_column("public", "jobs", "run_at")
CASES = [DialectCase("pgq", "pgq", "public", "jobs", install, populate, truth, backdate=RUN_AT)]
