"""Connections: one factory, so every session pgq-top opens is labelled and bounded."""

from pgq_tui.db.connect import connect, resolve_dsn, table_ident

__all__ = ["connect", "resolve_dsn", "table_ident"]
