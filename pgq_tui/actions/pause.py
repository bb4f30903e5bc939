"""Pausing and resuming a queue, the framework's own way (the dialect's PauseSpec): plans as pure
functions of the preview row, so the wording and the refusals test without a server. `Actions`
runs the preview and the write (one statement, one transaction, application_name 'pgq-top pause'
or 'pgq-top resume', recorded in the audit log before and after).

A pause changes at most one row (or sends one notification): its plan counts 1, and its guard is the
statement's WHERE (not paused yet / paused now), so two operators pausing at once change it once.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgq_tui.actions.job_plans import refused_plan
from pgq_tui.actions.model import Plan
from pgq_tui.dialects.contract import PauseSpec, QueueModel

PAUSE, RESUME = "pause", "resume"
PAUSES = (PAUSE, RESUME)


def pause_title(action: str, queue: str) -> str:
    """
    >>> pause_title("resume", "emails")
    "Resume queue 'emails'"
    """
    return f"{action.capitalize()} queue {queue!r}"


def pause_plan(
    action: str,
    model: QueueModel,
    spec: PauseSpec,
    queue: str,
    preview: dict[str, Any],
    *,
    sql_text: str,
    as_of: datetime | None = None,
) -> Plan:
    """The preview row (PAUSE_PREVIEW_COLUMNS: known, paused) -> the Plan a confirmation shows: what
    changes, when the workers notice, the caveat where the pause is not durable, and the SQL. A queue
    already in the asked state is a refusal (nothing to write), as is one the framework refuses."""
    title = pause_title(action, queue)
    if queue in ("", "*"):
        why = "pgq-top pauses one named queue ('*', every queue, is left to the framework's own tools)"
        return refused_plan(action, title, why, sql_text)
    known, paused = bool(preview.get("known")), preview.get("paused")
    if not known and spec.unknown_refusal and not paused:
        return refused_plan(action, title, f"queue {queue!r}: {spec.unknown_refusal}", sql_text)
    if action == PAUSE and paused is True:
        return refused_plan(action, title, f"queue {queue!r} is already paused: nothing to do", sql_text)
    if action == RESUME and paused is False:
        return refused_plan(action, title, f"queue {queue!r} is not paused: nothing to do", sql_text)
    effect = spec.pause_effect if action == PAUSE else spec.resume_effect
    schema, table = model.main_relation
    parts = [f"{model.title} · {schema}.{table}: {spec.label} on queue {queue!r}. Changes: {effect}."]
    if action == PAUSE:
        parts.append(f"Its workers notice {spec.reaction}.")
    warnings = []
    if spec.caveat:
        warnings.append(spec.caveat)
    if paused is None and spec.unknown_why:
        warnings.append(f"whether it is paused now is unknown ({spec.unknown_why})")
    if not known:
        warnings.append(f"no job of queue {queue!r} is in {schema}.{table}: check the name")
    return Plan(
        action=action,
        title=title,
        description=" ".join(parts),
        sql=sql_text,
        targets=(),
        count=1,
        destructive=False,
        needs_second_confirmation=False,
        warning="; ".join(warnings) or None,
        expired_before=as_of,
        queue=queue,
    )


def pause_message(action: str, queue: str, changed: int, spec: PauseSpec | None) -> str:
    """The outcome's line.

    >>> pause_message("pause", "emails", 1, None), pause_message("resume", "emails", 0, None)
    ("paused queue 'emails'", "queue 'emails' was not paused (resumed meanwhile): nothing changed")
    """
    if not changed:
        state = "already paused" if action == PAUSE else "not paused"
        when = "paused" if action == PAUSE else "resumed"
        return f"queue {queue!r} was {state} ({when} meanwhile): nothing changed"
    done = f"{'paused' if action == PAUSE else 'resumed'} queue {queue!r}"
    if spec is not None and not spec.durable:
        done += f" (signal sent; {spec.caveat})" if spec.caveat else " (signal sent)"
    return done
