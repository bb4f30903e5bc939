"""Oban (Elixir, `oban-bg/oban`): detection and model of `oban_jobs`, in any prefix (schema).

Stuck is Oban's own Lifeline rule: an `executing` job whose `attempted_at` is older than
`rescue_after` (60 min by default). Lifeline is opt-in and time-only: Oban keeps node liveness out
of the database, so a stuck job's worker liveness is unknown. Set a target's oban_rescue_after, or
PGQ_TOP_OBAN_RESCUE_AFTER (seconds), when your Lifeline uses another rescue_after (RESCUE_AFTER).
Oban's timestamps are UTC `timestamp without time zone`: every comparison is with UTC now, every
time shown is converted to timestamptz.
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
    ScheduleSource,
    SearchColumns,
    State,
)
from pgq_tui.dialects.guarded import guarded, preview
from pgq_tui.dialects.kit import (
    Setting,
    Sql,
    cancel,
    discard,
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
from pgq_tui.schedules.model import SCHEDULE_COLUMNS, SCHEDULE_JOB_COLUMNS

KIND = "oban"
RESCUE_AFTER = Setting(
    "oban_rescue_after",
    "rescue_after_s",
    3600.0,  # Oban.Lifeline's rescue_after default: 60 minutes
    "PGQ_TOP_OBAN_RESCUE_AFTER",
    "Oban Lifeline's rescue_after, in seconds: an executing job attempted longer ago is stuck",
)
# fmt: off
JOB_COLUMNS_SEEN = frozenset(("id", "state", "queue", "worker", "args", "errors", "attempt", "max_attempts",
                              "inserted_at", "scheduled_at", "attempted_at", "attempted_by", "priority",
                              "discarded_at"))
# fmt: on
STATE_INDEX = ("state", "queue", "priority", "scheduled_at", "id")  # v8+
WAITING = ("available", "scheduled", "retryable", "suspended")
STATES = state_words("""
    ready       available
    scheduled   scheduled, retryable (staged to available when due)
    running     executing, attempted_at within rescue_after
    stuck       executing, attempted_at older than rescue_after (Lifeline)
    dead        discarded
    done        completed (kept until the Pruner deletes it)
    cancelled   cancelled
    suspended   suspended (held; v14)
