"""`pgq-top exporter` over real HTTP on a real server while jobs flow: every metric against the
Snapshot it was built from, counters against the queue's own counters table, one collect per
minimum interval however many scrapers, and serving through a server restart (pgq_up 0, no crash)."""

from __future__ import annotations

import doctest
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import psycopg
import pytest
from dialect_cases import seed
from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse_openmetrics
from prometheus_client.parser import text_string_to_metric_families

from pgq_tui.demo.embedded import FAST_UNSAFE_SETTINGS, EmbeddedPostgres
from pgq_tui.exporter import server as exporter_server
from pgq_tui.exporter.cache import SnapshotCache
from pgq_tui.exporter.server import serve
from pgq_tui.fleet.poll import TargetWatch
from pgq_tui.monitor.collect import PANELS
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue
from pgq_tui.targets import Target

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]

SNAPSHOT_FAMILIES = {
    "pgq_server_info", "pgq_server_in_recovery", "pgq_collect_duration_seconds",
    "pgq_snapshot_timestamp_seconds", "pgq_panel_up", "pgq_jobs", "pgq_jobs_exact",
    "pgq_jobs_age_seconds", "pgq_queue_rate_per_second",
    "pgq_oldest_ready_job_age_seconds", "pgq_stuck_jobs", "pgq_jobs_enqueued", "pgq_jobs_completed",
    "pgq_jobs_failed", "pgq_jobs_dead", "pgq_queue_jobs_completed", "pgq_table_live_tuples",
    "pgq_table_dead_tuples", "pgq_table_autovacuum_threshold", "pgq_table_autovacuum_enabled",
    "pgq_table_vacuum_running", "pgq_table_size_bytes", "pgq_table_index_size_bytes",
    "pgq_table_last_vacuum_age_seconds", "pgq_table_autovacuums", "pgq_table_vacuums",
    "pgq_table_tuples_inserted", "pgq_table_tuples_updated", "pgq_table_tuples_deleted",
    "pgq_table_tuples_hot_updated", "pgq_idle_in_transaction_sessions",
    "pgq_idle_in_transaction_oldest_age_seconds", "pgq_xmin_horizon_age_seconds",
    "pgq_xmin_horizon_age_transactions", "pgq_blocked_sessions", "pgq_backends", "pgq_queue_up",
    "pgq_queue_info", "pgq_queue_paused",
}  # fmt: skip
ALWAYS = {"pgq_up", "pgq_last_error_code", "pgq_collects", "pgq_collect_errors"}


def test_doctests() -> None:
    result = doctest.testmod(exporter_server)
    assert result.attempted > 0 and result.failed == 0


@dataclass
class Scrape:
    families: set[str]
    samples: Samples

    def get(self, name: str, **labels: str) -> float:
        return self.samples[(name, tuple(sorted(labels.items())))]


def scrape(url: str, openmetrics: bool = False) -> Scrape:
    headers = {"Accept": "application/openmetrics-text; version=1.0.0"} if openmetrics else {}
    with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=10) as resp:
        assert resp.status == 200
        body = resp.read().decode()
    parsed = list((parse_openmetrics if openmetrics else text_string_to_metric_families)(body))
    samples: Samples = {}
    for family in parsed:
        for s in family.samples:
            key = (s.name, tuple(sorted(s.labels.items())))
            assert key not in samples, f"duplicate sample {key}"
            samples[key] = s.value
    return Scrape({f.name for f in parsed}, samples)


@pytest.fixture
def own_server() -> Iterator[tuple[EmbeddedPostgres, str]]:
    """A server of its own: the test restarts it (the shared one serves other tests)."""
    with EmbeddedPostgres(settings=FAST_UNSAFE_SETTINGS) as server:
        dsn = server.dsn()
        with JobQueue(dsn) as q:
            q.install()
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("VACUUM jobs")  # so the last-vacuum age has a value to check
        yield server, dsn


