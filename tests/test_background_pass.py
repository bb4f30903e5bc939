"""One read of a big table for the figures an incident turns on, within 5% of one backend (#35).

- A mapped table whose running rows no index serves (the seed's stock `jobs`, `job_queue`, and a
  partitioned `jobs`) has a Pass: the running/stuck count and the lease list by ONE scan. What it
  yields equals what the two statements it replaces yield, in the same snapshot.
- A Monitor on such a table past the in-poll scan size runs the Pass, not the two, and its figures
  equal the ground truth; 5 more stuck jobs show at the next pass.
- The counter's budget is split by urgency: a costly done count never lengthens the stuck count's
  cycle, and the whole counter stays within DUTY of one backend.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import psycopg
import pytest
from dialect_cases.seed import (
    JOB_QUEUE,
    SEED_JOBS,
    SEED_JOBS_CLAIM,
    job_queue_populate,
    seed_jobs_populate,
)
from psycopg.rows import dict_row
from test_partitions import PARTITIONED

from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import PASS_COUNTS, PASS_PART, Match, QueueModel, Statement
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.monitor.background import DUTY, SLOW_PART, SLOW_SHARE, BackgroundCounter, is_list
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import STALE

PARAMS = {**DEFAULTS, "cap1": None, "rows": 5, "watch": 4}


def more_running(dsn: str) -> None:
    """Past the list's 5 rows of each: 8 more stuck jobs, 7 more running (leases a minute ahead: none
    runs out while a test reads), and one with no lease."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, locked_until)"
            " SELECT CASE WHEN g % 2 = 0 THEN 'mail' ELSE 'thumbs' END, jsonb_build_object('g', g),"
            "        'running',"
            "        now() + make_interval(secs => CASE WHEN g <= 8 THEN -g ELSE 60 + g END)"
            " FROM generate_series(1, 15) g"
        )
        conn.execute("INSERT INTO jobs (queue, payload, status) VALUES ('mail', '{}', 'running')")


def partitioned_install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(PARTITIONED)
        conn.execute("INSERT INTO jobs (queue, payload) SELECT 'pdf', '{}' FROM generate_series(1, 5)")
        conn.execute(SEED_JOBS_CLAIM, {"queue": "pdf", "n": 2, "lease": -30})
        conn.execute(SEED_JOBS_CLAIM, {"queue": "pdf", "n": 1, "lease": 600})
    more_running(dsn)


def seed_install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
    seed_jobs_populate(dsn)
    more_running(dsn)


def job_queue_install(dsn: str) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(JOB_QUEUE)
    job_queue_populate(dsn)


# the running jobs not stuck yet whose lease runs out soonest, 4 of them (the seed's lease is
# locked_until; job_queue's stuck rule is 30 minutes after locked_at)
SOONEST = {
    "seed-jobs": "SELECT tableoid::bigint, ctid::text FROM jobs WHERE status = 'running'"
    " AND locked_until >= now() ORDER BY locked_until, id LIMIT 4",
    "job-queue": "SELECT tableoid::bigint, ctid::text FROM job_queue WHERE status = 'processing'"
    " AND locked_at >= now() - interval '30 minutes' ORDER BY locked_at, id LIMIT 4",
}
SOONEST["partitioned-jobs"] = SOONEST["seed-jobs"]
SHAPES: dict[str, tuple[Callable[[str], None], str]] = {
    "seed-jobs": (seed_install, "jobs"),
    "job-queue": (job_queue_install, "job_queue"),
    "partitioned-jobs": (partitioned_install, "jobs"),
}


