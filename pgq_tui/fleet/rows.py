"""One fleet-screen row per target, computed from its FleetEntry: pure, so it tests without a terminal."""

from __future__ import annotations

from dataclasses import dataclass

from pgq_tui.check.rules import UNKNOWN
from pgq_tui.fleet.poller import FleetEntry
from pgq_tui.monitor import figures, health


@dataclass(frozen=True)
class FleetRow:
    name: str
    table: str  # schema.table
    state: str  # "up", "down", "waiting" (no answer yet)
    version: str | None
    level: str  # ok / warn / crit from the dashboard's verdicts; "unknown" while down or waiting
    verdict: str  # the worst verdict's words, the error while down
    ready: int | None
    stuck: int | None
    dead: int | None
    estimated: bool  # a count above is an estimate
    oldest_ready_s: float | None
    poll_ms: float | None
    data_age_s: float | None  # seconds since the figures shown were collected
    waiting_s: float  # how long the poll in flight has been running (0: none)


def fleet_row(entry: FleetEntry, now: float) -> FleetRow:
    """The row for one target at clock time `now`. While down, the last figures stay (stale, with
    their age) so the screen still says what the queue looked like when it went away."""
    snap = entry.snapshot
    waiting = now - entry.started_at if entry.started_at is not None else 0.0
    age = now - entry.ok_at if entry.ok_at is not None else None
    table = f"{entry.target.schema}.{entry.target.table}"
    if snap is None:
        state = "waiting" if entry.up is None else "down"
        words = entry.error or "connecting…"
        return FleetRow(entry.target.name, table, state, None, UNKNOWN, words, None, None, None, False,
                        None, None, None, waiting)  # fmt: skip
    found = health.verdicts(snap)
    if entry.error is not None:
        level, words, state = UNKNOWN, entry.error, "down"
    else:
        level = health.worst([v.level for v in found])
        words = found[0].message if found else "healthy"
        state = "up"
    sums = figures.totals(snap)
    _, oldest = figures.oldest_ready(snap)
    return FleetRow(
        name=entry.target.name,
        table=table,
        state=state,
        version=snap.server.version,
        level=level,
        verdict=words + (f" (+{len(found) - 1} more)" if len(found) > 1 and state == "up" else ""),
        ready=sums.ready,
        stuck=sums.stuck,
        dead=sums.dead,
        estimated=sums.estimated,
        oldest_ready_s=oldest,
        poll_ms=snap.server.collect_ms,
        data_age_s=age,
        waiting_s=waiting,
    )


def fleet_summary(rows: list[FleetRow]) -> str:
    """
    >>> r = FleetRow("a", "public.jobs", "up", "18.6", "crit", "x", 1, 2, 3, False, 0.0, 1.0, 0.5, 0.0)
    >>> fleet_summary([r, FleetRow("b", "public.jobs", "down", None, "unknown", "gone", *[None] * 3,
    ...                             False, None, None, None, 0.0)])
    '1 up, 1 down · 1 critical'
    """
    up = sum(r.state == "up" for r in rows)
    down = sum(r.state == "down" for r in rows)
    parts = [f"{up} up", f"{down} down"]
    waiting = len(rows) - up - down
    if waiting:
        parts.append(f"{waiting} connecting")
    levels = [sum(r.level == health.CRIT for r in rows), sum(r.level == health.WARN for r in rows)]
    alerts = [f"{n} {w}" for n, w in zip(levels, ("critical", "warning"), strict=True) if n]
    return ", ".join(parts) + (" · " + ", ".join(alerts) if alerts else "")
