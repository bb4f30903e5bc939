"""pgmq's statements, composed over the queue tables found at detection.

pgmq keeps one table per queue (`q_<name>`, with its archive `a_<name>`), so each statement is one
SQL file (`sql/<name>.sql`) in sections: `-- @branch` (one copy per queue, joined by UNION ALL),
`-- @cte` (one copy per queue, joined by commas), `-- @result` (one copy per queue, UNION ALL) and
`-- @outer` (the statement around them, with `@branch@`, `@cte@`, `@result@` where they go; without
it the branches are the statement). In a per-queue section `{q}`, `{a}` (the queue's tables),
`{qname}` (its name, a literal), `{qtext}`/`{atext}` (the tables' names as literals), `{qreg}` (the
queue table's quoted name as a literal, for regclass casts) and the
per-queue CTE names `{c}`, `{d}`, `{w}`, `{ca}`, `{da}` become numbered placeholders, bound by
Statement.compose() as identifiers and literals, never formatted in. The text before the first
section is the file's documentation and is not sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from psycopg import sql

from pgq_tui.dialects.contract import PREVIEW_COLUMNS, Statement
from pgq_tui.dialects.kit import Sql
from pgq_tui.dialects.sqlfiles import sql_file, sql_part

_SECTION = re.compile(r"^-- @(outer|branch|cte|result)[ \t]*$", re.M)
_JOIN = {"branch": "\nUNION ALL\n", "cte": ",\n", "result": "\nUNION ALL\n"}
_IDENTS = ("q", "a", "c", "d", "w", "ca", "da")
_LITERALS = ("qname", "qtext", "atext", "qreg")


@dataclass(frozen=True)
class QueueTables:
    """One pgmq queue: its name (the table's suffix), its tables and the SQL fragments its columns
    allow (constant SQL chosen by the dialect from the table's shape, e.g. `m.headers` or
    `NULL::jsonb`)."""

    name: str
    schema: str
    queue_table: str
    archive_table: str
    fragments: Mapping[str, str]


def sections(text: str) -> dict[str, str]:
    """A statement file's sections by name (the text before the first one is documentation)."""
    parts = _SECTION.split(text)
    return {parts[i]: parts[i + 1].strip() for i in range(1, len(parts) - 1, 2)}


def _per_queue(text: str, i: int, queue: QueueTables) -> str:
    for key, value in queue.fragments.items():
        text = text.replace("{" + key + "}", value)
    for key in (*_IDENTS, *_LITERALS):
        text = text.replace("{" + key + "}", "{" + f"{key}_{i}" + "}")
    return text


def statement(
    package: str,
    name: str,
    queues: Sequence[QueueTables],
    columns: Sequence[str],
    constants: Mapping[str, str],
) -> Statement:
    """`sql/<name>.sql` composed over `queues` (at least one), `constants` replaced everywhere
    (numbers the dialect parsed, as SQL literals)."""
    text = sql_file(package, name)
    for key, value in constants.items():
        text = text.replace("{" + key + "}", value)
    parts = sections(text)
    joined = {
        part: _JOIN[part].join(_per_queue(parts[part], i, q) for i, q in enumerate(queues))
        for part in _JOIN
        if part in parts
    }
    body = parts.get("outer", "@branch@")
    for part, value in joined.items():
        body = body.replace(f"@{part}@", value)
    idents: dict[str, tuple[str, ...]] = {}
    literals: dict[str, Sequence[Any]] = {}
    for i, q in enumerate(queues):
        idents |= {f"q_{i}": (q.schema, q.queue_table), f"a_{i}": (q.schema, q.archive_table)}
        idents |= {f"{cte}_{i}": (f"{cte}{i}",) for cte in ("c", "d", "w", "ca", "da")}
        literals |= {
            f"qname_{i}": (q.name,),
            f"qtext_{i}": (f"{q.schema}.{q.queue_table}",),
            f"atext_{i}": (f"{q.schema}.{q.archive_table}",),
            f"qreg_{i}": (sql.Identifier(q.schema, q.queue_table).as_string(None),),
        }
    used = set(re.findall(r"\{(\w+)\}", body))
    return Statement.of(
        f"pgmq.{name}",
        body,
        columns,
        literals={k: v for k, v in literals.items() if k in used},
        **{k: v for k, v in idents.items() if k in used},
    )


def preview(
    package: str,
    queues: Sequence[QueueTables],
    constants: Mapping[str, str],
    guard: str,
    *,
    archived: bool = False,
) -> Statement:
    """An action's preview, `sql/preview.sql` over `queues`: the chosen messages that the guard
    `sql/guard_<guard>.sql` admits, plus the archived ones chosen by id when `archived`. The guard (the
    same one its action's statement checks) and the constants are bound as Statement parts, `archived`
    as a literal."""
    st = statement(package, "preview", queues, PREVIEW_COLUMNS, constants)
    parts = (*constants.items(), ("guard", sql_part(package, f"guard_{guard}")))
    literals = (*st.literals, ("archived", (archived,)))
    name = f"pgmq.preview_{guard}_or_archived" if archived else f"pgmq.preview_{guard}"
    return replace(st, name=name, literals=literals, parts=parts)


def search_source(
    package: str, queues: Sequence[QueueTables]
) -> tuple[str, tuple[tuple[str, tuple[str, ...]], ...], tuple[tuple[str, Any], ...]]:
    """`sql/search_source.sql`'s branch over `queues` (UNION ALL), as SearchColumns wants it: the
    text with numbered `{q_i}`, `{a_i}`, `{qname_i}` placeholders, their identifiers and literals."""
    branch = sections(sql_file(package, "search_source"))["branch"]
    text = "\nUNION ALL\n".join(_per_queue(branch, i, q) for i, q in enumerate(queues))
    idents = tuple(
        pair
        for i, q in enumerate(queues)
        for pair in ((f"q_{i}", (q.schema, q.queue_table)), (f"a_{i}", (q.schema, q.archive_table)))
    )
    literals = tuple((f"qname_{i}", q.name) for i, q in enumerate(queues))
    return text, idents, literals


@dataclass(frozen=True)
class QueueSql(Sql):
    """The kit's statement factory for pgmq: `s(name, columns)` is `statement()` over the queues."""

    queues: Sequence[QueueTables] = ()
    constants: Mapping[str, str] = field(default_factory=dict)

    def __call__(self, name: str, columns: Sequence[str]) -> Statement:
        return statement(self.package, name, self.queues, columns, self.constants)
