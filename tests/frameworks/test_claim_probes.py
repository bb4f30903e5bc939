"""The claim-cost probe of each framework on a table of a long-lived install: it walks the framework's
own claim index, never the job table, and reads a few pages.

The framework's schema by its own tool, then 20,000 rows in the shape a long-lived install
accumulates (fills.py: 90% finished or dead, 6% ready, 2% scheduled, 1-2% running, over 10 queues),
the advised indexes, analyzed. Sequential scans stay allowed, so the plan is the one the planner
really picks (the conformance suite checks every dialect's probe on a small table with them off).
"""

from __future__ import annotations

from typing import Any

import psycopg
import pytest

from pgq_tui.monitor.probe import EXPLAIN

from .cases import follow_index_advice
from .fills import fill
from .harness import create_runs_table
from .test_plans import FRAMEWORKS, big, model_of

QUEUES = [f"q{i}" for i in range(10)]
# The claim index each framework's own fetch walks (each pg-boss queue's partition has its own copy).
CLAIM_INDEX = {
    "graphile-worker": "jobs_main_index",
    "pg-boss": "_i5",
    "pg-boss-12": "_i11",  # job_common_i11 (name, priority DESC, created_on, start_after)
    "procrastinate": "procrastinate_jobs_priority_idx_v1",
    "pgqueuer": "pgqueuer_ep_prio_id_idx",
    "river": "river_job_prioritized_fetching_index",
    "dbos": "idx_workflow_status_in_flight_v2",  # DBOS 3.4 start_queued_workflows
    "good-job": "index_good_job_jobs_for_candidate_lookup",  # good_job 4.19: priority, created_at
    "que": "que_poll_idx",  # Que 2.4 poll_jobs (lib/que/poller.rb)
}
# pg-boss 11 and 12.12 keep every queue's jobs in one shared job_common, and their fetch index job_i5
# holds no state: a queue's ready rows are spread over the table's pages, so the probe's pages depend
# on the visibility map (index-only, a few pages; after a VACUUM that could not mark the pages all
# visible, a bitmap heap scan of ~100). test_plans.py checks that it walks job_i5 on them.
PROBED = [p for p in FRAMEWORKS if p.id not in ("pg-boss-11", "pg-boss-12.12")]


def _nodes(plan: dict[str, Any]) -> list[dict[str, Any]]:
    return [plan, *(n for child in plan.get("Plans", ()) for n in _nodes(child))]


@pytest.mark.parametrize(
    ("driver", "kind", "sample_id"), [p.values for p in PROBED], ids=[p.id for p in PROBED]
)
def test_claim_probe_walks_the_claim_index_on_a_big_table(
    driver: Any, kind: str, sample_id: Any, empty_dsn: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    driver.version()  # skips (or fails in CI) without the client
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(QUEUES))  # pg-boss's install creates each queue
    create_runs_table(empty_dsn)
    driver(empty_dsn).install()
    fill(empty_dsn, kind, 20_000, QUEUES, layout=getattr(driver, "layout", None))
    follow_index_advice(empty_dsn, kind)
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute("VACUUM ANALYZE")
        probe = model_of(conn, kind).claim_probe
        assert probe is not None
        for queue in ("q0", "q7"):
            (doc,) = conn.execute(EXPLAIN + probe.compose(), {"queue": queue}).fetchone()
            plan = doc[0]["Plan"]
            nodes = _nodes(plan)
            assert plan["Actual Rows"] == 1, (queue, plan)
            # a queue or task list may be read whole (a row per queue), never the jobs
            assert not [n for n in nodes if n["Node Type"] == "Seq Scan" and big(n["Relation Name"])], plan
            indexes = {n["Index Name"] for n in nodes if "Index Name" in n}
            assert any(CLAIM_INDEX[getattr(driver, "layout", None) or kind] in name for name in indexes), (
                queue,
                indexes,
            )
            buffers = plan.get("Shared Hit Blocks", 0) + plan.get("Shared Read Blocks", 0)
            assert buffers < 50, (queue, buffers, plan)  # a few pages, not the table's hundreds
