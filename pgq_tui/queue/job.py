"""A claimed job, as the worker that holds its lease sees it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass
class Job:
    id: int
    queue: str
    payload: Any
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
        the rest itself (its queue, `locked_by` = the worker, status 'running'). By position: a
        worker builds ten of these per batch."""
        return cls(row[0], queue, row[1], row[2], row[3], row[4], row[5], row[6], worker, row[7])
