"""`pgq-top init` never breaks a table it does not own (#31).

Monitoring needs no init: an existing `jobs` table that is not pgq-top's (the application's own queue,
statuses 'queued'/'processing'/'finished') is refused with one line and left exactly as it was, down to
its columns, constraints, indexes and reloptions. A seed-shaped table becomes pgq-top's only with
--adopt, and --dry-run shows every statement first.
"""

from __future__ import annotations

import subprocess
import sys

import psycopg
import pytest

from pgq_tui.errors import EXIT_OK, EXIT_REFUSED, PgqError
from pgq_tui.queue import JobQueue

# The table as the catalog describes it: what init must leave byte-for-byte the same.
_DEFINITION = """
SELECT 'column', a.attname || ' ' || format_type(a.atttypid, a.atttypmod) || ' ' || a.attnotnull::text
       || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
WHERE a.attrelid = 'public.jobs'::regclass AND a.attnum > 0 AND NOT a.attisdropped
UNION ALL
SELECT 'constraint', conname || ' ' || pg_get_constraintdef(oid) || ' ' || convalidated::text
FROM pg_constraint WHERE conrelid = 'public.jobs'::regclass
UNION ALL
SELECT 'index', pg_get_indexdef(indexrelid) || ' ' || indisvalid::text
FROM pg_index WHERE indrelid = 'public.jobs'::regclass
UNION ALL
SELECT 'reloptions', coalesce(reloptions::text, '') FROM pg_class WHERE oid = 'public.jobs'::regclass
UNION ALL
SELECT 'relation', relname FROM pg_class WHERE relnamespace = 'public'::regnamespace
ORDER BY 1, 2
"""

_HOME_GROWN = """
CREATE TABLE jobs (
    id bigserial PRIMARY KEY, queue text NOT NULL, payload jsonb NOT NULL DEFAULT '{}',
    status text NOT NULL DEFAULT 'queued', run_at timestamptz NOT NULL DEFAULT now(),
    attempts int NOT NULL DEFAULT 0, locked_until timestamptz
);
CREATE INDEX jobs_queued_idx ON jobs (queue, run_at) WHERE status = 'queued';
ALTER TABLE jobs SET (fillfactor = 70);
INSERT INTO jobs (queue, status) VALUES ('mail', 'queued'), ('mail', 'processing'), ('mail', 'finished');
"""

_SEED = """
CREATE TABLE jobs (
    id bigserial PRIMARY KEY, queue text NOT NULL, payload jsonb NOT NULL,
    status text NOT NULL DEFAULT 'pending', run_at timestamptz NOT NULL DEFAULT now(),
    attempts int NOT NULL DEFAULT 0, locked_until timestamptz
);
INSERT INTO jobs (queue, payload) SELECT 'old', jsonb_build_object('n', g) FROM generate_series(1, 3) g;
"""


def _init(dsn: str, *flags: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pgq_tui", "init", "--dsn", dsn, *flags],
        capture_output=True,
        text=True,
        timeout=60,
    )


def _definition(dsn: str) -> list[tuple[str, str]]:
    with psycopg.connect(dsn, autocommit=True) as conn:
        return conn.execute(_DEFINITION).fetchall()


@pytest.mark.parametrize("flags", [(), ("--adopt",), ("--dry-run",), ("--adopt", "--dry-run")])
def test_init_refuses_a_home_grown_table_and_leaves_it_exactly_as_it_was(
    empty_dsn: str, flags: tuple[str, ...]
) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(_HOME_GROWN)
    before = _definition(empty_dsn)
    run = _init(empty_dsn, *flags)
    assert run.returncode == EXIT_REFUSED, run
    assert run.stdout == ""
    (line,) = run.stderr.splitlines()
    assert "Traceback" not in line and "monitoring needs no init" in line
    if "--adopt" in flags:  # even asked to, it will not add a check the application's rows fail
        assert "public.jobs cannot become pgq-top's queue" in line, line
        assert "'finished', 'processing', 'queued'" in line, line
    else:
        assert line.startswith("pgq-top: error: public.jobs is not pgq-top's table (no jobs_status_check"), (
            line
        )
        assert "statuses 'finished', 'processing', 'queued'" in line, line
    assert _definition(empty_dsn) == before
    with psycopg.connect(empty_dsn, autocommit=True) as conn:  # the application's writes still work
        conn.execute("INSERT INTO jobs (queue) VALUES ('mail')")
        conn.execute("UPDATE jobs SET status = 'processing' WHERE status = 'queued'")


def test_the_library_refuses_a_foreign_table_too(empty_dsn: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(_HOME_GROWN)
    before = _definition(empty_dsn)
    with JobQueue(empty_dsn) as q, pytest.raises(PgqError, match="monitoring needs no init") as refused:
        q.install()
    assert refused.value.exit_code == EXIT_REFUSED
    assert _definition(empty_dsn) == before


def test_a_status_default_the_check_would_reject_refuses_adopt_on_an_empty_table(empty_dsn: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(_HOME_GROWN)
        conn.execute("TRUNCATE jobs")
    before = _definition(empty_dsn)
    run = _init(empty_dsn, "--adopt")
    assert run.returncode == EXIT_REFUSED
    assert "its status defaults to 'queued'::text" in run.stderr, run.stderr
    assert _definition(empty_dsn) == before


def test_a_seed_table_is_adopted_only_when_asked_and_dry_run_shows_every_statement(empty_dsn: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(_SEED)
    before = _definition(empty_dsn)
    refused = _init(empty_dsn)
    assert refused.returncode == EXIT_REFUSED and "pgq-top init --adopt --dry-run" in refused.stderr
    dry = _init(empty_dsn, "--adopt", "--dry-run")
    assert dry.returncode == EXIT_OK, dry.stderr
    statements = dry.stdout
    for expected in (
        'ALTER TABLE "public"."jobs" ADD COLUMN IF NOT EXISTS priority smallint NOT NULL DEFAULT 0;',
        'ALTER TABLE "public"."jobs" ADD CONSTRAINT "jobs_status_check" '
        "CHECK (status IN ('pending', 'running', 'done', 'failed')) NOT VALID;",
        'CREATE INDEX CONCURRENTLY IF NOT EXISTS "jobs_claim_idx" ON "public"."jobs"',
        'ALTER TABLE "public"."jobs" SET (autovacuum_vacuum_scale_factor = \'0.0\'',
    ):
        assert expected in statements, statements
    assert _definition(empty_dsn) == before, "--dry-run changed the table"
    adopted = _init(empty_dsn, "--adopt")
    assert adopted.returncode == EXIT_OK, adopted.stderr
    assert "pgq-top: added constraint jobs_status_check" in adopted.stdout
    again = _init(empty_dsn)  # now it is pgq-top's own: no flag needed
    assert again.stdout == "pgq-top: public.jobs is ready (nothing to change)\n", again
    assert _init(empty_dsn, "--dry-run").stdout == "-- nothing to change\n"


def test_dry_run_on_a_missing_table_prints_the_create_and_creates_nothing(empty_dsn: str) -> None:
    dry = _init(empty_dsn, "--dry-run")
    assert dry.returncode == EXIT_OK, dry.stderr
    assert dry.stdout.startswith('CREATE TABLE IF NOT EXISTS "public"."jobs"')
    assert 'CREATE INDEX  IF NOT EXISTS "jobs_lease_idx"' in dry.stdout
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        assert conn.execute("SELECT to_regclass('public.jobs')").fetchone() == (None,)
