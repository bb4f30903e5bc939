"""Plans for the job actions, built from a read-only preview: pure functions (no database), so the
wording and the second-confirmation rule test without a server. `Actions` fetches the preview.

A preview is one row of actions/statements.py PREVIEW_STUCK or PREVIEW_FAILED.
"""

from __future__ import annotations

from typing import Any

from pgq_tui.actions.model import Plan, plural
from pgq_tui.monitor.snapshot import Snapshot


def refused_plan(action: str, title: str, reason: str, sql_text: str, targets: tuple[int, ...]) -> Plan:
    destructive = action in ("discard", "terminate")
    return Plan(action, title, reason, sql_text, targets, 0, destructive, False, None, refused=reason)


def holder_warning(
    preview: dict[str, Any], targets: tuple[int, ...], snapshot: Snapshot | None
) -> str | None:
    """Leases whose holder is still connected may still be running: say so (live and snapshot)."""
    ids = set(preview["connected_ids"] or [])
    holders = set(preview["connected_holders"] or [])
    if snapshot is not None:
        for lease in snapshot.expired.rows:
            if lease.holder_connected and (not targets or lease.id in targets):
                ids.add(lease.id)
                holders.add(f"{lease.locked_by} (pid {lease.holder_pid})")
    count = max(preview["connected"], len(ids))
    if not count:
        return None
    return (
        f"{count} of these jobs may still be running: the worker holding them is still connected "
        f"({', '.join(sorted(holders)[:5])}). Requeueing lets another worker run them a second time."
    )


def requeue_plan(
    preview: dict[str, Any], targets: tuple[int, ...], snapshot: Snapshot | None, sql_text: str
) -> Plan:
    stuck = preview["stuck"]
    if not stuck:
        reason = (
            f"none of the {plural(len(targets), 'selected job')} is stuck "
            "(running with an expired lease): nothing to requeue"
        )
        return refused_plan(
            "requeue", f"Requeue {plural(len(targets), 'stuck job')}", reason, sql_text, targets
        )
    others = len(targets) - stuck
    description = (
        f"Set {plural(stuck, 'job')} back to pending so any worker can claim them again. "
        "Only rows still running with an expired lease (locked_until < now()) are touched; "
        "the condition is checked again on each locked row when it runs."
        + (f" {plural(others, 'selected job')} not stuck will be left alone." if others else "")
    )
    warning = holder_warning(preview, targets, snapshot)
    title = f"Requeue {plural(stuck, 'stuck job')}"
    return Plan("requeue", title, description, sql_text, targets, stuck, False, warning is not None, warning)


def reap_plan(preview: dict[str, Any], snapshot: Snapshot | None, sql_text: str, batch: int) -> Plan:
    stuck = preview["stuck"]
    if not stuck:
        return refused_plan(
            "reap", "Reap expired leases", "no expired leases right now: nothing to reap", sql_text, ()
        )
    description = (
        f"Requeue the {plural(stuck, 'lease')} expired now, in batches of {batch}: back to pending, "
        f"or to the dead letters when out of attempts ({preview['exhausted']} now). Leases that "
        "expire after this was planned are left for the next reap. Rows a worker is finishing at "
        "that moment are skipped (SKIP LOCKED) and the expiry is checked again on each locked row."
    )
    warning = holder_warning(preview, (), snapshot)
    title = f"Reap {plural(stuck, 'expired lease')}"
    return Plan(
        "reap",
        title,
        description,
        sql_text,
        (),
        stuck,
        False,
        warning is not None,
        warning,
        expired_before=preview["as_of"],
    )


def failed_plan(action: str, preview: dict[str, Any], targets: tuple[int, ...], sql_text: str) -> Plan:
    """Retry or discard of dead letters: only rows still 'failed' are touched."""
    verb = "Retry" if action == "retry" else "Discard"
    n = preview["failed"]
    if not n:
        selected = plural(len(targets), "selected job")
        reason = f"none of the {selected} is dead (status 'failed'): nothing to {action}"
        title = f"{verb} {plural(len(targets), 'dead job')}"
        return refused_plan(action, title, reason, sql_text, targets)
    if action == "retry":
        what = (
            f"Put {plural(n, 'dead job')} back to pending, runnable now, with a fresh budget "
            "of attempts (last_error is kept)."
        )
    else:
        what = f"Delete {plural(n, 'dead job')} for good."
    others = len(targets) - n
    description = (
        what
        + " Only rows still in status 'failed' are touched."
        + (f" {plural(others, 'selected job')} not dead will be left alone." if others else "")
    )
    title = f"{verb} {plural(n, 'dead job')}"
    return Plan(action, title, description, sql_text, targets, n, action == "discard", False, None)
