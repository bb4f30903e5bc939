"""Job actions on any dialect's queue: plan from the dialect's preview, run its guarded statement.

The same Plan/Outcome as `Actions` (the dashboard and the CLI render both). A dialect supplies each
action's SQL with its guard in the WHERE clause; this module only runs it: previews read-only, writes
in batches of `batch` rows, each batch its own transaction (the session is autocommit), never more
rows than the plan promised, counting what really changed from RETURNING.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import replace
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.actions import statements as ast
from pgq_tui.actions.actions import Actions
from pgq_tui.actions.explain import explain, table_privilege_hint
from pgq_tui.actions.job_plans import refused_plan
from pgq_tui.actions.model import Outcome, Plan, plural
from pgq_tui.db.connect import Session
from pgq_tui.db.introspect import DEFAULTS
from pgq_tui.dialects.contract import ActionKind, ActionSpec, JobId, QueueModel, State, Statement
from pgq_tui.errors import describe
from pgq_tui.queue.jobqueue import BATCH

APPLICATION_NAME = "pgq-top actions"
JOB_CANCEL = "cancel-jobs"  # Plan.action of ActionKind.CANCEL ("cancel" is a session's query)

_NOUN = {State.STUCK: "stuck job", State.DEAD: "dead job"}
_VERB = {
    ActionKind.REQUEUE: "requeued",
    ActionKind.REAP: "reaped",
    ActionKind.RETRY: "retried",
    ActionKind.DISCARD: "discarded",
    ActionKind.CANCEL: "cancelled",
}


class DialectActions:
    def __init__(
        self,
        conninfo: str,
        model: QueueModel,
        *,
        read_only: bool = False,
        statement_timeout_ms: int = 15_000,
        lock_timeout_ms: int = 2_000,
        batch: int = BATCH,
    ) -> None:
        self.model = model
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
        self._lock = threading.RLock()
        # cancel/terminate are about sessions, not the queue: the established Actions serve them
        self._signals = Actions(
            conninfo,
            model.match.table,
            model.match.schema,
            read_only=read_only,
            statement_timeout_ms=statement_timeout_ms,
            lock_timeout_ms=lock_timeout_ms,
        )

    def _learn_role(self, conn: psycopg.Connection) -> None:
        self._role = str(conn.execute("SELECT current_user").fetchone()[0])  # type: ignore[index]

    def close(self) -> None:
        with self._lock:
            self._session.close()
        self._signals.close()

    def __enter__(self) -> DialectActions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def table(self) -> str:
        schema, name = self.model.relations[0]
        return psycopg.sql.Identifier(schema, name).as_string(None)

    def _run(self, statement: Statement | str, params: dict[str, Any]) -> list[dict[str, Any]]:
        with self._lock, self._session.conn.cursor(row_factory=dict_row) as cur:
            query = statement.compose() if isinstance(statement, Statement) else statement
            cur.execute(query, {**DEFAULTS, **params})
            return cur.fetchall() if cur.description else []

    def available(self) -> tuple[ActionKind, ...]:
        return tuple(a.kind for a in self.model.actions)

    # -- planning -----------------------------------------------------------------------------
    def plan(self, kind: ActionKind, ids: Iterable[JobId] | None = None, queue: str | None = None) -> Plan:
        """What `kind` would change now among `ids` (None: every job its guard admits) in `queue`.

        Never raises: a plan that cannot run carries `refused`, in one line.
        """
        plan = self._plan(kind, ids, queue)
        # a job cancel is not the session cancel ("cancel" plans go to pg_cancel_backend)
        return replace(plan, action=JOB_CANCEL) if kind == ActionKind.CANCEL else plan

    def _plan(self, kind: ActionKind, ids: Iterable[JobId] | None, queue: str | None) -> Plan:
        targets = tuple(dict.fromkeys(ids)) if ids is not None else ()
        spec = self.model.action(kind)
        noun = "job"
        if spec is None:
            title = f"{kind.value.capitalize()} jobs"
            offered = ", ".join(a.kind.value for a in self.model.actions) or "none"
            reason = (
                f"{self.model.title} ({self.model.kind}) has no {kind.value} action (it offers: {offered})"
            )
            return refused_plan(kind.value, title, reason, "", _ints(targets))
        noun = _NOUN.get(spec.applies_to, "job")
        shown = spec.statement.shown()
        title = f"{kind.value.capitalize()} {plural(len(targets), noun) if targets else 'every ' + noun}"
        if self.read_only:
            return refused_plan(kind.value, title, "read-only mode", shown, _ints(targets))
        if ids is not None and not targets:
            return refused_plan(kind.value, title, "nothing selected", shown, ())
        try:
            why = self._check(kind)
            if why:
                return refused_plan(kind.value, title, why, shown, _ints(targets))
            (preview,) = self._run(
                spec.preview, {"ids": list(targets) if ids is not None else None, "queue": queue}
            )
        except Exception as exc:  # a plan is data for a dialog or a terminal: never raise
            reason = explain(
                exc,
                action=kind.value,
                role=self._role,
                table=self.table,
                lock_timeout_ms=self.lock_timeout_ms,
            )
            return refused_plan(kind.value, title, reason, shown, _ints(targets))
        return plan_from_preview(spec, self.model, preview, targets, queue, shown)

    def _check(self, kind: ActionKind) -> str | None:
        c = self._run(ast.CHECK, {"table": self.table})[0]
        if c["in_recovery"]:
            return "the server is a standby (in recovery): it accepts no writes"
        if c["read_only"]:
            return "the session is read-only (default_transaction_read_only is on)"
        if not c["table_exists"]:
            return f"table {self.table} does not exist"
        need = "can_delete" if kind == ActionKind.DISCARD else "can_update"
        if not (c["can_select"] and c[need]):
            return "no privilege: " + table_privilege_hint(kind.value, self._role, self.table)
        return None

    # -- the dashboard's keys (the same interface as Actions) ----------------------------------
    def plan_requeue(self, ids: Iterable[JobId], snapshot: object | None = None) -> Plan:
        return self.plan(ActionKind.REQUEUE, ids)

    def plan_reap(self, snapshot: object | None = None) -> Plan:
        """Every stuck job: the framework's reaper pass where it has one, else a requeue of all."""
        kind = ActionKind.REAP if self.model.action(ActionKind.REAP) else ActionKind.REQUEUE
        return self.plan(kind, None)

    def plan_retry(self, ids: Iterable[JobId]) -> Plan:
        return self.plan(ActionKind.RETRY, ids)

    def plan_discard(self, ids: Iterable[JobId]) -> Plan:
        return self.plan(ActionKind.DISCARD, ids)

    def plan_cancel(self, pids: Iterable[int], snapshot: Any = None, *, allow_pgq_top: bool = False) -> Plan:
        return self._signals.plan_cancel(pids, snapshot, allow_pgq_top=allow_pgq_top)

    def plan_terminate(
        self, pids: Iterable[int], snapshot: Any = None, *, allow_pgq_top: bool = False
    ) -> Plan:
        return self._signals.plan_terminate(pids, snapshot, allow_pgq_top=allow_pgq_top)

    def job_detail(self, job_id: JobId) -> dict[str, Any] | None:
        """The job in the detail screen's terms, with the framework's state and stuck rule."""
        if self.model.job is None:
            return None
        try:
            rows = self._run(self.model.job, {"id": job_id})
        except psycopg.Error as exc:
            raise describe(exc, table=self.table) from None
        return detail_row(rows[0], self.model) if rows else None

    # -- execution ----------------------------------------------------------------------------
    def execute(self, plan: Plan) -> Outcome:
        """Run a plan; never raises. Touches at most `plan.count` rows, in batches."""
        if plan.action in ("cancel", "terminate"):
            return self._signals.execute(plan)
        requested = plan.count
        if self.read_only or plan.refused:
            reason = "read-only mode" if self.read_only else str(plan.refused)
            return Outcome(plan.action, requested, 0, f"not run: {reason}", error=reason)
        kind = ActionKind.CANCEL if plan.action == JOB_CANCEL else ActionKind(plan.action)
        spec = self.model.action(kind)
        assert spec is not None  # a plan without a spec is refused
        changed, error = 0, None
        try:
            for n in self._batches(spec, plan):
                changed += n
        except Exception as exc:
            error = explain(
                exc,
                action=plan.action,
                role=self._role,
                table=self.table,
                lock_timeout_ms=self.lock_timeout_ms,
            )
        noun = _NOUN.get(spec.applies_to, "job")
        message = f"{_VERB[kind]} {changed} of {plural(requested, noun)}"
        if error:
            message += " before an error"
        elif changed < requested:
            message += " (the others had changed state meanwhile and were left alone)"
        return Outcome(plan.action, requested, changed, message, error)

    def _batches(self, spec: ActionSpec, plan: Plan) -> Iterator[int]:
        left = plan.count
        if plan.targets:
            ids = list(plan.targets)
            for start in range(0, len(ids), self.batch):
                if left <= 0:
                    return
                chunk = ids[start : start + self.batch]
                n = len(
                    self._run(
                        spec.statement, {"ids": chunk, "queue": plan.queue, "batch": min(left, len(chunk))}
                    )
                )
                left -= n
                yield n
            return
        while left > 0:
            size = min(self.batch, left)
            n = len(self._run(spec.statement, {"ids": None, "queue": plan.queue, "batch": size}))
            left -= n
            yield n
            if n < size:
                return


