"""Running a dialect's questions: the one catalog read, and any contract Statement with the standard
parameters filled in (a statement uses the ones it needs; psycopg ignores the rest)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg.rows import dict_row

from pgq_tui.dialects.catalog import CATALOG_SQL, Catalog, catalog_from_row, marker_query, with_markers
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
    "before": None,
}


def read_catalog(conn: psycopg.Connection, dialects: Sequence[Dialect]) -> Catalog:
    """The catalog in one statement, then the dialects' version markers in one more (if any exist)."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(CATALOG_SQL, {})  # (empty params: the `%%` in it is an escaped %)
        row = cur.fetchone()
        assert row is not None
        catalog = catalog_from_row(row)
        query = marker_query(catalog, markers(dialects))
        if query is None:
            return catalog
        cur.execute(query)
        return with_markers(catalog, cur.fetchall())


def run(conn: psycopg.Connection, statement: Statement, **params: Any) -> list[dict[str, Any]]:
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(statement.compose(), {**DEFAULTS, **params})
        return cur.fetchall() if cur.description else []
