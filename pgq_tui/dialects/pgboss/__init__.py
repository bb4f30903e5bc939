"""pg-boss (npm `pg-boss`), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.pgboss.dialect import PgBossDialect

DIALECTS = (PgBossDialect(),)
