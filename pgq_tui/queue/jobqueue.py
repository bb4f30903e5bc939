"""JobQueue: the SKIP LOCKED queue's Python API (sync). `AsyncJobQueue` (asyncqueue.py) is the same
API on psycopg's async connection; both build their statements and parameters in `QueueCore`.

One connection per JobQueue, autocommit: each call is its own short transaction, so a claim is
committed (and its lease visible) the moment `claim()` returns, and nothing is ever left idle in
transaction between calls. A JobQueue is not thread-safe; give each thread or process its own.
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
import time
from collections.abc import Callable, Iterable, Sequence
from datetime import datetime
from typing import Any, Literal

import psycopg
from psycopg import pq, sql
from psycopg.abc import AdaptContext, Buffer
from psycopg.adapt import Loader
from psycopg.rows import dict_row, tuple_row
from psycopg.types.json import Jsonb

from pgq_tui.db.connect import APP_NAME_MAX, Session
from pgq_tui.errors import describe
from pgq_tui.jobtable import schema as schema_mod
from pgq_tui.jobtable import statements as st
from pgq_tui.queue import direct
from pgq_tui.queue.backoff import backoff_seconds
from pgq_tui.queue.direct import IntArray
from pgq_tui.queue.job import Job, Undecoded

ENQUEUE_CHUNK = 5000  # rows per INSERT round trip
COPY_FROM = 1000  # batches this large are enqueued with COPY
BATCH = 1000  # rows per transaction for bulk operator actions and pruning
# A table made before `<table>_pauses` existed: claims skip the pause check, and try it again after
# this many seconds (a `pgq-top init` meanwhile creates the table: the pause is then honoured).
PAUSES_RECHECK_S = 60.0


def make_worker_id(prefix: str = "pgq-w") -> str:
    """A short, unique worker id; it is also the session's application_name (max 63 bytes)."""
    host = socket.gethostname().split(".")[0][:20]
    return fit_worker_id(f"{prefix}-{host}-{os.getpid()}-{secrets.token_hex(2)}")


def fit_worker_id(requested: str) -> str:
    """The worker id exactly as PostgreSQL will keep it as application_name, so that `locked_by` and
    the holder's session name (how the monitor tells a live lease from a gone one) are one string.

    The server keeps printable ASCII only (others become '?' or \\x escapes, depending on version) and
    at most 63 bytes. An id that already fits is kept; any other is cleaned and cut, and a hash of
    the whole requested id is appended so ids that differ only in what was cut stay distinct.

    >>> fit_worker_id("pgq-w-host-42-beef")
    'pgq-w-host-42-beef'
    >>> fit_worker_id("wörker")
    'w?rker-9288d7f046'
    """
    if requested.isascii() and requested.isprintable() and len(requested) <= APP_NAME_MAX:
        return requested
    digest = hashlib.sha256(requested.encode()).hexdigest()[:10]
    clean = "".join(c if " " <= c <= "~" else "?" for c in requested)
    return f"{clean[: APP_NAME_MAX - len(digest) - 1]}-{digest}"


def _ids(values: Iterable[int]) -> list[int]:
    return sorted({int(v) for v in values})


class UndecodedJsonb(Loader):
    """jsonb in binary (a version byte, then the text) as an Undecoded payload: parsed by the
    handler's first read of `job.payload`, not by the claim (registered on the claims' cursor only)."""

    format = pq.Format.BINARY

    def load(self, data: Buffer) -> Undecoded:
        if data[:1] != b"\x01":
            raise psycopg.DataError(f"unknown jsonb binary format: {bytes(data[:1])!r}")
        return Undecoded(bytes(data[1:]))


def _claim_order(job: Job) -> tuple[int, datetime, int]:
    return -job.priority, job.run_at, job.id


def has_rows(cur: psycopg.Cursor[Any] | psycopg.AsyncCursor[Any]) -> bool:
    """Whether the statement returned rows to fetch (asked of the result itself: `cur.description`
    would build a Column object per column at every call)."""
    res = cur.pgresult
    return res is not None and res.status == pq.ExecStatus.TUPLES_OK


