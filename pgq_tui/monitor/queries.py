"""The monitor's server-wide SQL, loaded from `pgq_tui/db/sql/*.sql`: one file per concern, one more
per version band where the catalogs differ (`name_pre_170000.sql` serves servers older than 17.0). Where
only an expression differs, the statement is written once and names it as a `{part}`: the fragment file
`part.sql`, banded the same way (`part_pre_180000.sql`), bound by psycopg.sql.

The server-wide panels (server, table health, vacuum, sessions) run these files as they are; the
queue's own reads come from its dialect (pgq-top's own table: `dialects/pgq/sql/`). Values stay
parameters. An operator can read exactly what pgq-top runs against their database in that folder.
"""

from __future__ import annotations

import re
import string
from functools import cache
from importlib import resources

from psycopg import sql

from pgq_tui.dialects.sqlfiles import body

_BAND = re.compile(r"^(?P<name>.+)_pre_(?P<num>\d{6})\.sql$")


@cache
def _files() -> dict[str, str]:
    folder = resources.files("pgq_tui.db").joinpath("sql")
    return {f.name: f.read_text(encoding="utf-8") for f in folder.iterdir() if f.name.endswith(".sql")}


def filename(name: str, version_num: int) -> str:
    """The file serving `name` on a server of `version_num`: the lowest `_pre_N` band with
    version_num < N, else the unbanded file.

    >>> filename("vacuum_progress", 160004), filename("vacuum_progress", 170000)
    ('vacuum_progress_pre_170000.sql', 'vacuum_progress.sql')
    """
    bands = sorted(int(m["num"]) for f in _files() if (m := _BAND.match(f)) and m["name"] == name)
    for limit in bands:
        if version_num < limit:
            return f"{name}_pre_{limit}.sql"
    if f"{name}.sql" not in _files():
        raise KeyError(f"no SQL file for {name!r}")
    return f"{name}.sql"


def text(name: str, version_num: int) -> str:
    return _files()[filename(name, version_num)]


@cache
def server_query(name: str, version_num: int) -> sql.Composed:
    """A server-wide panel's statement for this server version (no object names to bind): each
    `{part}` in its text is the fragment `part.sql` of this server's band, e.g. an expression on a
    column that only newer servers have."""
    statement = text(name, version_num)
    fields = {field for _, field, _, _ in string.Formatter().parse(statement) if field}
    return sql.SQL(statement).format(**{f: sql.SQL(body(text(f, version_num))) for f in fields})

