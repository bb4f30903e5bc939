"""The write keys (requeue, reap, retry, discard, cancel, terminate): plan in a worker, confirm, execute
in a worker, toast the ActionOutcome, refresh. The SQL itself lives in `pgq_tui.actions`, never here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import work

from pgq_tui.jobid import JobId
from pgq_tui.monitor.advice import advise
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.tui.messages import ActionFinished, PlanReady
from pgq_tui.tui.mixin import AppMixin
from pgq_tui.tui.ports import ActionsPort
from pgq_tui.tui.screens.advice import AdviceScreen
from pgq_tui.tui.screens.confirm import ConfirmScreen
from pgq_tui.tui.source import SnapshotSource
from pgq_tui.tui.widgets.jobs import LeasesTable
from pgq_tui.tui.widgets.table import PanelTable

if TYPE_CHECKING:
    from pgq_tui.actions import Plan


class Fixes(AppMixin):
    """Mixed into PgqTopApp; uses its `actions`, `snapshot`, `panel()` and `_tick()`."""

    actions: ActionsPort | None
    snapshot: Snapshot | None
    source: SnapshotSource

    def _targets(self, panel_id: str, what: str) -> list[JobId] | None:
        table: PanelTable = self.panel(panel_id)
        targets = table.targets()
        if not targets:
            self.notify(
                f"no {what} selected: move to the {table.TITLE[2:]} panel "
                f"(key {table.TITLE[0]}), mark rows with space",
                severity="warning",
            )
            return None
        return targets

    def action_requeue(self) -> None:
        focused = self.focused
        # Requeue acts on the job table the user is looking at; by default the stuck jobs.
        panel_id = "leases" if isinstance(focused, LeasesTable) else "stuck"
        ids = self._targets(panel_id, "stuck job")
        if ids is not None:
            self._plan(lambda a: a.plan_requeue(ids), panel_id)

    def action_reap(self) -> None:
        self._plan(lambda a: a.plan_reap(), "stuck")

    def action_retry(self) -> None:
        ids = self._targets("dead", "dead job")
        if ids is not None:
            self._plan(lambda a: a.plan_retry(ids), "dead")

    def action_discard(self) -> None:
        ids = self._targets("dead", "dead job")
        if ids is not None:
            self._plan(lambda a: a.plan_discard(ids), "dead")

    def action_cancel(self) -> None:
        pids = self._pids()
        if pids is not None:
            self._plan(lambda a: a.plan_cancel(pids, self.snapshot), "sessions")

    def action_terminate(self) -> None:
        pids = self._pids()
        if pids is not None:
            self._plan(lambda a: a.plan_terminate(pids, self.snapshot), "sessions")

    def _pids(self) -> list[int] | None:
        """The backend pids selected in the sessions panel (its rows' targets are pids)."""
        targets = self._targets("sessions", "session")
        return None if targets is None else [t for t in targets if isinstance(t, int)]

    def action_pause_queue(self) -> None:
        self._queue_plan("pause")

    def action_resume_queue(self) -> None:
        self._queue_plan("resume")

    def _queue_plan(self, action: str) -> None:
        """The queue under the queues panel's cursor (or the one marked), paused or resumed the
        framework's own way after a confirmation; a kind without a pause says so (refused plan)."""
        table: PanelTable = self.panel("queues")
        targets = table.targets()
        if len(targets) != 1:
            self.notify(
                "pick one queue: move to the queues panel (key 1) and put the cursor on it",
                severity="warning",
            )
            return
        queue = str(targets[0])
        if action == "pause":
            self._plan(lambda a: a.plan_pause(queue), "queues")
        else:
            self._plan(lambda a: a.plan_resume(queue), "queues")

    def action_advise(self) -> None:
        """The advisor over the last snapshot; `a` there plans the per-table ALTER TABLE."""
        snap = self.snapshot
        if snap is None or snap.bloat is None:
            self.notify("the advisor needs a few polls of a live queue first", severity="warning")
            return
        # autovacuum settings are per table: the queue's main relation, whatever the framework
        if self.actions is not None:
            schema, table = self.actions.relation
        else:
            schema, table = getattr(self.source, "schema", "public"), getattr(self.source, "table", "jobs")
        advice = advise(snap, schema, table)

        def chosen(apply: bool | None) -> None:
            if apply:
                self._plan(lambda a: a.plan_tune(advice), "")  # no marks to clear

        read_only = getattr(self, "read_only", False) or getattr(self.actions, "read_only", False)
        can_apply = self.actions is not None and not read_only
        self.push_screen(AdviceScreen(advice, snap, can_apply=can_apply), chosen)

    @work(thread=True, group="actions", exit_on_error=False)
    def _plan(self, make: Callable[[ActionsPort], Plan], panel_id: str) -> None:
        try:
            if self.actions is None:  # the write keys are disabled without one (check_action)
                raise RuntimeError("no actions engine (no database session)")
            plan = make(self.actions)
        except Exception as exc:  # planning should not raise; if it does, it is a message, not a crash
            self.call_from_thread(self.notify, f"could not plan: {exc}", severity="error")
            return
        self.post_message(PlanReady(plan, panel_id))

    # Named handlers, not @on: @on is collected by Textual's metaclass, which never sees a mixin's body.
    def on_plan_ready(self, message: PlanReady) -> None:
        plan = message.plan
        if getattr(plan, "refused", None):
            self.notify(str(plan.refused), title=str(plan.title), severity="warning", timeout=8)
            return
        if not plan.count:
            self.notify(f"nothing to do: {plan.description}", title=str(plan.title))
            return
        panel_id = message.panel_id

        def first(yes: bool | None) -> None:
            if not yes:
                self.notify("aborted: nothing was changed", timeout=3)
            elif plan.needs_second_confirmation:
                self.push_screen(ConfirmScreen(plan, second=True), second)
            else:
                self._execute(plan, panel_id)

        def second(yes: bool | None) -> None:
            if yes:
                self._execute(plan, panel_id)
            else:
                self.notify("aborted: nothing was changed", timeout=3)

        self.push_screen(ConfirmScreen(plan), first)

    @work(thread=True, group="actions", exit_on_error=False)
    def _execute(self, plan: Plan, panel_id: str | None) -> None:
        if self.actions is None:  # planned with an engine, so there is one: nothing to run otherwise
            return
        outcome = self.actions.execute(plan)  # never raises, by contract
        self.post_message(ActionFinished(outcome, panel_id))

    def on_action_finished(self, message: ActionFinished) -> None:
        o = message.outcome
        if getattr(o, "error", None):
            self.notify(str(o.message or o.error), title=f"{o.action} failed", severity="error", timeout=10)
        else:
            self.notify(str(o.message), title=f"{o.action}: {o.changed} of {o.requested} changed", timeout=6)
        panel_id = message.panel_id
        if panel_id:
            self.panel(panel_id).clear_marks()
        self._tick(force=True)
