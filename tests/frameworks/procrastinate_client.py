"""procrastinate 3.10, driven as its users drive it.

`app` is the procrastinate App its CLI loads (`procrastinate --app=frameworks.procrastinate_client.app
schema --apply`); the connection comes from PGQ_FRAMEWORK_DSN. `python -m frameworks.procrastinate_client
worker` runs a worker with a short heartbeat, so a killed worker is stalled within seconds.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

import procrastinate
import psycopg

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
    if mode == "slow" and not fixed:
        time.sleep(3600)
    if mode == "fail" and not fixed:
        record(key, job_id, "fail")
        raise RuntimeError(f"always fails: {key}")
    record(key, job_id, "done")


def defer(dsn: str, *, key: str, mode: str, queue: str, schedule_in_s: int | None = None) -> int:
    """Enqueue with procrastinate's own client (task.configure(...).defer)."""
    with app.with_connector(procrastinate.PsycopgConnector(conninfo=dsn)).open() as opened:
        options: dict[str, Any] = {"queue": queue}
        if schedule_in_s is not None:
            options["schedule_in"] = {"seconds": schedule_in_s}
        return int(opened.tasks["job"].configure(**options).defer(key=key, mode=mode))


def main() -> None:
    if sys.argv[1:] != ["worker"]:
        raise SystemExit("usage: python -m frameworks.procrastinate_client worker")
    print(f"READY {os.getpid()}", flush=True)
    app.run_worker(
        concurrency=4,
        update_heartbeat_interval=HEARTBEAT_S,
        stalled_worker_timeout=STALLED_S,
        fetch_job_polling_interval=0.2,
    )


if __name__ == "__main__":
    main()
