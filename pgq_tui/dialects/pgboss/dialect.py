"""pg-boss (a schema with `version`, `job`, `queue` and enum `job_state`): detection and model.

pg-boss has had three layouts (QUEUE_FRAMEWORKS.md, docs/dialects.md). pgq-top serves two, each tested
with pg-boss's own client: the 10.x one (schema 21-24: `job` list-partitioned per queue,
`queue.partition_name`, timeout column `expire_in`), here, on Node 20; and the 11/12 one (schema 25-46:
shared `job_common` partition, `queue.table_name`, `expire_seconds`, heartbeats from 30, flows from 31),
in `modern.py`, on Node 22. Schemas newer than pgq-top knows and the 9.x layout are detected and
named, and refused with the reason instead of being read with the wrong rules.
"""

from __future__ import annotations

from dataclasses import dataclass

from pgq_tui.dialects.catalog import Catalog, Relation, VersionMarker
from pgq_tui.dialects.contract import (
    FINISHED_COLUMNS,
    OLDEST_READY,
    Capability,
    Match,
    QueueModel,
)
from pgq_tui.dialects.kit import found, refused, requeue, state_words
from pgq_tui.dialects.pgboss import modern
from pgq_tui.dialects.pgboss.common import (
    advice,
    boss_latency,
    dead_actions,
    one_pass,
    schedule_source,
    search_columns,
    statements,
)

KIND = "pg-boss"
JOB_COLUMNS_SEEN = frozenset(
    ("id", "name", "priority", "data", "state", "retry_limit", "retry_count", "start_after", "started_on",
     "created_on", "completed_on", "output")
)  # fmt: skip
STATES = frozenset(("created", "retry", "active", "completed", "cancelled", "failed"))
STATE_WORDS = state_words("""
    ready       created or retry, start_after < now()
    scheduled   created or retry, start_after >= now() (incl. retry backoff)
    running     active, within started_on + expire_in
    stuck       active, past started_on + expire_in
    dead        failed
    done        completed (until archived)
""")
SUPPORTED_SCHEMAS = range(21, 25)  # pg-boss 10.0.0 (21) .. 10.1.6+ (24)
STUCK_RULE = (
    "active past started_on + expire_in (the job's expireInSeconds, 15 min by default): pg-boss's"
    " supervisor then fails it by timeout, to retry while retries remain"
)
# expire_in before started_on: per expire_in value, stuck (started_on + expire_in < now()) is one range
# of the index, so running and stuck are each counted up to the cap, never by walking every active job
# (sql/count_active.sql); id included: the leases and dead lists pick their rows from the index alone
# and read only those rows
ACTIVE_INDEX = "(name, expire_in, started_on) INCLUDE (id) WHERE state = 'active'"
FAILED_INDEX = "(name, completed_on) INCLUDE (id) WHERE state = 'failed'"
COMPLETED_INDEX = "(name, completed_on) WHERE state = 'completed'"


@dataclass(frozen=True)
class Layout:
    """Which pg-boss layout a schema holds, from its shape and its `version` row."""

    schema_version: int | None
    supported: bool
    release: str  # e.g. "10.x (schema 24)"
    why: str | None = None  # why pgq-top refuses it
    generation: int = 10  # the layout's model: 10 (this module) or 12 (modern.py, 11 and 12)


def layout(job: Relation, queue: Relation | None, archive: Relation | None, version: str | None) -> Layout:
    """Name the layout; pg-boss 10's and 11-12's are served.

    >>> from pgq_tui.dialects.catalog import table
    >>> job = table("b", "job", {"expire_in": "interval"}, kind="p")
    >>> ten = table("b", "queue", {"partition_name": "text"})
    >>> layout(job, ten, table("b", "archive", {}), "24").supported
    True
    >>> eleven = table("b", "job", {"expire_seconds": "int"}, kind="p")
    >>> found = layout(eleven, table("b", "queue", {"table_name": "text"}), None, "26")
    >>> found.supported, found.release, found.schema_version
    (True, '11.1-12.5 (schema 26)', 26)
    >>> layout(eleven, table("b", "queue", {"table_name": "text"}), None, "31").why
    'a pg-boss schema 31 whose job table lacks the columns of that version'
    >>> twelve = table("b", "job", {c: "int" for c in modern.COLUMNS[0][1]}, kind="p")
    >>> found = layout(twelve, table("b", "queue", {"table_name": "text"}), None, "46")
    >>> found.supported, found.release, found.generation
    (True, '12.x (schema 46)', 12)
    >>> layout(twelve, table("b", "queue", {"table_name": "text"}), None, "47").why
    'pg-boss schema 47, newer than pgq-top knows (46, pg-boss 12.38)'
    """
    number = int(version) if version and version.isdigit() else None
    tag = f"schema {number}" if number is not None else "schema unknown"
    if queue is None:
        return Layout(number, False, f"9.x or older ({tag})", "pg-boss 9 and older (no queue table)")
    if "table_name" in queue.column_names or (number is not None and number >= 25):
        if number is not None and number > modern.MAX_SCHEMA:
            why = f"pg-boss schema {number}, newer than pgq-top knows ({modern.MAX_SCHEMA}, pg-boss 12.38)"
            return Layout(number, False, f"newer than 12.38 ({tag})", why)
        read = modern.shape_schema(job, number)
        if read is None:
            why = f"a pg-boss {tag} whose job table lacks the columns of that version"
            return Layout(number, False, f"unknown layout ({tag})", why)
        return Layout(read, True, f"{_releases(read)} ({tag})", generation=12)
    ten = job.kind == "p" and "partition_name" in queue.column_names and "expire_in" in job.column_names
    if ten and archive is not None and (number is None or number in SUPPORTED_SCHEMAS):
        return Layout(number, True, f"10.x ({tag})")
    return Layout(number, False, f"unknown layout ({tag})", "a pg-boss layout pgq-top does not recognise")