class QueueCore:
    """What the sync and async queues share: names, statements, parameters and result shapes.
    Subclasses only run the statements."""

    def __init__(
        self,
        conninfo: str,
        table: str = "jobs",
        schema: str = "public",
        *,
        worker_id: str | None = None,
        statement_timeout_ms: int | None = 30_000,
        lock_timeout_ms: int | None = 5_000,
        timezone: str | None = None,
    ) -> None:
        """worker_id: written into `locked_by` and used as the session's application_name, never one
        without the other (see fit_worker_id); a session that only enqueues or installs may name
        itself with it too (e.g. "pgq-top init").

        timezone: the session's TimeZone (None: the server's), hence the tzinfo of the datetimes it
        reads. Workers use "UTC": psycopg then builds a claimed job's three timestamps with
        `datetime.timezone.utc` instead of converting each through a ZoneInfo (7-9 us less per
        batch of 10, measured). The instants are the same."""
        self.table = table
        self.schema = schema
        self.worker_id = fit_worker_id(worker_id or make_worker_id())
        self.conninfo = conninfo
        self.channel = schema_mod.channel(table, schema)
        self._settings: dict[str, Any] = {
            "application_name": self.worker_id,
            "statement_timeout_ms": statement_timeout_ms,
            "lock_timeout_ms": lock_timeout_ms,
        }
        if timezone is not None:
            self._settings["gucs"] = {"TimeZone": timezone}
        self._sql: dict[tuple[str, int | None], sql.Composed] = {}
        self._texts: dict[tuple[str, int | None], bytes] = {}
        self._uncounted = False  # the counters table predates `discarded`/`pruned`: plain deletes
        self._unpausable_at: float | None = None  # when the pauses table was found missing

    def _pausable(self, name: str) -> str:
        """CLAIM or SECONDS_UNTIL_DUE, or their `_UNPAUSABLE` forms while the pauses table is missing."""
        missing = self._unpausable_at
        if missing is not None and time.monotonic() - missing < PAUSES_RECHECK_S:
            return f"{name}_UNPAUSABLE"
        return name

    def _pauses_missing(self, exc: psycopg.Error, name: str) -> bool:
        """Whether `exc` says the pauses table is missing (then the next try is `_UNPAUSABLE`)."""
        if name.endswith("_UNPAUSABLE") or f"{self.table}_pauses" not in str(exc):
            return False
        self._unpausable_at = time.monotonic()
        return True

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    def _q(self, name: str, limit: int | None = None) -> sql.Composed:
        """Statement `name`; a claim's with its `limit` (a literal in its text: statements.CLAIM)."""
        key = (name, limit)
        if key not in self._sql:
            self._sql[key] = st.compose(getattr(st, name), self.table, self.schema, limit=limit)
        return self._sql[key]

    def _text(self, name: str, context: AdaptContext, limit: int | None = None) -> bytes:
        """The statement's text, composed once: psycopg composes a `sql.Composed` again at every
        execute (16 us, a worker's every batch)."""
        key = (name, limit)
        text = self._texts.get(key)
        if text is None:
            text = self._texts[key] = self._q(name, limit).as_bytes(context)
        return text

    def _removal(self, name: str) -> str:
        """DISCARD or PRUNE, counted in the counters table unless it predates the columns."""
        return f"{name}_UNCOUNTED" if self._uncounted else name

    def _params(self, params: dict[str, Any]) -> dict[str, Any]:
        return {"channel": self.channel, **params}

    @staticmethod
    def _enqueue_chunks(
        queue: str, payloads: Sequence[Any], run_at: datetime | None, priority: int, max_attempts: int
    ) -> list[dict[str, Any]]:
        return [
            {
                "queue": queue,
                "payloads": [Jsonb(p) for p in payloads[start : start + ENQUEUE_CHUNK]],
                "run_at": run_at,
                "priority": priority,
                "max_attempts": max_attempts,
            }
            for start in range(0, len(payloads), ENQUEUE_CHUNK)
        ]

    @staticmethod
    def _copy_rows(
        ids: list[int], queue: str, payloads: Sequence[Any], when: datetime, priority: int, max_attempts: int
    ) -> Iterable[tuple[Any, ...]]:
        for job_id, payload in zip(ids, payloads, strict=True):
            yield (job_id, queue, Jsonb(payload), when, priority, max_attempts)

    def _claim_params(self, queue: str, limit: int, lease: float) -> dict[str, Any]:
        return {"queue": queue, "limit": limit, "lease": float(lease), "worker": self.worker_id}

    def _jobs(self, queue: str, rows: Iterable[Sequence[Any]]) -> list[Job]:
        """A claim's rows (tuples of statements.CLAIMED_COLUMNS), as Jobs in claim order."""
        jobs = [Job.claimed(r, queue, self.worker_id) for r in rows]
        jobs.sort(key=_claim_order)
        return jobs

    def _fence(self, jobs: Sequence[Job]) -> dict[str, Any]:
        return {
            "ids": IntArray([j.id for j in jobs]),
            "attempts": IntArray([j.attempts for j in jobs]),
            "worker": self.worker_id,
        }

    def _fail_params(self, job: Job, error: str, backoff: float | None) -> dict[str, Any]:
        delay = backoff if backoff is not None else backoff_seconds(job.attempts)
        return {**self._fence([job]), "delay": float(delay), "error": str(error)[:10_000]}

    @staticmethod
    def _wake_params(queues: Iterable[str]) -> dict[str, Any]:
        return {"queues": sorted(set(queues)), "chars": st.WAKE_QUEUE_CHARS}

    @staticmethod
    def _completed(jobs: Sequence[Job], ids: Iterable[int]) -> int:
        """Mark the jobs whose ids the completion returned done; returns how many it accepted."""
        accepted = set(ids)
        for job in jobs:
            if job.id in accepted:  # a refused job is not ours to call done: leave its status alone
                job.status = "done"
        return len(accepted)

    def _completed_claimed(
        self, jobs: Sequence[Job], queue: str, rows: list[tuple[Any, ...]]
    ) -> tuple[int, list[Job]]:
        """COMPLETE_*_CLAIM's rows: the completion's outcome rides on every row (first column: NULL
        when it accepted every job of the fence, else the accepted ids), the claimed job's
        CLAIMED_COLUMNS follow; a NULL id means none claimed."""
        completed = rows[0][0]
        accepted = self._completed(jobs, [j.id for j in jobs] if completed is None else completed)
        return accepted, self._jobs(queue, (r[1:] for r in rows if r[1] is not None))

    @staticmethod
    def _renewed(jobs: Sequence[Job], rows: list[dict[str, Any]]) -> set[int]:
        until = {r["id"]: r["locked_until"] for r in rows}
        for job in jobs:
            if job.id in until:
                job.locked_until = until[job.id]
        return set(until)

    @staticmethod
    def _batches(ids: Iterable[int]) -> list[dict[str, Any]]:
        chosen = _ids(ids)
        return [{"ids": chosen[start : start + BATCH]} for start in range(0, len(chosen), BATCH)]


