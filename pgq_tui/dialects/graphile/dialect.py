"""Graphile Worker 0.16-0.18 (`_private_jobs` behind the `jobs` view): detection and model.

States are derived, not stored: a locked job is running, and stuck once its lock is older than the
4 hours after which Graphile's own pools clear it; an unlocked job with attempts >= max_attempts is
dead (kept); the rest wait for run_at. Finished jobs are deleted. Queues are task identifiers (a
named queue_name only serialises jobs, and is shown in the job detail).
"""

from __future__ import annotations

from dataclasses import replace

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    OLDEST_READY,
    Capability,
    IndexAdvice,
    Match,
    QueueModel,
    ScheduleSource,
    SearchColumns,
)
from pgq_tui.dialects.guarded import with_parts
from pgq_tui.dialects.kit import Sql, discard, found, index_advice, requeue, retry, state_words
from pgq_tui.schedules.model import SCHEDULE_COLUMNS

KIND = "graphile-worker"
JOB_COLUMNS_SEEN = frozenset(
    ("id", "task_id", "job_queue_id", "run_at", "attempts", "max_attempts", "locked_at", "locked_by",
     "last_error", "is_available", "payload", "priority")
)  # fmt: skip
SIBLINGS = ("_private_tasks", "_private_job_queues", "migrations")
# Highest id in graphile_worker.migrations -> release (QUEUE_FRAMEWORKS.md). 0.18's migration 20 only
# replaces add_job()/add_jobs() (task and queue rows without consuming identities): tables unchanged.
RELEASES = {18: "0.16", 19: "0.17", 20: "0.18"}
STUCK_RULE = "locked for more than 4 hours (Graphile Worker's lock expiry; its pools then unlock the job)"
LOCK_INDEX = "(task_id, locked_at) WHERE locked_at IS NOT NULL"
DEAD_INDEX = "(task_id, updated_at) WHERE locked_at IS NULL AND attempts >= max_attempts"
STATES = state_words("""
    ready       unlocked, attempts < max_attempts, run_at <= now()
    scheduled   unlocked, attempts < max_attempts, run_at > now() (incl. retry backoff)
    running     locked_at set, within 4 hours
    stuck       locked_at older than 4 hours
    dead        unlocked, attempts >= max_attempts (kept)
    done        deleted: Graphile keeps no finished jobs
""")


def release(migration: str | None) -> str | None:
    """The release a migration number stands for.

    >>> release("20"), release("19"), release("18"), release("25"), release(None)
    ('0.18', '0.17', '0.16', 'migration 25', None)
    """
    if migration is None:
        return None
    return RELEASES.get(int(migration), f"migration {migration}")


class GraphileDialect:
    kind = KIND
    title = "Graphile Worker"
    versions = "0.16-0.18 (migrations 18-20; tested with 0.17.3 and 0.18.0)"
    version_markers: tuple[VersionMarker, ...] = (VersionMarker("migrations", "id"),)

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("_private_jobs"):
            if not rel.column_names >= JOB_COLUMNS_SEEN:
                continue
            if any(catalog.relation(rel.schema, name) is None for name in SIBLINGS):
                continue
            version = release(catalog.marker(rel.schema, "migrations", "id"))
            evidence = f"{rel.schema}._private_jobs with {', '.join(SIBLINGS)}"
            out.append(found(KIND, rel, version, evidence, len(JOB_COLUMNS_SEEN) + len(SIBLINGS), *SIBLINGS))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        idents = {
            "jobs": (schema, "_private_jobs"),
            "tasks": (schema, "_private_tasks"),
            "queues": (schema, "_private_job_queues"),
            "reschedule_jobs": (schema, "reschedule_jobs"),
            "complete_jobs": (schema, "complete_jobs"),
        }
        s = Sql(__package__, "graphile", idents)
        rel = catalog.relation(schema, match.table)
        has_lock_index = rel is not None and rel.has_index(
            ("task_id", "locked_at"), also=["locked_at IS NOT NULL"]
        )
        has_dead_index = rel is not None and rel.has_index(
            ("task_id",), also=["locked_at IS NULL", "attempts >= max_attempts"]
        )
        # Without an advised index each statement is still supplied, as a scan (Statement.indexed
        # False): the engine runs it in the poll while the table is small, else in the background.
        counts = (
            s.count("count_available", "ready", "scheduled", OLDEST_READY),
            s.count("count_locked", "running", "stuck", indexed=has_lock_index),
            s.count("count_dead", "dead", indexed=has_dead_index),
        )
        locked = _advice(
            Capability.LEASES, schema, "pgq_top_locked_jobs", LOCK_INDEX, "running and stuck jobs"
        )
        dead = _advice(Capability.DEAD, schema, "pgq_top_dead_jobs", DEAD_INDEX, "dead jobs")
        advice = tuple(a for a, indexed in ((locked, has_lock_index), (dead, has_dead_index)) if not indexed)
        dead_guard = "locked_at IS NULL AND attempts >= max_attempts"
        return QueueModel(
            match=match,
            # new jobs per task (the counts' queue), the task's identifier looked up by its primary key
            activity=activity_statement(
                "graphile.activity",
                jobs=idents["jobs"],
                id="id",
                queue_of_j="(SELECT t.identifier FROM {tasks} t WHERE t.id = j.task_id)",
                tasks=idents["tasks"],
            ),
            title=self.title,
            stuck_rule=STUCK_RULE,
            states=STATES,
            counts=counts,
            **s.reads(
                s.leases(indexed=has_lock_index),
                s.dead(indexed=has_dead_index),
            ),
            actions=(
                requeue(
                    s,
                    "unlock (Graphile's own lock expiry)",
                    "locked_at, locked_by cleared (and the same worker's lock on the job's named"
                    " queue); run_at at least now(); attempts stay counted",
                    "locked_at < now() - interval '4 hours'",
                    "preview_stuck",
                ),
                retry(
                    s,
                    "reschedule_jobs()",
                    "graphile_worker.reschedule_jobs(ids, run_at => now(), attempts => 0)",
                    dead_guard,
                    "preview_dead",
                    with_parts(s.write("retry"), __package__, "dead_ids"),
                ),
                discard(
                    s,
                    "complete_jobs()",
                    "graphile_worker.complete_jobs(ids): the rows are deleted",
                    dead_guard,
                    "preview_dead",
                    write=with_parts(s.write("discard"), __package__, "dead_ids"),
                ),
            ),
            # its claim index has no task column: ready and scheduled are read over all tasks together
            capped_overall=("ready", "scheduled"),
            advice=advice,
            unsupported=(
                (Capability.DONE, "Graphile Worker deletes finished jobs"),
                (Capability.LATENCY, "Graphile Worker deletes finished jobs: no finish times to read"),
                (Capability.LIVENESS, "Graphile Worker ties no worker id (locked_by) to a session"),
                (Capability.THROUGHPUT, "Graphile Worker keeps no counters"),
            ),
            relations=((schema, "_private_jobs"),),
            search=replace(_search(idents["jobs"], idents["tasks"]), indexed_states=_dead_index(rel)),
            schedules=_schedules(catalog, schema),
        )


