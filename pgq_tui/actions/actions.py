"""Actions: the guarded writes an operator triggers from the dashboard or the CLI, planned first, then
executed, on any detected queue (a dialect's QueueModel: pgq-top's own table is one of them).

Job actions are the dialect's ActionSpecs: a read-only preview fills the plan, a statement that
states its guard in SQL (and re-checks it on the locked row) does the write. The engine adds what
is the same for every dialect: one session (autocommit, short timeouts, read-only at the server
under --read-only), one role check, one batching loop (each batch its own transaction, never more
rows than the plan promised, counted from RETURNING), one way to explain a failure.

`plan*()` only reads and never raises: a plan that cannot run carries `refused`. The role check
and the preview run in one transaction, whose now() the plan records (`expired_before`): every job
statement gets it as `%(before)s`, so a dialect can bound its write to what was stuck when planned.
`execute()` never raises either: every failure becomes `ActionOutcome.error`, one line.

Session policy for cancel/terminate: our own session is never a target (the SQL excludes
pg_backend_pid()), and neither is any session whose application_name starts with "pgq-top" (this
dashboard's monitor and actions sessions, or another operator's pgq-top) unless the caller passes
`allow_pgq_top=True`: signalling them only blinds the tool in use, and they never hold long
transactions. Worker sessions and everything else are fair game.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.actions import statements as action_sql
from pgq_tui.actions.detail import attempt_history, detail_row
from pgq_tui.actions.explain import PRIVILEGE, explain, table_privilege_hint
from pgq_tui.actions.job_plans import NOUN, action_kind, job_plan, plan_action, refused_plan
from pgq_tui.actions.model import ACTIONS, ActionOutcome, Plan, plural
from pgq_tui.actions.pause import PAUSE, PAUSES, RESUME, pause_message, pause_plan, pause_title
from pgq_tui.actions.sessions import GONE, SIGNAL_WAIT_MS, signal_plan
from pgq_tui.actions.tune import TUNE, tune_plan, tune_refusal, tune_title
from pgq_tui.audit import AuditLog, ids_fields
from pgq_tui.db.connect import Session
from pgq_tui.dialects.contract import ActionKind, ActionSpec, Capability, JobId, QueueModel, Statement
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.errors import EXIT_ERROR, PgqError, describe
from pgq_tui.monitor.advice import Advice
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue.jobqueue import BATCH
from pgq_tui.search.run import Recheck

APPLICATION_NAME = "pgq-top actions"
SIGNALS = ("cancel", "terminate")
# progress of a running action, after each batch: (changed so far, planned)
Progress = Callable[[int, int], None]

_VERB = {
    "requeue": "requeued",
    "reap": "reaped",
    "retry": "retried",
    "discard": "discarded",
    "cancel-jobs": "cancelled",
    "cancel": "cancelled the query of",
    "terminate": "terminated",
}


def _pids(values: Iterable[int]) -> tuple[int, ...]:
    return tuple(sorted({int(v) for v in values}))


class Actions:
    def __init__(
        self,
        conninfo: str,
        model: QueueModel,
        *,
        read_only: bool = False,
        statement_timeout_ms: int = 15_000,
        lock_timeout_ms: int = 2_000,
        batch: int = BATCH,
        audit: AuditLog | None = None,
    ) -> None:
        self.model = model
        self.conninfo = conninfo
        # every write is recorded (pgq_tui/audit.py); the default follows $PGQ_TOP_AUDIT_LOG / XDG
        self.audit = audit if audit is not None else AuditLog.from_environment()
        self.read_only = read_only
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
        row = conn.execute("SELECT current_user").fetchone()
        self._role = str(row[0]) if row else "this role"

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
    def relation(self) -> tuple[str, str]:
        """(schema, table) of the queue's main relation: privileges are checked and tuned there."""
        return self.model.main_relation

    @property
    def qualified_table(self) -> str:
        return sql.Identifier(*self.relation).as_string(None)

    def _rows(self, statement: Statement | str, params: dict[str, Any]) -> list[dict[str, Any]]:
        query: Any = statement
        if isinstance(statement, Statement):
            query, params = statement.compose(), {**DEFAULTS, **params}
        with self._lock, self.conn.cursor(row_factory=dict_row) as cur:
            cur.execute(query, params)
            return cur.fetchall() if cur.description else []

    def _explain(self, exc: BaseException, action: str) -> str:
        return explain(
            exc,
            action=action,
            role=self._role,
            table=self.qualified_table,
            lock_timeout_ms=self.lock_timeout_ms,
        )

    def _check(self, action: str, check: dict[str, Any]) -> str | None:
        """Why this role cannot run a table action at all (from one CHECK row), or None."""
        if check["in_recovery"]:
            return "the server is a standby (in recovery): it accepts no writes"
        if check["read_only"]:
            return "the session is read-only (default_transaction_read_only is on)"
        if not check["table_exists"]:
            return f"table {self.qualified_table} does not exist"
        need = {"UPDATE": "can_update", "DELETE": "can_delete"}
        if not (check["can_select"] and all(check[need[p]] for p in PRIVILEGE.get(action, ("UPDATE",)))):
            return "no privilege: " + table_privilege_hint(action, self._role, self.qualified_table)
        return None

    def _planned(
        self, action: str, title: str, text: str, targets: tuple[Any, ...], build: Callable[[], Plan]
    ) -> Plan:
        """Run a plan builder, turning read-only mode and any failure into a refused plan."""
        if self.read_only:
            return refused_plan(action, title, "read-only mode", text, targets)
        try:
            return build()
        except Exception as exc:  # a plan is data for a dialog or a terminal: never raise
            return refused_plan(action, title, self._explain(exc, action), text, targets)

    # -- job actions: the dialect's ActionSpecs -------------------------------------------------
    def available(self) -> tuple[ActionKind, ...]:
        return tuple(a.kind for a in self.model.actions)

    def plan(self, kind: ActionKind, ids: Iterable[JobId] | None = None, queue: str | None = None) -> Plan:
        """What `kind` would change now among `ids` (None: every job its guard admits) in `queue`."""
        targets = tuple(dict.fromkeys(ids)) if ids is not None else ()
        action, spec = plan_action(kind), self.model.action(kind)
        if spec is None:
            offered = ", ".join(a.kind.value for a in self.model.actions) or "none"
            app = dict(self.model.needs_app).get(kind)  # the framework's action, done by its app only
            reason = f"needs the app: {app}" if app else (
                f"{self.model.title} ({self.model.kind}) has no {kind.value} action (it offers: {offered})"
            )
            return refused_plan(action, f"{kind.value.capitalize()} jobs", reason, "", targets)
        noun = NOUN.get(spec.applies_to, "job")
        title = f"{kind.value.capitalize()} {plural(len(targets), noun) if targets else 'every ' + noun}"
        text = spec.statement.shown()
        if ids is not None and not targets and not self.read_only:
            return refused_plan(action, title, "nothing selected", text, ())
        return self._planned(action, title, text, targets, lambda: self._job_plan(spec, ids, targets, queue))

    def _job_plan(
        self, spec: ActionSpec, ids: Iterable[JobId] | None, targets: tuple[JobId, ...], queue: str | None
    ) -> Plan:
        action, text = plan_action(spec.kind), spec.statement.shown()
        # one transaction: the role check's now() is the now() the preview's guard saw
        with self._lock, self.conn.transaction(), self.conn.cursor(row_factory=dict_row) as cur:
            cur.execute(action_sql.CHECK, {"table": self.qualified_table})
            check = cur.fetchone()
            assert check is not None
            why = self._check(action, check)
            if why:
                return refused_plan(action, f"{spec.kind.value.capitalize()} jobs", why, text, targets)
            chosen = list(targets) if ids is not None else None
            cur.execute(spec.preview.compose(), {**DEFAULTS, "ids": chosen, "queue": queue})
            preview = cur.fetchone()
            assert preview is not None
        return job_plan(
            spec,
            self.model,
            preview,
            targets,
            queue=queue,
            sql_text=text,
            batch=self.batch,
            as_of=check["as_of"],
        )

    # The dashboard's keys.
    def plan_requeue(self, ids: Iterable[JobId]) -> Plan:
        return self.plan(ActionKind.REQUEUE, ids)

    def plan_reap(self) -> Plan:
        """Every stuck job: the framework's reaper pass where it has one, else a requeue of all."""
        kind = ActionKind.REAP if self.model.action(ActionKind.REAP) else ActionKind.REQUEUE
        return self.plan(kind, None)

    def plan_retry(self, ids: Iterable[JobId]) -> Plan:
        return self.plan(ActionKind.RETRY, ids)

    def plan_discard(self, ids: Iterable[JobId]) -> Plan:
        return self.plan(ActionKind.DISCARD, ids)

    # -- a queue's pause (the framework's own: QueueModel.pause) ---------------------------------
    def plan_pause(self, queue: str) -> Plan:
        """Pause `queue` the framework's way; refused where it has none ("pg-boss has no queue pause")."""
        return self._plan_pause(PAUSE, queue)

    def plan_resume(self, queue: str) -> Plan:
        return self._plan_pause(RESUME, queue)

    def _plan_pause(self, action: str, queue: str) -> Plan:
        spec, title = self.model.pause, pause_title(action, queue)
        if spec is None:
            return refused_plan(action, title, str(self.model.support(Capability.PAUSE).reason), "")
        text = (spec.pause if action == PAUSE else spec.resume).shown()

        def build() -> Plan:
            with self._lock, self.conn.transaction(), self.conn.cursor(row_factory=dict_row) as cur:
                cur.execute(action_sql.CHECK, {"table": self.qualified_table})
                check = cur.fetchone()
                assert check is not None
                if check["in_recovery"] or check["read_only"]:
                    why = "standby (in recovery)" if check["in_recovery"] else "read-only session"
                    return refused_plan(action, title, f"the server accepts no writes here ({why})", text)
                cur.execute(spec.preview.compose(), {**DEFAULTS, "queue": queue})
                preview = cur.fetchone()
                assert preview is not None
            return pause_plan(action, self.model, spec, queue, preview, sql_text=text, as_of=check["as_of"])

        return self._planned(action, title, text, (), build)

    def _run_pause(self, plan: Plan) -> ActionOutcome:
        """The confirmed pause or resume: one statement in its own transaction, named for it."""
        spec, queue = self.model.pause, plan.queue or ""
        if spec is None:
            missing = str(self.model.support(Capability.PAUSE).reason)
            return ActionOutcome(plan.action, 1, 0, f"not run: {missing}", error=missing)
        statement = spec.pause if plan.action == PAUSE else spec.resume
        try:
            with self._batch_transaction(plan.action):
                changed = len(self._rows(statement, {"queue": queue}))
        except Exception as exc:
            error = self._explain(exc, plan.action)
            return ActionOutcome(
                plan.action, 1, 0, f"queue {queue!r} unchanged", error, describe(exc).exit_code
            )
        return ActionOutcome(plan.action, 1, changed, pause_message(plan.action, queue, changed, spec))

    # -- session actions ------------------------------------------------------------------------
    def plan_cancel(
        self, pids: Iterable[int], snapshot: Snapshot | None = None, *, allow_pgq_top: bool = False
    ) -> Plan:
        """pg_cancel_backend: the running statement fails, the session stays."""
        return self._plan_signal("cancel", _pids(pids), snapshot, allow_pgq_top)

    def plan_terminate(
        self, pids: Iterable[int], snapshot: Snapshot | None = None, *, allow_pgq_top: bool = False
    ) -> Plan:
        """pg_terminate_backend: the session's transaction rolls back and it is disconnected."""
        return self._plan_signal("terminate", _pids(pids), snapshot, allow_pgq_top)

    def _signal_sql(self, action: str) -> str:
        if action == "cancel":
            return action_sql.CANCEL
        if self.conn.info.server_version >= 130000:
            return action_sql.TERMINATE
        return action_sql.TERMINATE_PRE_130000

    def _plan_signal(
        self, action: str, pids: tuple[int, ...], snapshot: Snapshot | None, allow_pgq_top: bool
    ) -> Plan:
        verb = "Cancel the query of" if action == "cancel" else "Terminate"
        title = f"{verb} {plural(len(pids), 'session')}"
        text = (action_sql.CANCEL if action == "cancel" else action_sql.TERMINATE).strip()
        if not pids and not self.read_only:
            return refused_plan(action, title, "nothing selected", text)

        def build() -> Plan:
            own = {self.conn.info.backend_pid}
            seen: dict[int, datetime | None] = {}
            if snapshot is not None:
                own.add(snapshot.server.monitor_pid)
                sessions = snapshot.sessions
                seen = {b.blocking_pid: b.blocking_backend_start for b in sessions.blocked}
                seen |= {s.pid: s.backend_start for s in sessions.idle_in_transaction}
            rows = self._rows(action_sql.PREVIEW_SESSIONS, {"pids": list(pids)})
            return signal_plan(
                action,
                pids,
                rows,
                own=own,
                allow_pgq_top=allow_pgq_top,
                sql_text=self._signal_sql(action).strip(),
                role=self._role,
                seen=seen,
            )

        return self._planned(action, title, text, pids, build)

    # -- the advisor's per-table settings --------------------------------------------------------
    def plan_tune(self, advice: Advice) -> Plan:
        """The advice's ALTER TABLE on this queue's main relation, whatever the framework."""
        text = advice.table_sql or ""

        def build() -> Plan:
            why = tune_refusal(advice, self.relation)
            if why:
                return refused_plan(TUNE, tune_title(advice), why, text)
            (owner,) = self._rows(action_sql.OWNER, {"table": self.qualified_table})
            return tune_plan(advice, owner)

        return self._planned(TUNE, tune_title(advice), text, (), build)

    # -- execution ------------------------------------------------------------------------------
    def execute(
        self,
        plan: Plan,
        *,
        where: str | None = None,
        recheck: Recheck | None = None,
        progress: Progress | None = None,
        stop: threading.Event | None = None,
    ) -> ActionOutcome:
        """Run a plan; never raises. `changed` counts what really changed, even when a batch failed.

        `where` and `recheck` come with a plan over a search's matches: each batch then takes only
        the chosen ids that still match (`recheck`, locked in the batch's own transaction) before
        the action's guard is re-checked. `progress` hears after each batch. Every run is recorded
        in the audit log, before and after; one that cannot be recorded does not run. Ctrl-C stops
        it between batches, as does `stop` once set (the dashboard's stop key): the outcome says how
        many changed, and (`attempted`) how many of the chosen ids its batches reached."""
        if self.read_only or plan.refused or plan.action not in ACTIONS:
            return self._execute(plan, recheck, progress, stop)
        fields = {
            "kind": self.model.kind,
            "action": plan.action,
            "where": where,
            "queue": plan.queue,
            **ids_fields(plan.targets),
            "planned": plan.count,
        }
        try:
            self.audit.write(self.conninfo, "start", **fields)
        except PgqError as exc:
            reason = str(exc)
            return ActionOutcome(plan.action, plan.count, 0, f"not run: {reason}", error=reason)
        outcome = self._execute(plan, recheck, progress, stop)
        end = {**fields, "changed": outcome.changed, "outcome": outcome.message, "error": outcome.error}
        try:
            self.audit.write(self.conninfo, "end", **end)
        except PgqError as exc:  # it ran: say so, and that the record of it is missing
            return ActionOutcome(
                outcome.action,
                outcome.requested,
                outcome.changed,
                outcome.message,
                str(exc),
                EXIT_ERROR,
                outcome.attempted,
                outcome.stopped,
            )
        return outcome

    def _execute(
        self,
        plan: Plan,
        recheck: Recheck | None,
        progress: Progress | None,
        stop: threading.Event | None = None,
    ) -> ActionOutcome:
        requested = plan.count
        if plan.action not in ACTIONS:
            return ActionOutcome(
                plan.action, requested, 0, "unknown action", error=f"unknown action {plan.action!r}"
            )
        if self.read_only or plan.refused:
            reason = "read-only mode" if self.read_only else str(plan.refused)
            return ActionOutcome(plan.action, requested, 0, f"not run: {reason}", error=reason)
        if plan.action == TUNE:
            return self._run_tune(plan)
        if plan.action in PAUSES:
            return self._run_pause(plan)
        verb = _VERB[plan.action]
        gone: list[int] = []  # sessions whose planned backend_start no longer matches their pid
        taken: list[int] = []  # per batch of chosen ids: how many it reached
        batches: Iterator[int]
        if plan.action in SIGNALS:
            noun, batches = "session", self._signal_batches(plan, gone)
        else:
            spec = self.model.action(action_kind(plan.action))
            if spec is None:
                missing = f"{self.model.title} has no {plan.action} action"
                return ActionOutcome(plan.action, requested, 0, f"not run: {missing}", error=missing)
            noun, batches = NOUN.get(spec.applies_to, "job"), self._job_batches(spec, plan, recheck, taken)
            verb = spec.done or verb
        changed, error, code, stopped = 0, None, EXIT_ERROR, False
        try:
            for n in batches:
                changed += n
                if progress is not None:
                    progress(changed, requested)
                if stop is not None and stop.is_set():
                    raise KeyboardInterrupt  # between batches: the one that ran is committed
        except KeyboardInterrupt:  # between batches, or a batch cancelled and rolled back
            stopped, error, code = True, "stopped by the operator", 130
        except Exception as exc:  # the UI shows a line, never a traceback
            error, code = self._explain(exc, plan.action), describe(exc).exit_code
        message = f"{verb} {changed} of {plural(requested, noun)}"
        if stopped:
            message += "; stopped, the rest were left alone"
        elif error:
            message += " before an error"
        elif gone:
            message += f": pid {', '.join(map(str, gone))}: {GONE}, left alone"
        elif changed < requested:
            message += (
                " (the others had ended or did not exit in time)"
                if plan.action in SIGNALS
                else " (the others had changed state meanwhile and were left alone)"
            )
        attempted = sum(taken) if plan.targets and plan.action not in SIGNALS else None
        return ActionOutcome(plan.action, requested, changed, message, error, code, attempted, stopped)

    def _job_batches(
        self,
        spec: ActionSpec,
        plan: Plan,
        recheck: Recheck | None = None,
        taken: list[int] | None = None,
    ) -> Iterator[int]:
        """The guarded statement in batches (each its own transaction), at most `plan.count` rows;
        with `recheck`, each batch first keeps (and locks) the chosen ids that still match."""
        left = plan.count
        params = {"queue": plan.queue, "before": plan.expired_before}
        if plan.targets:
            ids = list(plan.targets)
            for start in range(0, len(ids), self.batch):
                if left <= 0:
                    return
                chunk = ids[start : start + self.batch]
                with self._batch_transaction(plan.action):
                    kept = recheck(self.conn, chunk) if recheck is not None else chunk
                    n = self._write(spec, params, kept, left) if kept else 0
                if taken is not None:
                    taken.append(len(chunk))
                left -= n
                yield n
            return
        while left > 0:
            size = min(self.batch, left)
            with self._batch_transaction(plan.action):
                n = len(self._rows(spec.statement, {**params, "ids": None, "batch": size}))
            left -= n
            yield n
            if n < size:
                return

    @contextmanager
    def _batch_transaction(self, action: str) -> Iterator[None]:
        """One batch's transaction, named for its write: while it runs, pg_stat_activity and the
        server's logs show application_name 'pgq-top <action>' (set_config local to the transaction:
        nothing outlives it, through a pooler too). Its statements are planned with this batch's ids
        (plan_cache_mode force_custom_plan): from the 6th batch psycopg runs them prepared, and a
        generic plan cannot go to the ids through `(ids IS NULL OR j.id = ANY(ids))`; it walked the
        primary key instead (1,000 of 52,000 rows: 532 ms a batch, not 27 ms)."""
        with self._lock, self.conn.transaction():
            self.conn.execute(
                "SELECT set_config('application_name', %s, true), set_config('plan_cache_mode', %s, true)",
                [f"pgq-top {action}", "force_custom_plan"],
            )
            yield

    def _write(self, spec: ActionSpec, params: dict[str, Any], chunk: list[JobId], left: int) -> int:
        return len(self._rows(spec.statement, {**params, "ids": chunk, "batch": min(left, len(chunk))}))

    def _signal_batches(self, plan: Plan, gone: list[int]) -> Iterator[int]:
        """One pid per statement (signals cannot be rolled back), guarded by its planned backend_start:
        no row back means that session is gone (added to `gone`); false, that it did not exit in time."""
        statement = self._signal_sql(plan.action)
        # a plan without them (made by hand) is guarded by the pid alone, as before they were planned
        starts = (*plan.backend_starts, *(None,) * (len(plan.targets) - len(plan.backend_starts)))
        for pid, started in zip(plan.targets, starts, strict=True):
            params = {
                "pid": pid,
                "backend_start": started,
                "allow_pgq_top": plan.allow_pgq_top,
                "wait_ms": SIGNAL_WAIT_MS,
            }
            rows = self._rows(statement, params)
            if not rows:
                gone.append(int(pid))
            yield sum(1 for r in rows if r["signalled"])

    def _run_tune(self, plan: Plan) -> ActionOutcome:
        """The confirmed ALTER TABLE (the SQL the confirmation showed)."""
        try:
            with self._lock:
                self.conn.execute(plan.sql.encode())
        except Exception as exc:
            error = self._explain(exc, TUNE)
            return ActionOutcome(TUNE, 1, 0, f"settings not applied: {error}", error=error)
        return ActionOutcome(TUNE, 1, 1, f"applied to {plan.title.rsplit(' ', 1)[-1]}: {plan.sql}")

    # -- reading --------------------------------------------------------------------------------
    def job_detail(self, job_id: JobId) -> dict[str, Any] | None:
        """The job in the detail screen's terms, with the framework's state and stuck rule; None if it
        is gone (or the dialect has no detail). Read-only. Raises PgqError (one line) on a failed read.
        """
        if self.model.job is None:
            return None
        try:
            rows = self._rows(self.model.job, {"id": job_id})
        except psycopg.Error as exc:
            raise describe(exc, table=self.qualified_table, hint=self.model.setup_hint) from None
        if not rows:
            return None
        detail = detail_row(rows[0], self.model)
        detail["history"] = self._attempts(job_id)
        detail["as_of"] = self._rows("SELECT now() AS now", {})[0]["now"]  # the ages' clock: the server's
        return detail

    def _attempts(self, job_id: JobId) -> dict[str, Any]:
        """The job's attempts where the kind keeps them (QueueModel.attempts); a failed read is a
        reason, never a failed detail."""
        if self.model.attempts is None:
            return attempt_history(None, self.model)
        try:
            return attempt_history(self._rows(self.model.attempts, {"id": job_id}), self.model)
        except psycopg.Error as exc:
            return attempt_history(None, self.model, str(describe(exc, table=self.qualified_table)))
