"""DBOS Transact 3.4 (PyPI `dbos`), driven as its users drive it.

`python -m frameworks.dbos_client executor` launches a DBOS application (its system database is the
test server's database in PGQ_FRAMEWORK_DSN) under the executor id PGQ_DBOS_EXECUTOR, listening to
the queues in PGQ_TEST_QUEUES only (DBOS.listen_queues; DBOS always serves its internal queue too).
`migrate` launches once and exits: DBOS's own migrations build the `dbos` schema. Workflows are
enqueued from outside with DBOS's own DBOSClient, as a web app would.

The workflows: `work(key, mode)`, fast (returns), fail (raises: ERROR) or hold (hangs until
PGQ_TEST_FIXED=1); `doomed(key)` hangs likewise, with max_recovery_attempts=DOOMED_MAX_RECOVERY, so
an executor killed under it and relaunched twice dead-letters it (MAX_RECOVERY_ATTEMPTS_EXCEEDED).
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

APP_NAME = "pgq-test"
APP_VERSION = "pgq-test-v1"  # fixed, so a relaunched executor recovers its own PENDING workflows
DOOMED_MAX_RECOVERY = 1
WORK = "work"
DOOMED = "doomed"


def system_database_url(dsn: str) -> str:
    """A libpq DSN (Unix socket directories included) as the SQLAlchemy URL DBOS takes."""
    p = conninfo_to_dict(dsn)
    user = p.get("user") or os.environ.get("PGUSER") or "postgres"
    auth = f"{user}:{p['password']}" if p.get("password") else user
    query = f"host={p.get('host') or '/var/run/postgresql'}&port={p.get('port') or 5432}"
    return f"postgresql://{auth}@/{p['dbname']}?{query}"


def record(key: str, workflow_id: str, phase: str) -> None:
    with psycopg.connect(os.environ["PGQ_FRAMEWORK_DSN"], autocommit=True) as conn:
        conn.execute(
            "INSERT INTO pgq_test_runs (job_key, job_id, phase, pid) VALUES (%s, %s, %s, %s)",
            (key, workflow_id, phase, os.getpid()),
        )


def _hang_unless_fixed() -> None:
    if os.environ.get("PGQ_TEST_FIXED") != "1":
        time.sleep(3600)


def launch(executor_id: str, queues: list[str]) -> Any:
    from dbos import DBOS

    DBOS(
        config={
            "name": APP_NAME,
            "system_database_url": system_database_url(os.environ["PGQ_FRAMEWORK_DSN"]),
            "executor_id": executor_id,
            "application_version": APP_VERSION,
            "log_level": "WARNING",
        }
    )

    @DBOS.workflow(name=WORK)
    def work(key: str, mode: str) -> str:
        wid = str(DBOS.workflow_id)
        record(key, wid, "start")
        if mode == "hold":
            _hang_unless_fixed()
        if mode == "fail":
            record(key, wid, "fail")
            raise RuntimeError(f"always fails: {key}")
        record(key, wid, "done")
        return key

    @DBOS.workflow(name=DOOMED, max_recovery_attempts=DOOMED_MAX_RECOVERY)
    def doomed(key: str) -> str:
        record(key, str(DBOS.workflow_id), "start")
        _hang_unless_fixed()
        record(key, str(DBOS.workflow_id), "done")
        return key

    DBOS.listen_queues(queues)
    DBOS.launch()
    for q in queues:
        DBOS.register_queue(q)
    return DBOS


def main() -> None:
    command = sys.argv[1:]
    queues = [q for q in (os.environ.get("PGQ_TEST_QUEUES") or "").split(",") if q]
    if command == ["migrate"]:
        launch("pgq-migrate", [])
        from dbos import DBOS

        DBOS.destroy()
        return
    if command != ["executor"]:
        raise SystemExit("usage: python -m frameworks.dbos_client migrate|executor")
    lifetime = float(os.environ.get("PGQ_TEST_LIFETIME_S") or 0)
    launch(os.environ["PGQ_DBOS_EXECUTOR"], queues)
    print(f"READY {os.getpid()}", flush=True)
    deadline = time.monotonic() + (lifetime or 3600)
    while time.monotonic() < deadline:
        time.sleep(0.2)
    os._exit(0)


if __name__ == "__main__":
    main()
