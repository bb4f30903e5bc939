"""pgqueuer 1.6, driven as its users drive it.

`python -m frameworks.pgqueuer_client worker` runs a worker through `pgqueuer.run`, the function
`pgq run` calls (the `pgq run` command itself breaks on typer 0.29, see QUEUE_FRAMEWORKS.md),
with a short heartbeat timeout so a killed worker's job is stale within seconds. The `fail` entrypoint
holds its failures (on_failure="hold"), so a dead job stays in the table for pgqueuer's requeue.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import AsyncIterator, Iterable
from datetime import timedelta
from typing import Any

import asyncpg
import pgqueuer
import psycopg
from pgqueuer import PgQueuer
from pgqueuer.db import AsyncpgDriver
from pgqueuer.models import Job
from pgqueuer.queries import Queries
from psycopg.conninfo import conninfo_to_dict

from .harness import (
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

HEARTBEAT_TIMEOUT_S = 2.0  # pgqueuer's default is 30 s


def asyncpg_params(dsn: str) -> dict[str, Any]:
    params = conninfo_to_dict(dsn)
    out: dict[str, Any] = {"host": params.get("host"), "database": params.get("dbname")}
    if params.get("port"):
        out["port"] = int(params["port"])
    for libpq, ours in (("user", "user"), ("password", "password")):
        if params.get(libpq):
            out[ours] = params[libpq]
    return out


async def connect(dsn: str) -> asyncpg.Connection:
    return await asyncpg.connect(**asyncpg_params(dsn))


async def record(conn: asyncpg.Pool, key: str, job_id: int, phase: str) -> None:
    await conn.execute(
        "INSERT INTO pgq_test_runs (job_key, job_id, phase, pid) VALUES ($1, $2, $3, $4)",
        key,
        str(job_id),
        phase,
        os.getpid(),
    )


@contextlib.asynccontextmanager
async def factory() -> AsyncIterator[PgQueuer]:
    dsn = os.environ["PGQ_FRAMEWORK_DSN"]
    conn = await connect(dsn)
    side = await asyncpg.create_pool(
        **asyncpg_params(dsn), min_size=1, max_size=4
    )  # handlers run concurrently
    pgq = PgQueuer(AsyncpgDriver(conn))
    fixed = os.environ.get("PGQ_TEST_FIXED") == "1"

    async def perform(job: Job) -> None:
        key = (job.payload or b"").decode()
        await record(side, key, job.id, "start")
        if (job.entrypoint == "slow" and not fixed) or job.entrypoint == "hold":
            await asyncio.sleep(3600)
        if job.entrypoint == "fail" and not fixed:
            await record(side, key, job.id, "fail")
            raise RuntimeError(f"always fails: {key}")
        await record(side, key, job.id, "done")

    for name in worker_queues():
        pgq.entrypoint(name, on_failure="hold" if name == "fail" else "delete")(perform)
    exit_after_lifetime()
    print(f"READY {os.getpid()}", flush=True)
    try:
        yield pgq
    finally:
        await side.close()
        await conn.close()


async def enqueue(dsn: str, entrypoint: str, key: str, *, execute_after_s: int | None = None) -> int:
    """Enqueue with pgqueuer's own client (Queries.enqueue); the payload is the job's key."""
    conn = await connect(dsn)
    try:
        after = timedelta(seconds=execute_after_s) if execute_after_s is not None else None
        ids = await Queries(AsyncpgDriver(conn)).enqueue(entrypoint, key.encode(), execute_after=after)
        return int(ids[0])
    finally:
        await conn.close()


async def enqueue_many(dsn: str, entrypoint: str, keys: list[str]) -> int:
    """Enqueue every key in one Queries.enqueue call (its list form); the payload is the job's key."""
    conn = await connect(dsn)
    try:
        n = len(keys)
        ids = await Queries(AsyncpgDriver(conn)).enqueue(
            [entrypoint] * n, [k.encode() for k in keys], [0] * n, [None] * n
        )
        return len(ids)
    finally:
        await conn.close()


