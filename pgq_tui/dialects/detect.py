"""Detection: the catalog -> every queue it holds -> the one to open. Pure functions.

Several dialects may match one table (pgq-top's own table has the seed shape's columns and more): the
match with the highest score for a relation wins, so the most specific description of a table is used.
"""

from __future__ import annotations

from collections.abc import Sequence

from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import Dialect, Match


class DetectionError(Exception):
    """No queue, or not the one asked for: the message is one line for the user."""


def markers(dialects: Sequence[Dialect]) -> tuple[VersionMarker, ...]:
    return tuple(dict.fromkeys(m for d in dialects for m in d.version_markers))


def detect(catalog: Catalog, dialects: Sequence[Dialect], *, best: bool = True) -> list[Match]:
    """Every match, ordered by kind then place; with `best`, only the best one per relation (with
    --kind the user forces a dialect, so every match of it counts)."""
    found: dict[tuple[str, str, str], Match] = {}
    for dialect in dialects:
        for m in dialect.detect(catalog):
            found.setdefault((m.schema, m.table, m.kind), m)
    matches = list(found.values())
    if best:
        top: dict[tuple[str, str], Match] = {}
        for m in matches:
            key = (m.schema, m.table)
            if key not in top or m.score > top[key].score:
                top[key] = m
        matches = list(top.values())
    return sorted(matches, key=lambda m: (m.kind, m.schema, m.table))


def choose(
    matches: Sequence[Match],
    *,
    kind: str | None = None,
    schema: str | None = None,
    table: str | None = None,
) -> list[Match]:
    """The matches that fit --kind/--schema/--table; raises DetectionError when none does.

    One left: open it. Several: the caller asks the user (never guesses silently).
    """
    fit = [
        m
        for m in matches
        if (kind is None or m.kind == kind)
        and (schema is None or m.schema == schema)
        and (table is None or m.table == table or table in m.tables)
    ]
    if fit:
        return fit
    wanted = " ".join(
        f"{flag} {value}"
        for flag, value in (("--kind", kind), ("--schema", schema), ("--table", table))
        if value
    )
    if not matches:
        raise DetectionError(
            "no job queue found in this database (looked for: pgq-top's table, home-grown tables of the "
            "seed shapes, Graphile Worker, pg-boss, procrastinate, pgqueuer, River, Oban, Solid Queue, "
            "pgmq, DBOS, good_job); describe yours with --mapping FILE (docs/mapping.md), or create "
            "pgq-top's own queue with `pgq-top init`"
        )
    found = ", ".join(m.label for m in matches)
    raise DetectionError(f"no queue matches {wanted}; found: {found}")
