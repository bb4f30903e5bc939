"""pg-boss 10 (Node 20), 11 and 12 (Node 22) with their own Node clients and workers
(tests/frameworks/pgboss_client.py; 12's slow job stuck by its timeout, to keep each populate short;
11 has no heartbeats)."""

from frameworks.cases import framework_case
from frameworks.pgboss_client import PgBoss, PgBoss11, PgBoss12ByTimeout

from dialect_cases import backdate_column

START_AFTER = backdate_column("pgboss", "job", "start_after")
CASES = [
    framework_case(PgBoss, "pg-boss", "pgboss", "job", backdate=START_AFTER),
    framework_case(PgBoss11, "pg-boss", "pgboss", "job", case_id="pg-boss-11", backdate=START_AFTER),
    framework_case(
        PgBoss11, "pg-boss", "pgboss", "job", case_id="pg-boss-11", advised=False, backdate=START_AFTER
    ),
    framework_case(PgBoss12ByTimeout, "pg-boss", "pgboss", "job", case_id="pg-boss-12", backdate=START_AFTER),
    framework_case(PgBoss, "pg-boss", "pgboss", "job", advised=False, backdate=START_AFTER),
]
