"""pg-boss 10 (Node 20) and 12 (Node 22) with their own Node clients and workers
(tests/frameworks/pgboss_client.py; 12's slow job stuck by its timeout, to keep each populate short)."""

from frameworks.cases import framework_case
from frameworks.pgboss_client import PgBoss, PgBoss12ByTimeout

CASES = [
    framework_case(PgBoss, "pg-boss", "pgboss", "job"),
    framework_case(PgBoss12ByTimeout, "pg-boss", "pgboss", "job", case_id="pg-boss-12"),
    framework_case(PgBoss, "pg-boss", "pgboss", "job", advised=False),
]
