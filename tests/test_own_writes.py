"""The operator's own writes are accounted for: discarding 5,000 dead jobs (pgq-top's discard action,
run by another pgq-top process than the monitor's) and `JobQueue.prune()` are counted in the counters
table in the same statement, so a monitor never takes them for completions nor raises "foreign
writers present". A plain-SQL delete of as many rows still does: the cross-check still works."""

from __future__ import annotations

import time
from collections.abc import Callable

import psycopg
from actions_support import pgq_actions
from monitor_support import pgq_monitor

from pgq_tui.dialects.contract import ActionKind
from pgq_tui.jobtable import schema
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue

N = 5000


def _rows(dsn: str, status: str) -> None:
    """N rows of queue `mail` in `status` (failed: dead letters; done: kept history), written before
    the monitor starts (its first poll learns the ids; pg_stat has flushed the inserts by then)."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, attempts, max_attempts, finished_at, last_error) "
            "SELECT 'mail', '{}', %s, 1, 1, now() - interval '1 hour', 'boom' FROM generate_series(1, %s)",
            (status, N),
        )
    time.sleep(1.5)


def _polls_around(dsn: str, write: Callable[[], int]) -> list[Snapshot]:
    """Polls before and for a few seconds after `write` (from its own connection) removed N rows."""
    with pgq_monitor(dsn, read_only=True, count_cap=2 * N) as monitor:
        polls = [monitor.collect()]
        time.sleep(1.0)
        polls.append(monitor.collect())
        assert write() == N
        for _ in range(4):  # pg_stat's deletes land within about a second
            time.sleep(0.8)
            polls.append(monitor.collect())
    return polls


def _neither_completed_nor_foreign(polls: list[Snapshot]) -> None:
    for snap in polls:
        assert snap.throughput.foreign is None, snap.throughput.foreign
        mail = snap.throughput.per_queue.get("mail")
        assert mail is None or mail.completed == 0.0, mail


def test_a_discard_by_another_pgq_top_is_not_a_completion_nor_foreign(dsn: str) -> None:
    _rows(dsn, "failed")

    def discard() -> int:
        with pgq_actions(dsn) as actions:
            plan = actions.plan(ActionKind.DISCARD)
            return actions.execute(plan).changed

    polls = _polls_around(dsn, discard)
    assert polls[0].queues[0].dead == N and all(q.dead == 0 for q in polls[-1].queues)
    _neither_completed_nor_foreign(polls)


def test_a_prune_is_not_foreign(dsn: str) -> None:
    _rows(dsn, "done")

    def prune() -> int:
        # closed at once: an idle backend flushes its pg_stat counters only every 10 s
        with JobQueue(dsn) as queue:
            return queue.prune(0.0)

    polls = _polls_around(dsn, prune)
    assert max(snap.throughput.table.deleted for snap in polls if snap.throughput.table) > 0
    _neither_completed_nor_foreign(polls)


def test_a_foreign_delete_of_as_many_rows_is_still_foreign(dsn: str) -> None:
    _rows(dsn, "failed")

    def delete() -> int:
        with psycopg.connect(dsn, autocommit=True) as conn:
            return conn.execute("DELETE FROM jobs WHERE status = 'failed'").rowcount

    polls = _polls_around(dsn, delete)
    assert any(snap.throughput.foreign for snap in polls), [s.throughput.foreign for s in polls]


def test_an_older_counters_table_still_works_and_init_adds_the_columns(dsn: str) -> None:
    """A counters table made before it counted removals: the monitor, the discard action and the
    queue's discard and prune take their plain statements (no error), and `install()` (pgq-top init)
    adds the columns in place."""
    _rows(dsn, "failed")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE jobs_stats DROP COLUMN discarded, DROP COLUMN pruned")
        some = [r[0] for r in conn.execute("SELECT id FROM jobs ORDER BY id LIMIT 10").fetchall()]
        with pgq_monitor(dsn, read_only=True) as monitor, pgq_actions(dsn) as actions, JobQueue(dsn) as queue:
            monitor.collect()
            assert queue.discard(some) == 10 and queue.prune(0.0) == 0  # the plain deletes
            assert actions.execute(actions.plan(ActionKind.DISCARD)).changed == N - 10
            assert "throughput" not in monitor.collect().errors
        said = schema.install(conn)
        assert 'added column discarded to "public"."jobs_stats"' in said, said
        columns = conn.execute(
            "SELECT array_agg(attname::text) FROM pg_attribute WHERE attrelid = 'jobs_stats'::regclass"
        )
        assert {"discarded", "pruned"} <= set(columns.fetchone()[0])  # type: ignore[index]
