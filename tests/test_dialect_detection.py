"""Detection: the one catalog read (against a real server) and the pure matching and choosing."""

from __future__ import annotations

from dataclasses import replace

import psycopg
import pytest

from pgq_tui.detection import queues_in
from pgq_tui.dialects import registry
from pgq_tui.dialects.catalog import Catalog, Index, Relation, VersionMarker, table
from pgq_tui.dialects.contract import ActionKind, Capability, Match
from pgq_tui.dialects.detect import DetectionError, choose, detect
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.dialects.mapping import MappingDialect, MappingError, parse
from pgq_tui.errors import EXIT_SCHEMA, EXIT_USAGE, PgqError

SEED = {"id": "bigint", "queue": "text", "payload": "jsonb", "status": "text", "run_at": "timestamptz",
        "attempts": "integer", "locked_until": "timestamptz"}  # fmt: skip
PGQ = {**SEED, "priority": "smallint", "max_attempts": "integer", "locked_by": "text",
       "finished_at": "timestamptz", "last_error": "text"}  # fmt: skip


class _Marked:
    """A dialect that only asks for a version marker (what framework dialects do)."""

    kind, title, versions = "marked", "Marked", "any"
    version_markers = (
        VersionMarker("migrations", "id"),
        VersionMarker("river_migration", "version", "line", "main"),
    )

    def detect(self, catalog: Catalog) -> list[Match]:
        return []

    def model(self, match, catalog):  # pragma: no cover - never matched
        raise NotImplementedError


def test_one_catalog_read_sees_columns_indexes_enums_functions_and_version_markers(empty_dsn: str) -> None:
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(
            "CREATE SCHEMA gw; CREATE TABLE gw.migrations (id int PRIMARY KEY);"
            "INSERT INTO gw.migrations VALUES (17), (19), (18);"
            "CREATE TABLE river_migration (line text, version bigint);"
            "INSERT INTO river_migration VALUES ('main', 6), ('workflow', 9), ('main', 7);"
            "CREATE TYPE gw.job_state AS ENUM ('created', 'active');"
            "CREATE TABLE gw.jobs (id bigint, state gw.job_state, queue text);"
            "CREATE INDEX jobs_queue_idx ON gw.jobs (queue, id) WHERE state = 'created';"
            "CREATE FUNCTION gw.complete_jobs(bigint[]) RETURNS void LANGUAGE sql AS 'SELECT';"
            "COMMENT ON TABLE gw.jobs IS '14'"
        )
        catalog = read_catalog(conn, (_Marked(), *registry.builtin()))
    jobs = catalog.relation("gw", "jobs")
    assert jobs is not None and jobs.comment == "14"
    assert [c.name for c in jobs.columns] == ["id", "state", "queue"] and jobs.column(
        "state"
    ).type == "gw.job_state"
    (ix,) = jobs.indexes
    assert ix.columns == ("queue", "id") and "'created'" in (ix.predicate or "")
    assert catalog.enum("gw", "job_state").labels == ("created", "active")
    assert catalog.has_function("gw", "complete_jobs")
    assert catalog.marker("gw", "migrations", "id") == "19"
    assert catalog.marker("public", "river_migration", "version") == "7"  # line = 'main' only


def test_the_most_specific_match_wins_and_several_are_never_guessed() -> None:
    catalog = Catalog((table("public", "jobs", PGQ), table("app", "jobs", SEED)))
    matches = detect(catalog, registry.builtin())
    assert [(m.kind, m.schema) for m in matches] == [("pgq", "public"), ("seed-jobs", "app")]
    assert [m.kind for m in choose(matches, schema="app")] == ["seed-jobs"]
    assert len(choose(matches)) == 2
    with pytest.raises(DetectionError, match=r"no queue matches --kind river; found: pgq · public\.jobs"):
        choose(matches, kind="river")
    with pytest.raises(DetectionError, match="no job queue found"):
        choose([])


def test_kind_forces_a_less_specific_dialect_on_the_same_table() -> None:
    catalog = Catalog((table("public", "jobs", PGQ),))
    (forced,) = queues_in(catalog, registry.builtin(), kind="seed-jobs")
    assert (forced.kind, forced.match.table) == ("seed-jobs", "jobs")
    (default,) = queues_in(catalog, registry.builtin())
    assert default.kind == "pgq"


def test_flags_that_name_no_queue_keep_the_one_line_errors() -> None:
    catalog = Catalog((table("public", "wrong", {"id": "bigint", "status": "text"}),))
    known = registry.builtin()
    with pytest.raises(PgqError, match=r"table public\.nope does not exist") as e:
        queues_in(catalog, known, table="nope")
    assert e.value.exit_code == EXIT_SCHEMA
    with pytest.raises(PgqError, match="not a pgq-top jobs table: missing columns attempts"):
        queues_in(catalog, known, table="wrong")
    with pytest.raises(PgqError, match="unknown --kind") as e:
        queues_in(catalog, known, kind="nope")
    assert e.value.exit_code == EXIT_USAGE


