"""A target's queues, detected, and a monitor for each: the one hook `check`, the exporter, the fleet
screen and `snapshot` over several targets all go through.

A target is a database (targets.Target) with optional pins (kind, schema, table, mapping). It is
detected like `pgq-top --dsn` (pgq_tui.detection.find_queues): every queue that fits the pins is
watched, each through its dialect (monitor.open_monitor). Detection runs on the first collect and
again after it failed (server down, no queue yet), so a target can start before its database does.

Targets are polled concurrently: each in its own daemon thread, so a slow or dead one never holds the
others up, and a command can give up on it after a deadline without waiting for its thread.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pgq_tui.detection import QueueTarget, find_queues
from pgq_tui.errors import EXIT_CONNECT, PgqError, describe
from pgq_tui.monitor import Monitor, open_monitor
from pgq_tui.monitor.settle import past_wait
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import Target

PollResult = Snapshot | PgqError


@dataclass(frozen=True)
class QueueOutcome:
    """One queue's poll: its Snapshot or why not. `queue` is None when the target could not even be
    detected (server down, no queue fits its pins): then `outcome` is that error."""

    target: Target
    queue: QueueTarget | None
    outcome: PollResult
    several: bool = False  # the target holds more than one watched queue (names say which)

    @property
    def key(self) -> str:
        """Stable and unique within a run: the target's name, and the queue's place when detected."""
        if self.queue is None:
            return self.target.name
        return f"{self.target.name}\0{self.queue.kind}\0{self.queue.relation}"

    @property
    def table(self) -> str:
        return place(self.queue, self.target)

    @property
    def kind(self) -> str | None:
        return self.queue.kind if self.queue is not None else self.target.kind


def place(queue: QueueTarget | None, target: Target) -> str:
    """schema.table of the queue, or of the target's pins while undetected ("" when nothing is pinned)."""
    if queue is not None:
        return queue.relation
    return ".".join(p for p in (target.schema, target.table) if p)


def detect(target: Target) -> list[QueueTarget]:
    """Every queue of the target's database that fits its pins (PgqError: none, or cannot connect)."""
    return find_queues(target.dsn, **target.pins.args())


def monitor_for(target: Target, queue: QueueTarget, **kw: Any) -> Monitor:
    """The monitor's usual session (autocommit, labelled, short timeouts), read-only."""
    return open_monitor(target.dsn, queue.model, read_only=True, **kw)


def queue_tag(queue: QueueTarget, queues: Sequence[QueueTarget]) -> str:
    """How to tell one queue from the target's others: its kind, plus where it lives when two share
    a kind.

    >>> from pgq_tui.dialects.contract import Match
    >>> def q(kind, table): return QueueTarget(Match(kind, "public", table), None)  # type: ignore[arg-type]
    >>> qs = [q("pgq", "jobs"), q("procrastinate", "procrastinate_jobs"), q("pgq", "jobs2")]
    >>> [queue_tag(x, qs) for x in qs]
    ['pgq public.jobs', 'procrastinate', 'pgq public.jobs2']
    """
    if sum(1 for q in queues if q.kind == queue.kind) == 1:
        return queue.kind
    return f"{queue.kind} {queue.relation}"


def outcome_name(o: QueueOutcome, outcomes: Sequence[QueueOutcome], several_targets: bool) -> str:
    """What `check` and `snapshot` call one queue: the target's name when there are several targets,
    the queue's tag when its target holds several queues, joined by "/" when both (e.g.
    "orders/procrastinate"); the target's name when it is the only queue."""
    parts = [o.target.name] if several_targets else []
    if o.several and o.queue is not None:
        parts.append(queue_tag(o.queue, [x.queue for x in outcomes if x.queue is not None]))
    return "/".join(parts) or o.target.name


REDETECT_S = 300.0  # how often a long-lived watch (exporter, fleet) looks for queues added or changed


