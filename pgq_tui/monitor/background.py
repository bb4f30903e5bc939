"""The background exact count: what the poll cannot afford, counted on the side (docs/background.md).

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
in autocommit, so it too holds back the xmin horizon for its own duration only.

Each statement (the indexed counts' one statement, each scan) lands or fails on its own: what landed
is kept with its own as_of (BackgroundCount.as_of_by; a scan's is the moment just before it started),
what failed says why per figure (BackgroundCount.failed) and keeps its last value, stale with its true
as_of; merge() makes one BackgroundCount of them.

Pacing, per statement by its own measured cost: after a run that took `cost`, that statement waits
max(min_interval_s, cost * (1 - duty) / duty), and the whole counter rests cost * (1 - duty) / duty
before its next statement, so it keeps at most `duty` of one backend busy; scans (and the indexed
counts while scans are wanted) use SCAN_DUTY (10%). The cap has hysteresis (held()): a name over the cap
stays wanted while the poll reads at least half the cap and HOLD_POLLS polls more; a name newly over it
is counted at once, at most once per pacing window. A failed statement is retried after twice its wait.

A lost link (a terminated backend, a restart) ends nothing: the counter's session is closed and
reopened on the next try, after a backoff (backoff(): the pacing floor, doubling, at most 30 s); the
figures keep their true as_of meanwhile. The counter's lifetime is its owner's: only Monitor.close()
closes it, never a failed poll. The thread never stops on an error.
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
from pgq_tui.monitor.counting import DEPTH, FAILED, FIELD, BackgroundCount, depth_of, names_of
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
    """What a pass over these scans covers: count names, and `list:<statement>` for a list.

    >>> sorted(scan_names([Statement.of("d", "", ("queue", "dead")), Statement.of("l", "", ("id",))]))
    ['dead', 'list:l']
    """
    out: set[str] = set()
    for s in scans:
        out |= {f"list:{s.name}"} if is_list(s) else names_of(s)
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
    (queue, count name). Pure."""
    counts: dict[tuple[str, str], int] = {}
    for r in rows:
        for key, value in r.items():
            if key in (COUNT_KEY, OLDEST_READY) or value is None:
                continue
            k = (str(r[COUNT_KEY]), FIELD.get(key, key))
            counts[k] = counts.get(k, 0) + int(value)
    new: dict[str, int] = {}
    max_id = 0
    for r in activity:
        if r["kind"] == "top":
            max_id = int(r["n"])
        elif r["kind"] == "new":
            new[str(r["queue"])] = new.get(str(r["queue"]), 0) + int(r["n"])
    return BackgroundCount(as_of, cost_ms, groups, counts, max_id, new)


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


COUNTS_PART = "counts"  # the part that runs every indexed count as one statement; a scan's is its name
HOLD_POLLS = 5  # polls a wanted count name stays wanted once it has fallen below half the cap
BACKOFF_MAX_S = 30.0  # the longest wait between two tries of a lost link


def backoff(failures: int, first_s: float) -> float:
    """Seconds before the next try after `failures` failed tries in a row (a lost link): doubling
    from `first_s`, at most BACKOFF_MAX_S.

    >>> [backoff(n, 0.5) for n in (1, 2, 3, 10)]
    [0.5, 1.0, 2.0, 30.0]
    """
    return min(BACKOFF_MAX_S, first_s * 2.0 ** (max(1, failures) - 1))


def held(
    quiet: dict[str, int], over: frozenset[str], near: frozenset[str], hold: int = HOLD_POLLS
) -> dict[str, int]:
    """The cap's hysteresis: count name -> polls it has been below half the cap. A name over the cap
    (`over`) is wanted; it stays wanted while it is at least half the cap (`near`), and `hold` polls
    more; a count hovering around the cap therefore never leaves and re-enters. Pure.

    >>> q = held({}, frozenset({"ready"}), frozenset({"ready"}))
    >>> q = held(q, frozenset(), frozenset({"ready"})); q
    {'ready': 0}
    >>> for _ in range(4): q = held(q, frozenset(), frozenset())
    >>> q, held(q, frozenset(), frozenset())
    ({'ready': 4}, {})
    """
    out: dict[str, int] = {}
    for name in set(quiet) | over:
        polls = 0 if name in over or name in near else quiet.get(name, 0) + 1
        if polls < hold:
            out[name] = polls
    return out


