"""Graphile Worker 0.17 (Node 20) and 0.18 (Node 22) through their own Node clients (node/graphile.js),
for the acceptance flow."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import psycopg

from .harness import (
    NODE22,
    NODE_DIR,
    Processes,
    Worker,
    node_connection,
    require_node_client,
    run_client,
    scalar,
    truth_rows,
    worker_env,
)


class Graphile:
    kind = "graphile"
    schema = "graphile_worker"
    detected = "0.17"  # the release detection names (migration 19)
    package = "graphile-worker"  # the npm package (or alias) node/graphile.js loads
    node = "node"  # the machine's Node 20

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.env = {
            "PGQ_TEST_PG": json.dumps(node_connection(dsn)),
            "PGQ_TEST_GRAPHILE_PACKAGE": self.package,
        }
        self.continuous: list[Worker] = []  # pools that clear expired locks (see make_stuck)

    @staticmethod
    def version() -> str:
        return require_node_client("graphile-worker")

    def _node(self, *args: str) -> str:
        return run_client([self.node, str(NODE_DIR / "graphile.js"), *args], env=self.env)

    def install(self) -> None:
        self._node("migrate")

    def start_worker(
        self,
        procs: Processes,
        *,
        fixed: bool,
        queues: Iterable[str] | None = None,
        lifetime_s: float | None = None,
    ) -> Worker:
        """A continuous pool (`graphile-worker`), except the live worker of the `hold` queue: that one
        runs once (`graphile-worker --once`), so that it never clears the lock make_stuck backdates.
        Its job must be waiting when it starts (a run-once pool exits when nothing is due)."""
        once = tuple(queues or ()) == ("hold",)
        worker = procs.start(
            self.package,
            [self.node, str(NODE_DIR / "graphile.js"), "once" if once else "worker"],
            ready="READY",
            **worker_env(fixed=fixed, queues=queues, lifetime_s=lifetime_s),
            **self.env,
        )
        if not once:
            self.continuous.append(worker)
        return worker

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:
        """queue is the task identifier (fast, slow, fail, later); a failing job gets one attempt."""
        spec = {
            "task": queue,
            "payload": {"key": key, "mode": queue},
            "maxAttempts": 1 if queue == "fail" else 25,
            "runInSeconds": in_seconds,
        }
        return self._node("add", json.dumps(spec)).strip()

    def enqueue_failing(self, prefix: str, suffix: str, count: int) -> int:
        """addJobs() of `count` always-failing jobs of task `fail`, one attempt each, keyed
        "<prefix>-<i> <suffix>" (the last_error Graphile records names the key)."""
        spec = {"task": "fail", "prefix": prefix, "suffix": suffix, "count": count, "maxAttempts": 1}
        return int(self._node("add-many", json.dumps(spec)).strip())

    def is_dead(self, job_id: str) -> bool:
        return bool(
            scalar(
                self.dsn,
                "SELECT locked_at IS NULL AND attempts >= max_attempts FROM graphile_worker._private_jobs"
                " WHERE id = %s",
                (int(job_id),),
            )
        )

    def make_stuck(self, job_id: str) -> None:
        """Graphile's lock expiry is a fixed 4 hours: simulated by backdating locked_at (and the
        lock of its named queue, if any) by SQL, the one thing in this flow not done by the clock.

        Every continuous pool clears locks past that expiry once at a random moment in its first
        minute, then every 8-10 minutes (graphile.js logs it as RESET-LOCKED): one alive now would
        unlock this job partway through the test, which then sees it ready instead of stuck (the
        flake this guard replaces). So no continuous pool may be alive here; the live worker beside
        the stuck job runs once, and a run-once pool never clears locks."""
        alive = [w.pid for w in self.continuous if w.alive()]
        assert not alive, f"continuous Graphile pools {alive} would clear the backdated lock within a minute"
        backdated = scalar(
            self.dsn,
            "UPDATE graphile_worker._private_jobs SET locked_at = locked_at - interval '4 hours 1 minute'"
            " WHERE id = %s AND locked_at IS NOT NULL RETURNING id",
            (int(job_id),),
        )
        assert backdated == int(job_id), f"job {job_id} is not locked: nothing to make stuck"

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each job's (id, task, canonical state), by a full scan written from Graphile's documented rules."""
        return truth_rows(
            self.dsn,
            """
            SELECT j.id, t.identifier,
                   CASE
                     WHEN j.locked_at IS NOT NULL AND j.locked_at < now() - interval '4 hours' THEN 'stuck'
                     WHEN j.locked_at IS NOT NULL THEN 'running'
                     WHEN j.attempts >= j.max_attempts THEN 'dead'
                     WHEN j.run_at <= now() THEN 'ready'
                     ELSE 'scheduled'
                   END AS state
            FROM graphile_worker._private_jobs j JOIN graphile_worker._private_tasks t ON t.id = j.task_id
            ORDER BY 1
            """,
            conn,
        )

    def state(self, job_id: str) -> str | None:
        """'locked', 'dead', 'waiting', or None once the row is gone (Graphile deletes done jobs)."""
        return scalar(
            self.dsn,
            "SELECT CASE WHEN locked_at IS NOT NULL THEN 'locked' WHEN attempts >= max_attempts THEN 'dead'"
            " ELSE 'waiting' END FROM graphile_worker._private_jobs WHERE id = %s",
            (int(job_id),),
        )


class Graphile18(Graphile):
    """Graphile Worker 0.18 (npm alias graphile-worker-18) on Node 22: same schema, same rules."""

    detected = "0.18"  # migration 20
    package = "graphile-worker-18"
    node = str(NODE22)

    @staticmethod
    def version() -> str:
        return require_node_client("graphile-worker-18", node22=True)