class JobQueue(QueueCore):
    def __init__(self, conninfo: str, table: str = "jobs", schema: str = "public", **kwargs: Any) -> None:
        super().__init__(conninfo, table, schema, **kwargs)
        self._session = Session(conninfo, **self._settings)
        self._claims: psycopg.Cursor[tuple[Any, ...]] | None = None
        self._direct: direct.DirectStatements | None = None  # the claims' connection, when usable

    # -- plumbing -------------------------------------------------------------------------------
    @property
    def conn(self) -> psycopg.Connection:
        """The connection, (re)opened on demand: a worker survives a server restart."""
        return self._session.conn

    def close(self) -> None:
        self._session.close()

    def __enter__(self) -> JobQueue:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _execute(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        conn = self.conn
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(self._text(name, conn), self._params(params), prepare=True)
            return cur.fetchall() if has_rows(cur) else []

    def _rows(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        try:
            return self._execute(name, params)
        except psycopg.errors.UndefinedTable as exc:
            raise describe(exc, table=self.qualified, hint=schema_mod.SETUP_HINT) from None

    def _paused_rows(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        """A statement that honours pauses; on a table without `<table>_pauses`, its unpausable form."""
        chosen = self._pausable(name)
        try:
            return self._execute(chosen, params)
        except psycopg.errors.UndefinedTable as exc:
            if self._pauses_missing(exc, chosen):
                return self._rows(f"{name}_UNPAUSABLE", params)
            raise describe(exc, table=self.qualified, hint=schema_mod.SETUP_HINT) from None

    def _claimed(self, name: str, params: dict[str, Any]) -> list[tuple[Any, ...]]:
        """A claim's rows: tuples, in binary (no timestamps formatted by the server and parsed here),
        payloads left Undecoded, on one cursor kept for the claims (its loaders set up once), or
        through libpq's prepared-statement call with that cursor's loaders (direct.py: half the
        client CPU of a cursor's execute and fetch) unless the connection goes through a pooler."""
        chosen = self._pausable(name)
        conn = self.conn
        cur = self._claims
        if cur is None or cur.connection is not conn:
            cur = self._claims = conn.cursor(row_factory=tuple_row)
            cur.adapters.register_loader("jsonb", UndecodedJsonb)
            self._direct = direct.DirectStatements(conn, cur) if direct.usable(conn) else None
        try:
            query = self._text(chosen, conn, int(params["limit"]))
            if self._direct is not None:
                return self._direct.rows(query, self._params(params))
            cur.execute(query, self._params(params), prepare=True, binary=True)
            return cur.fetchall()
        except psycopg.errors.UndefinedTable as exc:
            if self._pauses_missing(exc, chosen):
                return self._claimed(name, params)
            raise describe(exc, table=self.qualified, hint=schema_mod.SETUP_HINT) from None

    # -- schema ---------------------------------------------------------------------------------
    def install(self, say: Callable[[str], None] | None = None, *, adopt: bool = False) -> list[str]:
        """Create or upgrade the table, indexes, counters and autovacuum settings (idempotent);
        returns what it did. On a table with rows, missing indexes are built CONCURRENTLY. An existing
        table that is not pgq-top's is refused (PgqError, nothing changed) unless `adopt`."""
        return schema_mod.install(self.conn, self.table, self.schema, say, adopt=adopt)

    # -- producers ------------------------------------------------------------------------------
    def enqueue(
        self,
        queue: str,
        payloads: Sequence[Any],
        *,
        run_at: datetime | None = None,
        priority: int = 0,
        max_attempts: int = 5,
    ) -> list[int]:
        """Insert jobs in one transaction; returns their ids in payload order. Listeners are notified
        in the same transaction, unless every job is scheduled for later.

        Small batches: a multi-row INSERT ... SELECT unnest(jsonb[]), 5,000 rows per round trip.
        From COPY_FROM rows on: COPY, about three times faster (see benchmarks/bench_queue.py).
        """
        if not payloads:
            return []
        with self.conn.transaction():
            if len(payloads) >= COPY_FROM:
                return self._enqueue_copy(queue, payloads, run_at, priority, max_attempts)
            ids: list[int] = []
            for params in self._enqueue_chunks(queue, payloads, run_at, priority, max_attempts):
                ids.extend(r["id"] for r in self._rows("ENQUEUE", params))
            return ids

    def _enqueue_copy(
        self, queue: str, payloads: Sequence[Any], run_at: datetime | None, priority: int, max_attempts: int
    ) -> list[int]:
        conn = self.conn
        table = sql.Identifier(self.schema, self.table).as_string(conn)
        ids = sorted(r["id"] for r in self._rows("RESERVE_IDS", {"table": table, "n": len(payloads)}))
        when = run_at or conn.execute("SELECT now()").fetchone()[0]  # type: ignore[index]
        with conn.cursor() as cur, cur.copy(self._q("COPY_JOBS")) as copy:
            copy.set_types(st.COPY_TYPES)  # binary COPY: no text escaping of payloads
            for row in self._copy_rows(ids, queue, payloads, when, priority, max_attempts):
                copy.write_row(row)
        self._rows("COUNT_ENQUEUED", {"queue": queue, "n": len(payloads), "run_at": when})
        return ids

    # -- workers --------------------------------------------------------------------------------
    def claim(self, queue: str, *, limit: int = 10, lease: float = 30.0) -> list[Job]:
        """Lease up to `limit` ready jobs: highest priority first, then oldest run_at (best effort)."""
        return self._jobs(queue, self._claimed("CLAIM", self._claim_params(queue, limit, lease)))

    def complete(self, jobs: Sequence[Job], *, keep: bool = False) -> int:
        """Finish jobs we still hold (delete them, or mark them done when keep=True).

        Returns how many were accepted: a job whose lease was reaped and re-claimed is refused.
        """
        if not jobs:
            return 0
        rows = self._rows("COMPLETE_KEEP" if keep else "COMPLETE_DELETE", self._fence(jobs))
        return self._completed(jobs, (r["id"] for r in rows))

    def complete_and_claim(
        self, jobs: Sequence[Job], queue: str, *, limit: int = 10, lease: float = 30.0, keep: bool = False
    ) -> tuple[int, list[Job]]:
        """complete(jobs) and then claim(queue) in one statement: one round trip and one commit
        instead of two (the worker's steady state). The completion is fenced exactly like
        complete()'s; a refused job does not stop the claim. Returns (accepted, claimed jobs).
        """
        if not jobs:
            return 0, self.claim(queue, limit=limit, lease=lease)
        name = "COMPLETE_KEEP_CLAIM" if keep else "COMPLETE_DELETE_CLAIM"
        rows = self._claimed(name, {**self._fence(jobs), **self._claim_params(queue, limit, lease)})
        return self._completed_claimed(jobs, queue, rows)

    def fail(
        self, job: Job, error: str, *, backoff: float | None = None
    ) -> Literal["pending", "failed"] | None:
        """Record a failed attempt: back to pending after a backoff, or dead ('failed') once
        max_attempts is reached. Returns the new status, or None if we no longer hold the lease."""
        rows = self._rows("FAIL", self._fail_params(job, error, backoff))
        if not rows:
            return None
        status: Literal["pending", "failed"] = rows[0]["status"]
        job.status = status
        return status

    def extend(self, job: Job, lease: float) -> bool:
        """Push our lease out to now() + lease; False if the job is no longer ours."""
        return job.id in self.renew([job], lease)

    def renew(self, jobs: Sequence[Job], lease: float) -> set[int]:
        """The heartbeat: push every lease we still hold among `jobs` out to now() + lease, in one
        statement; returns the ids renewed (a job missing from it is no longer ours)."""
        if not jobs:
            return set()
        rows = self._rows("EXTEND", {**self._fence(jobs), "lease": float(lease)})
        return self._renewed(jobs, rows)

    def release(self, jobs: Sequence[Job]) -> int:
        """Hand claimed jobs back untouched (shutdown): pending again, the attempt not counted, and
        other workers woken for them."""
        if not jobs:
            return 0
        released = len(self._rows("RELEASE", self._fence(jobs)))
        if released:
            self.wake(j.queue for j in jobs)
        return released

    def seconds_until_due(self, queues: Sequence[str]) -> float | None:
        """Seconds until the earliest pending job of `queues` is due (<= 0: ready now; None: none)."""
        rows = self._paused_rows("SECONDS_UNTIL_DUE", {"queues": list(queues)})
        seconds: float | None = rows[0]["seconds"]
        return seconds

    def wake(self, queues: Iterable[str]) -> None:
        """Notify listeners that jobs of `queues` are ready ("" wakes listeners of every queue)."""
        self._rows("WAKE", self._wake_params(queues))

    # -- pausing a queue ----------------------------------------------------------------------------
    def pause(self, queue: str, *, by: str | None = None) -> bool:
        """Pause `queue`: no worker claims from it until it is resumed (jobs already claimed run to
        their end). Durable (a row in `<table>_pauses`). False when it was paused already."""
        return bool(self._rows("PAUSE", {"queue": queue, "by": by}))

    def resume(self, queue: str) -> bool:
        """Resume `queue` and wake its idle workers. False when it was not paused."""
        return bool(self._rows("RESUME", {"queue": queue}))

    def paused(self) -> dict[str, datetime]:
        """The paused queues and since when."""
        return {r["queue"]: r["paused_at"] for r in self._rows("PAUSED", {})}

    # -- maintenance and operator actions -------------------------------------------------------
    def reap(self, *, batch: int = BATCH, before: datetime | None = None) -> int:
        """Expired leases back to pending (or to the dead letters when out of attempts); with `before`,
        only leases that had expired by then. Idle workers are woken for what came back."""
        total = pending = 0
        while True:
            rows = self._rows("REAP", {"batch": batch, "before": before})
            total += len(rows)
            pending += sum(r["status"] == "pending" for r in rows)
            if len(rows) < batch:
                break
        if pending:
            self.wake([""])
        return total

    def reap_next(self, *, batch: int = BATCH) -> tuple[int, float | None]:
        """reap(), and the seconds until the next running job's lease expires (None: none runs),
        read in the same statement: what the pool's reaper sleeps on."""
        total = pending = 0
        while True:
            rows = self._rows("REAP_NEXT", {"batch": batch, "before": None})
            reaped = [r for r in rows if r["id"] is not None]
            total += len(reaped)
            pending += sum(r["status"] == "pending" for r in reaped)
            if len(reaped) < batch:
                break
        if pending:
            self.wake([""])
        (due,) = [r["next_due_s"] for r in rows if r["id"] is None]
        return total, due

    def _batched(self, name: str, ids: Iterable[int]) -> int:
        return sum(len(self._rows(name, params)) for params in self._batches(ids))

    def requeue(self, ids: Iterable[int]) -> int:
        """Stuck jobs (running, lease expired) back to pending; anything else is left alone."""
        return self._batched("REQUEUE", ids)

    def retry(self, ids: Iterable[int]) -> int:
        """Dead (failed) jobs back to pending with a fresh budget of attempts."""
        return self._batched("RETRY", ids)

    def discard(self, ids: Iterable[int]) -> int:
        """Delete dead (failed) jobs; jobs in any other state are left alone. Counted as discarded
        (never completed) in the counters table, in the same statement."""
        chosen = _ids(ids)
        try:
            return self._batched(self._removal("DISCARD"), chosen)
        except psycopg.errors.UndefinedColumn:  # the first batch failed: nothing was deleted
            self._uncounted = True
            return self._batched(self._removal("DISCARD"), chosen)

    def prune(self, older_than: float, *, batch: int = 5000) -> int:
        """Delete kept `done` rows finished more than `older_than` seconds ago, one batch per
        transaction, each counted as pruned in the counters table in the same statement."""
        try:
            return self._prune(older_than, batch)
        except psycopg.errors.UndefinedColumn:  # the first batch failed: nothing was deleted
            self._uncounted = True
            return self._prune(older_than, batch)

    def _prune(self, older_than: float, batch: int) -> int:
        total = 0
        while True:
            with self.conn.cursor() as cur:
                cur.execute(
                    self._q(self._removal("PRUNE")), {"older_than": float(older_than), "batch": batch}
                )
                total += cur.rowcount
                if cur.rowcount < batch:
                    return total

    def prune_stats(self, older_than: float = 3600.0) -> int:
        with self.conn.cursor() as cur:
            cur.execute(self._q("PRUNE_STATS"), {"older_than": float(older_than)})
            return cur.rowcount

    def get(self, job_id: int) -> dict[str, Any] | None:
        rows = self._rows("GET_JOB", {"id": job_id})
        return rows[0] if rows else None