def test_a_missing_index_becomes_advice_and_a_scan_never_a_missing_figure() -> None:
    pending = Index("p", ("queue", "run_at"), "(status = 'pending'::text)", "CREATE INDEX ...", True)
    rel = Relation("public", "jobs", "r", table("public", "jobs", SEED).columns, (pending,))
    catalog = Catalog((rel,))
    (match,) = detect(catalog, registry.builtin())
    model = next(d for d in registry.builtin() if d.kind == "seed-jobs").model(match, catalog)
    # the running jobs are still counted, listed and requeued: by a scan, marked as one
    assert model.support(Capability.LEASES).ok and model.leases is not None and not model.leases.indexed
    (scan,) = [s for s in model.counts if "running" in s.columns]
    assert not scan.indexed and {"running", "stuck"} <= set(scan.columns)
    # the kept done rows too (no index on them either), by a scan of their own: it is paced apart in
    # the background (#35), so the running and stuck counts never wait for the done aggregation
    (done,) = [s for s in model.counts if "done" in s.columns]
    assert scan.name == "seed-jobs.count_running_scan" and done.name == "seed-jobs.count_done_scan"
    assert not done.indexed and "done" not in scan.columns
    assert {s.name for s in model.scans} == {scan.name, done.name, model.leases.name}
    # and on a big table the running counts and the lease list are ONE read (a Pass)
    (one,) = model.passes
    assert one.covers == (scan, model.leases) and one.recheck is not None
    assert model.action(ActionKind.REQUEUE) is not None
    # the index that would make them live is advice
    (advice,) = [a for a in model.advice if a.capability == Capability.LEASES]
    assert advice.definition == (
        "CREATE INDEX CONCURRENTLY jobs_running_idx ON public.jobs (queue, locked_until) "
        "WHERE status = 'running'"
    )
    # ready and scheduled through the seed's own index: not scans
    (ready,) = [s for s in model.counts if "ready" in s.columns]
    assert ready.indexed and {"ready", "scheduled", "oldest_ready_age_s"} <= set(model.count_columns())


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        ({"kind": "x", "columns": {"id": "id"}}, r"\[columns\]\.status is required"),
        ({"kind": "X Y"}, "kind"),
        ({"kind": "x", "columns": {"id": "i", "status": "s", "colour": "c"}}, "unknown roles colour"),
        (
            {
                "kind": "x",
                "columns": {"id": "i", "status": "s"},
                "states": {"ready": ["a"], "running": ["a"]},
            },
            "listed under both",
        ),
        (
            {
                "kind": "x",
                "columns": {"id": "i", "status": "s"},
                "states": {"ready": ["a"], "running": ["b"]},
                "stuck": {"rule": "lease"},
            },
            "needs columns.lease",
        ),
        (
            {
                "kind": "x",
                "columns": {"id": "i", "status": "s"},
                "states": {"ready": ["a"], "running": ["b"]},
                "requeue": {"status": "a"},
            },
            "needs a \\[stuck\\] rule",
        ),
        (
            {
                "kind": "x",
                "columns": {"id": "i", "status": "s"},
                "states": {"ready": ["a"], "running": ["b"]},
                "claim": {"order": "priority DESC id"},
            },
            "claim\\]\\.order: 'priority DESC id' is not a column name",
        ),
        (
            {
                "kind": "x",
                "columns": {"id": "i", "status": "s"},
                "states": {"ready": ["a"], "running": ["b"]},
                "claim": {"by": "id"},
            },
            "\\[claim\\]: needs order",
        ),
    ],
)
def test_mapping_errors_name_the_key(doc: dict, message: str) -> None:
    with pytest.raises(MappingError, match=message):
        parse(doc, "m.toml")


def test_claim_order_names_columns_the_table_must_have() -> None:
    """[claim] order: its columns join the table's shape (a table without them is not this queue),
    and the probe walks the mapped ready condition in that order."""
    spec = parse(
        {
            "kind": "x",
            "columns": {"id": "id", "status": "state"},
            "states": {"ready": ["a"], "running": ["b"]},
            "claim": {"order": "prio DESC NULLS LAST, id"},
        },
        "m.toml",
    )
    assert [(t.column, t.descending, t.nulls) for t in spec.claim_order] == [
        ("prio", True, "LAST"),
        ("id", False, None),
    ]
    assert spec.shape == ("id", "state", "prio")
    ready = Index("t_ready", ("prio",), "(state = 'a'::text)", "CREATE INDEX ...", True)
    without = table("public", "t", {"id": "bigint", "state": "text"})
    assert MappingDialect(spec).detect(Catalog((without,))) == []
    rel = replace(table("public", "t", {"id": "bigint", "state": "text", "prio": "int"}), indexes=(ready,))
    (match,) = MappingDialect(spec).detect(Catalog((rel,)))
    probe = MappingDialect(spec).model(match, Catalog((rel,))).claim_probe
    assert probe is not None
    assert " ".join(probe.shown().split()) == (
        'SELECT "id" AS id FROM "public"."t" WHERE "state" IN (\'a\')'
        ' AND \'default\'::text = %(queue)s::text ORDER BY "prio" DESC NULLS LAST, "id" LIMIT 1'
    )
