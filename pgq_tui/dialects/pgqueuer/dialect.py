"""pgqueuer 1.x (`pgqueuer` table, optionally prefixed or in another schema): detection and model.

Only queued, picked and failed jobs live in the table: successes (and, by default, terminal failures)
are deleted and logged in `pgqueuer_log`. Stuck is pgqueuer's own rule: a picked job whose heartbeat
is older than the workers' heartbeat timeout (default 30 s), which pgqueuer's dequeue then re-picks.
The timeout is a worker setting the database does not record: set PGQ_TOP_STALLED_AFTER (seconds)
when your workers use another.
"""

from __future__ import annotations

from dataclasses import dataclass

from psycopg import sql

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
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
from pgq_tui.dialects.guarded import guarded, preview, with_parts
from pgq_tui.dialects.skipscan import over_queues
from pgq_tui.dialects.sqlfiles import sql_file

KIND = "pgqueuer"
STALLED_ENV = "PGQ_TOP_STALLED_AFTER"
DEFAULT_HEARTBEAT_TIMEOUT_S = 30.0  # `pgq run --heartbeat-timeout` default
JOB_COLUMNS_SEEN = frozenset(
    ("id", "priority", "queue_manager_id", "created", "updated", "heartbeat", "execute_after", "status",
     "entrypoint", "payload")
)  # fmt: skip
FAILED_INDEX = "(entrypoint, id) WHERE status = 'failed'"


