"""Detection and model of pgq-top's own table (`pgq-top init`)."""

from __future__ import annotations

from psycopg import sql

from pgq_tui.dialects.activity import activity_statement
from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    ATTEMPT_COLUMNS,
    COUNT_KEY,
    DEAD_COLUMNS,
    JOB_COLUMNS,
    LEASE_COLUMNS,
    LEASE_EXTRA_COLUMNS,
    OLDEST_READY,
    PAUSE_PREVIEW_COLUMNS,
    PAUSED_COLUMNS,
    ActionKind,
    ActionSpec,
    Capability,
    IndexAdvice,
    Match,
    PauseSpec,
    QueueModel,
    SearchColumns,
    State,
    Statement,
)
from pgq_tui.dialects.kit import found, state_words
from pgq_tui.dialects.latency import latency_statement
from pgq_tui.dialects.pgq import statements as st
from pgq_tui.jobtable.schema import SETUP_HINT, channel

KIND = "pgq"
# fmt: off
REQUIRED_COLUMNS = frozenset(("id", "queue", "status", "priority", "run_at", "attempts", "max_attempts",
                              "locked_until", "locked_by", "finished_at", "last_error"))
# fmt: on
# The monitor's statements also read heartbeat_at (added by a later `pgq-top init`): a table detected
# without it gets the monitor's one-line "missing columns" error with the fix, not failing panels.
MONITORED_COLUMNS = tuple(sorted(REQUIRED_COLUMNS | {"heartbeat_at"}))
STUCK_RULE = "running with an expired lease: status 'running' and locked_until < now()"
STATES = state_words("""
    ready       pending, run_at <= now()
    scheduled   pending, run_at > now()
    running     running, locked_until >= now()
    stuck       running, locked_until < now()
    dead        failed
    done        done (kept by workers run with --keep)
""")

# The partial indexes `pgq-top init` creates, which keep every monitor read O(active jobs).
_INDEXES = (
    (
        ("queue", "priority"),
        {"status": ["pending"]},
        "claim_idx",
        "(queue, priority DESC, run_at, id) WHERE status = 'pending'",
    ),
    (
        ("queue", "locked_until"),
        {"status": ["running"]},
        "lease_idx",
        "(queue, locked_until) WHERE status = 'running'",
    ),
    (("queue",), {"status": ["failed"]}, "failed_idx", "(queue) WHERE status = 'failed'"),
    (("finished_at",), {"status": ["done"]}, "done_idx", "(finished_at) WHERE status = 'done'"),
)
_NEEDS = {
    "claim_idx": Capability.COUNTS,
    "lease_idx": Capability.LEASES,
    "failed_idx": Capability.DEAD,
    "done_idx": Capability.DONE,
}


