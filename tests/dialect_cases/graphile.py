"""Graphile Worker 0.17 (Node 20) and 0.18 (Node 22) with their own Node clients and workers
(tests/frameworks/graphile_client.py)."""

from frameworks.cases import framework_case
from frameworks.graphile_client import Graphile, Graphile18

CASES = [
    framework_case(Graphile, "graphile-worker", "graphile_worker", "_private_jobs"),
    framework_case(
        Graphile18, "graphile-worker", "graphile_worker", "_private_jobs", case_id="graphile-worker-18"
    ),
    framework_case(Graphile, "graphile-worker", "graphile_worker", "_private_jobs", advised=False),
]