def main() -> None:
    if sys.argv[1:] != ["worker"]:
        raise SystemExit("usage: python -m frameworks.pgqueuer_client worker")
    asyncio.run(
        pgqueuer.run(
            factory,
            dequeue_timeout=timedelta(seconds=1),
            batch_size=1,
            heartbeat_timeout=timedelta(seconds=HEARTBEAT_TIMEOUT_S),
        )
    )


if __name__ == "__main__":
    main()


class Pgqueuer:
    """The acceptance-flow driver: schema by `pgq install`, jobs by Queries.enqueue, a real worker."""

    kind = "pgqueuer"
    stalled_after_s = HEARTBEAT_TIMEOUT_S

    def __init__(self, dsn: str) -> None:
        self.dsn = dsn
        self.env = {"PGQ_FRAMEWORK_DSN": dsn}

    @staticmethod
    def version() -> str:
        return require_python_client("pgqueuer")

    def install(self) -> None:
        params = conninfo_to_dict(self.dsn)
        env = {"PGHOST": str(params.get("host") or ""), "PGDATABASE": str(params.get("dbname") or "")}
        for libpq, var in (("port", "PGPORT"), ("user", "PGUSER"), ("password", "PGPASSWORD")):
            if params.get(libpq):
                env[var] = str(params[libpq])
        run_client([sys.executable, "-m", "pgqueuer", "install"], env=env)

    def start_worker(
        self,
        procs: Processes,
        *,
        fixed: bool,
        queues: Iterable[str] | None = None,
        lifetime_s: float | None = None,
    ) -> Worker:
        return procs.start(
            "pgqueuer",
            python_argv(__name__, "worker"),
            ready="READY",
            **worker_env(fixed=fixed, queues=queues, lifetime_s=lifetime_s),
            **self.env,
        )

    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str:
        return str(asyncio.run(enqueue(self.dsn, queue, key, execute_after_s=in_seconds)))

    def enqueue_failing(self, prefix: str, suffix: str, count: int) -> int:
        """Queries.enqueue of `count` always-failing jobs on entrypoint `fail` (held when they fail),
        keyed "<prefix>-<i> <suffix>" (the traceback pgqueuer logs names the key)."""
        keys = [f"{prefix}-{i} {suffix}" for i in range(count)]
        return asyncio.run(enqueue_many(self.dsn, "fail", keys))

    def is_dead(self, job_id: str) -> bool:
        return scalar(self.dsn, "SELECT status::text FROM pgqueuer WHERE id = %s", (int(job_id),)) == "failed"

    def make_stuck(self, job_id: str) -> None:
        """Wait until the killed worker's job has no heartbeat for pgqueuer's heartbeat timeout."""
        wait_for(
            "the killed worker's job heartbeat to go stale",
            lambda: scalar(
                self.dsn,
                "SELECT heartbeat < now() - make_interval(secs => %s) FROM pgqueuer WHERE id = %s",
                (HEARTBEAT_TIMEOUT_S, int(job_id)),
            ),
        )

    def truth(self, conn: psycopg.Connection | None = None) -> list[tuple[Any, str, str]]:
        """Each job's (id, entrypoint, canonical state), by a full scan written from pgqueuer's own rules."""
        return truth_rows(
            self.dsn,
            f"""
            SELECT id, entrypoint,
                   CASE
                     WHEN status = 'queued' AND execute_after < now() THEN 'ready'
                     WHEN status = 'queued' THEN 'scheduled'
                     WHEN status = 'picked'
                          AND heartbeat < now() - interval '{HEARTBEAT_TIMEOUT_S} seconds' THEN 'stuck'
                     WHEN status = 'picked' THEN 'running'
                     WHEN status = 'failed' THEN 'dead'
                     ELSE status::text
                   END AS state
            FROM pgqueuer
            ORDER BY 1
            """,
            conn,
        )
