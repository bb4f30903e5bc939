"""pg-boss 12 (schema 31+, pg-boss 12.19 and later), the layout current releases run on Node 22.

Read from the installed package's own plans and migrations (`getConstructionPlans`, migrationStore):
- one `job` table, list-partitioned by queue name: a shared DEFAULT partition `job_common` holds every
  queue created without `partition: true`; such a queue gets its own table (`queue.table_name`);
- the timeout is `expire_seconds` (int), no `expire_in` interval; no archive table (completed jobs
  are deleted after `deletion_seconds`);
- heartbeats (schema 30, 12.12): a job sent with `heartbeatSeconds` has `heartbeat_seconds` set and
  its worker refreshes `heartbeat_on`; the supervisor fails a job whose heartbeat is older than that
  (failJobsByHeartbeat) as well as one past its timeout (failJobsByTimeout);
- flows (schema 31, 12.19): a `blocked` job waits for the jobs it depends on and is not fetchable;
- job_i14 (name, state, blocked, start_after) WHERE state IN ('created','retry','active','failed') and
  job_i16 (name, completed_on) WHERE completed_on IS NOT NULL (schema 46, 12.38; built in the
  background by pg-boss's BAM on an upgrade): the counts read them.
"""

from __future__ import annotations

from psycopg import sql

from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    COUNT_KEY,
    DEAD_COLUMNS,
    FINISHED_COLUMNS,
    JOB_COLUMNS,
    LEASE_COLUMNS,
    OLDEST_READY,
    PREVIEW_COLUMNS,
    ActionKind,
    ActionSpec,
    Capability,
    IndexAdvice,
    Match,
    QueueModel,
    State,
    Statement,
    StateWord,
)
from pgq_tui.dialects.sqlfiles import sql_file

MIN_SCHEMA = 31  # 12.19.0: heartbeats (30) and flows' `blocked` (31) are both there
MAX_SCHEMA = 46  # 12.38.0, the newest pgq-top was tested with
INDEXED_SCHEMA = 46  # 12.38.0 creates job_i14 and job_i16 on every job table (BAM builds them on upgrade)
# The newest schema version whose background migrations (BAM: index builds) pg-boss has not started yet
BAM_PENDING = VersionMarker("bam", "version", "status", "pending")
COLUMNS = frozenset(("expire_seconds", "heartbeat_on", "heartbeat_seconds", "blocked"))
STUCK_RULE = (
    "active past started_on + expire_seconds (the job's expireInSeconds, 15 min by default), or, for a"
    " job sent with heartbeatSeconds, heartbeat_on older than heartbeat_seconds: pg-boss's supervisor"
    " then fails it (failJobsByTimeout, failJobsByHeartbeat), to retry while retries remain"
)
# pg-boss 12.38's own job_i14 and job_i16, for a schema that lacks them
STATE_INDEX = "(name, state, blocked, start_after) WHERE state IN ('created', 'retry', 'active', 'failed')"
COMPLETED_INDEX = "(name, completed_on) WHERE completed_on IS NOT NULL"
FAILED_INDEX = "(name, completed_on) INCLUDE (id) WHERE state = 'failed'"
STATES = (
    StateWord(State.READY.value, "created or retry, not blocked, start_after <= now()"),
    StateWord(State.SCHEDULED.value, "created or retry, start_after > now() (incl. retry backoff)"),
    StateWord("blocked", "created, blocked: waits for the jobs it depends on (a flow)"),
    StateWord(State.RUNNING.value, "active, within its timeout and heartbeat"),
    StateWord(State.STUCK.value, "active, past started_on + expire_seconds or its heartbeat"),
    StateWord(State.DEAD.value, "failed"),
    StateWord(State.DONE.value, "completed (until deleted after deletion_seconds)"),
)


