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
import re
import time
from collections.abc import Callable

import psycopg
from psycopg import sql

from pgq_tui.errors import EXIT_REFUSED, PgqError

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
    heartbeat_at timestamptz,
    started_at   timestamptz,
    attempt_log  jsonb       NOT NULL DEFAULT '[]'::jsonb
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
# Paused queues: a queue with a row here is not claimed by pgq-top's workers (jobtable/statements.py
# CLAIM). Durable: a pause outlives every worker, until `pgq-top resume` (or JobQueue.resume) deletes
# the row. Created by init beside the jobs table, like the counters table.
_PAUSES = """
CREATE TABLE IF NOT EXISTS {pauses} (
    queue     text        PRIMARY KEY,
    paused_at timestamptz NOT NULL DEFAULT now(),
    paused_by text
)
"""
PAUSES_COLUMNS = ("queue", "paused_at")

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
    # When the current (or last) attempt was claimed: the wait and run percentiles; no default.
    "started_at": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS started_at timestamptz",
    # The last few attempts, newest first (statements.log_attempt appends, capped): the job detail's
    # history. A constant default: catalog-only.
    "attempt_log": "ALTER TABLE {jobs} ADD COLUMN IF NOT EXISTS attempt_log jsonb NOT NULL"
    " DEFAULT '[]'::jsonb",
}
_COLUMNS = """
SELECT coalesce(array_agg(attname::text), '{}') FROM pg_attribute
WHERE attrelid = %s::regclass AND attnum > 0 AND NOT attisdropped
"""

# The seed's columns: a table without one of them cannot become pgq-top's queue, even with adopt.
SEED_COLUMNS = ("id", "queue", "payload", "status", "run_at", "attempts", "locked_until")
# pgq-top's marker: its `<table>_status_check` allowing exactly its four statuses. A table without it
# is someone else's (the application's own queue, or a seed-shaped table not adopted yet).
_OWN_CHECK = """
SELECT pg_get_constraintdef(oid) FROM pg_constraint
WHERE conrelid = %s::regclass AND conname = %s AND contype = 'c'
"""
_STATUS_DEFAULT = """
SELECT pg_get_expr(d.adbin, d.adrelid) FROM pg_attribute a
JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = %s::regclass AND a.attname = 'status'
"""
# A bounded look at the rows' statuses, for the refusal's message (never a scan of a big table).
_SAMPLE_STATUSES = "SELECT DISTINCT status::text FROM (SELECT status FROM {jobs} LIMIT 10000) s ORDER BY 1"
# Adopting checks every row once: a status pgq-top does not know means the table is still in use.
_FOREIGN_STATUSES = (
    "SELECT DISTINCT status::text FROM (SELECT status FROM {jobs} WHERE status::text <> ALL(%s) LIMIT 100) s"
    " ORDER BY 1"
)

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
# (what it does, said when it runs (None: said by nobody), the statement, run outside a transaction)
Step = tuple[str | None, sql.Composed, bool]


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
        "pauses": sql.Identifier(schema, f"{table}_pauses"),
        "claim_idx": sql.Identifier(f"{table}_claim_idx"),
        "lease_idx": sql.Identifier(f"{table}_lease_idx"),
        "dead_idx": sql.Identifier(f"{table}_dead_idx"),
        "done_idx": sql.Identifier(f"{table}_done_idx"),
        "status_check": sql.Identifier(f"{table}_status_check"),
        "attempts_check": sql.Identifier(f"{table}_max_attempts_check"),
    }


def foreign(conn: psycopg.Connection, table: str = "jobs", schema: str = "public") -> str | None:
    """None when the table is pgq-top's own or absent; else what makes it someone else's, in one clause.

    The marker is the status constraint pgq-top's table is created with (and an adopted table gets):
    a table without it may be the application's own queue, which init must not touch."""
    qualified = sql.Identifier(schema, table).as_string(conn)
    if conn.execute("SELECT to_regclass(%s)", (qualified,)).fetchone()[0] is None:  # type: ignore[index]
        return None
    check = conn.execute(_OWN_CHECK, (qualified, f"{table}_status_check")).fetchone()
    if check is not None and set(re.findall(r"'([^']*)'", check[0])) == set(STATUSES):
        return None
    clauses = [
        f"no {table}_status_check constraint" if check is None else f"its {table}_status_check differs"
    ]
    columns = set(conn.execute(_COLUMNS, (qualified,)).fetchone()[0])  # type: ignore[index]
    missing = [c for c in SEED_COLUMNS if c not in columns]
    if missing:
        clauses.append("no column " + ", ".join(missing))
    if "status" in columns:
        rows = conn.execute(sql.SQL(_SAMPLE_STATUSES).format(jobs=sql.Identifier(schema, table))).fetchall()
        others = [status for (status,) in rows if status not in STATUSES]
        if others:
            clauses.append("statuses " + ", ".join(repr(status) for status in others))
    return f"{schema}.{table} is not pgq-top's table (" + "; ".join(clauses) + ")"


