"""pg-boss 12.38's wait and run times are read through its own job_i16 (name, completed_on), each
queue's last hour walked newest first, instead of a scan of every job it keeps (10 s at 10M rows).
The rows, and so the percentiles, are the scan's: checked in one snapshot against the scan statement,
with the newest-N cap both binding and not, on pg-boss's own schema (installed by its own client),
holding jobs its own worker completed and filled jobs finished over the last two hours. Before 12.38
(no job_i16) the statement stays the scan."""

from __future__ import annotations

import time
from typing import Any

import psycopg
import pytest
from psycopg.rows import dict_row

from pgq_tui.detection import single_queue
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.dialects.pgboss import common
from pgq_tui.dialects.pgboss.common import boss_latency
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.latency import from_rows, queue_latency
from pgq_tui.monitor.snapshot import APPROXIMATE

from .fills import fill
from .harness import Processes
from .pgboss_client import PgBoss12, PgBoss1212
from .test_generic_plans import generic_plan

QUEUES = ["fast", *(f"q{i}" for i in range(4))]
RUN_BY_WORKER = 5
# the filled completed jobs finish 7 s apart in each queue, over the last 100 minutes: some inside each
# span, some outside both
SPREAD = """
UPDATE pgboss.job
SET completed_on = now() - x.k * interval '7 seconds',
    started_on = now() - (x.k * 7 + x.k % 17) * interval '1 second',
    start_after = now() - (x.k * 7 + x.k % 17 + x.k % 53) * interval '1 second'
FROM (SELECT id AS kid, row_number() OVER (PARTITION BY name ORDER BY id) AS k
      FROM pgboss.job WHERE state = 'completed') x
WHERE x.kid = pgboss.job.id AND state = 'completed' AND name <> 'fast'
"""


# Each queue's newest `cap` completed jobs of the hour, by a window over the table (no index, no
# lateral): per queue and span the jobs, the wait and run p50 and whether the cap left the span whole
TRUTH = """
WITH f AS (
    SELECT name, completed_on, extract(epoch FROM started_on - start_after) AS w,
           extract(epoch FROM completed_on - started_on) AS r,
           row_number() OVER (PARTITION BY name ORDER BY completed_on DESC) AS k
    FROM pgboss.job WHERE state = 'completed' AND completed_on >= now() - interval '1 hour'
), kept AS (SELECT * FROM f WHERE k <= %(cap)s),
seen AS (SELECT name, count(*) AS n, min(completed_on) AS oldest FROM kept GROUP BY name)
SELECT kept.name, s.span, count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY w),
       percentile_cont(0.5) WITHIN GROUP (ORDER BY r),
       bool_and(seen.n < %(cap)s OR seen.oldest <= now() - make_interval(secs => s.secs))
FROM kept JOIN seen USING (name) CROSS JOIN (VALUES ('5m', 300), ('1h', 3600)) s(span, secs)
WHERE kept.completed_on >= now() - make_interval(secs => s.secs)
GROUP BY kept.name, s.span
"""


