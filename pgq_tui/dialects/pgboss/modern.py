"""pg-boss 11 and 12 (schema 25-46: pg-boss 11.0 to 12.38), the layout current releases run on Node 22.

Read from the installed packages' own plans and migrations (`getConstructionPlans`, migrationStore of
11.1.1, 12.12.0 and 12.38.0; the tags between, from pg-boss's history):
- one `job` table, list-partitioned by queue name: a shared DEFAULT partition `job_common` holds every
  queue created without `partition: true`; such a queue gets its own table (`queue.table_name`);
- the timeout is `expire_seconds` (int), no `expire_in` interval; no archive table (completed jobs
  are deleted after `deletion_seconds`);
- heartbeats (schema 30, 12.12): a job sent with `heartbeatSeconds` has `heartbeat_seconds` set and
  its worker refreshes `heartbeat_on`; the supervisor fails a job whose heartbeat is older than that
  (failJobsByHeartbeat) as well as one past its timeout (failJobsByTimeout); before 30 only the
  timeout, and a holder's liveness is unknown;
- flows (schema 31, 12.19): a `blocked` job waits for the jobs it depends on and is not fetchable;
- indexes: the fetch index job_i5 (name, start_after) WHERE state < 'active' (before 31 it serves
  the ready and scheduled counts); job_i14 (name, state, blocked, start_after) WHERE state IN
  ('created','retry','active','failed') and job_i16 (name, completed_on) WHERE completed_on IS NOT
  NULL (schema 46, 12.38; built in the background by pg-boss's BAM on an upgrade). What no index
  serves is a scan (Statement.indexed False), with the index that would serve it as advice. The done
  count is a scan whatever the indexes: it grows with the table, and job_i16 also holds failed and
  cancelled jobs, so counting through it reads every finished row's heap tuple. The wait and run
  times read the last hour only: through job_i16, queue by queue, where it exists (before, a scan).
The statements are one set of files for every schema from 25, tagged by version (common.py).
"""

from __future__ import annotations

from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    CACHED_KEYS,
    COUNT_KEY,
    FINISHED_COLUMNS,
    LEASE_COLUMNS,
    OLDEST_READY,
    PASS_COUNTS,
    PASS_PART,
    CachedCounts,
    Capability,
    IndexAdvice,
    Match,
    Pass,
    QueueModel,
    State,
    StateWord,
)
from pgq_tui.dialects.kit import requeue
from pgq_tui.dialects.pgboss.common import (
    advice,
    boss_latency,
    dead_actions,
    one_pass,
    pick,
    schedule_source,
    search_columns,
    statements,
)

MIN_SCHEMA = 25  # 11.0.0: job_common, expire_seconds, no archive
MAX_SCHEMA = 46  # 12.38.0, the newest pgq-top was tested with
HEARTBEAT_SCHEMA = 30  # 12.12.0: heartbeat_on, heartbeat_seconds
BLOCKED_SCHEMA = 31  # 12.19.0: flows' blocked
RETRY_CLEARS_SCHEMA = 37  # 12.26.0: boss.retry also clears completed_on and start_after
# 12.38.0: its monitor's ready, deferred and blocked counts split the queued jobs as ours do (12.35
# counted blocked jobs as ready and deferred), and monitor_on is stamped only with them (from 40).
# 12.36-12.37 (schema 44-45) are not on npm to run, so their counts are not read.
CACHED_SCHEMA = 46
INDEXED_SCHEMA = 46  # 12.38.0 creates job_i14 and job_i16 on every job table (BAM builds them on upgrade)
# The newest schema version whose background migrations (BAM: index builds) pg-boss has not started yet
BAM_PENDING = VersionMarker("bam", "version", "status", "pending")
# the job columns each schema has, newest first: (from schema, columns)
COLUMNS = (
    (BLOCKED_SCHEMA, frozenset(("expire_seconds", "heartbeat_on", "heartbeat_seconds", "blocked"))),
    (HEARTBEAT_SCHEMA, frozenset(("expire_seconds", "heartbeat_on", "heartbeat_seconds"))),
    (MIN_SCHEMA, frozenset(("expire_seconds",))),
)
TIMEOUT_RULE = (
    "active past started_on + expire_seconds (the job's expireInSeconds, 15 min by default): pg-boss's"
    " supervisor then fails it by timeout (failJobsByTimeout), to retry while retries remain"
)
HEARTBEAT_RULE = (
    "active past started_on + expire_seconds (the job's expireInSeconds, 15 min by default), or, for a"
    " job sent with heartbeatSeconds, heartbeat_on older than heartbeat_seconds: pg-boss's supervisor"
    " then fails it (failJobsByTimeout, failJobsByHeartbeat), to retry while retries remain"
)
# pg-boss 12.38's own job_i14, for a schema that lacks it (before 31 without `blocked`)
STATE_INDEX = "(name, state, blocked, start_after) WHERE state IN ('created', 'retry', 'active', 'failed')"
STATE_INDEX_UNBLOCKED = "(name, state, start_after) WHERE state IN ('created', 'retry', 'active', 'failed')"
FAILED_INDEX = "(name, completed_on) INCLUDE (id) WHERE state = 'failed'"


