"""Every statement the queue runs, in one place. Object names are composed with psycopg.sql;
values are always parameters.

The write statements carry their own preconditions (fencing): a job is completed, failed, extended
or released only while it is still `running` under the same attempt and worker that claimed it, and
the reaper and requeue touch only leases that have really expired. A race with a live worker then
resolves in the database, never by overwriting.

Counters (`<table>_stats`) are bumped in the same statement as the change they count, the operator's
removals too (discard, prune: `discarded`, `pruned`), so that no reader of the counters takes them for
completions or for a foreign writer's deletes, whichever process made them.

Statements that make jobs ready now (enqueue, retry, requeue) NOTIFY the table's channel
(`schema.channel()`, passed as `%(channel)s`) in the same statement, hence the same transaction:
listeners hear of the jobs only once they are committed, and not at all for jobs scheduled later.
"""

from __future__ import annotations

from psycopg import sql

from pgq_tui.jobtable.schema import names

# Spread concurrent writers over a few counter rows per second and queue.
STATS_SHARDS = 8

JOB_COLUMNS = (
    "id, queue, payload, status, priority, run_at, attempts, max_attempts, "
    "locked_until, locked_by, created_at"
)
# What a claim returns of each job it leased, in this order (Job.claimed() reads them by position):
# JOB_COLUMNS but for those the claim itself set to values its caller knows (status 'running',
# locked_by the worker, queue the one it claimed from), so no row carries them back.
CLAIMED_COLUMNS = (
    "id",
    "payload",
    "attempts",
    "max_attempts",
    "priority",
    "run_at",
    "locked_until",
    "created_at",
)


def wake(source: str, channel: str = "%(channel)s") -> str:
    """A CTE `woken` that notifies the channel once per queue of `source` with a job ready now.

    PostgreSQL runs a plain CTE only if the query reads it, so the final SELECT must read `woken`
    (READ_WOKEN). The payload is the queue name (cut to stay under NOTIFY's 8,000-byte payload
    limit); duplicates in one transaction are delivered once. `channel` is the SQL of the channel
    name: a parameter here, a bound literal in the pgq dialect's action statements.
    """
    return f"""woken AS (
    SELECT pg_notify({channel}, left(r.queue, {WAKE_QUEUE_CHARS}))
    FROM (SELECT DISTINCT queue FROM {source} WHERE run_at <= now()) r
)"""


WAKE_QUEUE_CHARS = 1000  # a notification carries at most this much of the queue's name
READ_WOKEN = "CROSS JOIN (SELECT count(*) FROM woken) w"


SECOND = "date_trunc('second', clock_timestamp())"
# A removal's row is stamped with its exact time, not its second: the monitor matches it with the
# polls around it (a burst of 5,000 discards must fall on the right side of a poll). Readers that sum
# per second (the history) see a row of zeros in their columns.
EXACT_TIME = "clock_timestamp()"


def _bump(source: str, bucket: str = SECOND, **counts: str) -> str:
    """One upsert of counters (column=aggregate), fed by the rows of CTE `source` (each with a `queue`).

    One upsert per statement: two in the same statement could hit the same counter row twice.
    """
    columns = ", ".join(counts)
    updates = ", ".join(f"{c} = s.{c} + excluded.{c}" for c in counts)
    return f"""
    INSERT INTO {{stats}} AS s (queue, bucket, shard, {columns})
    SELECT queue, {bucket}, mod(pg_backend_pid(), {STATS_SHARDS}),
           {", ".join(counts.values())}
    FROM {source} GROUP BY queue
    ON CONFLICT (bucket, queue, shard) DO UPDATE SET {updates}"""


