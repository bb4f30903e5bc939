"""Graphile Worker 0.17 with its own Node client and worker (tests/frameworks/graphile_client.py)."""

from frameworks.cases import framework_case
from frameworks.graphile_client import Graphile

CASES = [
    framework_case(Graphile, "graphile-worker", "graphile_worker", "_private_jobs"),
    framework_case(Graphile, "graphile-worker", "graphile_worker", "_private_jobs", advised=False),
]
