"""Poll targets concurrently: each in its own daemon thread, so a slow or dead one never holds the
others up, and a command can give up on it after a deadline without waiting for its thread.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence

from pgq_tui.errors import EXIT_CONNECT, PgqError, describe
from pgq_tui.monitor.detecting import DetectingMonitor
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.targets import Target

Outcome = Snapshot | PgqError


def monitor_for(target: Target) -> DetectingMonitor:
    """The monitor's usual session (autocommit, labelled, short timeouts), read-only, for the queue
    detection finds at the target's table (found at the first poll that reaches the server)."""
    return DetectingMonitor(target.dsn, table=target.table, schema=target.schema, read_only=True)


def collect_one(target: Target) -> Outcome:
    """One Snapshot from a fresh connection, or the one-line error that explains why not."""
    try:
        with monitor_for(target) as monitor:
            return monitor.collect()
    except Exception as exc:  # a PgqError mostly; anything else still becomes one line, not a crash
        return describe(exc, table=f"{target.schema}.{target.table}")


def collect_each(targets: Sequence[Target], timeout_s: float) -> list[Outcome]:
    """Every target's outcome, in order, within `timeout_s` in all: a target still silent then is
    reported as not answering (its thread is a daemon and dies with the process)."""
    results: list[Outcome | None] = [None] * len(targets)

    def run(i: int, target: Target) -> None:
        results[i] = collect_one(target)

    threads = [threading.Thread(target=run, args=(i, t), daemon=True) for i, t in enumerate(targets)]
    for thread in threads:
        thread.start()
    deadline = time.monotonic() + timeout_s
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return [
        r if r is not None else PgqError(f"no answer within {timeout_s:g} s", EXIT_CONNECT) for r in results
    ]
