"""DemoController: load, workers and chaos on a queue, every moving part in its own process.

The load generator and each worker run in separate (spawned) processes, so a front end in this
process stays responsive; the pool's reaper is a thread. The reaper runs every `reap_interval`
seconds (default 20), deliberately much longer than the lease (default 5 s): a crashed worker's
jobs stay visibly stuck long enough to be fixed by hand, and are recovered anyway if nobody does.
"""

from __future__ import annotations

import contextlib
import functools
import multiprocessing as mp
import os
import random
import select
import shutil
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import psycopg
from psycopg import sql

from pgq_tui.db.connect import connect
from pgq_tui.demo.control import Control, spawning_with
from pgq_tui.demo.load import QUEUES, LoadConfig, enqueue_batch, run_load
from pgq_tui.queue.jobqueue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig

HANDLER = "pgq_tui.demo.handler:handle"
IDLE_TX_APPLICATION = "pgq-demo idle-in-tx"
F = TypeVar("F", bound=Callable[..., Any])


def _locked(method: F) -> F:
    """Serialise calls: a front end may press keys (worker threads) while it polls status()."""

    @functools.wraps(method)
    def wrapper(self: DemoController, *args: Any, **kwargs: Any) -> Any:
        with self._lock:
            return method(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


RATE_STEPS = (0.0, 1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0, 200.0, 500.0, 1000.0, 2000.0, 5000.0)


@dataclass(frozen=True)
class DemoStatus:
    workers: int
    rate: float  # jobs/s the load generator aims at
    slow: bool
    idle_tx_pid: int | None
    fail_share: float
    counts: dict[str, int] = field(default_factory=dict)  # the pool's: handled, completed, failed, ...
    enqueued: int = 0
    reaped: int = 0
    lease: float = 0.0
    reap_interval: float = 0.0
    running: bool = False
    restarts: int = 0  # workers the pool's supervisor replaced (crashed or killed with `x`)


class DemoController:
    def __init__(
        self,
        dsn: str,
        *,
        table: str = "jobs",
        schema: str = "public",
        workers: int = 3,
        rate: float = 50.0,
        lease: float = 5.0,
        fail_share: float = 0.1,
        reap_interval: float = 20.0,
        batch: int = 10,
        max_attempts: int = 3,
        queues: tuple[str, ...] = QUEUES,
        handler: str = HANDLER,
    ) -> None:
        self.dsn, self.table, self.schema = dsn, table, schema
        self.initial_workers, self.lease, self.reap_interval = workers, lease, reap_interval
        self.batch, self.max_attempts, self.queues, self.handler = batch, max_attempts, queues, handler
        self._fail_share = fail_share
        self._ctx = mp.get_context("spawn")
        # Lock-free shared values: a process killed while holding a lock would leave it held.
        self._rate = self._ctx.RawValue("d", float(rate))
        self._enqueued = self._ctx.RawValue("q", 0)
        self._dir: Path | None = None
        self._control: Control | None = None
        self._load: mp.process.BaseProcess | None = None
        self.pool: WorkerPool | None = None
        self._idle: psycopg.Connection | None = None
        self.last_crashed: str | None = None  # worker id of the last crash_worker() victim
        self._lock = threading.RLock()

    # -- lifecycle ------------------------------------------------------------------------------
    @_locked
    def start(self) -> None:
        if self.pool is not None:
            return
        try:
            self._start()
        except BaseException:
            self.stop()  # whatever did start must not outlive a failed start
            raise

    def _start(self) -> None:
        self._dir = Path(tempfile.mkdtemp(prefix="pgq-demo-ctl-"))
        self._control = Control(self._dir / "control", create=True, fail_share=self._fail_share)
        load = LoadConfig(
            self.dsn, self.table, self.schema, self.queues, self.max_attempts, str(self._control.path)
        )
        with JobQueue(self.dsn, self.table, self.schema, worker_id="pgq-demo setup") as q:
            q.install()
            # A second's worth of jobs now, so the dashboard's first frame already has data.
            seeded = enqueue_batch(q, random.Random(), max(1, int(self._rate.value)), load, 0.0, 0)
        self._enqueued.value += seeded
        self._load = self._ctx.Process(
            target=run_load,
            args=(load, self._rate, self._enqueued, os.getpid()),
            name="pgq-demo-load",
            daemon=True,
        )
        self._load.start()
        config = WorkerConfig(
            conninfo=self.dsn,
            queues=self.queues,
            table=self.table,
            schema=self.schema,
            handler=self.handler,
            batch=self.batch,
            lease=self.lease,
        )
        self.pool = WorkerPool(
            config,
            concurrency=self.initial_workers,
            reap_interval=self.reap_interval,
            around_spawn=functools.partial(spawning_with, self._control.path),  # restarts too
        )
        self.pool.start()

    @_locked
    def stop(self) -> None:
        """Stop everything started here, in order, and wait for it: no process is left behind."""
        self.close_idle_transaction()
        if self._load is not None and self._load.pid is not None:
            self._load.terminate()  # SIGTERM: it finishes its tick and exits
            self._load.join(10)
            if self._load.is_alive():
                self._load.kill()
                self._load.join(5)
        self._load = None
        if self.pool is not None:
            self.pool.stop(timeout=10.0)  # a slow job finishes, the rest of its batch is released
            self.pool = None
        if self._control is not None:
            self._control.close()
            self._control = None
        if self._dir is not None:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    def __enter__(self) -> DemoController:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @_locked
    def processes(self) -> list[int]:
        """Pids of every process this controller runs (for tests and an orphan check)."""
        pids = [s.process.pid for s in self.pool.workers] if self.pool else []
        if self._load is not None and self._load.pid:
            pids.append(self._load.pid)
        return [p for p in pids if p]

    # -- workers --------------------------------------------------------------------------------
    def _pool(self) -> WorkerPool:
        if self.pool is None or self._control is None:
            raise RuntimeError("the demo is not running")
        return self.pool

    @_locked
    def add_worker(self) -> str:
        return self._pool().add_worker()

    @_locked
    def remove_worker(self) -> str | None:
        return self._pool().remove_worker()

    def crash_worker(self) -> int | None:
        """kill -9 the newest worker, waiting (up to 3 s) until it holds a lease so it dies mid-lease.
        Its leases are left to expire; the pool's supervisor starts a replacement at once, as it
        would for a worker the OOM killer took (status().restarts counts them)."""
        with self._lock:
            pool = self._pool()
            victim = next((s for s in reversed(pool.workers) if s.process.is_alive()), None)
        if victim is None:
            return None
        query = sql.SQL("SELECT 1 FROM {} WHERE status = 'running' AND locked_by = %s LIMIT 1").format(
            sql.Identifier(self.schema, self.table)
        )
        with connect(self.dsn, application_name="pgq-demo chaos", statement_timeout_ms=1000) as conn:
            deadline = time.monotonic() + 3.0
            while time.monotonic() < deadline and not conn.execute(query, (victim.worker_id,)).fetchone():
                time.sleep(0.005)
        with self._lock:
            self.last_crashed = victim.worker_id
            return pool.kill_worker(victim.worker_id)  # the one watched, not the pool's own pick

    # -- load and handler -----------------------------------------------------------------------
    @property
    def rate(self) -> float:
        return float(self._rate.value)

    @_locked
    def raise_load(self) -> float:
        self._rate.value = next((r for r in RATE_STEPS if r > self.rate), RATE_STEPS[-1])
        return self.rate

    @_locked
    def lower_load(self) -> float:
        self._rate.value = next((r for r in reversed(RATE_STEPS) if r < self.rate), 0.0)
        return self.rate

    @_locked
    def toggle_slow(self) -> bool:
        control = self._control
        if control is None:
            raise RuntimeError("the demo is not running")
        slow = not control.read()[0]
        control.write(slow=slow)
        return slow

    # -- the xmin holder ------------------------------------------------------------------------
    @_locked
    def open_idle_transaction(self) -> int:
        """A session that takes a snapshot and an xid, then sits idle in transaction: it pins the
        xmin horizon, so dead tuples pile up until it ends. Returns its backend pid.

        Repeatable read keeps the snapshot (backend_xmin) between statements; txid_current() adds
        an xid (backend_xid). The connection needs no thread: the server holds it while we wait.
        """
        if self._idle is not None and self._alive(self._idle):
            return self._idle.info.backend_pid
        conn = connect(self.dsn, application_name=IDLE_TX_APPLICATION, autocommit=False)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        conn.execute("SELECT txid_current()")
        self._idle = conn
        return conn.info.backend_pid

    @staticmethod
    def _alive(conn: psycopg.Connection | None) -> bool:
        """Still open? A session terminated by the operator has sent its goodbye: the socket is readable."""
        if conn is None or conn.closed or conn.broken:
            return False
        readable, _, _ = select.select([conn.fileno()], [], [], 0)
        return not readable

    @_locked
    def close_idle_transaction(self) -> bool:
        """End the idle transaction (rollback). False when there was none still open."""
        conn, self._idle = self._idle, None
        if conn is None:
            return False
        alive = self._alive(conn)
        with contextlib.suppress(psycopg.Error):
            conn.close()
        return alive

    # -- status ---------------------------------------------------------------------------------
    @_locked
    def status(self) -> DemoStatus:
        pool, control = self.pool, self._control
        slow, fail_share = control.read() if control else (False, self._fail_share)
        idle_pid = None
        if self._idle is not None:
            if self._alive(self._idle):
                idle_pid = self._idle.info.backend_pid
            else:
                self.close_idle_transaction()
        return DemoStatus(
            workers=sum(1 for s in pool.workers if not s.stopping) if pool else 0,
            rate=self.rate,
            slow=slow,
            idle_tx_pid=idle_pid,
            fail_share=fail_share,
            counts=pool.counts() if pool else {},
            enqueued=int(self._enqueued.value),
            reaped=pool.reaped if pool else 0,
            lease=self.lease,
            reap_interval=self.reap_interval,
            running=pool is not None,
            restarts=pool.restarts if pool else 0,
        )