def _advice(cap: Capability, schema: str, name: str, definition: str, what: str) -> IndexAdvice:
    why = (
        f"Graphile Worker has no index for {what}: pgq-top scans for them (in the poll while the table is"
        " small, else in the background, stale); this index makes the figure live"
    )
    states = ("running", "stuck") if cap == Capability.LEASES else ("dead",)
    return index_advice(cap, name, (schema, "_private_jobs"), definition, why, states)


def _search(jobs: tuple[str, str], tasks: tuple[str, str]) -> SearchColumns:
    """The search language on Graphile Worker's jobs: the payload is its args, the queue its task
    identifier; Graphile keeps no finished jobs, so there is no state:done (docs/search.md)."""
    waiting = "j.locked_at IS NULL AND j.attempts < j.max_attempts"
    return SearchColumns(
        jobs=jobs,
        states=(
            ("ready", f"{waiting} AND j.run_at <= now()"),
            ("scheduled", f"{waiting} AND j.run_at > now()"),
            ("running", "j.locked_at >= now() - interval '4 hours'"),
            ("stuck", "j.locked_at < now() - interval '4 hours'"),
            ("dead", "j.locked_at IS NULL AND j.attempts >= j.max_attempts"),
        ),
        queue=None,
        queue_expr="SELECT t.identifier FROM {tasks} t WHERE t.id = j.task_id",
        error="j.last_error",
        time="j.updated_at",
        time_words="updated_at (the last attempt's failure, or the insert)",
        documents=(("args", "payload"),),
        payload="j.payload",
        idents=(("tasks", tasks),),
    )


def _schedules(catalog: Catalog, schema: str) -> ScheduleSource | None:
    """The known crontabs: each identifier's last execution (the crontab file has the rest)."""
    if catalog.relation(schema, "_private_known_crontabs") is None:
        return None
    s = Sql(__package__, "graphile", {"crontabs": (schema, "_private_known_crontabs")})
    return ScheduleSource(
        statement=s("schedules", SCHEDULE_COLUMNS),
        links="none kept: a cron job is an ordinary job of its task (the queue column is the task)",
        timezone_rule="UTC (Graphile Worker's cron)",
        expressions_elsewhere="Graphile Worker keeps the expression in the app's crontab file: pass it"
        " with --crontab FILE",
    )


def _dead_index(rel: Relation | None) -> tuple[tuple[str, str], ...]:
    """dead -> the advised dead-jobs index (DEAD_INDEX), where the operator made it: a state:dead
    search reads every dead job through it (Graphile's own indexes serve no dead job)."""
    index = None
    if rel is not None:
        index = rel.index_for(("task_id",), also=["locked_at IS NULL", "attempts >= max_attempts"])
    return (("dead", index.name),) if index is not None else ()
