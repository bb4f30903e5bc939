"""The demo's job handler (`pgq_tui.demo.handler:handle`): a few ms of "work", sometimes a failure.

- Each attempt fails with probability `fail_share` (transient errors: retries with backoff succeed).
- A job whose payload says `"poison": true` fails every attempt, so it ends in the dead letters.
- Slow mode (toggled by the controller) makes each job take 0.4-1.2 s, so a batch of 10 outlasts the
  demo's 5 s lease: heartbeats renew it (the leases panel's `beat` column stays under 2 s) while
  the backlog and the wait climb; no job is reaped or runs twice.
Flags come from the controller's shared file (pgq_tui.demo.control); defaults apply without one.
"""

from __future__ import annotations

import os
import random
import time

from pgq_tui import env
from pgq_tui.demo.control import ENV, Control
from pgq_tui.queue.job import Job

FAST_MS = (2.0, 8.0)
SLOW_MS = (400.0, 1200.0)
ERRORS = (
    "TimeoutError: upstream did not answer within 5 s",
    "ConnectionResetError: [Errno 104] Connection reset by peer",
    "SMTPResponseException: 451 4.7.1 try again later",
    "HTTPError: 503 Service Unavailable from https://hooks.example.com/[bold]x[/]",
)

_control: Control | None = None
_loaded = False


def _flags() -> tuple[bool, float]:
    global _control, _loaded
    if not _loaded:
        _loaded = True
        path = env.get(ENV)
        if path and os.path.exists(path):
            _control = Control(path)
    return _control.read() if _control is not None else (False, 0.1)


class DemoFailure(RuntimeError):
    pass


def handle(job: Job) -> None:
    slow, fail_share = _flags()
    low, high = SLOW_MS if slow else FAST_MS
    time.sleep(random.uniform(low, high) / 1000)
    payload = job.payload if isinstance(job.payload, dict) else {}
    if payload.get("poison"):
        raise DemoFailure(f"ValueError: cannot process job {job.id}: malformed payload (poison)")
    if random.random() < fail_share:
        raise DemoFailure(random.choice(ERRORS))
