"""A lease's holder is alive while a session whose application_name is its locked_by is connected.
The worker id and the session's application_name must never disagree, or a live lease shows as
`gone` and a requeue skips its second confirmation: a running job could then run twice."""

from __future__ import annotations

import psycopg
import pytest
from actions_support import pgq_actions
from monitor_support import pgq_monitor

from pgq_tui.queue import JobQueue
from pgq_tui.queue.jobqueue import fit_worker_id

LONG_ID = "payments-eu-west-1-worker-" + "x" * 44  # 70 characters: PostgreSQL keeps 63 bytes


@pytest.mark.parametrize("requested", [LONG_ID, "wörker-ü-1"], ids=["70 chars", "non-ASCII"])
def test_worker_id_is_exactly_the_sessions_application_name(
    dsn: str, queue: JobQueue, sql: psycopg.Connection, requested: str
) -> None:
    queue.enqueue("q", [{}])
    with JobQueue(dsn, worker_id=requested) as worker:
        (job,) = worker.claim("q", lease=60)
        (locked_by,) = sql.execute("SELECT locked_by FROM jobs WHERE id = %s", (job.id,)).fetchone()
        (app,) = sql.execute(
            "SELECT application_name FROM pg_stat_activity WHERE pid = %s", (worker.conn.info.backend_pid,)
        ).fetchone()
        assert locked_by == app == worker.worker_id
        with pgq_monitor(dsn) as monitor:
            (lease,) = monitor.collect().leases.rows
        assert lease.holder_connected and lease.holder_pid == worker.conn.info.backend_pid
        sql.execute("UPDATE jobs SET locked_until = now() - interval '1 second' WHERE id = %s", (job.id,))
        with pgq_actions(dsn) as actions:
            plan = actions.plan_requeue([job.id])
        assert plan.needs_second_confirmation, "a live holder's job would be requeued without a warning"


def test_fit_worker_id() -> None:
    assert fit_worker_id("pgq-w-host-1234-abcd") == "pgq-w-host-1234-abcd"  # fits: unchanged
    fitted = fit_worker_id(LONG_ID)
    assert len(fitted.encode()) <= 63 and fitted.startswith(LONG_ID[:40])
    assert fitted != fit_worker_id(LONG_ID[:-1] + "y")  # ids that differ only past 63 bytes stay apart
    assert fit_worker_id(fitted) == fitted and fit_worker_id(LONG_ID) == fitted  # stable
    assert fit_worker_id("wörker").isascii()


def test_application_name_cannot_be_set_apart_from_the_worker_id(dsn: str) -> None:
    with pytest.raises(TypeError):
        JobQueue(dsn, worker_id="w1", application_name="something else")  # type: ignore[call-arg]
