"""The engine's side of the dialect contract: the catalog read every dialect's detection answers
from (one statement, then max() of each version table; on a connection the caller holds), and the
standard parameters every contract Statement runs with (a statement uses the ones it needs; psycopg
ignores the rest). Dialects themselves never import this module: they answer, the engine asks."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.dialects.catalog import CATALOG_SQL, Catalog, catalog_from_row, marker_param
from pgq_tui.dialects.contract import ATTEMPTS_SHOWN, LATENCY_NEWEST, Dialect
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
    "shown": ATTEMPTS_SHOWN,
    "newest": LATENCY_NEWEST,
}


def read_catalog(conn: psycopg.Connection, dialects: Sequence[Dialect]) -> Catalog:
    """One statement: every relation, enum, function and version marker the dialects look at."""
    with conn.cursor(row_factory=dict_row) as cur:
        cur.execute(CATALOG_SQL, {"markers": marker_param(markers(dialects))})
        row = cur.fetchone()
        assert row is not None
        found = row["markers"] if isinstance(row["markers"], list) else json.loads(row["markers"])
        for m in found:
            m["value"] = _marker_value(cur, m) if m["readable"] else None
    return catalog_from_row({**row, "markers": found})


def _marker_value(cur: psycopg.Cursor[dict[str, Any]], m: Mapping[str, Any]) -> str | None:
    """max(column)::text of one version-marker table (a migrations or version table: a few rows)."""
    query = sql.SQL("SELECT max({col})::text AS v FROM {table}").format(
        col=sql.Identifier(m["column"]), table=sql.Identifier(m["schema"], m["table"])
    )
    params: tuple[Any, ...] = ()
    if m.get("filter_column"):
        query += sql.SQL(" WHERE {} = %s").format(sql.Identifier(m["filter_column"]))
        params = (m["filter_value"],)
    cur.execute(query, params)
    got = cur.fetchone()
    return None if got is None else got["v"]
