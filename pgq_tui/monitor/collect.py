"""`Monitor.collect() -> Snapshot`: one cheap poll of the queue and the server.

Cost is proportional to the active jobs, never to the table: every count walks a partial index and
stops at `count_cap`; above it a background thread keeps an exact count on its own connection
(monitor/background.py; the figure is then stale, with its age, or "≥cap" until the first count
lands: monitor/counting.py). Distinct queues come from recursive skip-scans, lists are taken per queue
with LIMIT, rates come from the ids and depths the polls see (monitor/rates.py) and from the counters
table where it exists. The connection is autocommit, so no transaction or snapshot survives a poll (a
monitor must not pin the xmin horizon it watches).

Each panel is one or a few statements; if one fails (statement_timeout, lock_timeout, a missing
privilege) its panel is left empty and `Snapshot.errors[panel]` says why, while the others carry on.
A lost connection raises PgqError; the next collect() reconnects.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from datetime import timedelta
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.errors import EXIT_PRIVILEGE, EXIT_SCHEMA, PgqError, describe, first_line
from pgq_tui.monitor import counting, panels, pipeline, queries, rates
from pgq_tui.monitor.background import BackgroundCount, BackgroundCounter
from pgq_tui.monitor.bloat import BloatReport
from pgq_tui.monitor.bloatwatch import BloatWatch
from pgq_tui.monitor.snapshot import (
    CountStatus,
    DeadList,
    LeaseList,
    QueueStats,
    ServerInfo,
    Sessions,
    Snapshot,
    TableHealth,
    Throughput,
)

APPLICATION_NAME = "pgq-top"


def _tune_session(conn: psycopg.Connection) -> None:
    # Every monitor query on the jobs table walks an index in order and stops at a LIMIT; a bitmap
    # scan would read the whole key range first (all of a queue's rows), so never use one.
    conn.execute("SET enable_bitmapscan = off")
    # Our parameters are caps and oids, never selective values: one generic plan per statement is
    # right, and skips custom planning, which costs more than running these queries.
    conn.execute("SET plan_cache_mode = force_generic_plan")
    # JIT compiling a few-millisecond poll costs 10-30 ms (the estimates assume big LIMITs).
    conn.execute("SET jit = off")


# fmt: off
REQUIRED_COLUMNS = frozenset(("id", "queue", "status", "priority", "run_at", "attempts", "max_attempts",
                              "locked_until", "locked_by", "finished_at", "last_error", "heartbeat_at"))
# fmt: on
# Measured (benchmarks/bench_collect.py): 1,000 keeps the 5M-row poll under 2x the 10k-row poll;
# 2,000 did not (each capped count walks up to cap index entries, 10 queues x 5 states of them).
DEFAULT_COUNT_CAP = 1000
PANELS = ("queues", "leases", "throughput", "table", "sessions", "dead")

T = TypeVar("T")


class Monitor:
    """Polls one jobs table. Not thread-safe: give each thread its own Monitor.

    count_cap: each poll counts every queue and state exactly up to this many rows (each count walks
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
        table: str = "jobs",
        schema: str = "public",
        *,
        statement_timeout_ms: int = 2000,
        lock_timeout_ms: int = 500,
        read_only: bool = False,
        count_cap: int = DEFAULT_COUNT_CAP,
        count_budget_ms: int = 20_000,
        count_interval_s: float = 2.0,
        lease_rows: int = 50,
        history_s: int = 300,
        rate_window_s: int = 10,
        session_rows: int = 50,
        probe_interval_s: float = 10.0,
    ) -> None:
        self.conninfo = conninfo
        self.table = table
        self.schema = schema
        self.statement_timeout_ms = statement_timeout_ms
        self.lock_timeout_ms = lock_timeout_ms
        self.read_only = read_only
        self.count_cap = count_cap
        self.lease_rows = lease_rows
        self.history_s = history_s
        self.rate_window_s = rate_window_s
        self.session_rows = session_rows
        # Claim-cost probe and autovacuum pacing (monitor/bloatwatch.py); the probe is the claim's own
        # candidate scan (db/sql/claim_probe.sql), at most once per probe_interval_s.
        self.bloat = BloatWatch(
            queries.query("claim_probe", 0, table, schema), probe_interval_s=probe_interval_s
        )
        self._session = Session(
            conninfo,
            setup=_tune_session,
            application_name=APPLICATION_NAME,
            autocommit=True,
            statement_timeout_ms=statement_timeout_ms,
            lock_timeout_ms=lock_timeout_ms,
            read_only=read_only,
        )
        self._counter = BackgroundCounter(
            conninfo,
            table,
            schema,
            budget_ms=count_budget_ms,
            min_interval_s=count_interval_s,
            read_only=read_only,
        )
        self._polls: deque[rates.Activity] = deque()  # this monitor's recent polls, for the rates
        self._prefetched: dict[Any, pipeline.Outcome] = {}  # sent together, read by _rows()

    # -- connection -------------------------------------------------------------------------------
    @property
    def pid(self) -> int | None:
        """Our backend's pid (labelled as pgq-top in the sessions panel); None when not connected."""
        return self._session.pid

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    def _connection(self) -> psycopg.Connection:
        return self._session.conn

    def close(self) -> None:
        self._counter.close()
        self._session.close()

    def settle(self, timeout: float) -> bool:
        """Wait (at most `timeout` s) for the background count the last poll asked for; True when
        one landed. For one-shot use (`pgq-top snapshot`): the next collect() shows exact figures."""
        wanted = self._counter.wanted
        return not wanted or self._counter.wait_for(wanted, timeout)

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rows(self, name: str, version: int, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        sent = self._prefetched.pop(_key(name, params), None)
        if isinstance(sent, psycopg.Error):
            raise sent
        if sent is not None:
            return sent
        conn = self._connection()
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(queries.query(name, version, self.table, self.schema), params, prepare=True)
            return cur.fetchall()

    def _guard(self, panel: str, errors: dict[str, str], fallback: T, fn: Callable[[], T]) -> T:
        """Run one panel; a failed statement empties the panel, a lost connection fails the poll."""
        try:
            return fn()
        except psycopg.Error as exc:
            if not self._session.usable:
                self.close()
                raise describe(exc) from None
            errors[panel] = first_line(exc)
            return fallback

    # -- the poll ---------------------------------------------------------------------------------
    def collect(self) -> Snapshot:
        """One Snapshot. Raises PgqError when the server is unreachable or the table unusable."""
        started = time.perf_counter()
        try:
            version = self._connection().info.server_version  # picks each file's version band
            check = {"schema": self.schema, "table": self.table}
            self._prefetch(version, [("server", None), ("check_table", check)])
            server = self._rows("server", version)[0]
            target = self._check(version)
        except psycopg.Error as exc:
            if not self._session.usable:
                self.close()
            raise describe(exc, table=self.qualified) from None
        now = server["now"]
        errors: dict[str, str] = {}
        jobs_oid = target["jobs_oid"]
        try:
            self._prefetch(version, self._plan(now, target))
        except psycopg.Error as exc:  # the connection went away mid-poll
            self.close()
            raise describe(exc, table=self.qualified) from None

        counters = self._guard("throughput", errors, None, lambda: self._counters(version, now, target))
        active = self._guard("throughput", errors, None, lambda: self._activity(version, now))
        queue_rows = self._guard("queues", errors, None, lambda: self._queue_rows(version))
        bg = self._counter.latest()
        seen = {q for a in self._polls for q in a.new} | set(counters.per_queue if counters else ())
        queues = counting.queue_stats(queue_rows or [], self.count_cap, now, bg, also=seen)
        if queue_rows is not None:
            self._counter.want(counting.over_cap(counting.poll_counts(queue_rows), self.count_cap))
        leases, expired = self._guard(
            "leases",
            errors,
            (LeaseList((), 0), LeaseList((), 0)),
            lambda: panels.lease_lists(
                self._rows("leases", version, {"rows": self.lease_rows}), queues, "queues" in errors
            ),
        )
        dead = self._guard(
            "dead",
            errors,
            DeadList((), 0),
            lambda: panels.dead_list(self._rows("dead_jobs", version, {"rows": self.lease_rows}), queues),
        )
        table = self._guard(
            "table", errors, panels.empty_table(self.qualified), lambda: self._table(version, jobs_oid)
        )
        if active is not None:
            pg = None if "table" in errors else (table.inserted, table.updated, table.deleted)
            self._remember(rates.with_counts(active, queues if queue_rows is not None else (), pg))
        throughput = rates.throughput(
            counters, self._window(now), tuple(self._polls), bg, self.rate_window_s, self.history_s, now
        )
        sessions = self._guard("sessions", errors, Sessions((), (), (), 0), lambda: self._sessions(version))
        bloat = self._bloat_report(version, errors, jobs_oid, table, sessions, queues, now)
        info = ServerInfo(
            version=server["version"],
            version_num=version,
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
            expired=expired,
            throughput=throughput,
            table=table,
            sessions=sessions,
            errors=errors,
            dead=dead,
            bloat=bloat,
            counts=self._count_status(now, bg),
        )

    def _bloat_report(
        self,
        version: int,
        errors: dict[str, str],
        jobs_oid: int,
        table: TableHealth,
        sessions: Sessions,
        queues: tuple[QueueStats, ...],
        now: Any,
    ) -> BloatReport | None:
        """Claim-cost probe and autovacuum pacing as one guarded panel ("bloat" in errors). A monitor
        for another queue kind sets `self.bloat.probe` to its own claim's candidate SELECT (or None)."""
        return self._guard(
            "bloat",
            errors,
            None,
            lambda: self.bloat.poll(
                self._connection(),
                lambda name, params: self._rows(name, version, params),
                jobs_oid,
                table,
                sessions,
                queues,
                now,
            ),
        )

    def _plan(self, now: Any, target: dict[str, Any]) -> list[tuple[str, dict[str, Any] | None]]:
        """Every statement the rest of this poll runs, with the parameters the panels below pass:
        sent in one pipeline (one round trip). A statement a panel then asks for with other
        parameters is simply run on its own, so a mismatch costs a round trip, never a wrong figure."""
        cap1 = {"cap1": self.count_cap + 1}
        lists, sessions = {"rows": self.lease_rows}, {"rows": self.session_rows}
        jobs = {"jobs_oid": target["jobs_oid"]}
        plan: list[tuple[str, dict[str, Any] | None]] = []
        if target["stats_oid"] is not None and not target["stats_problem"]:
            until, since = panels.window(now, max(self.history_s, self.rate_window_s))
            plan.append(("throughput", {"since": since, "until": until}))
        plan += [
            ("queue_activity", rates.activity_params(self._polls[-1] if self._polls else None)),
            ("queue_pending", cap1),
            ("queue_states", cap1),
            ("queue_done", cap1),
            ("leases", lists),
            ("dead_jobs", lists),
            ("table_health", jobs),
            ("vacuum_progress", jobs),
            ("autovacuum_pacing", jobs),  # the bloat report's (bloatwatch.py); the probe runs apart
            ("idle_in_transaction", sessions),
            ("xmin_holders", sessions),
            ("blocked", sessions),
            ("backends", None),
        ]
        return plan

    def _prefetch(self, version: int, plan: list[tuple[str, dict[str, Any] | None]]) -> None:
        statements = [
            (_key(name, params), queries.query(name, version, self.table, self.schema), params)
            for name, params in plan
        ]
        self._prefetched = pipeline.run(self._connection(), statements)

    def _count_status(self, now: Any, bg: BackgroundCount | None) -> CountStatus:
        """The counter as this poll used it (`bg`: the count the figures were built from)."""
        counter = self._counter
        state = "idle" if not counter.wanted else ("ready" if bg is not None else "waiting")
        if counter.error is not None:
            state = "failed"
        return CountStatus(
            cap=self.count_cap,
            background=state,
            budget_ms=counter.budget_ms,
            max_lag_s=counter.max_lag_s,
            as_of=bg.as_of if bg is not None else None,
            cost_ms=bg.cost_ms if bg is not None else None,
            lag_s=(now - bg.as_of).total_seconds() if bg is not None else None,
            error=counter.error,
        )

    def _check(self, version: int) -> dict[str, Any]:
        """The jobs table exists, is readable and has our columns; the stats table is optional."""
        row = self._rows("check_table", version, {"schema": self.schema, "table": self.table})[0]
        if row["jobs_oid"] is None:
            raise PgqError(
                f"table {self.qualified} does not exist (or is not visible to role {row['role']}); "
                "create it with: pgq-top init --dsn DSN",
                EXIT_SCHEMA,
            )
        if not row["can_select"]:
            raise PgqError(
                f"permission denied: role {row['role']} cannot read {self.qualified}; grant it "
                f"with: GRANT SELECT ON {self.qualified} TO {row['role']}; GRANT pg_monitor TO "
                f"{row['role']}",
                EXIT_PRIVILEGE,
            )
        missing = sorted(REQUIRED_COLUMNS - set(row["columns"]))
        if missing:
            raise PgqError(
                f"table {self.qualified} is not a pgq-top jobs table: missing columns {', '.join(missing)} "
                "(pgq-top init adds them to a table from an older pgq-top or the seed schema)",
                EXIT_SCHEMA,
            )
        if row["stats_oid"] is None:
            row["stats_problem"] = f"no counters table {self.qualified}_stats (create it with: pgq-top init)"
        elif not row["can_select_stats"]:
            row["stats_problem"] = (
                f"permission denied for {self.qualified}_stats "
                f"(GRANT SELECT ON {self.qualified}_stats TO {row['role']})"
            )
        else:
            row["stats_problem"] = None
        return row

    # -- panels -----------------------------------------------------------------------------------
    def _queue_rows(self, version: int) -> list[dict[str, Any]]:
        cap1 = {"cap1": self.count_cap + 1}
        rows = [{"kind": "pending", **r} for r in self._rows("queue_pending", version, cap1)]
        rows += [{"kind": "states", **r} for r in self._rows("queue_states", version, cap1)]
        rows += [{"kind": "done", **r} for r in self._rows("queue_done", version, cap1)]
        return rows

    def _activity(self, version: int, now: Any) -> rates.Activity:
        prev = self._polls[-1] if self._polls else None
        rows = self._rows("queue_activity", version, rates.activity_params(prev))
        return rates.activity(rows, prev, now)

    def _remember(self, active: rates.Activity) -> None:
        self._polls.append(active)
        horizon = active.at - timedelta(seconds=max(self.history_s, self.rate_window_s) + 1)
        while len(self._polls) > 2 and self._polls[1].at <= horizon:
            self._polls.popleft()

    def _window(self, now: Any) -> list[rates.Activity]:
        """The polls the rates are averaged over: from the newest at least rate_window_s old."""
        polls = list(self._polls)
        start = now - timedelta(seconds=self.rate_window_s)
        first = max((i for i, a in enumerate(polls) if a.at <= start), default=0)
        return polls[first:]

    def _counters(self, version: int, now: Any, target: dict[str, Any]) -> Throughput | None:
        """The counters table's rates; None without one (the rates then come from the table)."""
        if target["stats_oid"] is None:
            return None
        if target["stats_problem"]:
            raise _PanelProblem(target["stats_problem"])
        until, since = panels.window(now, max(self.history_s, self.rate_window_s))
        rows = self._rows("throughput", version, {"since": since, "until": until})
        return panels.throughput(rows, until, self.history_s, self.rate_window_s)

    def _table(self, version: int, jobs_oid: int) -> TableHealth:
        row = self._rows("table_health", version, {"jobs_oid": jobs_oid})[0]
        progress = self._rows("vacuum_progress", version, {"jobs_oid": jobs_oid})
        return panels.table_health(row, progress, self.qualified)

    def _sessions(self, version: int) -> Sessions:
        rows = {"rows": self.session_rows}
        return panels.sessions(
            self._rows("idle_in_transaction", version, rows),
            self._rows("xmin_holders", version, rows),
            self._rows("blocked", version, rows),
            self._rows("backends", version)[0]["total"],
        )


def _key(name: str, params: dict[str, Any] | None) -> tuple[str, str]:
    """A prefetched result's key: the statement and its exact parameters."""
    return name, repr(sorted((params or {}).items()))


class _PanelProblem(psycopg.Error):
    """A panel that cannot run at all (e.g. no SELECT on the counters table): reported, not raised."""


def collect(conninfo: str, **kw: Any) -> Snapshot:
    """One Snapshot from a fresh connection (for scripts; a dashboard keeps a Monitor)."""
    with Monitor(conninfo, **kw) as monitor:
        return monitor.collect()
