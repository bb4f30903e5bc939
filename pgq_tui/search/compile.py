"""A parsed search, as SQL on one kind's declared columns (contract.SearchColumns). Pure.

Identifiers are psycopg Identifiers, values are parameters (`%(w0)s`, ...), and the kind's
expressions are its constant SQL: nothing is formatted in. JSON path equality is `column @> jsonb`,
which a GIN index on the column serves where one exists. A term the kind cannot serve raises
QueryError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from psycopg import sql
from psycopg.types.json import Jsonb

from pgq_tui.dialects.contract import QueueModel, SearchColumns
from pgq_tui.search.query import Query, QueryError, Term

# the bounded scan reads at most this many of the newest jobs unless told otherwise (--limit-scan)
DEFAULT_SCAN = 100_000


@dataclass(frozen=True)
class Compiled:
    """The WHERE of a search on job row `j`, its parameters, and the columns it was compiled for."""

    where: sql.Composable
    params: dict[str, Any]
    columns: SearchColumns
    by_id: bool  # an id: term: the primary key finds it, no scan bound needed
    # (state word, index name): a state: term whose rows one of the kind's indexes holds apart
    # (SearchColumns.indexed_states); the search may then read all of that state's rows through it
    served: tuple[str, str] | None = None

    def shown(self) -> str:
        """The condition as text, parameters as placeholders (for a plan)."""
        return self.where.as_string(None)


def columns_of(model: QueueModel) -> SearchColumns:
    if model.search is None:
        raise QueryError(f"{model.title} ({model.kind}) cannot be searched yet")
    return model.search


def _nested(path: tuple[str, ...], value: object) -> object:
    """("customer", "id"), 42 -> {"customer": {"id": 42}}.

    >>> _nested(("a", "b"), 1)
    {'a': {'b': 1}}
    """
    for key in reversed(path):
        value = {key: value}
    return value


def _refuse(term: Term, model_title: str, why: str) -> QueryError:
    return QueryError(f"search term {term.text!r}: {model_title} {why}")


def _condition(term: Term, cols: SearchColumns, param: str, title: str) -> tuple[sql.Composable, object]:
    p = sql.Placeholder(param)
    if term.key == "id":
        if cols.integer_ids and not isinstance(term.value, int):
            raise _refuse(term, title, "job ids are integers")
        return sql.SQL("j.{} = {}").format(sql.Identifier(cols.id), p), term.value
    if term.key == "queue":
        if cols.queue is None and cols.queue_expr is None:
            raise _refuse(term, title, "jobs have no queue")
        return sql.SQL("{} = {}").format(queue_of(cols), p), term.value
    if term.key == "state":
        condition = cols.state(str(term.value))
        if condition is None:
            known = ", ".join(w for w, _ in cols.states)
            raise _refuse(term, title, f"has no {term.value} jobs to search (it has: {known})")
        return sql.SQL("({})").format(cols.fragment(condition)), None
    if term.key == "error":
        if cols.error is None:
            raise _refuse(term, title, "records no error text")
        text = sql.SQL("position(lower({}::text) in lower(({}))) > 0").format(p, cols.fragment(cols.error))
        return text, term.value
    if term.key == "tags":
        if cols.tags is None:
            raise _refuse(term, title, "jobs have no tags")
        return sql.SQL("{}::text = ANY(j.{})").format(p, sql.Identifier(cols.tags)), str(term.value)
    if term.key in ("since", "before"):
        if cols.time is None:
            raise _refuse(term, title, "records no job time")
        op = sql.SQL(">=" if term.key == "since" else "<")
        return sql.SQL("({}) {} {}").format(cols.fragment(cols.time), op, p), term.value
    document, path = term.path[0], term.path[1:]
    column = cols.document(document)
    if column is None:
        have = ", ".join(d for d, _ in cols.documents) or "none"
        raise _refuse(term, title, f"has no {document} document (it has: {have})")
    if not path:
        raise QueryError(f"search term {term.text!r}: name a key, e.g. {document}.customer.id:42")
    return sql.SQL("j.{} @> {}").format(sql.Identifier(column), p), Jsonb(_nested(path, term.value))


def compile_query(query: Query, model: QueueModel) -> Compiled:
    """The query's WHERE on `model`'s columns (raises QueryError naming a term it cannot serve)."""
    cols = columns_of(model)
    parts: list[sql.Composable] = []
    params: dict[str, Any] = {}
    for i, term in enumerate(query.terms):
        name = f"w{i}"
        condition, value = _condition(term, cols, name, f"{model.title} ({model.kind})")
        parts.append(condition)
        if value is not None:
            params[name] = value
    where = sql.SQL(" AND ").join(parts)
    # an id term finds its row by primary key, unbounded; a source's ids are computed (pgmq's
    # "queue:msg_id"): no key serves them, so such a search stays bounded
    return Compiled(
        where,
        params,
        cols,
        by_id=bool(query.of("id")) and cols.source is None,
        served=served_state(query, cols),
    )


def served_state(query: Query, cols: SearchColumns) -> tuple[str, str] | None:
    """The first state: term whose rows an index of the kind holds apart, with that index's name (a
    kind read through a source subquery has none: its tables are searched per table).

    >>> from datetime import datetime, timezone
    >>> from pgq_tui.search.query import parse
    >>> states = (("dead", "j.x"), ("done", "j.y"))
    >>> cols = SearchColumns(("s", "t"), states, indexed_states=(("dead", "t_d"),))
    >>> at = datetime(2026, 1, 1, tzinfo=timezone.utc)
    >>> served_state(parse("state:done state:dead", at), cols), served_state(parse("state:done", at), cols)
    (('dead', 't_d'), None)
    """
    if cols.source is not None:
        return None
    for term in query.of("state"):
        index = cols.state_index(str(term.value))
        if index is not None:
            return str(term.value), index
    return None


def _relation(cols: SearchColumns) -> sql.Composable:
    """The job table, or the kind's source subquery (a table per queue)."""
    if cols.source is not None:
        return sql.SQL("({})").format(cols.fragment(cols.source))
    return sql.Identifier(*cols.jobs)


