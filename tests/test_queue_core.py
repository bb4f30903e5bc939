"""The queue's contract, against a real server: ordering, leases, backoff, dead letters, fencing,
notifications, install. Every test runs twice: on JobQueue and on AsyncJobQueue (tests/queue_apis.py)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from psycopg import sql as pgsql
from queue_apis import APIS, factory

from pgq_tui.errors import PgqError
from pgq_tui.jobtable.schema import AUTOVACUUM_OPTIONS
from pgq_tui.queue import JobQueue
from pgq_tui.queue.job import Job


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


def statuses(conn: psycopg.Connection) -> dict[int, str]:
    return dict(conn.execute("SELECT id, status FROM jobs").fetchall())


def test_install_is_idempotent_and_sets_indexes_and_autovacuum(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    queue.enqueue("q", [{"a": 1}])
    queue.install()
    queue.install()
    assert sql.execute("SELECT count(*) FROM jobs").fetchone()[0] == 1
    indexes = dict(
        sql.execute("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'jobs'").fetchall()
    )
    assert "WHERE (status = 'pending'::text)" in indexes["jobs_claim_idx"]
    assert "WHERE (status = 'running'::text)" in indexes["jobs_lease_idx"]
    assert (
        "(queue, finished_at DESC NULLS LAST, id DESC) WHERE (status = 'failed'::text)"
        in (indexes["jobs_dead_idx"])
    )
    assert "jobs_done_idx" in indexes and "jobs_failed_idx" not in indexes
    (reloptions,) = sql.execute("SELECT reloptions FROM pg_class WHERE relname = 'jobs'").fetchone()
    assert {f"{k}={v}" for k, v in AUTOVACUUM_OPTIONS.items()} <= set(reloptions)


def test_install_adds_the_dead_index_to_an_existing_table(queue: JobQueue, sql: psycopg.Connection) -> None:
    # A table installed by an older version: the dead-letter index was (queue) only.
    sql.execute("DROP INDEX jobs_dead_idx")
    sql.execute("CREATE INDEX jobs_failed_idx ON jobs (queue) WHERE status = 'failed'")
    queue.install()
    names = {r[0] for r in sql.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'jobs'")}
    assert "jobs_dead_idx" in names and "jobs_failed_idx" not in names


def test_status_is_constrained(queue: JobQueue, sql: psycopg.Connection) -> None:
    with pytest.raises(psycopg.errors.CheckViolation):
        sql.execute("INSERT INTO jobs (queue, status) VALUES ('q', 'exploded')")


def test_enqueue_batches_and_returns_ids_in_payload_order(queue: JobQueue, sql: psycopg.Connection) -> None:
    ids = queue.enqueue("bulk", [{"n": i} for i in range(12_345)])
    assert len(ids) == 12_345 and ids == sorted(ids)
    rows = sql.execute("SELECT id, (payload->>'n')::int FROM jobs ORDER BY id").fetchall()
    assert [n for _, n in rows] == list(range(12_345))
    assert sql.execute("SELECT sum(enqueued) FROM jobs_stats").fetchone()[0] == 12_345


def test_claim_orders_by_priority_then_run_at(queue: JobQueue) -> None:
    now = datetime.now(timezone.utc)
    low_old = queue.enqueue("q", [{"k": "low-old"}], run_at=now - timedelta(minutes=5))
    high_new = queue.enqueue("q", [{"k": "high-new"}], run_at=now - timedelta(seconds=1), priority=10)
    low_new = queue.enqueue("q", [{"k": "low-new"}], run_at=now - timedelta(seconds=2))
    other_queue = queue.enqueue("other", [{"k": "x"}])
    jobs = queue.claim("q", limit=10)
    assert [j.id for j in jobs] == high_new + low_old + low_new
    assert all(j.queue == "q" and j.attempts == 1 for j in jobs)
    assert queue.claim("other")[0].id == other_queue[0]


def test_scheduled_jobs_are_never_claimed_early(queue: JobQueue, sql: psycopg.Connection) -> None:
    soon = datetime.now(timezone.utc) + timedelta(seconds=1.5)
    (job_id,) = queue.enqueue("q", [{}], run_at=soon)
    # Claim until the job comes. A claim judged early is one that had returned before run_at (on a
    # busy machine a claim asked for just before run_at may run after it, and rightly take the job).
    early, deadline = 0, time.monotonic() + 30
    while not (jobs := queue.claim("q", lease=60)):
        early += datetime.now(timezone.utc) < soon
        assert time.monotonic() < deadline, "the job was never claimed once due"
        time.sleep(0.1)
    assert datetime.now(timezone.utc) >= soon, "claimed before run_at"
    assert [j.id for j in jobs] == [job_id] and early > 0, early  # some claims were tried early
    (claimed_at, run_at) = sql.execute(
        "SELECT locked_until - interval '60 s', run_at FROM jobs WHERE id = %s", (job_id,)
    ).fetchone()
    assert claimed_at >= run_at, "claimed before run_at by the server's clock"


def test_claim_sets_lease_and_worker(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}, {}])
    jobs = queue.claim("q", limit=5, lease=60)
    row = sql.execute(
        "SELECT status, locked_by, locked_until - now() FROM jobs WHERE id = %s", (jobs[0].id,)
    ).fetchone()
    assert row[0] == "running" and row[1] == queue.worker_id
    assert timedelta(seconds=55) < row[2] <= timedelta(seconds=60)


def test_complete_deletes_or_keeps(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}, {}])
    a, b = queue.claim("q", limit=2)
    assert queue.complete([a]) == 1
    assert queue.complete([b], keep=True) == 1
    rows = sql.execute("SELECT id, status, finished_at IS NOT NULL, locked_until FROM jobs").fetchall()
    assert rows == [(b.id, "done", True, None)]
    assert sql.execute("SELECT sum(completed) FROM jobs_stats").fetchone()[0] == 2


def test_fail_backs_off_then_dead_letters(queue: JobQueue, sql: psycopg.Connection) -> None:
    (job_id,) = queue.enqueue("q", [{}], max_attempts=3)
    for attempt in (1, 2):
        (job,) = queue.claim("q")
        assert job.attempts == attempt
        before = datetime.now(timezone.utc)
        assert queue.fail(job, f"boom {attempt}") == "pending"
        status, run_at, error = sql.execute(
            "SELECT status, run_at, last_error FROM jobs WHERE id = %s", (job_id,)
        ).fetchone()
        assert status == "pending" and error == f"boom {attempt}"
        # full jitter in [base*2^(n-1)/2, base*2^(n-1)] with base 1 s
        delay = (run_at - before).total_seconds()
        assert 2 ** (attempt - 1) / 2 - 0.5 <= delay <= 2 ** (attempt - 1) + 0.5
        assert queue.claim("q") == [], "retried before its backoff"
        sql.execute("UPDATE jobs SET run_at = now() WHERE id = %s", (job_id,))
    (job,) = queue.claim("q")
    assert queue.fail(job, "final") == "failed"
    status, attempts, error, finished = sql.execute(
        "SELECT status, attempts, last_error, finished_at IS NOT NULL FROM jobs WHERE id = %s", (job_id,)
    ).fetchone()
    assert (status, attempts, error, finished) == ("failed", 3, "final", True)
    assert sql.execute("SELECT sum(failed), sum(dead) FROM jobs_stats").fetchone() == (3, 1)


def test_fail_with_explicit_backoff(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}])
    (job,) = queue.claim("q")
    queue.fail(job, "later", backoff=3600)
    (delay,) = sql.execute("SELECT extract(epoch FROM run_at - now()) FROM jobs").fetchone()
    assert 3590 < float(delay) <= 3600


def test_reap_returns_expired_leases_and_dead_letters_exhausted_ones(
    queue: JobQueue, make_queue: Callable[..., JobQueue], sql: psycopg.Connection
) -> None:
    queue.enqueue("q", [{}, {}, {}], max_attempts=1)
    queue.enqueue("q", [{}], max_attempts=5)
    short = queue.claim("q", limit=10, lease=0.2)
    with make_queue(queue.conninfo) as other:
        other.enqueue("q2", [{}])
        long = other.claim("q2", lease=60)
    time.sleep(0.4)
    assert queue.reap() == 4
    rows = dict(sql.execute("SELECT id, status FROM jobs").fetchall())
    assert [rows[j.id] for j in short] == ["failed", "failed", "failed", "pending"]
    assert rows[long[0].id] == "running", "a valid lease was reaped"
    assert (
        sql.execute(
            "SELECT count(*) FROM jobs WHERE last_error LIKE 'lease expired while held by pgq-w-%'"
        ).fetchone()[0]
        == 4
    )
    # Counted in the same statement, like FAIL: each reaped lease is a failed attempt, the exhausted
    # ones are dead letters (the poison-job case: "dead/s" must not stay 0).
    counted = sql.execute("SELECT sum(failed), sum(dead) FROM jobs_stats WHERE queue = 'q'").fetchone()
    assert counted == (4, 3)
    assert queue.reap() == 0


def test_fencing_refuses_a_stale_worker(
    queue: JobQueue, make_queue: Callable[..., JobQueue], sql: psycopg.Connection
) -> None:
    queue.enqueue("q", [{}, {}])
    with make_queue(queue.conninfo) as stale, make_queue(queue.conninfo) as fresh:
        a, b = stale.claim("q", limit=2, lease=0.1)
        time.sleep(0.2)
        assert fresh.reap() == 2
        a2, b2 = fresh.claim("q", limit=2, lease=60)
        assert {a2.id, b2.id} == {a.id, b.id} and a2.attempts == 2
        assert stale.complete([a, b]) == 0
        assert stale.fail(a, "late") is None
        assert stale.extend(b, 60) is False
        assert stale.release([a, b]) == 0
        rows = sql.execute("SELECT status, attempts, locked_by FROM jobs ORDER BY id").fetchall()
        assert rows == [("running", 2, fresh.worker_id)] * 2
        assert fresh.extend(a2, 120) is True
        assert fresh.complete([a2, b2]) == 2
    assert sql.execute("SELECT count(*) FROM jobs").fetchone()[0] == 0


def test_complete_marks_only_the_accepted_jobs_done(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}, {}])
    with JobQueue(queue.conninfo) as other:
        (stale,) = queue.claim("q", limit=1, lease=0.1)
        (held,) = queue.claim("q", limit=1, lease=60)
        time.sleep(0.2)
        assert other.reap() == 1 and [j.id for j in other.claim("q", lease=60)] == [stale.id]
        assert queue.complete([stale, held], keep=True) == 1
        assert (held.status, stale.status) == ("done", "running")  # fencing refused the stale one
        assert statuses(sql) == {held.id: "done", stale.id: "running"}


def test_complete_after_expiry_but_before_reap_is_accepted(queue: JobQueue) -> None:
    queue.enqueue("q", [{}])
    jobs = queue.claim("q", lease=0.05)
    time.sleep(0.1)
    assert queue.complete(jobs) == 1


def test_release_does_not_burn_an_attempt(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}, {}])
    jobs = queue.claim("q", limit=2)
    assert queue.release(jobs) == 2
    assert (
        sql.execute("SELECT status, attempts, locked_by FROM jobs").fetchall() == [("pending", 0, None)] * 2
    )


def test_requeue_retry_discard_touch_only_their_state(queue: JobQueue, sql: psycopg.Connection) -> None:
    ids = queue.enqueue("q", [{"i": i} for i in range(6)], max_attempts=1)
    stuck = queue.claim("q", limit=2, lease=0.05)
    live = queue.claim("q", limit=1, lease=60)
    dead = queue.claim("q", limit=2, lease=60)
    for job in dead:
        assert queue.fail(job, "dead") == "failed"
    time.sleep(0.1)
    everything = [*ids, 999999]
    # requeue: only running with an expired lease
    assert queue.requeue(everything) == 2
    state = statuses(sql)
    assert [state[j.id] for j in stuck] == ["pending", "pending"]
    assert state[live[0].id] == "running"
    # retry: only failed, with a fresh attempt budget
    assert queue.retry([live[0].id, dead[0].id]) == 1
    assert sql.execute("SELECT status, attempts FROM jobs WHERE id = %s", (dead[0].id,)).fetchone() == (
        "pending",
        0,
    )
    # discard: only failed
    assert queue.discard(everything) == 1
    state = statuses(sql)
    assert dead[1].id not in state and state[live[0].id] == "running" and len(state) == 5


def test_prune_deletes_old_done_rows_in_batches(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}] * 25)
    jobs = queue.claim("q", limit=25)
    queue.complete(jobs[:20], keep=True)
    sql.execute(
        "UPDATE jobs SET finished_at = now() - interval '2 days' WHERE id = ANY(%s)",
        ([j.id for j in jobs[:15]],),
    )
    assert queue.prune(86_400, batch=4) == 15
    assert sql.execute("SELECT status, count(*) FROM jobs GROUP BY 1 ORDER BY 1").fetchall() == [
        ("done", 5),
        ("running", 5),
    ]


def test_a_claimed_job_is_its_row(queue: JobQueue, sql: psycopg.Connection) -> None:
    """A claim returns fewer columns than a Job has (the rest it set itself) and builds Jobs by
    position: every field must still be the stored row's, through claim() and complete_and_claim(),
    and ids past 2^31 must get through the fence's arrays."""
    sql.execute("SELECT setval(pg_get_serial_sequence('jobs', 'id'), 5000000000)")
    queue.enqueue("q", [{"n": 1}, {"n": 2}], priority=3, max_attempts=7)
    queue.enqueue("other", [{"n": 9}])
    fields = list(Job.__dataclass_fields__)
    select = pgsql.SQL("SELECT {} FROM jobs WHERE id = %s").format(
        pgsql.SQL(", ").join(map(pgsql.Identifier, fields))
    )

    def stored(job_id: int) -> tuple:
        return sql.execute(select, (job_id,)).fetchone()

    first = queue.claim("q", limit=1, lease=60)
    assert first[0].id > 2**32
    accepted, claimed = queue.complete_and_claim(first, "q", limit=5, lease=60)
    assert accepted == 1 and first[0].status == "done" and len(claimed) == 1
    for job in (*claimed, *queue.claim("other", limit=5)):
        as_claimed = tuple(getattr(job, f) for f in fields)
        assert as_claimed == stored(job.id)
        built = Job(*as_claimed)  # Job.claimed() sets the attributes itself: the same object
        assert vars(job) == vars(built) and job == built and repr(job) == repr(built)
    assert queue.complete(claimed) == 1


