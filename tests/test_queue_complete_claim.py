"""complete_and_claim(): the worker's steady state, completing a batch and claiming the next in one
statement. Fenced like complete(), and atomic: a completion that is refused still claims, one that
fails claims nothing, and the claim takes no row lock before the completion has taken all of its own.
The queue-level tests run on JobQueue and on AsyncJobQueue (tests/queue_apis.py)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from ctypes import c_longlong

import psycopg
import pytest
from queue_apis import APIS, factory

from pgq_tui.queue import JobQueue
from pgq_tui.queue import worker as worker_mod
from pgq_tui.queue.job import Job
from pgq_tui.queue.worker import COUNTER_NAMES, RELEASED, WorkerConfig, run_worker


@pytest.fixture(params=APIS)
def make_queue(request: pytest.FixtureRequest) -> Iterator[Callable[..., JobQueue]]:
    """JobQueue or AsyncJobQueue (behind a synchronous view), closed after the test."""
    made: list = []

    def make(*args: object, **kwargs: object) -> JobQueue:
        made.append(factory(request.param)(*args, **kwargs))
        return made[-1]

    yield make
    for q in made:
        q.close()


@pytest.fixture
def queue(make_queue: Callable[..., JobQueue], dsn: str) -> JobQueue:
    return make_queue(dsn)


def _completed(sql: psycopg.Connection) -> int:
    return sql.execute("SELECT coalesce(sum(completed), 0) FROM jobs_stats").fetchone()[0]


def test_completes_the_batch_and_claims_the_next_in_one_transaction(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    ids = queue.enqueue("q", [{"n": n} for n in range(5)])
    first = queue.claim("q", limit=2, lease=60)
    accepted, following = queue.complete_and_claim(first, "q", limit=2, lease=60, keep=True)
    assert accepted == 2 and [j.status for j in first] == ["done", "done"]
    assert [j.id for j in first] == ids[:2] and [j.id for j in following] == ids[2:4]
    assert all(j.locked_by == queue.worker_id and j.attempts == 1 for j in following)
    rows = dict(sql.execute("SELECT id, (status, xmin::text) FROM jobs").fetchall())
    assert [rows[i][0] for i in ids] == ["done", "done", "running", "running", "pending"]
    assert len({rows[i][1] for i in ids[:4]}) == 1, "the completion and the claim are one transaction"
    assert _completed(sql) == 2  # counted in the same statement, as complete() does
    accepted, following = queue.complete_and_claim(following, "q", limit=2, lease=60)
    assert accepted == 2 and [j.id for j in following] == ids[4:]
    assert queue.complete_and_claim(following, "q") == (1, [])  # nothing left: completed, none claimed
    assert sql.execute("SELECT count(*) FROM jobs WHERE status <> 'done'").fetchone()[0] == 0
    assert _completed(sql) == 5


def test_a_reaped_and_reclaimed_job_is_refused_and_the_claim_still_goes_ahead(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    ids = queue.enqueue("q", [{}] * 4)
    with JobQueue(queue.conninfo) as other:
        stale = queue.claim("q", limit=2, lease=0.1)
        time.sleep(0.2)
        assert other.reap() == 2
        assert sorted(j.id for j in other.claim("q", limit=2, lease=60)) == ids[:2]
        accepted, following = queue.complete_and_claim(stale, "q", limit=10, lease=60)
        assert accepted == 0 and [j.status for j in stale] == ["running", "running"]
        assert [j.id for j in following] == ids[2:], "the claim half must not depend on the fence"
        rows = sql.execute("SELECT id, status, locked_by FROM jobs ORDER BY id").fetchall()
        assert rows == [(i, "running", other.worker_id) for i in ids[:2]] + [
            (i, "running", queue.worker_id) for i in ids[2:]
        ]
        assert _completed(sql) == 0


def test_a_failing_completion_claims_nothing(
    make_queue: Callable[..., JobQueue], dsn: str, sql: psycopg.Connection
) -> None:
    with make_queue(dsn, lock_timeout_ms=100) as q:
        ids = q.enqueue("q", [{}] * 4)
        held = q.claim("q", limit=2, lease=60)
        with psycopg.connect(dsn) as blocker:  # an operator's transaction holds one of the rows
            blocker.execute("SELECT 1 FROM jobs WHERE id = %s FOR UPDATE", (held[0].id,))
            with pytest.raises(psycopg.errors.LockNotAvailable):
                q.complete_and_claim(held, "q", limit=2, lease=60)
            rows = sql.execute("SELECT id, status, attempts, locked_by FROM jobs ORDER BY id").fetchall()
            assert rows[:2] == [(i, "running", 1, q.worker_id) for i in ids[:2]]
            assert rows[2:] == [(i, "pending", 0, None) for i in ids[2:]], "a claimed row was lost"
        accepted, following = q.complete_and_claim(held, "q", limit=2, lease=60)  # the lock is gone
        assert accepted == 2 and [j.id for j in following] == ids[2:]


def test_the_claim_locks_nothing_while_the_completion_waits(dsn: str, sql: psycopg.Connection) -> None:
    """The completion's row locks come first: a statement waiting on one holds no claimed row (two
    workers' statements cannot deadlock each other that way)."""
    with JobQueue(dsn) as q, psycopg.connect(dsn) as blocker, psycopg.connect(dsn) as probe:
        q.enqueue("q", [{}] * 6)
        held = q.claim("q", limit=2, lease=60)
        blocker.execute("SELECT 1 FROM jobs WHERE id = %s FOR UPDATE", (held[1].id,))
        result: list[tuple[int, list]] = []
        call = threading.Thread(target=lambda: result.append(q.complete_and_claim(held, "q", limit=4)))
        call.start()
        deadline = time.monotonic() + 30
        while not sql.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s AND wait_event_type = 'Lock'",
            (q.worker_id,),
        ).fetchone()[0]:
            assert time.monotonic() < deadline, "the completion never waited on the blocked row"
            time.sleep(0.02)
        lockable = probe.execute(
            "SELECT count(*) FROM (SELECT id FROM jobs WHERE status = 'pending' FOR UPDATE SKIP LOCKED) t"
        ).fetchone()[0]
        probe.rollback()
        assert lockable == 4, "the claim locked rows before its completion had finished"
        blocker.rollback()
        call.join(30)
        ((accepted, following),) = result
        assert accepted == 2 and len(following) == 4


