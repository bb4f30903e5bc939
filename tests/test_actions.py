"""The actions engine on pgq-top's own table (one dialect among others) against a real server: each
guard holds, no write touches more rows than its plan promised, counts are what really changed,
idle workers hear of requeued and retried jobs, errors are lines, --read-only refuses everything."""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from actions_support import pgq_actions, pgq_model
from dialect_cases.seed import SEED_JOBS, SEED_JOBS_ADVISED, SEED_JOBS_CLAIM
from monitor_support import pgq_monitor
from psycopg.conninfo import make_conninfo

from pgq_tui.actions import Actions, Plan
from pgq_tui.detection import find_queues
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.errors import PgqError
from pgq_tui.jobtable.schema import channel
from pgq_tui.monitor.advice import Advice
from pgq_tui.queue import Job, JobQueue


@pytest.fixture
def actions(dsn: str) -> Iterator[Actions]:
    with pgq_actions(dsn) as a:
        yield a


def _status(sql: psycopg.Connection, ids: list[int]) -> dict[int, str]:
    rows = sql.execute("SELECT id, status FROM jobs WHERE id = ANY(%s)", (ids,)).fetchall()
    return dict(rows)


def _expire(sql: psycopg.Connection, ids: list[int]) -> None:
    sql.execute("UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = ANY(%s)", (ids,))


def _stuck(dsn: str, n: int, *, keep_holder: bool = False) -> tuple[list[int], JobQueue, list[Job]]:
    """n running jobs whose lease expired; the holder's session is closed unless keep_holder."""
    worker = JobQueue(dsn)
    ids = worker.enqueue("mail", [{"n": i} for i in range(n)])
    jobs = worker.claim("mail", limit=n, lease=60)
    assert len(jobs) == n
    with psycopg.connect(dsn, autocommit=True) as c:
        _expire(c, ids)
    if not keep_holder:
        worker.close()
    return ids, worker, jobs


def _dead(queue: JobQueue, n: int) -> list[int]:
    ids = queue.enqueue("dead", [{"n": i} for i in range(n)], max_attempts=1)
    for job in queue.claim("dead", limit=n):
        assert queue.fail(job, "boom") == "failed"
    return ids


def test_requeue_stuck_jobs(dsn: str, queue: JobQueue, sql: psycopg.Connection, actions: Actions) -> None:
    ids, _, _ = _stuck(dsn, 3)
    pending = queue.enqueue("mail", [{"other": True}])
    plan = actions.plan_requeue([*ids, *pending])
    assert plan.refused is None, plan.refused
    assert (plan.count, plan.needs_second_confirmation, plan.warning) == (3, False, None)
    assert "locked_until < now()" in plan.sql and "%(ids)s" in plan.sql and '"public"."jobs"' in plan.sql
    assert "1 selected job outside the guard will be left alone" in plan.description
    outcome = actions.execute(plan)
    assert (outcome.changed, outcome.requested, outcome.error) == (3, 3, None)
    assert _status(sql, [*ids, *pending]) == dict.fromkeys([*ids, *pending], "pending")
    # Nothing stuck any more: the next plan says so instead of asking.
    assert "nothing to requeue" in (actions.plan_requeue(ids).refused or "")


def test_job_completed_between_plan_and_execute_is_untouched(
    dsn: str, sql: psycopg.Connection, actions: Actions
) -> None:
    ids, worker, jobs = _stuck(dsn, 2, keep_holder=True)
    plan = actions.plan_requeue(ids)
    # The holder is still connected: it may still be working, so a second confirmation is required.
    assert plan.needs_second_confirmation and plan.count == 2
    assert plan.warning and worker.worker_id in plan.warning
    # It finishes one of them before the operator confirms.
    assert worker.complete([next(j for j in jobs if j.id == ids[0])], keep=True) == 1
    outcome = actions.execute(plan)
    assert (outcome.changed, outcome.requested, outcome.error) == (1, 2, None)
    assert "changed state meanwhile" in outcome.message
    assert _status(sql, ids) == {ids[0]: "done", ids[1]: "pending"}
    worker.close()