def detail_row(row: dict[str, Any], model: QueueModel) -> dict[str, Any]:
    """A canonical JOB_COLUMNS row in the detail screen's keys, plus the framework's words."""
    native = row.get("native_state")
    state = row["state"] if native in (None, row["state"]) else f"{row['state']} ({native})"
    return {
        "id": row["id"],
        "queue": row["queue"],
        "status": state,
        "attempts": row["attempts"] if row["attempts"] is not None else "?",
        "max_attempts": row["max_attempts"] if row["max_attempts"] is not None else "?",
        "locked_by": row["holder"],
        "locked_until": None,
        "run_at": row["run_at"],
        "created_at": row["created_at"],
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "last_error": row["error"],
        "payload": _json_or_text(row["payload"]),
        "kind": f"{model.title} ({model.kind})",
        "stuck_rule": model.stuck_rule,
        "details": row.get("details") or {},
    }


def _json_or_text(payload: str | None) -> Any:
    """A payload as its JSON value when it is JSON text (pretty-printed by the detail), else the text."""
    if payload is None:
        return None
    try:
        return json.loads(payload)
    except ValueError:
        return payload


def _ints(ids: Sequence[JobId]) -> tuple[int, ...]:
    return tuple(ids)  # type: ignore[arg-type]  # Plan.targets holds any job id


