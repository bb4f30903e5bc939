"""Targets: the databases one pgq-top command watches, from repeated `--dsn` flags or a TOML file.

# targets.toml: one table per target; the name is what the fleet screen, `check` and
# `snapshot --json` call it (a DSN may hold a password: it is never printed)
[targets.orders]
dsn = "postgresql://monitor@orders-db/orders"

[targets.billing]
dsn = "host=billing-db dbname=billing user=monitor"
table = "billing_jobs"      # default: --table (jobs)
schema = "queue"            # default: --schema (public)
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pgq_tui.db import resolve_dsn
from pgq_tui.errors import EXIT_USAGE, PgqError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TARGET_KEYS = frozenset({"dsn", "table", "schema"})


@dataclass(frozen=True)
class Target:
    name: str
    dsn: str
    table: str = "jobs"
    schema: str = "public"


def name_from_dsn(dsn: str) -> str:
    """A readable name for a DSN without its password: database@host (a socket directory's last part).

    >>> name_from_dsn("postgresql://app:secret@db.internal:5433/orders")
    'orders@db.internal:5433'
    >>> name_from_dsn("host=/tmp/pgq-top-x1 dbname=postgres")
    'postgres@pgq-top-x1'
    >>> name_from_dsn("")
    'default'
    """
    try:
        parts = conninfo_to_dict(dsn)
    except psycopg.ProgrammingError:
        return "invalid dsn"
    host = str(parts.get("host") or "")
    if host.startswith("/"):
        host = Path(host).name or host
    elif parts.get("port"):
        host = f"{host}:{parts['port']}"
    db = str(parts.get("dbname") or parts.get("user") or "")
    return "@".join(p for p in (db, host) if p) or "default"


def _unique(names: Sequence[str]) -> list[str]:
    """Disambiguate repeated names with #2, #3... in order.

    >>> _unique(["a", "b", "a", "a"])
    ['a', 'b', 'a#2', 'a#3']
    """
    seen: dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def parse_targets(data: Mapping[str, Any], source: str, table: str, schema: str) -> list[Target]:
    """Targets from a parsed TOML document; every mistake is one line naming the file and target."""
    unknown = set(data) - {"targets"}
    if unknown:
        raise PgqError(
            f"{source}: unknown top-level key {sorted(unknown)[0]!r} (expected [targets.NAME])", EXIT_USAGE
        )
    entries = data.get("targets")
    if not isinstance(entries, dict) or not entries:
        raise PgqError(f"{source}: no targets (add a [targets.NAME] table with a dsn)", EXIT_USAGE)
    out = []
    for name, entry in entries.items():
        if not isinstance(entry, dict):
            raise PgqError(f"{source}: targets.{name} must be a table with a dsn", EXIT_USAGE)
        extra = set(entry) - TARGET_KEYS
        if extra:
            raise PgqError(
                f"{source}: targets.{name}: unknown key {sorted(extra)[0]!r} "
                f"(known: {', '.join(sorted(TARGET_KEYS))})",
                EXIT_USAGE,
            )
        if not isinstance(entry.get("dsn"), str):
            raise PgqError(f"{source}: targets.{name}: dsn is missing or not a string", EXIT_USAGE)
        for key in ("table", "schema"):
            if key in entry and not isinstance(entry[key], str):
                raise PgqError(f"{source}: targets.{name}: {key} must be a string", EXIT_USAGE)
        try:
            conninfo_to_dict(entry["dsn"])
        except psycopg.ProgrammingError as exc:
            raise PgqError(
                f"{source}: targets.{name}: bad DSN: {str(exc).splitlines()[0]}", EXIT_USAGE
            ) from None
        out.append(Target(str(name), entry["dsn"], entry.get("table", table), entry.get("schema", schema)))
    return out


def load_targets_file(path: str, table: str = "jobs", schema: str = "public") -> list[Target]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise PgqError(f"cannot read targets file {path}: {exc.strerror}", EXIT_USAGE) from None
    except tomllib.TOMLDecodeError as exc:
        raise PgqError(f"{path}: not valid TOML: {exc}", EXIT_USAGE) from None
    return parse_targets(data, path, table, schema)


def resolve_targets(
    dsns: Sequence[str] | None, targets_file: str | None, table: str = "jobs", schema: str = "public"
) -> list[Target]:
    """`--dsn` flags (each may be empty: $DATABASE_URL / PG* variables) then the file's targets."""
    targets: list[Target] = []
    if dsns or not targets_file:
        resolved = [resolve_dsn(d) for d in (dsns or [None])]  # type: ignore[list-item]
        names = [name_from_dsn(d) for d in resolved]
        targets += [Target(n, d, table, schema) for n, d in zip(names, resolved, strict=True)]
    if targets_file:
        targets += load_targets_file(targets_file, table, schema)
    names = _unique([t.name for t in targets])
    return [Target(n, t.dsn, t.table, t.schema) for n, t in zip(names, targets, strict=True)]
