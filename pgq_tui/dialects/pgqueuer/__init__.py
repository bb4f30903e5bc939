"""pgqueuer (PyPI `pgqueuer`), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.pgqueuer.dialect import PgqueuerDialect

DIALECTS = (PgqueuerDialect(),)
