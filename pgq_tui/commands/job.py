"""`pgq-top job ID`: one job in full, as the dashboard's detail shows it: the framework's state and
stuck rule, every timestamp with its age, the attempts newest first (where the kind keeps them), the
payload pretty-printed. Plain text (untrusted text made visible) or `--json`. Read-only."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import datetime
from typing import Any, TextIO

from pgq_tui.actions import Actions
from pgq_tui.db import resolve_dsn
from pgq_tui.detection import single_queue
from pgq_tui.dialects.contract import Capability
from pgq_tui.errors import EXIT_ERROR, EXIT_OK, EXIT_USAGE, PgqError
from pgq_tui.jobid import JobId
from pgq_tui.monitor.health import fmt_age
from pgq_tui.targets import Pins
from pgq_tui.untrusted import visible

TIMES = ("run_at", "created_at", "started_at", "finished_at", "locked_until", "heartbeat_at")


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser], common: object) -> None:
    p = sub.add_parser("job", help="one job in full: state, attempts newest first, payload (read-only)")
    common(p, suppress=True)  # type: ignore[operator]
    p.add_argument("id", metavar="ID", help="the job's id (as the dashboard and `jobs` list it)")
    p.add_argument("--json", action="store_true", help="JSON: the job, its attempts and each time's age")


def job_id(text: str) -> JobId:
    """An id as the dialect's statement takes it: digits as an integer, anything else as text.

    >>> job_id("42"), job_id("q:7")
    (42, 'q:7')
    """
    if not text.strip():
        raise PgqError("job ID is empty", EXIT_USAGE)
    return int(text) if text.strip().isdigit() else text.strip()


def age_s(value: Any, now: datetime | None) -> float | None:
    """Seconds from `value` to the server's now (negative: in the future); None when not a time."""
    if not isinstance(value, datetime) or now is None:
        return None
    return round((now - value).total_seconds(), 3)


def as_json(detail: dict[str, Any]) -> dict[str, Any]:
    """The detail with an `ages_s` beside its timestamps and an `age_s` on each attempt."""
    now = detail.get("as_of")
    out = dict(detail)
    out["ages_s"] = {k: age_s(detail.get(k), now) for k in TIMES if detail.get(k) is not None}
    history = dict(detail.get("history") or {})
    if history.get("attempts") is not None:
        history["attempts"] = [{**a, "age_s": age_s(a.get("at"), now)} for a in history["attempts"]]
    out["history"] = history
    return out


def _when(value: Any, now: datetime | None) -> str:
    if not isinstance(value, datetime):
        return "-" if value is None else visible(value)
    age = age_s(value, now)
    ago = "" if age is None else f" ({fmt_age(abs(age))} {'ago' if age >= 0 else 'from now'})"
    return value.isoformat(sep=" ", timespec="seconds") + ago


def text_lines(detail: dict[str, Any]) -> list[str]:
    now = detail.get("as_of")
    lines = [f"{k}: {visible(detail.get(k))}" for k in ("id", "queue", "status", "kind")]
    lines.append(f"attempts: {detail.get('attempts')} of {detail.get('max_attempts')}")
    history = detail.get("history") or {}
    rows = history.get("attempts")
    lines.append("attempts, newest first:")
    if rows is None:
        lines.append(f"  {visible(history.get('reason') or 'not recorded')}")
    elif not rows:
        lines.append("  none recorded yet")
    for a in rows or ():
        who = f" by {visible(a['worker'])}" if a.get("worker") else ""
        outcome = f" {visible(a['outcome'])}" if a.get("outcome") else ""
        number = a["attempt"] if a.get("attempt") is not None else "?"
        at = _when(a.get("at"), now) if a.get("at") is not None else "? (time not recorded)"
        lines.append(f"  #{number} {at}{outcome}{who}")
        lines.extend(f"     {visible(line)}" for line in str(a.get("error") or "").splitlines())
    lines.extend(f"{k}: {_when(detail.get(k), now)}" for k in TIMES)
    lines.append(f"locked_by: {visible(detail.get('locked_by'))}")
    lines.append(f"stuck means: {visible(detail.get('stuck_rule'))}")
    lines.append("last error:")
    lines.extend(f"  {visible(line)}" for line in str(detail.get("last_error") or "-").splitlines())
    lines.append("payload:")
    payload = json.dumps(detail.get("payload"), indent=2, sort_keys=True, ensure_ascii=False, default=str)
    lines.extend(f"  {visible(line)}" for line in payload.splitlines())
    for key, value in (detail.get("details") or {}).items():
        lines.append(f"{visible(key)}: {visible(value)}")
    return lines


def run_job(args: argparse.Namespace, out: TextIO | None = None) -> int:
    stream = out or sys.stdout
    wanted = job_id(args.id)  # bad input: before connecting
    dsn = resolve_dsn(args.dsn)
    target = single_queue(dsn, **Pins.from_flags(args).args())
    support = target.model.support(Capability.DETAIL)
    if not support.ok:
        raise PgqError(f"{visible(target.label)}: no job detail: {support.reason}", EXIT_USAGE)
    actions = Actions(dsn, target.model, read_only=True)
    try:
        detail = actions.job_detail(wanted)
    finally:
        actions.close()
    if detail is None:
        raise PgqError(f"job {visible(args.id)} not found in {visible(target.label)}", EXIT_ERROR)
    if args.json:
        stream.write(json.dumps({"queue": target.label, "job": as_json(detail)}, default=str) + "\n")
        return EXIT_OK
    stream.write("\n".join(text_lines(detail)) + "\n")
    return EXIT_OK
