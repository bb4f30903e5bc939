"""pgq-top's own table through the contract.

The monitor's reads are the files in `sql/` beside this module (one per concern, where an operator reads
what pgq-top runs on its own table), wrapped here only to rename their columns into the canonical shapes.
The action writes carry the same guards as `pgq_tui/jobtable/statements.py`, generalised to the
contract's parameters: `ids` NULL means every job the guard admits, `queue` NULL every queue, at most
`batch` rows per run, only leases expired before `before` (when the operator's plan was made).
"""

from __future__ import annotations

from pgq_tui.dialects.sqlfiles import sql_file
from pgq_tui.jobtable import statements as queue_statements

# Fragments several statements share (the recursive skip-scans over the partial indexes): a file
# says `{running_queues}` where sql/running_queues.sql goes, as it says `{jobs}` for the table.
FRAGMENTS = ("running_queues", "dead_queues")


def monitor_sql(name: str) -> str:
    """sql/<name>.sql with the shared fragments it names put in (comments are left as they are, and
    a fragment's header comment is left out)."""
    bodies = {
        f"{{{f}}}": "\n".join(x for x in sql_file(__package__, f).splitlines() if not x.startswith("--"))
        for f in FRAGMENTS
    }
    out = []
    for line in sql_file(__package__, name).splitlines():
        if not line.lstrip().startswith("--"):
            for placeholder, body in bodies.items():
                line = line.replace(placeholder, body)
        out.append(line)
    return "\n".join(out)


# The claim-cost probe: the claim's candidate scan, LIMIT 1, no FOR UPDATE (sql/claim_probe.sql).
CLAIM_PROBE = monitor_sql("claim_probe")

COUNT_PENDING = f"""
SELECT p.queue, p.ready, p.scheduled, p.oldest_ready_age_s FROM (
{monitor_sql("queue_pending")}
) p"""

COUNT_STATES = f"""
SELECT s.queue, s.running, s.expired AS stuck, s.failed AS dead FROM (
{monitor_sql("queue_states")}
) s"""

COUNT_DONE = f"""
SELECT d.queue, d.n AS done FROM (
{monitor_sql("queue_done")}
) d"""

# Holder liveness: pgq-top's workers set application_name to their worker id (locked_by), so a
# holder with no such session in this database is gone.
LEASES = f"""
SELECT l.id, l.queue, l.locked_by AS holder,
       CASE WHEN l.holder_connected THEN 'alive' WHEN l.locked_by IS NULL THEN 'unknown' ELSE 'gone' END
           AS liveness,
       l.holder_pid, l.attempts, l.max_attempts, NULL::timestamptz AS started_at,
       l.locked_until AS expires_at, l.seconds_left, l.expired AS stuck, l.payload_preview,
       l.heartbeat_age
FROM (
{monitor_sql("leases")}
) l"""

DEAD = f"""
SELECT d.id, d.queue, d.attempts, d.max_attempts, d.finished_at, d.last_error AS error, d.payload_preview
FROM (
{monitor_sql("dead_jobs")}
) d"""

JOB = """
SELECT j.id, j.queue,
       CASE j.status
            WHEN 'pending' THEN CASE WHEN j.run_at <= now() THEN 'ready' ELSE 'scheduled' END
            WHEN 'running' THEN CASE WHEN j.locked_until < now() THEN 'stuck' ELSE 'running' END
            WHEN 'failed' THEN 'dead'
            ELSE j.status END AS state,
       j.status AS native_state, j.attempts, j.max_attempts, j.run_at, j.created_at,
       NULL::timestamptz AS started_at, j.finished_at, j.locked_by AS holder, j.last_error AS error,
       j.payload::text AS payload,
       jsonb_build_object('priority', j.priority, 'locked_until', j.locked_until,
                          'heartbeat_at', j.heartbeat_at) AS details
FROM {jobs} j WHERE j.id = %(id)s::bigint
"""

ATTEMPTS = monitor_sql("attempts")

THROUGHPUT = monitor_sql("throughput")
# A counters table made before it counted the operator's removals (until `pgq-top init` adds them).
THROUGHPUT_UNCOUNTED = THROUGHPUT.replace("sum(s.discarded)::bigint", "0::bigint").replace(
    "sum(s.pruned)::bigint", "0::bigint"
)

_CHOSEN = """(%(ids)s::bigint[] IS NULL OR j.id = ANY(%(ids)s::bigint[]))
      AND (%(queue)s::text IS NULL OR j.queue = %(queue)s::text)"""

# Holders are matched like the monitor does (leases.sql): a live session of this database whose
# application_name is the worker id written in locked_by.
_HOLDERS = """
holders AS MATERIALIZED (
    SELECT application_name, min(pid) AS pid FROM pg_stat_activity
    WHERE datname = current_database() AND application_name <> ''
    GROUP BY application_name
)"""

_STUCK_FROM = f"""
FROM {{jobs}} j LEFT JOIN holders h ON h.application_name = j.locked_by
WHERE j.status = 'running' AND j.locked_until < now()
  AND {_CHOSEN}
"""
_ALIVE = """count(*) AS eligible, count(h.pid) AS alive,
       (array_agg(DISTINCT j.locked_by || ' (pid ' || h.pid || ')')
            FILTER (WHERE h.pid IS NOT NULL))[1:5] AS holders"""

PREVIEW_STUCK = f"WITH {_HOLDERS}\nSELECT {_ALIVE}{_STUCK_FROM}"

