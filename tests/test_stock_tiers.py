"""The tiers of a figure no index serves (monitor/tiers.py), on the seed article's stock `jobs` table:
a scan in the poll while the relation is small (exact), the background counter above the threshold
(unknown until its first scan lands, then stale with its as_of), the relation's size summed over its
partitions, lists through the same tiers, and the table's definition left exactly as it was."""

from __future__ import annotations

from collections import Counter

import psycopg
import pytest
from dialect_cases.seed import SEED_JOBS, SEED_JOBS_TRUTH, definition, seed_jobs_populate

from pgq_tui.detection import single_queue
from pgq_tui.monitor import tiers
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import EXACT, STALE, UNKNOWN, Snapshot

NAMES = {"ready": "ready", "scheduled": "scheduled", "running": "running", "stuck": "stuck"}


def truth(conn: psycopg.Connection) -> Counter[tuple[str, str]]:
    return Counter((q, s) for _, q, s in conn.execute(SEED_JOBS_TRUTH).fetchall() if s != "done")


def counts(snap: Snapshot) -> Counter[tuple[str, str]]:
    """Every queue's counts, each of which must be taken: an unknown count (None) fails here, so it
    can never pass for a 0 the truth also lacks."""
    for q in snap.queues:
        for f in NAMES:
            assert getattr(q, f) is not None, (q.queue, f, q.figures.get(f))
            assert q.figures[f].known, (q.queue, f, q.figures[f])
    return Counter(
        {(q.queue, canon): getattr(q, f) for q in snap.queues for f, canon in NAMES.items() if getattr(q, f)}
    )


@pytest.fixture
def stock(empty_dsn: str):
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(SEED_JOBS)
        seed_jobs_populate(empty_dsn)
        yield conn


def _monitor(dsn: str, **kw) -> Monitor:
    return Monitor(dsn, single_queue(dsn, table="jobs").model, count_interval_s=0.1, **kw)


def test_a_small_stock_table_is_scanned_in_the_poll_and_exact(empty_dsn: str, stock) -> None:
    before = definition(stock, "jobs")
    model = single_queue(empty_dsn, table="jobs").model
    assert any(not s.indexed for s in model.counts) and not model.leases.indexed  # type: ignore[union-attr]
    with _monitor(empty_dsn) as monitor:
        snap = monitor.collect()
    assert monitor.tier.tier == tiers.POLL
    assert counts(snap) == truth(stock)
    for q in snap.queues:
        for name in ("running", "stuck"):
            f = q.figures[name]
            assert (f.accuracy, f.source) == (EXACT, "scan")
            assert f.note is not None and "CREATE INDEX CONCURRENTLY" in f.note  # advice beside it
        assert q.figures["ready"].note is None  # the seed's own index serves it: live, no advice
    stuck = stock.execute("SELECT id FROM jobs WHERE status = 'running' AND locked_until < now()").fetchall()
    assert sorted(r.id for r in snap.stuck.rows) == sorted(r[0] for r in stuck)
    assert snap.stuck.figure is None  # read by this poll
    assert "leases" not in snap.unsupported and "stuck" not in snap.unsupported
    assert definition(stock, "jobs") == before


def test_a_large_stock_table_is_counted_in_the_background_unknown_until_then(empty_dsn: str, stock) -> None:
    before = definition(stock, "jobs")
    with _monitor(empty_dsn, scan_pages=0) as monitor:  # every relation counts as large here
        first = monitor.collect()
        assert monitor.tier.tier == tiers.BACKGROUND
        # A fresh monitor's first poll reads the counter's latest before it asks for any scan, so no
        # scan can have landed in it whoever wins the race after: always unknown, never a 0 to believe.
        assert first.counts is not None and first.counts.as_of is None
        assert first.queues  # the indexed ready counts list the queues
        for q in first.queues:
            f = q.figures["stuck"]
            assert (q.stuck, f.accuracy, f.source) == (None, UNKNOWN, "background scan"), f
            assert q.figures["ready"].accuracy == EXACT and q.ready is not None
        assert first.stuck.figure is not None and first.stuck.figure.unknown
        assert first.to_dict()["queues"][0]["stuck"] is None  # null in JSON, not 0
        assert monitor.settle(10.0)
        snap = monitor.collect()
    assert counts(snap) == truth(stock)
    for q in snap.queues:
        f = q.figures["stuck"]
        assert (f.accuracy, f.source) == (STALE, "background scan") and f.as_of is not None
        assert f.as_of <= snap.server.now
        assert q.figures["ready"].accuracy == EXACT  # the indexed states stay live
    stuck = stock.execute("SELECT id FROM jobs WHERE status = 'running' AND locked_until < now()").fetchall()
    assert sorted(r.id for r in snap.stuck.rows) == sorted(r[0] for r in stuck)
    assert snap.stuck.figure is not None and snap.stuck.figure.accuracy == STALE
    data = snap.to_dict()
    assert data["queues"][0]["figures"]["stuck"]["accuracy"] == STALE
    assert data["queues"][0]["figures"]["stuck"]["as_of"] is not None
    assert data["stuck"]["figure"]["source"] == "background scan"
    assert definition(stock, "jobs") == before


