"""Statements the poll lends to the background counter's session, run there beside the poll's own.

A poll's statements run one after the other in one backend. On a big stock table its count statements
are the costliest part (pg-boss 12.38 at 10M rows: about half of the poll's server time), and the
background counter's session sits idle between its statements (it holds them until just after a
poll: background.beside_poll). So the poll hands its count statements to that session and sends the
rest on its own: two backends at once, no connection more than the monitor already holds.

An Errand is that handoff: the statements, run there as the lender's (its timeouts and plan settings
as SET LOCAL, its application_name, for their implicit transaction only: pg_stat_activity shows the
poll's statements as the poll's, and the counter's own statements after them run as before), and
their answer. The counter's thread serves it (BackgroundCounter.lend); the poll waits for the answer,
and sends again on its own session whatever did not come back (a lost link, no answer in time):
lending is only ever faster, never a figure less.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence

import psycopg

from pgq_tui.db.link import Link
from pgq_tui.monitor import pipeline
from pgq_tui.monitor.pipeline import KeyedQuery, QueryResult


class Errand:
    """Statements for another thread to run on its connection as `lender`'s (its settings and name),
    within `deadline_s` (past it that connection is abandoned, as the lender's own would be)."""

    def __init__(
        self, statements: Sequence[KeyedQuery], lender: psycopg.Connection, deadline_s: float | None
    ) -> None:
        self.statements = tuple(statements)
        self.deadline_s = deadline_s
        self._link: Link | None = getattr(lender, "link", None)
        self._name = lender.info.parameter_status("application_name")
        self._done = threading.Event()
        self._answer: dict[Hashable, QueryResult] = {}

    def _as_lender(self, conn: psycopg.Connection) -> None:
        if self._name is not None:  # first: pg_stat_activity names the lender at once
            psycopg.Cursor(conn).execute(
                "SELECT set_config('application_name', %s, true)", [self._name], prepare=False
            )
        if self._link is not None:
            self._link.impose(conn)

    def serve(self, conn: psycopg.Connection) -> None:
        """Run the statements on `conn` (the serving thread's). Raises when that connection is lost:
        the answer is then empty, and the lender sends them again on its own."""
        try:
            self._answer = pipeline.run(conn, self.statements, self._as_lender)
        finally:
            self._done.set()

    def drop(self) -> None:
        """Not served (the counter closed, or it could not run them): an empty answer."""
        self._done.set()

    def answer(self, timeout_s: float | None) -> dict[Hashable, QueryResult]:
        """Each statement's rows or its own error, once served; {} when not served within
        `timeout_s` or the serving connection was lost (then it may still be running there: its
        statement_timeout, the lender's, ends it)."""
        if not self._done.wait(timeout_s):
            return {}
        return dict(self._answer)
