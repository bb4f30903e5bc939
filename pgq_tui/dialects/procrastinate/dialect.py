"""procrastinate 3.1+ (`procrastinate_jobs`, `procrastinate_workers`): detection and model.

Stuck is procrastinate's "stalled": a doing job whose worker row is gone (pruned, worker_id NULL) or
whose worker's heartbeat is older than a threshold. procrastinate does not rescue stalled jobs
itself; its docs tell users to retry them, which is what pgq-top's requeue does. The threshold is
the workers' own setting (`stalled_worker_timeout`, default 30 s), which the database does not
record (STALLED_AFTER): set a target's procrastinate_stalled_after, or PGQ_TOP_STALLED_AFTER
(seconds), when your workers use another.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    FINISHED_DONE,
    OLDEST_READY,
    Capability,
    IndexAdvice,
    Match,
    QueueModel,
    ScheduleSource,
    SearchColumns,
)
from pgq_tui.dialects.guarded import guarded, preview
from pgq_tui.dialects.kit import Setting, Sql, discard, found, index_advice, requeue, retry, state_words
from pgq_tui.dialects.latency import latency_statement
from pgq_tui.dialects.skipscan import over_queues
from pgq_tui.schedules.model import SCHEDULE_COLUMNS, SCHEDULE_JOB_COLUMNS

KIND = "procrastinate"
STALLED_AFTER = Setting(
    "procrastinate_stalled_after",
    "stalled_after_s",
    30.0,  # procrastinate's stalled_worker_timeout and get_stalled_jobs default
    "PGQ_TOP_STALLED_AFTER",
    "procrastinate's stalled_worker_timeout, in seconds: a doing job whose worker is silent longer is stuck",
)
JOB_COLUMNS_SEEN = frozenset(
    ("id", "queue_name", "task_name", "priority", "lock", "args", "status", "scheduled_at", "attempts",
     "worker_id", "abort_requested")
)  # fmt: skip
FAILED_INDEX = "(queue_name, id) WHERE status = 'failed'"
# Doing jobs whose worker row was pruned (worker_id NULL: stalled for sure). procrastinate's doing-jobs
# index (lock) holds the live ones too, so without this each doing job costs a heap read to find them.
WORKERLESS_INDEX = "(queue_name, id) WHERE status = 'doing' AND worker_id IS NULL"
STATES = state_words("""
    ready       todo, scheduled_at null or <= now()
    scheduled   todo, scheduled_at > now() (incl. retries)
    running     doing, worker heartbeat recent
    stuck       doing, worker gone or heartbeat stale (stalled)
    dead        failed
    done        succeeded (kept; counted by a scan: no index serves it)
