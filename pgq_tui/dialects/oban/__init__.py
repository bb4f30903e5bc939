"""Oban (Elixir; its schema from Oban's own migrations), as a dialect. Its SQL is in `sql/`."""

from pgq_tui.dialects.oban.dialect import ObanDialect

DIALECTS = (ObanDialect(),)
