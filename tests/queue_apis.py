"""Both queue APIs behind one synchronous face, so one test suite runs against JobQueue and
AsyncJobQueue: `SyncView` runs each of an AsyncJobQueue's coroutines to completion on its own loop."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable
from typing import Any

from pgq_tui.queue import AsyncJobQueue, JobQueue

APIS = ("sync", "async")


class SyncView:
    def __init__(self, queue: AsyncJobQueue) -> None:
        self._queue = queue
        self._loop = asyncio.new_event_loop()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._queue, name)
        if inspect.iscoroutinefunction(attr):
            return lambda *args, **kwargs: self._loop.run_until_complete(attr(*args, **kwargs))
        return attr

    def close(self) -> None:
        if self._loop.is_closed():
            return
        self._loop.run_until_complete(self._queue.close())
        self._loop.close()

    def __enter__(self) -> SyncView:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def factory(api: str) -> Callable[..., Any]:
    """A constructor with JobQueue's signature for the chosen API."""
    if api == "sync":
        return JobQueue
    return lambda *args, **kwargs: SyncView(AsyncJobQueue(*args, **kwargs))
