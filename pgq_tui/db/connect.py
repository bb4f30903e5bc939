"""The connection factory.

Every session pgq-top opens goes through `connect()`: autocommit (a monitor that sits idle in a
transaction would pin the very xmin horizon it is meant to watch), an `application_name` so an
operator can tell our sessions from theirs, TCP keepalives and `tcp_user_timeout` (a link that dies
silently is noticed), and server-side timeouts so a slow query or a lock can never hang the caller.

The link is judged once per connection (db/link.py): straight to PostgreSQL, the settings are set
once for the session and statements are prepared after a few runs; through a pooler (PgBouncer in
transaction mode hands each transaction to any server connection) every transaction sets them
itself (`set_config(..., true)`, i.e. SET LOCAL) and nothing is prepared. No setting ever travels as
a startup option, which poolers reject.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pgq_tui import env
from pgq_tui.db.link import Link, LinkConnection, LinkCursor, pooler_mode, watchdog
from pgq_tui.errors import EXIT_USAGE, PgqError, describe, redact, remember_secrets

APP_NAME_MAX = 63  # NAMEDATALEN - 1: longer application names are truncated by the server
# A dead link (a NAT or tunnel that lost its state) is noticed by the kernel: keepalive probes after
# 30 s idle, 3 more 10 s apart; unacknowledged data gives up after 30 s. The DSN may set each.
LINK_DEFAULTS = {
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "30000",
}
# The oldest server the monitor's version-banded SQL serves (the lowest band is `_pre_140000`, i.e. 13):
# an older one fails at connect with one line naming its version, not at its first catalog query.
OLDEST_SERVER = 130000


def check_server_version(version_num: int) -> None:
    """Refuse a server older than OLDEST_SERVER (`server_version_num`); 0 (unknown, as a pooler may
    report) passes, and the queries say what fails.

    >>> check_server_version(150018), check_server_version(0)
    (None, None)
    >>> check_server_version(120022)
    Traceback (most recent call last):
    ...
    pgq_tui.errors.PgqError: PostgreSQL 12.22 is older than 13, the oldest version pgq-top supports
    >>> check_server_version(90624)
    Traceback (most recent call last):
    ...
    pgq_tui.errors.PgqError: PostgreSQL 9.6.24 is older than 13, the oldest version pgq-top supports
    """
    if 0 < version_num < OLDEST_SERVER:
        if version_num >= 100000:  # 10 and later: major and minor
            shown = f"{version_num // 10000}.{version_num % 10000}"
        else:  # 9.6.24 is 90624
            shown = f"{version_num // 10000}.{version_num // 100 % 100}.{version_num % 100}"
        raise PgqError(
            f"PostgreSQL {shown} is older than {OLDEST_SERVER // 10000}, the oldest version pgq-top supports"
        )


def resolve_dsn(dsn: str | None) -> str:
    """The DSN to use: the flag, else DATABASE_URL, else "" so libpq reads PG* variables and ~/.pgpass.
    Its secrets are remembered, so that no message ever prints them (errors.redact)."""
    value = dsn or env.get("DATABASE_URL") or ""
    remember_secrets(value)
    try:
        conninfo_to_dict(value)
    except psycopg.ProgrammingError as exc:
        raise PgqError(f"bad DSN: {redact(str(exc).splitlines()[0])}", EXIT_USAGE) from None
    return value


def server_settings(
    *,
    statement_timeout_ms: int | None = None,
    lock_timeout_ms: int | None = None,
    idle_in_transaction_timeout_ms: int | None = None,
    read_only: bool = False,
    gucs: dict[str, str] | None = None,
) -> dict[str, str]:
    """The server settings a session wants (applied per session or per transaction: db/link.py)."""
    out = dict(gucs or {})
    if statement_timeout_ms is not None:
        out["statement_timeout"] = str(int(statement_timeout_ms))
    if lock_timeout_ms is not None:
        out["lock_timeout"] = str(int(lock_timeout_ms))
    if idle_in_transaction_timeout_ms is not None:
        out["idle_in_transaction_session_timeout"] = str(int(idle_in_transaction_timeout_ms))
    if read_only:
        out["default_transaction_read_only"] = "on"
    return out


def connect_kwargs(conninfo: str, *, application_name: str, connect_timeout_s: int = 5) -> dict[str, object]:
    """The libpq keywords we add (besides conninfo): a label, a connect timeout, and keepalives and
    tcp_user_timeout unless the DSN sets them (a keyword passed here would override the DSN's)."""
    kwargs: dict[str, object] = {
        "application_name": application_name[:APP_NAME_MAX],
        "connect_timeout": connect_timeout_s,
    }
    given = conninfo_to_dict(conninfo)
    for key, value in LINK_DEFAULTS.items():
        if key not in given:
            kwargs[key] = value
    return kwargs


def connect(
    conninfo: str,
    *,
    autocommit: bool = True,
    application_name: str,
    connect_timeout_s: int = 5,
    **settings: Any,
) -> psycopg.Connection:
    """Open a labelled, bounded connection (settings: see server_settings), or raise PgqError with
    one clear line."""
    remember_secrets(conninfo)
    kwargs = connect_kwargs(conninfo, application_name=application_name, connect_timeout_s=connect_timeout_s)
    try:
        conn = LinkConnection.connect(
            conninfo,
            autocommit=autocommit,
            cursor_factory=LinkCursor,
            **kwargs,  # type: ignore[arg-type]
        )
    except psycopg.Error as exc:
        raise describe(exc) from None
    try:
        check_server_version(conn.info.server_version)
    except PgqError:
        conn.close()
        raise
    try:
        # the link's first statements get the connect timeout too: a link may die right after start-up
        with watchdog(conn, connect_timeout_s) as fired:
            try:
                Link.open(conn, server_settings(**settings), pooler_mode())
            except psycopg.Error:
                if fired.is_set():
                    raise Link.abandoned_error(connect_timeout_s) from None
                raise
        if fired.is_set():  # shut as its last answer came: this connection can't be used
            raise Link.abandoned_error(connect_timeout_s)
    except psycopg.Error as exc:
        conn.close()
        raise describe(exc) from None
    except PgqError:
        conn.close()
        raise
    return conn


class Session:
    """One connection with fixed settings, opened on first use and reopened after it breaks.

    Workers, the monitor and the actions each hold one, so a server restart costs them one failed call
    and nothing else. `setup` runs once per new connection (a role lookup).
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
        """The backend pid while connected, else None (through a pooler: the pooler's made-up one)."""
        return self._conn.info.backend_pid if self.usable and self._conn is not None else None

    @property
    def pooled(self) -> bool:
        """The open connection goes through a pooler (False when not connected)."""
        link = getattr(self._conn, "link", None) if self.usable else None
        return bool(link is not None and link.pooled)

    @contextmanager
    def deadline(self, seconds: float | None) -> Iterator[None]:
        """Everything in the block must get its answers within `seconds` (see `deadline()`); past it
        the connection is abandoned and the next use opens a new one. None: no deadline."""
        try:
            with deadline(self.conn, seconds):
                yield
        except PgqError:
            if not self.usable:
                self.close()
            raise

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None


@contextmanager
def deadline(conn: psycopg.Connection, seconds: float | None) -> Iterator[None]:
    """Everything in the block must get its answers within `seconds`: past it the connection is
    abandoned (its socket shut down, so the blocked call returns at once, and closed) and PgqError says
    so. None: no deadline."""
    if seconds is None:
        yield
        return
    with watchdog(conn, seconds) as fired:
        try:
            yield
        except (psycopg.Error, PgqError):
            if not fired.is_set():
                raise
            conn.close()
            raise Link.abandoned_error(seconds) from None
    if fired.is_set():
        # the deadline hit the block's last call as it completed: the answers are whole, the socket is
        # shut. Closed now, the next use opens a new connection instead of failing on this one.
        conn.close()
