"""pg-boss 10 with its own Node client and worker (tests/frameworks/pgboss_client.py)."""

from frameworks.cases import framework_case
from frameworks.pgboss_client import PgBoss

CASES = [
    framework_case(PgBoss, "pg-boss", "pgboss", "job"),
    framework_case(PgBoss, "pg-boss", "pgboss", "job", advised=False),
]
