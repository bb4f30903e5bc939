"""The paused rule: a queue paused the framework's own way while jobs wait in it. Not a stall (no
worker is missing: they were told not to claim), said as what it is, with the resume as its fix.
Pure, like the other rules (rules.py)."""

from __future__ import annotations

from pgq_tui.diagnosis.findings import WARN, Finding, Fix, Thresholds
from pgq_tui.diagnosis.history import History
from pgq_tui.monitor.health import fmt_age, fmt_count
from pgq_tui.monitor.pauses import is_paused


def paused(history: History, t: Thresholds) -> list[Finding]:
    """Each paused queue with ready jobs; dated by the pause itself where the framework records when."""
    snap = history[-1]
    out = []
    for q in snap.queues:
        if not is_paused(q) or not q.ready:
            continue
        since = (snap.server.now - q.paused_since).total_seconds() if q.paused_since is not None else None
        how = q.paused_figure.source if q.paused_figure is not None else "the framework"
        when = f" for {fmt_age(since)}" if since is not None else ""
        oldest = f", the oldest for {fmt_age(q.oldest_ready_age_s)}" if q.oldest_ready_age_s else ""
        out.append(
            Finding(
                id=f"paused:{q.queue}",
                rule="paused",
                level=WARN,
                short=f"queue {q.queue} paused{when}, {fmt_count(q.ready)} ready wait",
                text=f"queue {q.queue} is paused{when} ({how}): its workers claim nothing from it while"
                f" {fmt_count(q.ready)} ready jobs wait{oldest}. Not stalled: resume it when it should run",
                evidence=(f"{how}: paused{when}", f"{fmt_count(q.ready)} ready"),
                fix=Fix(f"resume queue {q.queue}", key="U", command=f"pgq-top resume --queue {q.queue}"),
                held_s=since or 0.0,
            )
        )
    return out
