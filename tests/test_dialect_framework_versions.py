"""Pure detection of River, Oban and Solid Queue from hand-made catalogs: versions by probe when the
framework's own marker is absent, refusals and index advice instead of scans."""

from __future__ import annotations

from pgq_tui.dialects.catalog import Catalog, Column, EnumType, Index, Relation
from pgq_tui.dialects.contract import Capability
from pgq_tui.dialects.oban.dialect import ObanDialect
from pgq_tui.dialects.oban.dialect import version as oban_version
from pgq_tui.dialects.river.dialect import JOB_COLUMNS_SEEN, RiverDialect
from pgq_tui.dialects.river.dialect import version as river_version
from pgq_tui.dialects.solid_queue.dialect import TABLES, SolidQueueDialect


def rel(
    name: str, columns, *, indexes: tuple[Index, ...] = (), comment: str | None = None, schema: str = "s"
):
    return Relation(schema, name, "r", tuple(Column(c, "text", False) for c in columns), indexes, comment)


def index(*columns: str) -> Index:
    return Index("ix_" + "_".join(columns), columns, None, "", True)


RIVER_LABELS = (
    "available",
    "cancelled",
    "completed",
    "discarded",
    "pending",
    "retryable",
    "running",
    "scheduled",
)


def river_catalog(
    extra_columns=(), *, relations=(), labels=RIVER_LABELS, fetch_index=True, markers=None
) -> Catalog:
    fetch = (index("state", "queue", "priority", "scheduled_at", "id"),) if fetch_index else ()
    jobs = rel("river_job", (*JOB_COLUMNS_SEEN, *extra_columns), indexes=fetch)
    return Catalog((jobs, *relations), (EnumType("s", "river_job_state", labels),), markers=markers or {})


def test_river_version_by_probe_without_river_migration() -> None:
    assert river_version(river_catalog(), "s") == 4
    assert river_version(river_catalog(("unique_key",)), "s") == 5
    assert river_version(river_catalog(("unique_key", "unique_states")), "s") == 6
    notification = rel("river_notification", ("id", "topic"))
    assert river_version(river_catalog(("unique_key", "unique_states"), relations=(notification,)), "s") == 7
    marked = river_catalog(markers={("s", "river_migration", "version"): "7"})
    assert river_version(marked, "s") == 7


def test_river_before_migration_4_or_without_its_fetch_index_is_refused_not_scanned() -> None:
    old = river_catalog(labels=RIVER_LABELS[:4] + RIVER_LABELS[5:])
    (match,) = RiverDialect().detect(old)
    model = RiverDialect().model(match, old)
    assert model.counts == () and "older than 4" in str(model.support(Capability.COUNTS).reason)
    bare = river_catalog(fetch_index=False)
    (match,) = RiverDialect().detect(bare)
    model = RiverDialect().model(match, bare)
    assert model.counts == () and "river_job_prioritized_fetching_index" in str(
        model.support(Capability.COUNTS).reason
    )


# fmt: off
OBAN_COLUMNS = ("id", "state", "queue", "worker", "args", "errors", "attempt", "max_attempts",
                "inserted_at", "scheduled_at", "attempted_at", "attempted_by", "priority", "discarded_at",
                "cancelled_at")
# fmt: on
OBAN_LABELS = ("available", "scheduled", "executing", "retryable", "completed", "discarded", "cancelled")


def test_oban_version_by_comment_then_probes() -> None:
    jobs = rel("oban_jobs", OBAN_COLUMNS, comment="12")
    assert oban_version(Catalog((jobs,)), "s") == (12, "table comment")
    jobs = rel("oban_jobs", OBAN_COLUMNS)
    enum = EnumType("s", "oban_job_state", OBAN_LABELS)
    assert oban_version(Catalog((jobs,), (enum,)), "s") == (9, "column cancelled_at")
    peers = rel("oban_peers", ("name", "node"))
    assert oban_version(Catalog((jobs, peers), (enum,)), "s") == (11, "table oban_peers")
    v14 = EnumType("s", "oban_job_state", (*OBAN_LABELS, "suspended"))
    assert oban_version(Catalog((jobs, peers), (v14,)), "s") == (14, "enum value suspended")


def test_oban_in_any_prefix_without_suspended_cancels_only_what_exists() -> None:
    jobs = rel("oban_jobs", OBAN_COLUMNS, comment="13", schema="private",
               indexes=(index("state", "queue", "priority", "scheduled_at", "id"),))  # fmt: skip
    catalog = Catalog((jobs,), (EnumType("private", "oban_job_state", OBAN_LABELS),))
    (match,) = ObanDialect().detect(catalog)
    assert (match.schema, match.version) == ("private", "v13")
    cancel = ObanDialect().model(match, catalog).actions[-1]
    assert "'suspended'" not in cancel.statement.shown() and "'retryable'" in cancel.statement.shown()


def test_solid_queue_needs_every_table_and_advises_its_own_missing_indexes() -> None:
    tables = [rel("solid_queue_" + suffix, columns) for suffix, columns in TABLES.items()]
    catalog = Catalog(tuple(tables))
    (match,) = SolidQueueDialect().detect(catalog)
    model = SolidQueueDialect().model(match, catalog)
    advised = {a.capability: a.definition for a in model.advice}
    assert "index_solid_queue_poll_by_queue" in advised[Capability.OLDEST_READY]
    assert "(queue_name, finished_at)" in advised[Capability.DONE]
    assert {c for s in model.counts for c in s.columns} == {
        "queue",
        "ready",
        "oldest_ready_age_s",
        "scheduled",
        "dead",
        "blocked",
        "running",
        "stuck",
        "done",
    }
    # without Solid Queue's own indexes, ready and done are still counted: by scans
    assert {s.name for s in model.scans} == {"solid_queue.count_ready", "solid_queue.count_done"}
    assert (
        SolidQueueDialect().detect(Catalog(tuple(t for t in tables if t.name != "solid_queue_processes")))
        == []
    )


def test_a_per_queue_cap_binds_only_the_queue_that_reached_it() -> None:
    """`bulk` reached the cap for scheduled jobs; `small` has none: its 0 is exact, not "at least"."""
    from datetime import datetime, timezone

    from pgq_tui.monitor.counting import queue_stats

    model = RiverDialect().model(*_river_match())
    rows = [{"queue": "bulk", "ready": 3, "scheduled": 11}, {"queue": "small", "ready": 2, "scheduled": 0}]
    stats = {q.queue: q for q in queue_stats(rows, model, 11, datetime.now(timezone.utc))}
    assert (stats["bulk"].scheduled, stats["bulk"].accuracy("scheduled")) == (10, "at_least")
    assert (stats["small"].scheduled, stats["small"].accuracy("scheduled")) == (0, "exact")


def _river_match():
    catalog = river_catalog()
    (match,) = RiverDialect().detect(catalog)
    return match, catalog
