"""Every command through a real PgBouncer, in transaction and in session pooling (issue 22, item 1).

A pool of 2 server connections, so that a client's transactions land on different server
connections: a server-side prepared statement or a session SET would be found missing (or leak).
"""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator

import psycopg
import pytest

from pgq_tui.db.connect import connect
from pgq_tui.monitor.snapshot import EXACT
from pgq_tui.queue import JobQueue
from pgq_tui.queue.wakeup import Wakeup
from pgq_tui.tui.app import PgqTopApp
from tests.actions_support import pgq_actions
from tests.monitor_support import pgq_monitor
from tests.pgbouncer_support import pgbouncer, through
from tests.test_errand import DEEP_AND_SMALL
from tests.test_exporter import scrape


@pytest.fixture(scope="module", params=["transaction", "session"])
def pooler(request: pytest.FixtureRequest, server_dsn: str) -> Iterator[tuple[str, int]]:
    with pgbouncer(server_dsn, request.param) as port:
        yield request.param, port


@pytest.fixture
def pgb(dsn: str, pooler: tuple[str, int]) -> str:
    return through(dsn, pooler[1])


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgq_tui", *args], capture_output=True, text=True, timeout=timeout
    )


def seed(dsn: str) -> tuple[list[int], list[int], list[int]]:
    """3 stuck jobs (lease expired, holder gone), 2 ready, 1 running with a live lease."""
    with JobQueue(dsn) as q:
        stuck = q.enqueue("mail", [{"n": i} for i in range(3)])
        assert len(q.claim("mail", limit=3, lease=0.01)) == 3
        ready = q.enqueue("mail", [{"n": i} for i in range(2)])
        live = q.enqueue("other", [{"live": True}])
        assert len(q.claim("other", limit=1, lease=600)) == 1
    time.sleep(0.05)
    return stuck, ready, live


def statuses(dsn: str) -> dict[int, str]:
    with psycopg.connect(dsn) as c:
        return dict(c.execute("SELECT id, status FROM jobs").fetchall())


def test_settings_are_set_per_transaction_and_never_leak(pgb: str) -> None:
    with connect(pgb, application_name="pgq-top test", statement_timeout_ms=1234, read_only=True) as conn:
        assert conn.link.pooled  # type: ignore[attr-defined]
        for _ in range(8):  # more than psycopg's prepare_threshold: nothing may be prepared
            assert conn.execute("SHOW statement_timeout").fetchone() == ("1234ms",)
            assert conn.execute("SHOW transaction_read_only").fetchone() == ("on",)
        with conn.transaction():
            assert conn.execute("SHOW statement_timeout").fetchone() == ("1234ms",)
    with psycopg.connect(pgb, autocommit=True) as other:  # a plain client on the same server connections
        for _ in range(4):
            assert other.execute("SHOW statement_timeout").fetchone() == ("0",)


def test_claims_through_the_pooler_take_the_cursor_path(pgb: str) -> None:
    """No prepared statements of our own through a pooler (queue/direct.py): in transaction mode
    the next transaction may run on another server connection, which never prepared them."""
    with JobQueue(pgb) as q:
        ids = q.enqueue("mail", [{}] * 4)
        first = q.claim("mail", limit=2)
        accepted, following = q.complete_and_claim(first, "mail", limit=2)
        assert accepted == 2 and [j.id for j in following] == ids[2:]
        assert q.complete_and_claim(following, "mail", limit=2) == (2, [])
        assert q._direct is None


def test_the_monitor_polls_again_and_again(pgb: str) -> None:
    stuck, ready, _ = seed(pgb)
    with pgq_monitor(pgb) as monitor:
        for _ in range(8):
            snap = monitor.collect()
            assert snap.errors == {}, snap.errors
            mail = {q.queue: q for q in snap.queues}["mail"]
            assert (mail.ready, mail.stuck) == (len(ready), len(stuck))


