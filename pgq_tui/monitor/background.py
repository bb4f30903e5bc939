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

Pacing: one budget, DUTY (4%) of one backend for the whole counter (the latency pass has 0.5%), split
by urgency. The figures an
incident turns on (the depth: ready, scheduled, running, stuck, dead; the oldest ready age; the lease
list) are URGENT and share 85% of it; the rest (done, the extra states, the dead list) share the
other 15% (each class gets the whole budget while the other is empty). Within a class every statement
runs once per class cycle, the class's summed last costs over its share, so a costly done count never
delays the stuck count behind it: after a run that took `cost`, a statement waits
max(min_interval_s, cycle - cost). The indexed counts are split the same way: the depth (and the
activity rows, for rates) as ONE statement, the other over-cap counts as another. The cap has
hysteresis (held()): a name over the cap stays wanted while the poll reads at least half the cap and
HOLD_POLLS polls more; a name newly over it is counted at once, at most once per pacing window. A
failed statement is retried after twice its wait.

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
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.dialects.contract import (
    COUNT_KEY,
    OLDEST_READY,
    PASS_COUNTS,
    PASS_PART,
    Pass,
    QueueModel,
    Statement,
)
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.errors import PgqError, first_line, unexpected
from pgq_tui.monitor.counting import DEPTH, FAILED, FIELD, BackgroundCount, Watched, depth_of, names_of
from pgq_tui.monitor.errand import Errand
from pgq_tui.monitor.pipeline import KeyedQuery

__all__ = ["BackgroundCount", "BackgroundCounter", "pacing_wait", "parse", "scan_names", "statements_for"]

APPLICATION_NAME = "pgq-top counts"
ALL_IDS = 1 << 62  # the activity statement's max_span when the background reads every new id
# All of pgq-top's background work stays within 5% of one backend (#35: <= 5% of a core at 10M rows;
# without parallel workers a 10M-row scan is CPU-bound: its busy time is its CPU time): the counter
# keeps at most DUTY of it busy, the latency pass (monitor/latency.py) LATENCY_DUTY.
DUTY = 0.04
# The latency pass's read is a walk of the hour where an index allows (0.7 s at 10M rows on pg-boss
# 12.38: about every 140 s at this duty): at 1% it ran every 84 s and the whole measured 5.17% of a core,
# the counter's own runs coming out above its 4% as its costs grow between them (4.18% measured)
LATENCY_DUTY = 0.005
# A background scan runs in its one backend: a parallel plan would add workers whose CPU the duty
# above does not see (a 10M-row scan took two, three times the CPU the pacing counted).
BACKGROUND_SETTINGS = {"max_parallel_workers_per_gather": "0"}
# A background statement starts just after a poll, not beside one: on a 2-core server, of 120 polls on
# pg-boss's 10M-row table, the four with a background count beside them took 34-44 ms (18 ms at the
# median), four of the slowest six. Polls further apart than ALIGN_MAX_GAP_S, or stopped, hold nothing.
ALIGN_MAX_GAP_S = 5.0
ERRAND = "the poll's statements"  # what the counter's session runs while it serves a lent Errand
SLOW_SHARE = 0.15  # of it, what the figures an incident does not turn on get while urgent ones are wanted
WATCH_ROWS = 1000  # running jobs a pass hands the poll to recheck, those whose lease runs out soonest


def pacing_wait(cost_s: float, min_interval_s: float, duty: float) -> float:
    """Seconds to wait after a count that took `cost_s`, keeping the counter busy at most `duty`.

    >>> pacing_wait(0.1, 2.0, 0.25), pacing_wait(3.0, 2.0, 0.25)
    (2.0, 9.0)
    """
    return max(min_interval_s, cost_s * (1.0 - duty) / duty)


