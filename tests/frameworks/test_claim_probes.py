"""The claim-cost probe of each framework on a table of a long-lived install: it walks the framework's
own claim index, never the table, and reads a few pages whatever the table's size.

The table is the one benchmarks/bench_framework_poll.py measures (schema by the framework's own tool,
rows by SQL in the shape a long-lived install accumulates: 90% finished or dead, 6% ready, 2%
scheduled, 1-2% running, over 10 queues), at 20,000 rows, analyzed; sequential scans stay allowed,
so the plan is the one the planner really picks (the conformance suite checks the probes on a small
table with sequential scans off).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import psycopg
import pytest

from pgq_tui.detection import find_queues
from pgq_tui.monitor.probe import EXPLAIN

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from bench_framework_poll import FRAMEWORKS, build, drop

ROWS = 20_000
# The claim index each framework's own fetch walks (a pg-boss queue's partition has its own copy).
CLAIM_INDEX = {
    "graphile-worker": "jobs_main_index",
    "pg-boss": "_i5",
    "procrastinate": "procrastinate_jobs_priority_idx_v1",
    "pgqueuer": "pgqueuer_ep_prio_id_idx",
}
# Tables of a handful of rows a probe may read whole: Graphile's tasks (the queue's task id) and its
# named queues (whether the job's queue is locked), as its own get_job does.
SMALL = {"graphile-worker": {"_private_tasks", "_private_job_queues"}}


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(n for child in plan.get("Plans", ()) for n in _nodes(child))]


@pytest.mark.parametrize("kind", sorted(FRAMEWORKS))
def test_claim_probe_walks_the_claim_index_on_a_big_table(
    server_dsn: str, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver = FRAMEWORKS[kind][0]
    driver.version()  # type: ignore[attr-defined]  # skips (or fails in CI) without the client
    # the queues the rows use (pg-boss creates one partition per queue at install), as the benchmark
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(f"q{i}" for i in range(10)))
    dsn = build(server_dsn, kind, ROWS)
    try:
        (target,) = find_queues(dsn, kind=kind)
        probe = target.model.claim_probe
        assert probe is not None
        with psycopg.connect(dsn, autocommit=True) as conn:
            for queue in ("q0", "q7"):
                (doc,) = conn.execute(EXPLAIN + probe.compose(), {"queue": queue}).fetchone()
                plan = doc[0]["Plan"]
                nodes = _nodes(plan)
                indexes = {n["Index Name"] for n in nodes if "Index Name" in n}
                assert plan["Actual Rows"] == 1, (queue, plan)
                scanned = {n["Relation Name"] for n in nodes if n["Node Type"] == "Seq Scan"}
                assert scanned <= SMALL.get(kind, set()), (queue, plan)
                assert any(CLAIM_INDEX[kind] in name for name in indexes), (queue, indexes)
                buffers = plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
                assert buffers < 50, (queue, buffers, plan)  # a few pages, not the table's hundreds
    finally:
        drop(server_dsn, dsn)
