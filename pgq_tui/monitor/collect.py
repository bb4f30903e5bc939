"""`Monitor.collect() -> Snapshot`: one cheap poll of a queue, through its dialect, and of the server.

One Monitor serves every dialect, pgq-top's own table included: the queue panels run the statements
the dialect's QueueModel supplies (counts, leases, dead jobs, the activity and counters statements),
the server-wide panels (server, table health of the queue's main relation, vacuum, sessions) are the
files in `pgq_tui/db/sql/`. A poll is one round trip whatever the dialect: the server row, the
relation check and every other statement in one pipeline (monitor/pipeline.py), the others planned on
the last polls' table and clock (monitor/ahead.py); the first poll, and one whose guess missed, take
a second.

Cost is proportional to the active jobs, never to the table: every count walks an index and stops at
`count_cap` (monitor/counting.py); above it a background thread keeps exact counts on its own
connection (monitor/background.py). Rates come from the new ids per queue since the last poll (the
dialect's activity statement) and the depths the polls see (monitor/rates.py), and from the
framework's own counters where it has them. A statement no index serves (a scan) runs in the poll
while the relation is small, else in the background counter (monitor/tiers.py): an index is an
optimization, never the price of a figure. Panels a dialect cannot serve (its framework does not
record it) are listed in `Snapshot.unsupported` with the reason, never run. The connection is
autocommit, so no transaction or snapshot survives a poll (a monitor must not pin the xmin horizon it
watches); the background counter's indexed counts are one statement, each scan another, never a
transaction of several.

Each panel is one or a few statements; if one fails (statement_timeout, lock_timeout, a missing
privilege), or its rows cannot be read (a dialect's bug: the error's class and message), its panel is
left empty and `Snapshot.errors[panel]` says why, while the others carry on (a count statement's
counts are unknown with that reason, never 0). A lost connection raises PgqError and drops the poll's
session only; the next collect() reconnects. The background counter lives on through it (its own
session reconnects with backoff): only close(), the Monitor's owner's call, ends it.
"""

from __future__ import annotations

import dataclasses
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.dialects.contract import (
    OLDEST_READY,
    PASS_COUNTS,
    PASS_PART,
    Capability,
    Pass,
    QueueModel,
    Statement,
)
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.errors import EXIT_PRIVILEGE, EXIT_SCHEMA, PgqError, describe, first_line, unexpected
from pgq_tui.monitor import cached, counting, finished, panels, pauses, pipeline, queries, rates, tiers
from pgq_tui.monitor.ahead import ORIGINS_KEPT, Ahead, clock_origin, guessed_right
from pgq_tui.monitor.background import BackgroundCount, BackgroundCounter, is_list
from pgq_tui.monitor.bloat import BloatReport
from pgq_tui.monitor.bloatwatch import BloatWatch
from pgq_tui.monitor.latency import LatencyReader
from pgq_tui.monitor.latency import complete as complete_latency
from pgq_tui.monitor.schedules import INTERVAL_S, SCAN_TOO_LARGE
from pgq_tui.monitor.schedules import read as read_schedules
from pgq_tui.monitor.snapshot import (
    UNKNOWN,
    CountStatus,
    DeadList,
    Figure,
    Latency,
    LeaseList,
    QueueStats,
    ServerInfo,
    Sessions,
    Snapshot,
    TableHealth,
    Throughput,
)
from pgq_tui.monitor.table_series import TableSeries
from pgq_tui.schedules.model import ScheduleReport

APPLICATION_NAME = "pgq-top"


# Every monitor query on the jobs table walks an index in order and stops at a LIMIT; a bitmap scan
# would read the whole key range first (all of a queue's rows), so never use one. Our parameters are
# caps and oids, never selective values: one generic plan per prepared statement is right, and skips
# custom planning, which costs more than running these queries. JIT compiling a few-millisecond poll
# costs 10-30 ms (the estimates assume big LIMITs). Set per session on a direct link, per transaction
# through a pooler (db/link.py).
MONITOR_SETTINGS = {"enable_bitmapscan": "off", "plan_cache_mode": "force_generic_plan", "jit": "off"}
# A poll that has not ended by then is abandoned with its connection (a link that swallows packets
# never errors by itself); the next poll opens a new one. A poll is a few statements of at most
# statement_timeout each, in one or two round trips.
DEFAULT_POLL_DEADLINE_S = 10.0


# Measured (benchmarks/bench_collect.py): 1,000 keeps the 5M-row poll under 2x the 10k-row poll;
# 2,000 did not (each capped count walks up to cap index entries, 10 queues x 5 states of them).
DEFAULT_COUNT_CAP = 1000
# ... but a poll's capped counts walk at most this many index entries in all: the cap a caller did not
# set shrinks (poll_cap()) when its deep counts would walk more, never below MIN_COUNT_CAP. Measured
# (#35, benchmarks/bench_fresh.py): at 10M rows in 50 queues under a live fleet, the claims' updates
# leave most pages not all-visible, so each entry costs a heap visit; 50,000 entries kept the seed's
# poll at 10-25 ms of server time, 10,000 at a fifth of it. On pg-boss 12.38's stock table, 10,000
# (a cap of 60 over its 50 queues) still cost the counts 10 ms of a poll's backend, 3,000 (a cap of 20)
# 7.5 (a cap of 1: 5, the heap visits at the front of each queue's ready range), and the dead count
# 4.5 ms against 2.0: the poll's median fell from 22.7 to 16-17 ms. The figures it no longer reads
# live are the counts of queues between 20 and 60 deep, with 50 such: the background's, stale. Running
# and stuck are never among them: they keep the full cap (counting.INCIDENT).
POLL_ENTRIES = 3_000
MIN_COUNT_CAP = 20
PANELS = ("queues", "leases", "throughput", "table", "sessions", "dead")
CACHED_PANEL = "cached_counts"  # errors' key when the framework's own counts could not be read