def test_payloads_round_trip_untouched(queue: JobQueue) -> None:
    hostile = {"text": "[bold red]x[/] \x1b[31m red", "nested": {"a": [1, 2.5, None, True]}, "ü": "✓"}
    queue.enqueue("q", [hostile, [1, 2], "plain", 7])
    payloads = [j.payload for j in queue.claim("q", limit=4)]
    assert payloads == [hostile, [1, 2], "plain", 7]


def test_table_and_schema_names_are_identifiers_not_sql(
    dsn: str, make_queue: Callable[..., JobQueue], sql: psycopg.Connection
) -> None:
    evil = 'jobs"; DROP TABLE victim; --'
    sql.execute("CREATE TABLE victim (x int)")
    with make_queue(dsn, table=evil, schema="my schema") as q:
        q.install()
        q.enqueue("q", [{}])
        assert len(q.claim("q")) == 1
    assert sql.execute("SELECT to_regclass('victim') IS NOT NULL").fetchone()[0]
    count = pgsql.SQL("SELECT count(*) FROM {}").format(pgsql.Identifier("my schema", evil))
    assert sql.execute(count).fetchone()[0] == 1


def test_missing_table_is_a_clear_error(dsn: str, make_queue: Callable[..., JobQueue]) -> None:
    with make_queue(dsn, table="nope") as q, pytest.raises(PgqError, match=r"public\.nope does not exist"):
        q.claim("q")


