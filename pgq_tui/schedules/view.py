"""A ScheduleReport as JSON and as table cells, for `pgq-top schedules` and the dashboard's
schedules screen (both show the same words). Unknown is None in JSON with its reason, '?' in a
cell, never 0."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgq_tui.schedules.cron import span
from pgq_tui.schedules.model import LINK_WORDS, Schedule, ScheduleReport
from pgq_tui.schedules.words import age

HEADERS = ("schedule", "cron (zone)", "in words", "last run", "next run", "every", "late", "jobs")
LATE_COLUMN = HEADERS.index("late")


def _iso(t: datetime | None) -> str | None:
    return None if t is None else t.isoformat()


def schedule_json(s: Schedule, threshold_s: float) -> dict[str, Any]:
    late = s.late(threshold_s)
    reasons = dict(s.reasons)
    if late is None:
        reasons["late"] = reasons.get("overdue_s", "not known")
    return {
        "name": s.name,
        "expression": s.expression,
        "words": s.words,
        "timezone": s.timezone,
        "queue": s.queue,
        "last_run": _iso(s.last_run),
        "last_run_age_s": s.ago_s(),
        "next_run": _iso(s.next_run),
        "next_source": s.next_source,
        "due": _iso(s.due),
        "overdue_s": s.overdue_s,
        "period_s": s.period_s,
        "late": late,
        "created_at": _iso(s.created_at),
        "as_of": _iso(s.as_of),
        "accuracy": "exact",
        "jobs": [
            {
                "id": j.id,
                "state": j.state,
                "native_state": j.native_state,
                "created_at": _iso(j.created_at),
                "finished_at": _iso(j.finished_at),
                "link": j.link,
            }
            for j in s.jobs
        ],
        "reasons": reasons,
        "details": s.details,
    }


def report_json(report: ScheduleReport, threshold_s: float, target: str = "") -> dict[str, Any]:
    pass_age = None
    if report.pass_at is not None and report.as_of is not None:
        pass_age = (report.as_of - report.pass_at).total_seconds()
    return {
        "kind": report.kind,
        "target": target,
        "supported": report.supported,
        "reason": report.reason,
        "as_of": _iso(report.as_of),
        "late_threshold_s": threshold_s,
        "links": report.links,
        "timezone_rule": report.timezone_rule,
        "scheduler": None
        if report.pass_name is None
        else {"name": report.pass_name, "pass_at": _iso(report.pass_at), "pass_age_s": pass_age},
        "schedules": [schedule_json(s, threshold_s) for s in report.schedules],
    }


def _when(t: datetime | None, now: datetime, reason: str | None) -> str:
    if t is None:
        return "never" if reason and reason.startswith("no run recorded") else "?"
    delta = (t - now).total_seconds()
    return f"in {age(delta)}" if delta >= 0 else f"{age(-delta)} ago"


def _jobs(s: Schedule) -> str:
    if not s.jobs:
        return "-"
    states: dict[str, int] = {}
    for j in s.jobs:
        word = j.state or "?"
        states[word] = states.get(word, 0) + 1
    return ", ".join(f"{n} {w}" for w, n in states.items())


def cells(s: Schedule, threshold_s: float) -> tuple[str, ...]:
    """One schedule's row for a table (plain text: render it as Text, never markup)."""
    late = s.late(threshold_s)
    late_cell = "?" if late is None else (f"LATE {age(s.overdue_s or 0.0)}" if late else "no")
    return (
        s.name,
        f"{s.expression or '?'} ({s.timezone or 'UTC'})",
        s.words or "?",
        _when(s.last_run, s.as_of, s.reasons.get("last_run")),
        _when(s.next_run, s.as_of, s.reasons.get("next_run")),
        "?" if s.period_s is None else span(s.period_s),
        late_cell,
        _jobs(s),
    )


def notes(report: ScheduleReport) -> list[str]:
    """The lines under the table: how jobs are linked, the zone rule, the scheduler's last pass."""
    out = []
    if not report.supported:
        return [report.reason or "no schedules"]
    if report.pass_name is not None:
        if report.pass_at is None:
            out.append(f"{report.pass_name}: never ran")
        elif report.as_of is not None:
            out.append(
                f"{report.pass_name}: last ran {age((report.as_of - report.pass_at).total_seconds())} ago"
            )
    if report.links:
        out.append(f"jobs: {report.links}")
    if report.timezone_rule:
        out.append(f"time zones: {report.timezone_rule}")
    if any(j.link == "queue" for s in report.schedules for j in s.jobs):
        out.append(f"'queue' links: {LINK_WORDS['queue']}")
    return out
