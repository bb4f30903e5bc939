"""`tags:` on Oban's `tags` text[] (its v14 schema, rows as Oban.insert_all writes them), and refused
with one line on a kind without tags (#32)."""

from __future__ import annotations

import json

import pytest
from dialect_cases.oban import ERROR, connect, fetch, install_schema

from pgq_tui.cli import main

SCHEMA = "private"
# Oban.insert_all with `tags: [...]` (Oban.Job's tags field, a text[])
INSERT = """
INSERT INTO oban_jobs (state, queue, worker, args, max_attempts, tags)
SELECT 'available', %(queue)s, 'MyApp.Worker', jsonb_build_object('n', n), 1, %(tags)s::text[]
FROM generate_series(1, %(count)s) n
"""


@pytest.fixture
def oban(empty_dsn: str):
    install_schema(empty_dsn, SCHEMA)
    with connect(empty_dsn, SCHEMA) as conn:
        yield empty_dsn, conn


def test_oban_tags_term(oban, capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    dsn, conn = oban
    conn.execute(INSERT, {"queue": "default", "tags": ["billing", "eu"], "count": 7})
    conn.execute(INSERT, {"queue": "default", "tags": ["mail"], "count": 4})
    conn.execute(INSERT, {"queue": "default", "tags": [], "count": 2})
    pins = ["--dsn", dsn, "--kind", "oban"]

    def matched(where: str) -> int:
        assert main(["jobs", *pins, "--where", where, "--json"]) == 0
        return int(json.loads(capsys.readouterr().out)["matched"])

    assert matched("tags:billing") == 7 and matched("tags:eu tags:billing") == 7 and matched("tags:mail") == 4
    assert matched("tags:eu tags:mail") == 0
    conn.execute(ERROR, (fetch(conn, "default", 13),))  # max_attempts 1: discarded
    log = tmp_path / "audit.jsonl"
    assert main(["retry", *pins, "--where", "tags:mail state:dead", "--yes", "--audit-log", str(log)]) == 0
    rows = conn.execute("SELECT tags, state::text, count(*) FROM oban_jobs GROUP BY 1, 2").fetchall()
    assert sorted(rows) == sorted(
        [(["billing", "eu"], "discarded", 7), (["mail"], "available", 4), ([], "discarded", 2)]
    )


def test_tags_on_a_kind_without_tags_is_one_line(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "--dsn", dsn, "--where", "tags:billing"]) == 2
    err = capsys.readouterr().err
    assert "'tags:billing'" in err and "no tags" in err and err.count("\n") == 1
