"""procrastinate 3.1+ (`procrastinate_jobs`, `procrastinate_workers`): detection and model.

Stuck is procrastinate's "stalled": a doing job whose worker row is gone (pruned, worker_id NULL) or
whose worker's heartbeat is older than a threshold. procrastinate does not rescue stalled jobs
itself; its docs tell users to retry them, which is what pgq-top's requeue does. The threshold is
the workers' own setting (`stalled_worker_timeout`, default 30 s), which the database does not
record: set PGQ_TOP_STALLED_AFTER (seconds) when your workers use another.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    COUNT_KEY,
    DEAD_COLUMNS,
    FINISHED_DONE,
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
from pgq_tui.dialects.envsettings import seconds_from_env
from pgq_tui.dialects.guarded import guarded, preview
from pgq_tui.dialects.skipscan import over_queues
from pgq_tui.dialects.sqlfiles import sql_file

KIND = "procrastinate"
STALLED_ENV = "PGQ_TOP_STALLED_AFTER"
DEFAULT_STALLED_S = 30.0  # procrastinate's stalled_worker_timeout and get_stalled_jobs default
JOB_COLUMNS_SEEN = frozenset(
    ("id", "queue_name", "task_name", "priority", "lock", "args", "status", "scheduled_at", "attempts",
     "worker_id", "abort_requested")
)  # fmt: skip
FAILED_INDEX = "(queue_name, id) WHERE status = 'failed'"
# Doing jobs whose worker row was pruned (worker_id NULL: stalled for sure). procrastinate's doing-jobs
# index (lock) holds the live ones too, so without this each doing job costs a heap read to find them.
WORKERLESS_INDEX = "(queue_name, id) WHERE status = 'doing' AND worker_id IS NULL"


def stalled_after_from_env(default: float = DEFAULT_STALLED_S) -> float:
    """The stalled threshold in seconds: PGQ_TOP_STALLED_AFTER when set to a positive number."""
    return seconds_from_env(STALLED_ENV, default)


def version(catalog: Catalog, schema: str) -> str:
    """procrastinate keeps no version table: the newest feature present says the least version.

    >>> from pgq_tui.dialects.catalog import Catalog
    >>> version(Catalog((), functions=frozenset({("s", "procrastinate_retry_job_v2")})), "s")
    '3.4+'
    """
    if catalog.has_function(schema, "procrastinate_retry_job_v2"):
        return "3.4+"
    return "3.1+"


@dataclass(frozen=True)
class ProcrastinateDialect:
    stalled_after_s: float | None = None  # None: PGQ_TOP_STALLED_AFTER, else 30 s
    kind: str = KIND
    title: str = "procrastinate"
    versions: str = "3.1+ (tested with 3.10.0)"
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("procrastinate_jobs"):
            if not rel.column_names >= JOB_COLUMNS_SEEN:
                continue
            if catalog.relation(rel.schema, "procrastinate_workers") is None:
                continue  # before 3.1: no worker heartbeats, so no stalled rule to show
            if catalog.enum(rel.schema, "procrastinate_job_status") is None:
                continue
            out.append(
                Match(
                    kind=KIND,
                    schema=rel.schema,
                    table=rel.name,
                    version=version(catalog, rel.schema),
                    evidence=f"{rel.schema}.procrastinate_jobs, procrastinate_workers,"
                    " enum procrastinate_job_status",
                    score=len(JOB_COLUMNS_SEEN) + 2,
                    tables=(rel.name, "procrastinate_workers", "procrastinate_events"),
                )
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        stalled = self.stalled_after_s or stalled_after_from_env()
        threshold = sql.Literal(float(stalled)).as_string(None)
        retry_fn = (
            "procrastinate_retry_job_v2"
            if catalog.has_function(schema, "procrastinate_retry_job_v2")
            else "procrastinate_retry_job_v1"
        )
        idents = {
            "jobs": (schema, "procrastinate_jobs"),
            "workers": (schema, "procrastinate_workers"),
            "events": (schema, "procrastinate_events"),
            "retry_job": (schema, retry_fn),
        }

        def s(name: str, columns: tuple[str, ...]) -> Statement:
            # The threshold is a number we parsed, bound as a quoted SQL literal (never user text).
            text = sql_file(__package__, name).replace("{stalled_after_s}", threshold)
            return Statement.of(f"procrastinate.{name}", text, columns, literals=None, **idents)

        rel = catalog.relation(schema, match.table)
        has_failed_index = rel is not None and rel.has_index(("queue_name",), {"status": ["failed"]})
        failed_queues = {"queue_column": "queue_name", "state": "failed"}  # dialects/sql/queues.sql
        has_workerless_index = rel is not None and rel.has_index(
            ("queue_name",), {"status": ["doing"]}, ["worker_id IS NULL"]
        )
        jobs = sql.Identifier(schema, "procrastinate_jobs").as_string(None)
        counts = [s("count_todo", (COUNT_KEY, "ready", "scheduled", OLDEST_READY))]
        advice: list[IndexAdvice] = []
        # Without an advised index each statement is still supplied, as a scan (Statement.indexed
        # False): the engine runs it in the poll while the table is small, else in the background.
        # count_doing and leases read the workerless doing jobs by a scan then (cap1 NULL: exact).
        if has_workerless_index:
            counts.append(s("count_doing", (COUNT_KEY, "running", "stuck")))
            leases = s("leases", LEASE_COLUMNS)
        else:
            counts.append(s("count_doing", (COUNT_KEY, "running", "stuck")).scan())
            leases = s("leases", LEASE_COLUMNS).scan()
            advice.append(
                IndexAdvice(
                    Capability.LEASES,
                    f"CREATE INDEX CONCURRENTLY pgq_top_workerless_jobs ON {jobs} {WORKERLESS_INDEX}",
                    "procrastinate has no index on doing jobs whose worker was pruned (stalled): pgq-top"
                    " scans for them (in the poll while the table is small, else in the background);"
                    " this index makes the figure live",
                    ("running", "stuck"),
                )
            )
        if has_failed_index:
            counts.append(over_queues(s("count_failed", (COUNT_KEY, "dead")), **failed_queues))
            dead = over_queues(s("dead", DEAD_COLUMNS), **failed_queues)
        else:
            counts.append(s("count_failed_scan", (COUNT_KEY, "dead")).scan())
            dead = s("dead_scan", DEAD_COLUMNS).scan()
            advice.append(
                IndexAdvice(
                    Capability.DEAD,
                    f"CREATE INDEX CONCURRENTLY pgq_top_failed_jobs ON {jobs} {FAILED_INDEX}",
                    "procrastinate has no index on failed jobs: pgq-top scans for them (in the poll while"
                    " the table is small, else in the background); this index makes the figure live",
                    ("dead",),
                )
            )
        # Succeeded jobs are kept, mostly most of the table: their count is a scan whatever the
        # indexes (in the poll while the table is small, else in the background, stale).
        counts.append(s("count_done_scan", (COUNT_KEY, "done")).scan())
        rule = (
            f"stalled: doing, and its worker is gone or silent for {stalled:g} s (procrastinate's"
            f" stalled_worker_timeout; set {STALLED_ENV} to your workers' value)"
        )
        failed, stalled_guard = s("guard_failed", PREVIEW_COLUMNS), s("guard_stalled", PREVIEW_COLUMNS)
        preview_failed = preview(failed, queue_column="queue_name")
        return QueueModel(
            match=match,
            finished=s("finished", FINISHED_DONE),
            # procrastinate_events has no index on `at`: read while it is small
            finished_scans=((schema, "procrastinate_events"),),
            activity=activity_statement(
                "procrastinate.activity", jobs=idents["jobs"], id="id", queue_of_j="j.queue_name"
            ),
            title=self.title,
            stuck_rule=rule,
            states=(
                StateWord(State.READY.value, "todo, scheduled_at null or <= now()"),
                StateWord(State.SCHEDULED.value, "todo, scheduled_at > now() (incl. retries)"),
                StateWord(State.RUNNING.value, "doing, worker heartbeat recent"),
                StateWord(State.STUCK.value, "doing, worker gone or heartbeat stale (stalled)"),
                StateWord(State.DEAD.value, "failed"),
                StateWord(State.DONE.value, "succeeded (kept; counted by a scan: no index serves it)"),
            ),
            counts=tuple(counts),
            leases=leases,
            dead=dead,
            job=s("job", JOB_COLUMNS),
            claim_probe=s("claim_probe", ("id",)),
            actions=(
                ActionSpec(
                    kind=ActionKind.REQUEUE,
                    label=f"{retry_fn}() on stalled jobs",
                    applies_to=State.STUCK,
                    effect=f"{retry_fn}(id, retry_at => now()): status todo, attempts + 1"
                    " (failed instead if an abort was requested)",
                    guard=f"status = 'doing' AND (worker gone OR last_heartbeat < now() - {stalled:g} s)",
                    preview=preview(stalled_guard, queue_column="queue_name"),
                    statement=guarded(s("requeue", ("id",)), stalled_guard, queue_column="queue_name"),
                ),
                ActionSpec(
                    kind=ActionKind.RETRY,
                    label=f"{retry_fn}()",
                    applies_to=State.DEAD,
                    effect=f"{retry_fn}(id, retry_at => now()): status todo, attempts + 1",
                    guard="status = 'failed'",
                    preview=preview_failed,
                    statement=guarded(s("retry", ("id",)), failed, queue_column="queue_name"),
                ),
                ActionSpec(
                    kind=ActionKind.DISCARD,
                    label="delete (as delete_old_jobs does)",
                    applies_to=State.DEAD,
                    effect="the failed rows and their events are deleted",
                    guard="status = 'failed'",
                    preview=preview_failed,
                    statement=guarded(s("discard", ("id",)), failed, queue_column="queue_name"),
                    destructive=True,
                ),
            ),
            # read over all queues together from indexes without a queue column (see the SQL)
            capped_overall=("ready", "scheduled", "running", "stuck"),
            liveness_known=True,
            advice=tuple(advice),
            unsupported=((Capability.THROUGHPUT, "procrastinate keeps no counters"),),
            relations=((schema, "procrastinate_jobs"),),
        )
