"""pgqueuer 1.x (`pgqueuer` table, optionally prefixed or in another schema): detection and model.

Only queued, picked and failed jobs live in the table: successes (and, by default, terminal failures)
are deleted and logged in `pgqueuer_log`. Stuck is pgqueuer's own rule: a picked job whose heartbeat
is older than the workers' heartbeat timeout (default 30 s), which pgqueuer's dequeue then re-picks.
The timeout is a worker setting the database does not record (HEARTBEAT_TIMEOUT): set a target's
pgqueuer_heartbeat_timeout, or PGQ_TOP_STALLED_AFTER (seconds), when your workers use another.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from psycopg import sql

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    FINISHED_DONE,
    OLDEST_READY,
    Capability,
    Match,
    QueueModel,
    ScheduleSource,
    SearchColumns,
)
from pgq_tui.dialects.guarded import guarded, preview, with_parts
from pgq_tui.dialects.kit import Setting, Sql, discard, found, index_advice, requeue, retry, state_words
from pgq_tui.dialects.skipscan import over_queues
from pgq_tui.schedules.model import SCHEDULE_COLUMNS

KIND = "pgqueuer"
HEARTBEAT_TIMEOUT = Setting(
    "pgqueuer_heartbeat_timeout",
    "heartbeat_timeout_s",
    30.0,  # `pgq run --heartbeat-timeout` default
    "PGQ_TOP_STALLED_AFTER",
    "pgqueuer's worker heartbeat timeout, in seconds: a picked job whose heartbeat is older is stuck",
)
JOB_COLUMNS_SEEN = frozenset(
    ("id", "priority", "queue_manager_id", "created", "updated", "heartbeat", "execute_after", "status",
     "entrypoint", "payload")
)  # fmt: skip
FAILED_INDEX = "(entrypoint, id) WHERE status = 'failed'"
STATES = state_words("""
    ready       queued, execute_after < now()
    scheduled   queued, execute_after >= now()
    running     picked, heartbeat recent
    stuck       picked, heartbeat older than the timeout
    dead        failed (entrypoints with on_failure='hold')
    done        deleted and logged as successful
