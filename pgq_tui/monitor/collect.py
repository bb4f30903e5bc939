"""`Monitor.collect() -> Snapshot`: one cheap poll of the queue and the server.

Cost is proportional to the active jobs, never to the table: every count walks a partial index and
stops at `count_cap` (above it an estimate, flagged `approximate`), distinct queues come from
recursive skip-scans, lists are taken per queue with LIMIT. The connection is autocommit, so no
transaction or snapshot survives a poll (a monitor must not pin the xmin horizon it watches).

Each panel is one or a few statements; if one fails (statement_timeout, lock_timeout, a missing
privilege) its panel is left empty and `Snapshot.errors[panel]` says why, while the others carry on.
A lost connection raises PgqError; the next collect() reconnects.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

import psycopg
from psycopg.rows import dict_row

from pgq_tui.db.connect import Session
from pgq_tui.errors import EXIT_PRIVILEGE, EXIT_SCHEMA, PgqError, describe, first_line
from pgq_tui.monitor import panels, queries
from pgq_tui.monitor.snapshot import (
    DeadList,
    LeaseList,
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
SAMPLE_ROWS = 3000  # rows in the page sample that shares out estimates above the cap (read only then)
PANELS = ("queues", "leases", "throughput", "table", "sessions", "dead")

T = TypeVar("T")


class Monitor:
    """Polls one jobs table. Not thread-safe: give each thread its own Monitor.

    count_cap: counts are exact up to this many rows per queue and state, estimated above (each count
    walks up to count_cap index entries, so this bounds a poll's cost; 500 keeps a 5M-row table's poll
    within 2x of a 10k-row one's). lease_rows: rows listed per lease and dead-letter list (the totals
    are true). history_s: seconds of per-second throughput history; rate_window_s: the window the
    rates are averaged over. read_only: the session refuses writes (the monitor never writes anyway).
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
        count_cap: int = 500,
        lease_rows: int = 50,
        history_s: int = 300,
        rate_window_s: int = 10,
        session_rows: int = 50,
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
        self._session = Session(
            conninfo,
            setup=_tune_session,
            application_name=APPLICATION_NAME,
            autocommit=True,
            statement_timeout_ms=statement_timeout_ms,
            lock_timeout_ms=lock_timeout_ms,
            read_only=read_only,
        )

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
        self._session.close()

    def __enter__(self) -> Monitor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _rows(self, name: str, version: int, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
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
            server = self._rows("server", version)[0]
            target = self._check(version)
        except psycopg.Error as exc:
            if not self._session.usable:
                self.close()
            raise describe(exc, table=self.qualified) from None
        now = server["now"]
        errors: dict[str, str] = {}
        jobs_oid = target["jobs_oid"]

        queue_rows, extra = self._guard(
            "queues",
            errors,
            ([], {"estimates": {}, "sample": []}),
            lambda: self._queue_rows(version, jobs_oid),
        )
        throughput = self._guard(
            "throughput",
            errors,
            panels.empty_throughput(self.rate_window_s),
            lambda: self._throughput(version, now, target),
        )
        queues = panels.queue_stats(
            queue_rows, extra["estimates"], self.table, self.count_cap, throughput.per_queue, extra["sample"]
        )
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
        sessions = self._guard("sessions", errors, Sessions((), (), (), 0), lambda: self._sessions(version))
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
    def _queue_rows(self, version: int, jobs_oid: int) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        cap1 = {"cap1": self.count_cap + 1}
        rows = [{"kind": "pending", **r} for r in self._rows("queue_pending", version, cap1)]
        rows += [{"kind": "states", **r} for r in self._rows("queue_states", version, cap1)]
        rows += [{"kind": "done", **r} for r in self._rows("queue_done", version, cap1)]
        extra: dict[str, Any] = {"estimates": {}, "sample": []}
        counted = ("ready", "scheduled", "running", "expired", "failed")
        over = any(r.get(k) is not None and r[k] > self.count_cap for r in rows for k in counted)
        if over or sum(r["n"] for r in rows if r["kind"] == "done") > self.count_cap:
            sizes = {
                r["name"]: panels.index_size(r)
                for r in self._rows("index_estimates", version, {"jobs_oid": jobs_oid})
            }
            extra["estimates"] = sizes
            # a sample of about SAMPLE_ROWS rows, whatever the table's size
            pct = min(100.0, 100.0 * SAMPLE_ROWS / max(sizes.get(self.table) or 1.0, 1.0))
            extra["sample"] = self._rows("queue_sample", version, {"pct": pct})
        return rows, extra

    def _throughput(self, version: int, now: Any, target: dict[str, Any]) -> Throughput:
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


class _PanelProblem(psycopg.Error):
    """A panel that cannot run at all (e.g. no SELECT on the counters table): reported, not raised."""


def collect(conninfo: str, **kw: Any) -> Snapshot:
    """One Snapshot from a fresh connection (for scripts; a dashboard keeps a Monitor)."""
    with Monitor(conninfo, **kw) as monitor:
        return monitor.collect()