ENQUEUE = f"""
WITH ins AS (
    INSERT INTO {{jobs}} (queue, payload, run_at, priority, max_attempts)
    SELECT %(queue)s, p, coalesce(%(run_at)s, now()), %(priority)s, %(max_attempts)s
    FROM unnest(%(payloads)s::jsonb[]) WITH ORDINALITY AS u(p, n)
    ORDER BY n
    RETURNING id, queue, run_at
), counted AS ({_bump("ins", enqueued="count(*)")}),
{wake("ins")}
SELECT id FROM ins {READ_WOKEN} ORDER BY id
"""

# Bulk enqueue by COPY: ids are reserved first (so they come back in payload order), rows are copied
# in, then the counter is bumped once, all in one transaction.
RESERVE_IDS = """
SELECT nextval(pg_get_serial_sequence(%(table)s, 'id')) AS id FROM generate_series(1, %(n)s)
"""

COPY_JOBS = "COPY {jobs} (id, queue, payload, run_at, priority, max_attempts) FROM STDIN (FORMAT BINARY)"
COPY_TYPES = ("int8", "text", "jsonb", "timestamptz", "int2", "int4")

COUNT_ENQUEUED = f"""
WITH ins AS (SELECT %(queue)s::text AS queue, %(n)s::bigint AS n, %(run_at)s::timestamptz AS run_at),
counted AS ({_bump("ins", enqueued="sum(n)")}),
{wake("ins")}
SELECT count(*) AS woken FROM woken
"""

# The seed's claim: the oldest, highest-priority ready jobs, locked without waiting on rows another
# claimer holds, leased and counted as an attempt, in one statement. A paused queue (a row in
# `<table>_pauses`) is not claimed: the NOT EXISTS is a one-time filter (one primary-key probe per
# claim), so a pause takes effect at every worker's next claim after it commits.
# Its LIMIT is a literal, bound by compose(limit=): a LIMIT parameter is planned as 10% of the table,
# which made the prepared statement's generic plan a hash join over a sequential scan, so PostgreSQL
# planned it anew at every execution instead (the combined statement below: 0.3-0.5 ms of server CPU
# per batch, about a third of it). With the number in the text the generic plan is the custom one,
# and it is kept after five executions.
CLAIM = f"""
WITH c AS (
    SELECT id FROM {{jobs}}
    WHERE status = 'pending' AND queue = %(queue)s AND run_at <= now()
      AND NOT EXISTS (SELECT 1 FROM {{pauses}} p WHERE p.queue = %(queue)s)
    ORDER BY priority DESC, run_at, id
    LIMIT {{limit}}
    FOR UPDATE SKIP LOCKED
)
UPDATE {{jobs}} j
SET status = 'running', attempts = j.attempts + 1, started_at = now(),
    locked_until = now() + make_interval(secs => %(lease)s), locked_by = %(worker)s
FROM c WHERE j.id = c.id
RETURNING {", ".join("j." + c for c in CLAIMED_COLUMNS)}
"""

# A table made before `<table>_pauses` existed (a worker of this version on an older init): the
# same claim without the pause check, until `pgq-top init` creates the table.
CLAIM_UNPAUSABLE = CLAIM.replace(
    "\n      AND NOT EXISTS (SELECT 1 FROM {pauses} p WHERE p.queue = %(queue)s)", ""
)

_FENCE = """
    fence AS (SELECT * FROM unnest(%(ids)s::bigint[], %(attempts)s::int[]) AS f(id, attempts))"""
_FENCED = (
    "j.id = fence.id AND j.attempts = fence.attempts AND j.status = 'running' AND j.locked_by = %(worker)s"
)

_DONE_DELETE = f"DELETE FROM {{jobs}} j USING fence WHERE {_FENCED} RETURNING j.id, j.queue"
_DONE_KEEP = f"""
    UPDATE {{jobs}} j SET status = 'done', finished_at = now(), locked_until = NULL
    FROM fence WHERE {_FENCED} RETURNING j.id, j.queue
"""

COMPLETE_DELETE = f"""
WITH {_FENCE},
done AS ({_DONE_DELETE}),
counted AS ({_bump("done", completed="count(*)")})
SELECT id FROM done
"""

