"""Graphile Worker (npm `graphile-worker`), as a dialect. Its SQL is in `sql/`, one file per question."""

from pgq_tui.dialects.graphile.dialect import GraphileDialect

DIALECTS = (GraphileDialect(),)