def figures(conn: psycopg.Connection, statement: Any, newest: int) -> dict[tuple[str, str], dict[str, Any]]:
    """(queue, span) -> the latency statement's row."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(statement.compose(), {**DEFAULTS, "newest": newest})
        return {(r["queue"], r["span"]): r for r in cur.fetchall()}


def same_percentiles(a: dict[str, Any], b: dict[str, Any]) -> bool:
    keys = ("jobs", "wait", "wait_max", "run", "run_max", "whole", "as_of")
    return all(a[k] == b[k] for k in keys)


def relations_and_indexes(node: dict[str, Any]) -> tuple[set[str], set[str]]:
    """The relations the plan reads by sequential scan, and the indexes it walks."""
    seq: set[str] = set()
    walked: set[str] = set()

    def walk(n: dict[str, Any]) -> None:
        if n.get("Node Type") == "Seq Scan":
            seq.add(str(n["Relation Name"]))
        if "Index Name" in n:
            walked.add(str(n["Index Name"]))
        for child in n.get("Plans", ()):
            walk(child)

    walk(node)
    return seq, walked


@pytest.fixture
def boss(framework_dsn: str, processes: Processes, monkeypatch: pytest.MonkeyPatch) -> str:
    PgBoss12.version()
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(QUEUES))  # pg-boss's install creates each queue
    client = PgBoss12(framework_dsn)
    client.install()
    fill(framework_dsn, "pg-boss", 4_000, QUEUES[1:], layout="pg-boss-12")
    with psycopg.connect(framework_dsn, autocommit=True) as conn:
        conn.execute(SPREAD)
        for i in range(RUN_BY_WORKER):
            client.enqueue("fast", f"k{i}")
        client.start_worker(processes, fixed=True, queues=["fast"])
        deadline = time.monotonic() + 60
        while conn.execute(
            "SELECT count(*) FROM pgboss.job WHERE name = 'fast' AND state = 'completed'"
        ).fetchone() != (RUN_BY_WORKER,):
            assert time.monotonic() < deadline, "pg-boss's worker did not complete the jobs"
            time.sleep(0.2)
        processes.stop_all()
        conn.execute("VACUUM ANALYZE pgboss.job")
    return framework_dsn


def test_the_last_hour_is_read_through_job_i16_and_gives_the_scans_figures(boss: str) -> None:
    model = single_queue(boss, kind="pg-boss").model
    latency, scan = model.latency, boss_latency("pgboss")
    assert latency is not None and latency.indexed and not scan.indexed
    with psycopg.connect(boss) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")  # one snapshot, one now()
        walked, scanned = figures(conn, latency, 100_000), figures(conn, scan, 100_000)
        conn.rollback()
    assert walked.keys() == scanned.keys()
    assert all(same_percentiles(walked[k], scanned[k]) and walked[k]["whole"] for k in walked)
    assert walked[("fast", "5m")]["jobs"] == RUN_BY_WORKER  # the jobs pg-boss's own worker completed
    assert 0 < walked[("q0", "5m")]["jobs"] < walked[("q0", "1h")]["jobs"]  # filled: over two hours
    assert {(r["read_cap"], r["cap_per_queue"]) for r in walked.values()} == {(20_000, True)}  # 100k / 5
    with psycopg.connect(boss, autocommit=True) as conn:
        seq, indexes = relations_and_indexes(generic_plan(conn, latency, {"newest": 100_000}))
    assert not any(r.startswith("job") for r in seq), seq  # no job table scanned
    assert any("i16" in ix for ix in indexes), indexes


def test_a_binding_cap_takes_each_queues_newest_and_says_so(
    boss: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most 20 of each queue (100 over its 5 queues, the floor lowered to 10): each queue's figures
    are over its own newest 20, a span they do not cover is approximate and says so."""
    monkeypatch.setattr(common, "LATENCY_PER_QUEUE", 10)
    latency = boss_latency("pgboss", by_queue=True)
    with psycopg.connect(boss) as conn:
        conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        walked = figures(conn, latency, 100)
        truth = {(q, s): rest for q, s, *rest in conn.execute(TRUTH, {"cap": 20}).fetchall()}
        conn.rollback()
    assert walked.keys() == truth.keys()
    for key, (jobs, wait50, run50, whole) in truth.items():
        got = walked[key]
        assert (got["jobs"], got["wait"][0], got["run"][0], got["whole"]) == pytest.approx(
            (jobs, wait50, run50, whole)
        ), key
    assert not walked[("q0", "1h")]["whole"] and walked[("fast", "1h")]["whole"]
    (q0,) = (q for q in from_rows(walked.values()).queues if q.queue == "q0")
    hour = q0.spans[1]
    assert hour.figure.accuracy == APPROXIMATE
    assert hour.figure.reason == "over this queue's newest 20 finished jobs of the last hour only"


def test_the_latency_pass_gives_the_worker_run_jobs(boss: str) -> None:
    model = single_queue(boss, kind="pg-boss").model
    with Monitor(boss, model, read_only=True) as monitor:
        monitor.collect()
        assert monitor.settle(30)
        spans = queue_latency(monitor.collect(), "fast")
    s = spans["5m"]
    assert s.jobs == RUN_BY_WORKER and s.wait is not None and s.run is not None, s
    assert s.figure.accuracy == "stale" and s.figure.as_of is not None


def test_before_job_i16_the_latency_stays_a_scan(framework_dsn: str, monkeypatch: pytest.MonkeyPatch) -> None:
    PgBoss1212.version()
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(QUEUES))
    PgBoss1212(framework_dsn).install()
    latency = single_queue(framework_dsn, kind="pg-boss").model.latency
    assert latency is not None and not latency.indexed
