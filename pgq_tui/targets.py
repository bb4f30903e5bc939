"""Targets: the databases one pgq-top command watches, from repeated `--dsn` flags or a TOML file.

# targets.toml: one table per target; the name is what the fleet screen, `check` and
# `snapshot --json` call it (a DSN may hold a password: it is never printed)
[targets.orders]
dsn = "postgresql://monitor@orders-db/orders"

[targets.billing]
dsn = "host=billing-db dbname=billing user=monitor"
kind = "procrastinate"      # optional pins, as the dashboard's flags: kind, schema, table, mapping;
schema = "queue"            # without them every queue detected in the database is watched
mapping = "jobs.toml"       # a mapping file (relative to this file's directory)
dead_reads = 5              # pgq-top's dead rule where the framework has none (pgmq: read_ct >= 5)
river_rescue_after = 1800   # a setting a dialect declares (seconds; docs/dialect-settings.md)

Each target is detected like `pgq-top --dsn` (pgq_tui.detection): every queue it holds that fits its
pins (or the command line's --kind/--schema/--table/--mapping) is watched.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import psycopg
from psycopg.conninfo import conninfo_to_dict

from pgq_tui.db import resolve_dsn
from pgq_tui.dialects.kit import Setting
from pgq_tui.errors import EXIT_USAGE, PgqError, first_line, remember_secrets

if TYPE_CHECKING:
    from pgq_tui.detection import PinArgs

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib

TARGET_KEYS = frozenset({"dsn", "kind", "schema", "table", "mapping", "dead_reads"})
# Besides these, a target may set each setting a dialect declares (dialects/kit.Setting), by its key:
# river_rescue_after, oban_rescue_after, procrastinate_stalled_after, ... (`declared_settings()`).
PINS = ("kind", "schema", "table", "mapping")


@dataclass(frozen=True)
class Pins:
    """Which queue(s) of a database to watch; None everywhere: every queue detected."""

    kind: str | None = None
    schema: str | None = None
    table: str | None = None
    mapping: str | None = None  # a mapping file's path
    dead_reads: int | None = None  # pgq-top's dead rule for a framework without one (pgmq: read_ct >= N)
    # values of the settings the dialects declare, (key, value): e.g. (("river_rescue_after", 1800.0),)
    settings: tuple[tuple[str, float | int], ...] = ()

    @classmethod
    def from_flags(cls, args: object) -> Pins:
        """The pins of parsed command-line flags (a command without one of them: not pinned).

        >>> from argparse import Namespace
        >>> pins = Pins.from_flags(Namespace(kind="pgq", schema="app", table=None))
        >>> pins
        Pins(kind='pgq', schema='app', table=None, mapping=None, dead_reads=None, settings=())
        >>> pins.args()["schema"], pins.args()["settings"]
        ('app', {})
        """
        pinned = {f.name: getattr(args, f.name, None) for f in fields(cls) if f.name != "settings"}
        return cls(**pinned, settings=tuple((getattr(args, "dialect_settings", None) or {}).items()))

    def args(self) -> PinArgs:
        """As keyword arguments of detection.find_queues/single_queue."""
        return {
            "kind": self.kind,
            "schema": self.schema,
            "table": self.table,
            "mapping": self.mapping,
            "dead_reads": self.dead_reads,
            "settings": dict(self.settings),
        }


@dataclass(frozen=True)
class Target:
    name: str
    dsn: str
    table: str | None = None
    schema: str | None = None
    kind: str | None = None
    mapping: str | None = None
    dead_reads: int | None = None
    # its values of settings the dialects declare, (key, value): e.g. (("river_rescue_after", 1800.0),)
    settings: tuple[tuple[str, float | int], ...] = ()

    @property
    def pins(self) -> Pins:
        return Pins(self.kind, self.schema, self.table, self.mapping, self.dead_reads, self.settings)


def declared_settings() -> dict[str, Setting]:
    """Key -> setting, for every setting a built-in dialect declares but dead_reads (a key of its own)."""
    from pgq_tui.dialects.registry import builtin, settings

    return {s.key: s for s in settings(builtin()) if s.key != "dead_reads"}


def _settings(entry: Mapping[str, Any], where: str) -> tuple[tuple[str, float | int], ...]:
    """The entry's values of the dialects' declared settings, each checked (one line when wrong)."""
    out = []
    for key, setting in declared_settings().items():
        if key in entry:
            value = setting.parse(entry[key])
            if value is None:
                what = "a whole number >= 1" if setting.integer else "a number of seconds > 0"
                raise PgqError(f"{where}{key} must be {what}", EXIT_USAGE)
            out.append((key, value))
    return tuple(out)


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


def parse_targets(
    data: Mapping[str, Any], source: str, defaults: Pins = Pins(), base: Path | None = None
) -> list[Target]:
    """Targets from a parsed TOML document; every mistake is one line naming the file and target.
    A pin the entry leaves out comes from `defaults` (the command line); a relative mapping path is
    relative to `base` (the targets file's directory)."""
    unknown = set(data) - {"targets", "diagnosis"}  # [diagnosis]: thresholds, read by pgq_tui.diagnosis
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
        known = TARGET_KEYS | set(declared_settings())
        extra = set(entry) - known
        if extra:
            raise PgqError(
                f"{source}: targets.{name}: unknown key {sorted(extra)[0]!r} "
                f"(known: {', '.join(sorted(known))})",
                EXIT_USAGE,
            )
        if not isinstance(entry.get("dsn"), str):
            raise PgqError(f"{source}: targets.{name}: dsn is missing or not a string", EXIT_USAGE)
        remember_secrets(entry["dsn"])  # no message printed from now on may contain them
        for key in PINS:
            if key in entry and not isinstance(entry[key], str):
                raise PgqError(f"{source}: targets.{name}: {key} must be a string", EXIT_USAGE)
        try:
            conninfo_to_dict(entry["dsn"])
        except psycopg.ProgrammingError as exc:
            raise PgqError(
                f"{source}: targets.{name}: bad DSN: {first_line(exc)}", EXIT_USAGE
            ) from None
        dead_reads = entry.get("dead_reads", defaults.dead_reads)
        if dead_reads is not None and (type(dead_reads) is not int or dead_reads < 1):
            raise PgqError(f"{source}: targets.{name}: dead_reads must be a whole number >= 1", EXIT_USAGE)
        pins = {k: entry.get(k, getattr(defaults, k)) for k in PINS}
        if "mapping" in entry and base is not None:
            pins["mapping"] = str(base / entry["mapping"])
        settings = _settings(entry, f"{source}: targets.{name}: ")
        target = Target(str(name), entry["dsn"], **pins, dead_reads=dead_reads, settings=settings)
        validate(target, f"{source}: targets.{name}: ")
        out.append(target)
    return out


def validate(target: Target, where: str = "") -> None:
    """Fail early, one line, on a mapping file that does not load or a kind nobody knows, before any
    connection is tried (so `check` says UNKNOWN for the typo, not for every target's server)."""
    from pgq_tui.detection import dialects

    try:
        known = dialects(target.mapping)
    except PgqError as exc:
        raise PgqError(f"{where}{exc}", EXIT_USAGE) from None
    kinds = {d.kind for d in known}
    if target.kind is not None and target.kind not in kinds:
        key = "kind" if where else "--kind"  # a targets file's key, or the flag
        listed = ", ".join(sorted(kinds))
        raise PgqError(f"{where}unknown {key} {target.kind!r} (known: {listed})", EXIT_USAGE)


def load_targets_file(path: str, defaults: Pins = Pins()) -> list[Target]:
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise PgqError(f"cannot read targets file {path}: {exc.strerror}", EXIT_USAGE) from None
    except tomllib.TOMLDecodeError as exc:
        raise PgqError(f"{path}: not valid TOML: {exc}", EXIT_USAGE) from None
    return parse_targets(data, path, defaults, Path(path).resolve().parent)


def resolve_targets(
    dsns: Sequence[str] | None, targets_file: str | None, defaults: Pins = Pins()
) -> list[Target]:
    """`--dsn` flags (each may be empty: $DATABASE_URL / PG* variables) then the file's targets; the
    command line's --kind/--schema/--table/--mapping pin the flags' targets and are the file's defaults."""
    targets: list[Target] = []
    if dsns or not targets_file:
        resolved = [resolve_dsn(d) for d in (dsns or [None])]  # type: ignore[list-item]
        names = [name_from_dsn(d) for d in resolved]
        pins = {k: getattr(defaults, k) for k in PINS}
        targets += [
            Target(n, d, **pins, dead_reads=defaults.dead_reads) for n, d in zip(names, resolved, strict=True)
        ]
        if targets:
            validate(targets[0])
    if targets_file:
        targets += load_targets_file(targets_file, defaults)
    names = _unique([t.name for t in targets])
    return [replace(t, name=n) for n, t in zip(names, targets, strict=True)]
