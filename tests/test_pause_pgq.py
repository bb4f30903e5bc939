"""Pausing pgq-top's own queue: a paused queue is not claimed by a running worker pool (its claim SQL
checks `<table>_pauses`), resuming wakes the pool at once, the state is durable (a row), shown in
the snapshot JSON, and the CLI's pause and resume are guarded, confirmed, audited and refused under
--read-only."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest
from dialect_support import cli, snapshot_json

from pgq_tui.errors import EXIT_OK, EXIT_REFUSED
from pgq_tui.exitcodes import WHY_WARNING
from pgq_tui.jobtable import statements as st
from pgq_tui.queue import JobQueue
from pgq_tui.queue.pool import WorkerPool
from pgq_tui.queue.worker import WorkerConfig


def _pending(dsn: str, queue: str) -> int:
    with psycopg.connect(dsn, autocommit=True) as conn:
        row = conn.execute("SELECT count(*) FROM jobs WHERE queue = %s AND status <> 'done'", (queue,))
        return int(row.fetchone()[0])  # type: ignore[index]


def _wait(what: str, probe, timeout: float = 30.0) -> float:
    started = time.monotonic()
    while not probe():
        if time.monotonic() - started > timeout:
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.05)
    return time.monotonic() - started


def _queue(snap: dict, name: str) -> dict:
    return next(q for q in snap["queues"] if q["queue"] == name)


def test_a_paused_queue_is_not_claimed_by_the_pool_until_resumed(
    dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    audit = tmp_path / "audit.jsonl"
    config = WorkerConfig(conninfo=dsn, queues=("mail", "other"), batch=5, keep=True, poll=30.0)
    with WorkerPool(config, concurrency=2, reap_interval=0):
        queue.enqueue("mail", [{"n": 0}])
        _wait("the pool to run a first job", lambda: _pending(dsn, "mail") == 0)
        code, out, err = cli(
            capsys, "pause", "--dsn", dsn, "--queue", "mail", "--yes", "--audit-log", str(audit)
        )
        assert (code, err) == (EXIT_OK, ""), err
        assert "paused queue 'mail'" in out
        with psycopg.connect(dsn, autocommit=True) as conn:  # the write's transaction named itself
            (by,) = conn.execute("SELECT paused_by FROM jobs_pauses WHERE queue = 'mail'").fetchone()  # type: ignore[misc]
        assert by.endswith("(pgq-top pause)"), by
        snap = snapshot_json(capsys, "--dsn", dsn)
        mail = _queue(snap, "mail")
        assert mail["paused"] is True and mail["paused_figure"]["accuracy"] == "exact"
        assert mail["paused_since"] is not None
        queue.enqueue("mail", [{"n": i} for i in range(1, 11)])
        queue.enqueue("other", [{"n": i} for i in range(10)])
        _wait("the unpaused queue to drain", lambda: _pending(dsn, "other") == 0)
        assert _queue(snapshot_json(capsys, "--dsn", dsn), "other")["paused"] is False
        time.sleep(1.0)  # the pool had every chance to claim: it must not have
        assert _pending(dsn, "mail") == 10
        with psycopg.connect(dsn, autocommit=True) as conn:
            assert conn.execute("SELECT count(*) FROM jobs WHERE queue = 'mail' AND attempts > 0 AND "
                                "status = 'pending'").fetchone() == (0,)  # fmt: skip
        # a second pause changes nothing: the guard is the pauses table's primary key
        code, _, err = cli(capsys, "pause", "--dsn", dsn, "--queue", "mail", "--yes", "--audit-log", "off")
        assert code == EXIT_REFUSED and "already paused" in err
        asked = time.monotonic()
        code, out, err = cli(
            capsys, "resume", "--dsn", dsn, "--queue", "mail", "--yes", "--audit-log", str(audit)
        )
        assert (code, err) == (EXIT_OK, ""), err
        # the resume's notification wakes the idle workers at once (their safety poll is 30 s)
        _wait("the resumed queue to drain", lambda: _pending(dsn, "mail") == 0, timeout=20)
        took = time.monotonic() - asked
        assert took < 10
        sys.__stderr__.write(f"\npool drained the resumed queue {took:.2f} s after pgq-top resume began\n")
    snap = snapshot_json(capsys, "--dsn", dsn)
    assert _queue(snap, "mail")["paused"] is False
    records = [json.loads(line) for line in audit.read_text().splitlines()]
    assert [(r["action"], r["event"], r["queue"]) for r in records] == [
        ("pause", "start", "mail"),
        ("pause", "end", "mail"),
        ("resume", "start", "mail"),
        ("resume", "end", "mail"),
    ]
    assert records[1]["changed"] == 1


def test_pause_is_refused_under_read_only_and_without_a_terminal(
    dsn: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = cli(capsys, "--read-only", "pause", "--dsn", dsn, "--queue", "mail")
    assert code == EXIT_REFUSED and "read-only" in err
    code, out, err = cli(capsys, "pause", "--dsn", dsn, "--queue", "mail", "--audit-log", "off")
    assert code == EXIT_REFUSED and "no terminal" in err
    assert "Pause queue 'mail'" in out and "INSERT INTO" in out  # the plan and its SQL were shown
    with JobQueue(dsn) as q:
        assert q.paused() == {}


def test_the_library_api_and_the_session_name(dsn: str, queue: JobQueue) -> None:
    assert queue.pause("a", by="me") is True and queue.pause("a") is False
    assert set(queue.paused()) == {"a"}
    queue.enqueue("a", [{}])
    assert queue.claim("a") == [] and queue.seconds_until_due(["a"]) is None
    assert queue.resume("a") is True and queue.resume("a") is False
    (job,) = queue.claim("a")
    assert job.queue == "a"


def test_a_table_made_before_pauses_keeps_working_and_says_pause_needs_init(
    dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("DROP TABLE jobs_pauses")
    queue.enqueue("a", [{}])
    assert queue.seconds_until_due(["a"]) is not None and len(queue.claim("a")) == 1
    code, _, err = cli(capsys, "pause", "--dsn", dsn, "--queue", "a", "--yes")
    assert code == EXIT_REFUSED and "no pauses table jobs_pauses (create it with: pgq-top init)" in err
    snap = snapshot_json(capsys, "--dsn", dsn)
    (a,) = snap["queues"]
    assert a["paused"] is None and a["paused_figure"]["accuracy"] == "unsupported"
    with JobQueue(dsn) as q:
        q.install()
        assert q.pause("a") is True


def test_the_claim_still_walks_its_index_with_the_pause_check(dsn: str, queue: JobQueue) -> None:
    queue.enqueue("a", [{} for _ in range(50)])
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE jobs")
        claim = st.compose(st.CLAIM, "jobs", "public", limit=10).as_string(conn)
        params = {"queue": "a", "limit": 10, "lease": 30.0, "worker": "w"}
        plan = conn.execute(b"EXPLAIN (FORMAT JSON) " + claim.encode(), params).fetchone()[0]  # type: ignore[index]
    text = json.dumps(plan)
    assert "jobs_claim_idx" in text and "One-Time Filter" in text


def test_a_paused_queue_is_a_paused_finding_not_a_stall_and_check_only_warns(
    dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    queue.enqueue("mail", [{"n": i} for i in range(3)])
    queue.enqueue("other", [{"n": 0}])
    with psycopg.connect(dsn, autocommit=True) as conn:  # waiting 20 min, no worker anywhere
        conn.execute("UPDATE jobs SET run_at = now() - interval '20 minutes' WHERE queue = 'mail'")
    code, out, _ = cli(capsys, "check", "--dsn", dsn)
    assert code == 2 and "queue mail: oldest ready job waiting" in out  # CRITICAL: 20 min > 5 min
    code, out, _ = cli(capsys, "why", "--dsn", dsn, "--window", "0", "--json")
    assert "stalled:mail" in out
    assert queue.pause("mail", by="test")
    code, out, _ = cli(capsys, "check", "--dsn", dsn)
    assert code == 1 and "'paused_queues'=1" in out and "oldest ready job waiting" not in out, out
    code, out, _ = cli(capsys, "why", "--dsn", dsn, "--window", "0", "--json")
    findings = [f for chain in json.loads(out)["queues"][0]["chains"] for f in chain["links"]]
    rules = {f["id"]: f for f in findings}
    assert "stalled:mail" not in rules and rules["paused:mail"]["rule"] == "paused"
    assert rules["paused:mail"]["fix"]["command"] == "pgq-top resume --queue mail"
    assert code == WHY_WARNING  # a paused queue with jobs waiting, never critical for waiting


def test_the_exporter_says_which_queue_is_paused(dsn: str, queue: JobQueue) -> None:
    from test_exporter import scrape

    queue.enqueue("mail", [{}])
    queue.enqueue("other", [{}])
    queue.pause("mail")
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgq_tui", "exporter", "--dsn", dsn, "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = re.search(r"http://\S+/metrics", proc.stderr.readline())
        assert url
        got = scrape(url.group(0))
        who = {"kind": "pgq", "target": "public.jobs"}
        assert got.get("pgq_queue_paused", queue="mail", **who) == 1
        assert got.get("pgq_queue_paused", queue="other", **who) == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


async def test_the_async_queue_honours_a_pause_too(dsn: str) -> None:
    from pgq_tui.queue import AsyncJobQueue

    async with AsyncJobQueue(dsn) as q:
        await q.enqueue("a", [{}, {}])
        assert await q.pause("a") and not await q.pause("a")
        assert set(await q.paused()) == {"a"}
        assert await q.claim("a") == [] and await q.seconds_until_due(["a"]) is None
        assert await q.resume("a")
        assert len(await q.claim("a")) == 2
