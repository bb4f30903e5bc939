"""A worker's claims, run through libpq's prepared-statement call directly rather than a psycopg cursor.

A worker runs one statement per batch (COMPLETE_*_CLAIM, or CLAIM), and on 2 cores its client CPU is
taken from the server. Measured on one connection, a batch of 10 (10 rows of 9 columns back):
`cursor.execute(prepare=True)` then `fetchall()` spent 45-53 us of client CPU; the same round trip
through `pgconn.exec_prepared()` and psycopg's own row loaders (a `Transformer`, the C loaders the
cursor uses), 26-28 us. The difference is what a cursor does around the round trip: converting the
query and looking up a dumper per parameter at every call, its prepared-statement bookkeeping, and
its generator-based wait.

Same statement text, same parameters (sent as text, their types inferred by the server from the
statement's casts and context, as psycopg's untyped strings are), same server-side prepared
statement (one per statement text and connection, prepared on its first use), same rows, same
errors: a failed prepare or execution raises psycopg's exception class for its SQLSTATE, and a lost
connection raises `psycopg.OperationalError` (the connection then reads as closed, so its Session
reconnects). libpq's call releases the GIL while it waits, as psycopg's wait does: the heartbeat
thread runs meanwhile.

Not used through a pooler (`conn.link.pooled`, db/link.py: the next transaction may run on another
server connection, which never prepared the statement; settings are applied per transaction there)
or on a connection whose encoding is not UTF-8: the cursor path runs then.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

import psycopg
from psycopg import pq
from psycopg.abc import AdaptContext
from psycopg.adapt import Dumper, Transformer

_PLACEHOLDER = re.compile(rb"%\((\w+)\)s")


def positional(query: bytes) -> tuple[bytes, tuple[str, ...]]:
    """The query with its `%(name)s` placeholders as `$1`, `$2`, ... (one number per name, in order of
    first use), and the names in that order.

    >>> positional(b"SELECT %(a)s, %(b)s WHERE x = %(a)s")
    (b'SELECT $1, $2 WHERE x = $1', ('a', 'b'))
    """
    if b"%%" in query or b"%s" in _PLACEHOLDER.sub(b"", query):
        raise ValueError("only %(name)s placeholders are supported")
    names: list[str] = []

    def number(match: re.Match[bytes]) -> bytes:
        name = match.group(1).decode()
        if name not in names:
            names.append(name)
        return b"$%d" % (names.index(name) + 1)

    return _PLACEHOLDER.sub(number, query), tuple(names)


def usable(conn: psycopg.Connection) -> bool:
    """Whether claims on `conn` may run here: not through a pooler, and in UTF-8."""
    link = getattr(conn, "link", None)
    return not (link is not None and link.pooled) and conn.info.encoding == "utf-8"


class DirectStatements:
    """Prepared statements of one connection, executed with binary results; rows loaded as tuples by
    psycopg's loaders for `context` (a cursor of that connection: its adapters, e.g. a jsonb loader).
    Not thread-safe, like the JobQueue that owns it (it takes the connection's lock while it talks)."""

    def __init__(self, conn: psycopg.Connection, context: AdaptContext) -> None:
        self.conn = conn
        self._tx = Transformer(context)
        self._prepared: dict[bytes, tuple[bytes, tuple[str, ...]]] = {}

    def rows(self, query: bytes, params: Mapping[str, Any]) -> list[tuple[Any, ...]]:
        """Execute `query` (`%(name)s` placeholders) with `params`; its rows (none for a command)."""
        result = self._execute(query, params)
        if _gone(result):
            # Our statements were deallocated: psycopg sends DEALLOCATE ALL on the connection after
            # a ROLLBACK, DROP, ALTER or DISCARD ALL there (it resets its own statement cache).
            # Prepare them again, once.
            self._prepared.clear()
            result = self._execute(query, params)
        if result.status != pq.ExecStatus.TUPLES_OK:
            self._check(result)
            return []
        self._tx.set_pgresult(result)
        return self._tx.load_rows(0, result.ntuples, tuple)

    def _execute(self, query: bytes, params: Mapping[str, Any]) -> pq.abc.PGresult:
        pgconn = self.conn.pgconn
        with self.conn.lock:
            prepared = self._prepared.get(query)
            if prepared is None:
                text, order = positional(query)
                name = b"pgq_direct_%d" % len(self._prepared)
                self._check(pgconn.prepare(name, text))
                prepared = self._prepared[query] = (name, order)
            name, order = prepared
            values: list[Any] = [_text(params[key]) for key in order]  # None: NULL (pq's stubs say Buffer)
            return pgconn.exec_prepared(name, values, result_format=pq.Format.BINARY)

    def _check(self, result: pq.abc.PGresult) -> None:
        if result.status in (pq.ExecStatus.COMMAND_OK, pq.ExecStatus.TUPLES_OK):
            return
        if self.conn.pgconn.status == pq.ConnStatus.BAD:
            message = self.conn.pgconn.error_message.decode(errors="replace").strip()
            raise psycopg.OperationalError(f"the connection was lost: {message}")
        raise psycopg.errors.error_from_result(result, encoding=self.conn.info.encoding)


def _gone(result: pq.abc.PGresult) -> bool:
    """The prepared statement does not exist (any more): SQLSTATE 26000."""
    return (
        result.status == pq.ExecStatus.FATAL_ERROR
        and result.error_field(pq.DiagnosticField.SQLSTATE) == b"26000"
    )


def _text(value: Any) -> bytes | None:
    """A parameter in PostgreSQL's text input form (the server infers its type from the statement)."""
    if value is None:
        return None
    form = _TEXT_FORMS.get(type(value))
    if form is None:
        raise TypeError(f"no text form for a {type(value).__name__} parameter")
    return form(value)


class IntArray(list[int]):
    """The integers of a fence (`%(ids)s::bigint[]`, `%(attempts)s::int[]`), sent as one array
    literal: psycopg's list dumper inspects and escapes item by item, 45 us per 10-job batch, more than
    the rest of the batch's parameters. Decimal integers need no escaping; the oid is left unknown
    so that the statement's cast types it, as for a literal."""

    def text(self) -> bytes:
        return b"{%b}" % b",".join(map(b"%d".__mod__, self))


class IntArrayDumper(Dumper):
    oid = 0

    def dump(self, obj: IntArray) -> bytes:
        return obj.text()


psycopg.adapters.register_dumper(IntArray, IntArrayDumper)  # only this module's type: nobody else's


# By exact type (a subclass, e.g. an IntEnum, is refused rather than guessed at).
_TEXT_FORMS: dict[type, Callable[[Any], bytes]] = {
    str: str.encode,
    bool: lambda b: b"true" if b else b"false",
    int: b"%d".__mod__,
    float: lambda f: repr(f).encode(),
    IntArray: IntArray.text,
}