def _plan(conn: psycopg.Connection, query: pgsql.Composable, params: dict) -> str:
    (plan,) = conn.execute(pgsql.SQL("EXPLAIN (FORMAT JSON) ") + query, params).fetchone()
    return json.dumps(plan)


def test_claim_and_reap_use_their_partial_indexes(queue: JobQueue, sql: psycopg.Connection) -> None:
    # Enough done history that a sequential scan would be the wrong plan.
    sql.execute("""
        INSERT INTO jobs (queue, status, finished_at, attempts)
        SELECT 'q' || (g % 10), 'done', now(), 1 FROM generate_series(1, 50000) g""")
    queue.enqueue("q1", [{}] * 200)
    queue.claim("q1", limit=50, lease=0.01)
    sql.execute("ANALYZE jobs")
    from pgq_tui.jobtable import statements as st

    claim = _plan(
        sql,
        st.compose(st.CLAIM, "jobs", "public", limit=10),
        {"queue": "q1", "limit": 10, "lease": 30.0, "worker": "w"},
    )
    assert '"Index Name": "jobs_claim_idx"' in claim, claim
    assert "Seq Scan" not in claim
    reap = _plan(sql, st.compose(st.REAP, "jobs", "public"), {"batch": 1000, "before": None})
    assert '"Index Name": "jobs_lease_idx"' in reap, reap
    assert "Seq Scan" not in reap


