"""Graphile Worker 0.17 (Node 20) and 0.18 (Node 22) with their own Node clients and workers
(tests/frameworks/graphile_client.py)."""

from frameworks.cases import framework_case
from frameworks.graphile_client import Graphile, Graphile18

from dialect_cases import backdate_column

RUN_AT = backdate_column("graphile_worker", "_private_jobs", "run_at")

CASES = [
    framework_case(Graphile, "graphile-worker", "graphile_worker", "_private_jobs", backdate=RUN_AT),
    framework_case(
        Graphile18,
        "graphile-worker",
        "graphile_worker",
        "_private_jobs",
        case_id="graphile-worker-18",
        backdate=RUN_AT,
    ),
    framework_case(
        Graphile, "graphile-worker", "graphile_worker", "_private_jobs", advised=False, backdate=RUN_AT
    ),
]
