"""The worker pool: N worker processes (worker.py), a reaper thread, and a supervisor thread that
restarts a worker that dies (policy in supervise.py)."""

from __future__ import annotations

import contextlib
import logging
import multiprocessing as mp
import os
import signal
import threading
import time
from collections import deque
from collections.abc import Callable
from contextlib import AbstractContextManager
from ctypes import Array, c_char
from dataclasses import dataclass, field

import psycopg

from pgq_tui.errors import PgqError
from pgq_tui.queue.jobqueue import JobQueue, make_worker_id
from pgq_tui.queue.reaping import PRUNE_EVERY_S, next_pass_in
from pgq_tui.queue.supervise import (
    REASON_BYTES,
    RestartPolicy,
    WorkerExit,
    crash_reason,
    exit_reason,
    read_reason,
    write_reason,
)
from pgq_tui.queue.worker import COUNTER_NAMES, Counters, WorkerConfig, run_worker

log = logging.getLogger(__name__)


def _has_taken_jobs(counters: Counters) -> bool:
    """A worker whose claims were not all empty: it has held a lease (and likely holds one now)."""
    names: dict[str, int] = dict(zip(COUNTER_NAMES, counters, strict=True))
    return names["claims"] > names["empty_claims"]


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)


def _worker_process(
    config: WorkerConfig, counters: Counters, worker_id: str, parent_pid: int, reason: Array[c_char]
) -> None:
    """A pool worker's process: run_worker, and if it dies of an error it could not ride out, leave
    one line saying why for the pool (shared memory, no lock) and exit with status 1."""
    try:
        run_worker(config, None, counters, worker_id, parent_pid)
    except Exception as exc:
        write_reason(reason, crash_reason(exc))
        raise SystemExit(1) from None


@dataclass
class _Slot:
    process: mp.process.BaseProcess
    worker_id: str
    counters: Counters  # this worker's own; kept after it exits so the pool's totals stay true
    reason: Array[c_char]  # why it died, written by the worker itself (see _worker_process)
    crashes: tuple[float, ...] = ()  # crash times of the workers this one replaces (its slot's history)
    stopping: bool = False  # the pool asked it to stop (remove_worker, stop)
    killed: bool = False  # kill_worker(): killed on purpose


