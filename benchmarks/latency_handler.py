"""Handlers for bench_latency.py: each records, at the moment it starts, how long ago its job was
enqueued (the payload carries the producer's time.time()), one line per job in $PGQ_LATENCY_FILE."""

from __future__ import annotations

import os
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from pgq_tui.queue import Job


def _record(enqueued_at: float) -> None:
    started = time.time()
    with open(os.environ["PGQ_LATENCY_FILE"], "a") as fh:
        fh.write(f"{(started - enqueued_at) * 1000:.3f}\n")


def record(job: Job) -> None:
    """pgq-top's worker handler."""
    _record(float(job.payload["t"]))


@asynccontextmanager
async def pgqueuer_app() -> AsyncIterator[object]:
    """pgqueuer's worker factory (what `pgq run bench:factory` would load): one asyncpg connection,
    one entrypoint that records the latency of each job."""
    import asyncpg
    from pgqueuer import AsyncpgDriver, PgQueuer
    from pgqueuer.models import Job as PgqJob

    conn = await asyncpg.connect(**asyncpg_params(os.environ["PGQ_LATENCY_DSN"]))
    app = PgQueuer(AsyncpgDriver(conn))

    @app.entrypoint("latency")
    async def latency(job: PgqJob) -> None:
        _record(float(job.payload.decode()))

    try:
        yield app
    finally:
        await conn.close()


def asyncpg_params(dsn: str) -> dict[str, object]:
    """asyncpg's connect() keywords for a libpq DSN (it does not read keyword=value strings)."""
    from psycopg.conninfo import conninfo_to_dict

    d = conninfo_to_dict(dsn)
    return {
        "host": d.get("host"),
        "port": int(d.get("port") or 5432),
        "user": d.get("user"),
        "database": d.get("dbname"),
        "password": d.get("password"),
    }