def beside_poll(since_poll_s: float | None, poll_gap_s: float | None) -> float:
    """Seconds a due statement waits so that it starts just after a poll (in the first quarter of the
    polls' interval: one shorter than three quarters of it ends before the next poll), 0 to start
    now. The wait ends early when the next poll comes (want() wakes the thread); polls that stopped
    (none for 1.5 intervals), or that come further apart than ALIGN_MAX_GAP_S, hold nothing.

    >>> beside_poll(0.1, 1.0), beside_poll(0.6, 1.0), beside_poll(1.6, 1.0), beside_poll(3.0, 10.0)
    (0.0, 0.9, 0.0, 0.0)
    >>> beside_poll(None, None)  # before the second poll
    0.0
    """
    if since_poll_s is None or poll_gap_s is None or poll_gap_s > ALIGN_MAX_GAP_S:
        return 0.0
    if since_poll_s <= poll_gap_s / 4 or since_poll_s >= 1.5 * poll_gap_s:
        return 0.0
    return 1.5 * poll_gap_s - since_poll_s


def class_wait(cost_s: float, class_costs_s: float, share: float, min_interval_s: float) -> float:
    """Seconds a statement waits after a run that took `cost_s`, when every statement of its class
    (their last costs summing to `class_costs_s`, this one's included) runs once per class cycle and
    the class keeps at most `share` of one backend busy: the cycle less its own run, at least
    `min_interval_s`. A costly statement of the other class never lengthens this one's cycle.

    >>> class_wait(0.5, 1.0, 0.04, 2.0), class_wait(0.5, 0.5, 0.05, 2.0), class_wait(0.01, 0.01, 0.05, 2.0)
    (24.5, 9.5, 2.0)
    """
    return max(min_interval_s, class_costs_s / share - cost_s)


def statements_for(model: QueueModel, names: frozenset[str]) -> tuple[tuple[Statement, ...], frozenset[str]]:
    """The indexed count statements that read any of `names` (all of the depth when any depth state
    is wanted: one snapshot for the whole depth, so depth deltas are exact), and every name they
    read. Scans are never in it: they run apart (`BackgroundCounter.want`'s `scans`)."""
    if names & DEPTH:
        names |= DEPTH
    chosen = tuple(s for s in model.counts if s.indexed and names_of(s) & names)
    return chosen, frozenset(n for s in chosen for n in names_of(s))


def split_counts(
    statements: Iterable[Statement],
) -> dict[str, tuple[tuple[Statement, ...], frozenset[str]]]:
    """The indexed counts as the counter's count parts: COUNTS_PART, every statement that reads a
    depth state (one statement: one snapshot of the depth, with the activity rows), and SLOW_PART,
    the others (done, extra states: their cost, a walk of every finished row, must not pace the
    depth's). Each with the names it reads; an empty part is left out.

    >>> d, f = Statement.of("d", "", ("queue", "ready")), Statement.of("f", "", ("queue", "done"))
    >>> {k: (tuple(s.name for s in v[0]), sorted(v[1])) for k, v in split_counts([d, f]).items()}
    {'counts': (('d',), ['ready']), 'counts:slow': (('f',), ['done'])}
    """
    out: dict[str, tuple[tuple[Statement, ...], frozenset[str]]] = {}
    statements = tuple(statements)
    for key, chosen in (
        (COUNTS_PART, tuple(s for s in statements if names_of(s) & DEPTH)),
        (SLOW_PART, tuple(s for s in statements if not names_of(s) & DEPTH)),
    ):
        if chosen:
            out[key] = (chosen, frozenset(n for s in chosen for n in names_of(s)))
    return out


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


def fold_passes(scans: Iterable[Statement], passes: Iterable[Pass]) -> dict[str, Statement | Pass]:
    """The scans to run, by name: a Pass instead of the scans it covers when all of them are
    wanted (one read of the table instead of one each), the rest as they are.

    >>> c, l = Statement.of("c", "", ("queue", "running")), Statement.of("l", "", ("id",))
    >>> p = Pass(Statement.of("p", ""), (c, l))
    >>> list(fold_passes([c, l], [p])), list(fold_passes([c], [p]))
    (['p'], ['c'])
    """
    out: dict[str, Statement | Pass] = {s.name: s for s in scans}
    for p in passes:
        if all(c.name in out for c in p.covers):
            for c in p.covers:
                del out[c.name]
            out[p.statement.name] = p
    return out


def covered(scan: Statement | Pass) -> tuple[Statement, ...]:
    """The statements a scan part reads the figures of: a Pass's covered ones, else itself."""
    return scan.covers if isinstance(scan, Pass) else (scan,)


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


