"""Stock job handlers for `pgq-top worker --handler module:function`.

A handler is any callable taking a Job; returning means success, raising means failure.
"""

from __future__ import annotations

import importlib
import time
from collections.abc import Callable

from pgq_tui.errors import EXIT_USAGE, PgqError
from pgq_tui.queue.job import Job

Handler = Callable[[Job], object]


def noop(job: Job) -> None:
    """Succeed at once (for benchmarks: measures the queue, not the work)."""


def sleep(job: Job) -> None:
    """Sleep payload["ms"] milliseconds; raise if payload["fail"] is true. Handy for trying things out."""
    payload = job.payload if isinstance(job.payload, dict) else {}
    time.sleep(float(payload.get("ms", 0)) / 1000)
    if payload.get("fail"):
        raise RuntimeError(f"job {job.id} asked to fail")


def load_handler(spec: str) -> Handler:
    """Resolve "package.module:function" to the callable, or raise a one-line PgqError."""
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise PgqError(f"--handler must look like module:function, got {spec!r}", EXIT_USAGE)
    try:
        func = getattr(importlib.import_module(module_name), attr)
    except (ImportError, AttributeError) as exc:
        raise PgqError(f"cannot load handler {spec!r}: {exc}", EXIT_USAGE) from None
    if not callable(func):
        raise PgqError(f"handler {spec!r} is not callable", EXIT_USAGE)
    handler: Handler = func
    return handler
