"""A worker process: claim, run the handler, complete or fail (the pool that runs and supervises
them is in pool.py).

A worker claims a batch, runs the handler on each job, then completes the successes in one
statement and fails the errors one by one (each with its backoff). Its session's application_name is
its worker id, the same string it writes into `locked_by`, so the monitor can tell whether a lease's
holder is still connected.

Errors it cannot ride out by reconnecting (anything but a lost connection) end the process; the
pool logs why and restarts it.

Shutdown (SIGINT/SIGTERM; the pool stops its workers with SIGTERM): the job in the handler finishes,
the rest of the batch is released (back to pending without burning an attempt), and the process exits.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from ctypes import Array, c_longlong
from dataclasses import dataclass

import psycopg

from pgq_tui.errors import PgqError
from pgq_tui.queue.handlers import load_handler
from pgq_tui.queue.jobqueue import JobQueue, make_worker_id

# Indexes into the pool's shared counters.
HANDLED, COMPLETED, FAILED, REFUSED, RELEASED = range(5)
COUNTER_NAMES = ("handled", "completed", "failed", "refused", "released")
Counters = Array[c_longlong]  # a worker's own shared-memory counters (RawArray: no lock)


@dataclass(frozen=True)
class WorkerConfig:
    conninfo: str
    queues: tuple[str, ...]
    table: str = "jobs"
    schema: str = "public"
    handler: str = "pgq_tui.queue.handlers:noop"
    batch: int = 10
    lease: float = 30.0
    keep: bool = False  # keep finished jobs as 'done' rows instead of deleting them
    idle_sleep: float = 0.2  # how long to wait when every queue came back empty
    reconnect_max: float = 5.0


class StopFlag:
    """When to stop: set by our own signal handlers, by the orphan check, or by an optional
    threading.Event the caller holds (when a worker runs in a thread).

    A plain attribute on purpose. A signal handler runs in the very thread it interrupts: one that
    called Event.set() could interrupt that thread inside Event.wait() while it holds the event's lock
    and deadlock it (seen with multiprocessing.Event); and a process killed while holding a shared
    lock leaves it locked for everyone. So processes are stopped with SIGTERM, and nothing here
    shares a lock across processes.
    """

    def __init__(self, event: threading.Event | None = None) -> None:
        self.raised = False
        self.event = event

    def set(self, *_: object) -> None:
        self.raised = True

    def is_set(self) -> bool:
        return self.raised or (self.event is not None and self.event.is_set())

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`, waking early once set; returns whether it is set."""
        deadline = time.monotonic() + seconds
        while not self.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            time.sleep(min(left, 0.05))
        return True

    def stop_on_signals(self) -> None:
        """SIGINT/SIGTERM stop us gracefully; a closed terminal (SIGHUP) is the parent's to handle."""
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGINT, self.set)
            signal.signal(signal.SIGTERM, self.set)
            signal.signal(signal.SIGHUP, signal.SIG_IGN)


def _bump(counters: Counters | None, index: int, n: int = 1) -> None:
    # Each worker has its own counters and is their only writer: no lock to leave held when killed.
    if counters is not None and n:
        counters[index] += n


def run_worker(
    config: WorkerConfig,
    stop: threading.Event | None = None,
    counters: Counters | None = None,
    worker_id: str | None = None,
    parent_pid: int | None = None,
) -> None:
    """The body of one worker process (stop it with SIGTERM), or of a thread (stop it with `stop`).

    parent_pid: the pool's pid; the worker stops once it is orphaned (the pool was killed). Passed in
    rather than read at start-up, since the pool may already be gone by the time a spawned child runs.
    """
    flag = StopFlag(stop)
    flag.stop_on_signals()
    handler = load_handler(config.handler)
    q = JobQueue(config.conninfo, config.table, config.schema, worker_id=worker_id or make_worker_id())
    retry_in = 0.1
    try:
        while not flag.is_set():
            if parent_pid is not None and os.getppid() != parent_pid:
                # The pool's process died without stopping us (kill -9): don't run on as an orphan.
                break
            try:
                worked = False
                for queue in config.queues:
                    jobs = q.claim(queue, limit=config.batch, lease=config.lease)
                    worked = worked or bool(jobs)
                    _process(q, jobs, handler, config, flag, counters)
                    if flag.is_set():
                        break
                retry_in = 0.1
                if not worked:
                    flag.wait(config.idle_sleep)
            except (psycopg.OperationalError, PgqError):
                # Server restart or network blip: leases we held will expire and be reaped; carry on.
                q.close()
                flag.wait(retry_in)
                retry_in = min(config.reconnect_max, retry_in * 2)
    finally:
        q.close()


def _process(
    q: JobQueue, jobs: list, handler, config: WorkerConfig, stop: StopFlag, counters: Counters | None
) -> None:
    succeeded = []
    for i, job in enumerate(jobs):
        if stop.is_set():
            _bump(counters, RELEASED, q.release(jobs[i:]))
            break
        try:
            handler(job)
        except Exception as exc:  # the handler's failure is data, not our crash
            _bump(counters, HANDLED)
            if q.fail(job, f"{type(exc).__name__}: {exc}") is None:
                _bump(counters, REFUSED)
            else:
                _bump(counters, FAILED)
            continue
        _bump(counters, HANDLED)
        succeeded.append(job)
    if succeeded:
        accepted = q.complete(succeeded, keep=config.keep)
        _bump(counters, COMPLETED, accepted)
        _bump(counters, REFUSED, len(succeeded) - accepted)