COUNTS_PART = "counts"  # the part that runs the depth's indexed counts as one statement; a scan's is its name
SLOW_PART = "counts:slow"  # the part that runs the other indexed counts over the cap (done, extras)
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
    slow: BackgroundCount | None = None,
) -> BackgroundCount | None:
    """One BackgroundCount from what each statement last landed: the depth's indexed counts' one
    snapshot (its as_of, max id and new rows carry the rates), the other indexed counts (`slow`: its
    names with its own as_of) and each scan, every scanned name with its own as_of (`as_of_by`);
    `failed`: name -> why its statement's last try failed. None before anything landed. Pure."""
    scans = list(scans)
    if counts is None and slow is None and not scans:
        return None
    values: dict[tuple[str, str], int] = dict(counts.counts) if counts is not None else {}
    groups = set(counts.groups) if counts is not None else set()
    scanned: set[str] = set()
    as_of_by: dict[str, datetime] = {}
    lists: dict[str, list[dict[str, Any]]] = {}
    oldest: dict[str, float] = dict(counts.oldest) if counts is not None else {}
    cost_ms = counts.cost_ms if counts is not None else 0.0
    watch: tuple[Watched, ...] = ()
    if slow is not None:
        values.update(slow.counts)
        groups |= slow.groups
        as_of_by.update(dict.fromkeys(slow.groups, slow.as_of))
        cost_ms += slow.cost_ms
    for scan in scans:
        for key, n in scan.counts.items():
            values[key] = values.get(key, 0) + n
        for queue, age in scan.oldest.items():  # several scans (partitions): the oldest of them
            oldest[queue] = max(oldest.get(queue, 0.0), age)
        for name in scan.groups:  # two scans of one name (partitions): as of the older
            as_of_by[name] = min(as_of_by.get(name, scan.as_of), scan.as_of)
        groups |= scan.groups
        scanned |= scan.groups
        lists.update(scan.lists)
        watch += scan.watch
        cost_ms += scan.cost_ms
    if counts is None:
        moments = [s.as_of for s in scans] + ([slow.as_of] if slow is not None else [])
        base = BackgroundCount(min(moments), 0.0, frozenset(), {}, 0, depth=depth)
    else:
        base = counts
    return dataclasses.replace(
        base,
        cost_ms=cost_ms,
        groups=frozenset(groups),
        counts=values,
        scanned=frozenset(scanned),
        lists=lists,
        oldest=oldest,
        as_of_by=as_of_by,
        failed=dict(failed),
        watch=watch,
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
        duty: float = DUTY,
        read_only: bool = False,
        list_rows: int = 50,
    ) -> None:
        self.model = model
        self.list_rows = list_rows  # rows per list a background scan reads (the monitor's lease_rows)
        self.budget_ms = budget_ms
        self.min_interval_s = min_interval_s
        self.duty = duty  # the whole counter's share of one backend (both classes: _share())
        self._session = Session(
            conninfo,
            application_name=APPLICATION_NAME,
            gucs=BACKGROUND_SETTINGS,
            autocommit=True,
            statement_timeout_ms=budget_ms,
            lock_timeout_ms=1000,
            read_only=read_only,
        )
        self._cond = threading.Condition()
        self._quiet: dict[str, int] = {}  # wanted count name -> polls below half the cap (held())
        # the indexed count parts wanted now (split_counts()): part -> (its statements, names read)
        self._counted: dict[str, tuple[tuple[Statement, ...], frozenset[str]]] = {}
        # statements no index serves, each run on its own (or several as one Pass: fold_passes())
        self._scans: dict[str, Statement | Pass] = {}
        self._wanted: frozenset[str] = frozenset()
        self._parts: dict[str, _Part] = {}
        self._latest: BackgroundCount | None = None
        self._asked_at = 0.0  # when the wanted figures last grew
        self._idle_until = 0.0  # monotonic: the lost link's backoff
        self._link_error: str | None = None  # the link is lost: why (cleared when a statement lands)
        self._link_failures = 0  # tries in a row that found no link
        self._early: set[str] = set()  # count parts with a name newly over the cap: run before their time
        self._early_after = 0.0  # monotonic: no other early run before then (one per pacing window)
        self._busy_s = 0.0  # the time spent running statements, all told (the measured duty's numerator)
        self._running: str | None = None  # the part in flight
        self._poll_at: float | None = None  # monotonic: the last poll (its want())
        self._poll_gap: float | None = None  # seconds between the last two polls
        self._thread: threading.Thread | None = None
        self._closed = False
        self._active: psycopg.Connection | None = None  # the connection a count runs on (to cancel)
        self._errand: Errand | None = None  # the poll's statements, lent: served before any part
        self._held = False  # a poll is on: its statements only, none of ours (hold(), release())
        self.lent = 0  # errands served (the poll's statements run here, beside its own)
        urgent_lists = (model.leases,) if model.leases is not None else ()
        self._urgent_names = DEPTH | {OLDEST_READY} | scan_names(urgent_lists)

    # -- the poll's side --------------------------------------------------------------------------
    def want(
        self, groups: frozenset[str], scans: tuple[Statement, ...] = (), near: frozenset[str] = frozenset()
    ) -> None:
        """The count names that passed the cap at this poll (`groups`; `near`: those at least half
        the cap, for the hysteresis: held()), and the scans the poll leaves to the background (a
        relation too big to scan in the poll); nothing wanted: the counter idles."""
        with self._cond:
            now = time.monotonic()
            if self._poll_at is not None:
                self._poll_gap = now - self._poll_at
            self._poll_at = now
            self._quiet = held(self._quiet, groups, near | groups)
            raw = frozenset(self._quiet)
            counted = split_counts(statements_for(self.model, raw)[0]) if raw else {}
            by_name = fold_passes(scans, self.model.passes)
            had = {k: names for k, (_, names) in self._counted.items()}
            grown = [k for k, (_, names) in counted.items() if names - had.get(k, frozenset())]
            if grown or by_name.keys() - self._scans.keys():
                self._asked_at = now
            if grown and now >= self._early_after:
                self._early |= set(grown)  # a state newly over the cap: counted at once, once per window
            self._counted, self._scans = counted, by_name
            names = frozenset(n for _, ns in counted.values() for n in ns)
            self._wanted = (names | raw if counted else frozenset()) | scan_names(scans)
            if self._wanted and self._thread is None and not self._closed:
                self._thread = threading.Thread(target=self._run, name="pgq-top counts", daemon=True)
                self._thread.start()
            self._cond.notify_all()

    def hold(self) -> int | None:
        """Keep this counter's session for the poll that starts now: until the statements it lends
        (lend()) have run there, or release(), none of the counter's own start. The session's
        backend pid (the poll's xmin holders leave it out: it is the poll), or None when it is not
        free this instant (no thread, no link, a statement of its own in flight): nothing is lent
        then. Not held to the poll's end: the counter's own statements are not delayed by the rest
        of the poll (its Python), only by the poll's statements."""
        with self._cond:
            if (
                self._closed
                or self._thread is None
                or self._running is not None
                or self._errand is not None
                or not self._session.usable
            ):
                return None
            self._held = True
            return self._session.pid

    def release(self) -> None:
        """The poll is over (it lent nothing, or failed first): the counter's own statements may run."""
        with self._cond:
            self._held = False
            self._cond.notify_all()

    def lend(
        self, statements: Sequence[KeyedQuery], lender: psycopg.Connection, deadline_s: float | None
    ) -> Errand | None:
        """Run the poll's `statements` on this counter's session now, beside the poll's own, as the
        poll's (`lender`: its connection, whose settings and name they run under; monitor/errand.py):
        an Errand to wait on, or None when the poll does not hold the session (hold(): it was free
        then, and nothing of the counter's has started since; one errand a hold). The counter's duty
        does not count it. `deadline_s`: past it the session is abandoned, as the poll's own would
        be."""
        with self._cond:
            if not self._held or self._closed:
                return None
            self._held = False  # the errand is served before any part of ours (_run), then ours run
            errand = self._errand = Errand(statements, lender, deadline_s)
            self._cond.notify_all()
            return errand

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
        then every other wanted statement may run first, then its own run (taken as twice the
        costliest: the budget before one has landed). The hard bound adds the budget: a statement
        that overruns it fails and says so."""
        with self._cond:
            landed = [p for k in self._keys() if (p := self._parts.get(k)) and p.landed is not None]
            if not landed:
                return self.min_interval_s + self.budget_ms / 1000
            waits = [p.wait_s for p in landed]
            costs = [p.cost_s for p in landed]
            return max([self.min_interval_s, *waits]) + sum(costs) + max(costs)

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
        """The parts wanted now: the indexed count parts, then each scan."""
        return list(self._counted) + list(self._scans)

    def _urgent(self, key: str) -> bool:
        """A part that reads a figure an incident turns on (the depth, the oldest ready age, the
        lease list); the others (done, extra states, the dead list) can wait longer."""
        return bool(self._covers(key) & self._urgent_names)

    def _share(self, key: str) -> float:
        """The share of one backend `key`'s class keeps at most: the whole budget while the other
        class wants nothing, else its part of it (SLOW_SHARE for the slow class)."""
        urgent = self._urgent(key)
        if all(self._urgent(k) == urgent for k in self._keys()):
            return self.duty
        return self.duty * (SLOW_SHARE if not urgent else 1.0 - SLOW_SHARE)

    def _covers(self, key: str) -> frozenset[str]:
        if key in self._counted:
            return self._counted[key][1]
        return scan_names(covered(self._scans[key])) if key in self._scans else frozenset()

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
        """The part to run now: a count part newly over the cap (once per pacing window, and never
        while the link is in backoff), else the most overdue one."""
        keys = self._keys()
        if now < self._idle_until or self._hold(now) > 0:
            return None
        early = [k for k in keys if k in self._early]
        if early:
            return early[0]
        due = [(self._parts[k].due if k in self._parts else 0.0, k) for k in keys]
        ready = [d for d in due if d[0] <= now]
        return min(ready)[1] if ready else None

    def _hold(self, now: float) -> float:
        since = now - self._poll_at if self._poll_at is not None else None
        return beside_poll(since, self._poll_gap)

    def _sleep(self, now: float) -> float | None:
        keys = self._keys()
        if not keys:
            return None
        first = min(self._parts[k].due if k in self._parts else 0.0 for k in keys)
        at = max(first, self._idle_until)
        if at <= now:  # due, but held until just after a poll (want() wakes it sooner)
            at = now + self._hold(now)
        return max(0.01, at - now)

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
        urgent = self._urgent(key)
        same_class = sum(
            cost_s if k == key else (self._parts[k].cost_s if k in self._parts else 0.0)
            for k in self._keys()
            if self._urgent(k) == urgent
        )
        wait = class_wait(cost_s, max(same_class, cost_s), self._share(key), self.min_interval_s)
        now = time.monotonic()
        self._busy_s += cost_s
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
        if key in self._early:
            self._early.discard(key)
            self._early_after = now + max(self.min_interval_s, wait)
        landed = [self._parts[k].landed for k in self._scans if k in self._parts]
        counts, slow = (
            self._parts[k].landed if k in self._counted and k in self._parts else None
            for k in (COUNTS_PART, SLOW_PART)
        )
        self._latest = merge(
            counts, (b for b in landed if b is not None), self._failed_names(), depth_of(self.model), slow
        )

    # -- the counting thread ----------------------------------------------------------------------
    def _run(self) -> None:
        while True:
            with self._cond:
                key = None if self._closed else self._next(time.monotonic())
                while not self._closed and self._errand is None and (key is None or self._held):
                    self._cond.wait(self._sleep(time.monotonic()))
                    key = None if self._closed else self._next(time.monotonic())
                errand, self._errand = self._errand, None
                if self._closed or (key is None and errand is None):
                    if errand is not None:
                        errand.drop()
                    return
                if errand is not None:  # the poll waits on it: served before any part of our own
                    self._running = ERRAND
                else:
                    assert key is not None  # (nothing due returned above)
                    counted = self._counted.get(key)
                    scan = self._scans.get(key)
                    part = self._parts.get(key)
                    previous = part.landed if part is not None and key == COUNTS_PART else None
                    self._running = key
                    started_at = time.monotonic()
            if errand is not None:
                self._serve(errand)
                continue
            assert key is not None
            started = time.perf_counter()
            error = None
            result: BackgroundCount | None = None
            try:
                with self._session.deadline(self.budget_ms / 1000 + 10):
                    conn = self._active = self._session.conn
                    if isinstance(scan, Pass):
                        result = self._pass(conn, scan)
                    elif scan is not None:
                        result = self._scan(conn, scan)
                    elif counted is not None:
                        result = self._count(conn, *counted, previous, activity=key == COUNTS_PART)
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

    def _serve(self, errand: Errand) -> None:
        """Run the poll's lent statements. A lost link drops this session: the poll sends them again
        on its own, and the counter reconnects at its next statement."""
        served = False
        try:
            with self._session.deadline(errand.deadline_s):
                conn = self._active = self._session.conn
                errand.serve(conn)
            served = True
        except (psycopg.Error, PgqError):
            if not self._session.usable:
                self._session.close()
        except Exception:  # rows the poll cannot read (a bug): found again on its own session
            pass
        finally:
            errand.drop()  # answered unless it failed: then an empty answer
            with self._cond:
                self._running = None
                self.lent += served
                self._cond.notify_all()

    def _count(
        self,
        conn: psycopg.Connection,
        statements: tuple[Statement, ...],
        names: frozenset[str],
        previous: BackgroundCount | None,
        *,
        activity: bool,
    ) -> BackgroundCount:
        """The indexed count `statements` (and, for the depth's part, the activity rows) as ONE
        statement: one snapshot (autocommit, READ COMMITTED), never a transaction around several, so
        the xmin horizon is held for that one statement only (at most the statement_timeout)."""
        started = time.perf_counter()
        rows: list[dict[str, Any]] = []
        seen: list[dict[str, Any]] = []
        as_of = None
        after = (previous.max_id or None) if previous is not None else None
        params = {**DEFAULTS, "cap1": None, "after": after, "max_span": ALL_IDS, "gap_rows": 0}
        with conn.cursor(row_factory=dict_row) as cur:
            counted = cur.execute(
                one_statement(statements, self.model.activity if activity else None),
                {**params, "lo": [], "hi": []},
            )
            for r in counted.fetchall():
                if r["part"] == NOW:
                    as_of = r["at"]
                else:
                    (rows if r["part"] == COUNTS else seen).append(r["row"])
        assert as_of is not None  # the first row of one_statement()
        cost_ms = (time.perf_counter() - started) * 1000
        result = dataclasses.replace(parse(rows, names, as_of, cost_ms, seen), depth=depth_of(self.model))
        if not activity:  # not the depth's snapshot: no rates from this one
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

    def _pass(self, conn: psycopg.Connection, one: Pass) -> BackgroundCount:
        """The statements a Pass covers, by its ONE scan (autocommit: its own snapshot and timeout):
        each covered count's rows and each covered list's, all exact as of the moment before it
        started, as if each had run then."""
        started = time.perf_counter()
        names = scan_names(one.covers)
        counts: list[dict[str, Any]] = []
        lists: dict[str, list[dict[str, Any]]] = {s.name: [] for s in one.covers if is_list(s)}
        watch: list[Watched] = []
        params = {**DEFAULTS, "cap1": None, "rows": self.list_rows, "watch": WATCH_ROWS}
        with conn.cursor(row_factory=dict_row) as cur:
            as_of = cur.execute("SELECT now() AS now").fetchone()["now"]  # type: ignore[index]
            got = cur.execute(one.statement.compose(), params).fetchall()
        for row in got:
            part = row.pop(PASS_PART)
            count = row.pop(PASS_COUNTS)
            if part == len(one.covers):  # a running job to recheck once its lease has passed
                watch.append(Watched(int(count["rel"]), count["tid"], count["expires"], str(count["queue"])))
            elif is_list(one.covers[part]):
                lists[one.covers[part].name].append(row)
            else:
                counts.append(count)
        cost_ms = (time.perf_counter() - started) * 1000
        parsed = parse(counts, names, as_of, cost_ms)
        return dataclasses.replace(parsed, scanned=names, lists=lists, new=None, watch=tuple(watch))