def _unadoptable(conn: psycopg.Connection, table: str, schema: str, qualified: str) -> str | None:
    """Why a foreign table cannot become pgq-top's queue even when asked to (None: it can): adopting
    it must not add a constraint that rejects the writes the application makes today."""
    columns = set(conn.execute(_COLUMNS, (qualified,)).fetchone()[0])  # type: ignore[index]
    missing = [c for c in SEED_COLUMNS if c not in columns]
    if missing:
        return "it has no column " + ", ".join(missing)
    found = conn.execute(
        sql.SQL(_FOREIGN_STATUSES).format(jobs=sql.Identifier(schema, table)), (list(STATUSES),)
    ).fetchall()
    if found:
        return (
            "its rows hold statuses "
            + ", ".join(repr(s) for (s,) in found)
            + ", which pgq-top's check would reject"
        )
    default = conn.execute(_STATUS_DEFAULT, (qualified,)).fetchone()
    if default is not None and not default[0].startswith("'pending'"):
        return f"its status defaults to {default[0]}, which pgq-top's check would reject"
    return None


def _refusal(reason: str) -> PgqError:
    return PgqError(
        f"{reason}: init changed nothing; monitoring needs no init (pgq-top --dsn DSN); "
        "pgq-top init --adopt --dry-run shows what making it pgq-top's queue would change",
        EXIT_REFUSED,
    )


_ABSENT = {
    "schema": "SELECT to_regnamespace(%s) IS NULL",
    "relation": "SELECT to_regclass(%s) IS NULL",
}


def _missing(conn: psycopg.Connection, what: str, name: str) -> bool:
    return conn.execute(_ABSENT[what], (name,)).fetchone()[0]  # type: ignore[index,no-any-return]


def _transaction_steps(conn: psycopg.Connection, table: str, schema: str) -> tuple[list[Step], bool]:
    """What the install transaction runs, read from the catalog (also for --dry-run); and whether the
    table has rows (then missing indexes are built CONCURRENTLY afterwards)."""
    n = names(table, schema)
    qualified = sql.Identifier(schema, table).as_string(conn)
    steps: list[Step] = []
    if _missing(conn, "schema", sql.Identifier(schema).as_string(conn)):
        steps.append((None, sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(sql.Identifier(schema)), False))
    exists = conn.execute("SELECT to_regclass(%s)", (qualified,)).fetchone()[0] is not None  # type: ignore[index]
    if not exists:
        steps.append((f"created table {qualified}", sql.SQL(_TABLE).format(**n), False))
    else:
        columns = set(conn.execute(_COLUMNS, (qualified,)).fetchone()[0])  # type: ignore[index]
        for column, ddl in _UPGRADE_COLUMNS.items():
            if column not in columns:
                steps.append((f"added column {column} to {qualified}", sql.SQL(ddl).format(**n), False))
        if not conn.execute(_HAS_STATUS_CHECK, (qualified, f"{table}_status_check")).fetchone():
            steps.append(
                (
                    f"added constraint {table}_status_check (NOT VALID: existing rows are not scanned)",
                    sql.SQL(_STATUS_CHECK).format(**n),
                    False,
                )
            )
    stats = n["stats"].as_string(conn)
    if _missing(conn, "relation", stats):
        steps.append((None, sql.SQL(_STATS).format(**n), False))
    else:
        have = set(conn.execute(_COLUMNS, (stats,)).fetchone()[0])  # type: ignore[index]
        for column, ddl in _STATS_COLUMNS.items():
            if column not in have:
                steps.append((f"added column {column} to {stats}", sql.SQL(ddl).format(**n), False))
    pauses = n["pauses"].as_string(conn)
    if _missing(conn, "relation", pauses):
        steps.append((f"created table {pauses}", sql.SQL(_PAUSES).format(**n), False))
    wanted = {f"{key}={value}" for key, value in AUTOVACUUM_OPTIONS.items()}
    current = conn.execute(_RELOPTIONS, (qualified,)).fetchone()[0] if exists else []  # type: ignore[index]
    if not wanted <= set(current):
        options = sql.SQL(", ").join(
            sql.SQL("{} = {}").format(sql.SQL(key), sql.Literal(value))
            for key, value in AUTOVACUUM_OPTIONS.items()
        )
        steps.append(
            (
                f"set autovacuum and fillfactor options on {qualified}",
                sql.SQL("ALTER TABLE {} SET ({})").format(n["jobs"], options),
                False,
            )
        )
    has_rows = exists and conn.execute(sql.SQL(_HAS_ROWS).format(**n)).fetchone()[0]  # type: ignore[index]
    if has_rows:
        return steps, True
    for key, ddl in _INDEXES.items():
        name = f"{table}_{key}"
        state = _index_state(conn, qualified, [name]).get(name) if exists else None
        if state is not None and not state[0]:  # invalid, on an empty table: just rebuild
            steps.append((None, sql.SQL("DROP INDEX {}").format(sql.Identifier(schema, name)), False))
            state = None
        if state is None:
            steps.append((None, sql.SQL(ddl).format(how=sql.SQL(""), name=n[key], jobs=n["jobs"]), False))
    for suffix in _SUPERSEDED:
        old = sql.Identifier(schema, f"{table}_{suffix}")
        if exists and _index_state(conn, qualified, [f"{table}_{suffix}"]):
            steps.append((None, sql.SQL("DROP INDEX IF EXISTS {}").format(old), False))
    return steps, False


