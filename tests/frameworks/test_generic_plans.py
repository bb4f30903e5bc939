"""The lists (leases, dead jobs) read only the rows they return, as the monitor plans them.

The monitor's session plans every statement generically (plan_cache_mode = force_generic_plan:
monitor/collect.py), so a LIMIT is a parameter the planner estimates at a tenth of the rows. A list
that picks its rows' keys from an index and then joins back to the job table was planned there as a
Hash Join over every active (or failed) job: 190 ms per poll at 5M rows on pg-boss, invisible to
EXPLAIN with the values filled in (a custom plan). Checked on the framework's own schema (installed
by its own tool) holding a few thousand jobs of every state (the planner then sees many rows behind
each list's LIMIT), with the advised indexes, planned the way the monitor plans: prepared, generic.
"""

from __future__ import annotations

import json
import re
from typing import Any

import psycopg
import pytest
from psycopg import sql

from .cases import follow_index_advice
from .fills import fill
from .harness import create_runs_table
from .test_plans import FRAMEWORKS, big, model_of

# as many queues as the poll benchmark: with pg-boss's partition per queue, the planner's choice of
# join depends on it (a hash join over ten partitions looks cheaper than ten probes of each)
QUEUES = [f"q{i}" for i in range(10)]


def generic_plan(conn: psycopg.Connection, statement: Any, params: dict[str, Any]) -> dict[str, Any]:
    """EXPLAIN of the plan the monitor's session runs: prepared by psycopg, planned generically."""
    query = statement.compose().as_string(conn)
    with conn.transaction(force_rollback=True):
        conn.execute("SET LOCAL plan_cache_mode = force_generic_plan")
        conn.execute("SET LOCAL enable_bitmapscan = off")
        names: list[str] = []

        def placeholder(name: str) -> str:
            if name not in names:
                names.append(name)
            return f"${names.index(name) + 1}"

        text = re.sub(r"%\((\w+)\)s", lambda m: placeholder(m.group(1)), query).replace("%%", "%")
        conn.execute(sql.SQL("PREPARE pgq_list AS {}").format(sql.SQL(text)))  # type: ignore[arg-type]
        try:
            args = sql.SQL(", ").join(sql.Literal(params[n]) for n in names)
            row = conn.execute(sql.SQL("EXPLAIN (FORMAT JSON) EXECUTE pgq_list ({})").format(args)).fetchone()
        finally:
            conn.execute("DEALLOCATE pgq_list")
    assert row is not None
    return (row[0] if isinstance(row[0], list) else json.loads(row[0]))[0]["Plan"]


def joins_over_job_rows(node: dict[str, Any]) -> list[str]:
    """Hash or merge joins with a job relation beneath: they read every row their key range holds."""
    found: list[str] = []

    def relations(n: dict[str, Any]) -> set[str]:
        out = {str(n["Relation Name"])} if "Relation Name" in n else set()
        for child in n.get("Plans", ()):
            out |= relations(child)
        return out

    def walk(n: dict[str, Any]) -> None:
        if n.get("Node Type") in ("Hash Join", "Merge Join"):
            found.extend(f"{n['Node Type']} over {r}" for r in sorted(relations(n)) if big(r))
        for child in n.get("Plans", ()):
            walk(child)

    walk(node)
    return found


@pytest.mark.parametrize(
    ("driver", "kind", "sample_id"), [p.values for p in FRAMEWORKS], ids=[p.id for p in FRAMEWORKS]
)
def test_lists_reach_their_rows_one_by_one_under_generic_plans(
    driver: Any, kind: str, sample_id: Any, empty_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver.version()
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(QUEUES))  # pg-boss's install creates each queue
    create_runs_table(empty_dsn)
    driver(empty_dsn).install()
    fill(empty_dsn, kind, 20_000, QUEUES, layout=getattr(driver, "layout", None))
    follow_index_advice(empty_dsn, kind)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        model = model_of(conn, kind)
        params = {"rows": 50, "cap1": 1001}
        lists = [s for s in (model.leases, model.dead) if s is not None]
        lists += [p.statement for p in model.passes if p.statement.indexed]  # the poll's one walk
        assert lists, kind
        for statement in lists:
            assert joins_over_job_rows(generic_plan(conn, statement, params)) == [], statement.name