""")


def version(rel: Relation, labels: tuple[str, ...]) -> str:
    """pgqueuer keeps no version table: the newest feature present says the least version.

    >>> from pgq_tui.dialects.catalog import table
    >>> version(table("public", "pgqueuer", {"attempts": "integer"}), ("queued", "picked", "failed"))
    '1.0+'
    """
    names = rel.column_names
    if "attempts" in names and "failed" in labels:
        return "1.0+"
    if "headers" in names:
        return "0.24+"
    return "before 0.24"


@dataclass(frozen=True)
class PgqueuerDialect:
    heartbeat_timeout_s: float | None = None  # HEARTBEAT_TIMEOUT, set by the engine; None: 30 s
    settings: ClassVar[tuple[Setting, ...]] = (HEARTBEAT_TIMEOUT,)
    kind: str = KIND
    title: str = "pgqueuer"
    versions: str = "1.0+ (tested with 1.6.0)"
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.with_columns(JOB_COLUMNS_SEEN):
            if rel.kind not in ("r", "p"):
                continue
            status = rel.column("status")
            enum = _enum_of(catalog, rel.schema, status.type if status else "")
            if enum is None or not {"queued", "picked"} <= set(enum):
                continue
            log = f"{rel.name}_log"
            if catalog.relation(rel.schema, log) is None:
                continue
            evidence = f"{rel.schema}.{rel.name} (status enum with queued/picked) and {log}"
            out.append(found(KIND, rel, version(rel, enum), evidence, len(JOB_COLUMNS_SEEN) + 2, log))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema, table = match.schema, match.table
        timeout = HEARTBEAT_TIMEOUT.value(self.heartbeat_timeout_s)
        idents = {"jobs": (schema, table), "log": (schema, f"{table}_log")}
        s = Sql(__package__, "pgqueuer", idents, {"heartbeat_timeout_s": (float(timeout),)})
        rel = catalog.relation(schema, table)
        has_failed_index = rel is not None and rel.has_index(("entrypoint",), {"status": ["failed"]})
        # without the failed index, still supplied as scans: in the poll while the table is small, else
        # in the background
        # the skip-scans of the entrypoints holding queued and failed jobs (dialects/sql/queues.sql)
        queued = {"queue_column": "entrypoint", "state": "queued"}
        failed_queues = {"queue_column": "entrypoint", "state": "failed"}
        counts = (
            over_queues(s.count("count_queued", "ready", "scheduled", OLDEST_READY), **queued),
            s.count("count_picked", "running", "stuck"),
            over_queues(s.count("count_failed", "dead"), **failed_queues)
            if has_failed_index
            else s.count("count_failed_scan", "dead").scan(),
        )
        dead = over_queues(s.dead(), **failed_queues) if has_failed_index else s.dead("dead_scan").scan()
        advice = (
            ()
            if has_failed_index
            else (
                index_advice(
                    Capability.DEAD,
                    sql.Identifier(f"{table}_pgq_top_failed").as_string(None),
                    (schema, table),
                    FAILED_INDEX,
                    "pgqueuer has no index on held failures: pgq-top scans for them (in the poll while the"
                    " table is small, else in the background); this index makes the figure live",
                    ("dead",),
                ),
            )
        )
        rule = (
            f"picked, heartbeat older than {timeout:g} s (the workers' heartbeat timeout; pgqueuer then"
            f" re-picks the job; set {HEARTBEAT_TIMEOUT.env} to your workers' value)"
        )
        failed = "status = 'failed'"
        # the guards (sql/guard_*.sql), each written once for its preview and its write; retry and
        # requeue are one transition (sql/requeue.sql) under their two guards
        g_failed, g_stale = s.preview("guard_failed"), s.preview("guard_stale")
        preview_failed = preview(g_failed, queue_column="entrypoint")
        return QueueModel(
            match=match,
            # jobs finished per entrypoint, from pgqueuer's log (its `created` index serves the range)
            finished=s("finished", FINISHED_DONE),
            # new jobs per entrypoint (the counts' queue)
            activity=activity_statement(
                "pgqueuer.activity", jobs=idents["jobs"], id="id", queue_of_j="j.entrypoint"
            ),
            title=self.title,
            stuck_rule=rule,
            states=STATES,
            counts=counts,
            **s.reads(dead=with_parts(dead, __package__, "dead_row")),
            actions=(
                requeue(
                    s,
                    "requeue (pgqueuer's retry transition)",
                    "status queued, execute_after now(), attempts + 1, queue_manager_id cleared;"
                    " logged as queued",
                    f"status = 'picked' AND heartbeat < now() - {timeout:g} s",
                    preview(g_stale, queue_column="entrypoint"),
                    guarded(s.write("requeue"), g_stale, queue_column="entrypoint", order_column="heartbeat"),
                ),
                retry(
                    s,
                    "pgq requeue",
                    "status queued, execute_after now(), attempts 0, queue_manager_id cleared;"
                    " logged as queued",
                    failed,
                    preview_failed,
                    guarded(s.write("requeue"), g_failed, queue_column="entrypoint"),
                ),
                discard(
                    s,
                    "delete (pgqueuer's delete transition)",
                    "the rows are deleted and logged as deleted",
                    failed,
                    preview_failed,
                    write=guarded(s.write("discard"), g_failed, queue_column="entrypoint"),
                ),
            ),
            # read over all queues together from indexes without a queue column (see the SQL)
            capped_overall=("running", "stuck"),
            liveness_known=True,
            advice=advice,
            unsupported=(
                (Capability.DONE, "pgqueuer deletes finished jobs (they are only logged)"),
                (Capability.LATENCY, "not read from pgqueuer's log yet (it deletes finished jobs)"),
                (Capability.THROUGHPUT, "not read from pgqueuer_statistics yet"),
            ),
            relations=((schema, table),),
            search=_search(idents["jobs"], idents["log"], float(timeout)),
            schedules=_schedules(catalog, schema, table),
        )


def _schedules(catalog: Catalog, schema: str, table: str) -> ScheduleSource | None:
    """pgqueuer's <table>_schedules, when it exists (pgqueuer's install creates it)."""
    name = f"{table}_schedules"
    if catalog.relation(schema, name) is None:
        return None
    s = Sql(__package__, "pgqueuer", {"schedules": (schema, name)})
    return ScheduleSource(
        statement=s("schedules", SCHEDULE_COLUMNS),
        links="none: pgqueuer's scheduler runs the entrypoint's function itself and makes no job row",
        timezone_rule="UTC (pgqueuer computes next_run with croniter in UTC and stores it)",
    )


def _enum_of(catalog: Catalog, schema: str, type_name: str) -> tuple[str, ...] | None:
    """The labels of the enum a column's format_type() names ("pgqueuer_status" or "s.pgqueuer_status")."""
    name = type_name.split(".")[-1].strip('"')
    for e in catalog.enums_named(name):
        if e.schema == schema or "." in type_name:
            return e.labels
    return None


def _search(jobs: tuple[str, str], log: tuple[str, str], heartbeat_timeout_s: float) -> SearchColumns:
    """The search language on pgqueuer's jobs: the entrypoint is the queue, the error the last
    logged exception, headers its meta. Its payload is bytes, not JSON, so args. is refused; it
    deletes finished jobs, so there is no state:done (docs/search.md)."""
    stale = "j.heartbeat < now() - make_interval(secs => {heartbeat_timeout_s})"
    return SearchColumns(
        jobs=jobs,
        states=(
            ("ready", "j.status = 'queued' AND j.execute_after < now()"),
            ("scheduled", "j.status = 'queued' AND j.execute_after >= now()"),
            ("running", f"j.status = 'picked' AND NOT ({stale})"),
            ("stuck", f"j.status = 'picked' AND {stale}"),
            ("dead", "j.status = 'failed'"),
        ),
        queue="entrypoint",
        error="SELECT string_agg(l.traceback::text, ' ') FROM {log} l"
        " WHERE l.job_id = j.id AND l.traceback IS NOT NULL",
        time="j.updated",
        time_words="updated (the last status change)",
        documents=(("meta", "headers"),),
        payload="CASE WHEN octet_length(j.payload) <= 65536 THEN convert_from(j.payload, 'UTF8') END",
        literals=(("heartbeat_timeout_s", heartbeat_timeout_s),),
        idents=(("log", log),),
    )
