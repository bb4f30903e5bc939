"""One schedule's figures from its framework's rows: the expression in words, the last run, the next
due run, how overdue it is, and the jobs it made. Pure (see the package docstring).

A figure that cannot be taken is None with its reason in `Schedule.reasons` (field -> why), never 0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pgq_tui.schedules.cron import Cron, CronError, elapsed, parse, span, words
from pgq_tui.schedules.words import age

# The canonical row a dialect's schedule statement returns, column for column (dialects.contract):
SCHEDULE_COLUMNS = (
    "name",  # the schedule's name (pg-boss: queue name, plus `key` when not '')
    "expression",  # the cron expression as stored (NULL: the framework keeps it elsewhere)
    "timezone",  # IANA zone as stored (NULL: the framework's default, UTC)
    "queue",  # the queue or task its jobs go to (NULL: unknown)
    "last_run",  # when it last fired, from the framework's own bookkeeping (NULL: never, or unknown)
    "next_run",  # the framework's own next due time, where it stores one (else NULL: computed here)
    "created_at",  # when the schedule was written (NULL: not recorded)
    "details",  # jsonb: framework-specific fields, shown as they are
)
# The jobs a schedule made, newest first (param `names` text[], `rows` per schedule):
SCHEDULE_JOB_COLUMNS = (
    "schedule",  # SCHEDULE_COLUMNS.name
    "id",  # text
    "state",  # canonical word
    "native_state",  # the framework's own word
    "created_at",
    "finished_at",
    "link",  # 'exact' (the framework links job and schedule) | 'queue' (a job of the schedule's queue)
)
LINK_WORDS = {
    "exact": "linked by the framework",
    "queue": "jobs of the schedule's queue (the framework keeps no link: other senders' jobs too)",
}


@dataclass(frozen=True)
class MadeJob:
    """A job a schedule made (or, for link 'queue', a job of its queue)."""

    id: str
    state: str | None
    native_state: str | None
    created_at: datetime | None
    finished_at: datetime | None
    link: str


@dataclass(frozen=True)
class Schedule:
    """One schedule at `as_of` (the server's clock). `due` is the occurrence it owes: the first after
    its last run (after its creation when it never ran); `overdue_s` how long past that it is now
    (0.0 when not due yet); `period_s` the gap between `due` and the occurrence before it."""

    name: str
    expression: str | None
    timezone: str | None
    queue: str | None
    words: str | None
    last_run: datetime | None
    next_run: datetime | None  # the next occurrence after as_of (or the framework's own next_run)
    due: datetime | None
    overdue_s: float | None
    period_s: float | None
    created_at: datetime | None
    as_of: datetime
    next_source: str = "computed"  # "computed" (croniter, in `timezone`) or "framework" (its column)
    jobs: tuple[MadeJob, ...] = ()
    reasons: dict[str, str] = field(default_factory=dict)  # figure -> why it is None
    details: dict[str, Any] = field(default_factory=dict)

    def late(self, threshold_s: float) -> bool | None:
        """Past its due occurrence by more than `threshold_s`; None when that is unknown."""
        return None if self.overdue_s is None else self.overdue_s > threshold_s

    def ago_s(self) -> float | None:
        """Seconds since the last run (None: never ran, or unknown)."""
        return None if self.last_run is None else elapsed(self.last_run, self.as_of)

    def late_line(self) -> str:
        """ "schedule nightly-report last ran 26h ago, due every 24h" (the diagnosis's words)."""
        every = f", due every {span(self.period_s)}" if self.period_s is not None else ""
        ago = self.ago_s()
        if ago is not None:
            return f"schedule {self.name} last ran {age(ago)} ago{every}"
        since = "" if self.created_at is None else f" since it was created {age(self.since_created())} ago"
        return f"schedule {self.name} never ran{since}{every}"

    def since_created(self) -> float:
        return 0.0 if self.created_at is None else elapsed(self.created_at, self.as_of)


@dataclass(frozen=True)
class ScheduleReport:
    """Every schedule of one queue kind at `as_of`, or why there are none to read (`reason`)."""

    kind: str
    supported: bool
    schedules: tuple[Schedule, ...] = ()
    as_of: datetime | None = None
    reason: str | None = None  # unsupported: why; supported: a read that failed
    links: str | None = None  # how jobs are linked to schedules, in words
    timezone_rule: str | None = None  # how the framework reads a zone, in words
    # The framework's scheduler pass (pg-boss's version.cron_on): when it last ran, None: unknown
    pass_at: datetime | None = None
    pass_name: str | None = None  # what that pass is, in words ("pg-boss's cron pass")
    notes: tuple[str, ...] = ()


def made_jobs(rows: Iterable[Mapping[str, Any]]) -> dict[str, tuple[MadeJob, ...]]:
    """SCHEDULE_JOB_COLUMNS rows grouped by schedule, in the order given (newest first)."""
    out: dict[str, list[MadeJob]] = {}
    for r in rows:
        job = MadeJob(
            id=str(r["id"]),
            state=r["state"],
            native_state=r["native_state"],
            created_at=r["created_at"],
            finished_at=r["finished_at"],
            link=r["link"],
        )
        out.setdefault(str(r["schedule"]), []).append(job)
    return {k: tuple(v) for k, v in out.items()}


def evaluate(
    row: Mapping[str, Any],
    now: datetime,
    *,
    jobs: Sequence[MadeJob] = (),
    seconds_first: bool = False,
    expression: str | None = None,
    missing: str = "the framework keeps no expression in the database",
) -> Schedule:
    """One SCHEDULE_COLUMNS row at the server's `now`. `expression` overrides the row's (a crontab
    file's line, for Graphile Worker); `missing` says why there is none when neither has one."""
    reasons: dict[str, str] = {}
    text = expression if expression is not None else row.get("expression")
    last: datetime | None = row.get("last_run")
    created: datetime | None = row.get("created_at")
    stored_next: datetime | None = row.get("next_run")
    cron: Cron | None = None
    if text is None:
        reasons["expression"] = missing
    else:
        try:
            cron = parse(str(text), row.get("timezone"), seconds_first=seconds_first)
        except CronError as exc:
            reasons["expression"] = str(exc)
    said = words_of(cron, reasons)
    if last is None:
        reasons["last_run"] = "no run recorded (never ran, or its record is gone)"
    due = next_run = None
    overdue = period = None
    if cron is not None:
        next_run = cron.next_after(now)
        base = last if last is not None else created
        if base is None:
            reasons["due"] = "no run and no creation time recorded: nothing to count from"
        else:
            due = cron.next_after(base)
            overdue = max(0.0, elapsed(due, now))
            period = cron.period_s(due)
    else:
        for name in ("next_run", "due", "overdue_s", "period_s"):
            reasons[name] = reasons["expression"]
    source = "computed"
    if stored_next is not None:
        next_run, source = stored_next, "framework"
        reasons.pop("next_run", None)
    for name in ("overdue_s", "period_s"):
        if name not in reasons and (overdue if name == "overdue_s" else period) is None:
            reasons[name] = reasons.get("due", "not known")
    return Schedule(
        name=str(row["name"]),
        expression=None if text is None else str(text),
        timezone=cron.zone_name if cron is not None else row.get("timezone"),
        queue=row.get("queue"),
        words=said,
        last_run=last,
        next_run=next_run,
        due=due,
        overdue_s=overdue,
        period_s=period,
        created_at=created,
        as_of=now,
        next_source=source,
        jobs=tuple(jobs),
        reasons=reasons,
        details=dict(row.get("details") or {}),
    )


def words_of(cron: Cron | None, reasons: dict[str, str]) -> str | None:
    if cron is None:
        reasons["words"] = reasons.get("expression", "no expression")
        return None
    try:
        return words(cron)
    except Exception as exc:  # cron-descriptor refuses a form croniter reads: the words alone are lost
        reasons["words"] = f"cron-descriptor cannot describe it: {exc}"
        return None
