"""pgmq end to end with its PyPI client (tests/frameworks/pgmq_client.py), issue 21's acceptance:

pgmq's SQL installed by the client's installer; messages sent, delayed, read with a short and a long
visibility timeout by consumers that "crash" (never delete), archived, and read until pgq-top's dead
rule (read_ct >= 3) calls them dead. Then: one target shows every queue of pgmq.meta; before the
operator adds the advised read_ct indexes, what pgmq's own indexes serve is exact and dead is named
with the index it needs (nothing in the database changed); after, every count equals ground truth;
the CLI requeues the in-flight message and retries the dead and the archived one; a fresh consumer
reads exactly those messages.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime, timezone
from typing import Any

import psycopg
import pytest
from dialect_support import run

from pgq_tui.cli import main
from pgq_tui.detection import find_queues
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.dialects.introspect import read_catalog
from pgq_tui.dialects.pgmq import PgmqDialect
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED
from pgq_tui.monitor import rates
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import EXACT

from . import pgmq_client
from .cases import follow_index_advice
from .test_acceptance import shown_counts, table_shape
from .test_plans import seq_scans

DEAD_READS = ("--dead-reads", str(pgmq_client.DEAD_READS))  # pgq-top's dead rule, told per target


NOW = datetime(2026, 1, 1, tzinfo=timezone.utc)


def snapshot(capsys: pytest.CaptureFixture[str], dsn: str) -> dict[str, Any]:
    code = main(["snapshot", "--json", "--dsn", dsn, "--kind", "pgmq", *DEAD_READS])
    out, err = capsys.readouterr()
    assert (code, err) == (EXIT_OK, ""), err
    return json.loads(out)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def true_counts(dsn: str) -> Counter[tuple[str, str]]:
    return Counter(
        {(q, s): n for q, states in pgmq_client.truth_by_queue(dsn).items() for s, n in states.items()}
    )


def test_pgmq_end_to_end(framework_dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    dsn = framework_dsn
    assert pgmq_client.install(dsn) == "1.13.0"
    ids = pgmq_client.populate(dsn)
    orders = {role: f"orders:{msg_id}" for role, msg_id in ids["orders"].items()}

    # Before the operator adds any index: pgmq's own indexes serve everything but the dead rule, which
    # is counted and listed by a scan (the tables are small: in the poll) next to the index it would
    # need, and nothing in the database changed.
    shape = table_shape(dsn)
    snap = snapshot(capsys, dsn)
    assert (
        snap["kind"] == "pgmq" and "read_ct >= 3" in snap["stuck_rule"] and "not pgmq's" in snap["stuck_rule"]
    )
    assert {q["queue"] for q in snap["queues"]} >= {"orders", "emails"}
    assert "dead" not in snap["unsupported"] and "dead" not in snap["unknown"]
    dead_note = next(q["figures"]["dead"]["note"] for q in snap["queues"] if q["queue"] == "orders")
    assert "CREATE INDEX" in dead_note and "read_ct" in dead_note, dead_note
    want = true_counts(dsn)
    assert shown_counts(snap) == +Counter({k: v for k, v in want.items() if k[1] != "stuck"})
    assert table_shape(dsn) == shape, "the monitor altered the database"

    # The operator follows the advice: every count is exact, in every queue.
    told = (PgmqDialect(dead_reads=pgmq_client.DEAD_READS),)
    assert len(follow_index_advice(dsn, "pgmq", told)) == 3  # one per queue table: orders, emails, idle
    snap = snapshot(capsys, dsn)
    assert "dead" not in snap["unsupported"]
    want = true_counts(dsn)
    assert shown_counts(snap) == +Counter({k: v for k, v in want.items() if k[1] != "stuck"})
    for queue in ("orders", "emails"):
        assert [want[(queue, s)] for s in ("ready", "scheduled", "running", "dead", "done")] == [
            2,
            1,
            1,
            1,
            1,
        ]
    assert {str(r["id"]) for r in snap["leases"]["rows"]} == {
        orders["held"],
        f"emails:{ids['emails']['held']}",
    }
    assert {r["liveness"] for r in snap["leases"]["rows"]} == {"unknown"}
    assert snap["stuck"]["rows"] == []  # pgmq has no stuck state
    assert {str(r["id"]) for r in snap["dead"]["rows"]} == {orders["dead"], f"emails:{ids['emails']['dead']}"}

    # A consumer drains what is visible in orders (and deletes it, as a successful consumer does), so
    # the fresh consumer below sees only what the CLI brings back.
    with pgmq_client.client(dsn) as q:
        drained = {m.message["key"] for m in q.read("orders", vt=60, qty=100)}
        assert drained == {"orders-ready", "orders-short", "orders-dead"}
        for msg_id in (ids["orders"]["ready"], ids["orders"]["short"]):
            assert q.delete("orders", msg_id)  # the dead one stays in flight (and dead)

    # The CLI: a delayed message is not in flight (refused); the in-flight one is made visible; the
    # dead and the archived ones are retried.
    where = ("--dsn", dsn, "--kind", "pgmq", *DEAD_READS)
    code, _, err = cli(capsys, "requeue", *where, "--ids", orders["later"], "--yes")
    assert code == EXIT_REFUSED and "nothing to requeue" in err, err
    code, out, err = cli(capsys, "requeue", *where, "--ids", orders["held"], "--yes")
    assert (code, err) == (EXIT_OK, "") and "pgmq" in out, err
    code, out, err = cli(capsys, "retry", *where, "--ids", f"{orders['dead']},{orders['archived']}", "--yes")
    assert (code, err) == (EXIT_OK, "") and "2 of 2" in out, (out, err)
    after = true_counts(dsn)
    assert (after[("orders", "dead")], after[("orders", "done")], after[("orders", "running")]) == (0, 0, 0)
    assert after[("orders", "ready")] == 3 and after[("emails", "dead")] == 1  # other queues untouched

    # A fresh consumer reads exactly those three messages; the retried ones as new, unread copies.
    with pgmq_client.client(dsn) as q:
        fresh = q.read("orders", vt=60, qty=100)
    got = {m.message["key"]: m for m in fresh}
    assert set(got) == {"orders-held", "orders-dead", "orders-archived"}
    assert got["orders-held"].msg_id == ids["orders"]["held"] and got["orders-held"].read_ct == 2
    assert got["orders-dead"].read_ct == 1 and got["orders-dead"].msg_id > ids["orders"]["ready"]
    assert got["orders-archived"].read_ct == 1


def test_per_queue_rates_come_from_the_msg_id_sequences(framework_dsn: str) -> None:
    """The activity statement reads each queue's msg_id sequence, no table: between two polls the
    messages sent per queue are new, exactly, whoever sent them and whatever happened to them since
    (read, deleted, archived); a queue created after detection waits for the next detection."""
    dsn = framework_dsn
    pgmq_client.install(dsn)
    with pgmq_client.client(dsn) as q:
        for name in ("orders", "emails", "idle"):
            q.create_queue(name)
        q.send("orders", {"key": "before"})
    (target,) = find_queues(dsn, kind="pgmq")
    statement = target.model.activity
    assert statement is not None
    with psycopg.connect(dsn, autocommit=True) as conn:

        def poll(prev: rates.Activity | None) -> rates.Activity:
            return rates.activity(run(conn, statement, **rates.activity_params(prev)), prev, NOW)

        first = poll(None)  # learns the watermark (the sum of the sequences) only
        assert first.first and first.max_id == 1
        second = poll(first)  # learns each queue's mark
        assert second.new == {} and second.holes == 0
        with pgmq_client.client(dsn) as q:
            sent = [q.send("orders", {"key": f"o{i}"}) for i in range(5)]
            q.send_batch("emails", [{"key": "e1"}, {"key": "e2"}])
            q.delete("orders", sent[0])
            q.archive("orders", sent[1])
        third = poll(second)
        assert third.new == {"orders": 5, "emails": 2} and third.holes == 0 and third.max_id == 8
        assert poll(third).new == {}

    with Monitor(dsn, target.model, read_only=True) as monitor:
        monitor.collect()
        monitor.collect()
        with pgmq_client.client(dsn) as q:
            q.send_batch("orders", [{"key": f"m{i}"} for i in range(4)])
        snap = monitor.collect()
    orders = snap.throughput.per_queue["orders"]
    assert orders.enqueued > 0 and orders.figures["enqueued"].accuracy == EXACT
    assert "emails" not in snap.throughput.per_queue or snap.throughput.per_queue["emails"].enqueued == 0


def test_every_poll_walks_an_index_before_and_after_the_advice(framework_dsn: str) -> None:
    """With sequential scans disabled, a Seq Scan left on a queue table or an archive means the
    dialect would scan it: none in any poll statement, on pgmq's own indexes and after the advice;
    action statements given ids reach their rows through the primary key."""
    dsn = framework_dsn
    pgmq_client.install(dsn)
    pgmq_client.populate(dsn)
    told = (PgmqDialect(dead_reads=pgmq_client.DEAD_READS),)
    params = {"cap1": 10, "rows": 50, "id": "orders:1", "ids": ["orders:1"], "queue": None, "batch": 100}
    activity = {"after": 1, "max_span": 1000, "gap_rows": 1000, "lo": [1], "hi": [1]}

    def model() -> Any:
        with psycopg.connect(dsn, autocommit=True) as conn:
            catalog = read_catalog(conn, told)
            (match,) = told[0].detect(catalog)
            return told[0].model(match, catalog)

    def scanned(statement: Any, extra: dict[str, Any] | None = None) -> list[str]:
        with psycopg.connect(dsn, autocommit=True) as conn:
            conn.execute("ANALYZE")
            return [
                r for r in seq_scans(conn, statement, {**params, **(extra or {})}) if r[:2] in ("q_", "a_")
            ]

    before = model()
    for statement in (*before.counts, before.leases, before.job, before.claim_probe):
        # the stock counts walk pgmq's vt index, yet past every visible dead message: tiered as a scan
        if statement.indexed or statement.name == "pgmq.counts":
            assert scanned(statement, {"queue": "orders"}) == [], statement.name
        else:  # the dead rule's scans say so (Statement.indexed): the engine tiers them
            assert "dead" in statement.columns, statement.name
    assert scanned(before.activity, activity) == []
    discard = before.action(ActionKind.DISCARD)  # the check sees a scan where there is one:
    assert discard is not None and scanned(discard.preview, {"ids": None}) != []  # no read_ct index yet
    follow_index_advice(dsn, "pgmq", told)
    after = model()
    assert after.advice == () and after.dead is not None
    for statement in (*after.counts, after.leases, after.dead, after.job):
        assert scanned(statement) == [], statement.name
    for action in after.actions:
        for statement in (action.preview, action.statement):
            assert scanned(statement) == [], statement.name
