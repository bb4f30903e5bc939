"""The background exact count: what the poll cannot afford, counted on the side.

A poll counts each queue-and-state only up to the cap (its cost must stay bounded by the cap, not the
table). When a count passes the cap, the poll asks this counter for the states involved; a daemon
thread then runs one `count(*)` statement (queue_counts_background.sql) on its own connection, with
its own statement_timeout (the time budget), so a slow count never delays a poll and never holds the
poll's connection. Its results are exact as of the statement's snapshot and are shown as stale, with
their age, until the next one lands.

Pacing: after a count that took `cost`, the next waits max(min_interval_s, cost * (1 - duty) / duty),
so the counter keeps at most `duty` of one backend busy. A new state passing the cap is counted at once.
A failed count (its statement_timeout, a lost connection) is reported and retried after twice the wait.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.errors import PgqError, first_line
from pgq_tui.monitor import queries

GROUPS = ("pending", "running", "failed", "done")  # what one branch of the statement counts
DEPTH_GROUPS = frozenset(("pending", "running", "failed"))  # counted together: one consistent depth
APPLICATION_NAME = "pgq-top counts"


@dataclass(frozen=True)
class BackgroundCount:
    """One background count: exact values as of `as_of` for the states in `groups`."""

    as_of: datetime
    cost_ms: float
    groups: frozenset[str]
    counts: dict[tuple[str, str], int]  # (queue, field) -> rows; absent with its group counted: 0
    max_id: int
    new: dict[str, int] | None = None  # rows per queue with ids above the previous count's max_id
    previous: BackgroundCount | None = field(default=None, repr=False)  # for rates over two counts

    def value(self, queue: str, name: str, group: str) -> int | None:
        return self.counts.get((queue, name), 0) if group in self.groups else None


def pacing_wait(cost_s: float, min_interval_s: float, duty: float) -> float:
    """Seconds to wait after a count that took `cost_s`, keeping the counter busy at most `duty`.

    >>> pacing_wait(0.1, 2.0, 0.25), pacing_wait(3.0, 2.0, 0.25)
    (2.0, 9.0)
    """
    return max(min_interval_s, cost_s * (1.0 - duty) / duty)


def parse(rows: Iterable[dict[str, Any]], groups: frozenset[str], cost_ms: float) -> BackgroundCount:
    """The statement's rows (as_of, field, queue, n) as a BackgroundCount (pure)."""
    counts: dict[tuple[str, str], int] = {}
    new: dict[str, int] = {}
    max_id, as_of = 0, None
    for r in rows:
        as_of = r["as_of"]
        if r["field"] == "max_id":
            max_id = int(r["n"])
        elif r["field"] == "new":
            new[r["queue"]] = int(r["n"])
        else:
            counts[(r["queue"], r["field"])] = int(r["n"])
    assert as_of is not None, "the max_id row is always there"
    return BackgroundCount(as_of, cost_ms, groups, counts, max_id, new)


