"""procrastinate (PyPI `procrastinate`), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.procrastinate.dialect import ProcrastinateDialect

DIALECTS = (ProcrastinateDialect(),)
