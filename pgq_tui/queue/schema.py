"""The jobs table, its indexes, its counters table and its autovacuum settings: idempotent DDL.

Why these indexes (each keeps a hot path proportional to the active jobs, not to the table):
- `<table>_claim_idx (queue, priority DESC, run_at, id) WHERE status = 'pending'`: the claim walks it
  in exactly its ORDER BY, so a claim reads a handful of index entries however many done rows exist.
- `<table>_lease_idx (queue, locked_until) WHERE status = 'running'`: the reaper and the monitor's
  running/expired counts read only running rows.
- `<table>_dead_idx (queue, finished_at DESC NULLS LAST, id DESC) WHERE status = 'failed'`: dead-letter
  counts and retry/discard, and the monitor's "most recent dead jobs", which walks it in finished_at
  order (a few entries per queue however many dead jobs pile up). It supersedes `<table>_failed_idx (queue)`,
  which install() drops from tables made by an older version.
- `<table>_done_idx (finished_at) WHERE status = 'done'`: `prune()` deletes old history in batches.

Autovacuum: every claim and completion leaves a dead tuple, so the default trigger (20% of the table)
lets a hot queue bloat quickly. We trigger on a fixed number of dead tuples instead (scale factor 0),
vacuum without cost-based sleeps, and analyze often so the planner keeps using the partial indexes.
The server-wide `autovacuum_naptime` (default 1 min) still bounds how often any table is visited: a
busy queue host should lower it (the embedded demo uses 5 s).
"""

from __future__ import annotations

import psycopg
from psycopg import sql

AUTOVACUUM_OPTIONS: dict[str, str] = {
    "autovacuum_vacuum_scale_factor": "0.0",
    "autovacuum_vacuum_threshold": "5000",
    "autovacuum_vacuum_insert_scale_factor": "0.0",
    "autovacuum_vacuum_insert_threshold": "20000",
    "autovacuum_analyze_scale_factor": "0.02",
    "autovacuum_vacuum_cost_delay": "0",
    "fillfactor": "90",  # room for HOT updates (claim, extend, fail) on the same page
}

STATUSES = ("pending", "running", "done", "failed")

_TABLE = """
CREATE TABLE IF NOT EXISTS {jobs} (
    id           bigserial PRIMARY KEY,
    queue        text        NOT NULL DEFAULT 'default',
    payload      jsonb       NOT NULL DEFAULT '{{}}'::jsonb,
    status       text        NOT NULL DEFAULT 'pending'
                 CONSTRAINT {status_check} CHECK (status IN ('pending', 'running', 'done', 'failed')),
    priority     smallint    NOT NULL DEFAULT 0,
    run_at       timestamptz NOT NULL DEFAULT now(),
    attempts     integer     NOT NULL DEFAULT 0,
    max_attempts integer     NOT NULL DEFAULT 5 CONSTRAINT {attempts_check} CHECK (max_attempts > 0),
    locked_until timestamptz,
    locked_by    text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz,
    last_error   text
)
"""

# Per-second counters, written in the same statement as the enqueue/complete/fail they count, so
# throughput is exact whether completed jobs are deleted or kept. `shard` spreads concurrent writers
# over a few rows so they do not queue on one row lock.
_STATS = """
CREATE TABLE IF NOT EXISTS {stats} (
    queue     text        NOT NULL,
    bucket    timestamptz NOT NULL,
    shard     smallint    NOT NULL,
    enqueued  bigint      NOT NULL DEFAULT 0,
    completed bigint      NOT NULL DEFAULT 0,
    failed    bigint      NOT NULL DEFAULT 0,
    dead      bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, queue, shard)
)
"""

# Upgrading a table made from the seed's schema (id, queue, payload, status, run_at, attempts,
# locked_until): the columns a real queue needs, added in place. Constant defaults make each ADD COLUMN
# a catalog-only change (no table rewrite).
_UPGRADE_COLUMNS = (
    "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS priority smallint NOT NULL DEFAULT 0",
    "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS max_attempts integer NOT NULL DEFAULT 5",
    "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS locked_by text",
    "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS created_at timestamptz NOT NULL DEFAULT now()",
    "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS finished_at timestamptz",
    "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS last_error text",
)

