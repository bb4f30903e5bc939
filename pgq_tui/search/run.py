"""Running a search: never a surprise full scan (docs/search.md).

Unless the query names an id (the primary key finds it) or the caller asks for no bound
(`limit_scan` None), the search reads only the newest `limit_scan` jobs by the kind's order column,
and the result says so ("newest 100,000 jobs; 312 match"), or that the scan read the whole table.
A state: term whose rows the kind's own index holds apart (SearchColumns.indexed_states) reads every
job of that state through it instead, when the bound holds them all ("all 2,000 dead jobs searched
(through index jobs_dead_idx)"), with sequential scans off.
It runs on its own short-lived connection (autocommit, read-only, `statement_timeout`), in one
REPEATABLE READ transaction so the scanned count and the matches see the same rows, and closes the
connection afterwards: no transaction stays open. Ctrl-C cancels the running statement (psycopg).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any

import psycopg
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.db.connect import connect
from pgq_tui.dialects.contract import JobId, QueueModel
from pgq_tui.errors import describe
from pgq_tui.search.compile import (
    DEFAULT_SCAN,
    Compiled,
    compile_query,
    ids_statement,
    plan_reads,
    recheck_statement,
    rows_statement,
    scanned_statement,
    state_rows_statement,
)
from pgq_tui.search.query import Query

APPLICATION_NAME = "pgq-top search"
STATEMENT_TIMEOUT_MS = 30_000
ROWS = 100  # matches listed by default (all are counted)
# A bulk action's per-batch recheck: of these chosen ids, those that still match, locked
Recheck = Callable[[psycopg.Connection, Sequence[JobId]], list[JobId]]


@dataclass(frozen=True)
class Through:
    """A state: term served by the kind's index on that state's rows (SearchColumns.indexed_states):
    `jobs` is how many that state holds, every one of them searched through `index`; None when they
    were more than the bound (then the search read the newest N jobs instead)."""

    state: str
    index: str
    jobs: int | None


@dataclass(frozen=True)
class Result:
    """What a search found and exactly what it searched."""

    query: str
    rows: tuple[dict[str, Any], ...]  # id, queue, state, at, error, payload (newest first)
    ids: tuple[JobId, ...]  # every match's id (filled for a bulk action, else ())
    matched: int
    scanned: int | None  # rows the bounded scan read; None when unbounded (by id, or no bound)
    bound: int | None  # the bound asked for; None: unbounded
    as_of: datetime
    complete: bool  # every job was searched (no bound, or the table holds no more than the bound)
    # why a bound asked for was not applied (no index orders the kind's jobs: it would read them all)
    unbounded_why: str | None = None
    # the state: term's index, when the kind has one that holds that state's rows apart
    through: Through | None = None

    def summary(self) -> str:
        """What was searched and how many match.

        >>> from datetime import timezone
        >>> at = datetime(2026, 1, 1, tzinfo=timezone.utc)
        >>> Result("q", (), (), 312, 100_000, 100_000, at, False).summary()
        'newest 100,000 jobs searched (older ones were not); 312 match'
        >>> Result("q", (), (), 2, 4_210, 100_000, at, True).summary()
        'all 4,210 jobs searched; 2 match'
        >>> Result("q", (), (), 1, None, None, at, True).summary()
        'every job searched; 1 match'
        >>> Result("q", (), (), 1, None, None, at, True, "no index orders them").summary()
        'every job searched (no index orders them); 1 match'
        >>> dead = Through("dead", "jobs_failed_idx", 2_000)
        >>> Result("q", (), (), 9, 2_000, 100_000, at, True, through=dead).summary()
        'all 2,000 dead jobs searched (through index jobs_failed_idx); 9 match'
        >>> done = Through("done", "ix", None)
        >>> Result("q", (), (), 9, 100_000, 100_000, at, False, through=done).summary()  # doctest: +ELLIPSIS
        'newest 100,000 jobs searched (older ones were not; more than 100,000 done jobs: too many for ...'
        """
        found = f"{self.matched:,} match"
        through = self.through
        if through is not None and through.jobs is not None:
            return (
                f"all {through.jobs:,} {through.state} jobs searched (through index {through.index}); {found}"
            )
        if self.bound is None:
            why = f" ({self.unbounded_why})" if self.unbounded_why else ""
            return f"every job searched{why}; {found}"
        if self.complete:
            return f"all {self.scanned:,} jobs searched; {found}"
        over = ""
        if through is not None:
            over = f"; more than {self.bound:,} {through.state} jobs: too many for index {through.index}"
        return f"newest {self.scanned:,} jobs searched (older ones were not{over}); {found}"

    def as_json(self) -> dict[str, Any]:
        return {
            "query": self.query,
            "matched": self.matched,
            "scanned": self.scanned,
            "bound": self.bound,
            "complete": self.complete,
            "unbounded_why": self.unbounded_why,
            "through": None if self.through is None else asdict(self.through),
            "summary": self.summary(),
            "as_of": self.as_of.isoformat(),
            "jobs": [
                {k: (v.isoformat() if isinstance(v, datetime) else v) for k, v in r.items() if k != "matched"}
                for r in self.rows
            ],
        }


def search(
    conninfo: str,
    model: QueueModel,
    query: Query,
    *,
    limit_scan: int | None = DEFAULT_SCAN,
    rows: int = ROWS,
    all_ids: bool = False,
    statement_timeout_ms: int = STATEMENT_TIMEOUT_MS,
    on_connect: Callable[[psycopg.Connection], None] | None = None,
) -> Result:
    """Run `query` on `model`'s jobs (raises QueryError for a term the kind cannot serve, PgqError
    with one line for a failed or timed-out read). `on_connect` is handed the search's connection
    before it reads, so another thread may cancel it (`conn.cancel_safe()`: the dashboard's escape)."""
    compiled = compile_query(query, model)
    asked = limit_scan is not None and not compiled.by_id  # an id term needs no bound
    unordered = asked and not compiled.columns.order_indexed
    bounded = asked and not unordered
    # w_scan NULL: no bound (LIMIT NULL is LIMIT ALL); w_ids NULL: any id (a kind's source reads both)
    params = {**compiled.params, "w_scan": limit_scan if bounded else None, "w_rows": rows, "w_ids": None}
    conn = connect(
        conninfo,
        application_name=APPLICATION_NAME,
        statement_timeout_ms=statement_timeout_ms,
        idle_in_transaction_timeout_ms=statement_timeout_ms,
        read_only=True,
    )
    try:
        if on_connect is not None:
            on_connect(conn)
        conn.isolation_level = psycopg.IsolationLevel.REPEATABLE_READ
        with conn.transaction(), conn.cursor(row_factory=dict_row) as cur:
            cur.execute("SELECT now() AS as_of")
            as_of = _one(cur)["as_of"]
            scanned, complete = None, True
            through = None
            if bounded and compiled.served is not None:
                # the state's own index: count its rows (at most the bound + 1 entries of it); when
                # the bound holds them all, search every one of them through it, unbounded. Sequential
                # scans stay off for this transaction: what the summary says is walked is walked.
                assert limit_scan is not None
                cur.execute("SET LOCAL enable_seqscan = off")
                cur.execute(state_rows_statement(compiled), params)
                jobs = int(_one(cur)["jobs"])
                state, index = compiled.served
                walked: tuple[str, ...] = ()
                if jobs <= limit_scan:
                    # the plan of the read itself names the index it walks (the planner may prefer
                    # another index of the state's rows); a plan that would still scan the table is
                    # not taken
                    cur.execute(sql.SQL("EXPLAIN (FORMAT JSON) ") + rows_statement(compiled, False), params)
                    plan = _one(cur)["QUERY PLAN"]
                    plan = plan if isinstance(plan, list) else json.loads(plan)
                    walked, seq = plan_reads(plan[0]["Plan"], compiled.columns.jobs[1])
                    walked = () if seq else walked
                if walked:
                    through = Through(state, ", ".join(walked), jobs)
                    bounded, scanned = False, jobs
                    params["w_scan"] = None
                else:  # too many to read them all (or no plan through it): the newest N jobs
                    through = Through(state, index, None) if jobs > limit_scan else None
                    cur.execute("SET LOCAL enable_seqscan TO DEFAULT")
            if bounded:
                cur.execute(scanned_statement(compiled), params)
                counted = int(_one(cur)["scanned"])  # one past the bound: are there older jobs?
                assert limit_scan is not None
                scanned, complete = min(counted, limit_scan), counted <= limit_scan
            cur.execute(rows_statement(compiled, bounded), params)
            found = cur.fetchall()
            ids: Sequence[JobId] = ()
            if all_ids:
                cur.execute(ids_statement(compiled, bounded), params)
                ids = [r["id"] for r in cur.fetchall()]
    except psycopg.Error as exc:
        raise describe(exc, table=".".join(compiled.columns.jobs)) from None
    finally:
        conn.close()
    matched = int(found[0]["matched"]) if found else 0
    return Result(
        query.text,
        tuple(found),
        tuple(ids),
        matched,
        scanned,
        limit_scan if bounded or through is not None else None,
        as_of,
        complete,
        _unordered_why(compiled) if unordered else None,
        through,
    )


def _unordered_why(compiled: Compiled) -> str:
    table = ".".join(compiled.columns.jobs)
    return f"no index orders {table} by {compiled.columns.order}: a bound would read and sort every row too"


def _one(cur: psycopg.Cursor[dict[str, Any]]) -> dict[str, Any]:
    row = cur.fetchone()
    assert row is not None
    return row


def still_matching(compiled: Compiled) -> Recheck:
    """A recheck for a bulk action's batch: the chosen ids that still match, locked (run inside the
    batch's transaction, on the action's connection)."""
    statement = recheck_statement(compiled)

    def recheck(conn: psycopg.Connection, ids: Sequence[JobId]) -> list[JobId]:
        with conn.cursor(row_factory=dict_row) as cur:
            cur.execute(statement, {**compiled.params, "w_ids": list(ids), "w_scan": None})
            return [r["id"] for r in cur.fetchall()]

    return recheck
