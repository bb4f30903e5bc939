"""The SKIP LOCKED job queue: schema, producer/worker API, and the worker pool."""

from pgq_tui.queue.job import Job
from pgq_tui.queue.jobqueue import JobQueue, make_worker_id

__all__ = ["Job", "JobQueue", "make_worker_id"]
