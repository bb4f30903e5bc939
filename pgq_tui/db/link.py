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
kernel's 15 minutes. It never shuts a healthy socket after the poll ended (`Watchdog`).
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

from pgq_tui import env
from pgq_tui.db import alarms
from pgq_tui.errors import EXIT_CONNECT, EXIT_USAGE, PgqError

POOLER_ENV = "PGQ_TOP_POOLER"  # until 0.1 PGQ_POOLER, still read (pgq_tui/env.py)
POOLER_MODES = ("auto", "none", "session", "transaction")
_IDLE = TransactionStatus.IDLE


def pooler_mode() -> str:
    mode = (env.get(POOLER_ENV) or "auto").strip().lower() or "auto"
    if mode not in POOLER_MODES:
        raise PgqError(f"{POOLER_ENV} must be one of {', '.join(POOLER_MODES)}, got {mode!r}", EXIT_USAGE)
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
        """SET LOCAL of every setting, in the current (or, pipelined, the implicit) transaction, when
        the session could not keep them (pooled)."""
        if self.pooled:
            self.impose(conn)

    def impose(self, conn: psycopg.Connection) -> None:
        """SET LOCAL of every setting on `conn`, pooled or not: also on another session's connection,
        where statements one session lends it (monitor/errand.py) run under the lender's settings,
        for that one implicit transaction."""
        if self._local is not None:
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


class Watchdog:
    """The deadline of one block on a connection: `arm()` starts it, `disarm()` ends it, `fired` says
    whether it shut the socket down.

    Race-free by two rules. A generation counter: `arm()` and `disarm()` each start a new generation,
    and a timer of an older one does nothing, so a timer that fires after the block ended (or a late
    timer of an earlier block) can't touch the socket. And the socket is shut down only under a call
    in flight (psycopg holds `conn.lock` for every call): a block past its deadline but between calls,
    or whose last call has just returned, is looked at again `recheck_s` later, instead of having a
    healthy socket shut under it. A call that completes in the instant between that check and the
    shutdown leaves `fired` set with the block's answers complete: `deadline()` then closes the
    connection, so the next use opens a new one instead of failing on a shut socket.
    """

    def __init__(self, conn: psycopg.Connection, *, recheck_s: float = 0.05) -> None:
        self._conn = conn
        self._recheck_s = recheck_s
        self._lock = threading.Lock()
        self._generation = 0
        self._timer: alarms.Alarm | None = None
        self.fired = threading.Event()

    def arm(self, seconds: float) -> int:
        """Start the deadline; returns its generation (what `fire()` is called with)."""
        with self._lock:
            self._generation += 1
            self.fired.clear()
            self._start(seconds, self._generation)
            return self._generation

    def disarm(self) -> None:
        """End the deadline: from here on no timer of it acts, whenever it fires."""
        with self._lock:
            self._generation += 1
            timer, self._timer = self._timer, None
        if timer is not None:
            timer.cancel()

    def fire(self, generation: int) -> None:
        """The timer's call: shut the socket down if this deadline is still armed and a call is blocked."""
        with self._lock:
            if generation != self._generation:
                return  # disarmed, or armed again since: not this block's deadline any more
            lock = self._conn.lock
            if lock.acquire(blocking=False):  # no call in flight: nothing is blocked on the socket
                lock.release()
                self._start(self._recheck_s, generation)
                return
            self.fired.set()
            _shut_down(self._conn)

    def _start(self, seconds: float, generation: int) -> None:
        self._timer = alarms.after(seconds, self.fire, generation)


@contextmanager
def watchdog(conn: psycopg.Connection, seconds: float) -> Iterator[threading.Event]:
    """Shut the connection's socket down if a call in the block is still waiting after `seconds`; the
    event yielded says whether that happened (see Watchdog)."""
    dog = Watchdog(conn)
    dog.arm(seconds)
    try:
        yield dog.fired
    finally:
        dog.disarm()


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