""")


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
    stalled_after_s: float | None = None  # STALLED_AFTER, set by the engine; None: 30 s
    settings: ClassVar[tuple[Setting, ...]] = (STALLED_AFTER,)
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
            evidence = (
                f"{rel.schema}.procrastinate_jobs, procrastinate_workers, enum procrastinate_job_status"
            )
            tables = ("procrastinate_workers", "procrastinate_events")
            out.append(
                found(KIND, rel, version(catalog, rel.schema), evidence, len(JOB_COLUMNS_SEEN) + 2, *tables)
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        stalled = STALLED_AFTER.value(self.stalled_after_s)
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
        s = Sql(__package__, "procrastinate", idents, {"stalled_after_s": (float(stalled),)})
        rel = catalog.relation(schema, match.table)
        has_failed_index = rel is not None and rel.has_index(("queue_name",), {"status": ["failed"]})
        failed_queues = {"queue_column": "queue_name", "state": "failed"}  # dialects/sql/queues.sql
        has_workerless_index = rel is not None and rel.has_index(
            ("queue_name",), {"status": ["doing"]}, ["worker_id IS NULL"]
        )
        counts = [s.count("count_todo", "ready", "scheduled", OLDEST_READY)]
        advice: list[IndexAdvice] = []
        # Without an advised index each statement is still supplied, as a scan (Statement.indexed
        # False): the engine runs it in the poll while the table is small, else in the background.
        # count_doing and leases read the workerless doing jobs by a scan then (cap1 NULL: exact).
        doing, leases = s.count("count_doing", "running", "stuck"), s.leases()
        if has_workerless_index:
            counts.append(doing)
        else:
            counts.append(doing.scan())
            leases = leases.scan()
            advice.append(
                index_advice(
                    Capability.LEASES,
                    "pgq_top_workerless_jobs",
                    idents["jobs"],
                    WORKERLESS_INDEX,
                    "procrastinate has no index on doing jobs whose worker was pruned (stalled): pgq-top"
                    " scans for them (in the poll while the table is small, else in the background);"
                    " this index makes the figure live",
                    ("running", "stuck"),
                )
            )
        if has_failed_index:
            counts.append(over_queues(s.count("count_failed", "dead"), **failed_queues))
        else:
            counts.append(s.count("count_failed_scan", "dead").scan())
        if not has_failed_index:
            advice.append(
                index_advice(
                    Capability.DEAD,
                    "pgq_top_failed_jobs",
                    idents["jobs"],
                    FAILED_INDEX,
                    "procrastinate has no index on failed jobs: pgq-top scans for them (in the poll while"
                    " the table is small, else in the background); this index makes the figure live",
                    ("dead",),
                )
            )
        # Succeeded jobs are kept, mostly most of the table: their count is a scan whatever the
        # indexes (in the poll while the table is small, else in the background, stale).
        counts.append(s.count("count_done_scan", "done").scan())
        rule = (
            f"stalled: doing, and its worker is gone or silent for {stalled:g} s (procrastinate's"
            f" stalled_worker_timeout; set {STALLED_AFTER.env} to your workers' value)"
        )
        failed = "status = 'failed'"
        # the guards (sql/guard_*.sql), each written once for its preview and its write
        g_failed, g_stalled = s.preview("guard_failed"), s.preview("guard_stalled")
        preview_failed = preview(g_failed, queue_column="queue_name")
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
            states=STATES,
            counts=tuple(counts),
            **s.reads(
                leases,
                over_queues(s.dead(), **failed_queues) if has_failed_index else s.dead("dead_scan").scan(),
            ),
            actions=(
                requeue(
                    s,
                    f"{retry_fn}() on stalled jobs",
                    f"{retry_fn}(id, retry_at => now()): status todo, attempts + 1"
                    " (failed instead if an abort was requested)",
                    f"status = 'doing' AND (worker gone OR last_heartbeat < now() - {stalled:g} s)",
                    preview(g_stalled, queue_column="queue_name"),
                    guarded(s.write("requeue"), g_stalled, queue_column="queue_name"),
                ),
                retry(
                    s,
                    f"{retry_fn}()",
                    f"{retry_fn}(id, retry_at => now()): status todo, attempts + 1",
                    failed,
                    preview_failed,
                    guarded(s.write("retry"), g_failed, queue_column="queue_name"),
                ),
                discard(
                    s,
                    "delete (as delete_old_jobs does)",
                    "the failed rows and their events are deleted",
                    failed,
                    preview_failed,
                    write=guarded(s.write("discard"), g_failed, queue_column="queue_name"),
                ),
            ),
            # read over all queues together from indexes without a queue column (see the SQL)
            capped_overall=("ready", "scheduled", "running", "stuck"),
            liveness_known=True,
            advice=tuple(advice),
            unsupported=((Capability.THROUGHPUT, "procrastinate keeps no counters"),),
            # from procrastinate_events (deferred, started, succeeded); no index on `at`: a scan
            latency=latency_statement(
                "procrastinate.latency",
                __package__,
                indexed=False,
                events=idents["events"],
                jobs=idents["jobs"],
            ),
            relations=((schema, "procrastinate_jobs"),),
            search=replace(
                _search(idents["jobs"], idents["workers"], float(stalled)), indexed_states=_dead_index(rel)
            ),
            schedules=_schedules(catalog, schema),
        )


def _search(jobs: tuple[str, str], workers: tuple[str, str], stalled_after_s: float) -> SearchColumns:
    """The search language on procrastinate_jobs: its args. procrastinate keeps no error text and
    no job time in the jobs table, so error: and since:/before: are refused (docs/search.md)."""
    alive = (
        "j.worker_id IS NOT NULL AND EXISTS (SELECT 1 FROM {workers} w WHERE w.id = j.worker_id"
        " AND w.last_heartbeat >= now() - make_interval(secs => {stalled_after_s}))"
    )
    return SearchColumns(
        jobs=jobs,
        states=(
            ("ready", "j.status = 'todo' AND (j.scheduled_at IS NULL OR j.scheduled_at <= now())"),
            ("scheduled", "j.status = 'todo' AND j.scheduled_at > now()"),
            ("running", f"j.status = 'doing' AND {alive}"),
            ("stuck", f"j.status = 'doing' AND NOT ({alive})"),
            ("dead", "j.status = 'failed'"),
            ("done", "j.status = 'succeeded'"),
        ),
        queue="queue_name",
        documents=(("args", "args"),),
        payload="j.args",
        literals=(("stalled_after_s", stalled_after_s),),
        idents=(("workers", workers),),
    )


def _schedules(catalog: Catalog, schema: str) -> ScheduleSource | None:
    """The periodic defers: each periodic task's last run and the jobs it deferred."""
    if catalog.relation(schema, "procrastinate_periodic_defers") is None:
        return None
    tables = {"periodic": (schema, "procrastinate_periodic_defers"), "jobs": (schema, "procrastinate_jobs")}
    s = Sql(__package__, "procrastinate", tables)
    return ScheduleSource(
        statement=s("schedules", SCHEDULE_COLUMNS),
        jobs=s("schedule_jobs", SCHEDULE_JOB_COLUMNS),
        links="procrastinate_periodic_defers.job_id: each deferred occurrence's job, exactly",
        timezone_rule="UTC (procrastinate's periodic cron)",
        expressions_elsewhere="procrastinate keeps the cron expression in the app's @app.periodic"
        " decorator, not in the database",
    )


def _dead_index(rel: Relation | None) -> tuple[tuple[str, str], ...]:
    """dead -> the advised failed-jobs index (FAILED_INDEX), where the operator made it: a state:dead
    search reads every failed job through it (procrastinate's own indexes serve no failed job)."""
    index = rel.index_for(("queue_name",), {"status": ["failed"]}) if rel is not None else None
    return (("dead", index.name),) if index is not None else ()
