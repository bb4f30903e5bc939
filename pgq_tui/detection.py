"""Which queue to open in one database: the catalog read, every dialect's detection, and the user's
flags. (Which *databases* to watch is pgq_tui.targets.)

`find_queues()` returns every queue that fits `--kind/--schema/--table` (several: the caller asks
the user, never guesses). A `--table`/`--schema` that names no queue keeps the one-line errors users
know: the table does not exist, or it lacks pgq-top's columns (and no mapping describes it).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, TypedDict

import psycopg
from psycopg import errors as pg_errors

from pgq_tui import env
from pgq_tui.db.connect import connect, deadline
from pgq_tui.dialects import registry
from pgq_tui.dialects.catalog import Catalog
from pgq_tui.dialects.contract import Dialect, Match, QueueModel
from pgq_tui.dialects.detect import DetectionError, choose, detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.dialects.kit import Number, from_environment
from pgq_tui.dialects.mapping import MappingError, from_file
from pgq_tui.errors import (
    EXIT_LOCK_TIMEOUT,
    EXIT_PRIVILEGE,
    EXIT_SCHEMA,
    EXIT_USAGE,
    PgqError,
    describe,
)

if TYPE_CHECKING:
    from typing_extensions import Unpack

APPLICATION_NAME = "pgq-top detect"
DETECT_DEADLINE_S = 15.0  # a catalog read still unanswered then: the link is dead, say so
DETECT_LOCK_TIMEOUT_MS = 2_000


class PinArgs(TypedDict, total=False):
    """The flags that pin which queue to open (`--kind/--schema/--table/--mapping/--dead-reads`);
    left out or None: not pinned. targets.Pins holds the same for a target of a targets file."""

    kind: str | None
    schema: str | None
    table: str | None
    mapping: str | None  # a mapping file's path
    dead_reads: int | None  # pgq-top's dead rule for a framework without one (pgmq: read_ct >= N)
    settings: Mapping[str, Number] | None  # values of the settings the dialects declare (kit.Setting)


# Sessions holding an ACCESS EXCLUSIVE lock on a table of this database (what blocks detection).
_EXCLUSIVE_HOLDERS = """
SELECT l.pid, format('%I.%I', n.nspname, c.relname) AS relation,
       left(regexp_replace(coalesce(a.query, ''), '[[:space:]]+', ' ', 'g'), 80) AS query
FROM pg_locks l
JOIN pg_class c ON c.oid = l.relation
JOIN pg_namespace n ON n.oid = c.relnamespace
LEFT JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'relation' AND l.granted AND l.mode = 'AccessExclusiveLock'
  AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
  AND c.relkind IN ('r', 'p')
ORDER BY l.pid LIMIT 3
"""


@dataclass(frozen=True)
class QueueTarget:
    """One detected queue, ready to monitor and act on."""

    match: Match
    model: QueueModel

    @property
    def kind(self) -> str:
        return self.match.kind

    @property
    def label(self) -> str:
        return self.match.label

    @property
    def relation(self) -> str:
        """schema.table of its main relation, as the fleet, `check` and the exporter name it."""
        return f"{self.match.schema}.{self.match.table}"


def dialects(
    mapping: str | None = None,
    dead_reads: int | None = None,
    settings: Mapping[str, Number] | None = None,
) -> tuple[Dialect, ...]:
    """The built-in dialects with the user's values of the settings they declare (kit.Setting): the
    given one (--dead-reads, a target's key in `settings`), else its environment variable (read here,
    at each detection: a dialect never reads the environment), else the dialect's default; and the
    user's mapping file first (it outranks shipped shapes)."""
    builtin = registry.builtin()
    values = from_environment(registry.settings(builtin), env.environ())
    values.update(settings or {})
    if dead_reads is not None:
        values["dead_reads"] = dead_reads
    builtin = registry.configured(builtin, values)
    if mapping is None:
        return builtin
    try:
        return (from_file(mapping, {d.kind for d in builtin}), *builtin)
    except MappingError as exc:
        raise PgqError(str(exc), EXIT_USAGE) from None


