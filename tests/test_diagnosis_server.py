"""Each cause the diagnosis covers, reproduced on a real server. Within 90 s of the cause starting:
the health line at 80x24 names the root cause and its fix, `pgq-top why` prints the chain, and
`check`'s first line names the cause; once the cause is removed, the chain is gone within 2 polls.

The thresholds are set low (1-2 s) so the tests are fast: the rules are the same."""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import psycopg
import psycopg.sql
import pytest
from monitor_support import pgq_monitor
from psycopg.conninfo import make_conninfo

from pgq_tui import cli
from pgq_tui.diagnosis import Chain, Thresholds, diagnose
from pgq_tui.exitcodes import WHY_CRITICAL, WHY_WARNING
from pgq_tui.queue import JobQueue
from pgq_tui.tui.widgets.status import chain_text

FAST = Thresholds(
    min_duration_s=1.0,
    xmin_hold_s=1.0,
    stalled_after_s=2.0,
    lock_wait_s=1.0,
    backlog_growth_per_s=5.0,
    backlog_window_s=1.5,
)
FLAGS = [
    "--min-duration", "1", "--xmin-hold", "1", "--stalled-after", "2", "--lock-wait", "1",
    "--backlog-growth", "5", "--backlog-window", "1.5",
]  # fmt: skip
POLL_S = 0.3
HEALTH_WIDTH = 80 - len("health: ")  # the VerdictLine at 80 columns


class Watch:
    """The dashboard's loop without the screen: poll, keep the history, diagnose."""

    def __init__(self, dsn: str) -> None:
        self.monitor = pgq_monitor(dsn)
        self.history: list = []  # type: ignore[type-arg]
        self.chains: list[Chain] = []

    def poll(self) -> list[Chain]:
        self.history.append(self.monitor.collect())
        self.chains = diagnose(self.history, FAST)
        return self.chains

    def until(self, matches: Callable[[Chain], bool], timeout: float = 90.0) -> Chain:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [c for c in self.poll() if matches(c)]
            if found:
                return found[0]
            time.sleep(POLL_S)
        raise AssertionError(
            f"no such chain within {timeout} s; chains: {[c.to_dict() for c in self.chains]}"
        )

    def gone(self, matches: Callable[[Chain], bool], timeout: float = 30.0) -> None:
        """Poll until no chain matches: not a fixed number of polls, which a busy machine stretches
        (the backlog's growth is averaged over a window of polls)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(POLL_S)
            if not any(matches(c) for c in self.poll()):
                return
        raise AssertionError(f"still there after {timeout} s: {[c.to_dict() for c in self.chains]}")

    def close(self) -> None:
        self.monitor.close()


@pytest.fixture
def watch(dsn: str) -> Iterator[Watch]:
    w = Watch(dsn)
    yield w
    w.close()


def health_line(w: Watch) -> str:
    chains = [c for c in w.chains]
    line = chain_text(chains, HEALTH_WIDTH).plain
    assert len(line) <= HEALTH_WIDTH
    return line


def why(dsn: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(["why", "--dsn", dsn, "--window", "2", "--interval", "0.5", *FLAGS])
    return code, capsys.readouterr().out


def check_first_line(dsn: str, capsys: pytest.CaptureFixture[str]) -> str:
    capsys.readouterr()
    cli.main(["check", "--dsn", dsn, "--window", "2", "--interval", "0.5", *FLAGS])
    return capsys.readouterr().out.splitlines()[0]


def assert_named(w: Watch, dsn: str, capsys: pytest.CaptureFixture[str], *words: str) -> None:
    """The health line (when this chain is the worst), `why` and check's first line name it."""
    line = health_line(w)
    assert all(word in line for word in words), line
    code, out = why(dsn, capsys)
    assert code in (WHY_WARNING, WHY_CRITICAL) and all(word in out for word in words), out
    first = check_first_line(dsn, capsys)
    assert first.startswith(("PGQ WARNING", "PGQ CRITICAL")) and all(word in first for word in words), first


def root_is(rule: str, **attrs: object) -> Callable[[Chain], bool]:
    return lambda c: c.root.rule == rule and all(getattr(c.root, k) == v for k, v in attrs.items())


