"""Guarded transitions: an action's guard written once, for its preview and for its write.

A dialect keeps only what is its framework's own: the guard (`sql/guard_<what>.sql`, a condition on
the job row `j`, e.g. `j.state = 'discarded'`) and the transition (`sql/<action>.sql`, whose text
begins with `{chosen}` and re-checks `{guard}` on each locked row, with the comment saying whose
transition it is). The shared pieces live in `dialects/sql/`: `admitted.sql` (the guard among the
chosen ids and queue), `chosen.sql` (the lock-and-filter CTE) and `preview.sql` (the preview count).
They are bound as Statement.parts: composed by psycopg with the statement's identifiers and literals,
never formatted in; the parameters (ids, queue, batch) stay bound.
"""

from __future__ import annotations

from dataclasses import replace

from pgq_tui.dialects.contract import Statement
from pgq_tui.dialects.sqlfiles import body, sql_part, sql_parts


def _with(statement: Statement, guard: Statement, queue_column: str, order_column: str) -> Statement:
    idents = dict(statement.idents)
    idents.update(queue_column=(queue_column,), order_column=(order_column,))
    shared = tuple((name, sql_part(__package__, name)) for name in ("admitted", "chosen"))
    parts = (("guard", body(guard.text)), *shared)
    return replace(statement, idents=tuple(sorted(idents.items())), parts=parts)


def preview(guard: Statement, *, queue_column: str = "queue") -> Statement:
    """The preview of the actions `guard` admits (PREVIEW_COLUMNS): the guard's statement, named
    `<kind>.preview_<what>`, its text the shared `preview.sql`."""
    name = guard.name.replace(".guard_", ".preview_")
    shared = replace(guard, name=name, text=sql_part(__package__, "preview"))
    return _with(shared, guard, queue_column, "id")


def guarded(
    transition: Statement, guard: Statement, *, queue_column: str = "queue", order_column: str = "id"
) -> Statement:
    """`transition` (its text begins with `{chosen}`) after the shared lock-and-filter CTE of `guard`,
    batches taken in `order_column` order."""
    return _with(transition, guard, queue_column, order_column)


def with_parts(statement: Statement, package: str, *names: str) -> Statement:
    """`statement` with the fragments `sql/<name>.sql` of `package` bound as its parts `{name}`: SQL
    that several statements of one dialect share, written once."""
    return replace(statement, parts=(*statement.parts, *sql_parts(package, *names)))
