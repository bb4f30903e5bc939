"""DBOS Transact 3.4 with its own migrations, DBOSClient and executors (tests/frameworks/dbos_client.py),
on its stock schema: the dbos dialect asks for no index (its figures are served by DBOS's own partial
indexes, and the SUCCESS count by a scan), so there is no advised case."""

import psycopg
from frameworks.cases import framework_case
from frameworks.dbos_client import DbosWorkers

from dialect_cases import TruthJob


def _backdate(conn: psycopg.Connection, job: TruthJob, age: float) -> None:
    """A ready (ENQUEUED) workflow waits since its created_at (epoch ms), its place in DBOS's queue."""
    done = conn.execute(
        "UPDATE dbos.workflow_status SET created_at = (extract(epoch FROM now()) * 1000)::bigint"
        " - (%s * 1000)::bigint WHERE workflow_uuid = %s AND status = 'ENQUEUED'",
        (age, job.id),
    )
    assert done.rowcount == 1, job


CASES = [
    framework_case(DbosWorkers, "dbos", "dbos", "workflow_status", backdate=_backdate, advised=False),
]