@pytest.fixture
def flow(own_server: tuple[EmbeddedPostgres, str]) -> Iterator[threading.Event]:
    """A producer (about 200 jobs/s over two queues) and a consumer that completes, fails and leaves
    some leases to expire: jobs flow in every state while the test scrapes."""
    _, dsn = own_server
    stop = threading.Event()

    def produce(q: JobQueue) -> None:
        while not stop.wait(0.05):
            q.enqueue("emails", [{"n": 1}] * 8)
            q.enqueue("reports", [{"n": 2}] * 2, max_attempts=1)

    def consume(q: JobQueue) -> None:
        n = 0
        while not stop.wait(0.02):
            for job in q.claim("emails", limit=5):
                q.complete([job])
            for job in q.claim("reports", limit=2, lease=0.5 if n % 7 == 0 else 30):
                n += 1
                if n % 3 == 0:
                    q.fail(job, "boom")  # max_attempts=1: dead
                elif n % 7 != 0:
                    q.complete([job])  # the n % 7 == 0 ones are left to expire: stuck

    def through_restarts(work: Callable[[JobQueue], None]) -> Callable[[], None]:
        """Run `work` on a fresh connection again whenever the server goes away under it (the
        restart test stops the server), as a real worker would: no thread dies of it."""

        def run() -> None:
            while not stop.is_set():
                try:
                    with JobQueue(dsn) as q:
                        work(q)
                except psycopg.OperationalError:
                    stop.wait(0.2)

        return run

    threads = [threading.Thread(target=through_restarts(fn), daemon=True) for fn in (produce, consume)]
    for t in threads:
        t.start()
    yield stop
    stop.set()
    for t in threads:
        t.join(10)


def expected_from(snap: Snapshot) -> Samples:
    """What the exporter must say about this Snapshot, written out by hand from its fields."""
    out: Samples = {}
    who = {"kind": "pgq", "target": "public.jobs"}  # pgq-top's own table, detected

    def put(name: str, value: float, **labels: str) -> None:
        out[(name, tuple(sorted(labels.items())))] = value

    put("pgq_up", 1)
    put("pgq_last_error_code", 0)
    put("pgq_queue_up", 1, **who)
    put("pgq_queue_info", 1, **who, version="", stuck_rule=snap.stuck_rule)
    put("pgq_server_info", 1, version=snap.server.version, database=snap.server.database)
    put("pgq_server_in_recovery", 0)
    put("pgq_collect_duration_seconds", snap.server.collect_ms / 1000, **who)
    put("pgq_snapshot_timestamp_seconds", snap.server.now.timestamp(), **who)
    for panel in PANELS:
        put("pgq_panel_up", 0 if panel in snap.errors else 1, panel=panel, **who)
    for q in snap.queues:
        for state, value in (("ready", q.ready), ("scheduled", q.scheduled), ("running", q.running),
                             ("stuck", q.stuck), ("dead", q.dead), ("done", q.done)):  # fmt: skip
            put("pgq_jobs", value, queue=q.queue, state=state, **who)
        put("pgq_oldest_ready_job_age_seconds", q.oldest_ready_age_s or 0.0, queue=q.queue, **who)
        put("pgq_queue_paused", 1 if q.paused else 0, queue=q.queue, **who)
        for state, field in (("ready", "ready"), ("stuck", "stuck"), ("dead", "dead")):
            exact = 1 if q.accuracy(field) == "exact" else 0
            put("pgq_jobs_exact", exact, queue=q.queue, state=state, **who)
            f = q.figures.get(field)
            stale_s = (snap.server.now - f.as_of).total_seconds() if f is not None and f.as_of else 0.0
            age = max(0.0, stale_s)
            put("pgq_jobs_age_seconds", age, queue=q.queue, state=state, **who)
    for name, rates in snap.throughput.per_queue.items():
        for event in ("enqueued", "completed", "failed"):
            if getattr(rates, event) is not None:
                put("pgq_queue_rate_per_second", getattr(rates, event), queue=name, event=event, **who)
    put("pgq_stuck_jobs", snap.stuck.total, **who)
    t, table = snap.table, {"table": snap.table.table, **who}
    put("pgq_table_live_tuples", t.live_tuples, **table)
    put("pgq_table_dead_tuples", t.dead_tuples, **table)
    put("pgq_table_autovacuum_threshold", t.vacuum_threshold, **table)
    put("pgq_table_size_bytes", t.table_bytes, **table)
    put("pgq_table_index_size_bytes", t.index_bytes, **table)
    put("pgq_table_autovacuums_total", t.autovacuum_count, **table)
    put("pgq_table_tuples_inserted_total", t.inserted, **table)
    put("pgq_table_tuples_deleted_total", t.deleted, **table)
    for name, when in (("last_vacuum", t.last_vacuum), ("last_autovacuum", t.last_autovacuum)):
        if when is not None:
            put(f"pgq_table_{name}_age_seconds", (snap.server.now - when).total_seconds(), **table)
    s = snap.sessions
    mine = [x for x in s.idle_in_transaction if not x.is_pgq_top]
    put("pgq_idle_in_transaction_sessions", len(mine))
    put("pgq_idle_in_transaction_oldest_age_seconds", max((x.xact_age_s or 0.0 for x in mine), default=0.0))
    holders = [h for h in s.xmin_holders if not h.is_pgq_top]
    put("pgq_xmin_horizon_age_seconds", max((h.age_s or 0.0 for h in holders), default=0.0))
    put("pgq_backends", s.total_backends)
    return out