def test_install_upgrades_a_table_made_from_the_seed_schema(
    dsn: str, make_queue: Callable[..., JobQueue], sql: psycopg.Connection
) -> None:
    sql.execute(
        "CREATE TABLE seedjobs (id bigserial PRIMARY KEY, queue text NOT NULL, payload jsonb NOT NULL,"
        " status text NOT NULL DEFAULT 'pending', run_at timestamptz NOT NULL DEFAULT now(),"
        " attempts int NOT NULL DEFAULT 0, locked_until timestamptz)"
    )
    sql.execute(
        "INSERT INTO seedjobs (queue, payload)"
        " SELECT 'old', jsonb_build_object('n', g) FROM generate_series(1, 3) g"
    )
    with make_queue(dsn, table="seedjobs") as q:
        with pytest.raises(PgqError, match="not pgq-top's table"):
            q.install()  # someone else's until adopted
        q.install(adopt=True)
        q.install()
        jobs = q.claim("old", limit=10)
        assert [j.payload["n"] for j in jobs] == [1, 2, 3]
        assert q.complete(jobs, keep=True) == 3
    assert (
        sql.execute(
            "SELECT count(*) FROM seedjobs WHERE status = 'done' AND finished_at IS NOT NULL"
        ).fetchone()[0]
        == 3
    )
    with pytest.raises(psycopg.errors.CheckViolation):
        sql.execute("UPDATE seedjobs SET status = 'exploded'")
    from monitor_support import pgq_monitor

    with pgq_monitor(dsn, table="seedjobs") as monitor:
        snap = monitor.collect()
    assert [(q.queue, q.done) for q in snap.queues] == [("old", 3)] and not snap.errors