def test_the_poll_lends_its_counts_through_the_pooler(pgb: str, dsn: str) -> None:
    """monitor/errand.py behind a pooler: the counter's session (pooled too) runs the poll's counts
    as the poll's, and neither its settings nor its name outlive that transaction."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(DEEP_AND_SMALL)
    with pgq_monitor(pgb, count_cap=20, statement_timeout_ms=4000, count_interval_s=0.5) as monitor:
        deadline = time.monotonic() + 30
        while monitor._counter.lent == 0:  # once 'deep' is past the cap the counter has a session
            assert time.monotonic() < deadline, "no poll lent its counts"
            snap = monitor.collect()
            assert snap.errors == {}, snap.errors
            small = {q.queue: q for q in snap.queues}["small"]
            assert (small.ready, small.figures["ready"].accuracy) == (3, EXACT)
            time.sleep(0.05)
    with psycopg.connect(pgb, autocommit=True, application_name="plain") as other:
        for _ in range(4):  # on the same server connections: nothing of the poll's left behind
            assert other.execute("SHOW statement_timeout").fetchone() == ("0",)
            assert other.execute("SHOW application_name").fetchone() == ("plain",)


def test_snapshot_check_fleet_and_requeue(pgb: str, dsn: str) -> None:
    stuck, _, live = seed(dsn)
    proc = cli("snapshot", "--json", "--dsn", pgb)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert {q["queue"]: q["stuck"] for q in doc["queues"]}["mail"] == len(stuck)

    # below check's own stuck thresholds; the diagnosis still names the cause: their workers are gone
    proc = cli("check", "--dsn", pgb, "--stuck-warn", "10", "--stuck-crit", "20")
    first = proc.stdout.splitlines()[0]
    assert proc.returncode == 1 and first.startswith(f"PGQ WARNING: {len(stuck)} stuck jobs"), proc.stdout
    assert "'stuck'=3;10;20;0" in first, first

    proc = cli("snapshot", "--json", "--dsn", pgb, "--dsn", dsn)  # the fleet: pooled and direct
    assert proc.returncode == 0, proc.stderr
    assert all(t["error"] is None for t in json.loads(proc.stdout)["targets"])

    before = statuses(dsn)
    proc = cli("requeue", "--stuck", "--yes", "--dsn", pgb)
    assert proc.returncode == 0, proc.stderr
    after = statuses(dsn)
    changed = {i for i in before if before[i] != after[i]}
    assert changed == set(stuck) and all(after[i] == "pending" for i in stuck)
    assert after[live[0]] == "running"


def test_the_exporter_serves(pgb: str) -> None:
    seed(pgb)
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pgq_tui",
            "exporter",
            "--dsn",
            pgb,
            "--listen",
            "127.0.0.1:0",
            "--min-interval",
            "0",
        ],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        url = re.search(r"http://\S+/metrics", proc.stderr.readline())
        assert url
        for _ in range(6):
            got = scrape(url.group(0))
            assert got.get("pgq_up") == 1
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


async def test_the_dashboard_refreshes(pgb: str) -> None:
    stuck, _, _ = seed(pgb)
    monitor, actions = pgq_monitor(pgb), pgq_actions(pgb)
    app = PgqTopApp(monitor, actions=actions, interval=0.2)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            deadline = time.monotonic() + 20
            while app.received < 6:
                assert time.monotonic() < deadline and app.error is None, app.error
                await pilot.pause(0.1)
            assert {q.queue: q.stuck for q in app.snapshot.queues}["mail"] == len(stuck)  # type: ignore[union-attr]
    finally:
        actions.close()
        monitor.close()


def test_workers_fall_back_to_polling_behind_a_transaction_pooler(
    pgb: str, pooler: tuple[str, int], capfd: pytest.CaptureFixture[str]
) -> None:
    wake = Wakeup(pgb, "pgq_jobs", ["mail"], application_name="pgq-top test").start()
    try:
        deadline = time.monotonic() + 10
        while wake.connects == 0 and not wake.unavailable:
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        wake.stop()
    err = capfd.readouterr().err
    if pooler[0] == "transaction":
        assert wake.unavailable and err.count("\n") == 1 and "polling" in err, err
    else:  # a session pooler looks the same from the client: also polls, unless PGQ_TOP_POOLER=session
        assert wake.unavailable
