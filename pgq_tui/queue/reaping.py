"""When the pool's reaper runs next: when the next running job's lease falls due (read in the reap
statement itself), at least `reap_interval` apart and at most one lease apart (a job claimed right
after a pass expires no sooner than that). An idle pool so costs a reap every lease instead of every
few seconds, and a crashed worker's job is still reaped the moment its lease expires. The counters
table's old buckets (kept an hour) are pruned at most once a minute."""

from __future__ import annotations

PRUNE_EVERY_S = 60.0
LATE_S = 0.05  # past the due time, so the lease has expired when the pass runs


def next_pass_in(reaped: int, next_due_s: float | None, interval: float, lease: float) -> float:
    """Seconds to wait before the next pass.

    >>> next_pass_in(0, None, 5.0, 30.0)      # nothing runs: one lease
    30.0
    >>> next_pass_in(0, 12.0, 5.0, 30.0)      # a lease expires in 12 s
    12.05
    >>> next_pass_in(0, 0.5, 5.0, 30.0), next_pass_in(3, 20.0, 5.0, 30.0)  # never sooner than the interval
    (5.0, 5.0)
    >>> next_pass_in(0, None, 5.0, 2.0)       # a lease shorter than the interval
    5.0
    """
    if reaped:
        return interval  # more may be expiring together: look again soon
    due = lease if next_due_s is None else min(lease, next_due_s + LATE_S)
    return max(interval, due)
