"""The SKIP LOCKED job queue: schema, producer/worker API (sync and asyncio), and the worker pool."""

from pgq_tui.queue.asyncqueue import AsyncJobQueue
from pgq_tui.queue.job import Job
from pgq_tui.queue.jobqueue import JobQueue, make_worker_id

__all__ = ["AsyncJobQueue", "Job", "JobQueue", "make_worker_id"]