def _concurrent_steps(conn: psycopg.Connection, table: str, schema: str) -> list[Step]:
    """The statements the concurrent build would run on a table with rows (for --dry-run)."""
    n = names(table, schema)
    qualified = sql.Identifier(schema, table).as_string(conn)
    state = _index_state(conn, qualified, [f"{table}_{key}" for key in _INDEXES])
    steps: list[Step] = []
    for key in _INDEXES:
        name = f"{table}_{key}"
        valid = state.get(name, (None, None))[0]
        if valid is True:
            continue
        if valid is False:
            drop = sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(schema, name))
            steps.append((f"drop the invalid index {name}", drop, True))
        create = sql.SQL(_INDEXES[key]).format(how=sql.SQL("CONCURRENTLY"), name=n[key], jobs=n["jobs"])
        steps.append((f"build index {name}", create, True))
    for name in _index_state(conn, qualified, [f"{table}_{suffix}" for suffix in _SUPERSEDED]):
        old = sql.SQL("DROP INDEX CONCURRENTLY IF EXISTS {}").format(sql.Identifier(schema, name))
        steps.append((f"drop index {name} (superseded by {table}_dead_idx)", old, True))
    return steps


def plan(
    conn: psycopg.Connection, table: str = "jobs", schema: str = "public", adopt: bool = False
) -> list[str]:
    """Every statement install() would run now, as SQL text, changing nothing (`init --dry-run`).
    Refuses (PgqError) as install() would, so a dry run of a foreign table without adopt says why."""
    _check_ownership(conn, table, schema, adopt)
    steps, has_rows = _transaction_steps(conn, table, schema)
    if has_rows:
        steps += _concurrent_steps(conn, table, schema)
    return [statement.as_string(conn).strip() + ";" for _, statement, _ in steps]


def _check_ownership(conn: psycopg.Connection, table: str, schema: str, adopt: bool) -> None:
    pauses = sql.Identifier(schema, f"{table}_pauses").as_string(conn)
    if not _missing(conn, "relation", pauses):
        have = set(conn.execute(_COLUMNS, (pauses,)).fetchone()[0])  # type: ignore[index]
        if not set(PAUSES_COLUMNS) <= have:
            raise _refusal(f"{schema}.{table}_pauses exists and is not pgq-top's (no queue, paused_at)")
    reason = foreign(conn, table, schema)
    if reason is None:
        return
    if not adopt:
        raise _refusal(reason)
    qualified = sql.Identifier(schema, table).as_string(conn)
    why_not = _unadoptable(conn, table, schema, qualified)
    if why_not is not None:
        raise PgqError(
            f"{schema}.{table} cannot become pgq-top's queue: {why_not}; init changed nothing, "
            "and monitoring needs no init (pgq-top --dsn DSN)",
            EXIT_REFUSED,
        )


def install(
    conn: psycopg.Connection,
    table: str = "jobs",
    schema: str = "public",
    say: Say | None = None,
    adopt: bool = False,
) -> list[str]:
    """Create or update the queue's objects. Safe to run again: only what is missing or differs is
    changed, so a re-run takes no strong lock on a busy table. Returns what it did, also passed to `say`.

    A table that exists and is not pgq-top's own (no status constraint of its: `foreign()`) is left
    alone: PgqError, nothing changed. With `adopt`, a table of the seed's shape whose rows hold only
    pgq-top's statuses is upgraded in place (missing columns added, constraint added NOT VALID).

    Tables, columns, constraints and settings change in one transaction under an advisory lock, so two
    workers starting at once do not race. Missing indexes are built in that transaction while the
    table is empty; on a table with rows, with CREATE INDEX CONCURRENTLY afterwards, so writers keep
    going. An index left invalid by a failed concurrent build is dropped and rebuilt.
    """
    done: list[str] = []

    def report(message: str) -> None:
        done.append(message)
        if say is not None:
            say(message)

    qualified = sql.Identifier(schema, table).as_string(conn)
    with conn.transaction():
        conn.execute("SELECT pg_advisory_xact_lock(hashtext('pgq-top install'))")
        _check_ownership(conn, table, schema, adopt)
        steps, has_rows = _transaction_steps(conn, table, schema)
        for message, statement, _ in steps:
            conn.execute(statement)
            if message is not None:
                report(message)
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
