"""River (Go, `riverqueue/river`): detection and model of `river_job`.

Stuck is River's own JobRescuer rule: a `running` job whose `attempted_at` is older than the rescue
horizon (`RescueStuckJobsAfter`, 1 h by default). River keeps no worker heartbeat, so a running job's
worker liveness is unknown; the horizon is a client setting the database does not record, declared
as RESCUE_AFTER: set a target's river_rescue_after, or PGQ_TOP_RIVER_RESCUE_AFTER (seconds), when
your clients use another.
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
    Match,
    PauseSpec,
    QueueModel,
    SearchColumns,
    State,
)
from pgq_tui.dialects.guarded import guarded, preview
from pgq_tui.dialects.kit import (
    Setting,
    Sql,
    cancel,
    found,
    pause_spec,
    refused,
    requeue,
    retry,
    state_led,
    state_words,
    unindexed,
)
from pgq_tui.dialects.latency import latency_statement
from pgq_tui.dialects.skipscan import counted_per_state

KIND = "river"
RESCUE_AFTER = Setting(
    "river_rescue_after",
    "rescue_after_s",
    3600.0,  # River's JobRescuerRescueAfterDefault
    "PGQ_TOP_RIVER_RESCUE_AFTER",
    "River's RescueStuckJobsAfter, in seconds: a running job attempted longer ago is stuck",
)
MIN_VERSION = 4  # the `pending` state and today's finalized_at constraint (River 0.5.0)
# fmt: off
JOB_COLUMNS_SEEN = frozenset(("id", "state", "queue", "kind", "args", "attempt", "max_attempts",
                              "attempted_at", "attempted_by", "scheduled_at", "finalized_at", "errors",
                              "metadata", "priority"))
# fmt: on
FETCH_INDEX = ("state", "queue", "priority", "scheduled_at", "id")
MARKER = VersionMarker("river_migration", "version", "line", "main")
STATES = state_words("""
    ready       available, scheduled_at <= now()
    scheduled   scheduled, retryable (backoff), or available not yet due
    running     running, attempted_at within the rescue horizon
    stuck       running, attempted_at older than the rescue horizon
    dead        discarded (out of attempts; kept 7 days)
    done        completed (kept 24 h)
    cancelled   cancelled (kept 24 h)
    pending     pending (held for something outside River)
