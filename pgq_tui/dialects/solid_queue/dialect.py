"""Solid Queue (Rails, `rails/solid_queue`): detection and model of `solid_queue_*`.

A job's state is which execution table holds it: ready, scheduled, claimed, failed or blocked
(`finished_at` set: done). Stuck is Solid Queue's own rule: a claimed execution whose process's
heartbeat is `process_alive_threshold` (5 min) old or more, which the supervisor prunes, or whose
process row is gone. Its requeue does what the supervisor does with such claims: it fails them
(ProcessPrunedError / ProcessMissingError), never re-dispatches them. The threshold is an app
setting the database does not record: set PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD (seconds) when yours
differs. Rails writes UTC `timestamp without time zone`: comparisons are with UTC now, times shown
are converted to timestamptz.
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
from pgq_tui.dialects.sqlfiles import sql_file

KIND = "solid-queue"
ALIVE_ENV = "PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD"
DEFAULT_ALIVE_THRESHOLD_S = 300.0  # SolidQueue.process_alive_threshold
PREFIX = "solid_queue_"
# table suffix -> the columns pgq-top reads there
TABLES = {
    "jobs": frozenset(("id", "queue_name", "class_name", "arguments", "priority", "scheduled_at",
                       "finished_at", "concurrency_key", "created_at")),
    "ready_executions": frozenset(("job_id", "queue_name", "priority", "created_at")),
    "scheduled_executions": frozenset(("job_id", "queue_name", "priority", "scheduled_at", "created_at")),
    "claimed_executions": frozenset(("job_id", "process_id", "created_at")),
    "failed_executions": frozenset(("job_id", "error", "created_at")),
    "blocked_executions": frozenset(("job_id", "queue_name", "priority", "concurrency_key")),
    "processes": frozenset(("id", "kind", "last_heartbeat_at", "pid", "hostname", "name")),
}  # fmt: skip
# Solid Queue's own indexes each count walks: (capability, table, leading columns, its name)
INDEXES = (
    (Capability.OLDEST_READY, "ready_executions", ("queue_name", "priority", "job_id"),
     "index_solid_queue_poll_by_queue"),
    (Capability.DONE, "jobs", ("queue_name", "finished_at"), "index_solid_queue_jobs_for_filtering"),
)  # fmt: skip
STATES = (
    StateWord(State.READY.value, "a row in solid_queue_ready_executions"),
    StateWord(State.SCHEDULED.value, "a row in solid_queue_scheduled_executions"),
    StateWord(State.RUNNING.value, "claimed, its process heartbeating"),
    StateWord(State.STUCK.value, "claimed, its process silent past the threshold or gone"),
    StateWord(State.DEAD.value, "a row in solid_queue_failed_executions"),
    StateWord(State.DONE.value, "finished_at set (kept while preserve_finished_jobs; 1 day)"),
    StateWord("blocked", "a row in solid_queue_blocked_executions (concurrency limit)"),
)


def alive_threshold_from_env(default: float = DEFAULT_ALIVE_THRESHOLD_S) -> float:
    """The process alive threshold in seconds: PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD when positive."""
    return seconds_from_env(ALIVE_ENV, default)


def version(catalog: Catalog, schema: str) -> str:
    """Solid Queue keeps no version table: its tables say the least version.

    >>> from pgq_tui.dialects.catalog import Catalog, table
    >>> version(Catalog((table("s", "solid_queue_recurring_tasks", {"key": "text"}),)), "s")
    '1.0+'
    """
    if catalog.relation(schema, PREFIX + "recurring_tasks") is not None:
        return "1.0+"
    return "0.x"


@dataclass(frozen=True)
class SolidQueueDialect:
    alive_threshold_s: float | None = None  # None: PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD, else 5 min
    kind: str = KIND
    title: str = "Solid Queue"
    versions: str = "1.x (tables of its queue_schema.rb; tested with 1.5's)"
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named(PREFIX + "jobs"):
            if rel.kind not in ("r", "p"):
                continue
            present = [
                (catalog.relation(rel.schema, PREFIX + suffix), columns) for suffix, columns in TABLES.items()
            ]
            if not all(r is not None and r.column_names >= cols for r, cols in present):
                continue
            out.append(
                Match(
                    kind=KIND,
                    schema=rel.schema,
                    table=rel.name,
                    version=version(catalog, rel.schema),
                    evidence=f"{rel.schema}.solid_queue_jobs with its ready, scheduled, claimed, failed and"
                    " blocked executions and processes tables",
                    score=sum(len(c) for c in TABLES.values()),
                    tables=tuple(PREFIX + suffix for suffix in TABLES),
                )
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        threshold = self.alive_threshold_s or alive_threshold_from_env()
        idents = {suffix.split("_")[0]: (schema, PREFIX + suffix) for suffix in TABLES}

        def s(name: str, columns: tuple[str, ...]) -> Statement:
            return Statement.of(
                f"solid_queue.{name}",
                sql_file(__package__, name),
                columns,
                literals={"alive_threshold_s": (float(threshold),)},
                **idents,
            )

        advice = _missing_indexes(catalog, schema)
        missing = {a.capability for a in advice}
        counts = [
            s("count_overall", (COUNT_KEY, "scheduled", "dead", "blocked")),
            s("count_claimed", (COUNT_KEY, "running", "stuck")),
        ]
        # Solid Queue's own index missing: the statement is still supplied, as a scan (in the poll while
        # the table is small, else in the background); the index is advice
        ready = s("count_ready", (COUNT_KEY, "ready", OLDEST_READY))
        counts.insert(0, ready.scan() if Capability.OLDEST_READY in missing else ready)
        done = s("count_done", (COUNT_KEY, "done"))
        counts.append(done.scan() if Capability.DONE in missing else done)
        rule = (
            f"Solid Queue: a claimed execution whose process's last_heartbeat_at is {threshold:g} s old or"
            f" more (process_alive_threshold; set {ALIVE_ENV} to yours) or whose process row is gone"
        )
        preview_failed = s("preview_failed", PREVIEW_COLUMNS)
        return QueueModel(
            match=match,
            finished=s("finished", FINISHED_DONE),
            finished_scans=((schema, PREFIX + "failed_executions"),),  # created_at has no index
            activity=activity_statement(
                "solid_queue.activity", jobs=idents["jobs"], id="id", queue_of_j="j.queue_name"
            ),
            title=self.title,
            stuck_rule=rule,
            states=STATES,
            counts=tuple(counts),
            leases=s("leases", LEASE_COLUMNS),
            dead=s("dead", DEAD_COLUMNS),
            job=s("job", JOB_COLUMNS),
            claim_probe=s("claim_probe", ("id",)),
            actions=(
                ActionSpec(
                    kind=ActionKind.REQUEUE,
                    label="Process#prune, ClaimedExecution.fail_all_with (as its supervisor does)",
                    applies_to=State.STUCK,
                    effect="the job fails as Solid Queue fails a dead process's claims: a failed execution"
                    " with SolidQueue::Processes::ProcessPrunedError (ProcessMissingError when the process"
                    " row is gone), the claim deleted; retry it from the dead jobs",
                    guard=f"claimed, and its process's heartbeat is {threshold:g} s old or more, or gone;"
                    " re-checked on the locked process row",
                    preview=s("preview_stuck", PREVIEW_COLUMNS),
                    statement=s("fail_stuck", ("id",)),
                    done="failed",
                ),
                ActionSpec(
                    kind=ActionKind.RETRY,
                    label="FailedExecution#retry",
                    applies_to=State.DEAD,
                    effect="executions counters reset; a ready execution (a scheduled one if not yet due);"
                    " the failed execution deleted",
                    guard="a failed execution exists, and the job has no concurrency key",
                    preview=s("preview_retry", PREVIEW_COLUMNS),
                    statement=s("retry", ("id",)),
                ),
                ActionSpec(
                    kind=ActionKind.DISCARD,
                    label="FailedExecution#discard",
                    applies_to=State.DEAD,
                    effect="the job is deleted, with its failed execution",
                    guard="a failed execution exists",
                    preview=preview_failed,
                    statement=s("discard", ("id",)),
                    destructive=True,
                ),
            ),
            extra_states=("blocked",),
            capped_overall=(State.SCHEDULED.value, State.DEAD.value, "blocked"),
            liveness_known=True,
            advice=advice,
            unsupported=((Capability.THROUGHPUT, "Solid Queue keeps no counters"),),
            relations=tuple((schema, PREFIX + suffix) for suffix in TABLES if suffix != "processes"),
        )


def _missing_indexes(catalog: Catalog, schema: str) -> tuple[IndexAdvice, ...]:
    out = []
    for cap, suffix, leading, name in INDEXES:
        rel = catalog.relation(schema, PREFIX + suffix)
        if rel is not None and not rel.has_index(leading):
            cols = ", ".join(leading)
            where = sql.Identifier(schema, PREFIX + suffix).as_string(None)
            out.append(
                IndexAdvice(
                    cap,
                    f"CREATE INDEX CONCURRENTLY {name} ON {where} ({cols})",
                    f"Solid Queue's own {name} is missing: pgq-top scans instead (in the poll while the"
                    " table is small, else in the background); recreating it makes the figure live",
                    ("ready",) if cap == Capability.OLDEST_READY else ("done",),
                )
            )
    return tuple(out)