def _source(c: Compiled, bounded: bool) -> sql.Composable:
    """The job rows searched: the newest %(w_scan)s by the kind's order column, the served state's
    rows (Compiled.served: a subquery the planner cannot merge, so it reads them by their index
    rather than walking the primary key for the outer ORDER BY), or the whole table."""
    jobs = _relation(c.columns)
    if not bounded and c.served is not None:
        condition = c.columns.state(c.served[0])
        assert condition is not None
        return sql.SQL("(SELECT * FROM {jobs} j WHERE ({condition}) OFFSET 0)").format(
            jobs=jobs, condition=c.columns.fragment(condition)
        )
    if not bounded:
        return jobs
    return sql.SQL("(SELECT * FROM {jobs} n ORDER BY n.{order} DESC LIMIT %(w_scan)s)").format(
        jobs=jobs, order=sql.Identifier(c.columns.order)
    )


def queue_of(cols: SearchColumns) -> sql.Composable:
    """The job's queue as text: the kind's column, or its expression (a lookup)."""
    if cols.queue_expr is not None:
        return sql.SQL("({})::text").format(cols.fragment(cols.queue_expr))
    if cols.queue is not None:
        return sql.SQL("j.{}::text").format(sql.Identifier(cols.queue))
    return sql.SQL("NULL::text")


def state_case(cols: SearchColumns) -> sql.Composable:
    """The job's canonical state word, from the kind's conditions (NULL when none holds)."""
    whens = [
        sql.SQL("WHEN {} THEN {}").format(cols.fragment(cond), sql.Literal(word))
        for word, cond in cols.states
    ]
    return sql.SQL("CASE {} END").format(sql.SQL(" ").join(whens)) if whens else sql.SQL("NULL::text")


def _expr(cols: SearchColumns, text: str | None, null: str) -> sql.Composable:
    """The kind's expression, or the typed NULL `null` where it has none."""
    return sql.SQL("({})").format(cols.fragment(text)) if text else sql.SQL(null)