def plan_from_preview(
    spec: ActionSpec,
    model: QueueModel,
    preview: dict[str, Any],
    targets: tuple[JobId, ...],
    queue: str | None,
    sql_text: str,
) -> Plan:
    """Pure: the preview row -> the Plan a confirmation shows (what, how many at most, the SQL)."""
    noun = _NOUN.get(spec.applies_to, "job")
    eligible, alive = int(preview["eligible"]), int(preview["alive"])
    verb = spec.kind.value
    where = f" in queue {queue!r}" if queue is not None else ""
    if not eligible:
        chosen = f"none of the {plural(len(targets), 'selected job')}" if targets else f"no job{where}"
        reason = f"{chosen} is {spec.applies_to.value} ({spec.guard}): nothing to {verb}"
        return refused_plan(verb, f"{verb.capitalize()} {noun}s", reason, sql_text, _ints(targets))
    others = len(targets) - eligible if targets else 0
    description = (
        f"{model.title} · {model.match.schema}.{model.match.table}: {spec.label} on "
        f"{plural(eligible, noun)}{where} (at most {plural(eligible, 'row')}). Changes: {spec.effect}. "
        f"Only rows where {spec.guard} are touched; the guard is checked again on each locked row."
        + (f" {plural(others, 'selected job')} outside the guard will be left alone." if others > 0 else "")
    )
    warning = None
    if alive:
        warning = (
            f"{alive} of these jobs' holders still have a session open: they may still be running, "
            f"and {verb} lets another worker run them a second time."
        )
    title = f"{verb.capitalize()} {plural(eligible, noun)}"
    return Plan(
        verb,
        title,
        description,
        sql_text,
        _ints(targets),
        eligible,
        spec.destructive,
        warning is not None,
        warning,
        queue=queue,
    )