def test_the_tier_reads_the_size_of_every_partition(empty_dsn: str) -> None:
    """A partitioned parent is empty; its partitions hold the rows: their pages decide the tier."""
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE jobs (id bigserial, queue text NOT NULL, payload jsonb,"
            " status text DEFAULT 'pending', run_at timestamptz DEFAULT now(), attempts int DEFAULT 0,"
            " locked_until timestamptz,"
            " PRIMARY KEY (id, queue)) PARTITION BY LIST (queue)"
        )
        conn.execute("CREATE TABLE jobs_a PARTITION OF jobs FOR VALUES IN ('a')")
        conn.execute("CREATE TABLE jobs_b PARTITION OF jobs FOR VALUES IN ('b')")
        conn.execute("CREATE INDEX jobs_pending_idx ON jobs (queue, run_at) WHERE status = 'pending'")
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, locked_until) SELECT CASE WHEN g % 2 = 0 THEN 'a'"
            " ELSE 'b' END, jsonb_build_object('pad', repeat('x', 200)), CASE WHEN g % 1000 < 2 THEN"
            " 'running' ELSE 'pending' END, CASE WHEN g % 1000 < 2 THEN now() - interval '1 minute' END"
            " FROM generate_series(1, 40000) g"
        )
        pages = conn.execute(
            "SELECT (pg_relation_size('jobs_a') + pg_relation_size('jobs_b')) / 8192"
        ).fetchone()[0]  # type: ignore[index]
    assert pages > tiers.SCAN_PAGES  # the parent alone has 0 pages
    with _monitor(empty_dsn) as monitor:
        monitor.collect()
        assert monitor.tier.tier == tiers.BACKGROUND
        assert monitor.tier.pages is not None and monitor.tier.pages >= pages  # not analyzed yet: ≥
        assert monitor.settle(10.0)
        snap = monitor.collect()
    assert {q.queue: q.stuck for q in snap.queues} == {"a": 40, "b": 40}
    assert all(q.figures["stuck"].accuracy == STALE for q in snap.queues)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("ANALYZE jobs")
    with _monitor(empty_dsn, scan_pages=pages + 10) as monitor:  # once analyzed: the size on disk
        snap = monitor.collect()
        assert monitor.tier.tier == tiers.POLL, monitor.tier.pages
    assert {q.queue: q.stuck for q in snap.queues} == {"a": 40, "b": 40}
    assert all(q.figures["stuck"].accuracy == EXACT for q in snap.queues)


def test_the_advice_is_shown_beside_the_figure_in_v_and_in_advise(
    empty_dsn: str, stock, capsys: pytest.CaptureFixture[str]
) -> None:
    from pgq_tui.cli import main
    from pgq_tui.monitor.provenance import count_how

    with _monitor(empty_dsn) as monitor:
        snap = monitor.collect()
    q = snap.queues[0]
    how = count_how(q.figures["stuck"], monitor.count_cap, snap.server.now)
    assert how.startswith("exact: counted by this poll with a scan") and "jobs_running_idx" in how
    assert count_how(q.figures["ready"], monitor.count_cap, snap.server.now).startswith("exact: counted")
    assert main(["advise", "--dsn", empty_dsn, "--table", "jobs", "--seconds", "1"]) == 0
    out = capsys.readouterr().out
    assert "index: no index serves it (a scan); CREATE INDEX CONCURRENTLY jobs_running_idx" in out
