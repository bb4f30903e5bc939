"""pg-boss 10 through its own Node client (node/pgboss.js), for the acceptance flow."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

import psycopg

from .harness import (
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

SLOW_EXPIRE_S = 2  # expireInSeconds of the slow job: pg-boss's timeout, which makes it stuck


class PgBoss:
    kind = "pgboss"
    schema = "pgboss"

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.env = {"PGQ_TEST_PG": json.dumps(node_connection(dsn)), "PGQ_TEST_SCHEMA": self.schema}

    @staticmethod
    def version() -> str:
        return require_node_client("pg-boss")

    def _node(self, *args: str) -> str:
        return run_client(["node", str(NODE_DIR / "pgboss.js"), *args], env=self.env)

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
        # The first worker runs without pg-boss's supervisor, which would otherwise fail the expired
        # slow job by timeout on its own schedule; the fresh one runs with it, as in production.
        return procs.start(
            "pg-boss",
            ["node", str(NODE_DIR / "pgboss.js"), "worker"],
            ready="READY",
            **worker_env(fixed=fixed, queues=queues, lifetime_s=lifetime_s),
            PGQ_TEST_SUPERVISE="1" if fixed else "0",
            **self.env,
        )

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:
        options: dict[str, object] = {}
        if queue == "fail":
            options["retryLimit"] = 0
        if queue == "slow":
            options["expireInSeconds"] = SLOW_EXPIRE_S
        if in_seconds is not None:
            options["startAfter"] = in_seconds
        spec = {"queue": queue, "data": {"key": key, "mode": queue}, "options": options}
        return self._node("send", json.dumps(spec)).strip()

    def is_dead(self, job_id: str) -> bool:
        return scalar(self.dsn, "SELECT state::text FROM pgboss.job WHERE id = %s", (job_id,)) == "failed"

    def make_stuck(self, job_id: str) -> None:
        """Wait out the slow job's own expireInSeconds: pg-boss calls an active job past it expired."""
        expires_in = scalar(
            self.dsn,
            "SELECT extract(epoch FROM started_on + expire_in - now()) FROM pgboss.job WHERE id = %s",
            (job_id,),
        )
        time.sleep(max(0.0, float(expires_in)) + 0.2)

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each job's (id, queue, canonical state), by a full scan, from pg-boss's documented states."""
        return truth_rows(
            self.dsn,
            """
            SELECT id::text, name,
                   CASE
                     WHEN state < 'active' AND start_after < now() THEN 'ready'
                     WHEN state < 'active' THEN 'scheduled'
                     WHEN state = 'active' AND started_on + expire_in < now() THEN 'stuck'
                     WHEN state = 'active' THEN 'running'
                     WHEN state = 'failed' THEN 'dead'
                     WHEN state = 'completed' THEN 'done'
                     ELSE state::text
                   END AS state
            FROM pgboss.job
            ORDER BY 1
            """,
            conn,
        )