""")


def version(catalog: Catalog, schema: str) -> int | None:
    """River's schema version: the newest `main` line of river_migration, else probes of what each
    migration added (QUEUE_FRAMEWORKS.md): notification outbox without river_client -> 7,
    unique_states -> 6, unique_key -> 5, enum value pending -> 4.

    >>> from pgq_tui.dialects.catalog import Catalog, EnumType, table
    >>> jobs = table("s", "river_job", {"unique_key": "bytea"})
    >>> version(Catalog((jobs,), (EnumType("s", "river_job_state", ("available", "pending")),)), "s")
    5
    """
    marked = catalog.marker(schema, "river_migration", "version")
    if marked is not None and marked.isdigit():
        return int(marked)
    jobs = catalog.relation(schema, "river_job")
    if jobs is None:
        return None
    enum = catalog.enum(schema, "river_job_state")
    if catalog.relation(schema, "river_notification") and not catalog.relation(schema, "river_client"):
        return 7
    if "unique_states" in jobs.column_names:
        return 6
    if "unique_key" in jobs.column_names:
        return 5
    if enum is not None and "pending" in enum.labels:
        return 4
    return 3 if "tags" in jobs.column_names else 2


@dataclass(frozen=True)
class RiverDialect:
    rescue_after_s: float | None = None  # RESCUE_AFTER, set by the engine; None: River's 1 h
    settings: ClassVar[tuple[Setting, ...]] = (RESCUE_AFTER,)
    kind: str = KIND
    title: str = "River"
    # migration 8 (River v0.51's newest) is a no-op on Postgres: the schema is 7's
    versions: str = "schema migrations 4-8 (River 0.5+; tested with River v0.51.2's migrator at 6, 7 and 8)"
    version_markers: tuple[VersionMarker, ...] = (MARKER,)

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("river_job"):
            if rel.kind not in ("r", "p") or not rel.column_names >= JOB_COLUMNS_SEEN:
                continue
            if catalog.enum(rel.schema, "river_job_state") is None:
                continue
            v = version(catalog, rel.schema)
            marked = catalog.marker(rel.schema, "river_migration", "version") is not None
            how = "river_migration" if marked else "column and enum probes"
            evidence = f"{rel.schema}.river_job, enum river_job_state; version from {how}"
            score = len(JOB_COLUMNS_SEEN) + 1
            tables = ("river_queue", "river_leader", "river_migration")
            out.append(found(KIND, rel, f"migration {v}" if v else None, evidence, score, *tables))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        found = version(catalog, schema)
        rel = catalog.relation(schema, match.table)
        if found is None or found < MIN_VERSION:
            why = f"River schema migration {found} is older than {MIN_VERSION} (River 0.5)"
            return refused(match, self.title, why)
        if rel is None or not rel.has_index(FETCH_INDEX[:2]):
            return unindexed(match, self.title, "river_job_prioritized_fetching_index (state, queue, ...)")
        horizon = RESCUE_AFTER.value(self.rescue_after_s)
        s = Sql(
            __package__,
            "river",
            {
                "jobs": (schema, match.table),
                "state_type": (schema, "river_job_state"),
                "queues": (schema, "river_queue"),
            },
            {"rescue_after_s": (float(horizon),), "control_channel": (f"{schema}.river_control",)},
        )
        rule = (
            f"River's JobRescuer: running, and attempted_at older than {horizon:g} s (RescueStuckJobsAfter;"
            f" set {RESCUE_AFTER.env} to your clients' value). Liveness is unknown: River keeps no heartbeat,"
            " and skips jobs whose own timeout is longer"
        )
        # the guards (sql/guard_*.sql), each written once for its preview and its write
        g_discarded = s.preview("guard_discarded")
        g_stuck, g_waiting = s.preview("guard_stuck"), s.preview("guard_waiting")
        return QueueModel(
            match=match,
            finished=s("finished", FINISHED_DONE),
            # served by River's (state, finalized_at) index; without it, read while river_job is small
            finished_scans=() if rel.has_index(("state", "finalized_at")) else ((schema, match.table),),
            activity=activity_statement(
                "river.activity", jobs=(schema, match.table), id="id", queue_of_j="j.queue"
            ),
            title=self.title,
            stuck_rule=rule,
            states=STATES,
            counts=(
                s.count("count_waiting", "ready", "scheduled", "pending", OLDEST_READY),
                s.count("count_running", "running", "stuck"),
                counted_per_state(  # sql/count_final.sql after dialects/sql/counted.sql
                    s.count("count_final", "dead", "done", "cancelled"),
                    ("discarded", "completed", "cancelled"),
                ),
            ),
            **s.reads(),
            actions=(
                requeue(
                    s,
                    "JobRescuer pass",
                    "as River's rescuer: error appended, river:rescue_count + 1; retryable at"
                    " (errors + 1)^4 s while attempts remain, else discarded (cancelled if a cancel was"
                    " attempted)",
                    f"state = 'running' AND attempted_at < now() - {horizon:g} s",
                    preview(g_stuck),
                    guarded(s.write("rescue"), g_stuck),
                ),
                retry(
                    s,
                    "JobRetry",
                    "state available, scheduled_at now(), finalized_at cleared;"
                    " max_attempts + 1 when all were used",
                    "state = 'discarded'",
                    preview(g_discarded),
                    guarded(s.write("retry"), g_discarded),
                ),
                cancel(
                    s,
                    "JobCancel",
                    "state cancelled, finalized_at now(), metadata.cancel_attempted_at;"
                    f" NOTIFY {schema}.river_control",
                    "state IN ('available', 'scheduled', 'retryable', 'pending')"
                    " AND finalized_at IS NULL (running jobs are cancelled by River's client)",
                    (State.SCHEDULED.value, "pending"),
                    preview(g_waiting),
                    guarded(s.write("cancel"), g_waiting),
                ),
            ),
            extra_states=("cancelled", "pending"),
            unsupported=((Capability.THROUGHPUT, "River keeps no counters"),),
            latency=latency_statement(
                "river.latency",
                __package__,
                indexed=rel.has_index(("state", "finalized_at")),
                jobs=(schema, match.table),
            ),
            relations=((schema, match.table),),
            search=state_led(
                rel, "state", _search((schema, match.table), float(horizon), "tags" in rel.column_names)
            ),
            pause=_pause(s, schema) if catalog.relation(schema, "river_queue") else None,
        )


def _pause(s: Sql, schema: str) -> PauseSpec:
    """River's QueuePause / QueueResume (client.go, riverdriver's river_queue.sql, producer.go)."""
    channel = f"{schema}.river_control"
    return pause_spec(
        s,
        "QueuePause / QueueResume",
        f'river_queue.paused_at = now(); NOTIFY {channel} {{"action": "pause"}}: River\'s clients'
        " stop fetching from the queue; running jobs finish",
        f'river_queue.paused_at cleared; NOTIFY {channel} {{"action": "resume"}}: clients fetch again',
        "within milliseconds with River's notifier; a client in poll-only mode (or one that missed the"
        " notification) at its next queue-settings poll (QueuePollInterval, 2 s by default; 1 min"
        " with a notifier)",
        state_source="river_queue.paused_at",
        unknown_refusal="no river_queue row: no River client has started this queue"
        " (River's QueuePause would return ErrNotFound)",
    )


def _search(jobs: tuple[str, str], rescue_after_s: float, tags: bool) -> SearchColumns:
    """The search language on river_job: args, metadata, the errors array, tags (docs/search.md)."""
    fresh = "j.attempted_at >= now() - make_interval(secs => {rescue_after_s})"
    return SearchColumns(
        jobs=jobs,
        states=(
            ("ready", "j.state = 'available' AND j.scheduled_at <= now()"),
            (
                "scheduled",
                "j.state IN ('scheduled', 'retryable') OR (j.state = 'available' AND j.scheduled_at > now())",
            ),
            ("running", f"j.state = 'running' AND {fresh}"),
            ("stuck", f"j.state = 'running' AND (j.attempted_at IS NULL OR NOT ({fresh}))"),
            ("dead", "j.state = 'discarded'"),
            ("done", "j.state = 'completed'"),
            ("cancelled", "j.state = 'cancelled'"),
            ("pending", "j.state = 'pending'"),
        ),
        error="j.errors::text",
        time="coalesce(j.finalized_at, j.attempted_at, j.created_at)",
        time_words="finalized_at, else attempted_at, else created_at",
        documents=(("args", "args"), ("meta", "metadata")),
        payload="j.args",
        literals=(("rescue_after_s", rescue_after_s),),
        tags="tags" if tags else None,
    )
