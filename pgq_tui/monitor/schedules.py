"""Reading a kind's periodic schedules through its dialect's ScheduleSource (docs/schedules.md):
the schedule rows, the jobs each made and the scheduler's last pass, turned into a ScheduleReport by
the pure pgq_tui.schedules. The schedule tables are small (a row per schedule); the jobs each made
are read newest first, a few per schedule.

`read` runs the statements through the caller's `run` (the Monitor's poll session, or the
`schedules` command's connection); a failed statement fails the read, which the caller reports.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.dialects.contract import Capability, QueueModel, Statement
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.schedules.model import ScheduleReport, evaluate, made_jobs

Run = Callable[[Statement, dict[str, Any]], list[dict[str, Any]]]
JOB_ROWS = 5  # jobs listed per schedule
INTERVAL_S = 15.0  # the dashboard reads schedules at most this often (they change once a period)
SCAN_TOO_LARGE = (
    "the schedules are found by a scan of the jobs table, too large to scan in the poll:"
    " `pgq-top schedules` reads them"
)


def unsupported(model: QueueModel) -> ScheduleReport:
    why = model.support(Capability.SCHEDULES).reason
    return ScheduleReport(kind=model.kind, supported=False, reason=why)


def read(
    run: Run,
    model: QueueModel,
    now: datetime,
    *,
    rows: int = JOB_ROWS,
    crontab: Mapping[str, str] | None = None,
) -> ScheduleReport:
    """Every schedule of the model's kind at the server's `now`; `crontab` maps a schedule's name to
    its expression where the framework keeps none in the database (Graphile's crontab file)."""
    source = model.schedules
    if source is None:
        return unsupported(model)
    found = run(source.statement, {})
    names = [str(r["name"]) for r in found]
    jobs = made_jobs(run(source.jobs, {"names": names, "rows": rows})) if source.jobs and names else {}
    pass_at = None
    if source.scheduler is not None:
        pass_rows = run(source.scheduler, {})
        pass_at = pass_rows[0]["pass_at"] if pass_rows else None
    missing = source.expressions_elsewhere or "the framework keeps no expression in the database"
    schedules = tuple(
        evaluate(
            r,
            now,
            jobs=jobs.get(str(r["name"]), ()),
            seconds_first=source.seconds_first,
            expression=(crontab or {}).get(str(r["name"])),
            missing=missing,
        )
        for r in found
    )
    return ScheduleReport(
        kind=model.kind,
        supported=True,
        schedules=schedules,
        as_of=now,
        links=source.links,
        timezone_rule=source.timezone_rule,
        pass_at=pass_at,
        pass_name=source.scheduler_name or None,
    )


def runner(conn: psycopg.Connection[Any]) -> Run:
    """A `run` over one connection (the engine's standard parameters unset are NULL)."""

    def run(statement: Statement, params: dict[str, Any]) -> list[dict[str, Any]]:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(statement.compose(), {**DEFAULTS, **params})
            return cur.fetchall() if cur.description else []

    return run


def read_now(conn: psycopg.Connection[Any], model: QueueModel, **kw: Any) -> ScheduleReport:
    """`read` over `conn`, at the server's clock."""
    with conn.cursor() as cur:
        cur.execute("SELECT now()")
        row = cur.fetchone()
    assert row is not None
    return read(runner(conn), model, row[0], **kw)
