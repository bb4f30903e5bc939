"""Actions: the guarded writes an operator triggers from the dashboard, planned first, then executed.

`plan_*()` only reads: what would change right now, whether this role may do it, and what could go
wrong (a lease whose worker is still connected). It never raises: a plan that cannot run carries
`refused`. `execute()` runs the queue's guarded statements (pgq_tui/queue/statements.py) in batches,
each batch its own transaction (the session is autocommit), counts what really changed from
RETURNING, and turns every failure into `Outcome.error`.

Session policy for cancel/terminate: our own session is never a target (the SQL excludes
pg_backend_pid()), and neither is any session whose application_name starts with "pgq-top" (this
dashboard's monitor and actions sessions, or another operator's pgq-top) unless the caller passes
`allow_pgq_top=True`: signalling them only blinds the tool in use, and they never hold long
transactions. Worker sessions (application_name = worker id) and everything else are fair game.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.actions import statements as ast
from pgq_tui.actions.explain import explain, table_privilege_hint
from pgq_tui.actions.job_plans import failed_plan, reap_plan, refused_plan, requeue_plan
from pgq_tui.actions.model import ACTIONS, Outcome, Plan
from pgq_tui.actions.model import plural as _plural
from pgq_tui.actions.sessions import SIGNAL_WAIT_MS, signal_plan
from pgq_tui.actions.tune import TUNE, run_tune
from pgq_tui.db.connect import Session
from pgq_tui.errors import describe
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import statements as qst
from pgq_tui.queue.jobqueue import BATCH
from pgq_tui.queue.schema import channel

APPLICATION_NAME = "pgq-top actions"

_VERB = {
    "requeue": "requeued",
    "reap": "reaped",
    "retry": "retried",
    "discard": "discarded",
    "cancel": "cancelled the query of",
    "terminate": "terminated",
}
_NOUN = {"cancel": "session", "terminate": "session", "reap": "expired lease"}


def _ids(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted({int(v) for v in values}))


class Actions:
    def __init__(
        self,
        conninfo: str,
        table: str = "jobs",
        schema: str = "public",
        *,
        read_only: bool = False,
        statement_timeout_ms: int = 15_000,
        lock_timeout_ms: int = 2_000,
        batch: int = BATCH,
    ) -> None:
        self.conninfo = conninfo
        self.table = table
        self.schema = schema
        self.read_only = read_only
        self.statement_timeout_ms = statement_timeout_ms
        self.lock_timeout_ms = lock_timeout_ms
        self.batch = batch
        self._role = "this role"
        self._session = Session(
            conninfo,
            setup=self._learn_role,
            application_name=APPLICATION_NAME,
            statement_timeout_ms=statement_timeout_ms,
            lock_timeout_ms=lock_timeout_ms,
            idle_in_transaction_timeout_ms=60_000,
            read_only=read_only,
        )
        # The UI may plan in one worker thread and execute in another: one statement at a time.
        self._lock = threading.RLock()

    # -- plumbing -------------------------------------------------------------------------------
    def _learn_role(self, conn: psycopg.Connection) -> None:
        self._role = str(conn.execute("SELECT current_user").fetchone()[0])

    @property
    def conn(self) -> psycopg.Connection:
        """The session, (re)opened on demand; read-only at the server when `read_only`."""
        with self._lock:
            return self._session.conn

    def close(self) -> None:
        with self._lock:
            self._session.close()

    def __enter__(self) -> Actions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def qualified_table(self) -> str:
        return sql.Identifier(self.schema, self.table).as_string(None)

    def _sql(self, statement: str) -> sql.Composed:
        return qst.compose(statement, self.table, self.schema)

    def _rows(self, statement: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        # channel: requeue and retry notify idle workers of the jobs they make ready.
        params = {"channel": channel(self.table, self.schema), **params}
        with self._lock, self.conn.cursor(row_factory=dict_row) as cur:
            cur.execute(self._sql(statement), params)
            return cur.fetchall() if cur.description else []

    def _check(self, action: str) -> str | None:
        """Why this role cannot run a table action at all, or None."""
        c = self._rows(ast.CHECK, {"table": self.qualified_table})[0]
        if c["in_recovery"]:
            return "the server is a standby (in recovery): it accepts no writes"
        if c["read_only"]:
            return "the session is read-only (default_transaction_read_only is on)"
        if not c["table_exists"]:
            return f"table {self.qualified_table} does not exist"
        need = "can_delete" if action == "discard" else "can_update"
        if not (c["can_select"] and c[need]):
            return "no privilege: " + table_privilege_hint(action, self._role, self.qualified_table)
        return None

    def _planned(
        self, action: str, sql_text: str, targets: tuple[int, ...], title: str, build: Callable[[], Plan]
    ) -> Plan:
        """Run a plan builder, turning read-only mode and any failure into a refused plan."""
        if self.read_only:
            return refused_plan(action, title, "read-only mode", sql_text, targets)
        if not targets and action != "reap":
            return refused_plan(action, title, "nothing selected", sql_text, targets)
        try:
            return build()
        except Exception as exc:  # a plan is data for a dialog: never raise into the UI
            return refused_plan(
                action,
                title,
                explain(
                    exc,
                    action=action,
                    role=self._role,
                    table=self.qualified_table,
                    lock_timeout_ms=self.lock_timeout_ms,
                ),
                sql_text,
                targets,
            )

    # -- job actions (wording in job_plans.py) ---------------------------------------------------
    def plan_requeue(self, ids: Iterable[int], snapshot: Snapshot | None = None) -> Plan:
        targets = _ids(ids)
        text = self._sql(qst.REQUEUE).as_string(None)
        title = f"Requeue {_plural(len(targets), 'stuck job')}"

        def build() -> Plan:
            reason = self._check("requeue")
            if reason:
                return refused_plan("requeue", title, reason, text, targets)
            preview = self._rows(ast.PREVIEW_STUCK, {"ids": list(targets)})[0]
            return requeue_plan(preview, targets, snapshot, text)

        return self._planned("requeue", text, targets, title, build)

    def plan_reap(self, snapshot: Snapshot | None = None) -> Plan:
        text = self._sql(qst.REAP).as_string(None)
        title = "Reap expired leases"

        def build() -> Plan:
            reason = self._check("reap")
            if reason:
                return refused_plan("reap", title, reason, text, ())
            preview = self._rows(ast.PREVIEW_STUCK, {"ids": None})[0]
            return reap_plan(preview, snapshot, text, self.batch)

        return self._planned("reap", text, (), title, build)

    def plan_retry(self, ids: Iterable[int]) -> Plan:
        return self._plan_failed("retry", _ids(ids))

    def plan_discard(self, ids: Iterable[int]) -> Plan:
        return self._plan_failed("discard", _ids(ids))

    def _plan_failed(self, action: str, targets: tuple[int, ...]) -> Plan:
        text = self._sql(qst.RETRY if action == "retry" else qst.DISCARD).as_string(None)
        title = f"{'Retry' if action == 'retry' else 'Discard'} {_plural(len(targets), 'dead job')}"

        def build() -> Plan:
            reason = self._check(action)
            if reason:
                return refused_plan(action, title, reason, text, targets)
            preview = self._rows(ast.PREVIEW_FAILED, {"ids": list(targets)})[0]
            return failed_plan(action, preview, targets, text)

        return self._planned(action, text, targets, title, build)

    # -- session actions ------------------------------------------------------------------------
    def plan_cancel(
        self, pids: Iterable[int], snapshot: Snapshot | None = None, *, allow_pgq_top: bool = False
    ) -> Plan:
        """pg_cancel_backend: the running statement fails, the session stays."""
        return self._plan_signal("cancel", _ids(pids), snapshot, allow_pgq_top)

    def plan_terminate(
        self, pids: Iterable[int], snapshot: Snapshot | None = None, *, allow_pgq_top: bool = False
    ) -> Plan:
        """pg_terminate_backend: the session's transaction rolls back and it is disconnected."""
        return self._plan_signal("terminate", _ids(pids), snapshot, allow_pgq_top)

    def _signal_sql(self, action: str) -> str:
        if action == "cancel":
            return ast.CANCEL
        return ast.TERMINATE if self.conn.info.server_version >= 130000 else ast.TERMINATE_PRE_130000

    def _plan_signal(
        self, action: str, pids: tuple[int, ...], snapshot: Snapshot | None, allow_pgq_top: bool
    ) -> Plan:
        verb = "Cancel the query of" if action == "cancel" else "Terminate"
        title = f"{verb} {_plural(len(pids), 'session')}"
        text = (ast.CANCEL if action == "cancel" else ast.TERMINATE).strip()

        def build() -> Plan:
            own = {self.conn.info.backend_pid}
            if snapshot is not None:
                own.add(snapshot.server.monitor_pid)
            rows = self._rows(ast.PREVIEW_SESSIONS, {"pids": list(pids)})
            return signal_plan(
                action,
                pids,
                rows,
                own=own,
                allow_pgq_top=allow_pgq_top,
                sql_text=self._signal_sql(action).strip(),
                role=self._role,
            )

        return self._planned(action, text, pids, title, build)

    # -- execution ------------------------------------------------------------------------------
    def _batches(self, plan: Plan) -> Iterator[int]:
        """Run the plan, yielding what each batch (one transaction) changed."""
        if plan.action == "reap":
            while True:
                params = {"batch": self.batch, "before": plan.expired_before}
                n = len(self._rows(qst.REAP, params))
                yield n
                if n < self.batch:
                    return
        if plan.action in ("cancel", "terminate"):
            statement = self._signal_sql(plan.action)
            for pid in plan.targets:  # one pid per statement: signals cannot be rolled back
                rows = self._rows(
                    statement, {"pid": pid, "allow_pgq_top": plan.allow_pgq_top, "wait_ms": SIGNAL_WAIT_MS}
                )
                yield sum(1 for r in rows if r["signalled"])
            return
        statement = {"requeue": qst.REQUEUE, "retry": qst.RETRY, "discard": qst.DISCARD}[plan.action]
        ids = list(plan.targets)
        for start in range(0, len(ids), self.batch):
            yield len(self._rows(statement, {"ids": ids[start : start + self.batch]}))

    def execute(self, plan: Plan) -> Outcome:
        """Run a plan; never raises. `changed` counts what really changed, even when a batch failed."""
        if plan.action == TUNE:  # the advisor's ALTER TABLE (actions/tune.py)
            with self._lock:
                return run_tune(self, plan)
        requested = plan.count if plan.action == "reap" else len(plan.targets)
        noun = _NOUN.get(plan.action, "job")
        if plan.action not in ACTIONS:
            return Outcome(
                plan.action, requested, 0, "unknown action", error=f"unknown action {plan.action!r}"
            )
        if self.read_only or plan.refused:
            reason = "read-only mode" if self.read_only else str(plan.refused)
            return Outcome(plan.action, requested, 0, f"not run: {reason}", error=reason)
        changed, error = 0, None
        try:
            for n in self._batches(plan):
                changed += n
        except Exception as exc:  # the UI shows a line, never a traceback
            error = explain(
                exc,
                action=plan.action,
                role=self._role,
                table=self.qualified_table,
                lock_timeout_ms=self.lock_timeout_ms,
            )
        if plan.action == "reap":
            message = f"{_VERB['reap']} {_plural(changed, noun)}"
        else:
            message = f"{_VERB[plan.action]} {changed} of {_plural(requested, noun)}"
        if error:
            message += " before an error"
        elif changed < requested and plan.action != "reap":
            message += (
                " (the others had ended or did not exit in time)"
                if plan.action in ("cancel", "terminate")
                else " (the others had changed state meanwhile and were left alone)"
            )
        return Outcome(plan.action, requested, changed, message, error)

    # -- reading --------------------------------------------------------------------------------
    def job_detail(self, job_id: int) -> dict[str, Any] | None:
        """The full row (payload, last_error, timestamps), or None if it is gone. Read-only.

        Raises PgqError (one line) when the database cannot be read.
        """
        try:
            rows = self._rows(qst.GET_JOB, {"id": int(job_id)})
        except psycopg.Error as exc:
            raise describe(exc, table=self.qualified_table) from None
        return rows[0] if rows else None
