"""pgq-top's own jobs table (`pgq-top init`), as one dialect among others."""

from pgq_tui.dialects.pgq.dialect import PgqDialect

DIALECTS = (PgqDialect(),)
