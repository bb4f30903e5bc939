"""The search language on pgmq (issue #32): every queue table and its archive, `queue:` a queue's
table, `args.` its message and `meta.` its headers (jsonb), `id:<queue>:<msg_id>`, the bounded scan
per table, and a bulk retry of exactly the matching dead messages. Filled by pgmq's PyPI client."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import psycopg
import pytest
from frameworks import pgmq_client

from pgq_tui.actions import Actions
from pgq_tui.audit import AuditLog
from pgq_tui.cli import main
from pgq_tui.detection import find_queues
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.search.compile import compile_query
from pgq_tui.search.query import QueryError, parse
from pgq_tui.search.run import search, still_matching

READS = str(pgmq_client.DEAD_READS)


@pytest.fixture
def pgmq(empty_dsn: str) -> dict[str, list[int]]:
    """orders: 6 dead 'card' messages (headers tenant acme), 4 dead 'refund' ones; emails: 3 ready."""
    pgmq_client.install(empty_dsn)
    ids: dict[str, list[int]] = {}
    with pgmq_client.client(empty_dsn) as q:
        q.create_queue("orders")
        q.create_queue("emails")
        ids["card"] = [
            q.send("orders", {"kind": "card", "n": i}, headers={"tenant": "acme"}) for i in range(6)
        ]
        ids["refund"] = [q.send("orders", {"kind": "refund", "n": i}) for i in range(4)]
        ids["emails"] = [q.send("emails", {"kind": "card", "n": i}) for i in range(3)]
        for _ in range(pgmq_client.DEAD_READS):  # a consumer that fails on each: read, then make visible
            for msg in q.read("orders", vt=600, qty=10):
                q.set_vt("orders", msg.msg_id, 0)
    return ids


def _model(dsn: str):  # type: ignore[no-untyped-def]
    (target,) = find_queues(dsn, kind="pgmq", dead_reads=pgmq_client.DEAD_READS)
    return target.model


def test_pgmq_terms_find_exactly_the_messages(empty_dsn: str, pgmq: dict[str, list[int]]) -> None:
    model = _model(empty_dsn)
    now = datetime.now(timezone.utc)

    def found(text: str, **kw: object) -> set[str]:
        return {r["id"] for r in search(empty_dsn, model, parse(text, now), rows=1000, **kw).rows}  # type: ignore[arg-type]

    card = {f"orders:{i}" for i in pgmq["card"]}
    assert found("args.kind:card state:dead") == card
    assert found("args.kind:card") == card | {f"emails:{i}" for i in pgmq["emails"]}
    assert found("meta.tenant:acme") == card
    assert found("queue:emails") == {f"emails:{i}" for i in pgmq["emails"]}
    assert found("state:ready") == {f"emails:{i}" for i in pgmq["emails"]}
    assert found(f"id:orders:{pgmq['refund'][0]}") == {f"orders:{pgmq['refund'][0]}"}
    result = search(empty_dsn, model, parse("state:dead", now), limit_scan=2)
    # the newest 2 messages of each table are read, then the newest 2 of those: 2 searched, not all
    assert (result.scanned, result.complete) == (2, False) and "newest 2 jobs" in result.summary()
    with pytest.raises(QueryError, match="'error:~x'"):
        compile_query(parse("error:~x", now), model)


def test_pgmq_jobs_cli_and_a_bulk_retry_of_exactly_the_matches(
    empty_dsn: str, pgmq: dict[str, list[int]], capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    pins = ["--dsn", empty_dsn, "--kind", "pgmq", "--dead-reads", READS]
    assert main(["jobs", *pins, "--where", "args.kind:card state:dead", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["matched"] == 6 and doc["complete"] and {j["queue"] for j in doc["jobs"]} == {"orders"}
    model = _model(empty_dsn)
    query = parse("args.kind:card state:dead", datetime.now(timezone.utc))
    matches = search(empty_dsn, model, query, all_ids=True)
    with Actions(empty_dsn, model, audit=AuditLog(tmp_path / "a.jsonl"), batch=4) as actions:
        plan = actions.plan(ActionKind.RETRY, matches.ids)
        outcome = actions.execute(plan, recheck=still_matching(compile_query(query, model)))
    assert outcome.error is None and outcome.changed == 6
    with psycopg.connect(empty_dsn) as conn:
        rows = conn.execute(
            "SELECT message->>'kind', read_ct >= %s, count(*) FROM pgmq.q_orders GROUP BY 1, 2", (int(READS),)
        ).fetchall()
    # the card messages are back as fresh copies (read_ct 0); the refund ones are still dead
    assert sorted(rows) == [("card", False, 6), ("refund", True, 4)]
