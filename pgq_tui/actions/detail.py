"""One job for the detail screen: a dialect's canonical JOB_COLUMNS row in the screen's keys, with the
framework's own state word and stuck rule. Pure."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from pgq_tui.dialects.contract import ATTEMPT_COLUMNS, Capability, QueueModel
from pgq_tui.timestamps import parse_timestamp

# Framework-specific details the screen has a row of its own for (the rest are listed as they are).
_OWN_ROWS = ("priority", "locked_until", "heartbeat_at")
_TIMES = ("locked_until", "heartbeat_at")


def detail_row(row: dict[str, Any], model: QueueModel) -> dict[str, Any]:
    """A canonical JOB_COLUMNS row in the detail screen's keys, plus the framework's words.

    >>> from pgq_tui.dialects.contract import Match, QueueModel
    >>> m = QueueModel(Match("k", "s", "t"), "K", "lease < now()", (), ())
    >>> d = detail_row({"id": 1, "queue": "q", "state": "dead", "native_state": "failed",
    ...     "attempts": 3, "max_attempts": None, "holder": None, "run_at": None, "created_at": None,
    ...     "started_at": None, "finished_at": None, "error": "boom", "payload": '{"a": 1}',
    ...     "details": {"priority": 5, "locked_until": "2026-01-01T00:00:00.12345+00:00"}}, m)
    >>> d["status"], d["max_attempts"], d["payload"], d["priority"], d["details"]
    ('dead (failed)', '?', {'a': 1}, 5, {})
    >>> d["locked_until"].microsecond  # PostgreSQL's JSON drops trailing zeros: 5 digits here
    123450
    """
    native = row.get("native_state")
    state = row["state"] if native in (None, row["state"]) else f"{row['state']} ({native})"
    details = dict(row.get("details") or {})
    own = {k: details.pop(k) for k in _OWN_ROWS if k in details}
    for key in _TIMES:
        if isinstance(own.get(key), str):  # jsonb carries timestamps as ISO text
            with contextlib.suppress(ValueError):  # `infinity` stays as the text it is
                own[key] = parse_timestamp(own[key])
    return {
        "id": row["id"],
        "queue": row["queue"],
        "status": state,
        "attempts": row["attempts"] if row["attempts"] is not None else "?",
        "max_attempts": row["max_attempts"] if row["max_attempts"] is not None else "?",
        "locked_by": row["holder"],
        "locked_until": None,
        "run_at": row["run_at"],
        "created_at": row["created_at"],
        "started_at": row["started_at"],
        "finished_at": row["finished_at"],
        "last_error": row["error"],
        "payload": _json_or_text(row["payload"]),
        "kind": f"{model.title} ({model.kind})",
        "stuck_rule": model.stuck_rule,
        **own,
        "details": details,
    }


def _json_or_text(payload: str | None) -> Any:
    """A payload as its JSON value when it is JSON text (pretty-printed by the detail), else the text."""
    if payload is None:
        return None
    try:
        return json.loads(payload)
    except ValueError:
        return payload


def attempt_history(
    rows: list[dict[str, Any]] | None, model: QueueModel, error: str | None = None
) -> dict[str, Any]:
    """The detail's `history`: the framework's attempts (ATTEMPT_COLUMNS rows, newest first) or, when
    there are none to show, why: `attempts` is None with a `reason` (the kind keeps none, or the read
    failed), [] when the kind keeps them and this job has none yet.

    >>> from pgq_tui.dialects.contract import Match, QueueModel
    >>> m = QueueModel(Match("k", "s", "t"), "K", "rule", (), ())
    >>> attempt_history(None, m)
    {'attempts': None, 'reason': 'K does not record this'}
    >>> attempt_history([{"attempt": 2, "at": None, "outcome": "errored", "worker": None,
    ...     "error": "boom", "trace": None}], m)["attempts"][0]["attempt"]
    2
    """
    if error is not None:
        return {"attempts": None, "reason": f"attempts not read: {error}"}
    if rows is None:
        return {"attempts": None, "reason": model.support(Capability.ATTEMPTS).reason}
    return {"attempts": [{k: r.get(k) for k in ATTEMPT_COLUMNS} for r in rows], "reason": None}
