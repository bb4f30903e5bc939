"""The monitor's statements stay O(active jobs): on a table that is mostly done rows, none of them
scans the jobs table sequentially, and every read of it goes through an index."""

from __future__ import annotations

import json
from typing import Any

import psycopg
import pytest
from monitor_support import pgq_monitor
from psycopg import sql

from pgq_tui.dialects.introspect import DEFAULTS

# The pgq dialect's statements a poll runs (its counts with the poll's cap: the background exact
# count runs the same ones with no cap, reading every row of the states it counts, on its own
# connection and statement_timeout).
STATEMENTS = (
    "pgq.count_pending",
    "pgq.count_states",
    "pgq.count_done",
    "pgq.activity",
    "pgq.leases",
    "pgq.dead",
    "pgq.claim_probe",
)


def nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    found = [plan]
    for child in plan.get("Plans", ()):
        found += nodes(child)
    return found


@pytest.fixture
def big(dsn: str, sql: psycopg.Connection) -> None:
    """20,000 done rows, a few hundred active ones over 5 queues, analyzed."""
    sql.execute(
        "INSERT INTO jobs (queue, status, run_at, locked_until, locked_by, finished_at) "
        "SELECT 'q' || g % 5, s, now() - interval '1 minute', "
        "CASE WHEN s = 'running' THEN now() + interval '1 minute' END, "
        "CASE WHEN s = 'running' THEN 'w' END, CASE WHEN s IN ('done', 'failed') THEN now() END "
        "FROM generate_series(1, 20300) g, "
        "LATERAL (SELECT CASE WHEN g <= 20000 THEN 'done' "
        "ELSE (ARRAY['pending', 'running', 'failed'])[g % 3 + 1] END AS s) x"
    )
    sql.execute("VACUUM ANALYZE jobs")


@pytest.mark.parametrize("name", STATEMENTS)
def test_no_sequential_scan_of_the_jobs_table(dsn: str, big: None, name: str) -> None:
    with pgq_monitor(dsn, count_cap=50) as monitor:
        monitor.collect()  # opens the connection with the monitor's session settings
        conn = monitor._connection()
        model = monitor.model
        polled = (*model.counts, model.activity, model.leases, model.dead, model.claim_probe)
        (statement,) = [s for s in polled if s is not None and s.name == name]
        query = statement.compose()
        params = {**DEFAULTS, "cap1": 51, "rows": 50, "after": 20_000, "max_span": 200_000, "gap_rows": 1000}
        params["queue"] = "q1"  # claim_probe
        params |= {"lo": [5, 100], "hi": [9, 120]}  # the previous window's gaps, looked up again
        (row,) = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + query, params).fetchall()
    plan = row[0] if isinstance(row[0], list) else json.loads(row[0])
    scans = [n for n in nodes(plan[0]["Plan"]) if n.get("Relation Name") == "jobs"]
    assert scans, name
    assert {n["Node Type"] for n in scans} <= {"Index Scan", "Index Only Scan"}, (name, scans)
    assert {n["Index Name"] for n in scans} <= {
        "jobs_claim_idx",
        "jobs_lease_idx",
        "jobs_dead_idx",
        "jobs_done_idx",
        "jobs_pkey",  # activity: ids above the previous poll's max(id)
    }