def test_reap_every_expired_lease(dsn: str, sql: psycopg.Connection, actions: Actions) -> None:
    ids, _, _ = _stuck(dsn, 5)
    sql.execute("UPDATE jobs SET max_attempts = 1 WHERE id = %s", (ids[0],))  # out of attempts: dead
    plan = actions.plan_reap()
    assert (plan.refused, plan.count, plan.targets) == (None, 5, ())
    assert "1 of them has no attempts left: dead now" in plan.description
    outcome = actions.execute(plan)
    assert (outcome.changed, outcome.error) == (5, None)
    assert _status(sql, ids) == {ids[0]: "failed", **dict.fromkeys(ids[1:], "pending")}
    assert "nothing to reap" in (actions.plan_reap().refused or "")


def test_reap_touches_only_the_leases_it_planned(dsn: str, sql: psycopg.Connection, actions: Actions) -> None:
    planned, _, _ = _stuck(dsn, 3)
    with JobQueue(dsn) as worker:
        worker.enqueue("mail", [{}, {}])
        later = [j.id for j in worker.claim("mail", limit=2, lease=0.5)]  # valid when planned
        plan = actions.plan_reap()
        assert plan.count == 3 and "stuck after this plan are left for the next pass" in plan.description
        time.sleep(0.7)  # ... and expired while the confirmation was open
        outcome = actions.execute(plan)
    assert (outcome.changed, outcome.error) == (3, None)  # "at most 3", as the dialog said
    assert _status(sql, planned) == dict.fromkeys(planned, "pending")
    assert _status(sql, later) == dict.fromkeys(later, "running")
    assert actions.execute(actions.plan_reap()).changed == 2  # the next reap takes them


def test_retry_and_discard_touch_only_failed_rows(
    queue: JobQueue, sql: psycopg.Connection, actions: Actions
) -> None:
    dead = _dead(queue, 3)
    pending = queue.enqueue("other", [{}])
    running = queue.enqueue("busy", [{}])
    queue.claim("busy")
    everything = [*dead, *pending, *running]
    retry = actions.plan_retry([dead[0], *pending, *running])
    assert (retry.count, retry.destructive, retry.refused) == (1, False, None)
    assert actions.execute(retry).changed == 1
    discard = actions.plan_discard(everything)
    assert (discard.count, discard.destructive) == (2, True)
    out = actions.execute(discard)
    assert (out.changed, out.requested, out.error) == (2, 2, None)
    assert _status(sql, everything) == {dead[0]: "pending", pending[0]: "pending", running[0]: "running"}
    row = sql.execute("SELECT attempts, last_error FROM jobs WHERE id = %s", (dead[0],)).fetchone()
    assert row == (0, "boom")  # a fresh budget, the last error kept
    assert "nothing to retry" in (actions.plan_retry(pending).refused or "")


