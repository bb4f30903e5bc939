"""DBOS Transact (PyPI `dbos`, npm `@dbos-inc/dbos-sdk`): detection and model of its system database's
`workflow_status` (schema `dbos` by default, any name: DBOS's `dbos_system_schema`).

Every fact here was read in the installed `dbos` 3.4.0 (dbos/_sys_db.py, dbos/_migration.py,
dbos/_schemas/system_database.py, dbos/_dbos_config.py): docs/dialects.md lists them.

DBOS keeps no heartbeat and no process table: a PENDING workflow whose executor died stays PENDING
until an executor with the same executor_id and application_version launches and recovers it. So the
stuck rule is pgq-top's own, and says so: PENDING, and its executor is not connected to the server
(no session named after its executor_id, and no session named 'dbos_transact', the application_name
DBOS sets on its system-database connections), or, with the dbos_stuck_after setting, not connected
by name and updated_at older than that.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from pgq_tui.dialects.catalog import Catalog, VersionMarker
from pgq_tui.dialects.contract import (
    FINISHED_COLUMNS,
    OLDEST_READY,
    ActionKind,
    ActionSpec,
    Capability,
    Match,
    QueueModel,
    SearchColumns,
    State,
    Statement,
)
from pgq_tui.dialects.kit import Setting, Sql, found, refused, state_words
from pgq_tui.dialects.sqlfiles import sql_part, sql_parts

KIND = "dbos"
DBOS_APP = "dbos_transact"  # dbos/_dbos_config.py configure_db_engine_parameters: connect_args
INTERNAL_QUEUE = "_dbos_internal_queue"  # dbos/_utils.py INTERNAL_QUEUE_NAME: where resume enqueues
NO_QUEUE = "(no queue)"
STUCK_AFTER = Setting(
    "dbos_stuck_after",
    "stuck_after_s",
    0,  # unset: only an executor's absence makes a PENDING workflow stuck
    "PGQ_TOP_DBOS_STUCK_AFTER",
    "pgq-top's rule for DBOS (no heartbeat): a PENDING workflow whose executor is not connected by name"
    " and whose updated_at is older than this many seconds is stuck, even while some DBOS executor is"
    " connected (unset: only when none is)",
)
MARKER = VersionMarker("dbos_migrations", "version")
# the columns pgq-top's statements read (DBOS 3.4's workflow_status; migration 125)
COLUMNS_READ = frozenset(
    ("workflow_uuid", "status", "name", "executor_id", "application_version", "queue_name", "priority",
     "created_at", "updated_at", "started_at_epoch_ms", "completed_at", "recovery_attempts",
     "deduplication_id", "owner_xid", "workflow_deadline_epoch_ms", "delay_until_epoch_ms", "inputs",
     "error", "application_name")
)  # fmt: skip
DETECTED_BY = frozenset(
    ("workflow_uuid", "status", "executor_id", "application_version", "recovery_attempts")
)
STATES = state_words("""
    ready       ENQUEUED
    scheduled   DELAYED (until delay_until_epoch_ms)
    running     PENDING, executor connected or not known to be gone
    stuck       PENDING, executor not connected (pgq-top's rule: DBOS has no heartbeat)
    dead        MAX_RECOVERY_ATTEMPTS_EXCEEDED (DBOS's dead letter)
    done        SUCCESS (counted by a scan: no index serves it)
    failed      ERROR (the workflow raised; DBOS does not resume it)
    cancelled   CANCELLED
""")
# the SQL fragments every statement may use, composed in this order (each may use those before it)
BASE_PARTS = ("named", "dbos_up", "stuck", "liveness", "queue")


def version(catalog: Catalog, schema: str) -> int | None:
    """DBOS's system-schema version: the one row of `dbos_migrations` (DBOS keeps the latest applied
    migration's number there, dbos/_migration.py _bump_migration_version).

    >>> from pgq_tui.dialects.catalog import Catalog
    >>> version(Catalog((), markers={("dbos", "dbos_migrations", "version"): "125"}), "dbos")
    125
    """
    marked = catalog.marker(schema, "dbos_migrations", "version")
    return int(marked) if marked is not None and marked.isdigit() else None


def _base_parts() -> tuple[tuple[str, str], ...]:
    """The rules every statement and the search bind: BASE_PARTS, then the payload preview."""
    return (*sql_parts(__package__, *BASE_PARTS), ("payload", sql_part(__package__, "preview_text")))


def _parts(statement: Statement, *extra: tuple[str, str]) -> Statement:
    return replace(statement, parts=(*_base_parts(), *extra))


def _guarded(s: Sql, name: str, guard: str) -> Statement:
    """`name`.sql (a preview, or a transition beginning with `{chosen}`) under `guard_<guard>.sql`."""
    statement = s.preview(name) if name == "preview" else s.write(name)
    if name == "preview":
        statement = replace(
            statement, name=f"{KIND}.preview_{guard}", columns=(*statement.columns, "holders")
        )
    shared = (
        ("guard", sql_part(__package__, f"guard_{guard}")),
        ("admitted", sql_part(__package__, "admitted")),
        ("chosen", sql_part(__package__, "chosen")),
    )
    return _parts(statement, *shared)


@dataclass(frozen=True)
class DbosDialect:
    stuck_after_s: float | None = None  # STUCK_AFTER, set by the engine; None: unset
    settings: ClassVar[tuple[Setting, ...]] = (STUCK_AFTER,)
    kind: str = KIND
    title: str = "DBOS Transact"
    versions: str = "system schema migration 125 (tested with dbos 3.4.0 on PyPI)"
    version_markers: tuple[VersionMarker, ...] = (MARKER,)

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for rel in catalog.named("workflow_status"):
            if rel.kind != "r" or not rel.column_names >= DETECTED_BY:
                continue
            if catalog.relation(rel.schema, "dbos_migrations") is None:
                continue
            v = version(catalog, rel.schema)
            evidence = f"{rel.schema}.workflow_status, {rel.schema}.dbos_migrations (version {v})"
            tables = ("dbos_migrations", "workflow_input", "workflow_output")
            label = f"migration {v}" if v is not None else None
            out.append(found(KIND, rel, label, evidence, len(DETECTED_BY) + 2, *tables))
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        rel = catalog.relation(schema, match.table)
        missing = sorted(COLUMNS_READ - (rel.column_names if rel else frozenset()))
        gone = [t for t in ("workflow_input", "workflow_output") if catalog.relation(schema, t) is None]
        if missing or gone:
            what = ", ".join([*(f"column {c}" for c in missing), *(f"table {t}" for t in gone)])
            why = f"DBOS system schema migration {version(catalog, schema)} lacks {what} (dbos 3.4's schema)"
            return refused(match, self.title, f"{why}: launch DBOS 3.4+ once to migrate it")
        after_s = float(STUCK_AFTER.value(self.stuck_after_s))
        idents = {
            "ws": (schema, match.table),
            "wi": (schema, "workflow_input"),
            "wo": (schema, "workflow_output"),
        }
        literals = {
            "dbos_app": (DBOS_APP,),
            "no_queue": (NO_QUEUE,),
            "internal_queue": (INTERNAL_QUEUE,),
            "stuck_after_ms": (int(after_s * 1000),),
        }
        s = Sql(__package__, KIND, idents, literals)
        threshold = (
            f", or not connected by name and updated_at older than {after_s:g} s ({STUCK_AFTER.env})"
            if after_s > 0
            else f" (set {STUCK_AFTER.env} to also call one stuck after a time)"
        )
        rule = (
            "PENDING, and its executor is not connected: no session on the server named after its"
            f" executor_id and no '{DBOS_APP}' session (the application_name DBOS sets){threshold}."
            " pgq-top's rule, not DBOS's: DBOS has no heartbeat, and recovers a PENDING workflow only"
            " when an executor with the same executor_id and application_version launches"
        )
        resume_effect = (
            "DBOS's resume_workflows: status ENQUEUED on _dbos_internal_queue, recovery_attempts 0;"
            " owner_xid, deduplication_id, started_at, deadline and completed_at cleared"
        )
        return QueueModel(
            match=match,
            title=self.title,
            stuck_rule=rule,
            stuck_label="PENDING, executor not connected (pgq-top's rule, DBOS has no heartbeat)",
            states=STATES,
            counts=(
                _parts(s.count("count_waiting", "ready", "scheduled", OLDEST_READY)),
                _parts(s.count("count_pending", "running", "stuck")),
                _parts(s.count("count_final", "dead", "failed", "cancelled")),
                # SUCCESS rows are most of the table and no index serves them: a scan
                _parts(s.count("count_done_scan", "done").scan()),
            ),
            leases=_parts(s.leases()),
            dead=_parts(s.dead()),
            job=_parts(s.job()),
            claim_probe=_parts(s.probe()),
            finished=_parts(s("finished", FINISHED_COLUMNS)),
            actions=(
                ActionSpec(
                    ActionKind.REQUEUE,
                    "resume (DBOS resume_workflows)",
                    State.STUCK,
                    resume_effect,
                    "status = 'PENDING' AND its executor is not connected (pgq-top's rule)",
                    _guarded(s, "preview", "stuck"),
                    _guarded(s, "resume", "stuck"),
                ),
                ActionSpec(
                    ActionKind.RETRY,
                    "resume (DBOS resume_workflows)",
                    State.DEAD,
                    resume_effect,
                    "status = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED' (or CANCELLED, when named)",
                    _guarded(s, "preview", "dead"),
                    _guarded(s, "resume", "dead"),
                    also_applies_to=("cancelled",),
                    chosen_only=("cancelled",),
                ),
                ActionSpec(
                    ActionKind.CANCEL,
                    "cancel (DBOS cancel_workflows)",
                    State.READY,
                    "DBOS's cancel_workflows: status CANCELLED, off its queue (queue_name NULL);"
                    " owner_xid, deduplication_id and started_at cleared; completed_at now",
                    "status IN ('ENQUEUED', 'DELAYED', 'PENDING'): never a finished workflow"
                    " (SUCCESS, ERROR, CANCELLED, MAX_RECOVERY_ATTEMPTS_EXCEEDED)",
                    _guarded(s, "preview", "active"),
                    _guarded(s, "cancel", "active"),
                    destructive=True,
                    also_applies_to=(State.SCHEDULED.value, State.RUNNING.value, State.STUCK.value),
                ),
            ),
            extra_states=("failed", "cancelled"),
            capped_overall=("scheduled", "running", "stuck", "dead", "failed", "cancelled"),
            liveness_known=True,
            unsupported=((Capability.THROUGHPUT, "DBOS keeps no counters"),),
            search=_search(idents, literals),
            relations=((schema, match.table),),
            required_columns=tuple(sorted(COLUMNS_READ)),
            setup_hint="launch a DBOS application once: its migrations create the system schema",
        )


# DBOS 3.4 keeps a workflow's error in workflow_output (the status row's own error otherwise, as
# dead.sql reads it). Its default serializer stores an exception as base64 of its pickle
# (dbos/_serialization.py, DefaultSerializer), its portable one as JSON text: the text searched is
# the pickle's bytes with non-ASCII bytes escaped (the message's ASCII characters stay as they are),
# else the text itself.
ERROR_TEXT = (
    "(SELECT CASE WHEN mod(length(x.e), 4) = 0 AND x.e ~ '^[A-Za-z0-9+/]+=*$'"
    " THEN encode(decode(x.e, 'base64'), 'escape') ELSE x.e END"
    " FROM (SELECT coalesce((SELECT o.error FROM {wo} o WHERE o.workflow_uuid = j.workflow_uuid),"
    " j.error) AS e) x)"
)


def _search(idents: Mapping[str, tuple[str, str]], literals: Mapping[str, tuple[Any, ...]]) -> SearchColumns:
    """The search language on workflow_status (docs/search.md): states by status and the stuck rule
    of the counts (stuck.sql), the queue as the counts name it; DBOS's inputs are serialized text,
    so there is no args. path."""
    return SearchColumns(
        jobs=idents["ws"],
        states=(
            ("ready", "j.status = 'ENQUEUED'"),
            ("scheduled", "j.status = 'DELAYED'"),
            ("running", "j.status = 'PENDING' AND NOT ({stuck})"),
            ("stuck", "{stuck}"),
            ("dead", "j.status = 'MAX_RECOVERY_ATTEMPTS_EXCEEDED'"),
            ("done", "j.status = 'SUCCESS'"),
            ("failed", "j.status = 'ERROR'"),
            ("cancelled", "j.status = 'CANCELLED'"),
        ),
        id="workflow_uuid",
        integer_ids=False,
        order="created_at",  # epoch ms; DBOS's workflow_status_created_at_index
        queue=None,
        queue_expr="{queue}",
        error=ERROR_TEXT,
        time="to_timestamp(j.updated_at / 1000.0)",
        time_words="updated_at (the last status change)",
        payload="{payload}",
        literals=tuple((k, v[0]) for k, v in literals.items()),
        idents=tuple(idents.items()),
        parts=_base_parts(),
    )
