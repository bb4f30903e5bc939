"""The late-schedule rule: a periodic schedule past its due run by more than `schedule_late_s`
("schedule nightly-report last ran 26h ago, due every 24h"), with its cause where visible: the
framework's scheduler stopped (pg-boss's cron pass), the queue is paused, or stalled (its jobs
wait and no worker claims them). Pure (see rules.py): the due time and the overdue age come from
the schedule read itself (pgq_tui.schedules), dated by the server's clock at the read.
"""

from __future__ import annotations

from pgq_tui.diagnosis.findings import WARN, Finding, Fix, Thresholds
from pgq_tui.diagnosis.history import History
from pgq_tui.schedules.cron import span
from pgq_tui.schedules.model import ScheduleReport
from pgq_tui.schedules.words import age

# pg-boss's cron pass runs every cronMonitorIntervalSeconds (30 s by default, 45 at most): a pass
# older than this means no instance with `schedule: true` is running
SCHEDULER_SILENT_S = 120.0


def _scheduler(report: ScheduleReport) -> Finding | None:
    """The framework's scheduler stopped: its last pass older than SCHEDULER_SILENT_S (or none)."""
    if report.pass_name is None or report.as_of is None:
        return None
    if report.pass_at is None:
        text, short = f"{report.pass_name} never ran", f"{report.pass_name} never ran"
        held = 0.0
    else:
        held = (report.as_of - report.pass_at).total_seconds()
        if held <= SCHEDULER_SILENT_S:
            return None
        short = f"{report.pass_name} last ran {age(held)} ago"
        text = f"{short}: no instance runs the scheduler (pg-boss: started with schedule: true)"
    return Finding(
        id="scheduler",
        rule="scheduler",
        level=WARN,
        short=short,
        text=text,
        fix=Fix("start an instance that runs the scheduler", line="start the scheduler"),
        held_s=held,
    )


def late_schedules(history: History, t: Thresholds) -> list[Finding]:
    """Each schedule past its due run by more than `schedule_late_s`."""
    report = history[-1].schedules
    if report is None or not report.supported:
        return []
    out: list[Finding] = []
    scheduler = _scheduler(report)
    for s in report.schedules:
        if not s.late(t.schedule_late_s):
            continue
        overdue = s.overdue_s or 0.0
        due = f" (due {s.due.isoformat(timespec='seconds')}, {age(overdue)} ago)" if s.due else ""
        evidence = [f"expression {s.expression!r} in {s.timezone or 'UTC'}: {s.words or '?'}"]
        if s.jobs:
            states = ", ".join(f"{j.id} {j.state or '?'}" for j in s.jobs[:3])
            evidence.append(f"its newest jobs: {states}")
        queue = s.queue or s.name
        every = f" every {span(s.period_s)}" if s.period_s is not None else ""
        out.append(
            Finding(
                id=f"schedule:{s.name}",
                rule="schedule_late",
                level=WARN,
                short=s.late_line(),
                text=f"{s.late_line()}: it missed its run{due}",
                evidence=tuple(evidence),
                fix=Fix(
                    f"make the scheduler run schedule {s.name}{every} (its process, its queue's workers)",
                    line="check the scheduler",
                ),
                # the pause hook: a paused queue ("paused:<queue>") explains it before a stall
                causes=("scheduler", f"paused:{queue}", f"stalled:{queue}"),
                held_s=overdue,
            )
        )
    if out and scheduler is not None:
        out.append(scheduler)
    return out