def test_terminate_idle_in_transaction_session(dsn: str, sql: psycopg.Connection, actions: Actions) -> None:
    idle = psycopg.connect(dsn, application_name="test idle-in-tx")
    idle.execute("SELECT txid_current()")
    pid = idle.info.backend_pid
    state = sql.execute("SELECT state FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
    assert state == ("idle in transaction",)
    plan = actions.plan_terminate([pid])
    assert (plan.refused, plan.targets, plan.destructive) == (None, (pid,), True)
    assert "test idle-in-tx" in plan.description and "pg_backend_pid()" in plan.sql
    outcome = actions.execute(plan)
    assert (outcome.changed, outcome.error) == (1, None), outcome
    assert sql.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone() == (0,)
    idle.close()


def test_a_signal_reaches_only_the_session_that_was_planned(
    dsn: str, sql: psycopg.Connection, actions: Actions
) -> None:
    """A pid names a session only together with its backend_start: once the planned session ends, its
    pid may be handed to a new one, which the confirmed terminate must not kill (issue #29). A pid
    can't be reused on demand, so the new session is stood in for by a mismatched backend_start."""
    idle = psycopg.connect(dsn, application_name="test idle-in-tx")
    idle.execute("SELECT txid_current()")
    pid = idle.info.backend_pid
    try:
        query = "SELECT backend_start FROM pg_stat_activity WHERE pid = %s"
        (started,) = sql.execute(query, (pid,)).fetchone()
        for action, plan_of in (("cancel", actions.plan_cancel), ("terminate", actions.plan_terminate)):
            plan = plan_of([pid])
            assert plan.targets == (pid,) and plan.backend_starts == (started,), plan
            other = dataclasses.replace(plan, backend_starts=(started - timedelta(microseconds=1),))
            outcome = actions.execute(other)
            assert (outcome.changed, outcome.error) == (0, None), outcome
            assert f"pid {pid}: that session is gone" in outcome.message, outcome
            assert idle.execute("SELECT 1").fetchone() == (1,), action  # untouched: not even cancelled
        # the snapshot's session is the one the operator chose: one that started since is refused
        with pgq_monitor(dsn) as monitor:
            snap = monitor.collect()
        (seen,) = [s for s in snap.sessions.idle_in_transaction if s.pid == pid]
        assert seen.backend_start == started
        assert actions.plan_terminate([pid], snap).refused is None
        older = dataclasses.replace(seen, backend_start=started - timedelta(seconds=5))
        stale = dataclasses.replace(
            snap, sessions=dataclasses.replace(snap.sessions, idle_in_transaction=(older,))
        )
        refused = actions.plan_terminate([pid], stale)
        assert refused.refused and "that session is gone" in refused.refused, refused
        # the session that was planned, still there: terminated
        outcome = actions.execute(actions.plan_terminate([pid], snap))
        assert (outcome.changed, outcome.error) == (1, None), outcome
        gone = sql.execute("SELECT count(*) FROM pg_stat_activity WHERE pid = %s", (pid,)).fetchone()
        assert gone == (0,)
    finally:
        idle.close()


def test_a_blocker_from_the_snapshot_is_named_by_its_backend_start(
    dsn: str, sql: psycopg.Connection, actions: Actions
) -> None:
    """The blocking session the operator marks in the sessions panel: the snapshot's backend_start
    for it is the one the plan guards with (one that has started since is another session)."""
    sql.execute("CREATE TABLE lockme (x int)")
    holder = psycopg.connect(dsn, autocommit=True, application_name="test blocker")
    waiter = psycopg.connect(dsn, autocommit=True, application_name="test waiter")
    pid = holder.info.backend_pid
    threads = [
        threading.Thread(
            target=lambda: _quiet(
                holder, "BEGIN; LOCK TABLE lockme IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(30)"
            ),
            daemon=True,
        ),
    ]
    try:
        threads[0].start()
        _wait_for(sql, "SELECT 1 FROM pg_locks WHERE pid = %s AND relation = 'lockme'::regclass", pid)
        threads.append(threading.Thread(target=lambda: _quiet(waiter, "SELECT * FROM lockme"), daemon=True))
        threads[1].start()
        _wait_for(sql, "SELECT 1 FROM pg_stat_activity WHERE pid = %s AND wait_event_type = 'Lock'",
                  waiter.info.backend_pid)  # fmt: skip
        with pgq_monitor(dsn) as monitor:
            snap = monitor.collect()
        (blocker,) = [b for b in snap.sessions.blocked if b.blocking_pid == pid]
        query = "SELECT backend_start FROM pg_stat_activity WHERE pid = %s"
        assert blocker.blocking_backend_start == sql.execute(query, (pid,)).fetchone()[0]
        other = dataclasses.replace(
            blocker, blocking_backend_start=blocker.blocking_backend_start - timedelta(1)
        )
        stale = dataclasses.replace(snap, sessions=dataclasses.replace(snap.sessions, blocked=(other,)))
        refused = actions.plan_terminate([pid], stale)
        assert refused.refused and "that session is gone" in refused.refused, refused
        outcome = actions.execute(actions.plan_terminate([pid], snap))
        assert (outcome.changed, outcome.error) == (1, None), outcome
    finally:
        sql.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'test %%'"
        )
        for t in threads:
            t.join(10)
        holder.close()
        waiter.close()


def _wait_for(sql: psycopg.Connection, query: str, *params: object) -> None:
    deadline = time.monotonic() + 10
    while sql.execute(query, params).fetchone() is None:
        assert time.monotonic() < deadline, query
        time.sleep(0.05)


