"""A short history per queue for the commands (`why`, `check`): every target polled concurrently, each
in its own daemon thread with one TargetWatch, every `interval_s` for `window_s` seconds. A window of
0 is one poll. A target still silent `timeout_s` after the window is reported as not answering."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from pgq_tui.errors import EXIT_CONNECT, PgqError
from pgq_tui.fleet.poll import QueueOutcome, TargetWatch
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import Target


@dataclass(frozen=True)
class Watched:
    """One queue's last outcome (its Snapshot or why not) and every Snapshot the window collected."""

    last: QueueOutcome
    history: tuple[Snapshot, ...]


def _watch(target: Target, window_s: float, interval_s: float, wait_s: float = 0.0) -> list[Watched]:
    history: dict[str, list[Snapshot]] = {}
    with TargetWatch(target) as watch:
        end = time.monotonic() + window_s
        while True:
            outcomes = watch.collect()
            for o in outcomes:
                if isinstance(o.outcome, Snapshot):
                    history.setdefault(o.key, []).append(o.outcome)
            left = end - time.monotonic()
            if left <= 0:
                break
            time.sleep(min(interval_s, left))
        if wait_s > 0:  # one-shot: wait for the background counts, poll again (monitor/settle.py)
            outcomes = watch.settled(outcomes, wait_s)
            for o in outcomes:
                if isinstance(o.outcome, Snapshot):
                    history.setdefault(o.key, []).append(o.outcome)
    return [Watched(o, tuple(history.get(o.key, ()))) for o in outcomes]


def watch_targets(
    targets: Sequence[Target], window_s: float, interval_s: float, timeout_s: float, wait_s: float = 0.0
) -> list[list[Watched]]:
    """Every target's queues with their histories, in order; `wait_s`: how long each may wait for
    its background counts after the window (TargetWatch.settled)."""
    results: list[list[Watched] | None] = [None] * len(targets)

    def run(i: int, target: Target) -> None:
        results[i] = _watch(target, window_s, interval_s, wait_s)

    threads = [threading.Thread(target=run, args=(i, t), daemon=True) for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + window_s + timeout_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    silent = PgqError(f"no answer within {window_s + timeout_s:g} s", EXIT_CONNECT)
    return [
        r if r is not None else [Watched(QueueOutcome(t, None, silent), ())]
        for t, r in zip(targets, results, strict=True)
    ]
