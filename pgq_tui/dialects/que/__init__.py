"""Que (Ruby gem `que`), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.que.dialect import QueDialect

DIALECTS = (QueDialect(),)
