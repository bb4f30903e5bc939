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

import hashlib
import time
from collections.abc import Callable

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
# What to tell a user whose table is missing or lacks columns (errors.describe(hint=...)).
SETUP_HINT = "create it with: pgq-top init --dsn DSN"

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
    last_error   text,
    heartbeat_at timestamptz
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
    discarded bigint      NOT NULL DEFAULT 0,
    pruned    bigint      NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, queue, shard)
)
"""
# The operator's removals (discarded dead letters, pruned done rows), counted so that the monitor
# never takes them for completions or for foreign writers; added in place to an older counters table
# (constant defaults: catalog-only).
_STATS_COLUMNS = {
    "discarded": "ALTER TABLE {stats} ADD COLUMN IF NOT EXISTS discarded bigint NOT NULL DEFAULT 0",
    "pruned": "ALTER TABLE {stats} ADD COLUMN IF NOT EXISTS pruned bigint NOT NULL DEFAULT 0",
}

# Upgrading a table made from the seed's schema (id, queue, payload, status, run_at, attempts,
# locked_until): the columns a real queue needs, added in place. Constant defaults make each ADD COLUMN
# a catalog-only change (no table rewrite).
_UPGRADE_COLUMNS = {
    "priority": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS priority smallint NOT NULL DEFAULT 0",
    "max_attempts": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS max_attempts integer NOT NULL DEFAULT 5",
    "locked_by": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS locked_by text",
    "created_at": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS created_at timestamptz NOT NULL DEFAULT now()",
    "finished_at": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS finished_at timestamptz",
    "last_error": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS last_error text",
    # When the holder last renewed the lease (worker heartbeats; NULL until the first); no default.
    "heartbeat_at": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS heartbeat_at timestamptz",
}
_COLUMNS = """
SELECT coalesce(array_agg(attname::text), '{}') FROM pg_attribute
WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped
"""

_STATUS_CHECK = (
    "ALTER TABLE {jobs} ADD CONSTRAINT {status_check} "
    "CHECK (status IN ('pending', 'running', 'done', 'failed')) NOT VALID"
)
_HAS_STATUS_CHECK = "SELECT 1 FROM pg_constraint WHERE conrelid = %s::regclass AND conname = %s"

# {how} is empty (inside the install transaction, on an empty table) or CONCURRENTLY (a table with rows).
_INDEXES = {
    "claim_idx": "CREATE INDEX {how} IF NOT EXISTS {name} ON {jobs} (queue, priority DESC, run_at, id) "
    "WHERE status = 'pending'",
    "lease_idx": "CREATE INDEX {how} IF NOT EXISTS {name} ON {jobs} (queue, locked_until) "
    "WHERE status = 'running'",
    "dead_idx": "CREATE INDEX {how} IF NOT EXISTS {name} ON {jobs} "
    "(queue, finished_at DESC NULLS LAST, id DESC) WHERE status = 'failed'",
    "done_idx": "CREATE INDEX {how} IF NOT EXISTS {name} ON {jobs} (finished_at) WHERE status = 'done'",
}

# Our indexes as they stand: valid, or left invalid by a failed (or still running) concurrent build.
_INDEX_STATE = """
SELECT c.relname::text AS name, i.indisvalid AS valid,
       (SELECT p.pid FROM pg_stat_progress_create_index p WHERE p.index_relid = i.indexrelid) AS building_pid
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = %s::regclass AND c.relname = ANY(%s)
"""
_HAS_ROWS = "SELECT EXISTS (SELECT 1 FROM {jobs})"
_ESTIMATED_ROWS = "SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = %s::regclass"
_RELOPTIONS = "SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = %s::regclass"
# One concurrent build at a time per database; a second init skips rather than waits (a session
# waiting on a lock holds a snapshot, which a concurrent build would in turn wait for).
_TRY_BUILD_LOCK = "SELECT pg_try_advisory_lock(hashtext('pgq-top install concurrently'))"
_BUILD_UNLOCK = "SELECT pg_advisory_unlock(hashtext('pgq-top install concurrently'))"

Say = Callable[[str], None]


def channel(table: str, schema: str) -> str:
    """The NOTIFY channel of a jobs table: enqueue, retry and requeue wake its listeners.

    Channel names are identifiers (at most 63 bytes): a long one is replaced by a digest.

    >>> channel("jobs", "public")
    'pgq:public.jobs'
    >>> len(channel("j" * 80, "public").encode())
    44
    """
    name = f"pgq:{schema}.{table}"
    if len(name.encode()) <= 63:
        return name
    return "pgq:" + hashlib.sha1(name.encode()).hexdigest()


# Indexes an older version made that one of the above now covers (dead_idx starts with the same column):
# dropped once every index above is valid.
_SUPERSEDED = ("failed_idx",)


def names(table: str, schema: str) -> dict[str, sql.Composable]:
    """Every object name the queue uses, quoted. Index names to create are unqualified (they live with
    the table); an index to drop is schema-qualified (DROP INDEX finds it by name)."""
    return {
        "jobs": sql.Identifier(schema, table),
        "stats": sql.Identifier(schema, f"{table}_stats"),
        "claim_idx": sql.Identifier(f"{table}_claim_idx"),
        "lease_idx": sql.Identifier(f"{table}_lease_idx"),
        "dead_idx": sql.Identifier(f"{table}_dead_idx"),
        "done_idx": sql.Identifier(f"{table}_done_idx"),
        "status_check": sql.Identifier(f"{table}_status_check"),
        "attempts_check": sql.Identifier(f"{table}_max_attempts_check"),
    }


def install(
    conn: psycopg.Connection, table: str = "jobs", schema: str = "public", say: Say | None = None
) -> list[str]:
    """Create or update the queue's objects. Safe to run again: only what is missing or differs is
    changed, so a re-run takes no strong lock on a busy table. Returns what it did, also passed to `say`.

    Tables, columns, constraints and settings change in one transaction under an advisory lock, so two
    workers starting at once do not race. A table made from the seed's schema is upgraded in place
    (missing columns added, constraint added NOT VALID). Missing indexes are built in that transaction
    while the table is empty; on a table with rows, with CREATE INDEX CONCURRENTLY afterwards, so
    writers keep going. An index left invalid by a failed concurrent build is dropped and rebuilt.
    """
    done: list[str] = []

    def report(message: str) -> None:
        done.append(message)
        if say is not None:
            say(message)

    n = names(table, schema)
    qualified = sql.Identifier(schema, table).as_string(conn)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('pgq-top install'))")
        conn.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)))
        if conn.execute("SELECT to_regclass(%s)", (qualified,)).fetchone()[0] is None:  # type: ignore[index]
            conn.execute(sql.SQL(_TABLE).format(**n))
            report(f"created table {qualified}")
        columns = set(conn.execute(_COLUMNS, (qualified,)).fetchone()[0])  # type: ignore[index]
        for column, ddl in _UPGRADE_COLUMNS.items():
            if column not in columns:
                conn.execute(sql.SQL(ddl).format(**n))
                report(f"added column {column} to {qualified}")
        if not conn.execute(_HAS_STATUS_CHECK, (qualified, f"{table}_status_check")).fetchone():
            conn.execute(sql.SQL(_STATUS_CHECK).format(**n))
            report(f"added constraint {table}_status_check (NOT VALID: existing rows are not scanned)")
        conn.execute(sql.SQL(_STATS).format(**n))
        stats = n["stats"].as_string(conn)
        have = set(conn.execute(_COLUMNS, (stats,)).fetchone()[0])  # type: ignore[index]
        for column, ddl in _STATS_COLUMNS.items():
            if column not in have:
                conn.execute(sql.SQL(ddl).format(**n))
                report(f"added column {column} to {stats}")
        wanted = {f"{key}={value}" for key, value in AUTOVACUUM_OPTIONS.items()}
        if not wanted <= set(conn.execute(_RELOPTIONS, (qualified,)).fetchone()[0]):  # type: ignore[index]
            options = sql.SQL(", ").join(
                sql.SQL("{} = {}").format(sql.SQL(key), sql.Literal(value))
                for key, value in AUTOVACUUM_OPTIONS.items()
            )
            conn.execute(sql.SQL("ALTER TABLE {} SET ({})").format(n["jobs"], options))
            report(f"set autovacuum and fillfactor options on {qualified}")
        has_rows = conn.execute(sql.SQL(_HAS_ROWS).format(**n)).fetchone()[0]  # type: ignore[index]
        if not has_rows:
            for key, ddl in _INDEXES.items():
                name = f"{table}_{key}"
                state = _index_state(conn, qualified, [name]).get(name)
                if state is not None and not state[0]:  # invalid, on an empty table: just rebuild
                    conn.execute(sql.SQL("DROP INDEX {}").format(sql.Identifier(schema, name)))
                    state = None
                if state is None:
                    conn.execute(sql.SQL(ddl).format(how=sql.SQL(""), name=n[key], jobs=n["jobs"]))
            for suffix in _SUPERSEDED:
                old = sql.Identifier(schema, f"{table}_{suffix}")
                conn.execute(sql.SQL("DROP INDEX IF EXISTS {}").format(old))
    if has_rows:
        _build_concurrently(conn, table, schema, qualified, report)
    return done


def _index_state(conn: psycopg.Connection, qualified: str, wanted: list[str]) -> dict[str, tuple[bool, int]]:
    rows = conn.execute(_INDEX_STATE, (qualified, wanted)).fetchall()
    return {name: (valid, pid) for name, valid, pid in rows}


def _build_concurrently(
    conn: psycopg.Connection, table: str, schema: str, qualified: str, report: Say
) -> None:
    """Build missing indexes (and rebuild invalid ones) without blocking writers.

    CREATE INDEX CONCURRENTLY can't run in a transaction: each statement here is its own. If one
    fails (a cancel, a deadlock, a lock timeout), it leaves an invalid index that the next run fixes.
    """
    n = names(table, schema)
    wanted = [f"{table}_{key}" for key in _INDEXES]
    superseded = [f"{table}_{suffix}" for suffix in _SUPERSEDED]
    state = _index_state(conn, qualified, wanted + superseded)
    todo = [key for key in _INDEXES if state.get(f"{table}_{key}", (False, None))[0] is not True]
    if not todo and not any(name in state for name in superseded):
        return
    if not conn.execute(_TRY_BUILD_LOCK).fetchone()[0]:  # type: ignore[index]
        report("another pgq-top init is building indexes on this database: skipped (run init again later)")
        return
    estimate = conn.execute(_ESTIMATED_ROWS, (qualified,)).fetchone()[0]  # type: ignore[index]
    rows = f"~{estimate:,} rows" if estimate > 0 else "rows (not analyzed yet)"
    try:
        state = _index_state(conn, qualified, wanted)  # again, now that we hold the build lock
        for key in todo:
            name = f"{table}_{key}"
            valid, building_pid = state.get(name, (None, None))
            if valid is True:
                continue
            if valid is False:
                if building_pid is not None:
                    report(f"index {name} is being built by backend {building_pid}: left alone")
                    continue
                report(f"index {name} is invalid (a failed concurrent build): dropping it CONCURRENTLY")
                conn.execute(
                    sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(schema, name))
                )
            report(f"building index {name} CONCURRENTLY (table has {rows}; writes continue)")
            started = time.monotonic()
            conn.execute(
                sql.SQL(_INDEXES[key]).format(how=sql.SQL("CONCURRENTLY"), name=n[key], jobs=n["jobs"])
            )
            report(f"built index {name} in {time.monotonic() - started:.1f} s")
        built = _index_state(conn, qualified, wanted)
        if len(built) == len(wanted) and all(valid for valid, _ in built.values()):
            for name in _index_state(conn, qualified, superseded):
                report(f"dropping index {name} CONCURRENTLY (superseded by {table}_dead_idx)")
                old = sql.Identifier(schema, name)
                conn.execute(sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(old))
    finally:
        conn.execute(_BUILD_UNLOCK)
