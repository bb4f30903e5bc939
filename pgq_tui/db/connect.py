"""The connection factory.

Every session pgq-top opens goes through `connect()`: autocommit (a monitor that sits idle in a
transaction would pin the very xmin horizon it is meant to watch), an `application_name` so an
operator can tell our sessions from theirs, and server-side timeouts so a slow query or a lock can
never hang the caller.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pgq_tui.errors import EXIT_USAGE, PgqError, describe

APP_NAME_MAX = 63  # NAMEDATALEN - 1: longer application names are truncated by the server


def resolve_dsn(dsn: str | None) -> str:
    """The DSN to use: the flag, else DATABASE_URL, else "" so libpq reads PG* variables and ~/.pgpass."""
    value = dsn or os.environ.get("DATABASE_URL", "")
    try:
        conninfo_to_dict(value)
    except psycopg.ProgrammingError as exc:
        raise PgqError(f"bad DSN: {str(exc).splitlines()[0]}", EXIT_USAGE) from None
    return value


def connect_kwargs(
    conninfo: str,
    *,
    application_name: str,
    statement_timeout_ms: int | None = None,
    lock_timeout_ms: int | None = None,
    idle_in_transaction_timeout_ms: int | None = None,
    read_only: bool = False,
    connect_timeout_s: int = 5,
) -> dict[str, object]:
    """The keyword arguments (besides conninfo and autocommit) of a labelled, bounded connection."""
    options = []
    if statement_timeout_ms is not None:
        options.append(f"-c statement_timeout={int(statement_timeout_ms)}")
    if lock_timeout_ms is not None:
        options.append(f"-c lock_timeout={int(lock_timeout_ms)}")
    if idle_in_transaction_timeout_ms is not None:
        options.append(f"-c idle_in_transaction_session_timeout={int(idle_in_transaction_timeout_ms)}")
    if read_only:
        options.append("-c default_transaction_read_only=on")
    kwargs: dict[str, object] = {
        "application_name": application_name[:APP_NAME_MAX],
        "connect_timeout": connect_timeout_s,
    }
    if options:
        existing = conninfo_to_dict(conninfo).get("options") or os.environ.get("PGOPTIONS", "")
        kwargs["options"] = " ".join([str(existing), *options]).strip()
    return kwargs


def connect(conninfo: str, *, autocommit: bool = True, **settings: Any) -> psycopg.Connection:
    """Open a labelled, bounded connection (settings: see connect_kwargs), or raise PgqError with
    one clear line."""
    kwargs = connect_kwargs(conninfo, **settings)
    try:
        return psycopg.connect(conninfo, autocommit=autocommit, **kwargs)  # type: ignore[arg-type]
    except psycopg.Error as exc:
        raise describe(exc) from None


class Session:
    """One connection with fixed settings, opened on first use and reopened after it breaks.

    Workers, the monitor and the actions each hold one, so a server restart costs them one failed call
    and nothing else. `setup` runs once per new connection (session settings, a role lookup).
    """

    def __init__(
        self,
        conninfo: str,
        *,
        setup: Callable[[psycopg.Connection], None] | None = None,
        **connect_kwargs: Any,
    ) -> None:
        self.conninfo = conninfo
        self._setup = setup
        self._kwargs = connect_kwargs
        self._conn: psycopg.Connection | None = None

    @property
    def usable(self) -> bool:
        return self._conn is not None and not self._conn.closed and not self._conn.broken

    @property
    def conn(self) -> psycopg.Connection:
        if not self.usable:
            self.close()
            self._conn = connect(self.conninfo, **self._kwargs)
            if self._setup is not None:
                self._setup(self._conn)
        assert self._conn is not None
        return self._conn

    @property
    def pid(self) -> int | None:
        """The backend pid while connected, else None."""
        return self._conn.info.backend_pid if self.usable and self._conn is not None else None

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None
