"""pgqueuer 1.6 with its own installer, client and worker (tests/frameworks/pgqueuer_client.py). The
dialect is told the test workers' heartbeat timeout, as an operator would (PGQ_TOP_STALLED_AFTER)."""

from frameworks.cases import framework_case
from frameworks.pgqueuer_client import HEARTBEAT_TIMEOUT_S, Pgqueuer

from dialect_cases import backdate_column
from pgq_tui.dialects.pgqueuer import PgqueuerDialect

EXECUTE_AFTER = backdate_column("public", "pgqueuer", "execute_after")
CASES = [
    framework_case(
        Pgqueuer,
        "pgqueuer",
        "public",
        "pgqueuer",
        dialects=lambda: (PgqueuerDialect(heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S),),
        backdate=EXECUTE_AFTER,
    ),
    framework_case(
        Pgqueuer,
        "pgqueuer",
        "public",
        "pgqueuer",
        dialects=lambda: (PgqueuerDialect(heartbeat_timeout_s=HEARTBEAT_TIMEOUT_S),),
        advised=False,
        backdate=EXECUTE_AFTER,
    ),
]
