"""The search language (issue #32): parsing and each kind's SQL as pure functions, then the bounded
search on pgq-top's own table against a real server."""

from __future__ import annotations

import doctest
import re
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import psycopg
import pytest
from actions_support import pgq_model

import pgq_tui.audit as audit_module
import pgq_tui.cli_actions as cli_actions_module
import pgq_tui.search.compile as compile_module
import pgq_tui.search.flags as flags_module
import pgq_tui.search.query as query_module
import pgq_tui.search.run as run_module
from pgq_tui.dialects.catalog import Catalog
from pgq_tui.dialects.contract import Match
from pgq_tui.dialects.pgq.dialect import PgqDialect
from pgq_tui.queue import JobQueue
from pgq_tui.search.compile import compile_query, rows_statement
from pgq_tui.search.query import QueryError, parse
from pgq_tui.search.run import search

NOW = datetime(2026, 12, 2, 5, 0, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "module", [query_module, compile_module, run_module, flags_module, audit_module, cli_actions_module]
)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.failed == 0 and result.attempted > 0


def test_parse_every_term() -> None:
    q = parse(
        'id:7 queue:emails state:dead error:~"connection refused" args.a.b:"42" since:2h before:04:30', NOW
    )
    got = [(t.name, t.value) for t in q.terms]
    assert got == [
        ("id", 7),
        ("queue", "emails"),
        ("state", "dead"),
        ("error", "connection refused"),
        ("args.a.b", "42"),  # quoted: a string
        ("since", NOW - timedelta(hours=2)),
        ("before", NOW.replace(hour=4, minute=30)),
    ]


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("state:dead colour:red", "'colour:red': unknown key 'colour'"),
        ("state:Dead", "'state:Dead': a state is a word"),
        ("queue:~x", "'queue:~x': only error: takes ~"),
        ("since:soon", "'since:soon': want an age"),
        ("before:25:00", "'before:25:00': not a time of day"),
        ("bogus", "'bogus': want key:value"),
        ('error:"open', "unbalanced quote"),
        ("args.a b:1", "'args.a': want key:value"),
        ("args:1", "'args:1': name a key in it"),
        ("foo.x:1", "unknown document 'foo'"),
        ("args.x:~1", "no ~"),
        ("   ", "empty search"),
    ],
)
def test_parse_errors_name_the_term(text: str, named: str) -> None:
    with pytest.raises(QueryError) as err:
        parse(text, NOW)
    message = str(err.value)
    assert named in message and "\n" not in message


def _pgq_model():  # type: ignore[no-untyped-def]
    match = Match("pgq", "public", "jobs")
    return PgqDialect().model(match, Catalog(relations={}))


def test_pgq_sql_is_composed_with_identifiers_and_parameters() -> None:
    model = _pgq_model()
    c = compile_query(
        parse('queue:emails state:dead error:~"refused" args.customer.id:42 since:1h', NOW), model
    )
    text = c.shown()
    assert text == (
        "j.\"queue\"::text = %(w0)s AND (j.status = 'failed') AND position(lower(%(w2)s::text) in"
        ' lower((j.last_error))) > 0 AND j."payload" @> %(w3)s AND (coalesce(j.finished_at, j.created_at))'
        " >= %(w4)s"
    )
    assert c.params["w0"] == "emails" and c.params["w3"].obj == {"customer": {"id": 42}}
    bounded = rows_statement(c, bounded=True).as_string(None)
    assert 'FROM (SELECT * FROM "public"."jobs" n ORDER BY n."id" DESC LIMIT %(w_scan)s) j' in bounded


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("meta.x:1", "'meta.x:1': pgq-top (pgq) has no meta document (it has: args)"),
        ("id:abc", "'id:abc': pgq-top (pgq) job ids are integers"),
        (
            "state:cancelled",
            "pgq-top (pgq) has no cancelled jobs to search (it has: ready, scheduled, running",
        ),
    ],
)
def test_a_term_the_kind_cannot_serve_is_refused(text: str, named: str) -> None:
    with pytest.raises(QueryError, match=re.escape(named)):
        compile_query(parse(text, NOW), _pgq_model())


# -- against the server ----------------------------------------------------------------------------
def _fail(sql: psycopg.Connection, ids: list[int], error: str) -> None:
    sql.execute(
        "UPDATE jobs SET status = 'failed', last_error = %s, finished_at = now() WHERE id = ANY(%s)",
        (error, ids),
    )


