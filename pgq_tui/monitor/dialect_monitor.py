"""`DialectMonitor.collect() -> Snapshot` for a queue any dialect describes.

The queue panels run the statements the dialect supplies (each capped, each guarded on its own: a
failing statement empties its panel and says why); the server-wide panels (server, table health of
the dialect's main relation, sessions) are the Monitor's own. Panels the dialect cannot serve are
listed in `Snapshot.unsupported` with the reason (e.g. the index it wants), never run.
"""

from __future__ import annotations

import time
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.db.introspect import DEFAULTS
from pgq_tui.dialects.contract import QueueModel, Statement
from pgq_tui.errors import EXIT_PRIVILEGE, EXIT_SCHEMA, PgqError, describe
from pgq_tui.monitor import dialect_panels, panels, rates
from pgq_tui.monitor.background import GROUPS
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.dialect_background import DialectBackgroundCounter
from pgq_tui.monitor.snapshot import DeadList, LeaseList, ServerInfo, Sessions, Snapshot

_RELATION = """
SELECT c.oid::bigint AS oid, c.oid IS NOT NULL AND has_table_privilege(c.oid, 'SELECT') AS can_select,
       current_user::text AS role
FROM (SELECT to_regclass(format('%%I.%%I', %(schema)s::text, %(table)s::text)) AS oid) c
"""