def _quiet(conn: psycopg.Connection, query: str) -> None:
    with contextlib.suppress(psycopg.Error):  # ended by the test
        conn.execute(query)


def test_own_and_pgq_top_sessions_are_refused(dsn: str, actions: Actions) -> None:
    own = actions.conn.info.backend_pid
    assert "own session" in (actions.plan_terminate([own]).refused or "")
    with psycopg.connect(dsn, application_name="pgq-top monitor") as monitor:
        pid = monitor.info.backend_pid
        plan = actions.plan_cancel([pid, own])
        assert plan.refused and "pgq-top session" in plan.refused
        allowed = actions.plan_cancel([pid, own], allow_pgq_top=True)
        assert allowed.targets == (pid,) and allowed.warning and "own session" in allowed.warning
        assert actions.execute(allowed).error is None
        # A hand-made plan aimed at our own session is still stopped by the SQL guard.
        forged = Plan("terminate", "x", "x", "", (own,), 1, True, False, None, allow_pgq_top=True)
        assert actions.execute(forged).changed == 0
        assert actions.conn.execute("SELECT 1").fetchone() == (1,)


def test_read_only_refuses_and_cannot_write(dsn: str, queue: JobQueue, actions: Actions) -> None:
    ids, _, _ = _stuck(dsn, 1)
    writable = actions.plan_requeue(ids)
    tune = Advice("public.jobs", "", (), (), 'ALTER TABLE "public"."jobs" SET (fillfactor = \'90\')', ())
    with pgq_actions(dsn, read_only=True) as ro:
        for plan in (
            ro.plan_requeue(ids),
            ro.plan_reap(),
            ro.plan_retry(ids),
            ro.plan_discard(ids),
            *(ro.plan(kind, None) for kind in ro.available()),
            ro.plan_cancel([1]),
            ro.plan_terminate([1]),
            ro.plan_tune(tune),
        ):
            assert plan.refused == "read-only mode"
        assert ro.execute(writable).error == "read-only mode"
        assert ro.execute(actions.plan_tune(tune)).error == "read-only mode"
        # Even a bug that bypasses the plans cannot write through this session.
        with pytest.raises(psycopg.errors.ReadOnlySqlTransaction):
            ro.conn.execute("UPDATE jobs SET status = 'pending' WHERE id = %s", (ids[0],))
        assert ro.job_detail(ids[0])["status"] == "stuck (running)"  # reading still works


def test_role_without_privileges_gets_a_clear_error(
    dsn: str, sql: psycopg.Connection, actions: Actions
) -> None:
    role = f"pgq_weak_{uuid.uuid4().hex[:8]}"
    sql.execute(psycopg.sql.SQL("CREATE ROLE {} NOLOGIN").format(psycopg.sql.Identifier(role)))
    sql.execute(psycopg.sql.SQL("GRANT SELECT ON jobs TO {}").format(psycopg.sql.Identifier(role)))
    superuser_idle = psycopg.connect(dsn, application_name="test superuser idle")
    superuser_idle.execute("SELECT txid_current()")
    weak = Actions(make_conninfo(dsn, options=f"-c role={role}"), pgq_model(dsn))
    try:
        ids, _, _ = _stuck(dsn, 1)
        refused = weak.plan_requeue(ids)
        assert refused.refused and "UPDATE" in refused.refused and "GRANT SELECT, UPDATE" in refused.refused
        outcome = weak.execute(actions.plan_requeue(ids))  # a plan made by a privileged session
        assert outcome.changed == 0 and outcome.error and outcome.error.startswith("permission denied")
        assert "GRANT SELECT, UPDATE" in outcome.error
        pid = superuser_idle.info.backend_pid
        assert "pg_signal_backend" in (weak.plan_terminate([pid]).refused or "")
        outcome = weak.execute(actions.plan_terminate([pid]))
        assert outcome.changed == 0 and outcome.error and "pg_signal_backend" in outcome.error
        assert superuser_idle.execute("SELECT 1").fetchone() == (1,)
    finally:
        weak.close()
        superuser_idle.close()
        sql.execute(psycopg.sql.SQL("REVOKE ALL ON jobs FROM {}").format(psycopg.sql.Identifier(role)))
        sql.execute(psycopg.sql.SQL("DROP ROLE {}").format(psycopg.sql.Identifier(role)))


