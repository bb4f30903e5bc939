"""One fleet-screen row per target, computed from its FleetEntry: pure, so it tests without a terminal."""

from __future__ import annotations

from dataclasses import dataclass

from pgq_tui.dialects.contract import OLDEST_READY
from pgq_tui.fleet.poll import place
from pgq_tui.fleet.poller import FleetEntry
from pgq_tui.fleet.support import state_served, stuck_total, why_not
from pgq_tui.monitor import figures, health
from pgq_tui.monitor.health import UNKNOWN


@dataclass(frozen=True)
class FleetRow:
    name: str  # the target's name, "/" and the queue's tag when its database holds several
    table: str  # schema.table of the queue ("" until detected and nothing pinned)
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
    kind: str | None = None  # the queue's dialect (None: not detected yet)
    # of ready/stuck/dead and oldest_ready_age_s: figures the kind has but were not taken ("?")
    unknown: tuple[str, ...] = ()


def fleet_row(entry: FleetEntry, now: float) -> FleetRow:
    """The row for one target at clock time `now`. While down, the last figures stay (stale, with
    their age) so the screen still says what the queue looked like when it went away."""
    snap = entry.snapshot
    waiting = now - entry.started_at if entry.started_at is not None else 0.0
    age = now - entry.ok_at if entry.ok_at is not None else None
    q, pins = entry.queue, entry.target
    table = place(q, pins)
    kind = q.kind if q else pins.kind
    if snap is None:
        state = "waiting" if entry.up is None else "down"
        words = entry.error or "connecting…"
        return FleetRow(entry.key, table, state, None, UNKNOWN, words, None, None, None, False,
                        None, None, None, waiting, kind)  # fmt: skip
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
        name=entry.key,
        table=table,
        state=state,
        version=snap.server.version,
        level=level,
        verdict=words + (f" (+{len(found) - 1} more)" if len(found) > 1 and state == "up" else ""),
        # a count the dialect cannot serve is None (shown as a dash), one not taken None and "?",
        # never 0
        ready=sums.ready if state_served(snap, "ready") else None,
        stuck=stuck_total(snap) if state_served(snap, "stuck") else None,
        dead=sums.dead if state_served(snap, "dead") else None,
        estimated=sums.estimated,
        # the oldest ready job's age comes with the ready count: not taken with it, unknown
        oldest_ready_s=oldest
        if why_not(snap, "oldest_ready") is None and figures.unknown_why(snap, "oldest_ready_age_s") is None
        else None,
        poll_ms=snap.server.collect_ms,
        data_age_s=age,
        waiting_s=waiting,
        kind=snap.kind,
        unknown=tuple(
            s
            for s in ("ready", "stuck", "dead")
            if figures.unknown_why(snap, figures.STATE_FIELD[s]) is not None
        )
        + ((OLDEST_READY,) if figures.unknown_why(snap, OLDEST_READY) is not None else ()),
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
