"""Que (the Ruby gem `que`, que-rb/que): detection and model of its `que_jobs` table.

Every fact here was read in Que 2.4.1's own source (lib/que/migrations/1..7, lib/que/migrations.rb,
lib/que/locker.rb, lib/que/poller.rb, lib/que/job_methods.rb, lib/que/utils/introspection.rb,
docs/README.md): docs/dialects.md lists them.

Que has no "running" column: a locker session holds a session advisory lock on the job's id
(pg_try_advisory_lock(id), one bigint key) while a worker runs it, and registers itself in the
unlogged `que_lockers` table by backend pid. Que's own introspection (Que.job_states) joins pg_locks
with que_lockers by pid; pgq-top reads locks the same way (sql/locks.sql), so another application's
advisory lock never counts. The schema version is que_jobs's table comment (migrations.rb db_version).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import ClassVar

from psycopg import sql

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    OLDEST_READY,
    PREVIEW_COLUMNS,
    ActionKind,
    ActionSpec,
    Capability,
    Match,
    QueueModel,
    SearchColumns,
    State,
    Statement,
)
from pgq_tui.dialects.kit import HEAP_COUNT_CAP, Setting, Sql, found, index_advice, refused, state_words
from pgq_tui.dialects.sqlfiles import sql_file, sql_part, sql_parts

KIND = "que"
SHARED = "pgq_tui.dialects"  # dialects/sql/: admitted.sql, chosen.sql, preview.sql
JOB_SCHEMA_VERSION = 2  # lib/que/version.rb Que.job_schema_version (2.x), the version its poll reads
LATEST = 7  # lib/que/migrations.rb CURRENT_VERSION
STUCK_AFTER = Setting(
    "que_stuck_after",
    "stuck_after_s",
    3600.0,
    "PGQ_TOP_QUE_STUCK_AFTER",
    "a Que lock is stuck when its locker's backend has been idle this many seconds (a locker whose"
    " workers are all busy sits idle too: set it above your longest job)",
)
# the columns pgq-top's statements read (Que 2.4's que_jobs, schema version 7)
COLUMNS_READ = frozenset(
    ("id", "queue", "priority", "run_at", "job_class", "error_count", "last_error_message",
     "last_error_backtrace", "finished_at", "expired_at", "args", "kwargs", "data", "job_schema_version")
)  # fmt: skip
DETECTED_BY = frozenset(("id", "queue", "priority", "run_at", "job_class", "error_count", "args"))
# pgq-top's advice (optional: the counts are true without it): que_poll_idx holds errored jobs too and
# error_count is in no index, so the ready and scheduled counts read each row's heap tuple (bounded
# by the count cap); this one answers them from the index alone (id: the held-lock exclusion)
WAITING = ("finished_at IS NULL", "expired_at IS NULL", "error_count = 0")
WAITING_INDEX = "(job_schema_version, queue, run_at, id) WHERE " + " AND ".join(WAITING)
# The count cap on the stock schema (no WAITING_INDEX): each que_poll_idx entry the ready and
# scheduled counts walk costs its heap row (error_count), 2 counts x queues x cap1 rows a poll. At the
# monitor's 1,000, 10 queues at 2M rows read 21,899 buffers (96 ms under load 7, 2026-12-06); at 250,
# 5,692 (18-20 ms). With the index: the monitor's own cap.
STOCK_COUNT_CAP = HEAP_COUNT_CAP
STATES = state_words("""
    ready       ready: not finished nor expired, run_at <= now(), error_count 0, no Que lock
    scheduled   scheduled: run_at > now(), error_count 0, no Que lock
    errored     errored: error_count > 0, not finished nor expired (waiting for its retry), no Que lock
    running     a Que lock on its id (pg_locks, pid in que_lockers), locker's backend not idle too long
    stuck       a Que lock whose locker's backend is idle past que_stuck_after, or unregistered
    dead        expired: expired_at set (past maximum_retry_count, or expired by the job)
    done        finished: finished_at set (kept until the application deletes it)
