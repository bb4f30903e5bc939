"""Graphile Worker's crontab file (its `crontab` format: `<min> <hour> <dom> <month> <dow>
<task> [?opts] [payload]`, `#` comments), read for the expressions its known_crontabs rows lack: a
line's identifier is its `id=` option, else its task (Graphile's own rule)."""

from __future__ import annotations

from urllib.parse import parse_qs

from pgq_tui.errors import EXIT_USAGE, PgqError


def parse_crontab(text: str) -> dict[str, str]:
    """identifier -> the line's five time fields.

    >>> parse_crontab("# nightly\\n0 4 * * * send_report ?id=nightly&fill=2d {}\\n*/5 * * * * ping\\n")
    {'nightly': '0 4 * * *', 'ping': '*/5 * * * *'}
    """
    out: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) < 6:
            raise ValueError(f"line {number}: want five time fields and a task, got {line!r}")
        fields, task = " ".join(parts[:5]), parts[5]
        identifier = task
        if len(parts) > 6 and parts[6].startswith("?"):
            identifier = parse_qs(parts[6][1:]).get("id", [task])[0]
        out[identifier] = fields
    return out


def read_crontab(path: str) -> dict[str, str]:
    """`parse_crontab` of a file; a missing or bad file is one clear line (exit 2)."""
    try:
        with open(path, encoding="utf-8") as fh:
            return parse_crontab(fh.read())
    except OSError as exc:
        raise PgqError(f"--crontab {path}: {exc.strerror or exc}", EXIT_USAGE) from None
    except ValueError as exc:
        raise PgqError(f"--crontab {path}: {exc}", EXIT_USAGE) from None