def shape_schema(job: Relation, version: int | None) -> int | None:
    """The schema version the job table's columns say (the `version` row's, where it agrees), or None
    when they are not pg-boss 11's or 12's.

    >>> from pgq_tui.dialects.catalog import table
    >>> eleven = table("b", "job", {"expire_seconds": "int"}, kind="p")
    >>> shape_schema(eleven, 26), shape_schema(eleven, None), shape_schema(eleven, 30)
    (26, 25, None)
    """
    for since, columns in COLUMNS:
        if job.column_names >= columns:
            if version is None:
                return since
            later = [s for s, _ in COLUMNS if s > since]
            fits = version >= since and (not later or version < min(later))
            return version if fits else None
    return None


def states(version: int) -> tuple[StateWord, ...]:
    blocked = version >= BLOCKED_SCHEMA
    beats = version >= HEARTBEAT_SCHEMA
    return (
        StateWord(
            State.READY.value, f"created or retry, {'not blocked, ' if blocked else ''}start_after <= now()"
        ),
        StateWord(State.SCHEDULED.value, "created or retry, start_after > now() (incl. retry backoff)"),
        *((StateWord("blocked", "created, blocked: waits for the jobs it depends on (a flow)"),) * blocked),
        StateWord(State.RUNNING.value, f"active, within its timeout{' and heartbeat' if beats else ''}"),
        StateWord(
            State.STUCK.value,
            f"active, past started_on + expire_seconds{' or its heartbeat' if beats else ''}",
        ),
        StateWord(State.DEAD.value, "failed"),
        StateWord(State.DONE.value, "completed (until deleted after deletion_seconds)"),
    )