COMPLETE_KEEP = f"""
WITH {_FENCE},
done AS ({_DONE_KEEP}),
counted AS ({_bump("done", completed="count(*)")})
SELECT id FROM done
"""

# Each attempt's end, newest first, in `attempt_log` (the job detail's history): the attempt, when,
# the worker that held it and the error's first line, appended by the statement that ends the attempt
# (fail, reap) and capped to the last ATTEMPT_LOG_KEPT entries, so a row never grows without bound.
ATTEMPT_LOG_KEPT = 10
ATTEMPT_ERROR_CHARS = 500


def log_attempt(outcome: str, error: str) -> str:
    """The SET clause appending one attempt to `attempt_log` (on the row `j`, before its lease is
    cleared: `j.locked_by` is the holder); `outcome` and `error` are SQL expressions."""
    entry = (
        f"jsonb_build_object('attempt', j.attempts, 'at', now(), 'outcome', {outcome},"
        f" 'worker', j.locked_by, 'error', left(split_part({error}, E'\\n', 1), {ATTEMPT_ERROR_CHARS}))"
    )
    return (
        f"attempt_log = jsonb_path_query_array(jsonb_build_array({entry}) || j.attempt_log,"
        f" '$[0 to {ATTEMPT_LOG_KEPT - 1}]')"
    )


_OUT_OF_ATTEMPTS = "CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'retried' END"

FAIL = f"""
WITH {_FENCE},
failed AS (
    UPDATE {{jobs}} j
    SET status = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'pending' END,
        run_at = CASE WHEN j.attempts >= j.max_attempts THEN j.run_at
                      ELSE now() + make_interval(secs => %(delay)s) END,
        finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
        last_error = %(error)s, locked_until = NULL, locked_by = NULL,
        {log_attempt(_OUT_OF_ATTEMPTS, "%(error)s")}
    FROM fence WHERE {_FENCED}
    RETURNING j.id, j.queue, j.status
),
counted AS ({_bump("failed", failed="count(*)", dead="count(*) FILTER (WHERE status = 'failed')")})
SELECT status FROM failed
"""


def _complete_then_claim(finish: str, claim: str) -> str:
    """The worker's steady state in one statement, hence one round trip and one commit: complete the
    previous batch (`finish`: COMPLETE_*'s fenced DELETE or UPDATE, with the same counter bump) and
    then claim the next one (`claim`: CLAIM or CLAIM_UNPAUSABLE, unchanged but for the gate).

    "Then" is enforced, not left to the executor: the claim's scan is gated on a one-time read of
    `counted`, so every row lock the completion takes (its only waits: the claim skips locked rows)
    is taken before the claim locks anything. A transaction that waits never holds a claim's locks,
    which is what keeps two workers' statements from deadlocking each other (a claim can keep the
    lock of a row it skipped after re-checking it, until its transaction ends).

    A completion the fence refuses (a lease reaped and claimed by another worker meanwhile)
    completes fewer rows and the claim goes ahead; a statement that fails rolls back both halves, so
    no claimed row is left leased to a worker that never saw it.

    Rows: `completed` on every row, then the claimed job's CLAIMED_COLUMNS; a claim that found
    nothing yields one row whose job columns are NULL. `completed` is NULL when the completion
    accepted as many rows as the fence holds ids (every job it was given: the usual case, which then
    costs no array per row to send and decode), else the ids it accepted.
    """
    gate = "WHERE status = 'pending'"
    lock = "    FOR UPDATE SKIP LOCKED\n)\n"
    body = claim.strip().removeprefix("WITH c AS (")
    assert claim.strip() != body and body.count(gate) == 1 and body.count(lock) == 1
    gated = "WHERE (SELECT count(*) FROM counted) >= 0 AND status = 'pending'"
    scan, update = body.replace(gate, gated).split(lock)
    return f"""
WITH {_FENCE},
done AS ({finish}),
counted AS ({_bump("done", completed="count(*)")}
    RETURNING 1
),
c AS ({scan}{lock.rstrip()},
claimed AS ({update.strip()})
SELECT (SELECT CASE WHEN count(*) = cardinality(%(ids)s::bigint[]) THEN NULL
                    ELSE coalesce(array_agg(id), '{{{{}}}}') END FROM done) AS completed, claimed.*
FROM (SELECT 1) one LEFT JOIN claimed ON true
"""


