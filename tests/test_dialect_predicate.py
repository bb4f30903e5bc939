"""Partial-index predicates as the server prints them, read by pgq_tui.dialects.predicate."""

from __future__ import annotations

import doctest

import psycopg
import pytest

from pgq_tui.dialects import predicate
from pgq_tui.dialects.predicate import implied_by


def test_doctests() -> None:
    result = doctest.testmod(predicate)
    assert result.attempted > 5 and result.failed == 0


PRINTED = "SELECT pg_get_expr(indpred, indrelid) FROM pg_index WHERE indrelid = 't'::regclass"

# (index predicate as written, the query's status values, other query conditions, served?)
CASES = [
    ("status = 'done'", ["done"], [], True),
    ("status <> 'done'", ["done"], [], False),
    ("status != 'pending'", ["done"], [], False),
    ("NOT (status = 'done')", ["done"], [], False),
    ("status IN ('a', 'b')", ["a"], [], True),
    ("status IN ('a', 'b')", ["a", "b"], [], True),
    ("status = 'a'", ["a", "b"], [], False),
    ("status = ANY ('{a,\"b c\"}')", ["b c"], [], True),
    ("status = 'a' OR status = 'b'", ["a"], [], False),
    ("status = 'a' AND locked_at IS NOT NULL", ["a"], [], False),
    ("status = 'a' AND locked_at IS NOT NULL", ["a"], ["locked_at IS NOT NULL"], True),
    ("status IS NOT NULL", ["a"], [], True),
    ("vstatus = 'a'", [], [], False),
    ("\"Odd Col\" = 'it''s'", [], [], False),
    ("kind = 'x' AND status = 'a'", ["a"], [], False),
    ("lower(status) = 'a'", ["a"], [], False),
    ("status = 'done' AND status <> 'done'", ["done"], [], False),
    ("estate = 'active'", [], [], False),
]


@pytest.mark.parametrize(("where", "values", "also", "served"), CASES)
def test_predicates_as_the_server_prints_them(
    empty_dsn: str, where: str, values: list[str], also: list[str], served: bool
) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("CREATE TYPE st AS ENUM ('active', 'done')")
        conn.execute(
            "CREATE TABLE t (status text, vstatus varchar(20), estate st, locked_at timestamptz,"
            ' kind text, "Odd Col" text)'
        )
        conn.execute(f"CREATE INDEX ON t (locked_at) WHERE {where}")
        printed = conn.execute(PRINTED).fetchone()[0]
    column = next(c for c in ("vstatus", "estate", '"Odd Col"', "status") if c in where)
    name = column.strip('"')
    assert implied_by(printed, {name: values} if values else {}, also) is served, printed


@pytest.mark.parametrize(
    ("where", "column", "values", "served"),
    [
        ("vstatus = 'a'", "vstatus", ["a"], True),
        ("vstatus IN ('a', 'b')", "vstatus", ["b"], True),
        ("estate = 'active'", "estate", ["active"], True),
        ("estate IN ('active', 'done')", "estate", ["done"], True),
        ("estate <> 'done'", "estate", ["done"], False),
        ("\"Odd Col\" = 'it''s'", "Odd Col", ["it's"], True),
        ("kind = 'x' AND status = 'a'", "status", ["a"], False),
    ],
)
def test_casts_enums_and_quoted_names(
    empty_dsn: str, where: str, column: str, values: list[str], served: bool
) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("CREATE TYPE st AS ENUM ('active', 'done')")
        conn.execute(
            "CREATE TABLE t (status text, vstatus varchar(20), estate st, locked_at timestamptz,"
            ' kind text, "Odd Col" text)'
        )
        conn.execute(f"CREATE INDEX ON t (locked_at) WHERE {where}")
        printed = conn.execute(PRINTED).fetchone()[0]
    assert implied_by(printed, {column: values}) is served, printed