@dataclass
class WorkerPool:
    """N worker processes, a supervisor thread and a reaper thread. Add, remove or kill workers while
    it runs.

    Supervision (policy in supervise.py): a worker that dies (an error it cannot ride out, a signal)
    is logged with the reason and restarted after a backoff; one killed by kill_worker() is replaced
    at once. When one worker slot crashes `restart.crash_limit` times within `restart.crash_window`
    seconds, the pool gives up: it stops every worker and sets `failure` (see wait_failure()). A
    worker that exits with status 0 was stopped by a signal from outside (e.g. Ctrl-C to the process
    group) and is not replaced.
    """

    config: WorkerConfig
    concurrency: int = 1
    reap_interval: float = 5.0
    restart: RestartPolicy = field(default_factory=RestartPolicy)
    # Wraps each process start, e.g. to set environment variables the worker reads (the demo's).
    around_spawn: Callable[[], AbstractContextManager[object]] = contextlib.nullcontext
    supervise_interval: float = 0.1
    _ctx: mp.context.SpawnContext = field(default_factory=lambda: mp.get_context("spawn"))
    _slots: list[_Slot] = field(default_factory=list)
    _all_counters: list[Counters] = field(default_factory=list)
    _pending: list[tuple[float, tuple[float, ...]]] = field(default_factory=list)  # (due, crashes)
    _lock: threading.RLock = field(default_factory=threading.RLock)  # this process's threads only
    _stop_reaper: threading.Event = field(default_factory=threading.Event)
    _stop_supervisor: threading.Event = field(default_factory=threading.Event)
    _failed: threading.Event = field(default_factory=threading.Event)
    _reaper: threading.Thread | None = None
    _supervisor: threading.Thread | None = None
    reaped: int = 0
    restarts: int = 0  # replacements started
    exits: deque[WorkerExit] = field(default_factory=lambda: deque(maxlen=100))  # the latest first-hand
    failure: str | None = None  # why the pool gave up, once it has

    def start(self) -> WorkerPool:
        for _ in range(self.concurrency):
            self.add_worker()
        self._supervisor = threading.Thread(target=self._supervise, name="pgq-supervisor", daemon=True)
        self._supervisor.start()
        if self.reap_interval > 0:
            self._reaper = threading.Thread(target=self._reap_loop, name="pgq-reaper", daemon=True)
            self._reaper.start()
        return self

    def add_worker(self) -> str:
        return self._spawn(()).worker_id

    def _spawn(self, crashes: tuple[float, ...]) -> _Slot:
        worker_id = make_worker_id()
        counters = self._ctx.RawArray("q", len(COUNTER_NAMES))
        reason = self._ctx.RawArray(c_char, REASON_BYTES)
        proc = self._ctx.Process(
            target=_worker_process,
            args=(self.config, counters, worker_id, os.getpid(), reason),
            name=worker_id,
            daemon=True,
        )
        with self._lock, self.around_spawn():
            proc.start()
            slot = _Slot(proc, worker_id, counters, reason, crashes)
            self._slots.append(slot)
            self._all_counters.append(counters)
        return slot

    @property
    def workers(self) -> list[_Slot]:
        """Worker processes not yet exited (including those asked to stop)."""
        with self._lock:
            return [s for s in self._slots if s.process.exitcode is None]

    def remove_worker(self) -> str | None:
        """Ask the newest worker to stop gracefully (it releases what it has not started)."""
        with self._lock:
            for slot in reversed(self.workers):
                if not slot.stopping and not slot.killed and slot.process.pid:
                    slot.stopping = True
                    _signal(slot.process.pid, signal.SIGTERM)
                    return slot.worker_id
        return None

    def kill_worker(self, worker_id: str | None = None) -> int | None:
        """kill -9 one worker mid-lease (chaos): its leases are left to expire, and the supervisor
        starts a replacement at once, as it would for a worker the OOM killer took. Returns its pid.

        The victim is the oldest worker that has taken jobs (the oldest alive if none has yet), never
        simply the newest: that is the last victim's replacement, which on a busy machine is still
        starting when the next kill comes, so kill after kill would interrupt no lease at all.
        `worker_id`: that worker (the holder of a lease a test saw), None if it is not running."""
        with self._lock:
            alive = [s for s in self.workers if s.process.is_alive() and not s.stopping]
            if worker_id is not None:
                alive = [s for s in alive if s.worker_id == worker_id][:1]
                if not alive:
                    return None
            victim = next((s for s in alive if _has_taken_jobs(s.counters)), alive[0] if alive else None)
            if victim is None or not victim.process.pid:
                return None
            victim.killed = True
            _signal(victim.process.pid, signal.SIGKILL)
        victim.process.join(5)
        return victim.process.pid

    def counts(self) -> dict[str, int]:
        """Totals over every worker this pool ever ran (killed ones included)."""
        totals = [sum(c[i] for c in self._all_counters) for i in range(len(COUNTER_NAMES))]
        return dict(zip(COUNTER_NAMES, totals, strict=True))

    def wait_failure(self, timeout: float | None = None) -> str | None:
        """Block until the pool gives up (returns why) or `timeout` passes (returns None)."""
        self._failed.wait(timeout)
        return self.failure

    # -- supervision ------------------------------------------------------------------------------
    def _supervise(self) -> None:
        try:
            while not self._stop_supervisor.wait(self.supervise_interval):
                with self._lock:
                    if self._stop_supervisor.is_set():
                        return
                    now = time.monotonic()
                    for slot in [s for s in self._slots if s.process.exitcode is not None]:
                        self._slots.remove(slot)
                        if not slot.stopping and not self._on_exit(slot, now):
                            return  # gave up
                    if not self._start_due(now):
                        return
        except Exception as exc:  # a supervisor that dies quietly is the very failure it prevents
            log.exception("the worker pool's supervisor failed")
            with self._lock:
                self._give_up(f"the worker pool's supervisor failed ({crash_reason(exc)}); stopped the pool")

    def _on_exit(self, slot: _Slot, now: float) -> bool:
        """A worker ended on its own: log why and schedule its replacement. False: the pool gave up."""
        code = slot.process.exitcode
        if code == 0 and not slot.killed:
            log.warning(
                "worker %s (pid %s) stopped on a signal from outside the pool; not replaced (%d left)",
                slot.worker_id,
                slot.process.pid,
                len(self.workers),
            )
            return True
        ended = WorkerExit(
            slot.worker_id,
            slot.process.pid,
            code,
            exit_reason(code, read_reason(slot.reason)),
            slot.killed,
            now,
        )
        self.exits.append(ended)
        if ended.on_purpose:
            log.warning("%s on purpose; starting a replacement", ended.describe())
            self._pending.append((now, slot.crashes))
            return True
        return self._crashed(ended.describe(), slot.crashes, now)

    def _crashed(self, what: str, history: tuple[float, ...], now: float) -> bool:
        """Count a crash in a slot's history: schedule a restart after the backoff, or give up when
        the slot crashed too often within the window (returns False)."""
        crashes = (*self.restart.recent(history, now), now)
        if self.restart.gives_up(len(crashes)):
            self._give_up(
                f"workers are crashing in a loop ({len(crashes)} crashes of one worker within "
                f"{self.restart.crash_window:g} s); gave up and stopped the pool. Last: {what}"
            )
            return False
        delay = self.restart.delay(len(crashes))
        log.error(
            "%s; restarting it in %.1f s (crash %d of %d allowed within %g s)",
            what,
            delay,
            len(crashes),
            self.restart.crash_limit,
            self.restart.crash_window,
        )
        self._pending.append((now + delay, crashes))
        return True

    def _start_due(self, now: float) -> bool:
        """Start the replacements that are due. False: the pool gave up (they cannot be started)."""
        due = [p for p in self._pending if p[0] <= now]
        for item in due:
            self._pending.remove(item)
            try:
                slot = self._spawn(item[1])
            except Exception as exc:  # e.g. the process limit: as good as a crash of that slot
                if not self._crashed(
                    f"a replacement worker could not start: {type(exc).__name__}: {exc}", item[1], now
                ):
                    return False
                continue
            self.restarts += 1
            log.info("started worker %s (pid %s) as a replacement", slot.worker_id, slot.process.pid)
        return True

    def _give_up(self, failure: str) -> None:
        """Stop every worker and say why: the pool's owner sees it through failure / wait_failure()."""
        self.failure = failure
        log.critical("%s", self.failure)
        self._pending.clear()
        self._stop_reaper.set()
        for slot in self._slots:
            if slot.process.pid and not slot.stopping:
                slot.stopping = True
                _signal(slot.process.pid, signal.SIGTERM)
        self._failed.set()

    def _reap_loop(self) -> None:
        q = JobQueue(
            self.config.conninfo,
            self.config.table,
            self.config.schema,
            worker_id=make_worker_id("pgq-reaper"),
        )
        wait, pruned_at = self.reap_interval, 0.0
        try:
            while not self._stop_reaper.wait(wait):
                wait = self.reap_interval
                try:
                    reaped, next_due_s = q.reap_next()
                    self.reaped += reaped
                    wait = next_pass_in(reaped, next_due_s, self.reap_interval, self.config.lease)
                    if time.monotonic() - pruned_at >= PRUNE_EVERY_S:
                        q.prune_stats()
                        pruned_at = time.monotonic()
                except (psycopg.Error, PgqError):
                    q.close()  # reconnect next round
        finally:
            q.close()

    def stop(self, timeout: float = 30.0) -> None:
        """Stop every worker gracefully; kill any that has not exited within `timeout` seconds."""
        self._stop_reaper.set()
        self._stop_supervisor.set()
        if self._supervisor is not None and self._supervisor is not threading.current_thread():
            self._supervisor.join(5)  # no restart may start while we stop
        with self._lock:
            slots = list(self._slots)
            self._pending.clear()
            for slot in slots:
                if slot.process.pid and not slot.stopping:
                    slot.stopping = True
                    _signal(slot.process.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for slot in slots:
            slot.process.join(max(0.0, deadline - time.monotonic()))
            if slot.process.is_alive():
                slot.process.kill()
                slot.process.join(5)
        with self._lock:
            self._slots.clear()
        if self._reaper is not None:
            self._reaper.join(5)

    def __enter__(self) -> WorkerPool:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