COMPLETE_DELETE_CLAIM = _complete_then_claim(_DONE_DELETE, CLAIM)
COMPLETE_DELETE_CLAIM_UNPAUSABLE = _complete_then_claim(_DONE_DELETE, CLAIM_UNPAUSABLE)
COMPLETE_KEEP_CLAIM = _complete_then_claim(_DONE_KEEP, CLAIM)
COMPLETE_KEEP_CLAIM_UNPAUSABLE = _complete_then_claim(_DONE_KEEP, CLAIM_UNPAUSABLE)

# Also the worker's heartbeat: one statement renews every lease it holds.
EXTEND = f"""
WITH {_FENCE}
UPDATE {{jobs}} j SET locked_until = now() + make_interval(secs => %(lease)s), heartbeat_at = now()
FROM fence WHERE {_FENCED}
RETURNING j.id, j.locked_until
"""

# Graceful shutdown hands a claimed-but-unstarted job back without burning its attempt.
RELEASE = f"""
WITH {_FENCE}
UPDATE {{jobs}} j SET status = 'pending', attempts = j.attempts - 1, locked_until = NULL, locked_by = NULL
FROM fence WHERE {_FENCED}
RETURNING j.id
"""


# Expired leases, oldest first, in batches; rows a worker is finishing right now are skipped, and the
# condition is re-checked on the locked row. A job that has used all its attempts goes to the dead
# letters: a payload that crashes its worker every time must not loop forever. Counted like FAIL:
# every reaped lease is a failed attempt, and the exhausted ones are dead.
# %(before)s (NULL: no bound) limits a reap to leases that had expired by then: an operator's reap
# touches only what its confirmation counted (no claim or extend can set a lease in the past).
def _reap(logged: bool = True) -> str:
    """The reaper's CTEs; `logged`: each reaped lease appended to attempt_log (a table `pgq-top init`
    has not upgraded yet has none: the pgq dialect reads it as it is)."""
    log = (
        ",\n        "
        + log_attempt(
            "'lease expired'", "'lease expired while held by ' || coalesce(j.locked_by, 'unknown worker')"
        )
        if logged
        else ""
    )
    return f"""
WITH expired AS (
    SELECT id FROM {{jobs}}
    WHERE status = 'running' AND locked_until < now()
      AND locked_until < coalesce(%(before)s::timestamptz, 'infinity')
    ORDER BY locked_until
    LIMIT %(batch)s
    FOR UPDATE SKIP LOCKED
),
reaped AS (
    UPDATE {{jobs}} j
    SET status = CASE WHEN j.attempts >= j.max_attempts THEN 'failed' ELSE 'pending' END,
        finished_at = CASE WHEN j.attempts >= j.max_attempts THEN now() END,
        last_error = 'lease expired while held by ' || coalesce(j.locked_by, 'unknown worker'),
        locked_until = NULL, locked_by = NULL{log}
    FROM expired
    WHERE j.id = expired.id AND j.status = 'running' AND j.locked_until < now()
      AND j.locked_until < coalesce(%(before)s::timestamptz, 'infinity')
    RETURNING j.id, j.queue, j.status, j.run_at
),
counted AS ({_bump("reaped", failed="count(*)", dead="count(*) FILTER (WHERE status = 'failed')")})"""


REAP = f"""{_reap()}
SELECT id, status FROM reaped
"""

