"""River (Go; its schema from River's own migrations), as a dialect. Its SQL is in `sql/`."""

from pgq_tui.dialects.river.dialect import RiverDialect

DIALECTS = (RiverDialect(),)
