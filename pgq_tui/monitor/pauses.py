"""Which queues are paused, the framework's own way (the dialect's PauseSpec.state), as a figure on
each QueueStats: `paused` True or False when the database records it (read by this poll: exact),
None with the reason when it does not (Oban OSS keeps a pause in node memory: unknown), when the
read failed (unknown, with the error), or when the kind has no queue pause at all (unsupported).
Pure: the Monitor runs the statement in its pipeline and hands the rows here."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from pgq_tui.dialects.contract import Capability, QueueModel
from pgq_tui.monitor.snapshot import EXACT, UNKNOWN, UNSUPPORTED, Figure, QueueStats

PANEL = "pauses"  # its name in Snapshot.errors when the read failed


def paused_rows(rows: Sequence[dict[str, Any]]) -> dict[str, datetime | None]:
    """The state statement's rows (PAUSED_COLUMNS) -> queue -> paused since."""
    return {str(r["queue"]): r["paused_at"] for r in rows}


def figure(model: QueueModel, now: datetime, failed: str | None) -> Figure:
    """How every queue's `paused` was obtained at this poll."""
    spec = model.pause
    if spec is None:
        return Figure(UNSUPPORTED, None, "none", reason=model.support(Capability.PAUSE).reason)
    if spec.state is None:
        return Figure(UNKNOWN, None, "none", reason=spec.unknown_why or "not recorded in the database")
    if failed is not None:
        return Figure(UNKNOWN, None, "poll", reason=failed)
    return Figure(EXACT, now, spec.state_source or "poll")


def apply(
    queues: Sequence[QueueStats],
    model: QueueModel,
    paused: dict[str, datetime | None] | None,
    now: datetime,
    failed: str | None = None,
) -> tuple[QueueStats, ...]:
    """Each queue with its paused figure; `paused` None: not read (unknown, or not recorded)."""
    fig = figure(model, now, failed)
    out = []
    for q in queues:
        if fig.accuracy == EXACT and paused is not None:
            on = q.queue in paused
            out.append(
                dataclasses.replace(
                    q, paused=on, paused_since=paused.get(q.queue) if on else None, paused_figure=fig
                )
            )
        else:
            out.append(dataclasses.replace(q, paused=None, paused_since=None, paused_figure=fig))
    return tuple(out)


def is_paused(q: QueueStats) -> bool:
    """Known to be paused (an unknown pause is not a pause: its queue is judged as any other)."""
    return q.paused is True