# The pool's reaper: the same pass, and in the same statement when the next lease falls due (seconds
# from now; NULL: no job is running), so an idle pool sleeps until then instead of reaping every few
# seconds. Its one extra row has a NULL id.
REAP_NEXT = f"""{_reap()}
SELECT id, status, NULL::float8 AS next_due_s FROM reaped
UNION ALL
SELECT NULL, NULL, extract(epoch FROM min(locked_until) - now())::float8
FROM {{jobs}} WHERE status = 'running' AND locked_until >= now()
"""


def reap_waking(channel: str, *, logged: bool = True) -> str:
    """The reaper's pass that also wakes idle workers of the queues it made ready, in the same
    statement (an operator's reap; the worker pool's reaper wakes them after its batches instead)."""
    ready = "(SELECT queue, run_at FROM reaped WHERE status = 'pending') p"
    return f"""{_reap(logged)},
{wake(ready, channel)}
SELECT id, status FROM reaped {READ_WOKEN}
"""


# Operator requeue of chosen stuck jobs: same guard as the reaper, but always back to pending.
REQUEUE = f"""
WITH chosen AS (
    SELECT id FROM {{jobs}}
    WHERE id = ANY(%(ids)s::bigint[]) AND status = 'running' AND locked_until < now()
    FOR UPDATE SKIP LOCKED
), moved AS (
    UPDATE {{jobs}} j
    SET status = 'pending', locked_until = NULL, locked_by = NULL,
        last_error = 'requeued by operator after lease expired (held by ' || coalesce(j.locked_by, '?') || ')'
    FROM chosen
    WHERE j.id = chosen.id AND j.status = 'running' AND j.locked_until < now()
    RETURNING j.id, j.queue, j.run_at
), {wake("moved")}
SELECT id FROM moved {READ_WOKEN}
"""

# Dead letters back to work with a fresh budget of attempts; the last error is kept for reference.
RETRY = f"""
WITH moved AS (
    UPDATE {{jobs}}
    SET status = 'pending', attempts = 0, run_at = now(), finished_at = NULL
    WHERE id = ANY(%(ids)s::bigint[]) AND status = 'failed'
    RETURNING id, queue, run_at
), {wake("moved")}
SELECT id FROM moved {READ_WOKEN}
"""

# Jobs that other statements made ready without a notification (the reaper's, a released batch's):
# a wake-up sent after they committed.
WAKE = """
SELECT pg_notify(%(channel)s, left(q, %(chars)s)) FROM unnest(%(queues)s::text[]) AS q
"""

# How long until the earliest pending job of these queues is due (<= 0: one is ready now; NULL: none
# pending); a paused queue is left out (its worker waits for the resume's notification, or its poll).
# The claim index is ordered by priority first, so a skip-scan visits each distinct
# priority once and takes its earliest run_at: a few index probes however many jobs are scheduled.
SECONDS_UNTIL_DUE = """
WITH RECURSIVE p AS (
    SELECT q.queue, (SELECT j.priority FROM {jobs} j WHERE j.status = 'pending' AND j.queue = q.queue
                     ORDER BY j.priority DESC LIMIT 1) AS priority
    FROM unnest(%(queues)s::text[]) AS q(queue)
    WHERE NOT EXISTS (SELECT 1 FROM {pauses} x WHERE x.queue = q.queue)
    UNION ALL
    SELECT p.queue, (SELECT j.priority FROM {jobs} j
                     WHERE j.status = 'pending' AND j.queue = p.queue AND j.priority < p.priority
                     ORDER BY j.priority DESC LIMIT 1)
    FROM p WHERE p.priority IS NOT NULL
)
SELECT extract(epoch FROM min((SELECT j.run_at FROM {jobs} j
                               WHERE j.status = 'pending' AND j.queue = p.queue AND j.priority = p.priority
                               ORDER BY j.run_at LIMIT 1)) - now())::float8 AS seconds
FROM p WHERE p.priority IS NOT NULL
"""