def completed_in_db(dsn: str, after: Any, upto: Any) -> tuple[int, dict[str, int]]:
    with psycopg.connect(dsn) as conn:
        rows = conn.execute(
            "SELECT queue, sum(completed)::bigint FROM jobs_stats WHERE bucket > %s AND bucket <= %s "
            "GROUP BY queue",
            (after, upto),
        ).fetchall()
    per_queue = {q: int(n) for q, n in rows}
    return sum(per_queue.values()), per_queue


def test_scrape_while_jobs_flow_and_through_a_restart(
    own_server: tuple[EmbeddedPostgres, str], flow: threading.Event
) -> None:
    server, dsn = own_server
    watch = TargetWatch(Target("db", dsn))
    cache = SnapshotCache(watch, min_interval_s=2.0)
    http, thread = serve(cache, "127.0.0.1:0")
    url = f"http://127.0.0.1:{http.server_address[1]}/metrics"
    try:
        # Counters count only collects whose rates came from the counters table ("counters"): the
        # monitor may prefer the jobs table's figures in the first seconds of a flow. Scrape until
        # one such collect has set the mark and a later one has moved it.
        deadline, mark0, first = time.monotonic() + 40, None, None
        while True:
            time.sleep(2.1)  # past the minimum interval: each scrape collects
            got = scrape(url)
            state = cache.get()  # within the minimum interval: the very state that scrape served
            ((_, snap),) = state.snapshots
            counters = next(iter(cache.counters.values()), None)
            if mark0 is None and counters is not None and counters.mark is not None:
                mark0, first = counters.mark, got
            elif (
                mark0 is not None
                and counters is not None
                and snap.throughput.source == "counters"
                and counters.mark > mark0
                and got.get("pgq_jobs", queue="reports", state="dead", kind="pgq", target="public.jobs") > 0
            ):
                break
            assert time.monotonic() < deadline, "no collect with counter rates and dead jobs"
        # every family is there, and each sample is what the Snapshot says
        optional = {"pgq_table_last_autovacuum_age_seconds"} if snap.table.last_autovacuum else set()
        if snap.counts is not None and snap.counts.lag_s is not None:
            optional.add("pgq_background_count_lag_seconds")
        if snap.latency is not None and snap.latency.as_of is not None:  # the latency pass landed
            optional |= {"pgq_queue_latency_lag_seconds", "pgq_queue_latency_jobs"}
            if any(s.wait is not None for q in snap.latency.queues for s in q.spans):
                optional |= {"pgq_queue_wait_seconds", "pgq_queue_wait_max_seconds"}
            if any(s.run is not None for q in snap.latency.queues for s in q.spans):
                optional |= {"pgq_queue_run_seconds", "pgq_queue_run_max_seconds"}
        assert got.families == SNAPSHOT_FAMILIES | ALWAYS | optional
        for key, value in expected_from(snap).items():
            assert got.samples[key] == pytest.approx(value, rel=1e-9, abs=1e-9), key
        assert {q.queue for q in snap.queues} == {"emails", "reports"}
        who = {"kind": "pgq", "target": "public.jobs"}
        assert got.get("pgq_jobs", queue="emails", state="ready", **who) + got.get(
            "pgq_jobs", queue="emails", state="running", **who
        ) == sum(q.ready + q.running for q in snap.queues if q.queue == "emails")
        # counters: exactly the counters table's buckets since the first counting collect's mark
        assert counters is not None
        total, per_queue = completed_in_db(dsn, mark0, counters.mark)
        assert total > 0 and got.get("pgq_jobs_completed_total", **who) == total
        for q, n in per_queue.items():
            assert got.get("pgq_queue_jobs_completed_total", queue=q, **who) == n
        assert first is not None and first.get("pgq_jobs_completed_total", **who) == 0  # no burst
        collects = state.collects

        # several scrapers at once within the interval: one collect between them
        time.sleep(2.1)
        with ThreadPoolExecutor(6) as pool:
            scrapes = list(pool.map(lambda _: scrape(url), range(6)))
        assert {s.get("pgq_collects_total") for s in scrapes} == {collects + 1.0}
        assert scrape(url, openmetrics=True).get("pgq_up") == 1  # the OpenMetrics parser agrees
    finally:
        flow.set()

    try:
        restart = threading.Thread(target=lambda: server.restart(down_for_s=3.0))
        restart.start()
        deadline, down = time.monotonic() + 30, None
        while time.monotonic() < deadline and down is None:
            time.sleep(0.6)
            s = scrape(url)
            if s.get("pgq_up") == 0:
                down = s
        assert down is not None, "never saw pgq_up 0 while the server was down"
        # no stale figures: only the exporter's own families, and the queue shown down
        assert down.get("pgq_last_error_code") == 3 and down.families == ALWAYS | {"pgq_queue_up"}
        assert down.get("pgq_queue_up", kind="pgq", target="public.jobs") == 0
        assert down.get("pgq_collect_errors_total") >= 1
        restart.join(60)
        deadline = time.monotonic() + 30
        while (s := scrape(url)).get("pgq_up") != 1:
            assert time.monotonic() < deadline, "the exporter did not recover after the restart"
            time.sleep(0.6)
        assert s.get("pgq_last_error_code") == 0
        no_reset = got.get("pgq_jobs_completed_total", **who)
        assert s.get("pgq_jobs_completed_total", **who) >= no_reset
        assert thread.is_alive()
    finally:
        http.shutdown()
        watch.close()


