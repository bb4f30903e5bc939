"""Plans for the job actions, built from a dialect's read-only preview: pure functions (no database),
so the wording and the second-confirmation rule test without a server. `Actions` runs the preview.

A preview is one row of an ActionSpec's preview statement: `eligible` and `alive` (contract
PREVIEW_COLUMNS), and, where the dialect can say, `holders` (who is still connected) and
`exhausted` (how many the action sends to the dead jobs): see contract PREVIEW_OPTIONAL.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from pgq_tui.actions.model import Plan, plural
from pgq_tui.dialects.contract import ActionKind, ActionSpec, JobId, QueueModel, State

JOB_CANCEL = "cancel-jobs"  # Plan.action of ActionKind.CANCEL ("cancel" is a session's query)
NOUN = {State.STUCK: "stuck job", State.DEAD: "dead job"}


def plan_action(kind: ActionKind) -> str:
    """The Plan.action of a job action: its kind, except a job cancel (not pg_cancel_backend)."""
    return JOB_CANCEL if kind == ActionKind.CANCEL else kind.value


def action_kind(action: str) -> ActionKind:
    return ActionKind.CANCEL if action == JOB_CANCEL else ActionKind(action)


def refused_plan(
    action: str, title: str, reason: str, sql_text: str, targets: tuple[JobId, ...] = ()
) -> Plan:
    destructive = action in ("discard", "terminate")
    return Plan(action, title, reason, sql_text, targets, 0, destructive, False, None, refused=reason)


def holder_warning(preview: dict[str, Any], verb: str) -> str | None:
    """Jobs whose holder still has a session open may still be running: say so, and who."""
    alive = int(preview.get("alive") or 0)
    if not alive:
        return None
    holders = [h for h in preview.get("holders") or () if h]
    who = f" ({', '.join(sorted(holders)[:5])})" if holders else ""
    return (
        f"{alive} of these jobs may still be running: the worker holding them is still "
        f"connected{who}. {verb.capitalize()} lets another worker run them a second time."
    )


def job_plan(
    spec: ActionSpec,
    model: QueueModel,
    preview: dict[str, Any],
    targets: tuple[JobId, ...],
    *,
    queue: str | None,
    sql_text: str,
    batch: int,
    as_of: datetime | None = None,
) -> Plan:
    """The preview row -> the Plan a confirmation shows: what changes, at most how many rows, the guard,
    who may still be working on them, and the SQL. Nothing eligible is a refusal, not an empty write.
    """
    action, verb = plan_action(spec.kind), spec.kind.value
    noun = NOUN.get(spec.applies_to, "job")
    eligible = int(preview["eligible"])
    where = f" in queue {queue!r}" if queue is not None else ""
    if not eligible:
        chosen = f"none of the {plural(len(targets), 'selected job')}" if targets else f"no job{where}"
        reason = f"{chosen} is {spec.applies_to.value} ({spec.guard}): nothing to {verb}"
        title = f"{verb.capitalize()} {plural(len(targets), noun) if targets else noun + 's'}"
        return refused_plan(action, title, reason, sql_text, targets)
    schema, table = model.relations[0] if model.relations else (model.match.schema, model.match.table)
    parts = [
        f"{model.title} · {schema}.{table}: {spec.label} on {plural(eligible, noun)}{where}, "
        f"in batches of {batch}. Changes: {spec.effect}."
    ]
    exhausted = int(preview.get("exhausted") or 0)
    if exhausted:
        parts.append(f"{exhausted} of them {'has' if exhausted == 1 else 'have'} no attempts left: dead now.")
    parts.append(
        f"Only rows where {spec.guard} are touched, and the guard is checked again on each locked "
        f"row: at most {plural(eligible, 'row')} {'changes' if eligible == 1 else 'change'}."
    )
    if not targets and spec.statement.uses("before"):
        parts.append(f"Jobs that become {spec.applies_to.value} after this plan are left for the next pass.")
    others = len(targets) - eligible if targets else 0
    if others > 0:
        parts.append(f"{plural(others, 'selected job')} outside the guard will be left alone.")
    warning = holder_warning(preview, verb)
    return Plan(
        action,
        f"{verb.capitalize()} {plural(eligible, noun)}",
        " ".join(parts),
        sql_text,
        targets,
        eligible,
        spec.destructive,
        warning is not None,
        warning,
        expired_before=as_of,
        queue=queue,
    )