def merge(
    counts: BackgroundCount | None,
    scans: Iterable[BackgroundCount],
    failed: dict[str, str],
    depth: frozenset[str],
) -> BackgroundCount | None:
    """One BackgroundCount from what each statement last landed: the indexed counts' one snapshot
    (its as_of, max id and new rows carry the rates) and each scan, every scanned name with its own
    as_of (`as_of_by`); `failed`: name -> why its statement's last try failed. None before anything
    landed. Pure."""
    scans = list(scans)
    if counts is None and not scans:
        return None
    values: dict[tuple[str, str], int] = dict(counts.counts) if counts is not None else {}
    groups = set(counts.groups) if counts is not None else set()
    scanned: set[str] = set()
    as_of_by: dict[str, datetime] = {}
    lists: dict[str, list[dict[str, Any]]] = {}
    cost_ms = counts.cost_ms if counts is not None else 0.0
    for scan in scans:
        for key, n in scan.counts.items():
            values[key] = values.get(key, 0) + n
        for name in scan.groups:  # two scans of one name (partitions): as of the older
            as_of_by[name] = min(as_of_by.get(name, scan.as_of), scan.as_of)
        groups |= scan.groups
        scanned |= scan.groups
        lists.update(scan.lists)
        cost_ms += scan.cost_ms
    if counts is None:
        base = BackgroundCount(min(s.as_of for s in scans), 0.0, frozenset(), {}, 0, depth=depth)
    else:
        base = counts
    return dataclasses.replace(
        base,
        cost_ms=cost_ms,
        groups=frozenset(groups),
        counts=values,
        scanned=frozenset(scanned),
        lists=lists,
        as_of_by=as_of_by,
        failed=dict(failed),
    )


@dataclasses.dataclass
class _Part:
    """One background statement's record (kept by the counting thread, under the counter's lock)."""

    due: float = 0.0  # monotonic time it may start next
    wait_s: float = 0.0  # its last pacing wait
    cost_s: float = 0.0  # its last measured cost
    error: str | None = None  # why its last try failed (None: it landed)
    landed: BackgroundCount | None = None  # its last result, kept through later failures
    started_at: float = -1.0  # monotonic start of the run that landed `landed`