def _releases(schema: int) -> str:
    """The pg-boss releases that run schema `schema` (25 and later).

    >>> [_releases(n) for n in (25, 26, 30, 46)]
    ['11.0', '11.1-12.5', '12.x', '12.x']
    """
    return {25: "11.0", 26: "11.1-12.5"}.get(schema, "12.x")


@dataclass(frozen=True)
class PgBossDialect:
    kind: str = KIND
    title: str = "pg-boss"
    versions: str = (
        "10.x (schema 21-24; tested with 10.4.2), 11.0-12.38 (schema 25-46; tested with 11.1.1,"
        " 12.12.0 and 12.38.0); 9.x and newer schemas are detected and refused"
    )
    version_markers: tuple[VersionMarker, ...] = (VersionMarker("version", "version"), modern.BAM_PENDING)

    def detect(self, catalog: Catalog) -> list[Match]:
        out = []
        for job in catalog.named("job"):
            if not job.column_names >= JOB_COLUMNS_SEEN:
                continue
            enum = catalog.enum(job.schema, "job_state")
            if (
                enum is None
                or not set(enum.labels) >= STATES
                or catalog.relation(job.schema, "version") is None
            ):
                continue
            release = _layout(catalog, job).release
            evidence = f"{job.schema}.job, {job.schema}.version, enum {job.schema}.job_state"
            out.append(
                found(KIND, job, release, evidence, len(JOB_COLUMNS_SEEN) + 2, "queue", "version", "archive")
            )
        return out

    def model(self, match: Match, catalog: Catalog) -> QueueModel:
        schema = match.schema
        job = catalog.relation(schema, match.table)
        assert job is not None
        known = _layout(catalog, job)
        if not known.supported:
            why = (
                f"{known.why} is detected but not supported: pgq-top reads pg-boss 10.x (schema 21-24)"
                " and 11.0-12.38 (schema 25-46); it will not guess another layout's rules"
            )
            return refused(match, self.title, why)
        if known.generation == 12 and known.schema_version is not None:
            return modern.model(match, catalog, self.title, known.schema_version)
        s = statements(schema, known.schema_version or SUPPORTED_SCHEMAS[-1])

        has_active = job.has_index(("name", "expire_in", "started_on"), {"state": ["active"]})
        has_failed = job.has_index(("name", "completed_on"), {"state": ["failed"]})
        has_completed = job.has_index(("name", "completed_on"), {"state": ["completed"]})
        counts = (
            s.count("count_queued", "ready", "scheduled", OLDEST_READY),
            s.count("count_active", "running", "stuck", indexed=has_active),
            s.count("count_failed", "dead", indexed=has_failed),
            s.count("count_completed", "done", indexed=has_completed),
        )
        active = advice(
            Capability.LEASES,
            job,
            "pgq_top_active_expiry",
            ACTIVE_INDEX,
            "active jobs",
            ("running", "stuck"),
        )
        failed = advice(Capability.DEAD, job, "pgq_top_failed", FAILED_INDEX, "failed jobs", ("dead",))
        done = advice(Capability.DONE, job, "pgq_top_completed", COMPLETED_INDEX, "completed jobs", ("done",))
        indexed = ((active, has_active), (failed, has_failed), (done, has_completed))
        return QueueModel(
            match=match,
            title=self.title,
            stuck_rule=STUCK_RULE,
            states=STATE_WORDS,
            counts=tuple(one_pass(list(counts), s)),
            **s.reads(s.leases(indexed=has_active), s.dead(indexed=has_failed)),
            # created_on and completed_on have no index: read while job is small
            finished=s("finished", FINISHED_COLUMNS),
            finished_scans=((schema, "job"),),
            actions=(
                requeue(
                    s,
                    "fail by timeout (pg-boss's supervisor transition)",
                    "state retry while retry_count < retry_limit (start_after per retry delay), else"
                    " failed (and its dead-letter copy); output notes the timeout",
                    "state = 'active' AND started_on + expire_in < now()",
                    "preview_stuck",
                ),
                *dead_actions(s, "state retry, retry_limit + 1"),
            ),
            advice=tuple(a for a, served in indexed if not served),
            # Each (queue, state) count walks its own range of pg-boss's indexes; at the monitor's
            # 1,000 a 5M-row table's poll cost 1.92x the 10k-row one, at 500 1.38x
            # (benchmarks/bench_framework_poll.py, 2026-11-30). Above it the background count is exact.
            count_cap=500,
            unsupported=(
                (Capability.LIVENESS, "pg-boss records no worker for a job"),
                (Capability.THROUGHPUT, "pg-boss keeps no counters in 10.x"),
            ),
            relations=((schema, "job"),),
            latency=boss_latency(schema),
            search=search_columns(s, schema),
            schedules=schedule_source(catalog, schema),
        )


def _layout(catalog: Catalog, job: Relation) -> Layout:
    """The layout of the pg-boss schema whose job table is `job`."""
    schema = job.schema
    return layout(
        job,
        catalog.relation(schema, "queue"),
        catalog.relation(schema, "archive"),
        catalog.marker(schema, "version", "version"),
    )