def run(conn: psycopg.Connection, statement: Statement) -> list[dict[str, Any]]:
    return conn.cursor(row_factory=dict_row).execute(statement.compose(), PARAMS).fetchall()


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_the_pass_yields_what_its_statements_yield(empty_dsn: str, shape: str) -> None:
    install, table = SHAPES[shape]
    install(empty_dsn)
    model = single_queue(empty_dsn, table=table).model
    (one,) = model.passes  # no index serves the running rows: the count and the list are one read
    kind = model.kind
    assert [s.name for s in one.covers] == [f"{kind}.count_running_scan", f"{kind}.leases"]
    assert set(one.covers) <= set(model.scans)
    with psycopg.connect(empty_dsn) as conn:  # one transaction: one snapshot and one now() for all
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        got = run(conn, one.statement)
        separately = [run(conn, s) for s in one.covers]
    for i, statement in enumerate(one.covers):
        mine = [r for r in got if r[PASS_PART] == i]
        if is_list(statement):
            rows = [{k: v for k, v in r.items() if k not in (PASS_PART, PASS_COUNTS)} for r in mine]
            assert rows == separately[i], statement.name
            assert any(r["stuck"] for r in rows) and any(not r["stuck"] for r in rows)
        else:
            counts = sorted((r[PASS_COUNTS] for r in mine), key=lambda r: str(r["queue"]))
            assert counts == sorted(separately[i], key=lambda r: str(r["queue"])), statement.name
            assert sum(r.get("stuck", 0) for r in counts) > 0
    # the running jobs whose lease runs out soonest (4 of them: "watch"), for the poll to recheck
    watched = [r[PASS_COUNTS] for r in got if r[PASS_PART] == len(one.covers)]
    assert one.recheck is not None
    with psycopg.connect(empty_dsn) as conn:
        soonest = conn.execute(SOONEST[shape]).fetchall()
    assert sorted((w["rel"], w["tid"]) for w in watched) == sorted(tuple(r) for r in soonest)


def truth(conn: psycopg.Connection) -> dict[str, tuple[int, int]]:
    rows = conn.execute(
        "SELECT queue, count(*) FILTER (WHERE locked_until >= now() OR locked_until IS NULL),"
        " count(*) FILTER (WHERE locked_until < now()) FROM jobs WHERE status = 'running' GROUP BY 1"
    ).fetchall()
    return {q: (r, s) for q, r, s in rows}


def test_a_monitor_on_a_big_table_reads_them_by_one_pass(empty_dsn: str) -> None:
    seed_install(empty_dsn)
    model = single_queue(empty_dsn, table="jobs").model
    with (
        psycopg.connect(empty_dsn, autocommit=True) as conn,
        Monitor(empty_dsn, model, read_only=True, scan_pages=0, count_interval_s=0.2) as monitor,
    ):
        for step in range(2):
            monitor.collect()
            assert monitor.settle(20)
            snap = monitor.collect()
            with monitor._counter._cond:
                parts = set(monitor._counter._scans)
            assert parts == {model.passes[0].statement.name, "seed-jobs.count_done_scan"}
            expected = truth(conn)
            for q in snap.queues:
                assert (q.running, q.stuck) == expected.get(q.queue, (0, 0)), (step, q.queue)
                assert q.figures["stuck"].accuracy == STALE
            stuck = sum(s for _, s in expected.values())
            running = sum(r for r, _ in expected.values())
            assert (snap.stuck.total, len(snap.stuck.rows)) == (stuck, min(stuck, 50))
            assert (snap.leases.total, len(snap.leases.rows)) == (running, min(running, 50))
            assert snap.stuck.figure is not None and snap.stuck.figure.accuracy == STALE
            # five more jobs left by a crashed worker: the next pass (asked for again) shows them
            conn.execute(
                "INSERT INTO jobs (queue, payload, status, locked_until)"
                " SELECT 'mail', '{}', 'running', now() - interval '1 minute' FROM generate_series(1, 5)"
            )
            monitor._counter._asked_at = time.monotonic()  # settle() waits for a pass started after it


def scans(done_s: float, stuck_s: float) -> QueueModel:
    done = Statement.of("done", f"SELECT 'q' AS queue, 7 AS done FROM pg_sleep({done_s})", ("queue", "done"))
    stuck = Statement.of(
        "stuck",
        f"SELECT 'q' AS queue, 1 AS running, 2 AS stuck FROM pg_sleep({stuck_s})",
        ("queue", "running", "stuck"),
    )
    return QueueModel(Match("k", "public", "t"), "K", "", (), (done.scan(), stuck.scan()))


def test_a_costly_done_count_does_not_pace_the_stuck_count(empty_dsn: str) -> None:
    model = scans(done_s=0.6, stuck_s=0.02)
    counter = BackgroundCounter(empty_dsn, model, min_interval_s=0.1, read_only=True)
    try:
        counter.want(frozenset(), model.counts)
        assert counter.wait_for(frozenset({"done", "stuck"}), 20)
        with counter._cond:
            done, stuck = counter._parts["done"], counter._parts["stuck"]
            # each class's cycle is its own statements' cost over its share of the budget
            assert done.wait_s >= done.cost_s / (DUTY * SLOW_SHARE) - done.cost_s - 1e-6
            assert stuck.wait_s <= max(0.1, stuck.cost_s / (DUTY * (1 - SLOW_SHARE))) + 1e-6
            assert stuck.wait_s < done.wait_s / 5
        assert SLOW_PART not in counter._parts  # no indexed count was wanted
    finally:
        counter.close()


