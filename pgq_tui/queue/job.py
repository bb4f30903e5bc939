"""A claimed job, as the worker that holds its lease sees it."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


class Undecoded:
    """A payload as a claim read it (jsonb's UTF-8 text), parsed at its first read (`Job.payload`):
    a handler that never reads a payload (it routes on the queue, or is a benchmark's noop) does not
    pay for parsing it, one that does pays once, as before."""

    __slots__ = ("text",)

    def __init__(self, text: bytes) -> None:
        self.text = text


@dataclass
class Job:
    id: int
    queue: str
    payload: Any  # a property below: an Undecoded payload is parsed at its first read
    attempts: int
    max_attempts: int
    priority: int
    run_at: datetime
    locked_until: datetime | None
    locked_by: str | None
    created_at: datetime
    status: str = "running"

    @classmethod
    def from_row(cls, row: dict[str, Any]) -> Job:
        return cls(**{name: row[name] for name in cls.__dataclass_fields__})

    @classmethod
    def claimed(cls, row: Sequence[Any], queue: str, worker: str) -> Job:
        """A job as a claim returns it: `row` holds statements.CLAIMED_COLUMNS in their order (id,
        payload, attempts, max_attempts, priority, run_at, locked_until, created_at); the claim set
        the rest itself (its queue, `locked_by` = the worker, status 'running').

        A worker builds ten of these per batch, so the instance's attributes are set in one dict
        rather than through the generated __init__ and the payload property's setter (half the
        time); the result is the same Job (test_queue_core checks it against the constructor)."""
        job_id, payload, attempts, max_attempts, priority, run_at, locked_until, created_at = row
        job = _new(cls)
        job.__dict__ = {
            "id": job_id,
            "queue": queue,
            "_payload": payload,
            "attempts": attempts,
            "max_attempts": max_attempts,
            "priority": priority,
            "run_at": run_at,
            "locked_until": locked_until,
            "locked_by": worker,
            "created_at": created_at,
            "status": "running",
        }
        return job


_new = object.__new__


def _payload(job: Job) -> Any:
    value = job.__dict__["_payload"]
    if type(value) is Undecoded:
        value = job.__dict__["_payload"] = json.loads(value.text)
    return value


def _set_payload(job: Job, value: Any) -> None:
    job.__dict__["_payload"] = value


# After @dataclass: its __init__, __repr__ and __eq__ all go through the property, so a Job still
# reads, prints and compares as the decoded value.
Job.payload = property(_payload, _set_payload)
