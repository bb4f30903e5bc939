"""The acceptance flow of issue 11, the same for every framework (see each *_client.py driver).

1. The caller installs the schema with the framework's own tool (`Driver.install`). 2. A real worker
starts, whose handler records every run in pgq_test_runs. 3. Fast, slow, scheduled and always-failing
jobs are enqueued with the framework's own client. 4. The worker is killed (-9) during the slow job.
A second, live worker then holds one job of its own queue (`hold`), so the view has a healthy running
job beside the stuck one. The test then checks pgq-top's view, acts through the CLI, and starts a
fresh worker (`fresh_worker_runs`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

from .harness import Processes, Worker, phases, runs, wait_for

FAST_JOBS = 3
SCHEDULED_IN_S = 3600


class Driver(Protocol):
    kind: str
    dsn: str

    def install(self) -> None: ...
    def start_worker(
        self,
        procs: Processes,
        *,
        fixed: bool,
        queues: Iterable[str] | None = None,
        lifetime_s: float | None = None,
    ) -> Worker: ...
    def enqueue(self, queue: str, key: str, *, in_seconds: int | None = None) -> str: ...
    def is_dead(self, job_id: str) -> bool: ...
    def make_stuck(self, job_id: str) -> None: ...
    def truth(self) -> dict[str, dict[str, int]]: ...


@dataclass(frozen=True)
class Crashed:
    """What the first worker left behind (job ids by role), and the live worker holding `held`."""

    fast: tuple[str, ...]
    later: str
    failing: str
    slow: str
    held: str
    holder: Worker


def crash_during_slow_job(fw: Driver, procs: Processes, *, holder_lifetime_s: float | None = None) -> Crashed:
    worker = fw.start_worker(procs, fixed=False, queues=("fast", "slow", "fail", "later"))
    fast = tuple(fw.enqueue("fast", f"fast-{i}") for i in range(FAST_JOBS))
    later = fw.enqueue("later", "later", in_seconds=SCHEDULED_IN_S)
    failing = fw.enqueue("fail", "fail")
    slow = fw.enqueue("slow", "slow")
    wait_for(
        "the fast jobs to finish",
        lambda: all(phases(fw.dsn, f"fast-{i}") == ["start", "done"] for i in range(FAST_JOBS)),
    )
    wait_for("the failing job to be dead", lambda: "fail" in phases(fw.dsn, "fail") and fw.is_dead(failing))
    wait_for("the slow job to start", lambda: phases(fw.dsn, "slow") == ["start"])
    worker.kill9()
    # The live worker's job waits before it starts (a Graphile holder runs once: see its driver); the
    # slow job is made stuck last, once every worker that will be alive during the checks is up.
    held = fw.enqueue("hold", "hold")
    holder = fw.start_worker(procs, fixed=False, queues=("hold",), lifetime_s=holder_lifetime_s)
    wait_for("the live worker to start its job", lambda: phases(fw.dsn, "hold") == ["start"])
    fw.make_stuck(slow)
    return Crashed(fast, later, failing, slow, held, holder)


def fresh_worker_runs(fw: Driver, procs: Processes, keys: set[str]) -> list[tuple[str, str]]:
    """Start a fresh worker (with the fix deployed) and wait until each of `keys` ran to completion.

    Returns (job_key, phase) for everything that worker ran, in order."""
    worker = fw.start_worker(procs, fixed=True, queues=("fast", "slow", "fail", "later"))
    wait_for(
        f"a fresh worker to complete {sorted(keys)}",
        lambda: {k for k, _, p in runs(fw.dsn, pid=worker.pid) if p == "done"} >= keys,
    )
    worker.stop()
    return [(k, p) for k, _, p in runs(fw.dsn, pid=worker.pid)]
