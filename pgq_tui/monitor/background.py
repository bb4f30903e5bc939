"""The background exact count: what the poll cannot afford, counted on the side.

A poll counts each queue-and-state only up to the cap (its cost must stay bounded by the cap, not the
table). When a count passes the cap, the poll asks this counter for the count names involved; a
daemon thread then runs the dialect's own count statements that read them with no cap (`cap1` NULL),
all of them as ONE statement (one_statement(): every count from one snapshot, in autocommit READ
COMMITTED, no transaction around several statements), on its own connection with its own
statement_timeout (the time budget), so a slow count never delays a poll and never holds the poll's
connection. The same statement reads the activity statement's max id and the rows new since the
previous count (for completion rates of queues too deep to count every poll). Its results are exact
as of that snapshot and are shown as stale, with their age, until the next one lands. Like every
statement the monitor runs, it holds back the xmin horizon for its own duration only: at most the
statement_timeout (`budget_ms`, 20 s by default), never between statements.

The same thread runs the statements no index serves (scans) when the relation is too big to scan in
the poll (monitor/tiers.py): counts uncapped, lists with their LIMIT. Each scan is its own statement
in autocommit, so it too holds back the xmin horizon for its own duration only (at most the
statement_timeout), never for the whole pass. Their figures are exact as of the moment before the
first scan of the pass started (`as_of`, conservative).

Pacing: after a count that took `cost`, the next waits max(min_interval_s, cost * (1 - duty) / duty),
so the counter keeps at most `duty` of one backend busy; a pass with scans uses at most SCAN_DUTY
(10%: it sleeps at least 9x its cost). A new state passing the cap is counted at once.
A failed count (its statement_timeout, a lost connection, rows it cannot read: a dialect's bug, said with
the error's class) is reported and retried after twice the wait: the thread never stops on an error.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.dialects.contract import COUNT_KEY, OLDEST_READY, QueueModel, Statement
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.errors import PgqError, first_line, unexpected
from pgq_tui.monitor.counting import DEPTH, FIELD, BackgroundCount, depth_of, names_of
from pgq_tui.monitor.tiers import SCAN_DUTY

__all__ = ["BackgroundCount", "BackgroundCounter", "pacing_wait", "parse", "scan_names", "statements_for"]

APPLICATION_NAME = "pgq-top counts"
ALL_IDS = 1 << 62  # the activity statement's max_span when the background reads every new id


def pacing_wait(cost_s: float, min_interval_s: float, duty: float) -> float:
    """Seconds to wait after a count that took `cost_s`, keeping the counter busy at most `duty`.

    >>> pacing_wait(0.1, 2.0, 0.25), pacing_wait(3.0, 2.0, 0.25)
    (2.0, 9.0)
    """
    return max(min_interval_s, cost_s * (1.0 - duty) / duty)


def statements_for(model: QueueModel, names: frozenset[str]) -> tuple[tuple[Statement, ...], frozenset[str]]:
    """The indexed count statements that read any of `names` (all of the depth when any depth state
    is wanted: one snapshot for the whole depth, so depth deltas are exact), and every name they
    read. Scans are never in it: they run apart (`BackgroundCounter.want`'s `scans`)."""
    if names & DEPTH:
        names |= DEPTH
    chosen = tuple(s for s in model.counts if s.indexed and names_of(s) & names)
    return chosen, frozenset(n for s in chosen for n in names_of(s))


def scan_names(scans: Iterable[Statement]) -> frozenset[str]:
    """What a pass over these scans covers: count names, `list:<statement>` for a list, and
    OLDEST_READY for a scan that reads the oldest ready job's age (a pass that found no ready job has
    no row for it: covered, nothing waiting, which is not the same as not yet read).

    >>> d, o = Statement.of("d", "", ("queue", "dead")), Statement.of("o", "", ("queue", OLDEST_READY))
    >>> sorted(scan_names([d, o, Statement.of("l", "", ("id",))]))
    ['dead', 'list:l', 'oldest_ready_age_s']
    """
    out: set[str] = set()
    for s in scans:
        out |= {f"list:{s.name}"} if is_list(s) else names_of(s)
        if OLDEST_READY in s.columns:
            out.add(OLDEST_READY)
    return frozenset(out)


def is_list(statement: Statement) -> bool:
    """A lease or dead list (rows of jobs, `id` first), not a count."""
    return statement.columns[:1] == ("id",)


def parse(
    rows: Iterable[dict[str, Any]],
    groups: frozenset[str],
    as_of: datetime,
    cost_ms: float,
    activity: Iterable[dict[str, Any]] = (),
) -> BackgroundCount:
    """Uncapped count rows (and the activity rows of the same snapshot) -> a BackgroundCount keyed by
    (queue, count name), with each queue's oldest ready age (the largest any row gives: several
    statements or partitions may each read some of the queue's ready jobs). Pure.

    >>> from datetime import datetime, timezone
    >>> t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> a, b = {"queue": "a", "ready": 3, OLDEST_READY: 60.0}, {"queue": "a", "ready": 1, OLDEST_READY: 90.0}
    >>> rows = [a, b]
    >>> bg = parse(rows, frozenset({"ready", OLDEST_READY}), t, 1.0)
    >>> bg.counts, bg.oldest
    ({('a', 'ready'): 4}, {'a': 90.0})
    """
    counts: dict[tuple[str, str], int] = {}
    oldest: dict[str, float] = {}
    for r in rows:
        for key, value in r.items():
            if key == COUNT_KEY or value is None:
                continue
            queue = str(r[COUNT_KEY])
            if key == OLDEST_READY:
                oldest[queue] = max(oldest.get(queue, 0.0), float(value))
                continue
            k = (queue, FIELD.get(key, key))
            counts[k] = counts.get(k, 0) + int(value)
    new: dict[str, int] = {}
    max_id = 0
    for r in activity:
        if r["kind"] == "top":
            max_id = int(r["n"])
        elif r["kind"] == "new":
            new[str(r["queue"])] = new.get(str(r["queue"]), 0) + int(r["n"])
    return BackgroundCount(as_of, cost_ms, groups, counts, max_id, new, oldest=oldest)


NOW, COUNTS, ACTIVITY = "now", "counts", "activity"  # the parts of one_statement()'s rows


def one_statement(statements: Iterable[Statement], activity: Statement | None = None) -> sql.Composed:
    """The count statements and the activity statement as ONE statement, each one's rows as jsonb
    tagged with its part, after one row with now(): one snapshot for all of them (every count from
    the same moment, so depth deltas and the max id agree) without a transaction around several
    statements, which would hold the xmin horizon for the whole pass.

    >>> q = one_statement([Statement.of("c", "SELECT 1 AS n;")]).as_string(None)
    >>> print(q)
    SELECT 'now'::text AS part, NULL::jsonb AS row, now() AS at
    UNION ALL
    SELECT 'counts', to_jsonb("s0"), NULL FROM (
    SELECT 1 AS n
    ) "s0"
    """
    tagged = [(COUNTS, s) for s in statements] + ([(ACTIVITY, activity)] if activity is not None else [])
    parts: list[sql.Composable] = [sql.SQL("SELECT 'now'::text AS part, NULL::jsonb AS row, now() AS at")]
    for i, (part, statement) in enumerate(tagged):
        body = dataclasses.replace(statement, text=statement.text.strip().rstrip(";"))
        parts.append(
            sql.SQL("SELECT {part}, to_jsonb({alias}), NULL FROM (\n{body}\n) {alias}").format(
                part=sql.Literal(part), alias=sql.Identifier(f"s{i}"), body=body.compose()
            )
        )
    return sql.SQL("\nUNION ALL\n").join(parts)


class BackgroundCounter:
    """Thread-safe: the poll calls `want()` and `latest()`; one daemon thread does the counting."""

    def __init__(
        self,
        conninfo: str,
        model: QueueModel,
        *,
        budget_ms: int = 20_000,
        min_interval_s: float = 2.0,
        duty: float = 0.25,
        read_only: bool = False,
        list_rows: int = 50,
    ) -> None:
        self.model = model
        self.list_rows = list_rows  # rows per list a background scan reads (the monitor's lease_rows)
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
        self._scans: tuple[Statement, ...] = ()  # statements no index serves, run one by one

    # -- the poll's side --------------------------------------------------------------------------
    def want(self, groups: frozenset[str], scans: tuple[Statement, ...] = ()) -> None:
        """The count names that passed the cap at this poll, and the scans the poll leaves to the
        background (a relation too big to scan in the poll); both empty: the counter idles."""
        if groups:
            groups = statements_for(self.model, groups)[1] | groups
        groups |= scan_names(scans)
        with self._cond:
            self._scans = scans
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
                scans = self._scans
                previous = self._latest
                self._running = True
                started_at = time.monotonic()
            started = time.perf_counter()
            try:
                result = self._count(groups - scan_names(scans), previous, scans)
                error = None
            except (psycopg.Error, PgqError) as exc:
                result, error = None, first_line(exc)
                if not self._session.usable:
                    self._session.close()
            except Exception as exc:  # rows it cannot read (a bug): said, retried
                result, error = None, unexpected(exc)
                if not self._session.usable:
                    self._session.close()
            cost_s = time.perf_counter() - started
            with self._cond:
                self._running = False
                duty = min(self.duty, SCAN_DUTY) if scans else self.duty
                wait = pacing_wait(cost_s, self.min_interval_s, duty)
                if result is not None:
                    self._latest, self._error, self._last_wait = result, None, wait
                    self._started_at = started_at
                else:
                    self._error, wait = error, 2 * wait
                self._next_at = time.monotonic() + wait
                self._cond.notify_all()

    def _count(
        self, groups: frozenset[str], previous: BackgroundCount | None, scans: tuple[Statement, ...] = ()
    ) -> BackgroundCount:
        conn = self._active = self._session.conn
        # the session deadline covers the counts' transaction and each scan after it (each bounded
        # by the counter's statement_timeout)
        with self._session.deadline(self.budget_ms / 1000 * (1 + len(scans)) + 10):
            return self._count_on(conn, groups, previous, scans)

    def _count_on(
        self,
        conn: psycopg.Connection,
        groups: frozenset[str],
        previous: BackgroundCount | None,
        scans: tuple[Statement, ...],
    ) -> BackgroundCount:
        statements, names = statements_for(self.model, groups) if groups else ((), frozenset[str]())
        activity = self.model.activity
        started = time.perf_counter()
        rows: list[dict[str, Any]] = []
        seen: list[dict[str, Any]] = []
        lists: dict[str, list[dict[str, Any]]] = {}
        scanned = scan_names(scans)
        as_of = None
        if statements:
            # one snapshot for every count and the activity rows: one statement (autocommit, READ
            # COMMITTED), never a transaction around several, so the xmin horizon is held for the
            # length of that one statement only (at most the statement_timeout, `budget_ms`)
            after = (previous.max_id or None) if previous is not None else None
            params = {**DEFAULTS, "cap1": None, "after": after, "max_span": ALL_IDS, "gap_rows": 0}
            with conn.cursor(row_factory=dict_row) as cur:
                counted = cur.execute(one_statement(statements, activity), {**params, "lo": [], "hi": []})
                for r in counted.fetchall():
                    if r["part"] == NOW:
                        as_of = r["at"]
                    else:
                        (rows if r["part"] == COUNTS else seen).append(r["row"])
        # The scans after it, each its own autocommit statement (its own snapshot and timeout): their
        # figures are exact as of a moment after `as_of`, which is therefore a conservative age.
        with conn.cursor(row_factory=dict_row) as cur:
            if as_of is None:
                as_of = cur.execute("SELECT now() AS now").fetchone()["now"]  # type: ignore[index]
            for statement in scans:
                scan_params = {**DEFAULTS, "cap1": None, "rows": self.list_rows}
                got = cur.execute(statement.compose(), scan_params).fetchall()
                if is_list(statement):
                    lists[statement.name] = got
                else:
                    rows += got
        cost_ms = (time.perf_counter() - started) * 1000
        result = parse(rows, names | scanned, as_of, cost_ms, seen)
        result = dataclasses.replace(result, depth=depth_of(self.model), scanned=scanned, lists=lists)
        if not statements:  # no snapshot of the depth, no activity: no rates from this one
            return dataclasses.replace(result, new=None, previous=None)
        # Keep one count back (rates need two), not the whole chain.
        back = dataclasses.replace(previous, previous=None) if previous is not None else None
        return dataclasses.replace(result, new=result.new if back is not None else None, previous=back)