# The status constraint on an upgraded table: NOT VALID, so existing rows are not scanned under a lock;
# new and updated rows are checked.
_STATUS_CHECK = (
    "ALTER TABLE {jobs} ADD CONSTRAINT {status_check} "
    "CHECK (status IN ('pending', 'running', 'done', 'failed')) NOT VALID"
)
_HAS_STATUS_CHECK = "SELECT 1 FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s"

_INDEXES = (
    "CREATE INDEX IF NOT EXISTS {claim_idx} ON {jobs} (queue, priority DESC, run_at, id) "
    "WHERE status = 'pending'",
    "CREATE INDEX IF NOT EXISTS {lease_idx} ON {jobs} (queue, locked_until) WHERE status = 'running'",
    "CREATE INDEX IF NOT EXISTS {dead_idx} ON {jobs} (queue, finished_at DESC NULLS LAST, id DESC) "
    "WHERE status = 'failed'",
    "CREATE INDEX IF NOT EXISTS {done_idx} ON {jobs} (finished_at) WHERE status = 'done'",
)

# Indexes an older version made that one of the above now covers (dead_idx starts with the same column).
_SUPERSEDED = ("DROP INDEX IF EXISTS {old_failed_idx}",)


def names(table: str, schema: str) -> dict[str, sql.Composable]:
    """Every object name the queue uses, quoted. Index names to create are unqualified (they live with
    the table); an index to drop is schema-qualified (DROP INDEX finds it by name)."""
    return {
        "jobs": sql.Identifier(schema, table),
        "stats": sql.Identifier(schema, f"{table}_stats"),
        "claim_idx": sql.Identifier(f"{table}_claim_idx"),
        "lease_idx": sql.Identifier(f"{table}_lease_idx"),
        "dead_idx": sql.Identifier(f"{table}_dead_idx"),
        "old_failed_idx": sql.Identifier(schema, f"{table}_failed_idx"),
        "done_idx": sql.Identifier(f"{table}_done_idx"),
        "status_check": sql.Identifier(f"{table}_status_check"),
        "attempts_check": sql.Identifier(f"{table}_max_attempts_check"),
    }


def install(conn: psycopg.Connection, table: str = "jobs", schema: str = "public") -> None:
    """Create or update the queue's objects. Safe to run again: every statement is idempotent.

    Runs in one transaction under an advisory lock, so two workers starting at once do not race.
    A table made from the seed's schema is upgraded in place (missing columns added, constraint added
    NOT VALID). Note for a large, busy existing table: the partial indexes are built with a plain
    CREATE INDEX, which blocks writes while it runs; build them first with CREATE INDEX CONCURRENTLY
    (same names and definitions, see the README) and this will skip them.
    """
    n = names(table, schema)
    options = sql.SQL(", ").join(
        sql.SQL("{} = {}").format(sql.SQL(key), sql.Literal(value))
        for key, value in AUTOVACUUM_OPTIONS.items()
    )
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('pgq-top install'))")
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        conn.execute(sql.SQL(_TABLE).format(**n))
        for ddl in _UPGRADE_COLUMNS:
            conn.execute(sql.SQL(ddl).format(**n))
        qualified = sql.Identifier(schema, table).as_string(conn)
        if not conn.execute(_HAS_STATUS_CHECK, (qualified, f"{table}_status_check")).fetchone():
            conn.execute(sql.SQL(_STATUS_CHECK).format(**n))
        conn.execute(sql.SQL(_STATS).format(**n))
        for ddl in (*_INDEXES, *_SUPERSEDED):
            conn.execute(sql.SQL(ddl).format(**n))
        conn.execute(sql.SQL("ALTER TABLE {} SET ({})").format(n["jobs"], options))