def test_lock_timeout_and_lost_connection_are_errors(
    dsn: str, queue: JobQueue, sql: psycopg.Connection
) -> None:
    dead = _dead(queue, 2)
    with pgq_actions(dsn, lock_timeout_ms=100) as actions, psycopg.connect(dsn) as locker:
        plan = actions.plan_retry(dead)
        # a row a worker holds is skipped (SKIP LOCKED), and said so
        locker.execute("SELECT id FROM jobs WHERE id = %s FOR UPDATE", (dead[1],))
        outcome = actions.execute(plan)
        assert (outcome.changed, outcome.error) == (1, None) and "left alone" in outcome.message
        locker.rollback()
        plan = actions.plan_retry(dead)
        locker.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")  # e.g. a migration
        outcome = actions.execute(plan)
        assert outcome.changed == 0 and outcome.error and outcome.error.startswith("lock timeout")
        locker.rollback()
        sql.execute("SELECT pg_terminate_backend(%s)", (actions.conn.info.backend_pid,))
        time.sleep(0.1)
        outcome = actions.execute(plan)
        assert outcome.error and "lost the connection" in outcome.error
        assert actions.execute(plan).changed == 1  # reconnects on the next call


def test_job_detail(queue: JobQueue, actions: Actions) -> None:
    (job_id,) = _dead(queue, 1)
    detail = actions.job_detail(job_id)
    assert detail is not None
    assert (detail["payload"], detail["last_error"], detail["status"]) == ({"n": 0}, "boom", "dead (failed)")
    assert detail["finished_at"] is not None and detail["created_at"] is not None
    assert detail["priority"] == 0 and "locked_until < now()" in detail["stuck_rule"]
    assert actions.job_detail(10**12) is None


def test_job_detail_reads_the_servers_shortened_fractional_seconds(
    queue: JobQueue, actions: Actions, sql: psycopg.Connection
) -> None:
    """The detail's jsonb times drop trailing zeros (`.12345`), which Python 3.10's fromisoformat
    refused: the job detail failed there."""
    queue.enqueue("alpha", [{}])
    (job,) = queue.claim("alpha", limit=1, lease=60)
    sql.execute("UPDATE jobs SET locked_until = '2030-01-01 00:00:00.12345+00' WHERE id = %s", (job.id,))
    detail = actions.job_detail(job.id)
    assert detail is not None
    assert detail["locked_until"] == datetime(2030, 1, 1, 0, 0, 0, 123450, tzinfo=timezone.utc)


def test_unreachable_server_is_a_refusal_not_a_crash(dsn: str) -> None:
    with Actions("host=/nonexistent-pgq-top port=1", pgq_model(dsn)) as actions:
        assert "cannot connect" in (actions.plan_reap().refused or "")
        forged = Plan("reap", "x", "x", "", (), 1, False, False, None)
        outcome = actions.execute(forged)
        assert outcome.changed == 0 and "cannot connect" in (outcome.error or "")


def test_bulk_actions_run_in_batches(dsn: str, sql: psycopg.Connection) -> None:
    ids, _, _ = _stuck(dsn, 5)
    with pgq_actions(dsn, batch=2) as actions:
        outcome = actions.execute(actions.plan_requeue(ids[:3]))
        assert (outcome.changed, outcome.error) == (3, None)
        assert actions.execute(actions.plan_reap()).changed == 2
    assert _status(sql, ids) == dict.fromkeys(ids, "pending")