def test_the_counter_stays_within_its_budget(empty_dsn: str) -> None:
    """Measured over whole cycles: its busy time over the wall time, at most DUTY (and a margin
    for the first runs, which all start at once)."""
    model = scans(done_s=0.3, stuck_s=0.05)
    counter = BackgroundCounter(empty_dsn, model, min_interval_s=0.05, read_only=True)
    try:
        counter.want(frozenset(), model.counts)
        assert counter.wait_for(frozenset({"done", "stuck"}), 20)
        busy0, t0 = counter.busy_s, time.monotonic()
        time.sleep(12)
        duty = (counter.busy_s - busy0) / (time.monotonic() - t0)
        print(f"background duty {duty:.1%}")
        assert duty <= DUTY * 1.5, duty
    finally:
        counter.close()


def test_its_statements_start_just_after_a_poll_never_beside_one(empty_dsn: str) -> None:
    """Polls every 0.5 s (each calls want()): every statement starts in the first quarter of the
    interval after one, so a statement shorter than the rest ends before the next poll. When the
    polls stop, the counter goes on by its own pacing."""
    model = scans(done_s=0.05, stuck_s=0.05)
    counter = BackgroundCounter(empty_dsn, model, min_interval_s=0.1, duty=0.5, read_only=True)
    starts: list[float] = []
    run_scan = counter._scan

    def logged(conn: psycopg.Connection, statement: Statement) -> Any:
        starts.append(time.monotonic())
        return run_scan(conn, statement)

    counter._scan = logged  # type: ignore[method-assign]
    polls: list[float] = []
    try:
        for _ in range(12):
            polls.append(time.monotonic())
            counter.want(frozenset(), model.counts)
            time.sleep(0.5)
        during = [t for t in starts if t > polls[1]]  # from the second poll on: the interval is known
        assert len(during) >= 8, starts
        for t in during:
            since = t - max(p for p in polls if p <= t)
            assert since <= 0.125 + 0.05, f"a statement started {since:.3f} s after a poll"
        stopped = len(starts)
        time.sleep(2.0)  # no poll: held at most 1.5 intervals, then paced as before
        assert len(starts) > stopped
    finally:
        counter.close()


def test_a_job_stuck_since_the_pass_shows_at_the_next_poll(empty_dsn: str) -> None:
    """The pass runs once (a 10-minute pacing floor); 4 jobs it saw running pass their lease after it:
    the next poll rechecks them by row version and moves them from running to stuck, with the pass's
    as_of (never fresher than it is). One of them finished meanwhile (its row written): not stuck."""
    seed_install(empty_dsn)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        soon = [
            r[0]
            for r in conn.execute(
                "INSERT INTO jobs (queue, payload, status, locked_until)"
                " SELECT 'pdf', '{}', 'running', now() + interval '10 seconds' FROM generate_series(1, 4)"
                " RETURNING id"
            ).fetchall()
        ]
        model = single_queue(empty_dsn, table="jobs").model
        with Monitor(empty_dsn, model, read_only=True, scan_pages=0, count_interval_s=600) as monitor:
            monitor.collect()
            assert monitor.settle(20)
            first = monitor.collect()
            pdf = next(q for q in first.queues if q.queue == "pdf")
            assert (pdf.running, pdf.stuck) == (4, 0)
            as_of = pdf.figures["stuck"].as_of
            conn.execute("UPDATE jobs SET status = 'done' WHERE id = %s", (soon[0],))  # finished meanwhile
            # (a 10 s lease: the first pass must see them running, also on a loaded machine)
            deadline = time.monotonic() + 40
            while (pdf := next(q for q in monitor.collect().queues if q.queue == "pdf")).stuck != 3:
                assert time.monotonic() < deadline, (pdf.running, pdf.stuck)
                time.sleep(0.3)
            snap = monitor.collect()
            pdf = next(q for q in snap.queues if q.queue == "pdf")
            assert (pdf.running, pdf.stuck) == (1, 3)  # the finished one still counts as of the pass
            assert pdf.figures["stuck"].accuracy == STALE and pdf.figures["stuck"].as_of == as_of
            assert {lease.id for lease in snap.stuck.rows} >= set(soon[1:])
            assert soon[0] not in {lease.id for lease in snap.stuck.rows}
            with monitor._counter._cond:  # one pass only: the poll's recheck moved them, not a pass
                assert monitor._counter._parts[model.passes[0].statement.name].started_at < deadline - 40