def test_a_paused_queue_is_completed_but_not_claimed(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}] * 3)
    held = queue.claim("q", limit=1, lease=60)
    assert queue.pause("q")
    assert queue.complete_and_claim(held, "q", limit=10) == (1, [])
    assert sql.execute("SELECT count(*) FROM jobs WHERE status = 'pending'").fetchone()[0] == 2


def test_a_worker_that_stops_with_a_batch_claimed_ahead_releases_it(
    dsn: str, sql: psycopg.Connection, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The batch claimed with the last completion is handed back when the worker stops before it
    starts it (here: it finds itself orphaned), attempts not counted."""
    with JobQueue(dsn) as q:
        q.enqueue("q", [{}] * 30)
    handled: list[int] = []
    monkeypatch.setattr(worker_mod, "_orphaned", lambda parent_pid: len(handled) >= 10)
    monkeypatch.setattr("pgq_tui.queue.handlers.noop", lambda job: handled.append(job.id))
    counters = (c_longlong * len(COUNTER_NAMES))()
    config = WorkerConfig(dsn, ("q",), batch=10, listen=False, heartbeat=False)
    run_worker(config, threading.Event(), counters, parent_pid=1)
    assert len(handled) == 10 and counters[RELEASED] == 10
    left = sql.execute("SELECT status, attempts, count(*) FROM jobs GROUP BY 1, 2").fetchall()
    assert left == [("pending", 0, 20)], "the carried batch was not released"


def test_a_partly_refused_completion_accepts_and_counts_exactly_the_jobs_still_held(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    """Where the fence refuses part of a batch, the statement names the accepted ids (it sends none
    when it accepted all): the refused job keeps its status and its new holder, and is not counted."""
    ids = queue.enqueue("q", [{}] * 3)
    held = queue.claim("q", limit=2, lease=60)
    with JobQueue(queue.conninfo) as other:
        sql.execute("UPDATE jobs SET locked_until = now() - interval '1 s' WHERE id = %s", (ids[1],))
        assert other.reap() == 1
        (taken,) = other.claim("q", limit=1, lease=60)
        assert taken.id == ids[1] and taken.attempts == 2
        accepted, following = queue.complete_and_claim(held, "q", limit=2, lease=60)
        assert accepted == 1 and [j.status for j in held] == ["done", "running"]
        assert [j.id for j in following] == ids[2:]
        assert _completed(sql) == 1
        assert sql.execute(
            "SELECT status, locked_by, attempts FROM jobs WHERE id = %s", (ids[1],)
        ).fetchone() == (
            "running",
            other.worker_id,
            2,
        )
        assert other.complete([taken]) == 1 and _completed(sql) == 2


def test_a_job_given_twice_is_completed_and_counted_once(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}] * 2)
    (job,) = queue.claim("q", limit=1, lease=60)
    accepted, following = queue.complete_and_claim([job, job], "q", limit=1, lease=60)
    assert accepted == 1 and job.status == "done" and len(following) == 1
    assert _completed(sql) == 1


def test_racing_completions_of_one_job_complete_it_exactly_once(dsn: str, sql: psycopg.Connection) -> None:
    """The stale holder (its lease reaped) and the new one complete the same row at the same moment,
    each in its worker's combined statement: one is accepted, counted once; the other refused."""
    for _ in range(5):
        sql.execute("TRUNCATE jobs, jobs_stats")
        with JobQueue(dsn) as stale, JobQueue(dsn) as fresh:
            stale.enqueue("q", [{}] * 5)
            (old,) = stale.claim("q", limit=1, lease=60)
            sql.execute("UPDATE jobs SET locked_until = now() - interval '1 s' WHERE id = %s", (old.id,))
            assert fresh.reap() == 1
            (new,) = fresh.claim("q", limit=1, lease=60)
            assert new.id == old.id
            barrier = threading.Barrier(2)
            results: dict[str, tuple[int, list[Job]]] = {}

            def complete(name: str, q: JobQueue, job: Job, into: dict, barrier: threading.Barrier) -> None:
                barrier.wait()
                into[name] = q.complete_and_claim([job], "q", limit=2, lease=60)

            threads = [
                threading.Thread(target=complete, args=("stale", stale, old, results, barrier)),
                threading.Thread(target=complete, args=("fresh", fresh, new, results, barrier)),
            ]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            assert results["stale"][0] == 0 and old.status == "running"
            assert results["fresh"][0] == 1 and new.status == "done"
            assert _completed(sql) == 1
            claimed = [j.id for _, jobs in results.values() for j in jobs]
            assert len(claimed) == len(set(claimed)), "a job was claimed twice"
            running = sql.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0]
            assert running == len(claimed) and sql.execute("SELECT count(*) FROM jobs").fetchone()[0] == 4