class PgqDialect:
    kind = KIND
    title = "pgq-top"
    versions = "pgq-top 0.1 (`pgq-top init`)"
    version_markers: tuple[VersionMarker, ...] = ()
    # what detection needs and how to make the table: detection's "no queue there" error says them
    required_columns = REQUIRED_COLUMNS
    setup_hint = SETUP_HINT

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.with_columns(REQUIRED_COLUMNS):
            if rel.kind not in ("r", "p"):
                continue
            stats = catalog.relation(rel.schema, f"{rel.name}_stats")
            evidence = "columns " + ", ".join(sorted(REQUIRED_COLUMNS))
            if stats is not None:
                evidence += f" and counters table {rel.name}_stats"
            score = len(REQUIRED_COLUMNS) + (1 if stats is not None else 0)
            out.append(found(KIND, rel, None, evidence, score, *([stats.name] if stats is not None else [])))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        jobs = (match.schema, match.table)
        stats = (match.schema, f"{match.table}_stats")
        rel = catalog.relation(*jobs)
        advice = _missing_indexes(rel, match.table) if rel is not None else ()

        # requeue and retry NOTIFY the table's channel, as the queue's own statements do
        wake = {"channel": (channel(match.table, match.schema),)}

        pauses = (match.schema, f"{match.table}_pauses")

        def s(name: str, text: str, columns: tuple[str, ...]) -> Statement:
            return Statement.of(
                f"pgq.{name}", text, columns, literals=wake, jobs=jobs, stats=stats, pauses=pauses
            )

        # an index `pgq-top init` creates is missing: the statements it serves are scans (run in the
        # poll while the table is small, else in the background), the index is advice
        missing = {a.capability for a in advice}

        def served(statement: Statement, *needs: Capability) -> Statement:
            return statement.scan() if missing & set(needs) else statement

        unsupported: tuple[tuple[Capability, str], ...] = ()
        # the bounded attempt history `pgq-top init` adds (attempt_log); an older table has none yet
        logged = rel is not None and rel.column("attempt_log") is not None
        if not logged:
            unsupported += ((Capability.ATTEMPTS, "no attempt_log column yet (add it with: pgq-top init)"),)
        # the claim's start time (started_at, added by `pgq-top init`): wait and run percentiles
        timed = rel is not None and rel.column("started_at") is not None
        if not timed:
            unsupported += ((Capability.LATENCY, "no started_at column yet (add it with: pgq-top init)"),)
        counters = catalog.relation(*stats)
        # the counters table counts the operator's removals (pgq-top init adds the columns)
        removals = counters is not None and counters.column("discarded") is not None
        if counters is None:
            unsupported += (
                (
                    Capability.THROUGHPUT,
                    f"no counters table {match.table}_stats (create it with: pgq-top init)",
                ),
            )
        pause = None
        if catalog.relation(*pauses) is None:
            why = f"no pauses table {match.table}_pauses (create it with: pgq-top init)"
            unsupported = (*unsupported, (Capability.PAUSE, why))
        else:
            pause = PauseSpec(
                label=f"pgq-top's pause ({match.table}_pauses)",
                pause_effect=f"a row in {match.table}_pauses: workers stop claiming from the queue; jobs"
                " already claimed run to their end",
                resume_effect=f"its {match.table}_pauses row deleted and the queue's idle workers woken"
                " (NOTIFY): they claim at once",
                reaction="at their next claim (the claim itself checks the pause)",
                preview=s("pause_preview", st.PAUSE_PREVIEW, PAUSE_PREVIEW_COLUMNS),
                pause=s("pause", st.PAUSE, ("queue",)),
                resume=s("resume", st.RESUME, ("queue",)),
                state=s("pause_state", st.PAUSE_STATE, PAUSED_COLUMNS),
                state_source=f"{match.table}_pauses",
            )
        previewed = ("eligible", "alive", "holders")
        return QueueModel(
            match=match,
            title=self.title,
            stuck_rule=STUCK_RULE,
            states=STATES,
            counts=(
                served(
                    s("count_pending", st.COUNT_PENDING, (COUNT_KEY, "ready", "scheduled", OLDEST_READY)),
                    Capability.COUNTS,
                ),
                served(
                    s("count_states", st.COUNT_STATES, (COUNT_KEY, "running", "stuck", "dead")),
                    Capability.LEASES,
                    Capability.DEAD,
                ),
                served(s("count_done", st.COUNT_DONE, (COUNT_KEY, "done")), Capability.DONE),
            ),
            leases=served(s("leases", st.LEASES, LEASE_COLUMNS + LEASE_EXTRA_COLUMNS), Capability.LEASES),
            dead=served(s("dead", st.DEAD, DEAD_COLUMNS), Capability.DEAD),
            job=s("job", st.JOB, JOB_COLUMNS),
            # the bounded history `pgq-top init` adds (attempt_log); an older table has none yet
            attempts=s("attempts", st.ATTEMPTS, ATTEMPT_COLUMNS) if logged else None,
            # done jobs through <table>_done_idx; kept only by workers run with --keep
            latency=served(latency_statement("pgq.latency", __package__, jobs=jobs), Capability.DONE)
            if timed
            else None,
            latency_gap="pgq-top's workers keep done jobs only with --keep",
            claim_probe=s("claim_probe", st.CLAIM_PROBE, ("id",)),
            activity=activity_statement("pgq.activity", jobs=jobs, id="id", queue_of_j="j.queue"),
            throughput=s(
                "throughput",
                st.THROUGHPUT if removals else st.THROUGHPUT_UNCOUNTED,
                ("queue", "bucket", "enqueued", "completed", "failed", "dead", "discarded", "pruned"),
            ),
            actions=(
                ActionSpec(
                    kind=ActionKind.REQUEUE,
                    label="requeue",
                    applies_to=State.STUCK,
                    effect=(
                        "status -> pending (idle workers are notified); locked_until, locked_by "
                        "cleared; the attempt stays counted"
                    ),
                    guard="status = 'running' AND locked_until < now()",
                    preview=s("preview_stuck", st.PREVIEW_STUCK, previewed),
                    statement=s("requeue", st.REQUEUE if logged else st.REQUEUE_UNLOGGED, ("id",)),
                ),
                ActionSpec(
                    kind=ActionKind.REAP,
                    label="reap",
                    applies_to=State.STUCK,
                    effect=(
                        "status -> pending (idle workers are notified), or failed when attempts >= "
                        "max_attempts; lease cleared"
                    ),
                    guard="status = 'running' AND locked_until < now()",
                    preview=s("preview_reap", st.PREVIEW_REAP, (*previewed, "exhausted")),
                    statement=s("reap", st.REAP if logged else st.REAP_UNLOGGED, ("id", "status")),
                ),
                ActionSpec(
                    kind=ActionKind.RETRY,
                    label="retry",
                    applies_to=State.DEAD,
                    effect=(
                        "status -> pending, runnable now with a fresh budget of attempts (attempts 0; "
                        "idle workers are notified); last_error kept"
                    ),
                    guard="status = 'failed'",
                    preview=s("preview_dead", st.PREVIEW_DEAD, ("eligible", "alive")),
                    statement=s("retry", st.RETRY, ("id",)),
                ),
                ActionSpec(
                    kind=ActionKind.DISCARD,
                    label="discard",
                    applies_to=State.DEAD,
                    effect="the row is deleted",
                    guard="status = 'failed'",
                    preview=s("preview_dead", st.PREVIEW_DEAD, ("eligible", "alive")),
                    statement=s("discard", st.DISCARD_COUNTED if removals else st.DISCARD, ("id",)),
                    destructive=True,
                ),
            ),
            capped_overall=(State.DONE.value,),  # the done index is (finished_at): no queue to split by
            liveness_known=True,
            advice=advice,
            unsupported=unsupported,
            relations=(jobs,),
            required_columns=MONITORED_COLUMNS,
            setup_hint="pgq-top init --dsn DSN creates it, or adds the missing columns",
            stuck_label="lease expired",
            search=_search(jobs, _state_indexes(rel) if rel is not None else ()),
            pause=pause,
        )


