"""What every benchmark shares: the server it measures."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import psycopg

from pgq_tui.demo.embedded import EmbeddedPostgres


@contextmanager
def measured_server(dsn: str | None, settings: dict[str, str] | None = None) -> Iterator[tuple[str, str]]:
    """(dsn, server version) of the server to measure: `dsn` when given, else a private embedded
    PostgreSQL with stock durability settings (fsync on) plus `settings`, stopped and removed
    afterwards."""
    server = None if dsn else EmbeddedPostgres(settings=settings or {})
    try:
        target = dsn or server.start()  # type: ignore[union-attr]
        with psycopg.connect(target) as conn:
            version = str(conn.execute("SHOW server_version").fetchone()[0])  # type: ignore[index]
        yield target, version
    finally:
        if server is not None:
            server.stop()
