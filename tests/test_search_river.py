"""Search and a bulk retry on River's stock schema (River's own migrator and Python client), #32."""

from __future__ import annotations

import json

import psycopg
import pytest
from dialect_cases.river import claim, insert, install_schema

from pgq_tui.cli import main

SCHEMA = "river_jobs"
# River's errored transition for a job out of attempts, with an error text of the test's choosing
DISCARD = """
UPDATE river_job SET state = 'discarded', finalized_at = now(),
    errors = array_append(errors, jsonb_build_object('at', now(), 'attempt', attempt, 'error', %s::text,
                                                     'trace', ''))
WHERE id = ANY(%s) AND state = 'running'
"""


@pytest.fixture
def river(empty_dsn: str):
    install_schema(empty_dsn, SCHEMA, 6)
    with psycopg.connect(empty_dsn, autocommit=True, options=f"-c search_path={SCHEMA}") as conn:
        yield empty_dsn, conn


def test_river_search_and_retry_where(river, capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    dsn, conn = river
    insert(dsn, SCHEMA, "payments", 30, max_attempts=1)
    refused = claim(conn, "payments", 20)
    card = claim(conn, "payments", 6)
    conn.execute(DISCARD, ("dial tcp: connection refused", refused))
    conn.execute(DISCARD, ("invalid card", card))
    pins = ["--dsn", dsn, "--kind", "river"]
    where = 'error:~"Connection Refused" state:dead'
    assert main(["jobs", *pins, "--where", where, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["matched"] == 20 and doc["complete"] and {j["state"] for j in doc["jobs"]} == {"dead"}
    assert main(["jobs", *pins, "--where", "args.n:3 state:dead"]) == 0
    # River's (state, queue, ...) index holds the 26 dead jobs apart: all of them, through it
    out = capsys.readouterr().out
    assert "all 26 dead jobs searched (through index river_job_" in out and "); 1 match" in out
    assert main(["jobs", *pins, "--where", "state:ready"]) == 0
    assert "4 match" in capsys.readouterr().out
    log = tmp_path / "audit.jsonl"
    assert main(["retry", *pins, "--where", where, "--yes", "--batch", "8", "--audit-log", str(log)]) == 0
    out = capsys.readouterr().out
    assert "retried 20 of 20 dead jobs" in out
    states = dict(conn.execute("SELECT state::text, count(*) FROM river_job GROUP BY 1").fetchall())
    assert states == {"available": 24, "discarded": 6}  # the card errors stay dead
    back = conn.execute(
        "SELECT count(*) FROM river_job WHERE state = 'available' AND id = ANY(%s)", (refused,)
    )
    assert back.fetchone() == (20,)
    assert [json.loads(line).get("changed") for line in log.read_text().splitlines()] == [None, 20]


def test_river_tags_term_and_a_bulk_retry_of_one_tag(
    river, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    """`tags:` on River's `tags` column, jobs tagged by River's own insert client (InsertOpts.tags)."""
    dsn, conn = river
    insert(dsn, SCHEMA, "payments", 12, max_attempts=1, tags=["billing", "europe"])
    insert(dsn, SCHEMA, "payments", 5, max_attempts=1, tags=["emails"])
    insert(dsn, SCHEMA, "payments", 3, max_attempts=1)
    pins = ["--dsn", dsn, "--kind", "river"]

    def matched(where: str) -> int:
        assert main(["jobs", *pins, "--where", where, "--json"]) == 0
        return int(json.loads(capsys.readouterr().out)["matched"])

    assert matched("tags:billing") == 12 and matched("tags:billing tags:europe") == 12
    assert (
        matched("tags:emails") == 5 and matched("tags:europe tags:emails") == 0 and matched("tags:none") == 0
    )
    conn.execute(DISCARD, ("dial tcp: connection refused", claim(conn, "payments", 20)))
    assert matched("tags:billing state:dead") == 12
    log = tmp_path / "audit.jsonl"
    assert main(["retry", *pins, "--where", "tags:billing state:dead", "--yes", "--audit-log", str(log)]) == 0
    assert "retried 12 of 12 dead jobs" in capsys.readouterr().out
    rows = conn.execute(
        "SELECT tags, state::text, count(*) FROM river_job GROUP BY 1, 2 ORDER BY 3"
    ).fetchall()
    assert sorted(rows) == sorted(
        [([], "discarded", 3), (["emails"], "discarded", 5), (["billing", "europe"], "available", 12)]
    )
