"""The demo's load generator: a steady, adjustable stream of varied jobs, in its own process.

Several queues with their own payload shapes (nested objects, lists), a few hostile strings (Rich
markup, an ANSI escape) so a front end's escaping is visible, some jobs scheduled in the future,
some with priority, and a share of "poison" jobs that always fail (dead letters). The rate is read
from a shared mp.Value every tick, so the controller can change it at run time.
"""

from __future__ import annotations

import os
import random
import signal
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any

import psycopg

from pgq_tui.demo.control import Control
from pgq_tui.errors import PgqError
from pgq_tui.queue.jobqueue import JobQueue
from pgq_tui.queue.worker import StopFlag

QUEUES = ("emails", "reports", "webhooks", "thumbnails")
WEIGHTS = (0.4, 0.1, 0.3, 0.2)
TICK_S = 0.2
SCHEDULED_SHARE = 0.08  # run_at 5-60 s ahead
PRIORITY_SHARE = 0.1
HOSTILE_SHARE = 0.02
HOSTILE = {
    "note": "[bold red]not markup[/]",
    "ansi": "\x1b[31mred?\x1b[0m",
    "html": "<script>alert(1)</script>",
    "unicode": "naïve ☃ 日本語 \u202eevil",
}


@dataclass(frozen=True)
class LoadConfig:
    dsn: str
    table: str = "jobs"
    schema: str = "public"
    queues: tuple[str, ...] = QUEUES
    max_attempts: int = 3
    control_path: str | None = None  # poison share = fail_share / 5
    seed: int | None = None


def payload(rng: random.Random, queue: str, n: int) -> dict[str, Any]:
    """A plausible payload for `queue` (pure, seeded: the tests and the demo see the same shapes)."""
    if queue == "emails":
        body: dict[str, Any] = {
            "to": f"user{n}@example.com",
            "template": rng.choice(["welcome", "password-reset", "weekly-digest"]),
            "vars": {"name": rng.choice(["Ada", "Grace", "Linus", "Barbara"]), "items": rng.randint(0, 9)},
        }
    elif queue == "reports":
        body = {
            "report": rng.choice(["revenue", "churn", "signups"]),
            "range": {"from": "2026-11-01", "to": "2026-11-30"},
            "format": rng.choice(["pdf", "csv"]),
            "filters": {"region": rng.sample(["eu", "us", "apac", "latam"], 2)},
        }
    elif queue == "webhooks":
        body = {
            "url": f"https://hooks.example.com/{rng.randint(1, 50)}",
            "event": rng.choice(["order.paid", "order.refunded", "user.created"]),
            "body": {"order_id": n, "amount_cents": rng.randint(100, 99_999), "currency": "EUR"},
            "headers": {"X-Attempt": "1", "Content-Type": "application/json"},
        }
    else:
        body = {"image": f"s3://media/uploads/{n}.jpg", "sizes": [64, 256, 1024], "crop": rng.random() < 0.3}
    if rng.random() < HOSTILE_SHARE:
        body["comment"] = dict(HOSTILE)
    return body


def _batch(
    rng: random.Random, n: int, config: LoadConfig, poison_share: float, counter: int
) -> dict[tuple[str, int, bool], list[dict[str, Any]]]:
    """n jobs grouped by what one enqueue call shares: (queue, priority, scheduled)."""
    groups: dict[tuple[str, int, bool], list[dict[str, Any]]] = defaultdict(list)
    weights = WEIGHTS if config.queues == QUEUES else None
    for i in range(n):
        queue = rng.choices(config.queues, weights=weights)[0]
        body = payload(rng, queue, counter + i)
        if rng.random() < poison_share:
            body["poison"] = True
        priority = 5 if rng.random() < PRIORITY_SHARE else 0
        groups[(queue, priority, rng.random() < SCHEDULED_SHARE)].append(body)
    return groups


def enqueue_batch(
    q: JobQueue, rng: random.Random, n: int, config: LoadConfig, poison_share: float, counter: int
) -> int:
    """Enqueue n demo jobs (a few round trips, one per queue/priority/schedule group); returns n."""
    for (queue, priority, scheduled), bodies in _batch(rng, n, config, poison_share, counter).items():
        run_at = None
        if scheduled:
            run_at = datetime.now(timezone.utc) + timedelta(seconds=rng.uniform(5, 60))
        q.enqueue(queue, bodies, run_at=run_at, priority=priority, max_attempts=config.max_attempts)
    return n


def run_load(config: LoadConfig, rate: Any, enqueued: Any, parent: int | None = None) -> None:
    """Process body: enqueue rate.value jobs per second until SIGTERM or until our parent is gone.

    rate and enqueued are lock-free shared values (we only read the one and only write the other).
    parent: the controller's pid, passed in (the parent may already be gone when a spawned child starts).
    """
    stop = StopFlag()
    stop.stop_on_signals()
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a terminal Ctrl-C is the parent's to handle
    parent = parent if parent is not None else os.getppid()
    rng = random.Random(config.seed)
    control = Control(config.control_path) if config.control_path else None
    q = JobQueue(config.dsn, config.table, config.schema, worker_id="pgq-demo load")
    owed, counter = 0.0, 0
    try:
        while not stop.wait(TICK_S) and os.getppid() == parent:
            owed = min(owed + max(0.0, rate.value) * TICK_S, max(1.0, rate.value))  # no burst after a stall
            n = int(owed)
            if not n:
                continue
            poison = (control.read()[1] / 5) if control else 0.02
            try:
                enqueued.value += enqueue_batch(q, rng, n, config, poison, counter)
            except (psycopg.Error, PgqError):
                q.close()  # server restarting or gone: try again next tick
                stop.wait(1.0)
            owed -= n
            counter += n
    finally:
        q.close()
        if control is not None:
            control.close()
