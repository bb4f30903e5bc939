"""good_job (Rails; the `good_job` gem): detection and model of its `good_jobs` table, with
`good_job_processes` for liveness.

Every fact here was read in good_job 4.19.2's own source (lib/generators/good_job/templates/,
app/models/good_job/job.rb, job/lockable.rb, process.rb, concerns/good_job/advisory_lockable.rb):
docs/dialects.md lists them.

A job's state comes from its columns (good_job's scopes): queued = not performed, not finished,
scheduled_at <= now; scheduled = scheduled_at later; running = performed_at set, finished_at NULL;
discarded = finished with an error; succeeded = finished without. A running job is held by a session
advisory lock on md5("good_jobs-<id>") (the default :advisory strategy, and :hybrid) and, in 4.x,
names its process in locked_by_id (the only lock of the :skiplocked strategy, 4.15+).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from psycopg import sql

from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    OLDEST_READY,
    ActionKind,
    ActionSpec,
    Capability,
    IndexAdvice,
    Match,
    QueueModel,
    SearchColumns,
    State,
    Statement,
)
from pgq_tui.dialects.kit import HEAP_COUNT_CAP, Sql, found, index_advice, refused, state_words
from pgq_tui.dialects.sqlfiles import sql_part, sql_parts

KIND = "good-job"
PROCESSES = "good_job_processes"
DISCARD_MESSAGE = "Discarded by pgq-top"  # good_job's dashboard says "Discarded through dashboard"
# the columns pgq-top's statements read (good_job 4.x's good_jobs, create_good_jobs.rb.erb)
COLUMNS_READ = frozenset(
    ("id", "queue_name", "priority", "serialized_params", "scheduled_at", "performed_at", "finished_at",
     "error", "created_at", "updated_at", "active_job_id", "concurrency_key", "cron_key", "batch_id",
     "executions_count", "job_class", "error_event", "labels", "locked_by_id", "locked_at")
)  # fmt: skip
DETECTED_BY = frozenset(("queue_name", "serialized_params", "scheduled_at", "performed_at", "finished_at"))
PROCESS_COLUMNS = frozenset(("id", "updated_at", "state", "lock_type"))
# good_job's own index the ready/scheduled counts walk (Job.historic_finished_at_index_migrated?)
UNFINISHED_INDEX = "index_good_jobs_on_queue_name_priority_scheduled_at_unfinished"
# pgq-top's advice (optional: the figures are true without them). good_job has no index on
# performed_at, so its own unfinished index holds running rows too: the ready and scheduled counts
# read each row's heap tuple (bounded by the count cap); this one is index-only. And no index tells a
# released job from a queued one: without the second, they are counted by a scan.
WAITING_INDEX = "(queue_name, scheduled_at) WHERE finished_at IS NULL AND performed_at IS NULL"
# The count cap on the stock schema (no WAITING_INDEX): each entry of good_job's unfinished index the
# ready and scheduled counts walk costs its heap row (performed_at), 2 counts x queues x cap1 rows a
# poll. At the monitor's 1,000, 10 queues at 2M rows read 18,466 buffers (15.5 ms, 2026-12-06); at
# 250, 4,794 (7.5 ms). It bounds the counts capped over all queues too (running, stuck, dead, done:
# each entry a heap row for its queue_name, 1,003 buffers -> 253). With the index: the monitor's cap.
STOCK_COUNT_CAP = HEAP_COUNT_CAP
RELEASED_INDEX = (
    "(queue_name) WHERE finished_at IS NULL AND performed_at IS NOT NULL AND locked_by_id IS NULL"
)
STATES = state_words("""
    ready       queued: performed_at NULL, finished_at NULL, scheduled_at <= now
    scheduled   scheduled / retried: performed_at NULL, finished_at NULL, scheduled_at > now
    running     running: performed_at set, finished_at NULL, locked_by_id set, lock held or process alive
    stuck       running, no advisory lock held and its locked_by_id process not alive (expired or gone)
    released    running by its scope, but no locked_by_id (Process.cleanup released it): dequeued again
    dead        discarded: finished_at set, error set
    done        succeeded: finished_at set, error NULL