class TargetWatch:
    """One target's queues and their monitors. Not thread-safe: one thread polls it.

    Detection runs at the first collect, again after it failed, and every `redetect_s` seconds: a
    queue created later (a framework installed beside ours) is watched from then on, a dropped one is
    let go, and a queue whose model changed (the operator created the index pgq-top asked for, so a
    panel is now served) gets a fresh monitor. Monitors of unchanged queues are kept (their rates
    and counters go on)."""

    def __init__(
        self,
        target: Target,
        *,
        redetect_s: float = REDETECT_S,
        clock: Callable[[], float] = time.monotonic,
        **monitor_kw: Any,
    ) -> None:
        self.target = target
        self.redetect_s = redetect_s
        self.clock = clock
        self.monitor_kw = monitor_kw
        self.queues: list[QueueTarget] = []
        self._monitors: list[Monitor] = []
        self._detected_at: float | None = None

    def _detect(self) -> PgqError | None:
        """Adopt what detection finds now; its error when it failed (the watch is left as it was)."""
        try:
            found = detect(self.target)
        except Exception as exc:  # PgqError mostly; anything else is still one line
            return describe(exc)
        self._detected_at = self.clock()
        old = list(zip(self.queues, self._monitors, strict=True))
        monitors = []
        for queue in found:
            same = next((i for i, (q, _) in enumerate(old) if q.model == queue.model), None)
            monitors.append(
                old.pop(same)[1] if same is not None else monitor_for(self.target, queue, **self.monitor_kw)
            )
        for _, gone in old:
            with contextlib.suppress(Exception):
                gone.close()
        self.queues, self._monitors = found, monitors
        return None

    def collect(self) -> list[QueueOutcome]:
        """One outcome per watched queue (detecting first when due), never raising."""
        due = self._detected_at is None or self.clock() - self._detected_at >= self.redetect_s
        if not self._monitors or due:
            error = self._detect()
            if error is not None and not self._monitors:
                return [QueueOutcome(self.target, None, error)]
            # with queues already watched, a failed re-detection is said by their own polls below
        several = len(self.queues) > 1
        out = []
        for queue, monitor in zip(self.queues, self._monitors, strict=True):
            try:
                outcome: PollResult = monitor.collect()
            except Exception as exc:
                outcome = describe(exc, table=queue.relation)
            out.append(QueueOutcome(self.target, queue, outcome, several))
        return out

    def settled(self, outcomes: list[QueueOutcome], wait_s: float) -> list[QueueOutcome]:
        """`outcomes` (this watch's last collect) with every queue whose poll left figures to the
        background counter polled again after waiting for it, all within `wait_s` seconds."""
        if len(outcomes) != len(self._monitors):  # not detected: nothing to wait for
            return outcomes
        deadline = time.monotonic() + wait_s
        out = []
        for o, monitor in zip(outcomes, self._monitors, strict=True):
            if not isinstance(o.outcome, Snapshot) or not monitor.owes:
                out.append(o)
                continue
            settled = monitor.settle(max(0.0, deadline - time.monotonic()))
            try:
                snap = monitor.collect()
                outcome: PollResult = snap if settled else past_wait(snap, wait_s)
            except Exception as exc:
                outcome = describe(exc, table=o.table)
            out.append(dataclasses.replace(o, outcome=outcome))
        return out

    def tag(self, queue: QueueTarget) -> str:
        return queue_tag(queue, self.queues)

    def close(self) -> None:
        for monitor in self._monitors:
            with contextlib.suppress(Exception):  # a broken connection must not hide the outcome
                monitor.close()
        self._monitors = []

    def __enter__(self) -> TargetWatch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def collect_target(target: Target, wait_s: float = 0.0) -> list[QueueOutcome]:
    """One Snapshot per queue of the target, from fresh connections, or the one-line errors. A queue
    whose poll left figures to the background counter waits for it (at most `wait_s` in all, for
    one-shot commands) and is polled again; past the wait those figures say so (monitor/settle.py)."""
    with TargetWatch(target) as watch:
        first = watch.collect()
        if wait_s <= 0:
            return first
        return watch.settled(first, wait_s)


def collect_each(
    targets: Sequence[Target], timeout_s: float, wait_s: float = 0.0
) -> list[list[QueueOutcome]]:
    """Every target's outcomes, in order, within `timeout_s` in all: a target still silent then is
    reported as not answering (its thread is a daemon and dies with the process). `wait_s`: how long
    each may wait for its background counts (collect_target)."""
    results: list[list[QueueOutcome] | None] = [None] * len(targets)

    def run(i: int, target: Target) -> None:
        results[i] = collect_target(target, wait_s)

    threads = [threading.Thread(target=run, args=(i, t), daemon=True) for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    silent = PgqError(f"no answer within {timeout_s:g} s", EXIT_CONNECT)
    return [
        r if r is not None else [QueueOutcome(t, None, silent)] for t, r in zip(targets, results, strict=True)
    ]