def rows_statement(c: Compiled, bounded: bool) -> sql.Composed:
    """Matches newest first, at most %(w_rows)s, each with `matched` (how many match in all)."""
    cols = c.columns
    queue = queue_of(cols)
    return sql.SQL(
        "SELECT j.{id} AS id, {queue} AS queue, {state} AS state, {time} AS at,"
        " left({error}, 300) AS error, left(({payload})::text, 200) AS payload,"
        " count(*) OVER () AS matched"
        " FROM {source} j WHERE {where} ORDER BY j.{order} DESC LIMIT %(w_rows)s"
    ).format(
        id=sql.Identifier(cols.id),
        queue=queue,
        state=state_case(cols),
        time=_expr(cols, cols.time, "NULL::timestamptz"),
        error=_expr(cols, cols.error, "NULL::text"),
        payload=_expr(cols, cols.payload, "NULL::text"),
        source=_source(c, bounded),
        where=c.where,
        order=sql.Identifier(cols.order),
    )


def ids_statement(c: Compiled, bounded: bool) -> sql.Composed:
    """Every matching id, newest first (what a bulk action takes)."""
    return sql.SQL("SELECT j.{id} AS id FROM {source} j WHERE {where} ORDER BY j.{order} DESC").format(
        id=sql.Identifier(c.columns.id),
        source=_source(c, bounded),
        where=c.where,
        order=sql.Identifier(c.columns.order),
    )


def state_rows_statement(c: Compiled) -> sql.Composed:
    """How many jobs the served state holds, counting one past %(w_scan)s: walked through the
    state's index (the search disables sequential scans for it), so it reads at most %(w_scan)s + 1
    of its entries whatever the table's size."""
    assert c.served is not None
    condition = c.columns.state(c.served[0])
    assert condition is not None
    return sql.SQL(
        "SELECT count(*) AS jobs FROM (SELECT 1 FROM {jobs} j WHERE ({condition}) LIMIT %(w_scan)s + 1) x"
    ).format(jobs=_relation(c.columns), condition=c.columns.fragment(condition))


def scanned_statement(c: Compiled) -> sql.Composed:
    """How many rows the bounded scan reads, counting one past %(w_scan)s: at most %(w_scan)s means
    it read the whole table."""
    return sql.SQL(
        "SELECT count(*) AS scanned"
        " FROM (SELECT 1 FROM {jobs} n ORDER BY n.{order} DESC LIMIT %(w_scan)s + 1) x"
    ).format(jobs=_relation(c.columns), order=sql.Identifier(c.columns.order))


def recheck_statement(c: Compiled) -> sql.Composed:
    """The chosen ids (%(w_ids)s) that still match, locked for the rest of the batch's transaction:
    the action that follows in it changes only these, and no worker can change them meanwhile."""
    lock = sql.SQL(" FOR UPDATE OF j SKIP LOCKED" if c.columns.source is None else "")
    return sql.SQL(
        "SELECT j.{id} AS id FROM {jobs} j WHERE j.{id} = ANY(%(w_ids)s) AND {where} ORDER BY j.{id}{lock}"
    ).format(id=sql.Identifier(c.columns.id), jobs=_relation(c.columns), where=c.where, lock=lock)


def plan_reads(plan: dict[str, Any], table: str) -> tuple[tuple[str, ...], bool]:
    """From an EXPLAIN (FORMAT JSON) plan: the indexes it walks on `table`, and whether it reads
    `table` by a sequential scan.

    >>> leaf = {"Node Type": "Bitmap Index Scan", "Index Name": "t_dead"}
    >>> heap = {"Node Type": "Bitmap Heap Scan", "Relation Name": "t", "Plans": [leaf]}
    >>> plan_reads({"Node Type": "Sort", "Plans": [heap]}, "t")
    (('t_dead',), False)
    >>> plan_reads({"Node Type": "Seq Scan", "Relation Name": "t"}, "t")
    ((), True)
    """
    indexes: list[str] = []
    seq = False

    def walk(node: dict[str, Any], on_table: bool) -> None:
        nonlocal seq
        here = node.get("Relation Name") == table
        if here and node.get("Node Type") == "Seq Scan":
            seq = True
        name = node.get("Index Name")
        # a Bitmap Index Scan names no relation: it feeds the heap scan above it
        if name is not None and (here or on_table) and name not in indexes:
            indexes.append(name)
        kind = str(node.get("Node Type"))
        feeds = (here and kind == "Bitmap Heap Scan") or (on_table and kind in ("BitmapAnd", "BitmapOr"))
        for child in node.get("Plans", ()):
            walk(child, feeds)

    walk(plan, False)
    return tuple(indexes), seq
