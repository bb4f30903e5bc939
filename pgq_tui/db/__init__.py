"""Connections: one factory, so every session pgq-top opens is labelled and bounded."""

from pgq_tui.db.connect import Session, connect, resolve_dsn

__all__ = ["Session", "connect", "resolve_dsn"]
