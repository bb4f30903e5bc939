"""pg-boss 10 (Node 20), 11 and 12 (Node 22) through their own Node clients (node/pgboss.js), for the
acceptance flow."""

from __future__ import annotations

import json
import time
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

SLOW_EXPIRE_S = 2  # expireInSeconds of the slow job: pg-boss's timeout, which makes it stuck
HEARTBEAT_S = 10  # 12.x: heartbeatSeconds of the slow and held jobs (pg-boss's minimum is 10)


class PgBoss:
    kind = "pgboss"
    schema = "pgboss"
    detected = "10.x (schema 24)"  # the layout detection names
    package = "pg-boss"  # the npm package (or alias) node/pgboss.js loads
    node = "node"  # the machine's Node 20

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.env = {
            "PGQ_TEST_PG": json.dumps(node_connection(dsn)),
            "PGQ_TEST_SCHEMA": self.schema,
            "PGQ_TEST_PGBOSS_PACKAGE": self.package,
        }

    @staticmethod
    def version() -> str:
        return require_node_client("pg-boss")

    def _node(self, *args: str) -> str:
        return run_client([self.node, str(NODE_DIR / "pgboss.js"), *args], env=self.env)

    def send_options(self, queue: str) -> dict[str, object]:
        """10.x: the slow job times out after SLOW_EXPIRE_S, pg-boss's rule that makes it stuck."""
        return {"expireInSeconds": SLOW_EXPIRE_S} if queue == "slow" else {}

    def install(self) -> None:
        self._node("migrate")

    def batched(self, size: int) -> None:
        """The workers started from now on fetch `size` jobs at a time (PGQ_TEST_BATCH)."""
        self.env["PGQ_TEST_BATCH"] = str(size)

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
            self.package,
            [self.node, str(NODE_DIR / "pgboss.js"), "worker"],
            ready="READY",
            **worker_env(fixed=fixed, queues=queues, lifetime_s=lifetime_s),
            PGQ_TEST_SUPERVISE="1" if fixed else "0",
            **self.env,
        )

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:
        options = self.send_options(queue)
        if queue == "fail":
            options["retryLimit"] = 0
        if in_seconds is not None:
            options["startAfter"] = in_seconds
        spec = {"queue": queue, "data": {"key": key, "mode": queue}, "options": options}
        return self._node("send", json.dumps(spec)).strip()

    def enqueue_failing(self, prefix: str, suffix: str, count: int) -> int:
        """pg-boss's insert() of `count` always-failing jobs on queue `fail`, no retry, keyed
        "<prefix>-<i> <suffix>" (the error pg-boss records in output names the key)."""
        spec = {"queue": "fail", "prefix": prefix, "suffix": suffix, "count": count, "retryLimit": 0}
        return int(self._node("insert", json.dumps(spec)).strip())

    def insert(self, queue: str, count: int, *, in_seconds: int | None = None) -> int:
        """pg-boss's insert() of `count` jobs on `queue` (due in `in_seconds`, else now)."""
        spec: dict[str, object] = {"queue": queue, "prefix": queue, "suffix": "", "count": count}
        if in_seconds is not None:
            spec["startAfter"] = in_seconds
        return int(self._node("insert", json.dumps(spec)).strip())

    def monitor(self) -> list[dict[str, Any]]:
        """pg-boss's own monitor (12.x), run until it has counted every queue: each queue's name and
        monitor_on."""
        return list(json.loads(self._node("monitor")))

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