""")
BASE_PARTS = ("locks", "held", "payload")


def version(catalog: Catalog, schema: str, table: str) -> int | None:
    """Que's schema version: que_jobs's table comment (lib/que/migrations.rb db_version).

    >>> from pgq_tui.dialects.catalog import Relation
    >>> version(Catalog((Relation("public", "que_jobs", "r", (), comment="7"),)), "public", "que_jobs")
    7
    """
    rel = catalog.relation(schema, table)
    comment = (rel.comment or "").strip() if rel else ""
    return int(comment) if comment.isdigit() else None


@dataclass(frozen=True)
class QueDialect:
    stuck_after_s: float | None = None  # STUCK_AFTER, set by the engine; None: the default
    settings: ClassVar[tuple[Setting, ...]] = (STUCK_AFTER,)
    kind: str = KIND
    title: str = "Que"
    versions: str = "schema version 7 (que 2.x; read against que 2.4.1's migrations)"
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("que_jobs"):
            if rel.kind != "r" or not rel.column_names >= DETECTED_BY:
                continue
            if catalog.relation(rel.schema, "que_lockers") is None:
                continue
            v = version(catalog, rel.schema, rel.name)
            evidence = f"{rel.schema}.que_jobs (comment: schema version {v}), {rel.schema}.que_lockers"
            label = f"schema {v}" if v is not None else None
            out.append(found(KIND, rel, label, evidence, len(DETECTED_BY) + 2, "que_lockers"))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        rel = catalog.relation(schema, match.table)
        v = version(catalog, schema, match.table)
        missing = sorted(COLUMNS_READ - (rel.column_names if rel else frozenset()))
        if v is None or v < LATEST or missing:
            what = ", ".join(f"column {c}" for c in missing) or "version 7 in its comment"
            at = v if v is not None else "?"
            why = f"que_jobs at schema version {at} lacks {what} (Que 2.x's schema 7)"
            return refused(match, self.title, f"{why}: run Que.migrate!(version: 7)")
        after_s = float(STUCK_AFTER.value(self.stuck_after_s))
        idents = {"jobs": (schema, match.table), "ql": (schema, "que_lockers"),
                  "queue_column": ("queue",), "order_column": ("id",)}  # fmt: skip
        literals = {"stuck_after_s": (after_s,), "job_schema_version": (JOB_SCHEMA_VERSION,)}
        s = Sql(__package__, KIND, idents, literals)

        def parts(statement: Statement, *extra: tuple[str, str]) -> Statement:
            return replace(statement, parts=(*sql_parts(__package__, *BASE_PARTS), *extra))

        def guarded(name: str, guard: str) -> Statement:
            base = s(f"guard_{guard}", PREVIEW_COLUMNS if name == "preview" else ("id",))
            text = sql_part(SHARED, "preview") if name == "preview" else sql_file(__package__, name)
            statement = replace(base, name=f"{KIND}.{name}_{guard}", text=text)
            shared = (
                ("guard", sql_part(__package__, f"guard_{guard}")),
                ("admitted", sql_part(SHARED, "admitted")),
                ("chosen", sql_part(SHARED, "chosen")),
            )
            return parts(statement, *shared)

        has_waiting = rel is not None and rel.has_index(
            ("job_schema_version", "queue", "run_at"), also=WAITING, only=WAITING
        )
        waiting = index_advice(
            Capability.COUNTS,
            sql.Identifier(f"{match.table}_pgq_top_waiting").as_string(None),
            (schema, match.table),
            WAITING_INDEX,
            "error_count is in no index of Que's: the ready and scheduled counts read each job's row"
            " (up to the count cap per queue); this index answers them from the index alone",
            (),  # no state: those counts are live without it, only cheaper with it
        )
        rule = (
            "a Que lock (an advisory lock on the job's id, held by a backend registered in que_lockers,"
            " as Que.job_states reads them) whose backend has been idle longer than"
            f" {after_s:g} s ({STUCK_AFTER.env}), or one held by a session Que named 'Que Locker: <pid>'"
            " that has no que_lockers row. Another application's advisory lock never counts"
        )
        return QueueModel(
            match=match,
            title=self.title,
            stuck_rule=rule,
            stuck_label="Que lock on an idle or unregistered locker",
            states=STATES,
            counts=(
                parts(s.count("count_waiting", "ready", "scheduled", OLDEST_READY)),
                parts(s.count("count_held", "running", "stuck")),
                # expired and finished rows (que_poll_idx excludes them) and errored ones (error_count
                # is in no index): no index of Que's serves them
                parts(s.count("count_final", "dead", "done", "errored", indexed=False)),
            ),
            leases=parts(s.leases()),
            dead=parts(s.dead(indexed=False)),
            job=parts(s.job()),
            claim_probe=s.probe(),
            activity=activity_statement(
                f"{KIND}.activity", jobs=(schema, match.table), id="id", queue_of_j="j.queue"
            ),
            actions=(
                ActionSpec(
                    ActionKind.RETRY,
                    "retry (Que's documented UPDATE of an expired job)",
                    State.DEAD,
                    "error_count = 0, expired_at = NULL, as Que's docs say (run_at unchanged: an expired"
                    " job is ready at once, an errored one keeps its retry backoff)",
                    "expired_at IS NOT NULL (or error_count > 0 and not finished, when named), and no Que"
                    " lock on the job",
                    guarded("preview", "dead"),
                    guarded("retry", "dead"),
                    also_applies_to=("errored",),
                    chosen_only=("errored",),
                ),
                ActionSpec(
                    ActionKind.DISCARD,
                    "destroy (Que's destroy_job: DELETE)",
                    State.DEAD,
                    "the expired job's row is deleted (Que's destroy)",
                    "expired_at IS NOT NULL, and no Que lock on the job",
                    guarded("preview", "expired"),
                    guarded("discard", "expired"),
                    destructive=True,
                ),
            ),
            advice=() if has_waiting else (waiting,),
            count_cap=None if has_waiting else STOCK_COUNT_CAP,
            extra_states=("errored",),
            liveness_known=True,
            unsupported=(
                (Capability.THROUGHPUT, "Que keeps no counters"),
                (Capability.PAUSE, "Que has no queue pause"),
                (Capability.SCHEDULES, "Que keeps no periodic schedules in the database"),
            ),
            search=_search((schema, match.table), (schema, "que_lockers"), after_s),
            relations=((schema, match.table), (schema, "que_lockers")),
            required_columns=tuple(sorted(COLUMNS_READ)),
            setup_hint="run Que's migrations once (Que.migrate!(version: 7)): they create que_jobs",
        )


LOCKED_IDS = "(SELECT coalesce(array_agg(h.id), ARRAY[]::bigint[]) FROM {locks} h"


def _search(jobs: tuple[str, str], lockers: tuple[str, str], stuck_after_s: float) -> SearchColumns:
    """The search language on que_jobs (docs/search.md): args. reads kwargs and meta. reads data (the
    jsonb objects Que 2 keeps; its positional args are an array, which a path cannot address). A job
    a Que lock holds (locks.sql) is running or stuck, never ready, scheduled or errored; the lock
    sets are read once per statement, whatever the number of rows judged."""
    unlocked = "j.id <> ALL ({held}::bigint[])"
    unfinished = "j.finished_at IS NULL AND j.expired_at IS NULL"
    waiting = f"{unfinished} AND j.error_count = 0 AND {unlocked}"
    return SearchColumns(
        jobs=jobs,
        states=(
            ("ready", f"{waiting} AND j.run_at <= now()"),
            ("scheduled", f"{waiting} AND j.run_at > now()"),
            ("errored", f"{unfinished} AND j.error_count > 0 AND {unlocked}"),
            ("running", f"{unfinished} AND j.id = ANY ({{running}}::bigint[])"),
            ("stuck", f"{unfinished} AND j.id = ANY ({{stuck}}::bigint[])"),
            ("dead", "j.expired_at IS NOT NULL"),
            ("done", "j.finished_at IS NOT NULL AND j.expired_at IS NULL"),
        ),
        error="j.last_error_message",
        time="coalesce(j.finished_at, j.expired_at, j.run_at)",
        time_words="finished_at or expired_at, else run_at (an errored job's next retry)",
        documents=(("args", "kwargs"), ("meta", "data")),
        payload="{payload}",
        literals=(("stuck_after_s", stuck_after_s),),
        idents=(("jobs", jobs), ("ql", lockers)),
        parts=(
            ("locks", sql_part(__package__, "locks")),
            ("held", sql_part(__package__, "held")),
            ("running", f"{LOCKED_IDS} WHERE NOT h.stuck)"),
            ("stuck", f"{LOCKED_IDS} WHERE h.stuck)"),
            ("payload", sql_part(__package__, "payload")),
        ),
    )