def test_requeue_retry_and_reap_wake_idle_workers(dsn: str, queue: JobQueue, actions: Actions) -> None:
    """Workers LISTEN on the table's channel: the pgq dialect's writes NOTIFY it, as the queue does."""
    ids, _, _ = _stuck(dsn, 2)
    dead = _dead(queue, 1)
    queue.enqueue("reaped", [{}])
    queue.claim("reaped", lease=0.01)
    time.sleep(0.05)
    with psycopg.connect(dsn, autocommit=True) as listener:
        listener.execute(
            psycopg.sql.SQL("LISTEN {}").format(psycopg.sql.Identifier(channel("jobs", "public")))
        )
        assert actions.execute(actions.plan_requeue(ids)).changed == 2
        assert actions.execute(actions.plan_retry(dead)).changed == 1
        assert actions.execute(actions.plan_reap()).changed == 1
        heard = [n.payload for n in listener.notifies(timeout=2, stop_after=3)]
    assert sorted(heard) == ["dead", "mail", "reaped"]


def test_requeue_of_every_stuck_job_takes_at_most_what_was_planned(empty_dsn: str) -> None:
    """On the seed's own table (mapping dialect): however many jobs are stuck when it runs, a requeue
    of every stuck job changes at most the count its confirmation showed."""
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute(SEED_JOBS_ADVISED)
        conn.execute("INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, 4)")
        stuck = [r[0] for r in conn.execute(SEED_JOBS_CLAIM, {"queue": "mail", "n": 2, "lease": -60})]
        later = [r[0] for r in conn.execute(SEED_JOBS_CLAIM, {"queue": "mail", "n": 2, "lease": 600})]
        (target,) = find_queues(empty_dsn)
        with Actions(empty_dsn, target.model, batch=1) as actions:
            plan = actions.plan_reap()  # no reaper in a mapping: a requeue of every stuck job
            assert (plan.action, plan.count, plan.targets) == ("requeue", 2, ())
            conn.execute("UPDATE jobs SET status = 'done' WHERE id = %s", (stuck[0],))
            conn.execute(
                "UPDATE jobs SET locked_until = now() - interval '1 minute' WHERE id = ANY(%s)", (later,)
            )
            outcome = actions.execute(plan)
        assert (outcome.changed, outcome.requested, outcome.error) == (2, 2, None)
        stuck_now = conn.execute("SELECT count(*) FROM jobs WHERE status = 'running'").fetchone()[0]
        assert stuck_now == 1  # one of the later ones waits for the next pass


def test_a_missing_action_or_table_is_a_refusal(dsn: str, sql: psycopg.Connection, actions: Actions) -> None:
    assert "has no cancel action (it offers: requeue, reap, retry, discard)" in (
        actions.plan(ActionKind.CANCEL, [1]).refused or ""
    )
    assert actions.plan_requeue([]).refused == "nothing selected"
    sql.execute("ALTER TABLE jobs RENAME TO jobs_gone")
    try:
        assert "does not exist" in (actions.plan_requeue([1]).refused or "")
        assert "does not exist" in (actions.plan_reap().refused or "")
        with pytest.raises(PgqError):
            actions.job_detail(1)
    finally:
        sql.execute("ALTER TABLE jobs_gone RENAME TO jobs")


def test_requeue_of_every_stuck_job_leaves_leases_that_expire_after_the_plan(empty_dsn: str) -> None:
    """The mapping's requeue reads the plan's `before`, like pgq-top's reap: a lease that expires
    while the confirmation is open waits for the next pass."""
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        conn.execute(SEED_JOBS_ADVISED)
        conn.execute("INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, 2)")
        (stuck,) = [r[0] for r in conn.execute(SEED_JOBS_CLAIM, {"queue": "mail", "n": 1, "lease": -60})]
        (later,) = [r[0] for r in conn.execute(SEED_JOBS_CLAIM, {"queue": "mail", "n": 1, "lease": 0.5})]
        (target,) = find_queues(empty_dsn)
        with Actions(empty_dsn, target.model) as actions:
            plan = actions.plan_reap()
            assert plan.count == 1 and "left for the next pass" in plan.description
            time.sleep(0.7)  # the later lease expires while the confirmation is open
            assert (actions.execute(plan).changed, actions.plan_reap().count) == (1, 1)
        rows = dict(
            conn.execute("SELECT id, status FROM jobs WHERE id = ANY(%s)", ([stuck, later],)).fetchall()
        )
        assert rows == {stuck: "pending", later: "running"}
