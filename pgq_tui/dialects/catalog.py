"""The one catalog read that feeds every dialect's detection, and its result as frozen data.

`CATALOG_SQL` returns one row: relations (tables, partitioned tables, views) of every non-system
schema with their columns, indexes and comments; enum types with their labels; function names; and
the version markers the dialects asked for (e.g. `max(id)` of graphile_worker's `migrations`): the
tables that have them, whose `max()` `read_catalog()` then reads with names quoted by psycopg.sql,
only where the role may SELECT the table.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pgq_tui.dialects.predicate import implied_by, restricts_to


@dataclass(frozen=True)
class VersionMarker:
    """`max(column)` of every relation named `table` (any schema), optionally filtered by
    `filter_column = filter_value` (River's `line = 'main'`)."""

    table: str
    column: str
    filter_column: str | None = None
    filter_value: str | None = None

    def as_json(self) -> dict[str, str | None]:
        return {
            "table": self.table,
            "column": self.column,
            "filter_column": self.filter_column,
            "filter_value": self.filter_value,
        }


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # format_type(), e.g. "timestamp with time zone", "graphile_worker.job_state"
    not_null: bool


@dataclass(frozen=True)
class Index:
    name: str
    columns: tuple[str, ...]  # key columns in order ("" for an expression)
    predicate: str | None  # pg_get_expr of the partial index's WHERE, e.g. "(status = 'pending'::text)"
    definition: str
    valid: bool


@dataclass(frozen=True)
class Partition:
    schema: str
    name: str
    parent: tuple[str, str]  # (schema, name) of the table it is a partition of
    leaf: bool  # False: itself partitioned (a sub-partitioned partition)
    level: int  # 1: a partition of the relation itself


@dataclass(frozen=True)
class Relation:
    schema: str
    name: str
    kind: str  # pg_class.relkind: r table, p partitioned, v view, m matview, f foreign
    columns: tuple[Column, ...]
    indexes: tuple[Index, ...] = ()
    comment: str | None = None
    can_select: bool = True
    # a partitioned table's partition tree below it, shallowest first; () otherwise
    partitions: tuple[Partition, ...] = ()

    @property
    def column_names(self) -> frozenset[str]:
        return frozenset(c.name for c in self.columns)

    def column(self, name: str) -> Column | None:
        return next((c for c in self.columns if c.name == name), None)

    def has_index(
        self,
        leading: Sequence[str],
        equal: Mapping[str, Collection[str]] | None = None,
        also: Collection[str] = (),
        only: Collection[str] = (),
    ) -> bool:
        """Some valid index starts with `leading` columns; with `equal`/`also`, a partial one that a
        query with `column IN (values)` for each of `equal` and the conditions `also` can use (its
        predicate read by predicate.implied_by, never by a substring test); with `only`, one holding
        only rows that meet those conditions (predicate.restricts_to)."""
        return self.index_for(leading, equal, also, only) is not None

    def index_for(
        self,
        leading: Sequence[str],
        equal: Mapping[str, Collection[str]] | None = None,
        also: Collection[str] = (),
        only: Collection[str] = (),
    ) -> Index | None:
        """The first index has_index would accept (its name, for saying which index a read walks)."""
        n = len(leading)
        for ix in self.indexes:
            if not ix.valid or tuple(ix.columns[:n]) != tuple(leading):
                continue
            if only and not restricts_to(ix.predicate, only):
                continue
            if (not equal and not also) or implied_by(ix.predicate, equal, also):
                return ix
        return None


@dataclass(frozen=True)
class EnumType:
    schema: str
    name: str
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Catalog:
    relations: tuple[Relation, ...]
    enums: tuple[EnumType, ...] = ()
    functions: frozenset[tuple[str, str]] = frozenset()  # (schema, name)
    # (schema, table, column) -> the marker's max value as text; None when unreadable or empty
    markers: Mapping[tuple[str, str, str], str | None] = field(default_factory=dict)

    def relation(self, schema: str, name: str) -> Relation | None:
        return next((r for r in self.relations if r.schema == schema and r.name == name), None)

    def readable(self, schema: str, name: str) -> bool:
        """The relation exists and the role may read it (has_table_privilege at the catalog read)."""
        relation = self.relation(schema, name)
        return relation is not None and relation.can_select

    def named(self, name: str) -> list[Relation]:
        return [r for r in self.relations if r.name == name]

    def in_schema(self, schema: str) -> list[Relation]:
        return [r for r in self.relations if r.schema == schema]

    def with_columns(self, columns: Iterable[str]) -> list[Relation]:
        want = frozenset(columns)
        return [r for r in self.relations if want <= r.column_names]

    def enum(self, schema: str, name: str) -> EnumType | None:
        return next((e for e in self.enums if e.schema == schema and e.name == name), None)

    def enums_named(self, name: str) -> list[EnumType]:
        return [e for e in self.enums if e.name == name]

    def has_function(self, schema: str, name: str) -> bool:
        return (schema, name) in self.functions

    def marker(self, schema: str, table: str, column: str) -> str | None:
        return self.markers.get((schema, table, column))


_SYSTEM = "n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname NOT LIKE 'pg\\_%%'"

CATALOG_SQL = f"""
WITH rels AS (
    SELECT c.oid, n.nspname::text AS schema, c.relname::text AS name, c.relkind::text AS kind,
           obj_description(c.oid, 'pg_class') AS comment,
           has_table_privilege(c.oid, 'SELECT') AS can_select
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND NOT c.relispartition AND {_SYSTEM}
), markers AS (
    -- Only where the table and its columns exist and the role may read it; the max() itself is read
    -- by read_catalog() (query_to_xml would need a server built with libxml, which many are not).
    SELECT r.schema, r.name, m->>'column' AS col,
           CASE WHEN m->>'filter_column' IS NOT NULL
                     AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = r.oid
                                 AND a.attname = m->>'filter_column' AND NOT a.attisdropped)
                THEN m->>'filter_column' END AS filter_column,
           m->>'filter_value' AS filter_value,
           r.can_select AND EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = r.oid
                                    AND a.attname = m->>'column' AND NOT a.attisdropped) AS readable
    FROM jsonb_array_elements(%(markers)s::jsonb) m
    JOIN rels r ON r.name = m->>'table' AND r.kind IN ('r', 'p')
)
SELECT
  (SELECT coalesce(json_agg(json_build_object(
      'schema', r.schema, 'name', r.name, 'kind', r.kind, 'comment', r.comment,
      'can_select', r.can_select,
      'partitions', CASE WHEN r.kind = 'p' THEN
                    (SELECT coalesce(json_agg(json_build_array(cn.nspname, cc.relname, pn.nspname,
                                                               pc.relname, t.isleaf, t.level)
                                              ORDER BY t.level, cn.nspname, cc.relname), '[]')
                     FROM pg_partition_tree(r.oid) t
                     JOIN pg_class cc ON cc.oid = t.relid JOIN pg_namespace cn ON cn.oid = cc.relnamespace
                     JOIN pg_class pc ON pc.oid = t.parentrelid
                     JOIN pg_namespace pn ON pn.oid = pc.relnamespace
                     WHERE t.level > 0) END,
      'columns', (SELECT coalesce(json_agg(json_build_object(
                      'name', a.attname, 'type', format_type(a.atttypid, a.atttypmod),
                      'not_null', a.attnotnull) ORDER BY a.attnum), '[]')
                  FROM pg_attribute a WHERE a.attrelid = r.oid AND a.attnum > 0 AND NOT a.attisdropped),
      'indexes', (SELECT coalesce(json_agg(json_build_object(
                      'name', ic.relname,
                      'columns', (SELECT coalesce(json_agg(coalesce(att.attname::text, '')
                                                   ORDER BY k.ord), '[]')
                                  FROM unnest(i.indkey::int2[]) WITH ORDINALITY AS k(attnum, ord)
                                  LEFT JOIN pg_attribute att ON att.attrelid = i.indrelid
                                                            AND att.attnum = k.attnum AND k.attnum > 0
                                  WHERE k.ord <= i.indnkeyatts),
                      'predicate', pg_get_expr(i.indpred, i.indrelid),
                      'definition', pg_get_indexdef(i.indexrelid),
                      'valid', i.indisvalid)), '[]')
                  FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid WHERE i.indrelid = r.oid)
  )), '[]') FROM rels r) AS relations,
  (SELECT coalesce(json_agg(json_build_object(
      'schema', n.nspname, 'name', t.typname,
      'labels', (SELECT json_agg(e.enumlabel ORDER BY e.enumsortorder) FROM pg_enum e
                 WHERE e.enumtypid = t.oid))), '[]')
   FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
   WHERE t.typtype = 'e' AND {_SYSTEM}) AS enums,
  (SELECT coalesce(json_agg(DISTINCT jsonb_build_array(n.nspname, p.proname)), '[]')
   FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE {_SYSTEM}) AS functions,
  (SELECT coalesce(json_agg(json_build_object('schema', schema, 'table', name, 'column', col,
                                              'filter_column', filter_column, 'filter_value', filter_value,
                                              'readable', readable)), '[]') FROM markers) AS markers
"""


def marker_param(markers: Iterable[VersionMarker]) -> str:
    """The `%(markers)s` parameter: every dialect's version markers, as JSON."""
    unique = {m: None for m in markers}
    return json.dumps([m.as_json() for m in unique])


def _load(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def catalog_from_row(row: Mapping[str, Any]) -> Catalog:
    """The CATALOG_SQL row as a Catalog (pure, so detection tests can build catalogs by hand too)."""
    relations = tuple(
        Relation(
            schema=r["schema"],
            name=r["name"],
            kind=r["kind"],
            comment=r["comment"],
            can_select=bool(r["can_select"]),
            partitions=tuple(
                Partition(p[0], p[1], (p[2], p[3]), bool(p[4]), int(p[5])) for p in r.get("partitions") or ()
            ),
            columns=tuple(Column(c["name"], c["type"], bool(c["not_null"])) for c in r["columns"]),
            indexes=tuple(
                Index(i["name"], tuple(i["columns"]), i["predicate"], i["definition"], bool(i["valid"]))
                for i in r["indexes"]
            ),
        )
        for r in _load(row["relations"])
    )
    enums = tuple(EnumType(e["schema"], e["name"], tuple(e["labels"] or ())) for e in _load(row["enums"]))
    functions = frozenset((s, n) for s, n in _load(row["functions"]))
    markers = {(m["schema"], m["table"], m["column"]): m.get("value") for m in _load(row["markers"])}
    return Catalog(relations, enums, functions, markers)


def table(schema: str, name: str, columns: Mapping[str, str], *, kind: str = "r") -> Relation:
    """A hand-made Relation for pure detection tests: {column: type}."""
    return Relation(schema, name, kind, tuple(Column(c, t, False) for c, t in columns.items()))
