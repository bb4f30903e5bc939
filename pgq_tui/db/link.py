"""What a connection's link allows: straight to PostgreSQL, or through a pooler.

A transaction pooler (PgBouncer `pool_mode = transaction`, Supavisor, RDS Proxy, pgcat) gives each
transaction whichever server connection is free. So behind one nothing may outlive a transaction:
no session `SET`, no server-side prepared statement (psycopg prepares a statement after
`prepare_threshold` runs, and the next transaction may land where it does not exist), no LISTEN.
And startup options (`-c statement_timeout=...`) are refused by PgBouncer outright.

`Link.open()` judges the link once per connection. A pooler answers `pg_backend_pid()` with the
server's pid but hands the client a pid of its own in BackendKeyData: when they differ, the link is
pooled. `PGQ_POOLER` overrides the guess: `none` (direct), `session` (a session pooler: behaves like
direct), `transaction` (always the careful path), `auto` (the default).

Direct (or session pooling): the settings are set once for the session with one statement, and
statements are prepared as usual (the cheaper poll). Pooled: every transaction starts by setting
them for itself, `set_config(name, value, true)`, which is `SET LOCAL`: an autocommit statement is
sent in one pipeline with it (one round trip, one implicit transaction), a `transaction()` block
runs it right after BEGIN, and pipelines (monitor/pipeline.py) put it first.

`watchdog()` is the deadline of a poll: a timer that, when it fires, shuts the connection's socket
down, so a call blocked on a link that swallows packets returns at once instead of after the
kernel's 15 minutes.
"""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import psycopg
from psycopg import sql
from psycopg.pq import TransactionStatus

from pgq_tui.errors import EXIT_CONNECT, PgqError

POOLER_ENV = "PGQ_POOLER"
POOLER_MODES = ("auto", "none", "session", "transaction")
_IDLE = TransactionStatus.IDLE


def pooler_mode() -> str:
    mode = os.environ.get(POOLER_ENV, "auto").strip().lower() or "auto"
    if mode not in POOLER_MODES:
        raise PgqError(f"{POOLER_ENV} must be one of {', '.join(POOLER_MODES)}, got {mode!r}", 2)
    return mode


def _set_configs(settings: dict[str, str], local: bool) -> tuple[sql.Composed, list[str]]:
    """`SELECT set_config(%s, %s, local), ...`: every setting in one statement, names and values bound."""
    calls = [sql.SQL("set_config(%s, %s, {})").format(sql.Literal(local)) for _ in settings]
    params = [v for item in settings.items() for v in item]
    return sql.SQL("SELECT ") + sql.SQL(", ").join(calls), params


class Link:
    """The facts of one connection's link, kept on the connection as `conn.link`."""

    def __init__(self, settings: dict[str, str], pooled: bool, mode: str) -> None:
        self.settings = settings
        self.pooled = pooled
        self.mode = mode
        local = dict(settings)
        if local.pop("default_transaction_read_only", None) == "on":
            local["transaction_read_only"] = "on"  # SET LOCAL of the default would not apply to this one
        self._local = _set_configs(local, True) if local else None

    @property
    def listen_ok(self) -> bool:
        """LISTEN needs the same server connection between transactions: not behind a transaction pooler."""
        return not self.pooled

    @classmethod
    def open(cls, conn: LinkConnection, settings: dict[str, str], mode: str) -> Link:
        """Judge the link of a new connection and apply its session settings when that is safe."""
        pooled = mode == "transaction"
        if mode == "auto":
            row = psycopg.Cursor(conn).execute("SELECT pg_backend_pid()", prepare=False).fetchone()
            pooled = row is not None and row[0] != conn.info.backend_pid
        link = cls(settings, pooled, mode)
        conn.link = link
        if pooled:
            conn.prepare_threshold = None
        elif settings:
            query, params = _set_configs(settings, False)
            psycopg.Cursor(conn).execute(query, params, prepare=False)
        if not conn.autocommit and conn.info.transaction_status != _IDLE:
            conn.commit()  # keep the session settings; leave no transaction open
        return link

    def apply(self, conn: psycopg.Connection) -> None:
        """SET LOCAL of every setting, in the current (or, pipelined, the implicit) transaction."""
        if self.pooled and self._local is not None:
            query, params = self._local
            psycopg.Cursor(conn).execute(query, params, prepare=False)

    @staticmethod
    def abandoned_error(seconds: float) -> PgqError:
        return PgqError(
            f"no answer from the server within {seconds:g} s: the connection was abandoned, "
            "a new one is made at the next poll",
            EXIT_CONNECT,
        )


async def open_async_link(conn: psycopg.AsyncConnection[Any], settings: dict[str, str]) -> bool:
    """The asyncio queue's link: True when pooled (then nothing is prepared, and the settings are left
    to the pooler's server defaults), else the session settings are set once."""
    mode = pooler_mode()
    pooled = mode == "transaction"
    if mode == "auto":
        cur = await conn.execute("SELECT pg_backend_pid()", prepare=False)
        row = await cur.fetchone()
        pooled = row is not None and row[0] != conn.info.backend_pid
    if pooled:
        conn.prepare_threshold = None
    elif settings:
        query, params = _set_configs(settings, False)
        await conn.execute(query, params, prepare=False)
    return pooled


@contextmanager
def watchdog(conn: psycopg.Connection, seconds: float) -> Iterator[threading.Event]:
    """Shut the connection's socket down if the block has not ended within `seconds`; the event
    yielded says whether that happened."""
    lock = threading.Lock()
    fired = threading.Event()
    active = [True]

    def fire() -> None:
        with lock:
            if active[0]:
                fired.set()
                _shut_down(conn)

    timer = threading.Timer(seconds, fire)
    timer.daemon = True
    timer.start()
    try:
        yield fired
    finally:
        with lock:
            active[0] = False
        timer.cancel()


def _shut_down(conn: psycopg.Connection) -> None:
    """Shut the socket down under the blocked call (a dup of the fd: libpq still owns the original)."""
    try:
        fd = conn.pgconn.socket
        sock = socket.socket(fileno=os.dup(fd))
    except (OSError, psycopg.Error):
        return
    try:
        sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        sock.close()


class LinkConnection(psycopg.Connection[Any]):
    """A psycopg connection that knows its link: through a pooler, each transaction sets its settings."""

    link: Link

    @contextmanager
    def transaction(self, savepoint_name: str | None = None, force_rollback: bool = False) -> Iterator[Any]:
        outer = self.info.transaction_status == _IDLE
        with super().transaction(savepoint_name, force_rollback) as tx:
            link = getattr(self, "link", None)
            if outer and link is not None:
                link.apply(self)
            yield tx


class LinkCursor(psycopg.Cursor[Any]):
    """Through a pooler: never prepares, and a statement that starts a transaction sets the settings
    first (pipelined with it under autocommit: still one round trip)."""

    def execute(self, query: Any, params: Any = None, *, prepare: bool | None = None, **kw: Any) -> Any:
        conn = self.connection
        link: Link | None = getattr(conn, "link", None)
        if link is None or not link.pooled:
            return super().execute(query, params, prepare=prepare, **kw)
        starts = conn.info.transaction_status == _IDLE and conn.pgconn.pipeline_status == 0
        if starts and conn.autocommit:
            with conn.pipeline():
                link.apply(conn)
                super().execute(query, params, prepare=False, **kw)
            return self
        if starts:
            link.apply(conn)  # opens the transaction (psycopg sends BEGIN first)
        return super().execute(query, params, prepare=False, **kw)