class PgBoss12(PgBoss):
    """pg-boss 12 (npm alias pg-boss-12) on Node 22. The slow and held jobs are sent with
    heartbeatSeconds, and the workers refresh heartbeats every second: the held job's worker is seen
    alive, and the slow job, whose worker is killed, is stuck once its heartbeat is HEARTBEAT_S old
    (pg-boss's failJobsByHeartbeat rule), its worker gone."""

    detected = "12.x (schema 46)"  # pg-boss 12.38.0
    package = "pg-boss-12"
    node = str(NODE22)
    layout = "pg-boss-12"  # fills.py's rows for this schema
    heartbeats = True  # schema 30 (12.12) and later
    blocked = True  # schema 31 (12.19) and later

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn)
        self.env["PGQ_TEST_HEARTBEAT_REFRESH_S"] = "1"

    @classmethod
    def version(cls) -> str:
        return require_node_client(cls.package, node22=True)

    def send_options(self, queue: str) -> dict[str, object]:
        return {"heartbeatSeconds": HEARTBEAT_S} if queue in ("slow", "hold") else {}

    def make_stuck(self, job_id: str) -> None:
        """Wait until the killed worker's heartbeat on the slow job is HEARTBEAT_S old."""
        lost_in = scalar(
            self.dsn,
            "SELECT extract(epoch FROM heartbeat_on + heartbeat_seconds * interval '1 second' - now())"
            " FROM pgboss.job WHERE id = %s AND state = 'active'",
            (job_id,),
        )
        assert lost_in is not None, f"job {job_id} is not active with a heartbeat"
        time.sleep(max(0.0, float(lost_in)) + 0.2)

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each job's (id, queue, canonical state), by a full scan, from pg-boss 11 and 12's own rules
        (heartbeats from schema 30, flows' blocked from 31)."""
        return truth_rows(self.dsn, modern_truth(heartbeats=self.heartbeats, blocked=self.blocked), conn)


class PgBoss12ByTimeout(PgBoss12):
    """pg-boss 12 for the conformance case, which populates once per check: the slow job is stuck by
    its timeout (expireInSeconds, 2 s) rather than by its heartbeat (10 s at least), so its holder is
    `unknown`; the held job keeps its heartbeat (`alive`). The acceptance flow covers `gone`."""

    def send_options(self, queue: str) -> dict[str, object]:
        return PgBoss.send_options(self, queue) if queue == "slow" else super().send_options(queue)

    def make_stuck(self, job_id: str) -> None:
        """Wait out the slow job's expire_seconds."""
        expires_in = scalar(
            self.dsn,
            "SELECT extract(epoch FROM started_on + expire_seconds * interval '1 second' - now())"
            " FROM pgboss.job WHERE id = %s",
            (job_id,),
        )
        time.sleep(max(0.0, float(expires_in)) + 0.2)


class PgBoss1212(PgBoss12):
    """pg-boss 12.12.0 (npm alias pg-boss-12-12, schema 30) on Node 22: heartbeats, no flows yet."""

    detected = "12.x (schema 30)"
    package = "pg-boss-12-12"
    layout = "pg-boss-12.12"
    blocked = False


class PgBoss11(PgBoss12ByTimeout):
    """pg-boss 11.1.1 (npm alias pg-boss-11, schema 26) on Node 22: no heartbeats, so the slow job is
    stuck by its timeout (expireInSeconds) and every holder's liveness is unknown."""

    detected = "11.1-12.5 (schema 26)"
    package = "pg-boss-11"
    layout = "pg-boss-11"
    heartbeats = False
    blocked = False

    def __init__(self, dsn: str) -> None:
        super().__init__(dsn)
        del self.env["PGQ_TEST_HEARTBEAT_REFRESH_S"]

    def send_options(self, queue: str) -> dict[str, object]:
        return PgBoss.send_options(self, queue)


def modern_truth(*, heartbeats: bool, blocked: bool) -> str:
    """Ground truth for pg-boss 11 and 12: each job's canonical state by a full scan, written from
    pg-boss's own fetch and supervisor SQL (not from pgq-top's statements)."""
    blocked_case = "WHEN state < 'active' AND blocked THEN 'blocked'" if blocked else ""
    heartbeat_lost = (
        "OR (heartbeat_seconds IS NOT NULL"
        " AND heartbeat_on + heartbeat_seconds * interval '1 second' < now())"
        if heartbeats
        else ""
    )
    return f"""
        SELECT id::text, name,
               CASE
                 {blocked_case}
                 WHEN state < 'active' AND start_after <= now() THEN 'ready'
                 WHEN state < 'active' THEN 'scheduled'
                 WHEN state = 'active' AND (started_on + expire_seconds * interval '1 second' < now()
                      {heartbeat_lost}) THEN 'stuck'
                 WHEN state = 'active' THEN 'running'
                 WHEN state = 'failed' THEN 'dead'
                 WHEN state = 'completed' THEN 'done'
                 ELSE state::text
               END AS state
        FROM pgboss.job
        ORDER BY 1
        """
