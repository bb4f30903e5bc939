"""What an action will do (Plan) and what it did (ActionOutcome): plain frozen data for any front end."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from pgq_tui.dialects.contract import JobId

# Job actions (a dialect's ActionKinds; a job cancel is "cancel-jobs"), session signals, the advisor's,
# a queue's pause and resume.
ACTIONS = (
    "requeue",
    "reap",
    "retry",
    "discard",
    "cancel-jobs",
    "cancel",
    "terminate",
    "tune",
    "pause",
    "resume",
)


@dataclass(frozen=True)
class Plan:
    """What a confirmation dialog shows before anything is written."""

    action: str  # one of ACTIONS
    title: str  # e.g. "Requeue 3 stuck jobs"
    description: str  # what will change, in words, incl. the precondition
    sql: str  # the exact SQL that will run, placeholders shown (e.g. %(ids)s)
    targets: tuple[JobId, ...]  # job ids or backend pids; empty: every job the guard admits
    count: int  # how many rows/sessions it will touch at most (as seen when planning)
    destructive: bool
    needs_second_confirmation: bool  # e.g. a requeue of a lease whose holder is still connected
    warning: str | None
    refused: str | None = None  # set when the plan cannot run at all; the UI shows it instead of a confirm
    allow_pgq_top: bool = False  # cancel/terminate: the caller explicitly targets a pgq-top session
    # the server's now() when the preview ran: job statements get it as %(before)s (e.g. a reap
    # takes only leases expired by then, never one that expired while the dialog was open)
    expired_before: datetime | None = None
    queue: str | None = None  # job actions on every eligible job (no targets): only this queue
    # cancel/terminate: each target's backend_start, as planned. With the pid it names one session:
    # the signal's guard refuses a session that started since (the pid reused after the planned ended)
    backend_starts: tuple[datetime | None, ...] = ()


@dataclass(frozen=True)
class ActionOutcome:
    action: str
    requested: int
    changed: int  # rows/sessions really changed (from RETURNING / the signal functions' results)
    message: str  # one line for a toast, e.g. "requeued 3 of 3 jobs"
    error: str | None = None  # one line; execute() never raises
    exit_code: int = 1  # the CLI's exit code when `error` (by the failure's SQLSTATE class: errors.py)
    # chosen ids (a plan with targets) the committed batches reached; the rest were never touched.
    # None: not counted (a plan over every eligible job, session signals)
    attempted: int | None = None
    stopped: bool = False  # stopped by the operator between batches


def plural(n: int, noun: str) -> str:
    """A count with its noun.

    >>> plural(1, "job"), plural(3, "job")
    ('1 job', '3 jobs')
    """
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
