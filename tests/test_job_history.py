"""Each job's history (issue #33 item 3): the attempts a framework keeps, newest first, in the job
detail (Actions.job_detail, the CLI's `pgq-top job`, the TUI's detail screen). Here pgq-top's own
queue: a bounded attempt_log appended by the statements that end an attempt (fail, reap, requeue)."""

from __future__ import annotations

import json
import time
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from actions_support import pgq_actions
from test_tui_app import plain

from pgq_tui.cli import main
from pgq_tui.errors import EXIT_OK
from pgq_tui.jobtable.statements import ATTEMPT_ERROR_CHARS, ATTEMPT_LOG_KEPT
from pgq_tui.queue.jobqueue import JobQueue
from pgq_tui.tui.screens.detail import detail_renderable


def _fail_times(q: JobQueue, queue: str, n: int) -> int:
    """Claim and fail the one job of `queue` n times (no backoff), each with its own multi-line error."""
    job_id = 0
    for i in range(1, n + 1):
        [job] = q.claim(queue, limit=1, lease=30)
        job_id = job.id
        assert q.fail(job, f"boom {i}\nTraceback line {i}", backoff=0) in ("pending", "failed")
    return job_id


def test_own_queue_keeps_a_bounded_history_newest_first(dsn: str) -> None:
    n = ATTEMPT_LOG_KEPT + 3
    with JobQueue(dsn, worker_id="worker-a") as q:
        q.enqueue("mail", [{"to": "x"}], max_attempts=n + 5)
        job_id = _fail_times(q, "mail", n)
    actions = pgq_actions(dsn)
    try:
        detail = actions.job_detail(job_id)
    finally:
        actions.close()
    assert detail is not None
    history = detail["history"]
    assert history["reason"] is None
    attempts = history["attempts"]
    # capped: the newest ATTEMPT_LOG_KEPT of the n attempts, newest first
    assert [a["attempt"] for a in attempts] == list(range(n, n - ATTEMPT_LOG_KEPT, -1))
    assert [a["error"] for a in attempts[:2]] == [f"boom {n}", f"boom {n - 1}"]  # the first line only
    assert {a["worker"] for a in attempts} == {"worker-a"}
    assert {a["outcome"] for a in attempts} == {"retried"}
    times = [a["at"] for a in attempts]
    assert times == sorted(times, reverse=True) and all(t is not None for t in times)


def test_own_queue_history_records_death_lease_expiry_and_caps_the_error(dsn: str) -> None:
    with JobQueue(dsn, worker_id="worker-b") as q:
        q.enqueue("mail", [{"to": "y"}], max_attempts=3)
        [job] = q.claim("mail", limit=1, lease=0.01)  # attempt 1: its worker vanishes
        time.sleep(0.05)
        assert q.reap() == 1
        [job] = q.claim("mail", limit=1, lease=30)  # attempt 2: a long error
        q.fail(job, "x" * (ATTEMPT_ERROR_CHARS * 3), backoff=0)
        [job] = q.claim("mail", limit=1, lease=30)  # attempt 3: out of attempts
        assert q.fail(job, "final", backoff=0) == "failed"
    actions = pgq_actions(dsn)
    try:
        attempts = actions.job_detail(job.id)["history"]["attempts"]  # type: ignore[index]
    finally:
        actions.close()
    assert [(a["attempt"], a["outcome"]) for a in attempts] == [
        (3, "failed"),
        (2, "retried"),
        (1, "lease expired"),
    ]
    assert attempts[0]["error"] == "final"
    assert len(attempts[1]["error"]) == ATTEMPT_ERROR_CHARS
    assert attempts[2]["error"] == "lease expired while held by worker-b"


def test_a_table_without_attempt_log_says_why(dsn: str) -> None:
    with JobQueue(dsn) as q:
        [job_id] = q.enqueue("mail", [{"to": "z"}])
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ALTER TABLE jobs DROP COLUMN attempt_log")
    actions = pgq_actions(dsn)
    try:
        history = actions.job_detail(job_id)["history"]  # type: ignore[index]
    finally:
        actions.close()
    assert history["attempts"] is None
    assert "attempt_log" in history["reason"] and "pgq-top init" in history["reason"]


def test_job_command_prints_the_attempts_and_their_ages(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    with JobQueue(dsn, worker_id="worker-c") as q:
        q.enqueue("mail", [{"to": "[bold]x[/]"}], max_attempts=5)
        job_id = _fail_times(q, "mail", 2)
    assert main(["job", str(job_id), "--dsn", dsn, "--json"]) == EXIT_OK
    job = json.loads(capsys.readouterr().out)["job"]
    assert [a["attempt"] for a in job["history"]["attempts"]] == [2, 1]
    assert all(0 <= a["age_s"] < 60 for a in job["history"]["attempts"])
    assert 0 <= job["ages_s"]["created_at"] < 60 and job["payload"] == {"to": "[bold]x[/]"}
    assert main(["job", str(job_id), "--dsn", dsn]) == EXIT_OK
    out = capsys.readouterr().out
    assert "#2 " in out and "retried by worker-c" in out and "boom 2" in out and "s ago)" in out


def test_job_command_refuses_a_missing_job_in_one_line(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["job", "999999", "--dsn", dsn]) != EXIT_OK
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "999999 not found" in err and "Traceback" not in err


def test_the_detail_shows_attempts_as_text_never_markup() -> None:
    now = datetime(2026, 12, 2, 12, 0, 0, tzinfo=timezone.utc)
    job = {
        "id": 7,
        "queue": "q",
        "status": "dead",
        "attempts": 2,
        "max_attempts": 2,
        "payload": {"x": "[bold]y[/]"},
        "history": {
            "attempts": [
                {"attempt": 2, "at": now - timedelta(seconds=90), "outcome": "[red]failed[/]",
                 "worker": "w\x1b[2J", "error": "[bold red]pwned[/]\nline 2", "trace": None},
                {"attempt": 1, "at": None, "outcome": None, "worker": None, "error": None, "trace": None},
            ],
            "reason": None,
        },
    }  # fmt: skip
    text = plain(detail_renderable(job, now))
    assert "#2  [red]failed[/]" in text and "(1m30s ago)" in text and "[bold red]pwned[/]" in text
    assert "\x1b" not in text and "#1  ? (time not recorded)" in text
    assert text.index("attempts, newest first") < text.index("payload")
    why = plain(detail_renderable({**job, "history": {"attempts": None, "reason": "K does not record this"}}))
    assert "K does not record this" in why
