"""DBOS Transact (PyPI `dbos`), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.dbos.dialect import DbosDialect

DIALECTS = (DbosDialect(),)