class BackgroundCounter:
    """Thread-safe: the poll calls `want()` and `latest()`; one daemon thread does the counting.

    Its lifetime is its owner's (the Monitor closes it in `Monitor.close()`, nowhere else): a poll that
    lost its link leaves it running, and its own session reconnects with backoff."""

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
        self._quiet: dict[str, int] = {}  # wanted count name -> polls below half the cap (held())
        self._names: frozenset[str] = frozenset()  # the count names the indexed counts part reads
        self._scans: dict[str, Statement] = {}  # statements no index serves, each run on its own
        self._wanted: frozenset[str] = frozenset()
        self._parts: dict[str, _Part] = {}
        self._latest: BackgroundCount | None = None
        self._asked_at = 0.0  # when the wanted figures last grew
        self._idle_until = 0.0  # monotonic: the duty's rest after the last statement, or the link's backoff
        self._link_error: str | None = None  # the link is lost: why (cleared when a statement lands)
        self._link_failures = 0  # tries in a row that found no link
        self._early = False  # a name newly over the cap: the counts part may run once before its time
        self._early_after = 0.0  # monotonic: no other early run before then (one per pacing window)
        self._busy_s = 0.0  # the time spent running statements, all told (the measured duty's numerator)
        self._running: str | None = None  # the part in flight
        self._thread: threading.Thread | None = None
        self._closed = False
        self._active: psycopg.Connection | None = None  # the connection a count runs on (to cancel)

    # -- the poll's side --------------------------------------------------------------------------
    def want(
        self, groups: frozenset[str], scans: tuple[Statement, ...] = (), near: frozenset[str] = frozenset()
    ) -> None:
        """The count names that passed the cap at this poll (`groups`; `near`: those at least half
        the cap, for the hysteresis: held()), and the scans the poll leaves to the background (a
        relation too big to scan in the poll); nothing wanted: the counter idles."""
        with self._cond:
            now = time.monotonic()
            self._quiet = held(self._quiet, groups, near | groups)
            raw = frozenset(self._quiet)
            names = statements_for(self.model, raw)[1] | raw if raw else frozenset[str]()
            by_name = {s.name: s for s in scans}
            if names - self._names or by_name.keys() - self._scans.keys():
                self._asked_at = now
            if names - self._names and now >= self._early_after:
                self._early = True  # a state newly over the cap: counted at once, once per window
            self._names, self._scans = names, by_name
            self._wanted = names | scan_names(by_name.values())
            if self._wanted and self._thread is None and not self._closed:
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
        """The lost link's error, else the first failing statement's (None: everything landed)."""
        with self._cond:
            if self._link_error is not None:
                return self._link_error
            return next((p.error for k, p in self._parts.items() if p.error and k in self._keys()), None)

    @property
    def busy_s(self) -> float:
        """Seconds spent running statements since the counter started (its measured duty: the
        difference over a window, divided by the window)."""
        with self._cond:
            return self._busy_s

    @property
    def max_lag_s(self) -> float:
        """How old a background figure gets before the next one lands: its statement's pacing wait,
        or one round of every landed statement at its duty when that is longer, plus the next run,
        taken as twice the costliest last one (the budget before one has landed). The hard bound adds
        the budget: a statement that overruns it fails and says so."""
        with self._cond:
            landed = [(k, p) for k in self._keys() if (p := self._parts.get(k)) and p.landed is not None]
            cycle = sum(p.cost_s / self._duty(k) for k, p in landed)
            waits = [p.wait_s for _, p in landed]
            run = 2 * max(p.cost_s for _, p in landed) if landed else self.budget_ms / 1000
            return max([self.min_interval_s, cycle, *waits]) + run

    def wait_for(self, groups: frozenset[str], timeout: float) -> bool:
        """Block until every statement covering `groups` has landed a run started after they were
        asked for; False after `timeout`, or when one of them failed (and the rest are done)."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while not self._closed:
                settled = self._settled(groups)
                if settled is not None:
                    return settled
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._cond.wait(left)
        return False

    def close(self) -> None:
        """End the counting thread and its session (the owner's call: Monitor.close())."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
            running = self._running is not None
        conn = self._active
        if running and conn is not None:
            with contextlib.suppress(Exception):  # best effort: the statement_timeout ends it anyway
                conn.cancel_safe(timeout=1.0)
        if self._thread is not None:
            self._thread.join(timeout=2.0)
        self._session.close()

    # -- bookkeeping (under the lock) -------------------------------------------------------------
    def _keys(self) -> list[str]:
        """The parts wanted now: the indexed counts (when any name is), then each scan."""
        return ([COUNTS_PART] if self._names else []) + list(self._scans)

    def _duty(self, key: str) -> float:
        """A scan's share of one backend: SCAN_DUTY; the indexed counts' too while scans are wanted
        (the counter as a whole then stays within it), else the counter's own `duty`."""
        return min(self.duty, SCAN_DUTY) if key != COUNTS_PART or self._scans else self.duty

    def _covers(self, key: str) -> frozenset[str]:
        return self._names if key == COUNTS_PART else scan_names((self._scans[key],))

    def _settled(self, groups: frozenset[str]) -> bool | None:
        """True: every part covering `groups` landed since they were asked for; False: one failed
        and none is still to come; None: still waiting."""
        failed = False
        for key in self._keys():
            if not self._covers(key) & groups:
                continue
            part = self._parts.get(key)
            if part is not None and part.landed is not None and part.started_at >= self._asked_at:
                continue
            if part is not None and part.error is not None and self._running != key:
                failed = True
                continue
            return None
        return not failed

    def _next(self, now: float) -> str | None:
        """The part to run now: the counts part when newly over the cap (once per pacing window, and
        never while the link is in backoff), else the most overdue one once the duty's rest is over."""
        keys = self._keys()
        if self._link_failures and now < self._idle_until:
            return None
        if self._early and COUNTS_PART in keys:
            return COUNTS_PART
        if now < self._idle_until:
            return None
        due = [(self._parts[k].due if k in self._parts else 0.0, k) for k in keys]
        ready = [d for d in due if d[0] <= now]
        return min(ready)[1] if ready else None

    def _sleep(self, now: float) -> float | None:
        keys = self._keys()
        if not keys:
            return None
        first = min(self._parts[k].due if k in self._parts else 0.0 for k in keys)
        return max(0.01, max(first, self._idle_until) - now)

    def _failed_names(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for key in self._keys():
            part = self._parts.get(key)
            if part is not None and part.error is not None:
                out.update(dict.fromkeys(self._covers(key), f"{FAILED}{part.error}"))
        return out

    def _land(
        self,
        key: str,
        result: BackgroundCount | None,
        error: str | None,
        lost: bool,
        cost_s: float,
        started_at: float,
    ) -> None:
        part = self._parts.setdefault(key, _Part())
        duty = self._duty(key)
        wait = pacing_wait(cost_s, self.min_interval_s, duty)
        now = time.monotonic()
        self._busy_s += cost_s
        self._idle_until = now + cost_s * (1.0 - duty) / duty
        part.cost_s = cost_s
        if result is not None:
            part.landed, part.error, part.started_at, part.wait_s = result, None, started_at, wait
            part.due = now + wait
            self._link_error, self._link_failures = None, 0
        elif lost:  # no link: every part waits for it, with backoff; this one is first again
            part.error = error
            self._link_error, self._link_failures = error, self._link_failures + 1
            self._idle_until = now + backoff(self._link_failures, max(0.5, self.min_interval_s))
        else:  # this statement failed (its timeout, rows it cannot read): it alone is retried later
            part.error, part.due = error, now + 2 * wait
        if key == COUNTS_PART and self._early:
            self._early = False
            self._early_after = now + max(self.min_interval_s, wait)
        landed = [self._parts[k].landed for k in self._scans if k in self._parts]
        counts = self._parts.get(COUNTS_PART)
        self._latest = merge(
            counts.landed if counts is not None and self._names else None,
            (b for b in landed if b is not None),
            self._failed_names(),
            depth_of(self.model),
        )

    # -- the counting thread ----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                key = None if self._closed else self._next(time.monotonic())
                while not self._closed and key is None:
                    self._cond.wait(self._sleep(time.monotonic()))
                    key = None if self._closed else self._next(time.monotonic())
                if self._closed or key is None:
                    return
                names = self._names
                scan = self._scans.get(key)
                part = self._parts.get(COUNTS_PART)
                previous = part.landed if part is not None else None
                self._running = key
                started_at = time.monotonic()
            started = time.perf_counter()
            error = None
            result: BackgroundCount | None = None
            try:
                with self._session.deadline(self.budget_ms / 1000 + 10):
                    conn = self._active = self._session.conn
                    result = (
                        self._scan(conn, scan) if scan is not None else self._count(conn, names, previous)
                    )
            except (psycopg.Error, PgqError) as exc:
                error = first_line(exc)
            except Exception as exc:  # rows it cannot read (a bug): said, retried
                error = unexpected(exc)
            lost = error is not None and not self._session.usable
            if lost:
                self._session.close()  # the counter's own session: the next try reconnects
            cost_s = time.perf_counter() - started
            with self._cond:
                self._running = None
                self._land(key, result, error, lost, cost_s, started_at)
                self._cond.notify_all()

    def _count(
        self, conn: psycopg.Connection, groups: frozenset[str], previous: BackgroundCount | None
    ) -> BackgroundCount:
        """Every indexed count reading `groups`, and the activity rows, as ONE statement: one
        snapshot (autocommit, READ COMMITTED), never a transaction around several, so the xmin
        horizon is held for that one statement only (at most the statement_timeout, `budget_ms`)."""
        statements, names = statements_for(self.model, groups)
        started = time.perf_counter()
        rows: list[dict[str, Any]] = []
        seen: list[dict[str, Any]] = []
        as_of = None
        after = (previous.max_id or None) if previous is not None else None
        params = {**DEFAULTS, "cap1": None, "after": after, "max_span": ALL_IDS, "gap_rows": 0}
        with conn.cursor(row_factory=dict_row) as cur:
            counted = cur.execute(
                one_statement(statements, self.model.activity), {**params, "lo": [], "hi": []}
            )
            for r in counted.fetchall():
                if r["part"] == NOW:
                    as_of = r["at"]
                else:
                    (rows if r["part"] == COUNTS else seen).append(r["row"])
        assert as_of is not None  # the first row of one_statement()
        cost_ms = (time.perf_counter() - started) * 1000
        result = dataclasses.replace(parse(rows, names, as_of, cost_ms, seen), depth=depth_of(self.model))
        if not statements:  # no snapshot of the depth: no rates from this one
            return dataclasses.replace(result, new=None, previous=None)
        # Keep one count back (rates need two), not the whole chain.
        back = dataclasses.replace(previous, previous=None) if previous is not None else None
        return dataclasses.replace(result, new=result.new if back is not None else None, previous=back)

    def _scan(self, conn: psycopg.Connection, statement: Statement) -> BackgroundCount:
        """One statement no index serves, on its own (autocommit: its own snapshot and timeout): its
        figures are exact as of the moment before it started (`as_of`, read just before)."""
        started = time.perf_counter()
        names = scan_names((statement,))
        with conn.cursor(row_factory=dict_row) as cur:
            as_of = cur.execute("SELECT now() AS now").fetchone()["now"]  # type: ignore[index]
            got = cur.execute(
                statement.compose(), {**DEFAULTS, "cap1": None, "rows": self.list_rows}
            ).fetchall()
        cost_ms = (time.perf_counter() - started) * 1000
        if is_list(statement):
            return BackgroundCount(as_of, cost_ms, names, {}, 0, lists={statement.name: got}, scanned=names)
        return dataclasses.replace(parse(got, names, as_of, cost_ms), scanned=names, new=None)
