"""procrastinate 3.10, driven as its users drive it.

`app` is the procrastinate App its CLI loads (`procrastinate --app=frameworks.procrastinate_client.app
schema --apply`); the connection comes from PGQ_FRAMEWORK_DSN. `python -m frameworks.procrastinate_client
worker` runs a worker with a short heartbeat, so a killed worker is stalled within seconds.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable
from typing import Any

import procrastinate
import psycopg

from .harness import (
    TESTS_DIR,
    Processes,
    Worker,
    exit_after_lifetime,
    python_argv,
    require_python_client,
    run_client,
    scalar,
    truth_rows,
    wait_for,
    worker_env,
    worker_queues,
)

HEARTBEAT_S = 0.5  # procrastinate's default is 10 s; the test's stalled threshold is a few seconds
STALLED_S = 2.0

app = procrastinate.App(
    connector=procrastinate.PsycopgConnector(conninfo=os.environ.get("PGQ_FRAMEWORK_DSN", ""))
)


def record(key: str, job_id: int, phase: str) -> None:
    with psycopg.connect(os.environ["PGQ_FRAMEWORK_DSN"], autocommit=True) as conn:
        conn.execute(
            "INSERT INTO pgq_test_runs (job_key, job_id, phase, pid) VALUES (%s, %s, %s, %s)",
            (key, str(job_id), phase, os.getpid()),
        )


@app.task(name="job", pass_context=True)
def job(context: Any, key: str, mode: str) -> None:
    """Fast, slow (hangs until the fix is deployed) or failing (until the fix): see behaviour.js."""
    fixed = os.environ.get("PGQ_TEST_FIXED") == "1"
    job_id = context.job.id
    record(key, job_id, "start")
    if (mode == "slow" and not fixed) or mode == "hold":
        time.sleep(3600)
    if mode == "fail" and not fixed:
        record(key, job_id, "fail")
        raise RuntimeError(f"always fails: {key}")
    record(key, job_id, "done")


def defer(dsn: str, *, key: str, mode: str, queue: str, schedule_in_s: int | None = None) -> int:
    """Enqueue with procrastinate's own client (App.configure_task(...).defer), as a web app would."""
    enqueuer = procrastinate.App(connector=procrastinate.SyncPsycopgConnector(conninfo=dsn))
    with enqueuer.open():
        options: dict[str, Any] = {"queue": queue}
        if schedule_in_s is not None:
            options["schedule_in"] = {"seconds": schedule_in_s}
        return int(enqueuer.configure_task("job", **options).defer(key=key, mode=mode))


def main() -> None:
    if sys.argv[1:] != ["worker"]:
        raise SystemExit("usage: python -m frameworks.procrastinate_client worker")
    exit_after_lifetime()
    print(f"READY {os.getpid()}", flush=True)
    app.run_worker(
        queues=worker_queues(),
        concurrency=4,
        update_heartbeat_interval=HEARTBEAT_S,
        stalled_worker_timeout=STALLED_S,
        fetch_job_polling_interval=0.2,
    )


if __name__ == "__main__":
    main()


class Procrastinate:
    """The acceptance-flow driver: schema by procrastinate's CLI, jobs by task.defer, a real worker."""

    kind = "procrastinate"
    stalled_after_s = STALLED_S

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.env = {"PGQ_FRAMEWORK_DSN": dsn}

    @staticmethod
    def version() -> str:
        return require_python_client("procrastinate")

    def install(self) -> None:
        run_client(
            [sys.executable, "-m", "procrastinate", f"--app={__name__}.app", "schema", "--apply"],
            env={**self.env, "PYTHONPATH": str(TESTS_DIR)},
        )

    def start_worker(
        self,
        procs: Processes,
        *,
        fixed: bool,
        queues: Iterable[str] | None = None,
        lifetime_s: float | None = None,
    ) -> Worker:
        return procs.start(
            "procrastinate",
            python_argv(__name__, "worker"),
            ready="READY",
            **worker_env(fixed=fixed, queues=queues, lifetime_s=lifetime_s),
            **self.env,
        )

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:
        return str(defer(self.dsn, key=key, mode=queue, queue=queue, schedule_in_s=in_seconds))

    def is_dead(self, job_id: str) -> bool:
        status = scalar(self.dsn, "SELECT status::text FROM procrastinate_jobs WHERE id = %s", (int(job_id),))
        return status == "failed"

    def make_stuck(self, job_id: str) -> None:
        """Wait until the killed worker's job is stalled by procrastinate's own rule: its worker's
        heartbeat older than the stalled threshold, or its worker row gone (a worker starting up,
        such as the live one beside it, prunes stalled workers' rows, which nulls worker_id)."""
        wait_for(
            "the killed worker's job to be stalled",
            lambda: scalar(
                self.dsn,
                "SELECT w.id IS NULL OR w.last_heartbeat < now() - make_interval(secs => %s)"
                " FROM procrastinate_jobs j LEFT JOIN procrastinate_workers w ON w.id = j.worker_id"
                " WHERE j.id = %s AND j.status = 'doing'",
                (STALLED_S, int(job_id)),
            ),
        )

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each job's (id, queue, canonical state), by a full scan written from procrastinate's own rules
        (stalled: doing, and its worker is gone or silent for the stalled threshold)."""
        return truth_rows(
            self.dsn,
            f"""
            SELECT j.id, j.queue_name,
                   CASE
                     WHEN j.status = 'todo' AND coalesce(j.scheduled_at <= now(), true) THEN 'ready'
                     WHEN j.status = 'todo' THEN 'scheduled'
                     WHEN j.status = 'doing' AND (w.id IS NULL
                          OR w.last_heartbeat < now() - interval '{STALLED_S} seconds') THEN 'stuck'
                     WHEN j.status = 'doing' THEN 'running'
                     WHEN j.status = 'failed' THEN 'dead'
                     WHEN j.status = 'succeeded' THEN 'done'
                     ELSE j.status::text
                   END AS state
            FROM procrastinate_jobs j LEFT JOIN procrastinate_workers w ON w.id = j.worker_id
            ORDER BY 1
            """,
            conn,
        )
