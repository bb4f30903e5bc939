"""pg-boss 10's `job` is a partitioned parent (each queue its own partition), as its own client
creates it: table health sums the partitions and names the worst, never the empty parent; the
advisor's `tune` sets the autovacuum settings on each partition."""

from __future__ import annotations

import psycopg

from pgq_tui.actions import Actions
from pgq_tui.detection import single_queue
from pgq_tui.monitor import open_monitor
from pgq_tui.monitor.advice import advise
from tests.test_bloat_advice import measured

from .pgboss_client import PgBoss

ENQUEUED = {"fast": 4, "later": 2}

LEAVES = """
SELECT n.nspname::text, c.relname::text, c.reloptions FROM pg_partition_tree('pgboss.job') t
JOIN pg_class c ON c.oid = t.relid JOIN pg_namespace n ON n.oid = c.relnamespace WHERE t.isleaf
"""


def test_pgboss_table_health_reads_its_partitions(framework_dsn: str) -> None:
    PgBoss.version()  # skips (or fails under PGQ_REQUIRE_FRAMEWORKS=1) without the client
    boss = PgBoss(framework_dsn)
    boss.install()
    for queue, n in ENQUEUED.items():
        for i in range(n):  # each call is its own node process: its statistics land when it exits
            boss.enqueue(queue, f"{queue}-{i}", in_seconds=3600 if queue == "later" else None)
    target = single_queue(framework_dsn, kind="pg-boss")
    assert target.model.main_relation == ("pgboss", "job")
    with psycopg.connect(framework_dsn) as conn:
        leaves = conn.execute(LEAVES).fetchall()
        rows = conn.execute("SELECT count(*) FROM pgboss.job").fetchone()[0]
    assert len(leaves) >= 2 and rows == sum(ENQUEUED.values())
    with open_monitor(framework_dsn, target.model) as monitor:
        snap = monitor.collect()
    t = snap.table
    assert set(t.partitions) == {(s, n) for s, n, _ in leaves}
    assert t.table == "pgboss.job" and t.worst_partition not in (None, "pgboss.job")
    assert t.live_tuples == rows  # the parent alone would say 0
    assert t.table_bytes > 0 and t.index_bytes > 0
    assert "table" not in snap.errors and "bloat" not in snap.errors

    schema, table = target.model.main_relation
    advice = advise(measured(snap, 5000.0), schema, table)
    assert advice.table_sql is not None and advice.table_sql.count("ALTER TABLE") == len(leaves)
    with Actions(framework_dsn, target.model) as actions:
        outcome = actions.execute(actions.plan_tune(advice))
    assert (outcome.changed, outcome.error) == (1, None)
    with psycopg.connect(framework_dsn) as conn:
        for s, n, options in conn.execute(LEAVES).fetchall():
            assert {f"{k}={v}" for k, v in advice.table_options.items()} <= set(options or ()), (s, n)


INDEXES = """
SELECT p.indexrelid::regclass::text AS parent, p.indisvalid AS valid,
       (SELECT count(*) FROM pg_inherits i JOIN pg_index ci ON ci.indexrelid = i.inhrelid
        WHERE i.inhparent = p.indexrelid AND ci.indisvalid) AS attached
FROM pg_index p JOIN pg_class c ON c.oid = p.indexrelid
WHERE p.indrelid = 'pgboss.job'::regclass AND c.relname LIKE 'pgq_top%%'
ORDER BY 1
"""


def test_pgboss_index_advice_builds_partition_by_partition_and_leaves_a_valid_index(
    framework_dsn: str,
) -> None:
    """A plain CREATE INDEX on the partitioned `job` would block every write to every partition for
    the whole build, and CONCURRENTLY is refused on it (issue #29): the advice is ON ONLY the parent,
    each partition's index CONCURRENTLY, attached; run statement by statement it leaves valid indexes."""
    PgBoss.version()
    boss = PgBoss(framework_dsn)
    boss.install()
    for queue in ENQUEUED:
        boss.enqueue(queue, f"{queue}-0")
    advice = single_queue(framework_dsn, kind="pg-boss").model.advice
    assert advice
    with psycopg.connect(framework_dsn, autocommit=True) as conn:
        leaves = conn.execute(LEAVES).fetchall()
        for a in advice:
            assert a.statements[0].startswith("CREATE INDEX IF NOT EXISTS") and " ON ONLY " in a.statements[0]
            rest = a.statements[1:]
            assert len(rest) == 2 * len(leaves) and all(
                s.startswith(("CREATE INDEX CONCURRENTLY", "ALTER INDEX")) for s in rest
            ), a.statements
            assert "briefly" not in a.why and "partitioned" in a.why
            for statement in a.statements:
                conn.execute(statement)  # each on its own, as psql runs them
        indexes = conn.execute(INDEXES).fetchall()
        assert len(indexes) == len(advice) and all(
            valid and attached == len(leaves) for _, valid, attached in indexes
        ), indexes
        # the figures they serve are now read through them
        model = single_queue(framework_dsn, kind="pg-boss").model
        assert model.advice == () or len(model.advice) < len(advice), model.advice