def queues_in(
    catalog: Catalog,
    known: tuple[Dialect, ...],
    *,
    kind: str | None = None,
    schema: str | None = None,
    table: str | None = None,
) -> list[QueueTarget]:
    """Pure: the catalog and the flags -> the queues to offer (PgqError when none fits)."""
    if kind is not None and kind not in {d.kind for d in known}:
        kinds = ", ".join(sorted({d.kind for d in known}))
        raise PgqError(f"unknown --kind {kind!r} (known: {kinds})", EXIT_USAGE)
    matches = detect(catalog, known, best=kind is None)
    try:
        chosen = choose(matches, kind=kind, schema=schema, table=table)
    except DetectionError as exc:
        if table is not None or schema is not None:
            raise _explain_missing(catalog, schema or "public", table or "jobs", kind, known) from None
        raise PgqError(str(exc), EXIT_SCHEMA) from None
    by_kind = {d.kind: d for d in known}
    return [QueueTarget(m, by_kind[m.kind].model(m, catalog)) for m in chosen]


def _explain_missing(
    catalog: Catalog, schema: str, table: str, kind: str | None, known: tuple[Dialect, ...]
) -> PgqError:
    """Why the named table is no queue. A dialect may declare `required_columns` (what its detection
    needs) and `setup_hint` (how to make its table): the words come from the dialects that do (the
    `--kind` one only, when given), never from a kind named here."""
    qualified = f"{schema}.{table}"
    rel = catalog.relation(schema, table)
    declaring = [d for d in known if kind is None or d.kind == kind]
    hint = next((h for d in declaring if (h := getattr(d, "setup_hint", None))), None)
    if rel is None:
        fix = f"; {hint}" if hint else ""
        said = f"table {qualified} does not exist (or is not visible to this role){fix}"
        return PgqError(said, EXIT_SCHEMA)
    if not rel.can_select:
        return PgqError(f"permission denied: this role cannot read {qualified}", EXIT_PRIVILEGE)
    if kind is not None:
        return PgqError(f"table {qualified} is not a {kind} queue (its columns do not match)", EXIT_SCHEMA)
    shapes = [(d, frozenset(getattr(d, "required_columns", ()))) for d in declaring]
    nearest = max((s for s in shapes if s[1]), key=lambda s: len(s[1] & rel.column_names), default=None)
    if nearest is None:
        return PgqError(f"table {qualified} is no known queue (describe it with --mapping FILE)", EXIT_SCHEMA)
    dialect, columns = nearest
    missing = ", ".join(sorted(columns - rel.column_names))
    return PgqError(
        f"table {qualified} is not a {dialect.title} jobs table: missing columns {missing} "
        "(nor a known framework's; describe it with --mapping FILE)",
        EXIT_SCHEMA,
    )


def find_queues(conninfo: str, **pins: Unpack[PinArgs]) -> list[QueueTarget]:
    """Connect once, read the catalog once, and return the queues that fit the flags."""
    known = dialects(pins.get("mapping"), pins.get("dead_reads"), pins.get("settings"))
    try:
        # Reading an index's definition takes the table's ACCESS SHARE lock: behind a VACUUM FULL or
        # an ALTER TABLE, say who holds the lock instead of waiting out the statement timeout.
        with (
            connect(
                conninfo,
                application_name=APPLICATION_NAME,
                statement_timeout_ms=10_000,
                lock_timeout_ms=DETECT_LOCK_TIMEOUT_MS,
            ) as conn,
            deadline(conn, DETECT_DEADLINE_S),
        ):
            try:
                catalog = read_catalog(conn, known)
            except pg_errors.LockNotAvailable:
                raise _locked(conn) from None
    except psycopg.Error as exc:
        raise describe(exc) from None
    return queues_in(
        catalog, known, kind=pins.get("kind"), schema=pins.get("schema"), table=pins.get("table")
    )


def _locked(conn: psycopg.Connection) -> PgqError:
    """The one line for a catalog read that waited on a table lock: who holds it, doing what."""
    holders = conn.execute(_EXCLUSIVE_HOLDERS).fetchall()
    who = "; ".join(f"pid {pid} on {rel} ({query!r})" for pid, rel, query in holders)
    return PgqError(
        "a table is locked ACCESS EXCLUSIVE by another session, so its definition cannot be read"
        + (f": {who}" if who else "")
        + " (wait for it, or end it with: SELECT pg_cancel_backend(pid))",
        EXIT_LOCK_TIMEOUT,
    )


def single_queue(conninfo: str, **pins: Unpack[PinArgs]) -> QueueTarget:
    """The one queue the flags name; several found is a usage error (for commands with nobody to ask)."""
    targets = find_queues(conninfo, **pins)
    if len(targets) > 1:
        found = "; ".join(t.label for t in targets)
        raise PgqError(
            f"several queues found ({found}): pick one with --kind, --schema or --table", EXIT_USAGE
        )
    return targets[0]
