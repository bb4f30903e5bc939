"""A foreign worker fleet: the seed article's plain SQL from "another language" (no pgq_tui.queue, so
no counters bumped), on pgq-top's own table or the seed's. Processes, each one connection:
- an enqueuer per queue: INSERT ... SELECT generate_series (queue `del`) or COPY (queue `done`);
- claimers: claim (the seed's UPDATE ... FOR UPDATE SKIP LOCKED) then DELETE (queue `del`) or
  mark done (queue `done`), each in its own transaction.
Each process counts what it did in shared counters, so a test reads the truth between two polls. A
claimer counts its jobs twice: as sent just before its finishing statement (whose now() stamps
them), and as completed once it returned: a job stamped in a window was sent before its stamp and
completed after it, whatever a loaded machine does in between.
"""

from __future__ import annotations

import multiprocessing as mp
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from multiprocessing.sharedctypes import Synchronized
from typing import Any

import psycopg


@dataclass(frozen=True)
class Shape:
    """A jobs table as the foreign fleet writes it: plain SQL, no client library."""

    insert: str  # params: queue, n
    copy: str  # COPY ... FROM STDIN of (queue, payload) rows
    claim: str  # params: queue, n; returns the claimed ids
    finish: dict[str, str] = field(default_factory=dict)  # "delete" / "done" -> SQL, param: the ids
    copy_extra: tuple[str, ...] = ()  # further COPY columns' values, after queue and payload


SEED = Shape(  # pgq-top's own table (or the seed's), written with the seed article's SQL
    insert="INSERT INTO jobs (queue, payload) SELECT %(queue)s, jsonb_build_object('n', g) "
    "FROM generate_series(1, %(n)s) g",
    copy="COPY jobs (queue, payload) FROM STDIN",
    claim="""
UPDATE jobs SET status = 'running', attempts = attempts + 1,
                locked_until = now() + interval '60 seconds'
WHERE id IN (SELECT id FROM jobs WHERE status = 'pending' AND queue = %(queue)s AND run_at <= now()
             ORDER BY run_at, id LIMIT %(n)s FOR UPDATE SKIP LOCKED)
RETURNING id
""",
    finish={
        "delete": "DELETE FROM jobs WHERE id = ANY(%s)",
        "done": "UPDATE jobs SET status = 'done' WHERE id = ANY(%s)",
    },
)
QUEUES = {"del": "delete", "done": "done"}  # queue -> how its claimers finish a job


def _enqueue(
    dsn: str, shape: Shape, queue: str, per_s: float, batch: int, copy: bool, count: Any, stop: Any
) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        started, sent = time.monotonic(), 0
        while not stop.is_set():
            due = (time.monotonic() - started) * per_s
            if sent >= due:
                time.sleep(min(0.05, (sent - due) / per_s + 0.001))
                continue
            if copy:
                with conn.transaction(), conn.cursor().copy(shape.copy) as cp:
                    for i in range(batch):
                        cp.write_row((queue, f'{{"n": {sent + i}}}', *shape.copy_extra))
            else:
                conn.execute(shape.insert, {"queue": queue, "n": batch})
            sent += batch
            with count.get_lock():
                count.value += batch


def _work(dsn: str, shape: Shape, queue: str, batch: int, count: Any, sent: Any, stop: Any) -> None:
    finish = shape.finish[QUEUES[queue]]
    with psycopg.connect(dsn, autocommit=True) as conn:
        while not stop.is_set():
            ids = [r[0] for r in conn.execute(shape.claim, {"queue": queue, "n": batch}).fetchall()]
            if not ids:
                time.sleep(0.01)
                continue
            with sent.get_lock():
                sent.value += len(ids)
            n = conn.execute(finish, (ids,)).rowcount
            with count.get_lock():
                count.value += n


@dataclass
class Fleet:
    enqueued: Mapping[str, Synchronized]  # type: ignore[type-arg]
    completed: Mapping[str, Synchronized]  # type: ignore[type-arg]
    sent: Mapping[str, Synchronized]  # type: ignore[type-arg]  # finishing statements sent

    def wait_running(self, timeout: float) -> None:
        """Until every queue has finished a job (the processes are up and working)."""
        deadline = time.monotonic() + timeout
        while any(done == 0 for _, done, _ in self.read().values()):
            if time.monotonic() > deadline:
                raise TimeoutError(f"the foreign fleet did not start: {self.read()}")
            time.sleep(0.05)

    def read(self) -> dict[str, tuple[int, int, int]]:
        """queue -> (enqueued, completed, sent) so far."""
        return {
            q: (self.enqueued[q].value, self.completed[q].value, self.sent[q].value) for q in self.enqueued
        }


@contextmanager
def foreign_fleet(
    dsn: str,
    per_s: float,
    *,
    workers: int = 1,
    batch: int = 10,
    enqueue_batch: int = 50,
    shape: Shape = SEED,
) -> Iterator[Fleet]:
    """Run the fleet (each queue enqueued at `per_s` jobs/s, drained by `workers` claimers) until the
    block ends; the processes are stopped and joined on the way out."""
    ctx = mp.get_context("spawn")
    stop = ctx.Event()
    fleet = Fleet(*({q: ctx.Value("q", 0) for q in QUEUES} for _ in range(3)))
    procs = []
    for queue in QUEUES:
        copy = QUEUES[queue] == "done"  # one queue enqueued by INSERT, the other by COPY
        args = (dsn, shape, queue, per_s, enqueue_batch, copy, fleet.enqueued[queue], stop)
        procs.append(ctx.Process(target=_enqueue, args=args, daemon=True))
        for _ in range(workers):
            procs.append(
                ctx.Process(
                    target=_work,
                    args=(dsn, shape, queue, batch, fleet.completed[queue], fleet.sent[queue], stop),
                    daemon=True,
                )
            )
    for p in procs:
        p.start()
    try:
        yield fleet
    finally:
        stop.set()
        for p in procs:
            p.join(10)
            if p.is_alive():
                p.kill()
                p.join()
