"""Solid Queue (Rails, `rails/solid_queue`): detection and model of `solid_queue_*`.

A job's state is which execution table holds it: ready, scheduled, claimed, failed or blocked
(`finished_at` set: done). Stuck is Solid Queue's own rule: a claimed execution whose process's
heartbeat is `process_alive_threshold` (5 min) old or more, which the supervisor prunes, or whose
process row is gone. Its requeue does what the supervisor does with such claims: it fails them
(ProcessPrunedError / ProcessMissingError), never re-dispatches them. The threshold is an app
setting the database does not record (ALIVE_THRESHOLD): set a target's solid_queue_alive_threshold,
or PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD (seconds), when yours differs. Rails writes UTC `timestamp
without time zone`: comparisons are with UTC now, times shown are converted to timestamptz.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    FINISHED_DONE,
    OLDEST_READY,
    Capability,
    IndexAdvice,
    Match,
    PauseSpec,
    QueueModel,
    ScheduleSource,
    SearchColumns,
    State,
)
from pgq_tui.dialects.kit import (
    Setting,
    Sql,
    discard,
    found,
    index_advice,
    pause_spec,
    requeue,
    retry,
    state_words,
)
from pgq_tui.schedules.model import SCHEDULE_COLUMNS, SCHEDULE_JOB_COLUMNS

KIND = "solid-queue"
ALIVE_THRESHOLD = Setting(
    "solid_queue_alive_threshold",
    "alive_threshold_s",
    300.0,  # SolidQueue.process_alive_threshold
    "PGQ_TOP_SOLID_QUEUE_ALIVE_THRESHOLD",
    "Solid Queue's process_alive_threshold, in seconds: a claim whose process is silent longer is stuck",
)
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
STATES = state_words("""
    ready       a row in solid_queue_ready_executions
    scheduled   a row in solid_queue_scheduled_executions
    running     claimed, its process heartbeating
    stuck       claimed, its process silent past the threshold or gone
    dead        a row in solid_queue_failed_executions
    done        finished_at set (kept while preserve_finished_jobs; 1 day)
    blocked     a row in solid_queue_blocked_executions (concurrency limit)