""")


def version(catalog: Catalog, schema: str, table: str = "oban_jobs") -> tuple[int | None, str]:
    """Oban's migration version and how it was found: the comment Oban's migrator puts on oban_jobs,
    else probes of what each migration added: enum value suspended -> 14, oban_peers -> 11,
    cancelled_at -> 9.

    >>> from pgq_tui.dialects.catalog import Catalog, Relation
    >>> version(Catalog((Relation("public", "oban_jobs", "r", (), comment="14"),)), "public")
    (14, 'table comment')
    """
    rel = catalog.relation(schema, table)
    if rel is None:
        return None, "no table"
    if rel.comment and rel.comment.strip().isdigit():
        return int(rel.comment.strip()), "table comment"
    enum = catalog.enum(schema, "oban_job_state")
    if enum is not None and "suspended" in enum.labels:
        return 14, "enum value suspended"
    if catalog.relation(schema, "oban_peers") is not None:
        return 11, "table oban_peers"
    if "cancelled_at" in rel.column_names:
        return 9, "column cancelled_at"
    return None, "no version marker"


@dataclass(frozen=True)
class ObanDialect:
    rescue_after_s: float | None = None  # RESCUE_AFTER, set by the engine; None: Lifeline's 60 min
    settings: ClassVar[tuple[Setting, ...]] = (RESCUE_AFTER,)
    kind: str = KIND
    title: str = "Oban"
    versions: str = "migrations v9-v14 (Oban 2.11+; tested at v14, Oban 2.21-2.23)"
    version_markers: tuple[VersionMarker, ...] = ()

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("oban_jobs"):
            if rel.kind not in ("r", "p") or not rel.column_names >= JOB_COLUMNS_SEEN:
                continue
            if catalog.enum(rel.schema, "oban_job_state") is None:
                continue
            v, how = version(catalog, rel.schema, rel.name)
            evidence = f"{rel.schema}.oban_jobs, enum oban_job_state; version from {how}"
            out.append(
                found(KIND, rel, f"v{v}" if v else None, evidence, len(JOB_COLUMNS_SEEN) + 1, "oban_peers")
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        rel = catalog.relation(schema, match.table)
        enum = catalog.enum(schema, "oban_job_state")
        labels = enum.labels if enum is not None else ()
        found, _ = version(catalog, schema, match.table)
        if found is None or found < 9 or "cancelled" not in labels:
            why = f"Oban migration {found or 'unknown'} is older than v9 (cancelled state)"
            return refused(match, self.title, why)
        if rel is None or not rel.has_index(STATE_INDEX[:2]):
            return unindexed(match, self.title, "(state, queue, priority, scheduled_at, id) index (v8+)")
        horizon = RESCUE_AFTER.value(self.rescue_after_s)
        waiting = tuple(s for s in WAITING if s in labels)
        s = Sql(
            __package__,
            "oban",
            {"jobs": (schema, match.table), "state_type": (schema, "oban_job_state")},
            {
                "rescue_after_s": (float(horizon),),
                "states": tuple(x for x in labels if x != "executing"),
                "waiting": waiting,
            },
        )
        rule = (
            f"Oban's Lifeline: executing, and attempted_at older than {horizon:g} s (rescue_after; set"
            f" {RESCUE_AFTER.env} to yours). Lifeline is opt-in and time-only: node liveness is unknown"
        )
        extras = ("cancelled", "suspended")  # suspended (v14) reads 0 before v14
        discarded = "state = 'discarded'"
        # the guards (sql/guard_*.sql), each written once for its preview and its write
        g_discarded = s.preview("guard_discarded")
        g_stuck, g_waiting = s.preview("guard_stuck"), s.preview("guard_waiting")
        return QueueModel(
            match=match,
            finished=s("finished", FINISHED_DONE),
            finished_scans=((schema, match.table),),  # no index on completed_at: read while small
            activity=activity_statement(
                "oban.activity", jobs=(schema, match.table), id="id", queue_of_j="j.queue"
            ),
            title=self.title,
            stuck_rule=rule,
            states=STATES,
            counts=(
                counted_per_state(  # sql/count_states.sql after dialects/sql/counted.sql
                    s.count(
                        "count_states",
                        "ready",
                        "scheduled",
                        "suspended",
                        "dead",
                        "done",
                        "cancelled",
                        OLDEST_READY,
                    )
                ),
                s.count("count_executing", "running", "stuck"),
            ),
            **s.reads(),
            actions=(
                requeue(
                    s,
                    "Lifeline rescue",
                    "available while attempt < max_attempts, else discarded with discarded_at",
                    f"state = 'executing' AND attempted_at < utc now - {horizon:g} s",
                    preview(g_stuck),
                    guarded(s.write("rescue"), g_stuck),
                ),
                retry(
                    s,
                    "Oban.retry_job",
                    "state available, scheduled_at now, max_attempts >= attempt + 1;"
                    " completed_at, cancelled_at, discarded_at cleared",
                    discarded,
                    preview(g_discarded),
                    guarded(s.write("retry"), g_discarded),
                ),
                discard(
                    s,
                    "Oban.delete_job",
                    "the discarded rows are deleted",
                    discarded,
                    preview(g_discarded),
                    write=guarded(s.write("discard"), g_discarded),
                ),
                cancel(
                    s,
                    "Oban.cancel_job",
                    "state cancelled, cancelled_at now",
                    f"state IN ({', '.join(waiting)}) (executing jobs are stopped by Oban's producer)",
                    (State.SCHEDULED.value, "suspended"),
                    preview(g_waiting),
                    guarded(s.write("cancel"), g_waiting),
                ),
            ),
            extra_states=extras,
            unsupported=((Capability.THROUGHPUT, "Oban keeps no counters"),),
            # no Oban index serves completed_at: a scan (the latency reader is a background pass)
            latency=latency_statement("oban.latency", __package__, indexed=False, jobs=(schema, match.table)),
            relations=((schema, match.table),),
            search=state_led(
                rel,
                "state",
                _search((schema, match.table), float(horizon), labels, "tags" in rel.column_names),
            ),
            schedules=_schedules(schema, match.table),
            pause=_pause(schema, match.table),
        )


def _pause(schema: str, table: str) -> PauseSpec:
    """Oban.pause_queue/2 and resume_queue/2 of Oban OSS: a signal, nothing in the database."""
    channel = f"{schema}.oban_signal"
    s = Sql(
        __package__,
        "oban",
        {"jobs": (schema, table), "state_type": (schema, "oban_job_state")},
        {"signal_channel": (channel,)},
    )
    return pause_spec(
        s,
        "Oban.pause_queue / Oban.resume_queue (notification only)",
        f'NOTIFY {channel} {{"action": "pause", "ident": "any"}}: every running node\'s'
        " producer of the queue stops fetching; executing jobs finish",
        f'NOTIFY {channel} {{"action": "resume", "ident": "any"}}: nodes run the queue again',
        "at once on every node whose notifier listens (Oban's Postgres notifier); a node that is"
        " not connected then never hears it",
        durable=False,
        caveat="not durable: Oban OSS keeps a pause in each node's memory, so a node that starts or"
        " restarts runs the queue again, and pgq-top cannot see whether it is paused",
        unknown_why="Oban OSS keeps a queue's pause in each node's memory, not in the database",
    )


def _search(
    jobs: tuple[str, str], rescue_after_s: float, labels: tuple[str, ...], tags: bool
) -> SearchColumns:
    """The search language on oban_jobs: args, meta, the errors array; its timestamps are UTC
    without a zone (docs/search.md)."""
    fresh = "j.attempted_at >= (now() AT TIME ZONE 'UTC') - make_interval(secs => {rescue_after_s})"
    states: tuple[tuple[str, str], ...] = (
        ("ready", "j.state = 'available'"),
        ("scheduled", "j.state IN ('scheduled', 'retryable')"),
        ("running", f"j.state = 'executing' AND {fresh}"),
        ("stuck", f"j.state = 'executing' AND (j.attempted_at IS NULL OR NOT ({fresh}))"),
        ("dead", "j.state = 'discarded'"),
        ("done", "j.state = 'completed'"),
        ("cancelled", "j.state = 'cancelled'"),
    )
    if "suspended" in labels:  # v14: an enum label the older schemas lack
        states += (("suspended", "j.state = 'suspended'"),)
    return SearchColumns(
        jobs=jobs,
        states=states,
        error="j.errors::text",
        time="coalesce(j.discarded_at, j.completed_at, j.cancelled_at, j.attempted_at, j.inserted_at)"
        " AT TIME ZONE 'UTC'",
        time_words="discarded_at, completed_at or cancelled_at, else attempted_at, else inserted_at",
        documents=(("args", "args"), ("meta", "meta")),
        payload="j.args",
        literals=(("rescue_after_s", rescue_after_s),),
        tags="tags" if tags else None,
    )


def _schedules(schema: str, table: str) -> ScheduleSource:
    """Oban.Cron's jobs, which carry their entry in meta (cron_expr, cron_name, cron_tz)."""
    s = Sql(__package__, "oban", {"jobs": (schema, table)})
    return ScheduleSource(
        statement=s("schedules", SCHEDULE_COLUMNS).scan(),
        jobs=s("schedule_jobs", SCHEDULE_JOB_COLUMNS).scan(),
        links="meta cron_name: the jobs Oban.Cron inserted for the entry, exactly (older Oban writes"
        " no cron_name: its cron jobs are not listed)",
        timezone_rule="meta cron_tz (Oban.Cron's timezone option, Etc/UTC by default)",
    )
