"""pg-boss 10 (Node 20) and 12 (Node 22) with their own Node clients and workers
(tests/frameworks/pgboss_client.py)."""

from frameworks.cases import framework_case
from frameworks.pgboss_client import PgBoss, PgBoss12

CASES = [
    framework_case(PgBoss, "pg-boss", "pgboss", "job"),
    framework_case(PgBoss12, "pg-boss", "pgboss", "job", case_id="pg-boss-12"),
]