def model(match: Match, catalog: Catalog, title: str, schema_version: int | None) -> QueueModel:
    schema = match.schema
    idents = {"job": (schema, "job"), "queue": (schema, "queue"), "job_state": (schema, "job_state")}

    def s(name: str, columns: tuple[str, ...]) -> Statement:
        return Statement.of(f"pgboss.{name}", sql_file(__package__, name), columns, literals=None, **idents)

    # pg-boss creates its indexes on each job table (job_common and each partitioned queue's), which the
    # catalog does not list (it reads no partitions): from schema 46 they are pg-boss's own, unless its
    # background migrations have not built them yet; an index an operator created on `job` shows there
    pending = catalog.marker(schema, "bam", "version")
    own = (
        schema_version is not None
        and schema_version >= INDEXED_SCHEMA
        and not (pending is not None and pending.isdigit() and int(pending) >= INDEXED_SCHEMA)
    )
    parent = catalog.relation(schema, "job")
    has_states = own or (parent is not None and parent.has_index(("name", "state", "blocked", "start_after")))
    has_completed = own or (
        parent is not None and parent.has_index(("name", "completed_on"), also=["completed_on IS NOT NULL"])
    )
    has_failed = parent is not None and parent.has_index(("name", "completed_on"), {"state": ["failed"]})
    def served(statement: Statement, indexed: bool) -> Statement:
        # Without the index each statement is still supplied, as a scan (Statement.indexed False):
        # the engine runs it in the poll while the table is small, else in the background.
        return statement if indexed else statement.scan()

    counts: list[Statement] = [
        served(s("v12_count_queued", (COUNT_KEY, "ready", "scheduled", "blocked", OLDEST_READY)), has_states),
        served(s("v12_count_active", (COUNT_KEY, "running", "stuck")), has_states),
        served(s("v12_count_failed", (COUNT_KEY, "dead")), has_states),
        served(s("v12_count_completed", (COUNT_KEY, "done")), has_completed),
    ]
    advice: list[IndexAdvice] = []
    if not has_states:
        advice.append(
            _advice(
                Capability.COUNTS,
                schema,
                "pgq_top_job_states",
                STATE_INDEX,
                "job states (pg-boss 12.38 builds this one itself, as job_i14)",
                ("ready", "scheduled", "blocked", "running", "stuck", "dead"),
            )
        )
    if not has_completed:
        advice.append(
            _advice(
                Capability.DONE,
                schema,
                "pgq_top_completed",
                COMPLETED_INDEX,
                "finished jobs (pg-boss 12.38 builds this one itself, as job_i16)",
                ("done",),
            )
        )
    if not has_failed:
        advice.append(
            _advice(Capability.DEAD, schema, "pgq_top_failed", FAILED_INDEX, "the failed-jobs list", ())
        )
    preview_failed = s("preview_failed", PREVIEW_COLUMNS)
    return QueueModel(
        match=match,
        title=title,
        stuck_rule=STUCK_RULE,
        stuck_label="timed out or heartbeat lost",
        states=STATES,
        counts=tuple(counts),
        leases=served(s("v12_leases", (*LEASE_COLUMNS, "heartbeat_age")), has_states),
        dead=served(s("dead", DEAD_COLUMNS), has_failed),  # 10.x's list: the same columns and index
        job=s("v12_job", JOB_COLUMNS),
        claim_probe=s("v12_claim_probe", ("id",)),
        extra_states=("blocked",),
        # the same created_on/completed_on columns as 10.x: enqueued/done/failed per second per queue
        finished=s("finished", FINISHED_COLUMNS),
        finished_scans=((schema, "job"),),
        actions=(
            ActionSpec(
                kind=ActionKind.REQUEUE,
                label="fail by timeout or heartbeat (pg-boss's supervisor transition)",
                applies_to=State.STUCK,
                effect="state retry while retry_count < retry_limit (start_after per retry delay), else"
                " failed (and its dead-letter copy); heartbeat_on cleared; output names the rule",
                guard="state = 'active' AND (started_on + expire_seconds < now() OR heartbeat_on +"
                " heartbeat_seconds < now())",
                preview=s("v12_preview_stuck", PREVIEW_COLUMNS),
                statement=s("v12_requeue", ("id",)),
            ),
            ActionSpec(
                kind=ActionKind.RETRY,
                label="retry (boss.retry)",
                applies_to=State.DEAD,
                effect="state retry, retry_limit + 1, completed_on cleared, start_after at least now()",
                guard="state = 'failed'",
                preview=preview_failed,
                statement=s("v12_retry", ("id",)),
            ),
            ActionSpec(
                kind=ActionKind.DISCARD,
                label="delete (boss.deleteJob)",
                applies_to=State.DEAD,
                effect="the rows are deleted",
                guard="state = 'failed'",
                preview=preview_failed,
                statement=s("discard", ("id",)),
                destructive=True,
            ),
        ),
        advice=tuple(advice),
        count_cap=500,  # as 10.x: each (queue, state) count walks its own index range
        liveness_known=True,
        unsupported=((Capability.THROUGHPUT, "pgq-top does not read pg-boss 12's queue counters yet"),),
        relations=((schema, "job"),),
    )


def _advice(
    cap: Capability, schema: str, name: str, definition: str, what: str, states: tuple[str, ...]
) -> IndexAdvice:
    # No CONCURRENTLY: `job` is partitioned (one build per partition, each blocking its writes briefly).
    return IndexAdvice(
        cap,
        f"CREATE INDEX {name} ON {sql.Identifier(schema, 'job').as_string(None)} {definition}",
        f"this pg-boss schema has no index for {what}; pgq-top does not scan the table for them",
        states,
    )