""")
BASE_PARTS = ("utcnow", "held", "job_locked", "process_active", "alive", "stuck", "liveness")


def version(catalog: Catalog, schema: str, table: str) -> str | None:
    """good_job's schema level, from the features its migrations add, as good_job itself checks them
    (Job.lock_type_column_exists?, lock_type_migrated?: a column and an index by name).

    >>> from pgq_tui.dialects.catalog import Catalog
    >>> version(Catalog(()), "public", "good_jobs") is None
    True
    """
    rel = catalog.relation(schema, table)
    if rel is None:
        return None
    indexes = {i.name for i in rel.indexes}
    if "index_good_jobs_on_unfinished_or_errored" in indexes or "index_good_jobs_on_discarded" in indexes:
        return "4.18+"
    if "lock_type" in rel.column_names and "index_good_jobs_for_candidate_dequeue_unlocked" in indexes:
        return "4.15+"
    if "locked_by_id" in rel.column_names:
        return "4.x"
    return "3.x"


def _base_parts() -> tuple[tuple[str, str], ...]:
    """The rules every statement and the search bind: BASE_PARTS, then the payload preview."""
    return (*sql_parts(__package__, *BASE_PARTS), ("payload", sql_part(__package__, "preview_text")))


def _parts(statement: Statement, *extra: tuple[str, str]) -> Statement:
    return replace(statement, parts=(*_base_parts(), *extra))


def _guarded(s: Sql, name: str, guard: str) -> Statement:
    """`name`.sql (the preview, or a transition beginning with `{chosen}`) under `guard_<guard>.sql`."""
    statement = s.preview(name) if name == "preview" else s.write(name)
    if name == "preview":
        statement = replace(statement, name=f"{KIND}.preview_{guard}")
    shared = (
        ("guard", sql_part(__package__, f"guard_{guard}")),
        ("admitted", sql_part(__package__, "admitted")),
        ("chosen", sql_part(__package__, "chosen")),
    )
    return _parts(statement, *shared)


@dataclass(frozen=True)
class GoodJobDialect:
    kind: str = KIND
    title: str = "good_job"
    versions: str = (
        "4.x (schema from good_job 4.19.2's migrations; lock strategies advisory, skiplocked, hybrid)"
    )
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("good_jobs"):
            if rel.kind != "r" or not rel.column_names >= DETECTED_BY:
                continue
            v = version(catalog, rel.schema, rel.name)
            tables = tuple(t for t in (PROCESSES, "good_job_executions", "good_job_settings")
                           if catalog.relation(rel.schema, t) is not None)  # fmt: skip
            evidence = f"{rel.schema}.good_jobs (performed_at, finished_at, scheduled_at; {v} by its indexes)"
            out.append(found(KIND, rel, v, evidence, len(DETECTED_BY) + len(tables), *tables))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        rel = catalog.relation(schema, match.table)
        procs = catalog.relation(schema, PROCESSES)
        missing = sorted(COLUMNS_READ - (rel.column_names if rel else frozenset()))
        missing += sorted(
            f"{PROCESSES}.{c}" for c in PROCESS_COLUMNS - (procs.column_names if procs else frozenset())
        )
        if missing:
            why = f"good_job schema {match.version} lacks {', '.join(missing)} (good_job 4.x's schema)"
            return refused(match, self.title, f"{why}: run good_job's migrations (rails g good_job:update)")
        if rel is not None and UNFINISHED_INDEX not in {i.name for i in rel.indexes}:
            why = f"{match.table} lacks good_job's own {UNFINISHED_INDEX}; pgq-top does not scan the table"
            return refused(match, self.title, f"{why}: run good_job's migrations")
        idents = {"gj": (schema, match.table), "gp": (schema, PROCESSES)}
        literals = {
            "jobs_name": (match.table,),
            "processes_name": (PROCESSES,),
            "discard_message": (DISCARD_MESSAGE,),
        }
        s = Sql(__package__, KIND, idents, literals)
        unfinished = ("finished_at IS NULL",)
        waiting = (*unfinished, "performed_at IS NULL")
        released = (*unfinished, "performed_at IS NOT NULL", "locked_by_id IS NULL")
        has_waiting = rel is not None and rel.has_index(
            ("queue_name", "scheduled_at"), also=waiting, only=waiting
        )
        has_released = rel is not None and rel.has_index(("queue_name",), also=released, only=released)
        rule = (
            "running (performed_at set, finished_at NULL) on the process its locked_by_id names, no"
            " session holds the job's advisory lock (md5 of '<table>-<id>', good_job's key), and that"
            " process is not alive by good_job's own GoodJob::Process.active: its advisory lock is gone"
            " (lock_type advisory), its row is older than 5 minutes (EXPIRED_INTERVAL), or it has no"
            " row. A running job with no locked_by_id is 'released' (Process.cleanup cleared it):"
            " good_job's next dequeue takes it again"
        )
        return QueueModel(
            match=match,
            title=self.title,
            stuck_rule=rule,
            stuck_label="running, no advisory lock and its process expired (good_job's rules)",
            states=STATES,
            counts=(
                _parts(s.count("count_waiting", "ready", "scheduled", OLDEST_READY)),
                _parts(
                    s.count("count_running", "running", "stuck"),
                    ("unexplained_lock", sql_part(__package__, "unexplained_lock")),
                ),
                # no index of good_job's tells a released job from a queued one (none on
                # performed_at): a scan, unless the advised index is there
                _parts(s.count("count_released", "released", indexed=has_released)),
                _parts(s.count("count_finished", "dead", "done")),
            ),
            leases=_parts(s.leases()),
            dead=_parts(s.dead()),
            job=_parts(s.job()),
            claim_probe=_parts(s.probe()),
            actions=(
                ActionSpec(
                    ActionKind.CANCEL,
                    "discard (GoodJob::Job#discard_job)",
                    State.READY,
                    "good_job's discard_job: finished_at now, error 'GoodJob::Job::DiscardJobError:"
                    f" {DISCARD_MESSAGE}', error_event discarded; the job shows as discarded (dead)",
                    "finished_at IS NULL, no advisory lock held on it, and waiting (not performed,"
                    " locked_by_id NULL) or stuck: never a running job of a live worker",
                    _guarded(s, "preview", "discard"),
                    _guarded(s, "discard", "discard"),
                    destructive=True,
                    also_applies_to=(State.SCHEDULED.value, State.STUCK.value),
                ),
                ActionSpec(
                    ActionKind.REQUEUE,
                    "reschedule (GoodJob::Job#reschedule_job)",
                    State.SCHEDULED,
                    "good_job's reschedule_job: scheduled_at now, so the next free thread runs it",
                    "finished_at IS NULL AND performed_at IS NULL AND scheduled_at > now, no advisory"
                    " lock held on it",
                    _guarded(s, "preview", "reschedule"),
                    _guarded(s, "reschedule", "reschedule"),
                ),
            ),
            needs_app=(
                (
                    ActionKind.RETRY,
                    "good_job's retry (GoodJob::Job#retry_job) deserializes the job with ActiveJob and"
                    " re-enqueues it through the app's adapter: it needs the app (good_job's dashboard,"
                    " or GoodJob::Job.find(id).retry_job in a Rails console)",
                ),
            ),
            advice=_advice((schema, match.table), has_waiting, has_released),
            count_cap=None if has_waiting else STOCK_COUNT_CAP,
            extra_states=("released",),
            # released too: through the advised index it is read up to the cap over all queues
            capped_overall=("running", "stuck", "dead", "done", "released"),
            liveness_known=True,
            unsupported=((Capability.THROUGHPUT, "good_job keeps no counters"),),
            search=_search((schema, match.table), (schema, PROCESSES)),
            relations=((schema, match.table),),
            required_columns=tuple(sorted(COLUMNS_READ)),
            setup_hint="install good_job in the Rails app: rails g good_job:install && rails db:migrate",
        )


def _advice(jobs: tuple[str, str], has_waiting: bool, has_released: bool) -> tuple[IndexAdvice, ...]:
    """The indexes pgq-top offers for good_jobs, those not there yet."""
    table = jobs[1]
    waiting = index_advice(
        Capability.COUNTS,
        sql.Identifier(f"{table}_pgq_top_waiting").as_string(None),
        jobs,
        WAITING_INDEX,
        "good_job has no index on performed_at: the ready and scheduled counts read each job's row"
        " (up to the count cap per queue); this index answers them from the index alone",
        (),  # no state: those counts are live without it, only cheaper with it
    )
    released = index_advice(
        Capability.COUNTS,
        sql.Identifier(f"{table}_pgq_top_released").as_string(None),
        jobs,
        RELEASED_INDEX,
        "no index of good_job's tells a released job from a queued one: pgq-top scans for them (in the"
        " poll while the table is small, else in the background); this index makes the figure live",
        ("released",),
    )
    return tuple(a for a, there in ((waiting, has_waiting), (released, has_released)) if not there)


def _search(jobs: tuple[str, str], processes: tuple[str, str]) -> SearchColumns:
    """The search language on good_jobs (docs/search.md): args. reads serialized_params (ActiveJob's
    job_class, arguments, ...), tags: its labels; states by good_job's scopes and the stuck rule of
    the counts (stuck.sql). Its times are UTC timestamps without a zone: read as UTC."""
    unfinished = "j.finished_at IS NULL"
    performing = f"j.performed_at IS NOT NULL AND {unfinished}"
    return SearchColumns(
        jobs=jobs,
        states=(
            ("ready", f"j.performed_at IS NULL AND {unfinished} AND j.scheduled_at <= {{utcnow}}"),
            ("scheduled", f"j.performed_at IS NULL AND {unfinished} AND j.scheduled_at > {{utcnow}}"),
            ("running", f"{performing} AND j.locked_by_id IS NOT NULL AND NOT ({{stuck}})"),
            ("stuck", "{stuck}"),
            ("released", f"{performing} AND j.locked_by_id IS NULL"),
            ("dead", "j.finished_at IS NOT NULL AND j.error IS NOT NULL"),
            ("done", "j.finished_at IS NOT NULL AND j.error IS NULL"),
        ),
        integer_ids=False,
        order="created_at",  # good_job's ids are random uuids; index_good_jobs_on_created_at
        queue="queue_name",
        error="j.error",
        time="j.updated_at AT TIME ZONE 'UTC'",
        time_words="updated_at (the last change: the enqueue, a start, a failure or the finish)",
        documents=(("args", "serialized_params"),),
        payload="{payload}",
        tags="labels",
        literals=(("jobs_name", jobs[1]), ("processes_name", processes[1])),
        idents=(("gj", jobs), ("gp", processes)),
        parts=_base_parts(),
    )
