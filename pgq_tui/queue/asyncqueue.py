"""AsyncJobQueue: JobQueue's API and semantics on psycopg's AsyncConnection, for asyncio applications.

Statements, parameters and result shapes come from `QueueCore`, shared with the sync JobQueue; only
the I/O differs. One connection per AsyncJobQueue, autocommit, reopened after it breaks. Like a
JobQueue it is not safe for concurrent use: give each task its own (they are cheap to hold).

`install()` is DDL run once per deployment; it runs the sync installer in a thread on its own
short-lived connection rather than keeping a second copy of it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg import sql
from psycopg.rows import dict_row, tuple_row

from pgq_tui.db.connect import connect, connect_kwargs, server_settings
from pgq_tui.db.link import open_async_link
from pgq_tui.errors import describe
from pgq_tui.jobtable import schema as schema_mod
from pgq_tui.jobtable import statements as st
from pgq_tui.queue.job import Job
from pgq_tui.queue.jobqueue import BATCH, COPY_FROM, QueueCore, UndecodedJsonb, has_rows


class AsyncJobQueue(QueueCore):
    _conn: psycopg.AsyncConnection | None = None
    _claims: psycopg.AsyncCursor[tuple[Any, ...]] | None = None
    _pooled = False

    # -- plumbing -------------------------------------------------------------------------------
    async def connection(self) -> psycopg.AsyncConnection:
        """The connection, (re)opened on demand: a worker survives a server restart."""
        if self._conn is None or self._conn.closed or self._conn.broken:
            await self.close()
            settings = dict(self._settings)
            kwargs = connect_kwargs(self.conninfo, application_name=settings.pop("application_name"))
            try:
                conn = await psycopg.AsyncConnection.connect(
                    self.conninfo,
                    autocommit=True,
                    **kwargs,  # type: ignore[arg-type]
                )
                self._pooled = await open_async_link(conn, server_settings(**settings))
            except psycopg.Error as exc:
                raise describe(exc) from None
            self._conn = conn
        return self._conn

    async def close(self) -> None:
        if self._conn is not None:
            await self._conn.close()
            self._conn = None

    async def __aenter__(self) -> AsyncJobQueue:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _execute(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        conn = await self.connection()
        async with conn.cursor(row_factory=dict_row) as cur:
            await cur.execute(self._text(name, conn), self._params(params), prepare=not self._pooled)
            return await cur.fetchall() if has_rows(cur) else []

    async def _rows(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            return await self._execute(name, params)
        except psycopg.errors.UndefinedTable as exc:
            raise describe(exc, table=self.qualified, hint=schema_mod.SETUP_HINT) from None

    async def _paused_rows(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """A statement that honours pauses; on a table without `<table>_pauses`, its unpausable form."""
        chosen = self._pausable(name)
        try:
            return await self._execute(chosen, params)
        except psycopg.errors.UndefinedTable as exc:
            if self._pauses_missing(exc, chosen):
                return await self._rows(f"{name}_UNPAUSABLE", params)
            raise describe(exc, table=self.qualified, hint=schema_mod.SETUP_HINT) from None

    async def _claimed(self, name: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """A claim's rows: tuples, in binary, payloads left Undecoded (see JobQueue._claimed)."""
        chosen = self._pausable(name)
        conn = await self.connection()
        cur = self._claims
        if cur is None or cur.connection is not conn:
            cur = self._claims = conn.cursor(row_factory=tuple_row)
            cur.adapters.register_loader("jsonb", UndecodedJsonb)
        try:
            await cur.execute(
                self._text(chosen, conn, int(params["limit"])),
                self._params(params),
                prepare=not self._pooled,
                binary=True,
            )
            return await cur.fetchall()
        except psycopg.errors.UndefinedTable as exc:
            if self._pauses_missing(exc, chosen):
                return await self._claimed(name, params)
            raise describe(exc, table=self.qualified, hint=schema_mod.SETUP_HINT) from None

    # -- schema ---------------------------------------------------------------------------------
    async def install(self, say: Callable[[str], None] | None = None, *, adopt: bool = False) -> list[str]:
        """Create or upgrade the table, indexes, counters and autovacuum settings (idempotent);
        returns what it did. On a table with rows, missing indexes are built CONCURRENTLY. An existing
        table that is not pgq-top's is refused (PgqError, nothing changed) unless `adopt`."""

        def run() -> list[str]:
            with connect(self.conninfo, **self._settings) as conn:
                return schema_mod.install(conn, self.table, self.schema, say, adopt=adopt)

        return await asyncio.to_thread(run)

    # -- producers ------------------------------------------------------------------------------
    async def enqueue(
        self,
        queue: str,
        payloads: Sequence[Any],
        *,
        run_at: datetime | None = None,
        priority: int = 0,
        max_attempts: int = 5,
    ) -> list[int]:
        """Insert jobs in one transaction; returns their ids in payload order (see JobQueue.enqueue)."""
        if not payloads:
            return []
        conn = await self.connection()
        async with conn.transaction():
            if len(payloads) >= COPY_FROM:
                return await self._enqueue_copy(conn, queue, payloads, run_at, priority, max_attempts)
            ids: list[int] = []
            for params in self._enqueue_chunks(queue, payloads, run_at, priority, max_attempts):
                ids.extend(r["id"] for r in await self._rows("ENQUEUE", params))
            return ids

    async def _enqueue_copy(
        self,
        conn: psycopg.AsyncConnection,
        queue: str,
        payloads: Sequence[Any],
        run_at: datetime | None,
        priority: int,
        max_attempts: int,
    ) -> list[int]:
        table = sql.Identifier(self.schema, self.table).as_string(conn)
        rows = await self._rows("RESERVE_IDS", {"table": table, "n": len(payloads)})
        ids = sorted(r["id"] for r in rows)
        when = run_at or (await (await conn.execute("SELECT now()")).fetchone())[0]  # type: ignore[index]
        async with conn.cursor() as cur, cur.copy(self._q("COPY_JOBS")) as copy:
            copy.set_types(st.COPY_TYPES)
            for row in self._copy_rows(ids, queue, payloads, when, priority, max_attempts):
                await copy.write_row(row)
        await self._rows("COUNT_ENQUEUED", {"queue": queue, "n": len(payloads), "run_at": when})
        return ids

    # -- workers --------------------------------------------------------------------------------
    async def claim(self, queue: str, *, limit: int = 10, lease: float = 30.0) -> list[Job]:
        """Lease up to `limit` ready jobs: highest priority first, then oldest run_at (best effort)."""
        return self._jobs(queue, await self._claimed("CLAIM", self._claim_params(queue, limit, lease)))

    async def complete(self, jobs: Sequence[Job], *, keep: bool = False) -> int:
        """Finish jobs we still hold; returns how many were accepted (see JobQueue.complete)."""
        if not jobs:
            return 0
        rows = await self._rows("COMPLETE_KEEP" if keep else "COMPLETE_DELETE", self._fence(jobs))
        return self._completed(jobs, (r["id"] for r in rows))

    async def complete_and_claim(
        self, jobs: Sequence[Job], queue: str, *, limit: int = 10, lease: float = 30.0, keep: bool = False
    ) -> tuple[int, list[Job]]:
        """complete(jobs) then claim(queue) in one statement (see JobQueue.complete_and_claim)."""
        if not jobs:
            return 0, await self.claim(queue, limit=limit, lease=lease)
        name = "COMPLETE_KEEP_CLAIM" if keep else "COMPLETE_DELETE_CLAIM"
        params = {**self._fence(jobs), **self._claim_params(queue, limit, lease)}
        return self._completed_claimed(jobs, queue, await self._claimed(name, params))

    async def fail(
        self, job: Job, error: str, *, backoff: float | None = None
    ) -> Literal["pending", "failed"] | None:
        """Record a failed attempt; the new status, or None if we no longer hold the lease."""
        rows = await self._rows("FAIL", self._fail_params(job, error, backoff))
        if not rows:
            return None
        status: Literal["pending", "failed"] = rows[0]["status"]
        job.status = status
        return status

    async def extend(self, job: Job, lease: float) -> bool:
        """Push our lease out to now() + lease; False if the job is no longer ours."""
        return job.id in await self.renew([job], lease)

    async def renew(self, jobs: Sequence[Job], lease: float) -> set[int]:
        """The heartbeat: renew every lease we still hold among `jobs`; returns the ids renewed."""
        if not jobs:
            return set()
        rows = await self._rows("EXTEND", {**self._fence(jobs), "lease": float(lease)})
        return self._renewed(jobs, rows)

    async def release(self, jobs: Sequence[Job]) -> int:
        """Hand claimed jobs back untouched (shutdown), waking other workers for them."""
        if not jobs:
            return 0
        released = len(await self._rows("RELEASE", self._fence(jobs)))
        if released:
            await self.wake(j.queue for j in jobs)
        return released

    async def seconds_until_due(self, queues: Sequence[str]) -> float | None:
        """Seconds until the earliest pending job of `queues` is due (<= 0: ready now; None: none)."""
        rows = await self._paused_rows("SECONDS_UNTIL_DUE", {"queues": list(queues)})
        seconds: float | None = rows[0]["seconds"]
        return seconds

    async def wake(self, queues: Iterable[str]) -> None:
        """Notify listeners that jobs of `queues` are ready ("" wakes listeners of every queue)."""
        await self._rows("WAKE", self._wake_params(queues))

    # -- maintenance and operator actions -------------------------------------------------------
    async def pause(self, queue: str, *, by: str | None = None) -> bool:
        """Pause `queue` (see JobQueue.pause)."""
        return bool(await self._rows("PAUSE", {"queue": queue, "by": by}))

    async def resume(self, queue: str) -> bool:
        """Resume `queue` and wake its idle workers (see JobQueue.resume)."""
        return bool(await self._rows("RESUME", {"queue": queue}))

    async def paused(self) -> dict[str, datetime]:
        """The paused queues and since when."""
        return {r["queue"]: r["paused_at"] for r in await self._rows("PAUSED", {})}

    async def reap(self, *, batch: int = BATCH, before: datetime | None = None) -> int:
        """Expired leases back to pending (or to the dead letters); with `before`, only leases that
        had expired by then. Idle workers are woken for what came back."""
        total = pending = 0
        while True:
            rows = await self._rows("REAP", {"batch": batch, "before": before})
            total += len(rows)
            pending += sum(r["status"] == "pending" for r in rows)
            if len(rows) < batch:
                break
        if pending:
            await self.wake([""])
        return total

    async def _batched(self, name: str, ids: Iterable[int]) -> int:
        return sum([len(await self._rows(name, params)) for params in self._batches(ids)])

    async def requeue(self, ids: Iterable[int]) -> int:
        """Stuck jobs (running, lease expired) back to pending; anything else is left alone."""
        return await self._batched("REQUEUE", ids)

    async def retry(self, ids: Iterable[int]) -> int:
        """Dead (failed) jobs back to pending with a fresh budget of attempts."""
        return await self._batched("RETRY", ids)

    async def discard(self, ids: Iterable[int]) -> int:
        """Delete dead (failed) jobs; jobs in any other state are left alone. Counted as discarded
        (never completed) in the counters table, in the same statement."""
        chosen = sorted({int(i) for i in ids})
        try:
            return await self._batched(self._removal("DISCARD"), chosen)
        except psycopg.errors.UndefinedColumn:  # the first batch failed: nothing was deleted
            self._uncounted = True
            return await self._batched(self._removal("DISCARD"), chosen)

    async def prune(self, older_than: float, *, batch: int = 5000) -> int:
        """Delete kept `done` rows finished more than `older_than` seconds ago, one batch per
        transaction, each counted as pruned in the counters table in the same statement."""
        try:
            return await self._prune(older_than, batch)
        except psycopg.errors.UndefinedColumn:  # the first batch failed: nothing was deleted
            self._uncounted = True
            return await self._prune(older_than, batch)

    async def _prune(self, older_than: float, batch: int) -> int:
        conn = await self.connection()
        total = 0
        while True:
            async with conn.cursor() as cur:
                params = {"older_than": float(older_than), "batch": batch}
                await cur.execute(self._q(self._removal("PRUNE")), params)
                total += cur.rowcount
                if cur.rowcount < batch:
                    return total

    async def prune_stats(self, older_than: float = 3600.0) -> int:
        conn = await self.connection()
        async with conn.cursor() as cur:
            await cur.execute(self._q("PRUNE_STATS"), {"older_than": float(older_than)})
            return cur.rowcount

    async def get(self, job_id: int) -> dict[str, Any] | None:
        rows = await self._rows("GET_JOB", {"id": job_id})
        return rows[0] if rows else None
