"""A worker process: claim, run the handler, complete or fail (the pool that runs and supervises
them is in pool.py).

A worker claims a batch, runs the handler on each job, then completes the successes in one
statement and fails the errors one by one (each with its backoff). The statement that completes a
batch also claims the next one (COMPLETE_*_CLAIM in jobtable/statements.py): one round trip and one
commit per batch while there is work, fenced like a plain completion. Its session's application_name is
its worker id, the same string it writes into `locked_by`, so the monitor can tell whether a lease's
holder is still connected.

Idle, a worker does not poll: it waits on its process's LISTEN connection (wakeup.py) and claims when
notified, when the earliest scheduled job falls due, or after `poll` seconds (the safety net for a
lost notification). Busy, a heartbeat thread (heartbeat.py) renews the leases it holds every lease/3.

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
from pgq_tui.queue.handlers import Handler, load_handler
from pgq_tui.queue.heartbeat import Heartbeat
from pgq_tui.queue.job import Job
from pgq_tui.queue.jobqueue import JobQueue, make_worker_id
from pgq_tui.queue.wakeup import Wakeup

# Indexes into the pool's shared counters.
HANDLED, COMPLETED, FAILED, REFUSED, RELEASED, CLAIMS, EMPTY_CLAIMS = range(7)
# A worker's sessions read timestamps in UTC: a claimed job's run_at, locked_until and created_at are
# datetimes in `timezone.utc` (cheaper to build than the server zone's; the same instants).
WORKER_TIMEZONE = "UTC"
COUNTER_NAMES = ("handled", "completed", "failed", "refused", "released", "claims", "empty_claims")
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
    listen: bool = True  # wake on NOTIFY; False: poll every idle_sleep seconds (the old way)
    poll: float = 10.0  # listening: the safety poll, for a notification lost some other way
    idle_sleep: float = 0.2  # not listening: how long to wait when every queue came back empty
    heartbeat: bool = True  # renew held leases every lease/3 while handlers run
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
    wid = worker_id or make_worker_id()
    q = JobQueue(config.conninfo, config.table, config.schema, worker_id=wid, timezone=WORKER_TIMEZONE)
    beat = Heartbeat(
        config.conninfo, config.table, config.schema, wid, config.lease, timezone=WORKER_TIMEZONE
    )
    wake = (
        Wakeup(
            config.conninfo,
            q.channel,
            config.queues,
            application_name=wid,
            reconnect_max=config.reconnect_max,
        )
        if config.listen
        else None
    )
    if config.heartbeat:
        beat.start()
    if wake is not None:
        wake.start()
    idle = _Idle(q, wake, config, flag)
    retry_in = 0.1
    # The next queue's batch, claimed in the statement that completed the last one (see _finish).
    carried: tuple[str, list[Job]] | None = None
    try:
        while not flag.is_set():
            if _orphaned(parent_pid):
                # The pool's process died without stopping us (kill -9): don't run on as an orphan.
                break
            try:
                if wake is not None and carried is None:
                    wake.event.clear()  # from here on, a notification means "look again"
                worked = False
                for i, queue in enumerate(config.queues):
                    if carried is not None and carried[0] == queue:
                        jobs, carried = carried[1], None
                    else:
                        jobs = q.claim(queue, limit=config.batch, lease=config.lease)
                        # The whole batch: jobs waiting their turn need their leases renewed too
                        # (a carried batch is held by _finish, which claimed it).
                        beat.hold(jobs)
                        _bump(counters, CLAIMS)
                        _bump(counters, EMPTY_CLAIMS, not jobs)
                    worked = worked or bool(jobs)
                    succeeded = _process(q, beat, jobs, handler, flag, counters)
                    following = config.queues[(i + 1) % len(config.queues)]
                    if wake is not None and i == len(config.queues) - 1:
                        wake.event.clear()  # what follows may claim the next round's first batch
                    carried = _finish(
                        q, beat, succeeded, config, counters, None if flag.is_set() else following
                    )
                    if flag.is_set():
                        break
                retry_in = 0.1
                if worked:
                    idle.stalls = 0
                    idle.notified = False
                else:
                    idle.wait()
            except (psycopg.OperationalError, PgqError):
                # Server restart or network blip: leases we held will expire and be reaped; carry on.
                q.close()
                flag.wait(retry_in)
                retry_in = min(config.reconnect_max, retry_in * 2)
    finally:
        if carried is not None and carried[1]:
            _release_carried(q, beat, carried[1], counters)
        if wake is not None:
            wake.stop()
        beat.stop()
        q.close()


def _orphaned(parent_pid: int | None) -> bool:
    return parent_pid is not None and os.getppid() != parent_pid


def _release_carried(q: JobQueue, beat: Heartbeat, jobs: list[Job], counters: Counters | None) -> None:
    """Stopping with a batch claimed but not started: hand it back (its leases expire otherwise)."""
    try:
        with beat.finishing(jobs):
            _bump(counters, RELEASED, q.release(jobs))
    except (psycopg.Error, PgqError):
        pass  # the server is gone: the leases expire and are reaped


# After a notification led to an empty claim (another worker took the job, or a storm of wake-ups),
# the next notification is honoured no sooner than this: a burst of N notifications costs at most
# one claim per WAKE_GAP per worker, not N.
WAKE_GAP = 0.01


@dataclass
class _Idle:
    """How a worker whose queues came back empty waits for work."""

    q: JobQueue
    wake: Wakeup | None
    config: WorkerConfig
    stop: StopFlag
    stalls: int = 0  # empty claims in a row although a job was due (rows locked by someone else)
    notified: bool = False  # the last wait ended with a notification

    def wait(self) -> None:
        """Return when a claim is worth trying: notified (or the listener reconnected), the earliest
        scheduled job is due, or the safety poll elapsed and a job is due. Nothing pending and no
        notification: one cheap read-only probe per `poll` seconds, no claims."""
        if self.wake is None or self.wake.unavailable:  # no LISTEN (behind a transaction pooler): poll
            self.stop.wait(self.config.idle_sleep)
            return
        if self.notified:  # that notification's claim came back empty: coalesce what follows
            self.stop.wait(WAKE_GAP)
        self.notified = False
        while not self.stop.is_set():
            due_in = self.q.seconds_until_due(self.config.queues)
            if due_in is not None and due_in <= 0:
                # Due, but our claim found nothing: its rows are locked by another session (a
                # claimer about to commit, or an operator's transaction). Back off, don't spin.
                self.stalls += 1
                self.notified = self._sleep(min(self.config.poll, 0.01 * 2 ** min(self.stalls, 10)))
                return
            timeout = self.config.poll if due_in is None else min(self.config.poll, due_in)
            self.notified = self._sleep(timeout)
            if self.notified or (due_in is not None and due_in <= self.config.poll):
                return

    def _sleep(self, seconds: float) -> bool:
        """Sleep up to `seconds`; True if a notification woke us. The stop flag (set by a signal
        handler, which can't safely touch an Event) is checked every 50 ms."""
        assert self.wake is not None
        deadline = time.monotonic() + seconds
        while not self.stop.is_set():
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            if self.wake.event.wait(min(left, 0.05)):
                return True
        return False


def _process(
    q: JobQueue,
    beat: Heartbeat,
    jobs: list[Job],
    handler: Handler,
    stop: StopFlag,
    counters: Counters | None,
) -> list[Job]:
    """Run the handler on each job (held by the heartbeat since they were claimed); fail the errors
    one by one; returns the successes, for _finish. Stopping, the jobs not started are released."""
    succeeded = []
    for i, job in enumerate(jobs):
        if stop.is_set():
            with beat.finishing(jobs[i:]):
                _bump(counters, RELEASED, q.release(jobs[i:]))
            break
        try:
            handler(job)
        except Exception as exc:  # the handler's failure is data, not our crash
            _bump(counters, HANDLED)
            with beat.finishing([job]):
                status = q.fail(job, f"{type(exc).__name__}: {exc}")
            _bump(counters, REFUSED if status is None else FAILED)
            continue
        _bump(counters, HANDLED)
        succeeded.append(job)
    return succeeded


def _finish(
    q: JobQueue,
    beat: Heartbeat,
    succeeded: list[Job],
    config: WorkerConfig,
    counters: Counters | None,
    following: str | None,
) -> tuple[str, list[Job]] | None:
    """Complete the successes in one statement; unless stopping (`following` None), the same
    statement claims the batch of the `following` queue (one round trip and one commit per batch in
    the steady state instead of two). Returns that claim, held by the heartbeat from here on."""
    if not succeeded:
        return None
    carried = None
    with beat.finishing(succeeded):
        if following is None:
            accepted = q.complete(succeeded, keep=config.keep)
        else:
            accepted, claimed = q.complete_and_claim(
                succeeded, following, limit=config.batch, lease=config.lease, keep=config.keep
            )
            beat.hold(claimed)
            carried = (following, claimed)
            _bump(counters, CLAIMS)
            _bump(counters, EMPTY_CLAIMS, not claimed)
    _bump(counters, COMPLETED, accepted)
    _bump(counters, REFUSED, len(succeeded) - accepted)
    return carried