def heartbeat_timeout_from_env(default: float = DEFAULT_HEARTBEAT_TIMEOUT_S) -> float:
    """The heartbeat timeout in seconds: PGQ_TOP_STALLED_AFTER when set to a positive number."""
    return seconds_from_env(STALLED_ENV, default)


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
    heartbeat_timeout_s: float | None = None  # None: PGQ_TOP_STALLED_AFTER, else 30 s
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
            out.append(
                Match(
                    kind=KIND,
                    schema=rel.schema,
                    table=rel.name,
                    version=version(rel, enum),
                    evidence=f"{rel.schema}.{rel.name} (status enum with queued/picked) and {log}",
                    score=len(JOB_COLUMNS_SEEN) + 2,
                    tables=(rel.name, log),
                )
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema, table = match.schema, match.table
        timeout = self.heartbeat_timeout_s or heartbeat_timeout_from_env()
        literal = sql.Literal(float(timeout)).as_string(None)
        idents = {"jobs": (schema, table), "log": (schema, f"{table}_log")}

        def s(name: str, columns: tuple[str, ...]) -> Statement:
            # The timeout is a number we parsed, bound as a quoted SQL literal (never user text).
            text = sql_file(__package__, name).replace("{heartbeat_timeout_s}", literal)
            return Statement.of(f"pgqueuer.{name}", text, columns, literals=None, **idents)

        rel = catalog.relation(schema, table)
        has_failed_index = rel is not None and rel.has_index(("entrypoint",), {"status": ["failed"]})
        # the skip-scans of the entrypoints holding queued and failed jobs (dialects/sql/queues.sql)
        queued = {"queue_column": "entrypoint", "state": "queued"}
        failed_queues = {"queue_column": "entrypoint", "state": "failed"}
        counts = [
            over_queues(s("count_queued", (COUNT_KEY, "ready", "scheduled", OLDEST_READY)), **queued),
            s("count_picked", (COUNT_KEY, "running", "stuck")),
        ]
        advice: tuple[IndexAdvice, ...] = ()
        if has_failed_index:
            counts.append(over_queues(s("count_failed", (COUNT_KEY, "dead")), **failed_queues))
            dead = with_parts(over_queues(s("dead", DEAD_COLUMNS), **failed_queues), __package__, "dead_row")
        else:  # still supplied, as a scan: in the poll while the table is small, else in the background
            counts.append(s("count_failed_scan", (COUNT_KEY, "dead")).scan())
            dead = with_parts(s("dead_scan", DEAD_COLUMNS).scan(), __package__, "dead_row")
            advice = (
                IndexAdvice(
                    Capability.DEAD,
                    f"CREATE INDEX CONCURRENTLY {sql.Identifier(f'{table}_pgq_top_failed').as_string(None)}"
                    f" ON {sql.Identifier(schema, table).as_string(None)} {FAILED_INDEX}",
                    "pgqueuer has no index on held failures: pgq-top scans for them (in the poll while the"
                    " table is small, else in the background); this index makes the figure live",
                    ("dead",),
                ),
            )
        rule = (
            f"picked, heartbeat older than {timeout:g} s (the workers' heartbeat timeout; pgqueuer then"
            f" re-picks the job; set {STALLED_ENV} to your workers' value)"
        )
        failed, stale = s("guard_failed", PREVIEW_COLUMNS), s("guard_stale", PREVIEW_COLUMNS)
        preview_failed = preview(failed, queue_column="entrypoint")
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
            states=(
                StateWord(State.READY.value, "queued, execute_after < now()"),
                StateWord(State.SCHEDULED.value, "queued, execute_after >= now()"),
                StateWord(State.RUNNING.value, "picked, heartbeat recent"),
                StateWord(State.STUCK.value, "picked, heartbeat older than the timeout"),
                StateWord(State.DEAD.value, "failed (entrypoints with on_failure='hold')"),
                StateWord(State.DONE.value, "deleted and logged as successful"),
            ),
            counts=tuple(counts),
            leases=s("leases", LEASE_COLUMNS),
            dead=dead,
            job=s("job", JOB_COLUMNS),
            claim_probe=s("claim_probe", ("id",)),
            actions=(
                ActionSpec(
                    kind=ActionKind.REQUEUE,
                    label="requeue (pgqueuer's retry transition)",
                    applies_to=State.STUCK,
                    effect="status queued, execute_after now(), attempts + 1, queue_manager_id cleared;"
                    " logged as queued",
                    guard=f"status = 'picked' AND heartbeat < now() - {timeout:g} s",
                    preview=preview(stale, queue_column="entrypoint"),
                    statement=guarded(
                        s("requeue", ("id",)), stale, queue_column="entrypoint", order_column="heartbeat"
                    ),
                ),
                ActionSpec(
                    kind=ActionKind.RETRY,
                    label="pgq requeue",
                    applies_to=State.DEAD,
                    effect="status queued, execute_after now(), attempts 0, queue_manager_id cleared;"
                    " logged as queued",
                    guard="status = 'failed'",
                    preview=preview_failed,
                    statement=guarded(s("requeue", ("id",)), failed, queue_column="entrypoint"),
                ),
                ActionSpec(
                    kind=ActionKind.DISCARD,
                    label="delete (pgqueuer's delete transition)",
                    applies_to=State.DEAD,
                    effect="the rows are deleted and logged as deleted",
                    guard="status = 'failed'",
                    preview=preview_failed,
                    statement=guarded(s("discard", ("id",)), failed, queue_column="entrypoint"),
                    destructive=True,
                ),
            ),
            # read over all queues together from indexes without a queue column (see the SQL)
            capped_overall=("running", "stuck"),
            liveness_known=True,
            advice=advice,
            unsupported=(
                (Capability.DONE, "pgqueuer deletes finished jobs (they are only logged)"),
                (Capability.THROUGHPUT, "not read from pgqueuer_statistics yet"),
            ),
            relations=((schema, table),),
        )


def _enum_of(catalog: Catalog, schema: str, type_name: str) -> tuple[str, ...] | None:
    """The labels of the enum a column's format_type() names ("pgqueuer_status" or "s.pgqueuer_status")."""
    name = type_name.split(".")[-1].strip('"')
    for e in catalog.enums_named(name):
        if e.schema == schema or "." in type_name:
            return e.labels
    return None