def test_a_missing_table_is_up_0_with_its_error_code(dsn: str) -> None:
    with TargetWatch(Target("db", dsn, table="nope")) as watch:
        http, _ = serve(SnapshotCache(watch, min_interval_s=0), "127.0.0.1:0")
        try:
            got = scrape(f"http://127.0.0.1:{http.server_address[1]}/metrics")
        finally:
            http.shutdown()
    assert got.families == ALWAYS
    assert (got.get("pgq_up"), got.get("pgq_last_error_code")) == (0, 4)  # 4: table missing


def test_the_command_serves_and_stops_cleanly(dsn: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "pgq_tui", "exporter", "--dsn", dsn, "--listen", "127.0.0.1:0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        line = proc.stderr.readline()
        url = re.search(r"http://\S+/metrics", line)
        assert url, line
        got = scrape(url.group(0))
        assert got.get("pgq_up") == 1
        assert got.get("pgq_jobs_completed_total", kind="pgq", target="public.jobs") == 0
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_queue_created_later_is_exported_with_or_without_the_advised_index(
    dsn: str, sql: psycopg.Connection
) -> None:
    """Re-detection (here at every collect): a home-grown table created while the exporter runs is
    exported from the next detection on; its stuck count is served without the index pgq-top advises
    (by a scan) and with it (through the index), the same truth both ways; pgq-top's own queue keeps
    its monitor all along."""
    who = {"kind": "seed-job-queue", "target": "public.job_queue"}
    with TargetWatch(Target("db", dsn), redetect_s=0) as watch:
        http, _ = serve(SnapshotCache(watch, min_interval_s=0), "127.0.0.1:0")
        url = f"http://127.0.0.1:{http.server_address[1]}/metrics"
        try:
            assert ("pgq_queue_up", tuple(sorted(who.items()))) not in scrape(url).samples
            (own,) = watch._monitors
            sql.execute(seed.JOB_QUEUE)  # without the index on claimed rows
            seed.job_queue_populate(dsn)  # one job locked an hour ago: stuck by the lock-age rule
            got = scrape(url)
            assert got.get("pgq_queue_up", **who) == 1 and got.get("pgq_up") == 1
            truth = [state for _, _, state in sql.execute(seed.JOB_QUEUE_TRUTH).fetchall()]
            assert got.get("pgq_jobs", **who, queue="default", state="ready") == truth.count("ready")
            # no index on claimed rows: read by a scan (a small table), exported like any figure
            assert got.get("pgq_jobs", **who, queue="default", state="stuck") == truth.count("stuck") == 1
            assert got.get("pgq_jobs", **who, queue="default", state="running") == truth.count("running")
            sql.execute(seed.JOB_QUEUE_ADVISED)
            got = scrape(url)
            assert got.get("pgq_jobs", **who, queue="default", state="stuck") == truth.count("stuck") == 1
            assert got.get("pgq_stuck_jobs", **who) == 1
            assert watch._monitors[0] is own  # pgq-top's queue: the same monitor throughout
        finally:
            http.shutdown()