class BackgroundCounter:
    """Thread-safe: the poll calls `want()` and `latest()`; one daemon thread does the counting."""

    def __init__(
        self,
        conninfo: str,
        table: str,
        schema: str,
        *,
        budget_ms: int = 20_000,
        min_interval_s: float = 2.0,
        duty: float = 0.25,
        read_only: bool = False,
    ) -> None:
        self.table, self.schema = table, schema
        self.budget_ms = budget_ms
        self.min_interval_s = min_interval_s
        self.duty = duty
        self._session = Session(
            conninfo,
            application_name=APPLICATION_NAME,
            autocommit=True,
            statement_timeout_ms=budget_ms,
            lock_timeout_ms=1000,
            read_only=read_only,
        )
        self._cond = threading.Condition()
        self._wanted: frozenset[str] = frozenset()
        self._latest: BackgroundCount | None = None
        self._error: str | None = None
        self._next_at = 0.0  # monotonic time the next count may start
        self._asked_at = 0.0  # when the wanted states last grew
        self._started_at = 0.0  # when the latest count started
        self._last_wait = min_interval_s
        self._running = False  # a count is in flight
        self._thread: threading.Thread | None = None
        self._closed = False
        self._active: psycopg.Connection | None = None  # the connection a count runs on (to cancel)

    # -- the poll's side --------------------------------------------------------------------------
    def want(self, groups: frozenset[str]) -> None:
        """The states whose counts passed the cap at this poll (empty: the counter idles)."""
        if groups & DEPTH_GROUPS:
            groups |= DEPTH_GROUPS  # one snapshot for the whole depth, so depth deltas are exact
        with self._cond:
            if groups - self._wanted:
                self._next_at = 0.0  # a state newly over the cap: count it now
                self._asked_at = time.monotonic()
            self._wanted = groups
            if groups and self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="pgq-top counts", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    @property
    def wanted(self) -> frozenset[str]:
        with self._cond:
            return self._wanted

    def latest(self) -> BackgroundCount | None:
        with self._cond:
            return self._latest

    @property
    def error(self) -> str | None:
        with self._cond:
            return self._error

    @property
    def max_lag_s(self) -> float:
        """How old a background figure gets before the next one lands: the pacing wait plus the next
        count, taken as twice the last one's cost (the budget before any count has finished). The hard
        bound is the wait plus the budget: a count that overruns it fails and says so."""
        with self._cond:
            cost_s = 2 * self._latest.cost_ms / 1000 if self._latest else self.budget_ms / 1000
            return self._last_wait + cost_s

    def wait_for(self, groups: frozenset[str], timeout: float) -> bool:
        """Block until a count covering `groups`, started after they were asked for, has landed;
        False after `timeout` or when a count failed."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._closed:
                latest = self._latest
                if latest is not None and groups <= latest.groups and self._started_at >= self._asked_at:
                    return True
                if self._error is not None and not self._running:
                    return False
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return False

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            running = self._running
        conn = self._active
        if running and conn is not None:
            with contextlib.suppress(Exception):  # best effort: the statement_timeout ends it anyway
                conn.cancel_safe(timeout=1.0)
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._session.close()

    # -- the counting thread ----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._closed and (not self._wanted or time.monotonic() < self._next_at):
                    self._cond.wait(None if not self._wanted else max(0.01, self._next_at - time.monotonic()))
                if self._closed:
                    return
                groups = self._wanted
                previous = self._latest
                self._running = True
                started_at = time.monotonic()
            started = time.perf_counter()
            try:
                result = self._count(groups, previous)
                error = None
            except (psycopg.Error, PgqError) as exc:
                result, error = None, first_line(exc)
                if not self._session.usable:
                    self._session.close()
            cost_s = time.perf_counter() - started
            with self._cond:
                self._running = False
                wait = pacing_wait(cost_s, self.min_interval_s, self.duty)
                if result is not None:
                    self._latest, self._error, self._last_wait = result, None, wait
                    self._started_at = started_at
                else:
                    self._error, wait = error, 2 * wait
                self._next_at = time.monotonic() + wait
                self._cond.notify_all()

    def _count(self, groups: frozenset[str], previous: BackgroundCount | None) -> BackgroundCount:
        conn = self._active = self._session.conn
        version = conn.info.server_version
        params: dict[str, Any] = {g: g in groups for g in GROUPS}
        params["after"] = previous.max_id if previous is not None else None
        started = time.perf_counter()
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(queries.query("queue_counts_background", version, self.table, self.schema), params)
            rows = cur.fetchall()
        result = parse(rows, groups, (time.perf_counter() - started) * 1000)
        # Keep one count back (rates need two), not the whole chain.
        back = dataclasses.replace(previous, previous=None) if previous is not None else None
        return dataclasses.replace(result, new=result.new if back is not None else None, previous=back)
