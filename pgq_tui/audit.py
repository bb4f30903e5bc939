"""The audit trail: one JSON line per write pgq-top makes, appended before it runs and after
(docs/actions.md). Local and append-only: nothing is written into the user's database for it.

Where: `--audit-log FILE`, else $PGQ_TOP_AUDIT_LOG, else $XDG_STATE_HOME/pgq-top/audit.jsonl
(~/.local/state/pgq-top/audit.jsonl). `--audit-log off` (or PGQ_TOP_AUDIT_LOG=off) turns it off.
Every text field passes through errors.redact and the target is the DSN without its secrets, so no
password reaches the file. A line that cannot be written refuses the write it would record.
"""

from __future__ import annotations

import getpass
import json
import os
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pgq_tui import env
from pgq_tui.errors import EXIT_ERROR, PgqError, redact

ENV = "PGQ_TOP_AUDIT_LOG"
OFF = ("off", "none", "-")
IDS_KEPT = 50  # ids listed per line (all are counted)
# the connection keywords a target is named by; every other one (passwords, keys) is left out
_NAMED_BY = ("host", "hostaddr", "port", "dbname", "user", "service")


def location(flag: str | None, environ: Mapping[str, str]) -> Path | None:
    """Where the audit log goes; None when it is turned off.

    >>> location(None, {"XDG_STATE_HOME": "/s"}), location("off", {}), location(None, {ENV: "/a.jsonl"})
    (PosixPath('/s/pgq-top/audit.jsonl'), None, PosixPath('/a.jsonl'))
    """
    chosen = flag if flag is not None else environ.get(ENV)
    if chosen is not None:
        return None if chosen.strip().lower() in OFF else Path(chosen).expanduser()
    state = environ.get("XDG_STATE_HOME") or str(Path(environ.get("HOME", "~")) / ".local" / "state")
    return Path(state).expanduser() / "pgq-top" / "audit.jsonl"


def target_of(dsn: str) -> str:
    """The DSN named by host, port, database and user only: never a secret.

    >>> target_of("postgresql://app:s3cret@db.example:5433/shop?sslmode=require")
    'host=db.example port=5433 dbname=shop user=app'
    >>> target_of("")
    'libpq defaults (PG* variables)'
    """
    try:
        given = conninfo_to_dict(dsn)
    except psycopg.Error:
        return "unparsable DSN"
    named = " ".join(f"{k}={given[k]}" for k in _NAMED_BY if given.get(k))
    return redact(named) or "libpq defaults (PG* variables)"


def _clean(value: Any) -> Any:
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {k: _clean(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_clean(v) for v in value]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    return redact(str(value))


def _user() -> str:
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return f"uid {os.getuid()}"


@dataclass(frozen=True)
class AuditLog:
    """Appends records to `path` (None: off)."""

    path: Path | None

    @classmethod
    def from_environment(cls, flag: str | None = None) -> AuditLog:
        return cls(location(flag, env.environ()))

    def write(self, dsn: str, event: str, **fields: Any) -> None:
        """One line: time, OS user and host, target, the event ("start", "end") and `fields`.
        Raises PgqError (one line) when the file cannot be written."""
        if self.path is None:
            return
        record = {
            "time": datetime.now(timezone.utc).isoformat(),
            "user": _user(),
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "target": target_of(dsn),
            "event": event,
            **fields,
        }
        line = json.dumps(_clean(record), ensure_ascii=False, sort_keys=False) + "\n"
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            try:
                os.write(fd, line.encode())  # one write on O_APPEND: lines of concurrent writers never mix
            finally:
                os.close(fd)
        except OSError as exc:
            why = exc.strerror or type(exc).__name__
            message = f"cannot write the audit log {self.path}: {why} (--audit-log FILE or off)"
            raise PgqError(message, EXIT_ERROR) from None


def ids_fields(ids: tuple[Any, ...]) -> dict[str, Any]:
    """The chosen ids as audit fields: the first IDS_KEPT and how many in all.

    >>> ids_fields((1, 2)), ids_fields(())
    ({'ids': [1, 2], 'ids_count': 2}, {'ids': None, 'ids_count': None})
    """
    if not ids:
        return {"ids": None, "ids_count": None}
    return {"ids": [i if isinstance(i, int) else str(i) for i in ids[:IDS_KEPT]], "ids_count": len(ids)}