SECONDS_UNTIL_DUE_UNPAUSABLE = SECONDS_UNTIL_DUE.replace(
    "\n    WHERE NOT EXISTS (SELECT 1 FROM {pauses} x WHERE x.queue = q.queue)", ""
)

# Pausing a queue: a row in `<table>_pauses` (its primary key is the guard: a queue already paused
# keeps its row and time, nothing is returned). Workers stop claiming it at their next claim.
PAUSE = """
INSERT INTO {pauses} (queue, paused_at, paused_by)
VALUES (%(queue)s, now(), %(by)s)
ON CONFLICT (queue) DO NOTHING
RETURNING queue
"""
# Resuming: the row deleted, and the queue's idle workers woken in the same statement (they claim at
# once instead of at their next safety poll). Guard: the queue is paused.
RESUME = """
WITH resumed AS (DELETE FROM {pauses} p WHERE p.queue = %(queue)s RETURNING p.queue),
woken AS MATERIALIZED (SELECT r.queue, pg_notify(%(channel)s, left(r.queue, 1000)) FROM resumed r)
SELECT w.queue FROM woken w
"""
PAUSED = "SELECT queue, paused_at, paused_by FROM {pauses} ORDER BY queue"


def count_removed(source: str, column: str) -> str:
    """The counter upsert of an operator's removal: the rows of CTE `source` in `column` (discarded,
    pruned), stamped with the exact time (also the pgq dialect's discard action)."""
    return _bump(source, EXACT_TIME, **{column: "count(*)"})


def counted_removal(delete: str, column: str) -> str:
    """`delete` (a DELETE ... RETURNING id, queue) with its rows counted in `column` of the counters
    table, in the same statement; returns the ids."""
    return f"""
WITH gone AS ({delete.strip()}),
counted AS ({count_removed("gone", column)})
SELECT id FROM gone
"""


# The same deletes, uncounted: for a counters table made before it had `discarded` and `pruned`
# (the queue falls back to them until `pgq-top init` adds the columns).
DISCARD_UNCOUNTED = """
DELETE FROM {jobs} WHERE id = ANY(%(ids)s::bigint[]) AND status = 'failed' RETURNING id
"""
PRUNE_UNCOUNTED = """
DELETE FROM {jobs} WHERE id IN (
    SELECT id FROM {jobs}
    WHERE status = 'done' AND finished_at < now() - make_interval(secs => %(older_than)s)
    ORDER BY finished_at
    LIMIT %(batch)s
)
"""

DISCARD = counted_removal(
    "DELETE FROM {jobs} WHERE id = ANY(%(ids)s::bigint[]) AND status = 'failed' RETURNING id, queue",
    "discarded",
)

PRUNE = counted_removal(
    """DELETE FROM {jobs} WHERE id IN (
    SELECT id FROM {jobs}
    WHERE status = 'done' AND finished_at < now() - make_interval(secs => %(older_than)s)
    ORDER BY finished_at
    LIMIT %(batch)s
) RETURNING id, queue""",
    "pruned",
)

PRUNE_STATS = """
DELETE FROM {stats} WHERE bucket < now() - make_interval(secs => %(older_than)s)
"""

GET_JOB = f"SELECT {JOB_COLUMNS}, finished_at, last_error, heartbeat_at FROM {{jobs}} WHERE id = %(id)s"


def compose(statement: str, table: str, schema: str, *, limit: int | None = None) -> sql.Composed:
    """Bind object names into a statement, and a claim's `limit` (a literal, see CLAIM); values stay
    parameters."""
    bound: dict[str, sql.Composable] = {
        k: v for k, v in names(table, schema).items() if k in ("jobs", "stats", "pauses")
    }
    if limit is not None:
        bound["limit"] = sql.Literal(int(limit))
    return sql.SQL(statement).format(**bound)
