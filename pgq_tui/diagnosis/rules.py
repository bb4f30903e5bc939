"""The diagnosis rules: pure functions from a Snapshot history (oldest first, the latest last) to
Findings. No database, no clock: the times are the snapshots' own (`server.now`), so a recorded
history gives the same answer as the live one.

Signal from noise: evidence the server dates itself (a transaction's start, a lock wait's start, a
lease's expiry, the oldest ready job's age) counts from that date, against its own threshold; any
other evidence (a slow probe, a growing backlog, a dead-tuple count) must have held on every poll for
`Thresholds.min_duration_s` before it becomes a finding, so one slow poll raises nothing.
"""

from __future__ import annotations

from pgq_tui.diagnosis.findings import DEFAULTS, Finding, Thresholds
from pgq_tui.diagnosis.history import History, Rule
from pgq_tui.diagnosis.paused import paused
from pgq_tui.diagnosis.schedules import late_schedules
from pgq_tui.diagnosis.vacuum import (
    autovacuum_off,
    autovacuum_pacing,
    claims_slow,
    dead_tuples,
    xmin_holders,
)
from pgq_tui.diagnosis.work import backlog, crashed, locks, stalled

RULES: tuple[Rule, ...] = (
    xmin_holders,
    dead_tuples,
    autovacuum_off,
    autovacuum_pacing,
    claims_slow,
    locks,
    paused,
    stalled,
    crashed,
    backlog,
    late_schedules,
)


def findings(history: History, t: Thresholds = DEFAULTS) -> list[Finding]:
    """Every rule over the history (oldest first); nothing for an empty one."""
    snaps = tuple(history)  # a deque (the dashboard's) does not slice
    if not snaps:
        return []
    return [f for rule in RULES for f in rule(snaps, t)]