# The reaper sends jobs out of attempts to the dead letters: the plan says how many.
PREVIEW_REAP = f"""WITH {_HOLDERS}
SELECT {_ALIVE},
       count(*) FILTER (WHERE j.attempts >= j.max_attempts) AS exhausted{_STUCK_FROM}"""

PREVIEW_DEAD = f"""
SELECT count(*) AS eligible, 0::bigint AS alive
FROM {{jobs}} j
WHERE j.status = 'failed'
  AND {_CHOSEN}
"""

# Leases that had expired when the action was planned (%(before)s, NULL: no bound): a lease that
# expires while the confirmation is open is left for the next pass.
_EXPIRED = """j.status = 'running' AND j.locked_until < now()
      AND j.locked_until < coalesce(%(before)s::timestamptz, 'infinity')"""

# Idle workers LISTEN on the table's channel: requeue and retry notify it of the jobs they make
# ready, in the same statement. The channel name is bound as a literal ({channel}, from the table).
_WAKE = queue_statements.wake("moved", "{channel}")
_READ_WOKEN = queue_statements.READ_WOKEN

# Operator requeue of stuck jobs: back to pending (the attempt stays counted); the guard is
# re-checked on the locked row, and rows a worker holds right now are skipped.
_REQUEUED = "'requeued by operator after lease expired (held by ' || coalesce(j.locked_by, '?') || ')'"


def requeue(*, logged: bool = True) -> str:
    """`logged`: the ended attempt appended to attempt_log (a table without it: REQUEUE_UNLOGGED)."""
    log = ",\n        " + queue_statements.log_attempt("'requeued'", _REQUEUED) if logged else ""
    return f"""
WITH chosen AS (
    SELECT j.id FROM {{jobs}} j
    WHERE {_EXPIRED}
      AND {_CHOSEN}
    ORDER BY j.locked_until LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
), moved AS (
    UPDATE {{jobs}} j
    SET status = 'pending', locked_until = NULL, locked_by = NULL,
        last_error = {_REQUEUED}{log}
    FROM chosen
    WHERE j.id = chosen.id AND {_EXPIRED}
    RETURNING j.id, j.queue, j.run_at
), {_WAKE}
SELECT id FROM moved {_READ_WOKEN}
"""


# The reaper's pass is the queue's own statement (the worker pool's reaper runs it too): every lease
# expired before %(before)s, back to pending or dead when out of attempts, counted; idle workers of
# the queues it made ready are notified.
REQUEUE, REQUEUE_UNLOGGED = requeue(), requeue(logged=False)
REAP = queue_statements.reap_waking("{channel}")
REAP_UNLOGGED = queue_statements.reap_waking("{channel}", logged=False)

# The dead letters an operator's retry or discard takes: by id, at most `batch`, none a writer holds.
_CHOSEN_DEAD = f"""chosen AS (
    SELECT j.id FROM {{jobs}} j
    WHERE j.status = 'failed'
      AND {_CHOSEN}
    ORDER BY j.id LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
)"""

# Dead letters back to work with a fresh budget of attempts; the last error is kept for reference.
RETRY = f"""
WITH {_CHOSEN_DEAD}, moved AS (
    UPDATE {{jobs}} j
    SET status = 'pending', attempts = 0, run_at = now(), finished_at = NULL
    FROM chosen
    WHERE j.id = chosen.id AND j.status = 'failed'
    RETURNING j.id, j.queue, j.run_at
), {_WAKE}
SELECT id FROM moved {_READ_WOKEN}
"""

DISCARD = f"""
WITH {_CHOSEN_DEAD}
DELETE FROM {{jobs}} j USING chosen
WHERE j.id = chosen.id AND j.status = 'failed'
RETURNING j.id
"""

# The same, counted in the counters table's `discarded` in the same statement (a counters table
# made by pgq-top 0.x before it had the column gets the plain one): the monitors, this one or any
# other, never take the discarded rows for completions or for a foreign writer's deletes.
DISCARD_COUNTED = f"""
WITH {_CHOSEN_DEAD}, gone AS (
    DELETE FROM {{jobs}} j USING chosen
    WHERE j.id = chosen.id AND j.status = 'failed'
    RETURNING j.id, j.queue
), counted AS ({queue_statements.count_removed("gone", "discarded")})
SELECT id FROM gone
"""


# Pausing a queue: the queue library's own statements (jobtable/statements.py), the channel bound as
# a literal and the pauser named by the session (its application_name is 'pgq-top pause').
PAUSE = queue_statements.PAUSE.replace(
    "%(by)s", "current_user || ' (' || current_setting('application_name') || ')'"
)
RESUME = queue_statements.RESUME.replace("%(channel)s", "{channel}")
PAUSE_STATE = "SELECT p.queue, p.paused_at FROM {pauses} p"
# known: the queue has a job waiting, running or dead (each by its partial index)
PAUSE_PREVIEW = """
SELECT EXISTS (SELECT 1 FROM {jobs} j WHERE j.status = 'pending' AND j.queue = %(queue)s)
       OR EXISTS (SELECT 1 FROM {jobs} j WHERE j.status = 'running' AND j.queue = %(queue)s)
       OR EXISTS (SELECT 1 FROM {jobs} j WHERE j.status = 'failed' AND j.queue = %(queue)s) AS known,
       EXISTS (SELECT 1 FROM {pauses} p WHERE p.queue = %(queue)s) AS paused
"""
