"""DBOS Transact 3.4 (PyPI `dbos`), driven as its users drive it.

`python -m frameworks.dbos_client executor` launches a DBOS application (its system database is the
test server's database in PGQ_FRAMEWORK_DSN) under the executor id PGQ_DBOS_EXECUTOR, listening to
the queues in PGQ_TEST_QUEUES only (DBOS.listen_queues; DBOS always serves its internal queue too).
`migrate` launches once and exits: DBOS's own migrations build the `dbos` schema. Workflows are
enqueued from outside with DBOS's own DBOSClient, as a web app would.

The workflows: `work(key, mode)`, fast (returns), fail (raises: ERROR), slow (hangs until
PGQ_TEST_FIXED=1) or hold (hangs); `doomed(key)` hangs like slow, with max_recovery_attempts =
DOOMED_MAX_RECOVERY, so an executor killed under it and relaunched twice dead-letters it
(MAX_RECOVERY_ATTEMPTS_EXCEEDED).
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
            # PGQ_DBOS_NAME_SESSIONS=1: the system-database sessions carry the executor id as their
            # application_name (DBOS's default is 'dbos_transact' for every executor), as an operator
            # does to let pgq-top tell which executor is connected (docs/dialects.md)
            **(
                {"db_engine_kwargs": {"connect_args": {"application_name": executor_id}}}
                if os.environ.get("PGQ_DBOS_NAME_SESSIONS") == "1"
                else {}
            ),
        }
    )

    @DBOS.workflow(name=WORK)
    def work(key: str, mode: str) -> str:
        wid = str(DBOS.workflow_id)
        record(key, wid, "start")
        if mode == "slow":
            _hang_unless_fixed()
        if mode == "hold":  # a live executor's workflow: it runs as long as the executor
            time.sleep(3600)
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


# -- the test side: the scenario of issue 34, ground truth in plain SQL ------------------------------
QUEUES3 = ("alpha", "beta", "gamma")
ENQUEUED = {"alpha": 20, "beta": 18, "gamma": 12}  # 50 left waiting: no executor listens to them
PENDING_KILLED = 5  # hold workflows on gamma, PENDING on exec-a when it is killed
DEAD = 3  # doomed workflows on beta: exec-d killed under them until DBOS dead-letters them
DONE, FAILED = 4, 2  # fast and failing workflows on alpha, run by exec-d


class Dbos:
    """DBOS's own pieces: its migrations (an executor's launch), its DBOSClient, its executors."""

    kind = "dbos"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.env = {"PGQ_FRAMEWORK_DSN": dsn}

    @staticmethod
    def version() -> str:
        from .harness import require_python_client

        return require_python_client("dbos")

    def install(self) -> None:
        from .harness import TESTS_DIR, python_argv, run_client

        run_client(python_argv(__name__, "migrate"), env={**self.env, "PYTHONPATH": str(TESTS_DIR)})

    def executor(self, procs: Any, executor_id: str, queues: tuple[str, ...], *, fixed: bool) -> Any:
        from .harness import python_argv

        return procs.start(
            f"dbos-{executor_id}",
            python_argv(__name__, "executor"),
            ready="READY",
            PGQ_DBOS_EXECUTOR=executor_id,
            PGQ_TEST_QUEUES=",".join(queues),
            PGQ_TEST_FIXED="1" if fixed else "0",
            **self.env,
        )

    def enqueue(self, jobs: list[tuple[str, str, tuple[Any, ...]]]) -> list[str]:
        """(queue, workflow name, args) each enqueued with DBOSClient.enqueue, as a web app would."""
        from dbos import DBOSClient

        client = DBOSClient(system_database_url=system_database_url(self.dsn), application_name=APP_NAME)
        try:
            return [
                client.enqueue({"queue_name": q, "workflow_name": name}, *args).get_workflow_id()
                for q, name, args in jobs
            ]
        finally:
            client.destroy()

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each workflow's (id, queue, state) by a plain scan, from DBOS's statuses and pgq-top's
        stated stuck rule (PENDING with no session of its executor nor of any DBOS executor)."""
        from .harness import truth_rows

        return truth_rows(
            self.dsn,
            """
            SELECT w.workflow_uuid, coalesce(w.queue_name, '(no queue)'),
                   CASE w.status
                     WHEN 'ENQUEUED' THEN 'ready'
                     WHEN 'DELAYED' THEN 'scheduled'
                     WHEN 'PENDING' THEN CASE
                         WHEN EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = current_database()
                                      AND a.application_name IN (w.executor_id, 'dbos_transact'))
                         THEN 'running' ELSE 'stuck' END
                     WHEN 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' THEN 'dead'
                     WHEN 'SUCCESS' THEN 'done'
                     WHEN 'ERROR' THEN 'failed'
                     WHEN 'CANCELLED' THEN 'cancelled'
                   END
            FROM dbos.workflow_status w ORDER BY 1
            """,
            conn,
        )

    def statuses(self) -> dict[str, str]:
        with psycopg.connect(self.dsn, autocommit=True) as conn:
            rows = conn.execute("SELECT workflow_uuid, status FROM dbos.workflow_status").fetchall()
        return {str(i): str(s) for i, s in rows}

    def executors_gone(self) -> bool:
        """No session of a DBOS executor is left on the server (a killed one's backends exit once
        they see the closed socket)."""
        from .harness import scalar

        return not scalar(
            self.dsn,
            "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
            " AND application_name = 'dbos_transact'",
        )


