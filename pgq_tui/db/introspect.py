"""Running a dialect's questions: the one catalog read, and any contract Statement with the standard
parameters filled in (a statement uses the ones it needs; psycopg ignores the rest)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.dialects.catalog import CATALOG_SQL, Catalog, catalog_from_row, marker_param
from pgq_tui.dialects.contract import Dialect, Statement
from pgq_tui.dialects.detect import markers

DEFAULTS: Mapping[str, Any] = {
    "cap1": None,
    "rows": 50,
    "id": None,
    "ids": None,
    "queue": None,
    "batch": 1000,
    "since": None,
    "until": None,
}


def read_catalog(conn: psycopg.Connection, dialects: Sequence[Dialect]) -> Catalog:
    """One statement: every relation, enum, function and version marker the dialects look at."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(CATALOG_SQL, {"markers": marker_param(markers(dialects))})
        row = cur.fetchone()
    assert row is not None
    return catalog_from_row(row)


def run(conn: psycopg.Connection, statement: Statement, **params: Any) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(statement.compose(), {**DEFAULTS, **params})
        return cur.fetchall() if cur.description else []
