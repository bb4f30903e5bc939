"""procrastinate 3.10 with its own CLI, client and worker (tests/frameworks/procrastinate_client.py).
The dialect is told the test workers' stalled threshold, as an operator would (PGQ_TOP_STALLED_AFTER)."""

from frameworks.cases import framework_case
from frameworks.procrastinate_client import STALLED_S, Procrastinate

from pgq_tui.dialects.procrastinate import ProcrastinateDialect

CASES = [
    framework_case(
        Procrastinate,
        "procrastinate",
        "public",
        "procrastinate_jobs",
        dialects=lambda: (ProcrastinateDialect(stalled_after_s=STALLED_S),),
    ),
    framework_case(
        Procrastinate,
        "procrastinate",
        "public",
        "procrastinate_jobs",
        dialects=lambda: (ProcrastinateDialect(stalled_after_s=STALLED_S),),
        advised=False,
    ),
]