class DialectMonitor(Monitor):
    """Polls one queue through its dialect's QueueModel. Not thread-safe, like Monitor."""

    def __init__(self, conninfo: str, model: QueueModel, **kw: Any) -> None:
        schema, table = model.relations[0] if model.relations else (model.match.schema, model.match.table)
        super().__init__(conninfo, table, schema, **kw)
        self.model = model
        # the claim-cost probe runs this framework's own claim scan (None: not supplied)
        self.bloat.probe = model.claim_probe.compose() if model.claim_probe is not None else None
        # the Monitor's background counter runs pgq-top's own SQL: count through the dialect instead
        pgq_counter = self._counter
        self._counter = DialectBackgroundCounter(
            conninfo,
            model,
            dialect_panels.FIELD,
            budget_ms=pgq_counter.budget_ms,
            min_interval_s=pgq_counter.min_interval_s,
            read_only=self.read_only,
        )
        pgq_counter.close()

    def _run(self, statement: Statement, **params: Any) -> list[dict[str, Any]]:
        with self._connection().cursor(row_factory=dict_row) as cur:
            cur.execute(statement.compose(), {**DEFAULTS, **params}, prepare=True)
            return cur.fetchall()

    def collect(self) -> Snapshot:
        started = time.perf_counter()
        model = self.model
        try:
            version = self._connection().info.server_version
            server = self._rows("server", version)[0]
            with self._connection().cursor(row_factory=dict_row) as cur:
                rel = cur.execute(_RELATION, {"schema": self.schema, "table": self.table}).fetchone()
        except psycopg.Error as exc:
            if not self._session.usable:
                self.close()
            raise describe(exc, table=self.qualified) from None
        assert rel is not None
        if rel["oid"] is None:
            raise PgqError(f"table {self.qualified} does not exist any more", EXIT_SCHEMA)
        if not rel["can_select"]:
            raise PgqError(
                f"permission denied: role {rel['role']} cannot read {self.qualified}; grant it with: "
                f"GRANT SELECT ON {self.qualified} TO {rel['role']}",
                EXIT_PRIVILEGE,
            )
        errors: dict[str, str] = {}
        cap1 = self.count_cap + 1
        unsupported = dialect_panels.unsupported(model)

        def counts() -> list[dict[str, Any]]:
            return [r for s in model.counts for r in self._run(s, cap1=cap1)]

        no_rows: list[dict[str, Any]] = []
        count_rows = self._guard("queues", errors, no_rows, counts)
        now = server["now"]
        counters = None
        if model.throughput is not None:
            until, since = panels.window(now, max(self.history_s, self.rate_window_s))
            statement = model.throughput
            counters = self._guard(
                "throughput",
                errors,
                None,
                lambda: panels.throughput(
                    self._run(statement, since=since, until=until), until, self.history_s, self.rate_window_s
                ),
            )
        bg = self._counter.latest()
        also = set(counters.per_queue) if counters is not None else set()
        queues = dialect_panels.queue_stats(count_rows, model, cap1, now, bg, also)
        if "queues" not in errors:
            reads, _ = dialect_panels.poll_reads(count_rows)
            self._counter.want(
                frozenset(GROUPS) if dialect_panels.over_cap(reads, model, cap1) else frozenset()
            )
        empty = (LeaseList((), 0), LeaseList((), 0))
        leases, stuck = empty
        if model.leases is not None:
            statement = model.leases
            leases, stuck = self._guard(
                "leases",
                errors,
                empty,
                lambda: dialect_panels.lease_lists(self._run(statement, rows=self.lease_rows), queues),
            )
        dead = DeadList((), 0)
        if model.dead is not None:
            statement_dead = model.dead
            dead = self._guard(
                "dead",
                errors,
                dead,
                lambda: dialect_panels.dead_list(self._run(statement_dead, rows=self.lease_rows), queues),
            )
        table = self._guard(
            "table", errors, panels.empty_table(self.qualified), lambda: self._table(version, rel["oid"])
        )
        # Per-queue rates need the framework's own counters (model.throughput); the table-wide row
        # changes (pg_stat_user_tables) are true for any writer and shown in any case.
        if "table" not in errors:
            self._remember(
                rates.Activity(now, 0, {}, 0, 0, (), pg=(table.inserted, table.updated, table.deleted))
            )
        throughput = rates.throughput(
            counters, self._window(now), tuple(self._polls), None, self.rate_window_s, self.history_s, now
        )
        sessions = self._guard("sessions", errors, Sessions((), (), (), 0), lambda: self._sessions(version))
        bloat = self._bloat_report(version, errors, rel["oid"], table, sessions, queues, now)
        info = ServerInfo(
            version=server["version"],
            version_num=version,
            now=server["now"],
            database=server["database"],
            in_recovery=server["in_recovery"],
            collect_ms=(time.perf_counter() - started) * 1000,
            monitor_pid=server["pid"],
        )
        return Snapshot(
            server=info,
            queues=queues,
            leases=leases,
            expired=stuck,
            throughput=throughput,
            table=table,
            sessions=sessions,
            errors=errors,
            dead=dead,
            kind=model.kind,
            target=model.match.label,
            stuck_rule=model.stuck_rule,
            unsupported=unsupported,
            counts=self._count_status(now, bg),
            bloat=bloat,
        )

    def job_detail(self, job_id: Any) -> dict[str, Any] | None:
        """One job in the dialect's canonical JOB_COLUMNS, or None when it is gone."""
        if self.model.job is None:
            return None
        rows = self._run(self.model.job, id=job_id)
        return rows[0] if rows else None


def open_monitor(conninfo: str, model: QueueModel, **kw: Any) -> Monitor:
    """The collector for a detected queue: pgq-top's own table keeps the native Monitor (its counts
    above the cap are estimated from its partial indexes and it has exact counters); every other
    dialect is polled through its statements."""
    if model.kind == "pgq":
        return _NativeMonitor(conninfo, model, **kw)
    return DialectMonitor(conninfo, model, **kw)


class _NativeMonitor(Monitor):
    """The pgq Monitor, tagging its Snapshot with what the dialect says about the table."""

    def __init__(self, conninfo: str, model: QueueModel, **kw: Any) -> None:
        super().__init__(conninfo, model.match.table, model.match.schema, **kw)
        self.model = model

    def collect(self) -> Snapshot:
        import dataclasses

        snap = super().collect()
        return dataclasses.replace(
            snap,
            kind=self.model.kind,
            target=self.model.match.label,
            stuck_rule=self.model.stuck_rule,
            unsupported={**dialect_panels.unsupported(self.model), **snap.unsupported},
        )
