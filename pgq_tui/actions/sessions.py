"""Cancel/terminate plans from the sessions the server reports: which pids may be signalled, and why not.

Pure: `signal_plan()` turns rows of PREVIEW_SESSIONS (pgq_tui/actions/statements.py) into a Plan.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from pgq_tui.actions.explain import signal_privilege_hint
from pgq_tui.actions.model import Plan
from pgq_tui.actions.model import plural as _plural

SIGNAL_WAIT_MS = 2000  # terminate waits this long for each session to exit, so the count is real
GONE = "that session is gone"  # the planned session ended (its pid may now be another session's)


def signal_plan(
    action: str,
    pids: tuple[int, ...],
    rows: list[dict[str, Any]],
    *,
    own: set[int],
    allow_pgq_top: bool,
    sql_text: str,
    role: str,
    seen: Mapping[int, datetime | None] | None = None,
) -> Plan:
    """Our own sessions and (unless allowed) pgq-top's are skipped, like sessions this role may not signal.
    `seen`: the backend_start of each pid as the operator saw it (the snapshot); a pid whose session
    has started since is another session now, and is skipped as gone."""
    verb = "Cancel the query of" if action == "cancel" else "Terminate"
    title = f"{verb} {_plural(len(pids), 'session')}"
    by_pid = {r["pid"]: r for r in rows}
    skipped: list[str] = [f"pid {pid} has already ended" for pid in pids if pid not in by_pid]
    chosen: list[dict[str, Any]] = []
    seen = seen or {}
    for pid, r in by_pid.items():
        if seen.get(pid) is not None and seen[pid] != r["backend_start"]:
            skipped.append(f"pid {pid}: {GONE} (its pid now belongs to a session started since)")
        elif r["is_self"] or pid in own:
            skipped.append(f"pid {pid} is pgq-top's own session")
        elif r["is_pgq_top"] and not allow_pgq_top:
            skipped.append(f"pid {pid} is a pgq-top session ({r['application']})")
        elif not r["can_signal"]:
            skipped.append(f"pid {pid} ({r['user'] or r['backend_type']}): no privilege")
        else:
            chosen.append(r)
    targets = tuple(r["pid"] for r in chosen)
    if not chosen:
        reason = "; ".join(skipped) or "nothing selected"
        if any("no privilege" in s for s in skipped):
            reason += "; " + signal_privilege_hint(role)
        return Plan(
            action,
            title,
            reason,
            sql_text,
            (),
            0,
            action == "terminate",
            False,
            None,
            refused=reason,
            allow_pgq_top=allow_pgq_top,
        )
    who = "; ".join(
        f"pid {r['pid']} {r['user'] or r['backend_type']}@{r['database'] or '-'} "
        f"'{r['application'] or ''}' {r['state'] or ''}".rstrip()
        for r in chosen
    )
    if action == "cancel":
        description = (
            f"Cancel the running statement of {_plural(len(chosen), 'session')} with "
            "pg_cancel_backend: it fails with an error, the session stays connected. "
            f"Targets: {who}."
        )
        idle = [r["pid"] for r in chosen if (r["state"] or "").startswith("idle")]
        if idle:
            skipped.append(
                f"pid {', '.join(map(str, idle))} is idle: a cancel does nothing there "
                "(terminate ends an idle transaction)"
            )
    else:
        description = (
            f"Terminate {_plural(len(chosen), 'session')} with pg_terminate_backend: "
            "its open transaction rolls back and the client is disconnected (a worker's "
            "leases then expire and get reaped). Waits up to "
            f"{SIGNAL_WAIT_MS / 1000:g} s for each to exit. Targets: {who}."
        )
    return Plan(
        action,
        f"{verb} {_plural(len(chosen), 'session')}",
        description,
        sql_text,
        targets,
        len(chosen),
        action == "terminate",
        False,
        "; ".join(skipped) or None,
        allow_pgq_top=allow_pgq_top,
        backend_starts=tuple(r["backend_start"] for r in chosen),
    )
