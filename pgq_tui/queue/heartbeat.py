"""Heartbeats: while a worker holds jobs, renew their leases every lease/3, so a job whose worker is
alive is never reaped however long its handler runs, and one whose worker died is reaped one lease
after its last heartbeat.

The heartbeat runs in its own thread on its own connection (with the worker's id, so it is fenced
like `extend()` and its session matches `locked_by`): a handler that sleeps, blocks on I/O or keeps
the main connection busy can't hold it up. A handler that holds the GIL for longer than a lease
(a C extension that never releases it) can; run such work in a subprocess.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import psycopg

from pgq_tui.errors import PgqError
from pgq_tui.queue.job import Job
from pgq_tui.queue.jobqueue import JobQueue


class Heartbeat:
    """Renews the leases of the jobs handed to `hold()` until they are `drop()`ped."""

    def __init__(
        self,
        conninfo: str,
        table: str,
        schema: str,
        worker_id: str,
        lease: float,
        *,
        every: float | None = None,
        timezone: str | None = None,
    ) -> None:
        self.lease = lease
        self.every = every if every is not None else lease / 3
        self.renewals = 0  # heartbeat statements that renewed at least one lease
        self.lost: set[int] = set()  # jobs found to be no longer ours (reaped and claimed again)
        self._q = JobQueue(conninfo, table, schema, worker_id=worker_id, timezone=timezone)
        self._held: dict[int, Job] = {}
        self._lock = (
            threading.Lock()
        )  # guards _held; between this thread and the worker's, never across processes
        # Held while a renew runs, and while the worker finishes jobs: a renew and a completion that
        # lock the same rows in different orders would deadlock each other.
        self._io = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pgq-heartbeat", daemon=True)

    def start(self) -> Heartbeat:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.ident is not None:
            self._thread.join(5)
        self._q.close()

    def hold(self, jobs: Sequence[Job]) -> None:
        with self._lock:
            self._held.update((j.id, j) for j in jobs)

    def drop(self, jobs: Sequence[Job]) -> None:
        with self._lock:
            for job in jobs:
                self._held.pop(job.id, None)

    def finishing(self, jobs: Sequence[Job]) -> _Finishing:
        """Stop renewing `jobs` and keep the heartbeat's statement out of the way while the worker
        completes, fails or releases them (a context manager; a plain class, not @contextmanager's
        generator: a worker enters one per batch)."""
        return _Finishing(self, jobs)

    def beat(self) -> None:
        """Renew every held lease now, in one fenced statement."""
        with self._io:
            self._beat()

    def _beat(self) -> None:
        with self._lock:
            jobs = list(self._held.values())
        if not jobs:
            return
        renewed = self._q.renew(jobs, self.lease)
        if renewed:
            self.renewals += 1
        with self._lock:
            # Still held but not renewed: reaped while we could not reach the server, maybe claimed
            # by another worker; the fence will refuse our result, so stop renewing what is not ours.
            # (The worker drops a job before finishing it, so a finished job never lands here.)
            gone = {j.id for j in jobs if j.id not in renewed and j.id in self._held}
            for job_id in gone:
                del self._held[job_id]
        self.lost |= gone

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            try:
                self.beat()
            except (psycopg.Error, PgqError):
                self._q.close()  # reconnect on the next beat; the lease has two more beats of slack


class _Finishing:
    __slots__ = ("beat", "jobs")

    def __init__(self, beat: Heartbeat, jobs: Sequence[Job]) -> None:
        self.beat = beat
        self.jobs = jobs

    def __enter__(self) -> None:
        self.beat._io.acquire()
        try:
            self.beat.drop(self.jobs)
        except BaseException:
            self.beat._io.release()
            raise

    def __exit__(self, *exc: object) -> None:
        self.beat._io.release()