@pytest.fixture
def incident(queue: JobQueue, sql: psycopg.Connection) -> dict[str, list[int]]:
    """40 jobs: 20 dead with 'connection refused', 6 dead with 'invalid card', 14 pending."""
    ids = queue.enqueue("payments", [{"customer": {"id": i % 3}, "n": i} for i in range(40)])
    _fail(sql, ids[:20], "ConnectionError: Connection REFUSED by payments-api")
    _fail(sql, ids[20:26], "CardError: invalid card")
    return {"refused": ids[:20], "card": ids[20:26], "pending": ids[26:]}


def test_finds_exactly_the_matches_and_says_it_searched_everything(
    dsn: str, incident: dict[str, list[int]]
) -> None:
    model = pgq_model(dsn)
    result = search(dsn, model, parse('error:~"connection refused" state:dead', NOW), rows=5)
    assert result.matched == 20 and len(result.rows) == 5
    # the 26 dead jobs, read through pgq-top's dead-jobs index (not the 40 of the table)
    assert result.complete and result.scanned == 26
    assert result.summary() == "all 26 dead jobs searched (through index jobs_dead_idx); 20 match"
    assert {r["state"] for r in result.rows} == {"dead"}
    both = search(dsn, model, parse("state:dead args.customer.id:0", NOW), all_ids=True)
    dead = set(incident["refused"] + incident["card"])
    expected = {
        i for n, i in enumerate(incident["refused"] + incident["pending"] + incident["card"]) if i in dead
    }
    assert set(both.ids) <= expected and both.matched == len(both.ids) > 0


def test_bounded_scan_says_what_it_searched(dsn: str, incident: dict[str, list[int]]) -> None:
    model = pgq_model(dsn)
    result = search(dsn, model, parse("state:dead", NOW), limit_scan=25, all_ids=True)
    # the newest 25 ids are 15..40 of the incident: 6 card errors and the last 5 refused
    # the 26 dead jobs are more than the bound: the newest 25 jobs, as with no index
    assert result.scanned == 25 and not result.complete
    assert result.summary() == (
        "newest 25 jobs searched (older ones were not; more than 25 dead jobs: too many for index"
        " jobs_dead_idx); 11 match"
    )
    assert set(result.ids) == set(incident["refused"][15:] + incident["card"])
    exact = search(dsn, model, parse("queue:payments", NOW), limit_scan=40)  # the bound is the table
    assert exact.complete and exact.summary() == "all 40 jobs searched; 40 match"
    dead = search(dsn, model, parse("state:dead", NOW), limit_scan=26)  # the bound holds the dead ones
    assert (
        dead.complete
        and dead.summary() == "all 26 dead jobs searched (through index jobs_dead_idx); 26 match"
    )
    by_id = search(dsn, model, parse(f"id:{incident['refused'][0]}", NOW), limit_scan=25)
    assert by_id.matched == 1 and by_id.complete  # the primary key: no bound needed


def test_search_holds_no_transaction_and_obeys_its_timeout(dsn: str, incident: dict[str, list[int]]) -> None:
    model = pgq_model(dsn)
    search(dsn, model, parse("state:dead", NOW))
    with psycopg.connect(dsn, autocommit=True) as conn:
        left = conn.execute(
            "SELECT count(*) FROM pg_stat_activity WHERE application_name = %s",
            (run_module.APPLICATION_NAME,),
        ).fetchone()
        assert left == (0,)
        # a search slower than its statement_timeout fails with one line, not a hang
        conn.execute(
            "CREATE FUNCTION slow(int) RETURNS boolean LANGUAGE sql AS 'SELECT pg_sleep(0.2) IS NOT NULL'"
        )
    assert model.search is not None
    slow = replace(model, search=replace(model.search, error="CASE WHEN slow(1) THEN j.last_error END"))
    with pytest.raises(Exception, match=r"timeout|cancel") as err:
        search(dsn, slow, parse("error:x", NOW), statement_timeout_ms=300)
    assert "\n" not in str(err.value)


def test_no_bound_where_no_index_orders_the_jobs(dsn: str, incident: dict[str, list[int]]) -> None:
    """pg-boss's case (order_indexed False): a bound would read and sort every row, so the search
    reads them all and says why, rather than claiming the newest N."""
    model = pgq_model(dsn)
    assert model.search is not None
    unordered = replace(model, search=replace(model.search, order_indexed=False))
    result = search(dsn, unordered, parse("state:dead", NOW), limit_scan=25)
    assert result.complete and result.bound is None and result.scanned is None and result.matched == 26
    assert result.summary() == (
        "every job searched (no index orders public.jobs by id: a bound would read and sort every row"
        " too); 26 match"
    )
    assert result.as_json()["unbounded_why"] is not None
