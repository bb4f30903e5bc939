"""What pg-boss's two models (dialect.py for 10.x, modern.py for 11 and 12) share: their SQL, one file
per question for every schema version pgq-top reads (21-46), their index advice and dead-job actions.

A line of a `sql/*.sql` file that only some schema versions have ends with a tag: `-- [30+]` (schema
30 and later), `-- [<30]` (before 30) or `-- [27-36]` (27 to 36). `for_schema` keeps the lines of one
version, so each statement is written once and what runs on a given schema is readable in one file.
The tags name pg-boss's own migrations (docs/dialects.md has the table): 25 is 11.0 (`job_common`,
`expire_seconds`), 27 is 12.6 (backoff `retry_delay *`), 30 is 12.12 (heartbeats), 31 is 12.19
(flows' `blocked`), 37 is 12.26 (backoff at least 1 s; retry clears completed_on).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from psycopg import sql

from pgq_tui.dialects.catalog import Catalog, Relation
from pgq_tui.dialects.contract import (
    COUNT_KEY,
    LATENCY_PER_QUEUE,
    ActionSpec,
    Capability,
    IndexAdvice,
    ScheduleSource,
    SearchColumns,
    Statement,
)
from pgq_tui.dialects.kit import Sql, discard, partitioned_index, retry
from pgq_tui.dialects.latency import latency_statement
from pgq_tui.dialects.sqlfiles import body, sql_file
from pgq_tui.schedules.model import SCHEDULE_COLUMNS, SCHEDULE_JOB_COLUMNS

# SQL that several statements share, written once (`sql/<name>.sql`, tagged like the rest): bound as
# Statement.parts `{name}` wherever a statement names it
SHARED = ("active_expiry", "chosen_active", "chosen_failed", "lease_row", "stuck")
_TAG = re.compile(r"--\s*\[(?:(\d+)\+|<(\d+)|(\d+)-(\d+))\]\s*$")


def for_schema(text: str, schema: int) -> str:
    """The lines of `text` that pg-boss schema `schema` has.

    >>> sql = "SELECT 1\\n, a -- [30+]\\n, b -- [<30]\\n, c -- [27-36]"
    >>> for_schema(sql, 26).splitlines()
    ['SELECT 1', ', b -- [<30]']
    >>> for_schema(sql, 31).splitlines()
    ['SELECT 1', ', a -- [30+]', ', c -- [27-36]']
    """
    kept = []
    for line in text.splitlines():
        tag = _TAG.search(line)
        if tag is not None:
            since, before, low, high = tag.groups()
            if since is not None and schema < int(since):
                continue
            if before is not None and schema >= int(before):
                continue
            if low is not None and not int(low) <= schema <= int(high):
                continue
        kept.append(line)
    return "\n".join(kept)


@dataclass(frozen=True)
class BossSql(Sql):
    """The dialect kit's statement factory for one pg-boss schema version: `s(name, columns)` is
    `sql/<name>.sql` with only the lines of that version (`for_schema`), the shared fragments bound."""

    version: int = 0

    def __call__(self, name: str, columns: Sequence[str]) -> Statement:
        text = self.text(name)
        statement = Statement.of(f"{self.prefix}.{name}", text, columns, literals=None, **self.idents)
        parts = tuple((part, body(self.text(part))) for part in SHARED if f"{{{part}}}" in text)
        return replace(statement, parts=parts)

    def text(self, name: str) -> str:
        return for_schema(sql_file(self.package, name), self.version)


def statements(schema: str, version: int) -> BossSql:
    """The statements for pg-boss schema `version`, on the tables of `schema`."""
    idents = {
        "job": (schema, "job"),
        "queue": (schema, "queue"),
        "job_state": (schema, "job_state"),
        "bam": (schema, "bam"),  # its background migrations (schema 27 on)
    }
    return BossSql(__package__, "pgboss", idents, version=version)


def boss_latency(schema: str, *, by_queue: bool = False) -> Statement:
    """Wait and run percentiles from started_on/start_after/completed_on. `by_queue` where an index
    on (name, completed_on) holds the finished jobs (12.38's job_i16): each queue's newest of the
    last hour walked in it (sql/modern_latency_finished.sql, a cap per queue); else a scan of every
    job (sql/latency_finished.sql). Either way it runs in the background (it reads up to about
    LATENCY_NEWEST rows)."""
    if by_queue:
        return latency_statement(
            "pgboss.latency",
            __package__,
            finished="modern_latency_finished",
            per_queue=True,
            literals={"least": (LATENCY_PER_QUEUE,)},
            job=(schema, "job"),
            queue=(schema, "queue"),
        )
    return latency_statement("pgboss.latency", __package__, indexed=False, job=(schema, "job"))


def pick(s: Sql, indexed: bool, name: str, scan: str, columns: tuple[str, ...]) -> Statement:
    """`name` where an index serves it, else `scan`: the same figures by one scan (Statement.indexed
    False, exact: the engine runs it in the poll while the table is small, else in the background)."""
    return s(name, columns) if indexed else s(scan, columns).scan()


def one_pass(counts: list[Statement], s: Sql) -> list[Statement]:
    """`counts` with the active, failed and completed counts as ONE scan (count_states_scan.sql) when
    no index serves any of the three: one pass over the table instead of three. Otherwise as given
    (each served by its index, or the remaining scans alone)."""
    scans = {c.name.split(".")[-1] for c in counts if not c.indexed}
    three = {"count_active_scan", "count_failed_scan", "count_completed_scan"}
    if not three <= scans:
        return counts
    merged = s("count_states_scan", (COUNT_KEY, "running", "stuck", "dead", "done")).scan()
    kept = [c for c in counts if c.name.split(".")[-1] not in three]
    return [*kept, merged]


def advice(
    cap: Capability, job: Relation, name: str, definition: str, what: str, states: tuple[str, ...]
) -> IndexAdvice:
    why = (
        f"pg-boss has no index for {what}: pgq-top scans for them (in the poll while the table is small,"
        " else in the background, stale); this index makes the figure live"
    )
    on = (job.schema, job.name)
    if job.kind != "p":
        create = f"CREATE INDEX CONCURRENTLY {name} ON {sql.Identifier(*on).as_string(None)} {definition}"
        return IndexAdvice(cap, create, why, states)
    # `job` is partitioned: a plain CREATE INDEX on it would block every write to every partition for
    # the whole build, and CONCURRENTLY is refused there; so ON ONLY, then partition by partition
    steps = partitioned_index(name, on, job.partitions, definition)
    why += (
        " (job is partitioned: the parent's index ON ONLY, then each partition's built CONCURRENTLY, so"
        " writes continue, and attached; run the statements one at a time, as psql does)"
    )
    return IndexAdvice(cap, "; ".join(steps) + ";", why, states, steps)


def dead_actions(s: Sql, retry_effect: str) -> tuple[ActionSpec, ...]:
    """pg-boss's own transitions for failed jobs: retry (boss.retry) and delete (boss.deleteJob)."""
    failed = "state = 'failed'"
    return (
        retry(s, "retry (boss.retry)", retry_effect, failed, "preview_failed"),
        discard(s, "delete (boss.deleteJob)", "the rows are deleted", failed, "preview_failed"),
    )


def search_columns(s: BossSql, schema: str) -> SearchColumns:
    """The search language on pg-boss's job table (both layouts): data is the args, output the
    output (and, for a failure, the error). Ids are uuids and no pg-boss index orders the jobs by time
    across queues (12.x's job_i15 is (name, created_on): per queue): a bound would read and sort every
    row, so the search reads them all, within its statement_timeout, and says why (order_indexed)."""
    stuck = re.sub(r"--[^\n]*", "", s.text("stuck")).strip()  # the dialect's own rule, comments dropped
    waiting = "j.state IN ('created', 'retry')"
    return SearchColumns(
        jobs=(schema, "job"),
        states=(
            ("ready", f"{waiting} AND j.start_after < now()"),
            ("scheduled", f"{waiting} AND j.start_after >= now()"),
            ("running", f"j.state = 'active' AND NOT ({stuck})"),
            ("stuck", stuck),
            ("dead", "j.state = 'failed'"),
            ("done", "j.state = 'completed'"),
            ("cancelled", "j.state = 'cancelled'"),
        ),
        integer_ids=False,
        order="created_on",
        order_indexed=False,
        queue="name",
        error="j.output::text",
        time="coalesce(j.completed_on, j.started_on, j.created_on)",
        time_words="completed_on (done or failed), else started_on, else created_on",
        documents=(("args", "data"), ("output", "output")),
        payload="j.data",
    )


def schedule_source(catalog: Catalog, schema: str) -> ScheduleSource | None:
    """pg-boss's `schedule` table (every layout has one; 12.x keys it by name and key), read with
    the cron pass's own bookkeeping: the occurrences it forwarded through `__pgboss__send-it`, 12.x's
    last_job_id, and version.cron_on, when the pass last ran."""
    if catalog.relation(schema, "schedule") is None:
        return None
    tables = {"schedule": (schema, "schedule"), "job": (schema, "job"), "version": (schema, "version")}
    s = Sql(__package__, "pgboss", tables)
    return ScheduleSource(
        statement=s("schedules", SCHEDULE_COLUMNS),
        jobs=s("schedule_jobs", SCHEDULE_JOB_COLUMNS),
        scheduler=s("scheduler", ("pass_at",)),
        scheduler_name="pg-boss's cron pass (version.cron_on)",
        links="jobs of the queue the schedule is named after (pg-boss marks them no other way; 12.x's"
        " last_job_id names the newest exactly)",
        timezone_rule="the schedule's tz option (the timezone column; none is UTC), as pg-boss's"
        " cron-parser reads it",
        seconds_first=True,
    )