def populate(fw: Dbos, procs: Any) -> dict[str, list[str]]:
    """Issue 34's scenario with DBOS's own executors, killed with kill -9; returns the ids by role.

    exec-d runs alpha (fast: SUCCESS, failing: ERROR) and beta (doomed); it is killed under the doomed
    workflows and relaunched with the same executor id and version until DBOS's own recovery
    dead-letters them (MAX_RECOVERY_ATTEMPTS_EXCEEDED). exec-a claims the hold workflows of gamma and
    is killed (PENDING on an executor that is gone). Then 50 more are enqueued on the three queues,
    which no executor serves (ENQUEUED)."""
    from .harness import phases, wait_for

    fast = fw.enqueue([("alpha", WORK, (f"fast-{i}", "fast")) for i in range(DONE)])
    failing = fw.enqueue([("alpha", WORK, (f"fail-{i}", "fail")) for i in range(FAILED)])
    doomed = fw.enqueue([("beta", DOOMED, (f"doomed-{i}",)) for i in range(DEAD)])
    status = fw.statuses
    for attempt in range(1, DOOMED_MAX_RECOVERY + 2):
        d = fw.executor(procs, "exec-d", ("alpha", "beta"), fixed=False)
        wait_for(
            f"the doomed workflows to start (attempt {attempt})",
            lambda n=attempt: all(phases(fw.dsn, f"doomed-{i}").count("start") == n for i in range(DEAD)),
            timeout=60,
        )
        wait_for("alpha to finish", lambda: all(status()[w] in ("SUCCESS", "ERROR") for w in fast + failing))
        d.kill9()
    d = fw.executor(procs, "exec-d", ("alpha", "beta"), fixed=False)
    wait_for(
        "DBOS to dead-letter the doomed workflows",
        lambda: all(status()[w] == "MAX_RECOVERY_ATTEMPTS_EXCEEDED" for w in doomed),
        timeout=60,
    )
    d.kill9()
    held = fw.enqueue([("gamma", WORK, (f"hold-{i}", "slow")) for i in range(PENDING_KILLED)])
    a = fw.executor(procs, "exec-a", ("gamma",), fixed=False)
    wait_for(
        "exec-a to start the hold workflows",
        lambda: all(phases(fw.dsn, f"hold-{i}") == ["start"] for i in range(PENDING_KILLED)),
        timeout=60,
    )
    a.kill9()
    ready = fw.enqueue([(q, WORK, (f"ready-{q}-{i}", "fast")) for q, n in ENQUEUED.items() for i in range(n)])
    wait_for("the killed executors' sessions to end", fw.executors_gone)
    return {"fast": fast, "failing": failing, "doomed": doomed, "held": held, "ready": ready}


_started = iter(range(1, 1_000_000))


class DbosWorkers(Dbos):
    """The acceptance-flow driver (frameworks/acceptance.py) for the conformance case: each worker is
    an executor of its own id whose sessions carry that id as their application_name (the way an
    operator lets pgq-top tell executors apart), so the live holder's workflow is running (alive by
    name) while the killed executor's is stuck. `fail` ends in ERROR, DBOS's `failed`: DBOS
    dead-letters only after crashes (the issue-34 scenario above makes those)."""

    def start_worker(
        self, procs: Any, *, fixed: bool, queues: Any = None, lifetime_s: float | None = None
    ) -> Any:
        from .harness import QUEUES, python_argv, worker_env

        executor_id = f"exec-{next(_started)}"
        return procs.start(
            f"dbos-{executor_id}",
            python_argv(__name__, "executor"),
            ready="READY",
            PGQ_DBOS_EXECUTOR=executor_id,
            PGQ_DBOS_NAME_SESSIONS="1",
            **worker_env(fixed=fixed, queues=queues or QUEUES, lifetime_s=lifetime_s),
            **self.env,
        )

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:  # type: ignore[override]
        from dbos import DBOSClient

        client = DBOSClient(system_database_url=system_database_url(self.dsn), application_name=APP_NAME)
        options: dict[str, Any] = {"queue_name": queue, "workflow_name": WORK}
        if in_seconds is not None:
            options["delay_seconds"] = float(in_seconds)  # DELAYED until then
        try:
            return str(client.enqueue(options, key, queue).get_workflow_id())  # type: ignore[arg-type]
        finally:
            client.destroy()

    def is_dead(self, job_id: str) -> bool:
        return self.statuses().get(job_id) == "ERROR"

    def make_stuck(self, job_id: str) -> None:
        from .harness import wait_for

        wait_for(
            "the killed executor's workflow to be stuck by pgq-top's rule",
            lambda: {str(i): s for i, _, s in self.truth()}.get(job_id) == "stuck",
        )
