"""Partitioned queue tables (a user's own, list-partitioned by queue): table health sums the leaf
partitions and names the worst, never the empty parent; vacuum progress and autovacuum pacing read
the partitions; the advisor's `tune` sets autovacuum settings on each partition (a partitioned
parent has no storage and refuses them)."""

from __future__ import annotations

import dataclasses

import psycopg
import pytest
from dialect_support import collect

from pgq_tui.actions import Actions
from pgq_tui.detection import find_queues
from pgq_tui.dialects import registry
from pgq_tui.dialects.contract import Capability, IndexAdvice
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.dialects.pgboss import common as pgboss_common
from pgq_tui.dialects.pgboss import dialect as pgboss_dialect
from pgq_tui.dialects.pgboss import modern
from pgq_tui.monitor import health
from pgq_tui.monitor.advice import advise
from pgq_tui.monitor.snapshot import Snapshot
from tests.test_bloat_advice import measured

# The seed article's shape (2), partitioned by queue by its user, one partition a sub-partitioned one.
PARTITIONED = """
CREATE TABLE jobs (
    id bigserial,
    queue text NOT NULL,
    payload jsonb,
    status text DEFAULT 'pending',
    run_at timestamptz DEFAULT now(),
    attempts int DEFAULT 0,
    locked_until timestamptz,
    PRIMARY KEY (queue, id)
) PARTITION BY LIST (queue);
CREATE INDEX jobs_pending_idx ON jobs (queue, run_at) WHERE status = 'pending';
CREATE TABLE jobs_mail PARTITION OF jobs FOR VALUES IN ('mail') WITH (autovacuum_enabled = off);
CREATE TABLE jobs_other PARTITION OF jobs FOR VALUES IN ('thumbs', 'pdf') PARTITION BY LIST (queue);
CREATE TABLE jobs_thumbs PARTITION OF jobs_other FOR VALUES IN ('thumbs') WITH (autovacuum_enabled = off);
CREATE TABLE jobs_pdf PARTITION OF jobs_other FOR VALUES IN ('pdf') WITH (autovacuum_enabled = off);
"""
ROWS = {"mail": 300, "thumbs": 2000, "pdf": 10}
DELETED = {"mail": 250, "thumbs": 100, "pdf": 0}  # mail: the fewest rows, the most dead: the worst


@pytest.fixture
def partitioned(empty_dsn: str) -> str:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:  # closing flushes the statistics
        conn.execute(PARTITIONED)
        for queue, n in ROWS.items():
            conn.execute(
                "INSERT INTO jobs (queue, payload) SELECT %s, '{}' FROM generate_series(1, %s)", (queue, n)
            )
    with psycopg.connect(empty_dsn, autocommit=True) as conn:  # after the inserts' statistics landed
        conn.execute("ANALYZE jobs")
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        for queue, n in DELETED.items():
            conn.execute(
                "DELETE FROM jobs WHERE id IN (SELECT id FROM jobs WHERE queue = %s ORDER BY id LIMIT %s)",
                (queue, n),
            )
    return empty_dsn


def snapshot(dsn: str) -> Snapshot:
    (target,) = find_queues(dsn)
    assert target.model.main_relation == ("public", "jobs")
    return collect(dsn, target.model.kind)


def test_table_health_sums_the_partitions_and_names_the_worst(partitioned: str) -> None:
    snap = snapshot(partitioned)
    t = snap.table
    assert t.table == "public.jobs"
    assert set(t.partitions) == {("public", "jobs_mail"), ("public", "jobs_thumbs"), ("public", "jobs_pdf")}
    assert t.live_tuples == sum(ROWS.values()) - sum(DELETED.values())
    assert t.dead_tuples == sum(DELETED.values())
    assert t.table_bytes > 0 and t.index_bytes > 0
    # mail: 250 dead over 300 rows (threshold 50 + 0.2 x 300 = 110): past its own trigger, and off
    assert t.worst_partition == "public.jobs_mail" and t.trigger_dead == DELETED["mail"]
    assert t.vacuum_threshold == pytest.approx(50 + 0.2 * ROWS["mail"])
    assert not t.autovacuum_enabled
    words = " ".join(v.message for v in health.verdicts(snap))
    assert "autovacuum is off for public.jobs" in words
    # the pacing row is the worst partition's: its own reloptions
    assert snap.bloat is not None and snap.bloat.settings is not None
    assert "autovacuum_enabled=off" in snap.bloat.settings.reloptions


def test_a_plain_table_is_not_reported_as_partitioned(dsn: str) -> None:
    (target,) = find_queues(dsn, kind="pgq")
    snap = collect(dsn, "pgq")
    assert snap.table.partitions == () and snap.table.worst_partition is None
    assert snap.table.table == ".".join(target.model.main_relation)


def test_tune_sets_the_settings_on_every_partition(partitioned: str) -> None:
    snap = snapshot(partitioned)
    advice = advise(measured(snap, 5000.0), "public", "jobs")
    assert advice.table_sql is not None and advice.table_sql.count("ALTER TABLE") == 3
    assert '"public"."jobs" SET' not in advice.table_sql  # never the parent: it has no storage
    assert any("partitioned" in n for n in advice.notes)
    (target,) = find_queues(partitioned)
    with Actions(partitioned, target.model) as actions:
        plan = actions.plan_tune(advice)
        assert plan.refused is None, plan.refused
        outcome = actions.execute(plan)
    assert (outcome.changed, outcome.error) == (1, None)
    with psycopg.connect(partitioned) as conn:
        rows = conn.execute(
            "SELECT c.relname, c.reloptions FROM pg_partition_tree('jobs') t "
            "JOIN pg_class c ON c.oid = t.relid WHERE t.isleaf"
        ).fetchall()
    assert len(rows) == 3
    for name, options in rows:
        assert {f"{k}={v}" for k, v in advice.table_options.items()} <= set(options), name