def test_idle_in_transaction(watch: Watch, dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    holder = psycopg.connect(dsn, application_name="report")
    try:
        holder.execute("SELECT txid_current()")  # idle in transaction, holding its xid
        pid = holder.info.backend_pid
        chain = watch.until(root_is("xmin_holder", pid=pid))
        assert "idle in tx" in chain.root.note and "app 'report'" in chain.root.note
        assert_named(watch, dsn, capsys, f"pid {pid}", "· K")
        holder.commit()
        watch.gone(root_is("xmin_holder", pid=pid))
    finally:
        holder.close()


def test_long_running_query(watch: Watch, dsn: str, sql: psycopg.Connection, capsys) -> None:  # type: ignore[no-untyped-def]
    runner = psycopg.connect(dsn, autocommit=True, application_name="etl")
    pid = runner.info.backend_pid
    thread = threading.Thread(target=lambda: _swallow(lambda: runner.execute("SELECT pg_sleep(60)")))
    thread.start()
    try:
        chain = watch.until(root_is("xmin_holder", pid=pid))
        assert "active" in chain.root.note
        assert_named(watch, dsn, capsys, f"pid {pid}", "· K")
        sql.execute("SELECT pg_terminate_backend(%s)", [pid])  # what K does
        watch.gone(root_is("xmin_holder", pid=pid))
    finally:
        thread.join(10)
        runner.close()


def _swallow(call: Callable[[], object]) -> None:
    with contextlib.suppress(psycopg.Error):  # terminated on purpose
        call()


def test_prepared_transaction(watch: Watch, dsn: str, sql: psycopg.Connection, capsys) -> None:  # type: ignore[no-untyped-def]
    if int(sql.execute("SHOW max_prepared_transactions").fetchone()[0]) == 0:
        pytest.skip("the server has max_prepared_transactions = 0: no prepared transaction possible")
    with psycopg.connect(dsn) as conn:
        conn.execute("INSERT INTO jobs (queue, payload) VALUES ('q', '{}')")
        conn.execute("PREPARE TRANSACTION 'pgq-diag'")
    try:
        chain = watch.until(root_is("xmin_holder", id="xmin:prepared transaction:pgq-diag"))
        assert chain.fix is not None and chain.fix.sql == "ROLLBACK PREPARED 'pgq-diag';"
        assert_named(watch, dsn, capsys, "prepared xact 'pgq-diag'", "ROLLBACK PREPARED")
        sql.execute("ROLLBACK PREPARED 'pgq-diag'")
        watch.gone(root_is("xmin_holder", id="xmin:prepared transaction:pgq-diag"))
    finally:
        sql.execute("SELECT gid FROM pg_prepared_xacts WHERE gid = 'pgq-diag'").fetchall() and sql.execute(
            "ROLLBACK PREPARED 'pgq-diag'"
        )


@contextlib.contextmanager
def bystanders(server_dsn: str, sql: psycopg.Connection) -> Iterator[tuple[int, str]]:
    """The issue's bystanders: a logical replication slot `cdc` (pgoutput) and a session idle in a
    transaction (a snapshot and an xid) in another database. Yields (that session's pid, the slot's
    name); drops both on the way out: a leftover slot would hold WAL and catalog_xmin for every later
    test on this server."""
    if sql.execute("SHOW wal_level").fetchone()[0] != "logical":  # type: ignore[index]
        pytest.skip("the server's wal_level is not logical: no logical replication slot possible")
    other_db = f"pgq_o_{uuid.uuid4().hex[:12]}"
    ident = psycopg.sql.Identifier(other_db)
    slot = f"cdc_{uuid.uuid4().hex[:8]}"
    admin = psycopg.connect(server_dsn, autocommit=True)
    other: psycopg.Connection | None = None
    try:
        admin.execute(psycopg.sql.SQL("CREATE DATABASE {}").format(ident))
        sql.execute("SELECT pg_create_logical_replication_slot(%s, 'pgoutput')", [slot])
        other = psycopg.connect(make_conninfo(server_dsn, dbname=other_db), application_name="crm-report")
        other.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
        other.execute("SELECT txid_current(), count(*) FROM pg_class")  # holds a snapshot and an xid
        yield other.info.backend_pid, slot
    finally:
        if other is not None:
            other.close()
        sql.execute(
            "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = %s",
            [slot],
        )
        admin.execute(psycopg.sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(ident))
        admin.close()


def _dead(sql: psycopg.Connection, n: int) -> None:
    """n removable dead tuples in the queue table (ordinary churn: inserted, then deleted)."""
    sql.execute("INSERT INTO jobs (queue, payload) SELECT 'q', '{}' FROM generate_series(1, %s)", [n])
    sql.execute("DELETE FROM jobs")
    sql.execute("SELECT pg_stat_force_next_flush()")  # n_dead_tup visible now, not in 1-10 s


def _n_dead(sql: psycopg.Connection) -> int:
    sql.execute("SELECT pg_stat_force_next_flush()")
    return int(sql.execute("SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'jobs'").fetchone()[0])  # type: ignore[index]


def test_bystanders_are_not_blamed_next_to_a_real_holder(
    watch: Watch, dsn: str, server_dsn: str, sql: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    """#29: a logical slot and another database's idle transaction hold none of the queue table's dead
    tuples (a plain VACUUM removes them all): `why` and `check` blame neither, and their exit codes
    say nothing is blocked. An idle transaction in the queue's own database that vacuum cannot get
    past is still named, by its pid."""
    # autovacuum stays out of the way (its thresholds far above the churn, so no "piling up" either,
    # and no autoanalyze, whose snapshot would carry the other database's xid into this one);
    # a first VACUUM gives the table a last vacuum: the first poll used to compare holders with it
    sql.execute(
        "ALTER TABLE jobs SET (autovacuum_vacuum_threshold = 100000, autovacuum_vacuum_scale_factor = 0,"
        " autovacuum_analyze_threshold = 100000, autovacuum_analyze_scale_factor = 0)"
    )
    sql.execute("VACUUM jobs")
    with bystanders(server_dsn, sql) as (other_pid, slot):
        _dead(sql, 5000)
        time.sleep(1.5)  # older than --xmin-hold 1 and --min-duration 1: old enough to be named
        code, out = why(dsn, capsys)
        assert code == 0 and slot not in out and str(other_pid) not in out and "drop the slot" not in out, out
        first = check_first_line(dsn, capsys)
        assert first.startswith("PGQ OK") and slot not in first and str(other_pid) not in first, first
        capsys.readouterr()
        assert cli.main(["check", "--dsn", dsn, "--window", "2", "--interval", "0.5", *FLAGS]) == 0
        snap = watch.monitor.collect()
        reach = {h.name: h.scope for h in snap.sessions.xmin_holders}
        assert reach[str(other_pid)] == "other database" and reach[slot] == "catalog", reach
        assert next(h for h in snap.sessions.xmin_holders if h.name == slot).wal_bytes is not None
        assert snap.table.dead_tuples >= 5000
        for _ in range(8):  # the dashboard's loop: a poll, and with a vacuum between two polls
            watch.poll()
            time.sleep(POLL_S)
        sql.execute("VACUUM jobs")
        for _ in range(4):
            chains = watch.poll()
            assert not chains, [c.to_dict() for c in chains]
            time.sleep(POLL_S)
        # the truth: neither bystander held anything back (a retry only outlasts a passing snapshot
        # of this database; the bystanders stay for all of them)
        for _ in range(3):
            if _n_dead(sql) < 100:
                break
            time.sleep(0.5)
            sql.execute("VACUUM jobs")
        assert _n_dead(sql) < 100

        # a transaction of the queue's own database, older than the next dead tuples: vacuum can't
        holder = psycopg.connect(dsn, application_name="report")
        try:
            holder.execute("SELECT txid_current()")  # idle in transaction, holding its xid
            pid = holder.info.backend_pid
            _dead(sql, 5000)
            watch.poll()
            sql.execute("VACUUM jobs")  # between two polls: the evidence
            assert _n_dead(sql) >= 5000
            chain = watch.until(root_is("xmin_holder", pid=pid))
            assert [f.rule for f in chain.links] == ["dead_tuples", "xmin_holder"], chain.to_dict()
            assert "vacuum can't remove" in chain.symptom.short and chain.level == "crit"
            assert_named(watch, dsn, capsys, f"pid {pid}", "· K")
            code, out = why(dsn, capsys)
            assert slot not in out and str(other_pid) not in out, out
        finally:
            holder.close()


def test_lock_blocker_on_the_queue_table(
    watch: Watch, dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    queue.enqueue("q", [{}] * 5)
    locker = psycopg.connect(dsn, application_name="migration")
    locker.execute("LOCK TABLE jobs IN EXCLUSIVE MODE")  # plain reads go on; claims wait
    pid = locker.info.backend_pid
    claimer = JobQueue(dsn, statement_timeout_ms=None, lock_timeout_ms=None)
    thread = threading.Thread(target=lambda: claimer.claim("q"))
    thread.start()
    try:
        chain = watch.until(root_is("lock", pid=pid))
        assert chain.fix is not None and chain.fix.key == "K" and "app 'migration'" in chain.root.note
        assert_named(watch, dsn, capsys, f"pid {pid}", "· K")
        locker.commit()
        watch.gone(root_is("lock", pid=pid))
    finally:
        locker.close()
        thread.join(10)
        claimer.close()


def test_autovacuum_disabled(
    watch: Watch, dsn: str, queue: JobQueue, sql: psycopg.Connection, capsys
) -> None:  # type: ignore[no-untyped-def]
    sql.execute("ALTER TABLE jobs SET (autovacuum_enabled = false)")
    threshold = watch.monitor.collect().table.vacuum_threshold  # pgq's table sets its own
    queue.enqueue("q", [{}] * int(2 * threshold + 1000))
    sql.execute("DELETE FROM jobs")
    sql.execute("SELECT pg_stat_force_next_flush()")
    chain = watch.until(lambda c: c.root.rule == "autovacuum_off" and len(c.links) == 2)
    assert chain.links[0].rule == "dead_tuples"
    assert (
        chain.fix is not None and chain.fix.sql == 'ALTER TABLE "public"."jobs" RESET (autovacuum_enabled);'
    )
    assert_named(watch, dsn, capsys, "autovacuum off on public.jobs", "RESET autovacuum_enabled")
    sql.execute("ALTER TABLE jobs RESET (autovacuum_enabled)")
    watch.gone(root_is("autovacuum_off"))


def test_no_live_worker(watch: Watch, dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]) -> None:
    queue.enqueue("emails", [{}] * 20)
    chain = watch.until(root_is("stalled", id="stalled:emails"))
    assert "no live worker" in chain.root.text
    assert_named(watch, dsn, capsys, "queue emails", "start a worker")
    with JobQueue(dsn) as worker:  # a worker comes: it claims and holds jobs
        jobs = worker.claim("emails", limit=5)
        assert jobs
        watch.gone(root_is("stalled"))
        worker.complete(jobs)


def test_workers_crashing(
    watch: Watch, dsn: str, queue: JobQueue, capsys: pytest.CaptureFixture[str]
) -> None:
    queue.enqueue("emails", [{}] * 3)
    crashed = JobQueue(dsn, worker_id="pgq-w-doomed")
    assert len(crashed.claim("emails", lease=0.5)) == 3
    crashed.close()  # the worker dies holding its leases
    chain = watch.until(root_is("crashed"))
    assert chain.fix is not None and chain.fix.key == "R"
    assert_named(watch, dsn, capsys, "3 stuck jobs, their workers gone", "· R")
    capsys.readouterr()
    assert cli.main(["requeue", "--dsn", dsn, "--stuck", "--yes"]) == 0  # what R does
    watch.gone(root_is("crashed"))


def test_backlog_growing(watch: Watch, dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    stop_enqueue, stop_work = threading.Event(), threading.Event()

    def enqueue() -> None:
        with JobQueue(dsn) as q:
            while not stop_enqueue.wait(0.1):
                q.enqueue("emails", [{}] * 8)  # 80/s

    def work() -> None:
        with JobQueue(dsn) as q:
            while not stop_work.wait(0.1):
                q.complete(q.claim("emails", limit=1))  # 10/s

    threads = [threading.Thread(target=enqueue), threading.Thread(target=work)]
    for t in threads:
        t.start()
    try:
        chain = watch.until(root_is("backlog"))
        assert "grows by" in chain.root.text
        assert_named(watch, dsn, capsys, "backlog", "add workers")
        stop_enqueue.set()
        threads[0].join(10)
        watch.gone(root_is("backlog"))  # once the window of polls it is averaged over holds no enqueue
    finally:
        stop_enqueue.set()
        stop_work.set()
        for t in threads:
            t.join(10)
