"""Send a poll's statements together: one network round trip for all of them (psycopg's pipeline mode).

Through an SSH tunnel or a bastion every round trip costs the link's latency; 14 statements one after
the other took 14 of them. In a pipeline the statements between two syncs run as one implicit
transaction: read-only and a few milliseconds long, which the monitor can afford. The price is that a
statement failing (a panel's statement_timeout, a missing grant) aborts the ones after it until the
sync. So the failed one gets its error (its panel shows it, as before) and the aborted ones are sent
again in a further pipeline: a poll with no failing panel costs one round trip per batch.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

# psycopg logs "error ignored terminating <Pipeline>" when a statement failed inside the block; the
# error is reported to its panel here, and a dashboard must not get log lines on its terminal.
logging.getLogger("psycopg").addHandler(logging.NullHandler())

KeyedQuery = tuple[Hashable, Any, dict[str, Any] | None]  # key, query, parameters
QueryResult = list[dict[str, Any]] | psycopg.Error


def run(
    conn: psycopg.Connection,
    statements: Sequence[KeyedQuery],
    preface: Callable[[psycopg.Connection], None] | None = None,
) -> dict[Hashable, QueryResult]:
    """Each statement's rows, or the error it raised. Raises only when the connection is lost.
    `preface`: run first in each pipeline, in its implicit transaction (SET LOCALs: the settings of
    another session whose statements these are, monitor/errand.py)."""
    out: dict[Hashable, QueryResult] = {}
    pending = list(statements)
    while pending:
        cursors: list[psycopg.Cursor[dict[str, Any]]] = []
        error: psycopg.Error | None = None
        try:
            with conn.pipeline():
                link = getattr(conn, "link", None)
                if link is not None:
                    link.apply(conn)  # through a pooler: this implicit transaction's SET LOCALs
                if preface is not None:
                    preface(conn)  # after this link's own: its settings win
                for _, query, params in pending:
                    cur = conn.cursor(row_factory=dict_row)
                    cursors.append(cur)
                    cur.execute(query, params, prepare=True)  # not through a pooler: db/link.py
        except psycopg.Error as exc:
            error = exc
        if error is not None and (conn.closed or conn.broken):
            raise error
        rest: list[KeyedQuery] = []
        for i, statement in enumerate(pending):
            sent = cursors[i] if i < len(cursors) else None
            if rest or (sent is None or sent.pgresult is None):
                # The first statement without a result is the one that failed; those after it
                # were aborted with it (or never sent) and go again.
                if error is not None and not rest and statement[0] not in out:
                    out[statement[0]] = error
                    error = None
                    continue
                rest.append(statement)
            else:
                out[statement[0]] = sent.fetchall()
        if len(rest) == len(pending):  # no progress: should not happen; do not loop forever
            for key, _, _ in rest:
                out[key] = psycopg.OperationalError("statement not run: the pipeline made no progress")
            break
        pending = rest
    return out