def test_bulk_enqueue_by_copy_keeps_every_option(queue: JobQueue, sql: psycopg.Connection) -> None:
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    hostile = {"t": "tab\\there \\N \\\\ [b]x[/b] \x1b[31m", "ü": "✓"}
    small = queue.enqueue("q", [{"i": -1}])
    ids = queue.enqueue(
        "q", [hostile] + [{"i": i} for i in range(1999)], run_at=later, priority=7, max_attempts=9
    )
    assert len(ids) == 2000 and ids == sorted(ids) and ids[0] > small[0]
    rows = sql.execute(
        "SELECT count(*), min(run_at) = max(run_at), min(priority), max(max_attempts),"
        " bool_and(status = 'pending') FROM jobs WHERE id = ANY(%s)",
        (ids,),
    ).fetchone()
    assert rows == (2000, True, 7, 9, True)
    assert sql.execute("SELECT payload FROM jobs WHERE id = %s", (ids[0],)).fetchone()[0] == hostile
    assert sql.execute("SELECT sum(enqueued) FROM jobs_stats").fetchone()[0] == 2001
    assert [j.id for j in queue.claim("q", limit=5)] == small, "a scheduled job was claimed early"


def test_enqueue_retry_requeue_notify_when_ready_and_only_then(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    sql.execute(pgsql.SQL("LISTEN {}").format(pgsql.Identifier(queue.channel)))
    later = datetime.now(timezone.utc) + timedelta(hours=1)
    queue.enqueue("q", [{}, {}], run_at=later)
    queue.enqueue("big", [{}] * 1500, run_at=later)  # the COPY path
    assert list(sql.notifies(timeout=0.3)) == [], "notified for jobs scheduled later"
    queue.enqueue("q", [{}, {}, {}])
    queue.enqueue("big", [{}] * 1500)
    notes = [(n.channel, n.payload) for n in sql.notifies(timeout=0.3)]
    assert notes == [(queue.channel, "q"), (queue.channel, "big")], "one notification per transaction"
    dead = queue.claim("q", limit=1)
    queue.fail(dead[0], "x", backoff=3600)  # a retry later: no notification
    stuck = queue.claim("q", limit=1, lease=0.01)
    time.sleep(0.05)
    assert list(sql.notifies(timeout=0.2)) == []
    assert queue.requeue([j.id for j in stuck]) == 1
    sql.execute("UPDATE jobs SET status = 'failed' WHERE id = %s", (dead[0].id,))
    assert queue.retry([dead[0].id]) == 1
    assert [n.payload for n in sql.notifies(timeout=0.3)] == ["q", "q"]


def test_renew_records_the_heartbeat(queue: JobQueue, sql: psycopg.Connection) -> None:
    queue.enqueue("q", [{}, {}, {}])
    jobs = queue.claim("q", limit=3, lease=5)
    assert sql.execute("SELECT count(heartbeat_at) FROM jobs").fetchone()[0] == 0, "claim sets no heartbeat"
    assert queue.complete(jobs[:1]) == 1
    assert queue.renew(jobs, 60) == {jobs[1].id, jobs[2].id}, "renewed a job we no longer hold"
    rows = sql.execute("SELECT id, heartbeat_at, locked_until - now() FROM jobs").fetchall()
    assert all(beat is not None and ttl > timedelta(seconds=55) for _, beat, ttl in rows)
    assert queue.get(jobs[1].id)["heartbeat_at"] == dict((i, b) for i, b, _ in rows)[jobs[1].id]


def test_seconds_until_due_skip_scans_priorities(queue: JobQueue) -> None:
    assert queue.seconds_until_due(["q", "r"]) is None
    now = datetime.now(timezone.utc)
    for priority in range(5):
        queue.enqueue("q", [{}] * 3, run_at=now + timedelta(seconds=100 - priority), priority=priority)
    queue.enqueue("r", [{}], run_at=now + timedelta(seconds=50))
    assert 95 < queue.seconds_until_due(["q"]) <= 96
    assert 49 < queue.seconds_until_due(["q", "r", "none"]) <= 50
    queue.enqueue("q", [{}], priority=-3)
    assert queue.seconds_until_due(["q"]) <= 0


def _index_states(sql: psycopg.Connection) -> dict[str, bool]:
    return dict(
        sql.execute(
            "SELECT c.relname, i.indisvalid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " WHERE i.indrelid = 'jobs'::regclass AND c.relname <> 'jobs_pkey'"
        ).fetchall()
    )


def test_install_on_a_table_with_rows_builds_missing_indexes_concurrently(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    queue.enqueue("q", [{}] * 10)
    sql.execute("ANALYZE jobs")
    sql.execute("DROP INDEX jobs_claim_idx, jobs_done_idx")
    said: list[str] = []
    done = queue.install(say=said.append)
    assert done == said
    assert [m for m in said if m.startswith("building")] == [
        "building index jobs_claim_idx CONCURRENTLY (table has ~10 rows; writes continue)",
        "building index jobs_done_idx CONCURRENTLY (table has ~10 rows; writes continue)",
    ]
    assert _index_states(sql) == dict.fromkeys(
        ["jobs_claim_idx", "jobs_lease_idx", "jobs_dead_idx", "jobs_done_idx"], True
    )
    assert queue.install() == [], "a second run changed something"


def test_install_rebuilds_an_index_a_failed_concurrent_build_left_invalid(
    queue: JobQueue, sql: psycopg.Connection
) -> None:
    queue.enqueue("q", [{}] * 10)
    sql.execute("UPDATE jobs SET attempts = 7 WHERE id = (SELECT min(id) FROM jobs)")
    sql.execute("DROP INDEX jobs_lease_idx")
    sql.execute("ANALYZE jobs")
    # A real failed build: the expression divides by zero on one row, leaving an invalid index.
    with pytest.raises(psycopg.errors.DivisionByZero):
        sql.execute("CREATE INDEX CONCURRENTLY jobs_lease_idx ON jobs ((1 / (attempts - 7)))")
    assert _index_states(sql)["jobs_lease_idx"] is False
    said = queue.install()
    assert said == [
        "index jobs_lease_idx is invalid (a failed concurrent build): dropping it CONCURRENTLY",
        "building index jobs_lease_idx CONCURRENTLY (table has ~10 rows; writes continue)",
        said[2],
    ]
    assert said[2].startswith("built index jobs_lease_idx in ")
    assert _index_states(sql)["jobs_lease_idx"] is True
    (definition,) = sql.execute(
        "SELECT indexdef FROM pg_indexes WHERE indexname = 'jobs_lease_idx'"
    ).fetchone()
    assert "(queue, locked_until) WHERE (status = 'running'::text)" in definition


def test_init_cli_says_what_it_builds(dsn: str, sql: psycopg.Connection) -> None:
    sql.execute("INSERT INTO jobs (queue) SELECT 'q' FROM generate_series(1, 100)")
    sql.execute("ANALYZE jobs")
    sql.execute("DROP INDEX jobs_dead_idx")
    run = subprocess.run(
        [sys.executable, "-m", "pgq_tui", "init", "--dsn", dsn], capture_output=True, text=True, timeout=60
    )
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert (
        lines[0]
        == "pgq-top: building index jobs_dead_idx CONCURRENTLY (table has ~100 rows; writes continue)"
    )
    assert lines[1].startswith("pgq-top: built index jobs_dead_idx in ")
    assert lines[2] == "pgq-top: public.jobs is ready"
    again = subprocess.run(
        [sys.executable, "-m", "pgq_tui", "init", "--dsn", dsn], capture_output=True, text=True, timeout=60
    )
    assert again.stdout == "pgq-top: public.jobs is ready (nothing to change)\n"
