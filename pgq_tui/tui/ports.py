"""What the dashboard asks of the engine behind it, as Protocols: the seams between the TUI and the
actions engine (`pgq_tui.actions.Actions`) and the demo (`pgq_tui.demo.DemoController`).

The app depends on these shapes, not on the classes, so a test may hand it anything that fits; the
checker proves that the real classes do (see `_conforms` below). The snapshot seam is
`source.SnapshotSource`.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Protocol

from pgq_tui.actions.bulk import Engine
from pgq_tui.jobid import JobId

if TYPE_CHECKING:
    from pgq_tui.actions import Actions, Plan
    from pgq_tui.demo.controller import DemoController, DemoStatus
    from pgq_tui.monitor.advice import Advice
    from pgq_tui.monitor.snapshot import Snapshot


class ActionsPort(Engine, Protocol):
    """The write keys' engine: it plans (never raises a database error at the UI) and executes
    (`Engine`: plan/execute, and the connection and model the search panel searches with)."""

    @property
    def read_only(self) -> bool: ...

    @property
    def relation(self) -> tuple[str, str]: ...  # (schema, table) of the queue's main relation

    def plan_requeue(self, ids: Iterable[JobId]) -> Plan: ...

    def plan_reap(self) -> Plan: ...

    def plan_retry(self, ids: Iterable[JobId]) -> Plan: ...

    def plan_discard(self, ids: Iterable[JobId]) -> Plan: ...

    def plan_cancel(
        self, pids: Iterable[int], snapshot: Snapshot | None = None, *, allow_pgq_top: bool = False
    ) -> Plan: ...

    def plan_terminate(
        self, pids: Iterable[int], snapshot: Snapshot | None = None, *, allow_pgq_top: bool = False
    ) -> Plan: ...

    def plan_tune(self, advice: Advice) -> Plan: ...

    def plan_pause(self, queue: str) -> Plan: ...

    def plan_resume(self, queue: str) -> Plan: ...

    def job_detail(self, job_id: JobId) -> dict[str, Any] | None: ...


class DemoPort(Protocol):
    """The demo's controls (keys only with --demo) and the status line under the header."""

    def status(self) -> DemoStatus: ...

    def add_worker(self) -> str: ...

    def remove_worker(self) -> str | None: ...

    def crash_worker(self) -> int | None: ...

    def raise_load(self) -> float: ...

    def lower_load(self) -> float: ...

    def toggle_slow(self) -> bool: ...

    def open_idle_transaction(self) -> int: ...

    def close_idle_transaction(self) -> bool: ...


if TYPE_CHECKING:

    def _conforms(actions: Actions, demo: DemoController) -> tuple[ActionsPort, DemoPort]:
        return actions, demo  # the checker fails here when a class drifts from its port
