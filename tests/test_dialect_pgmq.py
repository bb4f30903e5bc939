"""pgmq's dialect as pure functions: detection by shape (versions by columns), the statements
composed over every queue table, pgq-top's dead rule settable per target (--dead-reads, a targets
file's `dead_reads`, PGQ_TOP_PGMQ_DEAD_READS) and named as pgq-top's own wherever it is shown.
The database side is tests/dialect_cases/pgmq.py (conformance) and tests/frameworks/test_pgmq.py."""

from __future__ import annotations

import pytest

from pgq_tui.cli import build_parser
from pgq_tui.detection import dialects
from pgq_tui.dialects.catalog import Catalog, Index, Relation, table
from pgq_tui.dialects.contract import ActionKind, Capability, State
from pgq_tui.dialects.pgmq import PgmqDialect
from pgq_tui.dialects.pgmq.compose import sections
from pgq_tui.errors import PgqError
from pgq_tui.targets import Pins, parse_targets

META = {"queue_name": "character varying", "is_partitioned": "boolean", "is_unlogged": "boolean"}
V1_4 = {"msg_id": "bigint", "read_ct": "integer", "enqueued_at": "timestamptz", "vt": "timestamptz",
        "message": "jsonb"}  # fmt: skip
V1_10 = {**V1_4, "last_read_at": "timestamptz", "headers": "jsonb"}


def _catalog(columns: dict[str, str], *queues: str, read_ct_index: bool = False) -> Catalog:
    rels: list[Relation] = [table("pgmq", "meta", META)]
    for q in queues:
        rel = table("pgmq", f"q_{q}", columns)
        if read_ct_index:
            ix = Index(f"q_{q}_read_ct_vt_idx", ("read_ct", "vt"), None, "CREATE INDEX ...", True)
            rel = Relation(rel.schema, rel.name, rel.kind, rel.columns, (ix,))
        rels += [rel, table("pgmq", f"a_{q}", {**columns, "archived_at": "timestamptz"})]
    return Catalog(tuple(rels), functions=frozenset({("pgmq", "set_vt")}))


def test_one_match_holds_every_queue_and_the_version_comes_from_the_columns() -> None:
    (m,) = PgmqDialect().detect(_catalog(V1_10, "orders", "emails"))
    assert (m.kind, m.schema, m.table, m.version) == ("pgmq", "pgmq", "meta", "1.10+")
    assert m.tables == ("meta", "q_emails", "a_emails", "q_orders", "a_orders")
    (old,) = PgmqDialect().detect(_catalog(V1_4, "orders"))
    assert old.version == "before 1.5"


def test_a_meta_table_of_another_shape_or_without_pgmq_is_not_pgmq() -> None:
    assert PgmqDialect().detect(Catalog((table("app", "meta", {"key": "text"}),))) == []
    assert PgmqDialect().detect(Catalog((table("app", "meta", META),))) == []


def test_statements_name_every_queue_table_and_adapt_to_old_columns() -> None:
    catalog = _catalog(V1_4, "orders", "emails", read_ct_index=True)
    (m,) = PgmqDialect().detect(catalog)
    model = PgmqDialect(dead_reads=4).model(m, catalog)
    shown = model.counts[0].shown()
    assert '"pgmq"."q_orders"' in shown and '"pgmq"."q_emails"' in shown and "'orders'" in shown
    assert "read_ct < 4" in shown
    retry = model.action(ActionKind.RETRY)
    assert retry is not None and "m.headers" not in retry.statement.shown()  # 1.4 has no headers column
    assert model.relations == (("pgmq", "q_emails"), ("pgmq", "q_orders"))
    assert model.support(Capability.DEAD).ok and not model.support(Capability.LIVENESS).ok


def test_without_the_read_ct_index_dead_is_advised_per_queue_and_scanned() -> None:
    catalog = _catalog(V1_10, "orders", "emails")
    (m,) = PgmqDialect().detect(catalog)
    model = PgmqDialect().model(m, catalog)
    assert [a.definition for a in model.advice] == [
        f'CREATE INDEX CONCURRENTLY "q_{q}_read_ct_vt_idx" ON "pgmq"."q_{q}" (read_ct, vt) INCLUDE (msg_id)'
        for q in ("emails", "orders")
    ]
    dead_counts = [st for st in model.counts if "dead" in st.columns]
    assert len(dead_counts) == 1 and not dead_counts[0].indexed  # a scan: the engine picks its tier
    assert model.dead is not None and not model.dead.indexed
    assert model.support(Capability.DEAD).ok  # the index is advice, never the price of the figure


def test_no_queue_yet_is_a_target_with_nothing_to_count() -> None:
    catalog = _catalog(V1_10)
    (m,) = PgmqDialect().detect(catalog)
    model = PgmqDialect().model(m, catalog)
    assert model.counts == () and model.actions == () and model.main_relation == ("pgmq", "meta")


def test_the_dead_rule_is_labelled_as_pgq_tops_own(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = _catalog(V1_10, "orders", read_ct_index=True)
    (m,) = PgmqDialect().detect(catalog)
    monkeypatch.setenv("PGQ_TOP_PGMQ_DEAD_READS", "7")  # read by the engine, set on the dialect
    model = next(d for d in dialects() if d.kind == "pgmq").model(m, catalog)
    dead = next(w for w in model.states if w.canonical == State.DEAD.value)
    assert dead.native == "read_ct >= 7 (pgq-top's rule, not pgmq's: pgmq has no dead state)"
    assert "read_ct >= 7" in model.stuck_rule and "not pgmq's" in model.stuck_rule
    assert "no stuck state" in model.stuck_rule
    discard = model.action(ActionKind.DISCARD)
    assert discard is not None and "read_ct >= 7" in discard.guard
    assert model.job is not None and "pgq-top''s rule" in model.job.text  # the job detail's details


def test_dead_reads_per_target_flag_and_file() -> None:
    assert build_parser().parse_args(["--dead-reads", "3"]).dead_reads == 3
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--dead-reads", "0"])
    (t,) = parse_targets({"targets": {"q": {"dsn": "dbname=x", "dead_reads": 4}}}, "t.toml")
    assert t.dead_reads == 4 and t.pins.dead_reads == 4
    (d,) = parse_targets({"targets": {"q": {"dsn": "dbname=x"}}}, "t.toml", Pins(dead_reads=6))
    assert d.dead_reads == 6
    with pytest.raises(PgqError, match="dead_reads must be a whole number"):
        parse_targets({"targets": {"q": {"dsn": "dbname=x", "dead_reads": "many"}}}, "t.toml")
    pgmq = next(x for x in dialects(None, 9) if x.kind == "pgmq")
    assert pgmq.dead_reads == 9  # type: ignore[attr-defined]


def test_every_statement_file_has_its_sections() -> None:
    text = "-- doc {q}\n-- @outer\nSELECT * FROM (\n@branch@\n) x\n-- @branch\nSELECT 1 FROM {q}"
    assert sections(text) == {"outer": "SELECT * FROM (\n@branch@\n) x", "branch": "SELECT 1 FROM {q}"}