T = TypeVar("T")
Key = tuple[str, str, str]  # ("sql" | "model", statement name, its parameters): one pipelined result


class Monitor:
    """Polls one queue through its dialect's QueueModel. Not thread-safe: give each thread its own.

    count_cap: each poll counts every queue and state exactly up to this many rows (default: the
    dialect's `QueueModel.count_cap`, else DEFAULT_COUNT_CAP) (each count walks
    up to count_cap index entries, so the cap bounds a poll's cost). Above it the background counter
    (its own connection, statement_timeout count_budget_ms, at least count_interval_s between counts)
    keeps exact counts, shown stale with their age. lease_rows: rows listed per lease and dead-letter
    list (the totals are true). history_s: seconds of per-second throughput history; rate_window_s:
    the window the rates are averaged over. read_only: the session refuses writes (the monitor never
    writes anyway).
    """

    def __init__(
        self,
        conninfo: str,
        model: QueueModel,
        *,
        statement_timeout_ms: int = 2000,
        lock_timeout_ms: int = 500,
        read_only: bool = False,
        count_cap: int | None = None,
        count_budget_ms: int = 20_000,
        count_interval_s: float = 2.0,
        lease_rows: int = 50,
        history_s: int = 300,
        rate_window_s: int = 10,
        session_rows: int = 50,
        probe_interval_s: float = 10.0,
        poll_deadline_s: float | None = DEFAULT_POLL_DEADLINE_S,
        scan_pages: int = tiers.SCAN_PAGES,
    ) -> None:
        self.conninfo = conninfo
        self.model = model
        self.schema, self.table = model.main_relation
        # pgmq's queue tables: sized together for the tier, table health on the worst (tiers.together)
        self._labels = {sql.Identifier(*r).as_string(None): ".".join(r) for r in model.sized_together}
        self._together = {"relations": list(self._labels)} if self._labels else None
        self._health_table = self.qualified  # the relation table health shows (the worst, for pgmq)
        self.statement_timeout_ms = statement_timeout_ms
        self.lock_timeout_ms = lock_timeout_ms
        self.read_only = read_only
        # the caller's cap (--count-cap), else the dialect's, else ours; only a cap the caller did not
        # set shrinks with many queues (poll_cap()): self.cap is the one this poll counts up to
        self.count_cap = count_cap or model.count_cap or DEFAULT_COUNT_CAP
        self._cap_fixed = count_cap is not None
        self.cap = self.count_cap
        self.lease_rows = lease_rows
        self.history_s = history_s
        self.rate_window_s = rate_window_s
        self.session_rows = session_rows
        self.poll_deadline_s = poll_deadline_s
        # panels the dialect cannot serve: listed with the reason, never run
        self.unsupported = counting.unsupported(model)
        self.notes = counting.notes(model)  # the index that would make a scanned figure live
        self.scan_pages = scan_pages  # the largest relation (pages) whose scans run in the poll
        self.tier: tiers.Plan = tiers.plan(model, None, scan_pages)  # set by each poll
        self._depth = counting.depth_of(model)  # the unfinished states its completed/s is derived from
        self._counters_statement = model.throughput if model.support(Capability.THROUGHPUT).ok else None
        self._removals: tuple[rates.Removal, ...] = ()
        # the statements a poll may lend to the background counter's session (_send): its counts
        self._lendable = frozenset(s.name for s in model.counts)
        self._lent_to: int | None = None  # this poll's hold on the counter's session: its backend pid
        # no ids to follow, no counters, no finish times: the per-queue rates are unknown, never 0.0
        self._no_rate_source = (
            rates.NO_SOURCE_WHY
            if model.activity is None and model.finished is None and self._counters_statement is None
            else None
        )
        # Claim-cost probe and autovacuum pacing (monitor/bloatwatch.py); the probe is the framework's
        # own claim candidate scan (None: not supplied), at most once per probe_interval_s.
        probe = model.claim_probe.compose() if model.claim_probe is not None else None
        self.bloat = BloatWatch(probe, probe_interval_s=probe_interval_s)
        self._session = Session(
            conninfo,
            application_name=APPLICATION_NAME,
            gucs=MONITOR_SETTINGS,
            autocommit=True,
            statement_timeout_ms=statement_timeout_ms,
            lock_timeout_ms=lock_timeout_ms,
            read_only=read_only,
        )
        self._counter = BackgroundCounter(
            conninfo,
            model,
            budget_ms=count_budget_ms,
            min_interval_s=count_interval_s,
            read_only=read_only,
            list_rows=lease_rows,
        )
        # wait/run percentiles, on their own connection (monitor/latency.py)
        self._latency = LatencyReader(conninfo, model, read_only=read_only, budget_ms=count_budget_ms)
        self._latency_shown: tuple[Latency, tuple[str, ...], Latency] | None = None  # _shown_latency
        self._stamps = finished.Stamps(model)  # rates from the framework's timestamps
        self._polls: deque[rates.Activity] = deque()  # this monitor's recent polls, for the rates
        self._series = TableSeries()  # their per-second history, derived once per interval
        self._prefetched: dict[Hashable, pipeline.QueryResult] = {}  # sent together, read by _rows/_run
        self._ahead: Ahead | None = None  # the next poll's guess (one round trip), from the last poll
        self._origins: deque[datetime] = deque(maxlen=ORIGINS_KEPT)  # the last polls' clock origins
        self._clock = datetime.min  # the server time this poll's windows end at (set by each poll)
        self._composed: dict[Statement, sql.Composed] = {}  # each dialect statement as psycopg runs it
        self._listed: set[str] = set()  # the queues the last poll listed
        self._over: frozenset[str] = frozenset()  # the count names over the cap at the last good poll
        self._walks: list[int | None] = []  # what each capped count read at it (poll_cap())
        self._full_names = counting.full_cap_names(model.counts)  # never shrunk by poll_cap()
        self._near: frozenset[str] = frozenset()  # ... and those at least half the cap
        self._version = 0
        self._schedules: ScheduleReport | None = None  # the last read, kept between reads
        self.crontab: dict[str, str] | None = None  # expressions a crontab file supplies (Graphile)

    # -- connection -------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """Our backend's pid (labelled as pgq-top in the sessions panel); None when not connected."""
        return self._session.pid

    @property
    def _capped_names(self) -> frozenset[str]:
        """The count names this poll's indexed counts cap (by an index walk, not a scan)."""
        return frozenset(n for s in self.tier.counts if s.indexed for n in counting.names_of(s))

    @property
    def _windows_end(self) -> datetime | None:
        """Where the last remembered poll's time windows ended: this poll's start from there."""
        return finished.window_end(self._polls[-1]) if self._polls else None

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    def _connection(self) -> psycopg.Connection:
        return self._session.conn

    def close(self) -> None:
        """The Monitor's end, and the one place its lifetimes end: the background counter's and the
        poll session's. A failed poll never calls it (a lost link drops the poll session only)."""
        self._counter.close()
        self._latency.close()
        self._session.close()

    def _drop_poll_session(self) -> None:
        """A poll lost its link: close the poll's session (the next poll opens a new one). The
        background counter is left running; its own session reconnects by itself, with backoff.
        The next poll plans nothing ahead: the link (or the server behind it) may be another."""
        self._session.close()
        self._ahead = None
        self._origins.clear()

    @property
    def owes(self) -> bool:
        """The last poll left some figure to the background counter (whatever it serves), or the
        latency pass has not landed yet."""
        return bool(self._counter.wanted) or self._latency.owed

    def settle(self, timeout: float) -> bool:
        """Wait (at most `timeout` s) until every figure the last poll left to the background counter
        has a value: True when its count landed (or nothing was owed), False past the budget or when
        that count failed. For one-shot use (`snapshot`, `check`, monitor/settle.py): the next
        collect() shows those figures stale and exact."""
        deadline = time.monotonic() + timeout
        wanted = self._counter.wanted
        counted = not wanted or self._counter.wait_for(wanted, timeout)
        # the percentiles' first pass (its figures say "not read yet" past the wait, never 0)
        self._latency.wait_for_pass(max(0.0, deadline - time.monotonic()))
        return counted

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- statements: pipelined first, run alone when a panel asks for something else ----------------
    def _server_sql(self, name: str, params: dict[str, Any] | None) -> tuple[Key, Any, Any]:
        return (
            ("sql", name, repr(sorted((params or {}).items()))),
            queries.server_query(name, self._version),
            params,
        )

    def _model_sql(self, statement: Statement, params: dict[str, Any]) -> tuple[Key, Any, Any]:
        bound = {**DEFAULTS, **params}
        composed = self._composed.get(statement)
        if composed is None:  # composed once per statement, not at every poll (1.4 ms a poll at 50 queues)
            composed = self._composed[statement] = statement.compose()
        return ("model", statement.name, repr(sorted(bound.items()))), composed, bound

    def _fetch(self, key: Key, query: Any, params: Any) -> list[dict[str, Any]]:
        sent = self._prefetched.pop(key, None)
        if isinstance(sent, psycopg.Error):
            raise sent
        if sent is not None:
            return sent
        with self._connection().cursor(row_factory=dict_row) as cur:
            cur.execute(query, params, prepare=True)
            return cur.fetchall() if cur.description else []

    def _rows(self, name: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """A server-wide panel's rows (db/sql/<name>.sql)."""
        return self._fetch(*self._server_sql(name, params))

    def _run(self, statement: Statement, **params: Any) -> list[dict[str, Any]]:
        """One of the dialect's statements' rows (unset standard parameters are NULL)."""
        return self._fetch(*self._model_sql(statement, params))

    def _prefetch(self, plan: list[tuple[Key, Any, Any]]) -> None:
        self._prefetched = self._send(plan)

    def _send(self, statements: list[tuple[Key, Any, Any]]) -> dict[Hashable, pipeline.QueryResult]:
        """Each statement's rows or error, in one round trip: the count statements on the background
        counter's session when it is free this instant (monitor/errand.py), at once with the rest on
        the poll's; what did not come back from there is sent again here."""
        conn = self._connection()
        lent = [s for s in statements if s[0][0] == "model" and s[0][1] in self._lendable]
        # a counter link that hangs costs at most half the poll's deadline: the other half is for
        # sending them again here
        wait = None if self.poll_deadline_s is None else self.poll_deadline_s / 2
        errand = self._counter.lend(lent, conn, wait) if lent else None
        if errand is None:
            return pipeline.run(conn, statements)
        keys = {s[0] for s in lent}
        got = pipeline.run(conn, [s for s in statements if s[0] not in keys])
        got.update(errand.answer(wait))
        again = [s for s in lent if s[0] not in got]
        if again:
            got.update(pipeline.run(conn, again))
        return got

    def _guard(self, panel: str, errors: dict[str, str], fallback: T, fn: Callable[[], T]) -> T:
        """Run one panel; a failed statement empties the panel, a lost connection fails the poll (and
        drops the poll's session only: the next poll reconnects; the background counter keeps its own).
        Rows the panel cannot read (a dialect's bug: a value of the wrong type, an unknown word) fail
        that panel alone, the error's class and message in `errors[panel]`; the rest of the poll
        stands."""
        try:
            return fn()
        except psycopg.Error as exc:
            if not self._session.usable:
                self._drop_poll_session()
                raise describe(exc) from None
            errors[panel] = first_line(exc)
            return fallback
        except PgqError:
            raise  # the poll's own failure (e.g. its deadline), said as such
        except Exception as exc:  # a parsing bug: this panel failed, not the poll
            errors[panel] = unexpected(exc)
            return fallback

    # -- the poll ---------------------------------------------------------------------------------
    def collect(self) -> Snapshot:
        """One Snapshot. Raises PgqError when the server is unreachable or the table unusable, or when
        the poll got no answer within poll_deadline_s (its connection is then abandoned)."""
        # the background counter's session runs only this poll's lent statements until they are done
        self._lent_to = self._counter.hold()
        try:
            with self._session.deadline(self.poll_deadline_s):
                return self._collect()
        finally:
            self._counter.release()

    def _collect(self) -> Snapshot:
        started = time.perf_counter()
        model = self.model
        if not self._cap_fixed:  # a cap the caller did not set shrinks with many deep counts
            self.cap = poll_cap(self.count_cap, self._walks)
        ahead, self._ahead = self._ahead, None  # kept only by a poll that passes the table check
        last = self._windows_end
        try:
            self._version = self._connection().info.server_version  # picks each file's version band
            check = {"schema": self.schema, "table": self.table}
            first = [self._server_sql("server", None), self._server_sql("check_table", check)]
            if self._together is not None:  # in the same round trip
                first.append(self._server_sql("queue_tables", self._together))
            sent = time.monotonic()
            clock = None
            if ahead is not None:  # the rest of the poll too, planned ahead
                # never before the last poll's windows ended: back-to-back polls tile (empty windows)
                guess = ahead.now_at(sent)
                clock = guess if last is None else max(guess, last)
                first += self._plan(clock, ahead.oid)
            self._prefetch(first)
            server = self._rows("server")[0]
            rel = self._check(self._rows("check_table", check)[0])
            if self._together is not None:
                tables = self._rows("queue_tables", self._together)
                alike = tiers.together(tables, (self.qualified, rel["oid"]))
                rel = {**rel, "pages": alike.pages, "oid": alike.worst_oid}
                self._health_table = self._labels.get(alike.worst, alike.worst)
        except psycopg.Error as exc:
            if not self._session.usable:
                self._drop_poll_session()
            raise describe(exc, table=self.qualified, hint=self.model.setup_hint) from None
        now = server["now"]
        # the clock this poll's time windows end at: the guess they were sent with, if it was right
        self._clock = clock if clock is not None and guessed_right(clock, now, last) else now
        errors: dict[str, str] = {}
        unknown: dict[str, str] = {}  # counts not taken this poll, and why
        oid = rel["oid"]
        tier = self.tier = tiers.plan(model, rel.get("pages"), self.scan_pages)
        self._origins.append(now - timedelta(seconds=sent))
        self._ahead = Ahead(clock_origin(self._origins), oid)
        try:
            # what the guess missed (the first poll; a moved table or tier, a refused clock): one more trip
            plan = self._plan(self._clock, oid)
            unsent = [p for p in plan if p[0] not in self._prefetched]
            if unsent:
                self._prefetched.update(self._send(unsent))
            self._split_passes()
        except psycopg.Error as exc:  # the connection went away mid-poll
            self._drop_poll_session()
            raise describe(exc, table=self.qualified, hint=self.model.setup_hint) from None

        cap1 = self._caps()
        counters = self._guard("throughput", errors, None, lambda: self._counters(self._clock))
        active = self._guard("throughput", errors, None, lambda: self._activity(now))
        count_rows, failed = self._counts(errors, tier.counts)
        bg = self._recheck(self._counter.latest(), self._clock, errors)
        paused = self._paused(errors)
        own = self._cached(errors)
        seen = {q for a in self._polls for q in a.new} | set(counters.per_queue if counters else ())
        seen |= set(paused or ())  # a paused queue is listed, jobs or not (to be resumed)
        if failed:  # keep listing the queues the last poll saw: their counts are unknown, not gone
            seen |= self._listed
        missing = counting.not_taken(model, failed)
        for name, figure in missing.items():
            if figure.accuracy == UNKNOWN:
                unknown[name] = str(figure.reason)
        oldest_how = counting.oldest_how(model, tier.counts, tier.deferred)
        oldest = counting.oldest_unknown(model, failed)
        if (
            oldest is None
            and oldest_how == counting.BACKGROUND_SCAN
            and (bg is None or OLDEST_READY not in bg.groups)
        ):
            oldest = counting.NOT_LANDED  # no pass has read it yet: unknown, never "nothing waiting"
        if oldest is not None:
            unknown[OLDEST_READY] = oldest
        uncapped = frozenset(n for s in tier.scanned_here for n in counting.names_of(s))
        deferred = frozenset(n for s in tier.deferred if s in model.counts for n in counting.names_of(s))
        reads = counting.poll_reads(count_rows)  # read once: the queues' figures and the cap's walks
        queues = counting.queue_stats(
            count_rows,
            model,
            cap1,
            now,
            bg,
            also=seen,
            missing=missing,
            uncapped=uncapped,
            deferred=deferred,
            notes=self.notes,
            oldest_how=oldest_how,
            oldest_why=None if oldest == counting.NOT_LANDED else oldest,
            reads=reads,
            cached=own,
        )
        queues = pauses.apply(queues, model, paused, now, errors.get(pauses.PANEL))
        self._listed = {q.queue for q in queues}
        if not failed:  # a failed count keeps what the background was asked for
            read = reads[0]
            self._over = counting.over_cap(read, model, cap1) - uncapped
            # at least half the cap: a name the counter already counts stays wanted (its hysteresis)
            half = counting.Caps(max(1, cap1.depth // 2), max(1, cap1.full // 2), cap1.names)
            self._near = counting.over_cap(read, model, half) - uncapped
            # the incident's counts keep the full cap: they do not share the budget
            self._walks = counting.walks(read, model, self._capped_names - uncapped - cap1.names, cap1)
        self._counter.want(self._over, tier.deferred, self._near)
        # a deferred figure no pass has landed yet is unknown for every queue, listed or not (before
        # the first pass no queue may be listed at all: its counts must not sum to 0), with why: its
        # scan's failure, or not landed yet
        for name in deferred - (bg.groups if bg is not None else frozenset()):
            if queues and all(q.figures[name].known for q in queues):
                continue  # the framework's own counts stand for it in every queue until a pass lands
            unknown.setdefault(
                name, bg.failed.get(name, counting.NOT_LANDED) if bg is not None else counting.NOT_LANDED
            )
        leases, stuck = self._leases(errors, queues, bg)
        dead = DeadList((), 0)
        if model.dead is not None:
            statement = model.dead
            dead = self._guard(
                "dead",
                errors,
                DeadList((), None),  # not read: its total is unknown, not 0
                lambda: self._dead(statement, queues, bg),
            )
        table = self._guard("table", errors, panels.empty_table(self._health_table), lambda: self._table(oid))
        pg = None if "table" in errors else (table.inserted, table.updated, table.deleted)
        prev = self._windows_end
        stamped = self._guard(
            "throughput",
            errors,
            None,
            lambda: self._stamps.poll(self._rows, self._run, prev, self._clock, queues),
        )
        if active is not None:
            counted = rates.with_counts(active, None if failed else queues, pg, self._depth)
            self._remember(dataclasses.replace(counted, finished=stamped, windows_at=self._clock))
        elif model.activity is None and (pg is not None or model.finished is not None):
            # no per-queue ids to follow (e.g. uuid ids): the table-wide pg_stat rates, and the
            # framework's timestamps where it has them
            self._remember(
                rates.Activity(now, 0, {}, 0, 0, (), pg=pg, finished=stamped, windows_at=self._clock)
            )
        throughput = rates.throughput(
            counters,
            self._window(now),
            tuple(self._polls),
            bg,
            self.rate_window_s,
            self.history_s,
            now,
            stamped=self._stamps.columns,
            rates_note=None if "throughput" in errors else self._stamps.note(),
            no_source=self._no_rate_source,
            found=self._removals,
            series=self._series,
        )
        sessions = self._guard("sessions", errors, Sessions((), (), (), 0), self._sessions)
        bloat = self._bloat_report(errors, oid, table, sessions, queues, now)
        schedules = self._guard("schedules", errors, None, lambda: self._read_schedules(now))
        info = ServerInfo(
            version=server["version"],
            version_num=self._version,
            now=now,
            database=server["database"],
            in_recovery=server["in_recovery"],
            collect_ms=(time.perf_counter() - started) * 1000,
            monitor_pid=server["pid"],
        )
        return Snapshot(
            server=info,
            queues=queues,
            leases=leases,
            stuck=stuck,
            throughput=throughput,
            table=table,
            sessions=sessions,
            errors=errors,
            dead=dead,
            counts=self._count_status(now, bg),
            kind=model.kind,
            target=model.match.label,
            stuck_rule=model.stuck_rule,
            stuck_label=model.stuck_label,
            unsupported=dict(self.unsupported),
            bloat=bloat,
            unknown=unknown,
            schedules=schedules,
            latency=self._shown_latency(queues),
        )

    def _shown_latency(self, queues: Sequence[QueueStats]) -> Latency:
        """The latency pass's figures for every listed queue: the last poll's object while neither
        the pass nor the queues changed (a pass lands every 10 s or more; each poll would otherwise
        make 50 queues x 2 spans of the same figures, which the dashboard's history then keeps)."""
        latest, names = self._latency.latest(), tuple(q.queue for q in queues)
        kept = self._latency_shown
        if kept is not None and kept[0] == latest and kept[1] == names:
            return kept[2]
        shown = complete_latency(latest, names)
        self._latency_shown = (latest, names, shown)
        return shown

    def _read_schedules(self, now: datetime) -> ScheduleReport:
        """The schedules, read again once the last read is INTERVAL_S old (they change once a period)."""
        last = self._schedules
        if last is not None and last.as_of is not None and (now - last.as_of).total_seconds() < INTERVAL_S:
            return last
        source = self.model.schedules
        pages = self.tier.pages
        if source is not None and not source.statement.indexed and (pages is None or pages > self.scan_pages):
            # read by a scan (Oban's meta), and the table is too large to scan in the poll
            self._schedules = ScheduleReport(
                self.model.kind, True, as_of=now, reason=SCAN_TOO_LARGE, links=source.links
            )
            return self._schedules
        self._schedules = read_schedules(self._run_params, self.model, now, crontab=self.crontab)
        return self._schedules

    def _run_params(self, statement: Statement, params: dict[str, Any]) -> list[dict[str, Any]]:
        return self._run(statement, **params)

    def _counts(
        self, errors: dict[str, str], statements: tuple[Statement, ...]
    ) -> tuple[list[dict[str, Any]], dict[Statement, str]]:
        """Every count statement's rows (those this poll's tier runs), and the statements that failed
        with their error: a failed one (its statement_timeout, a lock_timeout) makes exactly its
        counts unknown (never 0), the others stand."""
        rows: list[dict[str, Any]] = []
        failed: dict[Statement, str] = {}
        for statement in statements:

            def count(s: Statement = statement) -> list[dict[str, Any]]:
                return self._count_rows(s)

            got: list[dict[str, Any]] | None = self._guard("queues", errors, None, count)
            if got is None:
                failed[statement] = errors["queues"]
            else:
                rows += got
        return rows, failed

    def _count_rows(self, statement: Statement) -> list[dict[str, Any]]:
        """One count statement's rows, read as the counts will be (so rows it cannot read fail this
        statement's counts alone: unknown with the error, never 0)."""
        rows = self._run(statement, cap1=self._cap1_of(statement))
        counting.poll_reads(rows)
        return rows

    def _recheck(
        self, bg: counting.BackgroundCount | None, now: datetime, errors: dict[str, str]
    ) -> counting.BackgroundCount | None:
        """The running jobs the last background pass saw whose lease has passed since, rechecked at
        this poll by row version (a TID lookup each, at most WATCH_ROWS): a job stuck since the pass
        shows now, not a pass later (counting.rechecked). Only the pairs asked for count: a
        partitioned table's tuple ids repeat across partitions."""
        recheck, due = self._rechecked(bg, now)
        if bg is None or recheck is None or not due:
            return bg
        asked = {(w.rel, w.tid) for w in due}
        none: list[dict[str, Any]] = []
        rows = self._guard("leases", errors, none, lambda: self._run(recheck, tids=[w.tid for w in due]))
        found = [
            {k: v for k, v in r.items() if k not in ("pgq_rel", "pgq_tid")}
            for r in rows
            if (int(r["pgq_rel"]), r["pgq_tid"]) in asked
        ]
        assert self.model.leases is not None  # _rechecked found a lease list
        return counting.rechecked(bg, found, self.model.leases.name)

    def _rechecked(
        self, bg: counting.BackgroundCount | None, now: datetime
    ) -> tuple[Statement | None, list[counting.Watched]]:
        """The recheck statement and the running jobs the last pass saw whose lease has passed by
        `now` (none: nothing to recheck)."""
        recheck = next((p.recheck for p in self.model.passes if p.recheck is not None), None)
        if bg is None or recheck is None or self.model.leases is None or not bg.watch:
            return recheck, []
        at = now.timestamp()
        return recheck, [w for w in bg.watch if w.expires <= at]

    def _plan(self, now: datetime, oid: int) -> list[tuple[Key, Any, Any]]:
        """Every statement the rest of this poll runs, with the parameters the panels below pass:
        sent in one pipeline, in the round trip of the server row when planned ahead on the last
        polls' clock and oid (monitor/ahead.py), else after it. A statement a panel then asks for with other
        parameters is simply run on its own, so a mismatch costs a round trip, never a wrong figure.
        The counters statement goes last: a failing statement aborts the ones after it in the
        pipeline (they are sent again), and a missing grant on a counters table is the likely one."""
        model = self.model
        sessions = {"rows": self.session_rows}
        rel = {"jobs_oid": oid}
        passes = self._poll_passes()
        covered = {c for p in passes for c in p.covers}
        plan = [self._model_sql(s, self._params_of(s)) for s in self.tier.counts if s not in covered]
        if model.activity is not None:
            plan.append(self._model_sql(model.activity, self._activity_params()))
        plan += [self._model_sql(s, self._params_of(s)) for s in self.tier.lists if s not in covered]
        plan += [self._model_sql(p.statement, self._pass_params(p)) for p in passes]
        plan += [
            self._server_sql("table_health", rel),
            self._server_sql("vacuum_progress", rel),
            self._server_sql("autovacuum_pacing", rel),  # the bloat report's; the probe runs apart
            self._server_sql("idle_in_transaction", sessions),
            self._server_sql("xmin_holders", self._holders_params()),
            self._server_sql("blocked", sessions),
            self._server_sql("backends", None),
        ]
        prev = self._windows_end
        plan += [self._model_sql(st, p) for st, p in self._stamps.statements(prev, now)]
        plan += [self._server_sql(name, p) for name, p in self._stamps.server_queries()]
        spec = model.pause
        if spec is not None and spec.state is not None:
            plan.append(self._model_sql(spec.state, {}))
        if model.cached is not None:
            plan.append(self._model_sql(model.cached.statement, {}))
        recheck, due = self._rechecked(self._counter.latest(), now)
        if recheck is not None and due:
            plan.append(self._model_sql(recheck, {"tids": [w.tid for w in due]}))
        if self._counters_statement is not None:
            plan.append(self._model_sql(self._counters_statement, self._counters_params(now)))
        return plan

    def _poll_passes(self) -> tuple[Pass, ...]:
        """The model's indexed Passes (contract.Pass) whose covered statements this poll runs all of:
        each is sent instead of them."""
        here = {*self.tier.counts, *self.tier.lists}
        return tuple(p for p in self.model.passes if p.statement.indexed and all(c in here for c in p.covers))

    def _params_of(self, statement: Statement) -> dict[str, Any]:
        """A count's or a list's parameters at this poll, as the panels below ask for its rows."""
        if statement in self.tier.lists:
            return {"rows": self.lease_rows}
        return {"cap1": self._cap1_of(statement)}

    def _caps(self) -> counting.Caps:
        """This poll's cap1 per count name: its own (within the entry budget), the full count cap for
        the counts an incident turns on and those read with them (counting.full_cap_names)."""
        return counting.Caps(self.cap + 1, self.count_cap + 1, self._full_names)

    def _cap1_of(self, statement: Statement) -> int | None:
        """cap1 of one count statement: None for a scan (it reads every row of its states anyway:
        exact, uncapped)."""
        return self._caps().walk(counting.names_of(statement)) if statement.indexed else None

    def _pass_params(self, one: Pass) -> dict[str, Any]:
        """An indexed Pass walks an index whatever the statements it covers are: the cap of the
        count names it reads."""
        names = frozenset(n for c in one.covers if c in self.model.counts for n in counting.names_of(c))
        return {"cap1": self._caps().walk(names), "rows": self.lease_rows}

    def _split_passes(self) -> None:
        """Each poll Pass's rows, as the rows (or the error) of the statements it covers: the panels
        then read those as if each had run (a count's rows from `pgq_counts`, a list's as they are)."""
        for one in self._poll_passes():
            got = self._prefetched.pop(self._model_sql(one.statement, self._pass_params(one))[0], None)
            if got is None:
                continue
            parts: list[list[dict[str, Any]]] = [[] for _ in one.covers]
            if not isinstance(got, psycopg.Error):
                for row in got:
                    part, count = row.pop(PASS_PART), row.pop(PASS_COUNTS)
                    if part < len(one.covers):
                        parts[part].append(row if is_list(one.covers[part]) else count)
            for cover, rows in zip(one.covers, parts, strict=True):
                key = self._model_sql(cover, self._params_of(cover))[0]
                self._prefetched[key] = got if isinstance(got, psycopg.Error) else rows

    def _paused(self, errors: dict[str, str]) -> dict[str, datetime | None] | None:
        """The paused queues (the dialect's PauseSpec.state); None when not recorded or not read."""
        spec = self.model.pause
        if spec is None or spec.state is None:
            return None
        statement = spec.state
        return self._guard(pauses.PANEL, errors, None, lambda: pauses.paused_rows(self._run(statement)))

    def _cached(self, errors: dict[str, str]) -> cached.Cached | None:
        """The framework's own per-queue counts (QueueModel.cached); None when it keeps none or their
        read failed (said in `errors`: the figures then wait for the background, as without them)."""
        own = self.model.cached
        if own is None:
            return None
        return self._guard(
            CACHED_PANEL, errors, None, lambda: cached.from_rows(self._run(own.statement), own.kept_by)
        )

    def _check(self, row: dict[str, Any]) -> dict[str, Any]:
        """The queue's main table exists, is readable and has the columns the dialect reads."""
        hint = f"; {self.model.setup_hint}" if self.model.setup_hint else ""
        if row["oid"] is None:
            raise PgqError(
                f"table {self.qualified} does not exist (or is not visible to role {row['role']}){hint}",
                EXIT_SCHEMA,
            )
        if not row["can_select"]:
            raise PgqError(
                f"permission denied: role {row['role']} cannot read {self.qualified}; grant it "
                f"with: GRANT SELECT ON {self.qualified} TO {row['role']}; GRANT pg_monitor TO "
                f"{row['role']}",
                EXIT_PRIVILEGE,
            )
        missing = sorted(set(self.model.required_columns) - set(row["columns"]))
        if missing:
            raise PgqError(
                f"table {self.qualified} is not a {self.model.title} jobs table: missing columns "
                f"{', '.join(missing)}{hint}",
                EXIT_SCHEMA,
            )
        return row

    def _count_status(self, now: datetime, bg: BackgroundCount | None) -> CountStatus:
        """The counter as this poll used it (`bg`: the count the figures were built from)."""
        counter = self._counter
        state = "idle" if not counter.wanted else ("ready" if bg is not None else "waiting")
        if counter.error is not None:
            state = "failed"
        oldest = min([bg.as_of, *bg.as_of_by.values()]) if bg is not None else None  # its oldest figure
        return CountStatus(
            cap=self.cap,
            background=state,
            budget_ms=counter.budget_ms,
            max_lag_s=counter.max_lag_s,
            as_of=oldest,
            cost_ms=bg.cost_ms if bg is not None else None,
            lag_s=(now - oldest).total_seconds() if oldest is not None else None,
            error=counter.error,
        )

    # -- panels -----------------------------------------------------------------------------------
    def _list_rows(
        self, statement: Statement, bg: BackgroundCount | None
    ) -> tuple[list[dict[str, Any]], Figure | None]:
        """A list's rows: read by this poll (figure None), or the background counter's last scan of it
        (stale, with its as_of; unknown and empty before the first)."""
        if statement in self.tier.lists:
            return self._run(statement, rows=self.lease_rows), None
        rows = bg.lists.get(statement.name) if bg is not None else None
        panel = "leases" if statement is self.model.leases else "dead"
        note = self.notes.get(panel)
        name = f"list:{statement.name}"
        if rows is None or bg is None:
            why = bg.failed.get(name, counting.NOT_LANDED) if bg is not None else counting.NOT_LANDED
            return [], Figure(UNKNOWN, None, counting.BACKGROUND_SCAN, reason=why, note=note)
        failed = bg.failed.get(name)
        figure = Figure("stale", bg.as_of_for(name), counting.BACKGROUND_SCAN, reason=failed, note=note)
        return rows[: self.lease_rows], figure

    def _leases(
        self, errors: dict[str, str], queues: tuple[QueueStats, ...], bg: BackgroundCount | None
    ) -> tuple[LeaseList, LeaseList]:
        statement = self.model.leases
        if statement is None:
            return LeaseList((), 0), LeaseList((), 0)

        def read() -> tuple[LeaseList, LeaseList]:
            rows, fig = self._list_rows(statement, bg)
            landed = fig is None or fig.known
            running, stuck = panels.lease_lists(rows, queues, "queues" in errors, landed)
            return LeaseList(running.rows, running.total, fig), LeaseList(stuck.rows, stuck.total, fig)

        failed = (LeaseList((), None), LeaseList((), None))  # not read: the totals are unknown, not 0
        return self._guard("leases", errors, failed, read)

    def _dead(
        self, statement: Statement, queues: tuple[QueueStats, ...], bg: BackgroundCount | None
    ) -> DeadList:
        rows, fig = self._list_rows(statement, bg)
        dead = panels.dead_list(rows, queues, landed=fig is None or fig.known)
        return DeadList(dead.rows, dead.total, fig)

    def _activity_params(self) -> dict[str, Any]:
        return rates.activity_params(self._polls[-1] if self._polls else None)

    def _activity(self, now: datetime) -> rates.Activity | None:
        """New ids per queue since the previous poll; None when the dialect cannot follow ids."""
        if self.model.activity is None:
            return None
        prev = self._polls[-1] if self._polls else None
        return rates.activity(self._run(self.model.activity, **self._activity_params()), prev, now)

    def _counters_params(self, now: datetime) -> dict[str, Any]:
        until, since = panels.window(now, max(self.history_s, self.rate_window_s))
        return {"since": since, "until": until}

    def _counters(self, now: datetime) -> Throughput | None:
        """The framework's own counters' rates; None without them (the rates then come from the table)."""
        if self._counters_statement is None:
            return None
        params = self._counters_params(now)
        self._removals = ()
        rows = self._run(self._counters_statement, **params)
        self._removals = rates.removals(rows)  # discards and prunes: not completions, not foreign
        return panels.throughput(rows, params["until"], self.history_s, self.rate_window_s)

    def _remember(self, active: rates.Activity) -> None:
        self._polls.append(active)
        horizon = active.at - timedelta(seconds=max(self.history_s, self.rate_window_s) + 1)
        while len(self._polls) > 2 and self._polls[1].at <= horizon:
            self._polls.popleft()

    def _window(self, now: datetime) -> list[rates.Activity]:
        """The polls the rates are averaged over: from the newest at least rate_window_s old."""
        polls = list(self._polls)
        start = now - timedelta(seconds=self.rate_window_s)
        first = max((i for i, a in enumerate(polls) if a.at <= start), default=0)
        return polls[first:]

    def _table(self, oid: int) -> TableHealth:
        rows = self._rows("table_health", {"jobs_oid": oid})  # the table, or each of its partitions
        progress = self._rows("vacuum_progress", {"jobs_oid": oid})
        return panels.table_health_of(rows, progress, self._health_table)

    def _holders_params(self) -> dict[str, Any]:
        """xmin_holders.sql's parameters, planned and read alike: the backend running this poll's
        lent statements is the poll (left out, as the poll's own session is)."""
        return {"rows": self.session_rows, "lent_to": self._lent_to}

    def _sessions(self) -> Sessions:
        rows = {"rows": self.session_rows}
        return panels.sessions(
            self._rows("idle_in_transaction", rows),
            self._rows("xmin_holders", self._holders_params()),
            self._rows("blocked", rows),
            self._rows("backends")[0]["total"],
        )

    def _bloat_report(
        self,
        errors: dict[str, str],
        oid: int,
        table: TableHealth,
        sessions: Sessions,
        queues: tuple[QueueStats, ...],
        now: datetime,
    ) -> BloatReport | None:
        """Claim-cost probe and autovacuum pacing as one guarded panel ("bloat" in errors)."""
        return self._guard(
            "bloat",
            errors,
            None,
            lambda: self.bloat.poll(self._connection(), self._rows, oid, table, sessions, queues, now),
        )


def open_monitor(conninfo: str, model: QueueModel, **kw: Any) -> Monitor:
    """The monitor of a detected queue (`model`: `QueueTarget.model` from detection.find_queues)."""
    return Monitor(conninfo, model, **kw)


def poll_cap(cap: int, walks: Sequence[int | None]) -> int:
    """The cap this poll counts each queue and state up to, so that its capped counts walk at most
    POLL_ENTRIES index entries in all. `walks`: what each capped count (a queue and state) read at
    the last poll, None where it reached that poll's cap (its depth unknown). A count that stopped
    below the cap costs what it read; the budget left is shared evenly by the deeper ones
    (water-filling), within [MIN_COUNT_CAP, cap]. The rest of a deeper count comes from the
    background counter, stale with its age, as above any cap. Pure.

    >>> poll_cap(1000, [])  # the first poll: nothing known yet
    1000
    >>> poll_cap(1000, [None] * 100)  # 50 queues, ready and scheduled both deep
    30
    >>> poll_cap(1000, [None] * 100 + [20] * 100)  # ... and 100 small counts: 2,000 entries
    20
    >>> poll_cap(1000, [100] * 20 + [None] * 4)  # 2,000 entries for the small ones, 250 each left
    250
    >>> poll_cap(1000, [None] * 3)  # a few deep counts: the full cap
    1000
    >>> poll_cap(1000, [None] * 5000)
    20
    """
    budget, left = POLL_ENTRIES, len(walks)
    for read in sorted(w for w in walks if w is not None):
        if read * left > budget:  # this one and the deeper ones share what is left
            break
        budget, left = budget - read, left - 1
    if left == 0:
        return cap
    return max(MIN_COUNT_CAP, min(cap, budget // left))
