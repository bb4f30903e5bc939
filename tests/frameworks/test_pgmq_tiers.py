"""pgmq across all its queue tables (issue #29): its statements read every q_<name> at once, so the
tier of its scans is picked from their total size and table health shows the worst table, never
the alphabetically first. pgmq's schema is its own (the PyPI client's installer), the queues made
with pgmq.create() and filled with pgmq.send_batch(), as an application would."""

from __future__ import annotations

import psycopg

from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.monitor.tiers import BACKGROUND, POLL, SCAN_PAGES

from . import pgmq_client

BIG = 60_000  # messages in q_z: past SCAN_PAGES (about 1,200 pages), small enough to fill in a second
DEAD = 2_000  # of them read past the dead rule (read_ct >= 5): dead messages, and dead tuples


def fill(dsn: str, queue: str, n: int) -> None:
    with psycopg.connect(dsn, autocommit=True) as conn:  # closing flushes the statistics
        conn.execute(
            "SELECT pgmq.send_batch(%s, array_agg(jsonb_build_object('n', g, 'pad', repeat('x', 60))))"
            " FROM generate_series(1, %s) g",
            (queue, n),
        )


def test_pgmq_tier_and_table_health_span_every_queue_table(framework_dsn: str) -> None:
    dsn = framework_dsn
    pgmq_client.install(dsn)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("SELECT pgmq.create('a')")  # empty, and first by name
        conn.execute("SELECT pgmq.create('z')")
        # autovacuum, woken by the 60k inserts, would remove the dead tuples this test counts (CI saw 0)
        conn.execute("ALTER TABLE pgmq.q_z SET (autovacuum_enabled = false)")
    fill(dsn, "z", 50)

    model = single_queue(dsn, kind="pgmq").model
    assert model.main_relation == ("pgmq", "q_a")
    with open_monitor(dsn, model) as monitor:  # both small: the scans run in the poll, exact
        snap = monitor.collect()
        assert monitor.tier.tier == POLL and monitor.tier.scanned_here, monitor.tier
    assert snap.table.table == "pgmq.q_z"  # the one that holds the messages (the bigger; no dead yet)

    fill(dsn, "z", BIG)
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("UPDATE pgmq.q_z SET read_ct = 10 WHERE msg_id <= %s", (DEAD,))
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute("ANALYZE pgmq.q_z")

    with open_monitor(dsn, model) as monitor:
        snap = monitor.collect()
        tier = monitor.tier
    # q_a alone would say 0 pages, and the dead scans (and the stock counts, which walk past every
    # dead visible message) would run uncapped in every poll over q_z's 60k messages
    assert tier.tier == BACKGROUND and tier.pages is not None and tier.pages > SCAN_PAGES, tier
    assert tier.scanned_here == () and all(s.indexed for s in (*tier.counts, *tier.lists)), tier
    deferred = {s.name for s in tier.deferred}
    assert {"pgmq.counts", "pgmq.count_dead_scan"} <= deferred, deferred
    # table health on the worst queue table: q_z, with its dead tuples, not the empty q_a
    assert snap.table.table == "pgmq.q_z" and snap.table.dead_tuples >= DEAD, snap.table
    assert snap.table.live_tuples >= BIG
