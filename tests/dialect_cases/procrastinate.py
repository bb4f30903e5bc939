"""procrastinate 3.10 with its own CLI, client and worker (tests/frameworks/procrastinate_client.py).
The dialect is told the test workers' stalled threshold, as an operator would (PGQ_TOP_STALLED_AFTER)."""

import psycopg
from frameworks.cases import framework_case
from frameworks.procrastinate_client import STALLED_S, Procrastinate

from dialect_cases import TruthJob
from pgq_tui.dialects.procrastinate import ProcrastinateDialect


def _backdate(conn: psycopg.Connection, job: TruthJob, age: float) -> None:
    """A ready job is due since its scheduled_at, else its `deferred` event (the dialect reads the
    event of the queue's lowest ready id: procrastinate's ids grow with time)."""
    conn.execute(
        "UPDATE procrastinate_jobs SET scheduled_at = now() - make_interval(secs => %s)"
        " WHERE id = %s AND scheduled_at IS NOT NULL",
        (age, job.id),
    )
    events = conn.execute(
        "UPDATE procrastinate_events SET at = now() - make_interval(secs => %s)"
        " WHERE job_id = %s AND type = 'deferred'",
        (age, job.id),
    )
    assert events.rowcount == 1, job


CASES = [
    framework_case(
        Procrastinate,
        "procrastinate",
        "public",
        "procrastinate_jobs",
        dialects=lambda: (ProcrastinateDialect(stalled_after_s=STALLED_S),),
        backdate=_backdate,
        ready_in_id_order=True,
    ),
    framework_case(
        Procrastinate,
        "procrastinate",
        "public",
        "procrastinate_jobs",
        dialects=lambda: (ProcrastinateDialect(stalled_after_s=STALLED_S),),
        backdate=_backdate,
        ready_in_id_order=True,
        advised=False,
    ),
]
