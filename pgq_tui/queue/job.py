"""A claimed job, as the worker that holds its lease sees it."""

from __future__ import annotations

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