def model(match: Match, catalog: Catalog, title: str, version: int) -> QueueModel:
    """The model of pg-boss schema `version` (25-46, as `shape_schema` read it)."""
    schema = match.schema
    s = statements(schema, version)
    blocked = version >= BLOCKED_SCHEMA
    beats = version >= HEARTBEAT_SCHEMA
    # pg-boss creates its indexes on each job table (job_common and each partitioned queue's), which the
    # catalog does not list (it reads no partitions): from schema 46 they are pg-boss's own, unless its
    # background migrations have not built them yet; an index an operator created on `job` shows there
    pending = catalog.marker(schema, "bam", "version")
    own = version >= INDEXED_SCHEMA and not (
        pending is not None and pending.isdigit() and int(pending) >= INDEXED_SCHEMA
    )
    parent = catalog.relation(schema, "job")
    job = parent or Relation(schema, "job", "p", ())  # partitioned from schema 21 (pg-boss 10) on
    state_columns = (
        ("name", "state", "blocked", "start_after") if blocked else ("name", "state", "start_after")
    )
    has_states = own or (parent is not None and parent.has_index(state_columns))
    has_failed = parent is not None and parent.has_index(("name", "completed_on"), {"state": ["failed"]})
    has_finished = own or (
        parent is not None
        and (
            parent.has_index(("name", "completed_on"), also=("completed_on IS NOT NULL",))
            or parent.has_index(("name", "completed_on"), {"state": ["completed"]})
        )
    )
    # before flows (31) the ready and scheduled counts read pg-boss's own fetch index job_i5 alone
    queued = ("ready", "scheduled", *(("blocked",) * blocked), OLDEST_READY)
    active = pick(s, has_states, "modern_count_active", "count_active_scan", (COUNT_KEY, "running", "stuck"))
    leases = pick(s, has_states, "modern_leases", "leases_scan", (*LEASE_COLUMNS, "heartbeat_age"))
    counts = [
        s.count("modern_count_queued", *queued, indexed=has_states or not blocked),
        active,
        s.count("count_failed", "dead", indexed=has_states),
        # done grows with the table: a scan whatever the indexes (in the poll while the table is
        # small, else in the background's slow class). job_i16 holds failed and cancelled jobs too,
        # so counting completed ones through it reads every finished row's heap tuple: 6.2 s
        # uncapped at 1M rows, past the background's budget at 10M; one GROUP BY scan is 3 s at 10M
        s.count("count_completed", "done", indexed=False),
    ]
    advised: list[IndexAdvice] = []
    if not has_states:
        advised.append(
            advice(
                Capability.COUNTS,
                job,
                "pgq_top_job_states",
                STATE_INDEX if blocked else STATE_INDEX_UNBLOCKED,
                "active or failed jobs (pg-boss 12.38 builds one itself, as job_i14)",
                (*(("blocked",) * blocked), "running", "stuck", "dead"),
            )
        )
    if not has_failed:
        advised.append(
            advice(Capability.DEAD, job, "pgq_top_failed", FAILED_INDEX, "the failed-jobs list", ())
        )
    retry_effect = "state retry, retry_limit + 1" + (
        ", completed_on cleared, start_after at least now()" if version >= RETRY_CLEARS_SCHEMA else ""
    )
    return QueueModel(
        match=match,
        title=title,
        stuck_rule=HEARTBEAT_RULE if beats else TIMEOUT_RULE,
        stuck_label="timed out or heartbeat lost" if beats else "timed out",
        states=states(version),
        counts=tuple(one_pass(counts, s)),
        **s.reads(leases, s.dead(indexed=has_failed)),  # 10.x's lists: the same columns
        # the poll reads the active range once for the count and the list (the range's dead entries
        # are most of the poll's server time at 10M rows under a live fleet)
        passes=(
            (Pass(s("modern_active_pass", (PASS_PART, PASS_COUNTS, *leases.columns)), (active, leases)),)
            if has_states
            else ()
        ),
        extra_states=("blocked",) * blocked,
        cached=(
            CachedCounts(
                s("cached_counts", (*CACHED_KEYS, "ready", "scheduled", "blocked", "dead")),
                "pg-boss's own count, written by its monitor (every 60 s by default, while a pg-boss"
                " instance supervises)",
            )
            if version >= CACHED_SCHEMA and catalog.readable(schema, "bam")
            else None  # without SELECT on bam, counts from before an upgrade cannot be told apart
        ),
        # the same created_on/completed_on columns as 10.x: enqueued/done/failed per second per queue
        finished=s("finished", FINISHED_COLUMNS),
        finished_scans=((schema, "job"),),
        actions=(
            requeue(
                s,
                f"fail by timeout{' or heartbeat' if beats else ''} (pg-boss's supervisor transition)",
                "state retry while retry_count < retry_limit (start_after per retry delay), else"
                " failed (and its dead-letter copy); output names the rule"
                + ("; heartbeat_on cleared" if beats else ""),
                "state = 'active' AND (started_on + expire_seconds < now()"
                + (" OR heartbeat_on + heartbeat_seconds < now())" if beats else ")"),
                "preview_stuck",
            ),
            *dead_actions(s, retry_effect),
        ),
        advice=tuple(advised),
        count_cap=500,  # as 10.x: each (queue, state) count walks its own index range
        liveness_known=beats,
        unsupported=(
            *(
                ((Capability.LIVENESS, "pg-boss records no worker for a job, and no heartbeat before 12.12"),)
                * (not beats)
            ),
            (
                Capability.THROUGHPUT,
                "pgq-top does not read pg-boss 12's throughput deltas (its queue row's created_delta,"
                " completed_delta, failed_delta) yet: the rates come from the jobs' own timestamps",
            ),
        ),
        relations=((schema, "job"),),
        latency=boss_latency(schema, by_queue=has_finished),
        search=search_columns(s, schema),
        schedules=schedule_source(catalog, schema),
    )