""")


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
    alive_threshold_s: float | None = None  # ALIVE_THRESHOLD, set by the engine; None: 5 min
    settings: ClassVar[tuple[Setting, ...]] = (ALIVE_THRESHOLD,)
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
            evidence = (
                f"{rel.schema}.solid_queue_jobs with its ready, scheduled, claimed, failed and blocked"
                " executions and processes tables"
            )
            score = sum(len(c) for c in TABLES.values())
            others = (PREFIX + suffix for suffix in TABLES if suffix != "jobs")
            out.append(found(KIND, rel, version(catalog, rel.schema), evidence, score, *others))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        threshold = ALIVE_THRESHOLD.value(self.alive_threshold_s)
        idents = {suffix.split("_")[0]: (schema, PREFIX + suffix) for suffix in TABLES}
        s = Sql(__package__, "solid_queue", idents, {"alive_threshold_s": (float(threshold),)})
        advice = _missing_indexes(catalog, schema)
        missing = {a.capability for a in advice}
        # Solid Queue's own index missing: the statement is still supplied, as a scan (in the poll while
        # the table is small, else in the background); the index is advice
        ready = s.count("count_ready", "ready", OLDEST_READY)
        done = s.count("count_done", "done")
        counts = (
            ready.scan() if Capability.OLDEST_READY in missing else ready,
            s.count("count_overall", "scheduled", "dead", "blocked"),
            s.count("count_claimed", "running", "stuck"),
            done.scan() if Capability.DONE in missing else done,
        )
        rule = (
            f"Solid Queue: a claimed execution whose process's last_heartbeat_at is {threshold:g} s old or"
            f" more (process_alive_threshold; set {ALIVE_THRESHOLD.env} to yours) or whose process row is"
            " gone"
        )
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
            counts=counts,
            **s.reads(),
            actions=(
                requeue(
                    s,
                    "Process#prune, ClaimedExecution.fail_all_with (as its supervisor does)",
                    "the job fails as Solid Queue fails a dead process's claims: a failed execution"
                    " with SolidQueue::Processes::ProcessPrunedError (ProcessMissingError when the process"
                    " row is gone), the claim deleted; retry it from the dead jobs",
                    f"claimed, and its process's heartbeat is {threshold:g} s old or more, or gone;"
                    " re-checked on the locked process row",
                    "preview_stuck",
                    "fail_stuck",
                    done="failed",
                ),
                retry(
                    s,
                    "FailedExecution#retry",
                    "executions counters reset; a ready execution (a scheduled one if not yet due);"
                    " the failed execution deleted",
                    "a failed execution exists, and the job has no concurrency key",
                    "preview_retry",
                ),
                discard(
                    s,
                    "FailedExecution#discard",
                    "the job is deleted, with its failed execution",
                    "a failed execution exists",
                    "preview_failed",
                ),
            ),
            extra_states=("blocked",),
            capped_overall=(State.SCHEDULED.value, State.DEAD.value, "blocked"),
            liveness_known=True,
            advice=advice,
            unsupported=(
                (Capability.THROUGHPUT, "Solid Queue keeps no counters"),
                (Capability.LATENCY, "Solid Queue records no start time of a finished job"),
            ),
            relations=tuple((schema, PREFIX + suffix) for suffix in TABLES if suffix != "processes"),
            search=_search(idents, float(threshold)),
            schedules=_schedules(catalog, schema, idents),
            pause=_pause(schema) if catalog.relation(schema, PREFIX + "pauses") else None,
        )


def _schedules(catalog: Catalog, schema: str, idents: dict[str, tuple[str, str]]) -> ScheduleSource | None:
    """The recurring tasks (Solid Queue 1.0's solid_queue_recurring_tasks and _executions), when
    the schema has them."""
    tables = ("recurring_tasks", "recurring_executions")
    if any(catalog.relation(schema, PREFIX + t) is None for t in tables):
        return None
    s = Sql(__package__, "solid_queue", {**idents, **{t: (schema, PREFIX + t) for t in tables}})
    return ScheduleSource(
        statement=s("schedules", SCHEDULE_COLUMNS),
        jobs=s("schedule_jobs", SCHEDULE_JOB_COLUMNS),
        links="solid_queue_recurring_executions.job_id: each run's job, exactly",
        timezone_rule="a Fugit schedule's own zone (a trailing IANA name), else UTC (pgq-top cannot see"
        " the app's Time.zone)",
        seconds_first=True,
    )


def _pause(schema: str) -> PauseSpec:
    """Solid Queue's Queue#pause / #resume (app/models/solid_queue/queue.rb): a solid_queue_pauses row."""
    s = Sql(
        __package__, "solid_queue", {"jobs": (schema, PREFIX + "jobs"), "pauses": (schema, PREFIX + "pauses")}
    )
    return pause_spec(
        s,
        "Queue#pause / Queue#resume",
        "a row in solid_queue_pauses: workers leave the queue out of their polls; claimed jobs finish",
        "its solid_queue_pauses row deleted: workers poll the queue again",
        "at each worker's next poll (polling_interval, 0.1 s by default)",
        state_source="solid_queue_pauses",
    )


def _missing_indexes(catalog: Catalog, schema: str) -> tuple[IndexAdvice, ...]:
    out = []
    for cap, suffix, leading, name in INDEXES:
        rel = catalog.relation(schema, PREFIX + suffix)
        if rel is not None and not rel.has_index(leading):
            out.append(
                index_advice(
                    cap,
                    name,
                    (schema, PREFIX + suffix),
                    f"({', '.join(leading)})",
                    f"Solid Queue's own {name} is missing: pgq-top scans instead (in the poll while the"
                    " table is small, else in the background); recreating it makes the figure live",
                    ("ready",) if cap == Capability.OLDEST_READY else ("done",),
                )
            )
    return tuple(out)


def _search(idents: dict[str, tuple[str, str]], alive_threshold_s: float) -> SearchColumns:
    """The search language on Solid Queue: a job's state is the execution table that holds it, its
    error the failed execution's. `arguments` is text, not jsonb, so args. is refused (docs/search.md)."""
    alive = (
        "EXISTS (SELECT 1 FROM {processes} p WHERE p.id = c.process_id"
        " AND p.last_heartbeat_at > (now() AT TIME ZONE 'UTC') - make_interval(secs => {alive_threshold_s}))"
    )
    claimed = "EXISTS (SELECT 1 FROM {claimed} c WHERE c.job_id = j.id AND "

    def held(table: str) -> str:
        return f"j.finished_at IS NULL AND EXISTS (SELECT 1 FROM {{{table}}} x WHERE x.job_id = j.id)"

    return SearchColumns(
        jobs=idents["jobs"],
        states=(
            ("done", "j.finished_at IS NOT NULL"),
            ("ready", held("ready")),
            ("scheduled", held("scheduled")),
            ("running", f"j.finished_at IS NULL AND {claimed}{alive})"),
            ("stuck", f"j.finished_at IS NULL AND {claimed}NOT {alive})"),
            ("dead", held("failed")),
            ("blocked", held("blocked")),
        ),
        queue="queue_name",
        error="SELECT f.error FROM {failed} f WHERE f.job_id = j.id",
        time="coalesce(j.finished_at, (SELECT f.created_at FROM {failed} f WHERE f.job_id = j.id),"
        " j.created_at) AT TIME ZONE 'UTC'",
        time_words="finished_at, else the failure's created_at, else created_at (UTC)",
        payload="j.arguments",
        literals=(("alive_threshold_s", alive_threshold_s),),
        idents=tuple((k, v) for k, v in sorted(idents.items()) if k != "jobs"),
    )