def test_partition_verdict_names_the_partition(partitioned: str) -> None:
    snap = snapshot(partitioned)
    on = dataclasses.replace(snap.table, autovacuum_enabled=True)
    words = " ".join(v.message for v in health.verdicts(dataclasses.replace(snap, table=on)))
    assert "in partition public.jobs_mail: 250 >" in words


# pg-boss 10's `job` as its migration creates it (columns abridged to those its statements name):
# list-partitioned by queue name, the DEFAULT partition job_common, and one table per created queue
PGBOSS_JOB = """
CREATE SCHEMA pgboss;
CREATE TYPE pgboss.job_state AS ENUM ('created', 'retry', 'active', 'completed', 'cancelled', 'failed');
CREATE TABLE pgboss.job (
    id uuid NOT NULL DEFAULT gen_random_uuid(),
    name text NOT NULL,
    state pgboss.job_state NOT NULL DEFAULT 'created',
    start_after timestamptz NOT NULL DEFAULT now(),
    started_on timestamptz,
    expire_in interval NOT NULL DEFAULT interval '15 minutes',
    created_on timestamptz NOT NULL DEFAULT now(),
    completed_on timestamptz
) PARTITION BY LIST (name);
ALTER TABLE pgboss.job ADD PRIMARY KEY (name, id);
CREATE TABLE pgboss.job_common (LIKE pgboss.job INCLUDING GENERATED INCLUDING DEFAULTS);
ALTER TABLE pgboss.job_common ADD PRIMARY KEY (name, id);
ALTER TABLE pgboss.job ATTACH PARTITION pgboss.job_common DEFAULT;
CREATE TABLE pgboss.j3f2a (LIKE pgboss.job INCLUDING GENERATED INCLUDING DEFAULTS);
ALTER TABLE pgboss.j3f2a ADD PRIMARY KEY (name, id);
ALTER TABLE pgboss.job ATTACH PARTITION pgboss.j3f2a FOR VALUES IN ('fast');
INSERT INTO pgboss.job (name, state, completed_on)
SELECT q, s::pgboss.job_state, CASE WHEN s IN ('completed', 'failed') THEN now() END
FROM unnest(ARRAY['fast', 'slow']) q, unnest(ARRAY['created', 'active', 'failed', 'completed']) s,
     generate_series(1, 50);
"""

VALID = """
SELECT i.indisvalid,
       (SELECT count(*) FROM pg_partition_tree(i.indexrelid) t JOIN pg_index ci ON ci.indexrelid = t.relid
        WHERE t.level > 0 AND ci.indisvalid) AS below
FROM pg_index i WHERE i.indexrelid = to_regclass(%s)
"""


def run_advice(
    conn: psycopg.Connection, advice: IndexAdvice, table: str, index: str, partitions: int
) -> None:
    """The advice's statements one at a time (as psql runs them): then the parent's index is valid and
    a valid index hangs below it for each partition (leaves and sub-partitioned ones)."""
    first, *rest = advice.statements
    assert first.startswith("CREATE INDEX IF NOT EXISTS") and f" ON ONLY {table} " in first, first
    assert all(" ON ONLY " in s or "CONCURRENTLY" in s or s.startswith("ALTER INDEX") for s in rest)
    assert not any(f" ON {table} " in s for s in advice.statements)  # never a build on the parent
    for statement in advice.statements:
        conn.execute(statement)
    assert conn.execute(VALID, (index,)).fetchone() == (True, partitions), advice.definition


def test_pgboss_index_advice_on_its_partitioned_job_leaves_valid_indexes(empty_dsn: str) -> None:
    """A plain CREATE INDEX on pg-boss's partitioned `job` blocks every write to every partition for
    the whole build, and CONCURRENTLY is refused there (issue #29): ON ONLY, CONCURRENTLY per
    partition, ATTACH."""
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(PGBOSS_JOB)
        catalog = read_catalog(conn, registry.builtin())
        job = catalog.relation("pgboss", "job")
        assert job is not None and {(p.name, p.leaf) for p in job.partitions} == {
            ("j3f2a", True),
            ("job_common", True),
        }
        for definition in (
            pgboss_dialect.FAILED_INDEX,
            pgboss_dialect.ACTIVE_INDEX,
            modern.STATE_INDEX_UNBLOCKED,
        ):
            name = f"pgq_top_{len(definition)}"
            advice = pgboss_common.advice(Capability.DEAD, job, name, definition, "x", ())
            assert "briefly" not in advice.why and "CONCURRENTLY" in advice.why
            run_advice(conn, advice, '"pgboss"."job"', f"pgboss.{name}", 2)
            run_advice(conn, advice, '"pgboss"."job"', f"pgboss.{name}", 2)  # again (a run cut short)


def test_mapping_index_advice_on_a_partitioned_table_leaves_a_valid_index(partitioned: str) -> None:
    """The mapped partitioned table (one partition itself partitioned): CONCURRENTLY on the parent
    would fail; the advice builds each leaf's index CONCURRENTLY and attaches them level by level."""
    (target,) = find_queues(partitioned)
    (advice,) = [a for a in target.model.advice if "running" in a.states]
    with psycopg.connect(partitioned, autocommit=True) as conn:
        # below it: jobs_mail, jobs_other and jobs_other's jobs_thumbs and jobs_pdf
        run_advice(conn, advice, '"public"."jobs"', "public.jobs_running_idx", 4)
    (target,) = find_queues(partitioned)
    assert not [a for a in target.model.advice if "running" in a.states]  # now served by it
