"""A job handler for the crash tests: records every run in `handler_runs`, then works a few ms.

Recording happens before the work, on the worker process's own autocommit connection, so a run that a
kill -9 interrupts is still counted: duplicates are measured, not hidden.
"""

from __future__ import annotations

import os
import time

import psycopg

from pgq_tui.queue import Job

_conn: psycopg.Connection | None = None


def record(job: Job) -> None:
    global _conn
    if _conn is None or _conn.closed:
        _conn = psycopg.connect(os.environ["PGQ_CRASH_DSN"], autocommit=True)
    _conn.execute("INSERT INTO handler_runs (job_id, pid) VALUES (%s, %s)", (job.id, os.getpid()))
    time.sleep(float(job.payload.get("ms", 5)) / 1000)
