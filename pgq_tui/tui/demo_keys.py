"""Demo controls (only with --demo): each key runs a DemoController call in a worker and toasts the result."""

from __future__ import annotations

from collections.abc import Callable

from textual import work

from pgq_tui.tui.messages import DemoDone
from pgq_tui.tui.mixin import AppMixin
from pgq_tui.tui.ports import DemoPort


class DemoKeys(AppMixin):
    """Mixed into PgqTopApp; uses its `demo` (a DemoController or None)."""

    demo: DemoPort | None

    @work(thread=True, group="demo", exit_on_error=False)
    def _demo(self, call: Callable[[DemoPort], str]) -> None:
        try:
            if self.demo is None:  # the demo keys are disabled without one (check_action)
                raise RuntimeError("no demo running")
            text, error = call(self.demo), False
        except Exception as exc:  # a demo control failing must never take the dashboard down
            text, error = f"demo control failed: {exc}", True
        self.post_message(DemoDone(text, error))

    def on_demo_done(self, message: DemoDone) -> None:  # named handler: @on is not seen on a mixin
        self.notify(message.text, title="demo", severity="error" if message.error else "information")
        self._tick(force=True)

    def action_demo_add_worker(self) -> None:
        self._demo(lambda d: f"worker {d.add_worker()} added ({_workers(d)})")

    def action_demo_remove_worker(self) -> None:
        self._demo(
            lambda d: (
                "no worker to remove" if d.remove_worker() is None else f"worker removed ({_workers(d)})"
            )
        )

    def action_demo_raise_load(self) -> None:
        self._demo(lambda d: f"load raised to {d.raise_load():.0f} jobs/s")

    def action_demo_lower_load(self) -> None:
        self._demo(lambda d: f"load lowered to {d.lower_load():.0f} jobs/s")

    def action_demo_crash(self) -> None:
        def crash(d: DemoPort) -> str:
            pid = d.crash_worker()
            if pid is None:
                return "no worker to crash"
            return (
                f"killed worker pid {pid} with SIGKILL: its jobs get stuck when their leases expire; "
                "the pool starts a replacement"
            )

        self._demo(crash)

    def action_demo_idle_tx(self) -> None:
        def toggle(d: DemoPort) -> str:
            if getattr(d.status(), "idle_tx_pid", None):
                return (
                    "idle-in-transaction session closed" if d.close_idle_transaction() else "nothing to close"
                )
            pid = d.open_idle_transaction()
            return f"opened an idle-in-transaction session (pid {pid}): it holds the xmin horizon; K ends it"

        self._demo(toggle)

    def action_demo_slow(self) -> None:
        self._demo(lambda d: "slow handler ON" if d.toggle_slow() else "slow handler off")


def _workers(demo: DemoPort) -> str:
    return f"{getattr(demo.status(), 'workers', '?')} workers"