# the states each partial index `pgq-top init` creates holds the rows of
_INDEX_STATES = {
    "claim_idx": ("ready", "scheduled"),
    "lease_idx": ("running", "stuck"),
    "failed_idx": ("dead",),
    "done_idx": ("done",),
}


def _state_indexes(rel: Relation) -> tuple[tuple[str, str], ...]:
    """state word -> the partial index of the table that holds only that state's rows (by name)."""
    out = []
    for leading, predicate, suffix, _definition in _INDEXES:
        index = rel.index_for(leading, predicate)
        if index is not None:
            out += [(word, index.name) for word in _INDEX_STATES[suffix]]
    return tuple(out)


def _search(jobs: tuple[str, str], indexed: tuple[tuple[str, str], ...] = ()) -> SearchColumns:
    """The search language on pgq-top's table: the payload is the job's args (docs/search.md)."""
    return SearchColumns(
        indexed_states=indexed,
        jobs=jobs,
        states=(
            ("ready", "j.status = 'pending' AND j.run_at <= now()"),
            ("scheduled", "j.status = 'pending' AND j.run_at > now()"),
            ("running", "j.status = 'running' AND j.locked_until >= now()"),
            ("stuck", "j.status = 'running' AND j.locked_until < now()"),
            ("dead", "j.status = 'failed'"),
            ("done", "j.status = 'done'"),
        ),
        error="j.last_error",
        time="coalesce(j.finished_at, j.created_at)",
        time_words="finished_at (failed or done), else created_at",
        documents=(("args", "payload"),),
        payload="j.payload",
    )


def _missing_indexes(rel: Relation, table: str) -> tuple[IndexAdvice, ...]:
    out = []
    for leading, predicate, suffix, definition in _INDEXES:
        if not rel.has_index(leading, predicate):
            name = sql.Identifier(f"{table}_{suffix}").as_string(None)
            where = sql.Identifier(rel.schema, table).as_string(None)
            create = f"CREATE INDEX CONCURRENTLY {name} ON {where} {definition}"
            out.append(IndexAdvice(_NEEDS[suffix], create, "or run: pgq-top init"))
    return tuple(out)
