"""`pgq-top jobs --where` and the bulk actions on a search (`retry --where`), with their progress and
the audit trail (issue #32), against a real server on pgq-top's own table."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import psycopg
import pytest
from actions_support import pgq_model

from pgq_tui.actions import Actions
from pgq_tui.audit import AuditLog, target_of
from pgq_tui.cli import main
from pgq_tui.dialects.contract import ActionKind
from pgq_tui.errors import EXIT_REFUSED
from pgq_tui.queue import JobQueue
from pgq_tui.search.compile import compile_query
from pgq_tui.search.query import parse
from pgq_tui.search.run import search, still_matching
from tests.test_secrets import HOSTILE

REFUSED = 'error:~"connection refused" state:dead'


def _fail(sql: psycopg.Connection, ids: list[int], error: str) -> None:
    sql.execute(
        "UPDATE jobs SET status = 'failed', last_error = %s, finished_at = now() WHERE id = ANY(%s)",
        (error, ids),
    )


@pytest.fixture
def incident(queue: JobQueue, sql: psycopg.Connection) -> dict[str, list[int]]:
    """50 jobs: 30 dead with 'connection refused', 8 dead with 'invalid card', 12 pending."""
    ids = queue.enqueue("payments", [{"customer": {"id": i}, "note": "\x1b[31mred"} for i in range(50)])
    _fail(sql, ids[:30], "ConnectionError: connection refused\x1b]0;owned\x07")
    _fail(sql, ids[30:38], "CardError: invalid card")
    return {"refused": ids[:30], "card": ids[30:38], "pending": ids[38:]}


def _statuses(sql: psycopg.Connection) -> dict[str, int]:
    return dict(sql.execute("SELECT status, count(*) FROM jobs GROUP BY status").fetchall())


def _audit(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_jobs_lists_the_matches_escaped_and_says_what_it_searched(
    dsn: str, incident: dict[str, list[int]], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "--dsn", dsn, "--where", REFUSED, "--rows", "3"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert len(lines) == 5 and "\x1b" not in out and "\\e]0;owned\\x07" in out
    assert lines[-1].endswith("all 38 dead jobs searched (through index jobs_dead_idx); 30 match (listed 3)")
    assert main(["jobs", "--dsn", dsn, "--where", REFUSED, "--json", "--limit-scan", "20"]) == 0
    doc = json.loads(capsys.readouterr().out)
    # 38 dead jobs are more than 20: the newest 20 ids, 12 pending, 8 card errors, no refused ones
    assert doc["matched"] == 0 and doc["scanned"] == 20 and doc["complete"] is False
    assert doc["summary"] == (
        "newest 20 jobs searched (older ones were not; more than 20 dead jobs: too many for index"
        " jobs_dead_idx); 0 match"
    )


@pytest.mark.parametrize(
    ("where", "named"),
    [("state:dead colour:red", "'colour:red'"), ("meta.x:1", "'meta.x:1'")],
)
def test_a_bad_or_unserved_term_is_one_line(
    dsn: str, where: str, named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["jobs", "--dsn", dsn, "--where", where]) == 2
    err = capsys.readouterr().err
    assert named in err and err.count("\n") == 1


def test_retry_where_retries_exactly_the_matches_in_batches_with_progress(
    dsn: str,
    incident: dict[str, list[int]],
    sql: psycopg.Connection,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = tmp_path / "audit.jsonl"
    args = ["retry", "--dsn", dsn, "--where", REFUSED, "--yes", "--batch", "7", "--audit-log", str(log)]
    assert main(args) == 0
    captured = capsys.readouterr()
    assert "all 38 dead jobs searched (through index jobs_dead_idx); 30 match" in captured.out
    assert "retried 30 of 30 dead jobs" in captured.out
    progress = [line for line in captured.err.splitlines() if "retried" in line]
    assert progress == [f"pgq-top: retried {n:,} of ~30" for n in (7, 14, 21, 28, 30)]
    got = sql.execute("SELECT id FROM jobs WHERE status = 'pending' AND attempts = 0").fetchall()
    assert {r[0] for r in got} == set(incident["refused"] + incident["pending"])
    assert _statuses(sql) == {"pending": 42, "failed": 8}  # the 8 card errors stay dead
    start, end = _audit(log)
    assert start["event"] == "start" and end["event"] == "end"
    assert end["action"] == "retry" and end["where"] == REFUSED and end["kind"] == "pgq"
    assert end["planned"] == 30 and end["changed"] == 30 and end["ids_count"] == 30
    assert end["outcome"] == "retried 30 of 30 dead jobs" and end["error"] is None
    assert {"time", "user", "host", "target"} <= end.keys()
    # a second run finds nothing left to do and writes nothing
    assert main(args) == 0
    assert "no job matches" in capsys.readouterr().out and len(_audit(log)) == 2


def test_a_job_that_changed_meanwhile_is_left_alone(
    dsn: str, incident: dict[str, list[int]], sql: psycopg.Connection, tmp_path: Path
) -> None:
    model = pgq_model(dsn)
    query = parse(REFUSED, datetime.now().astimezone())
    found = search(dsn, model, query, all_ids=True)
    assert found.matched == 30
    # after the search: a worker retried 5 of them itself, and 3 others now fail with another error
    sql.execute("UPDATE jobs SET status = 'done' WHERE id = ANY(%s)", (incident["refused"][:5],))
    _fail(sql, incident["refused"][5:8], "CardError: invalid card")
    with Actions(dsn, model, audit=AuditLog(tmp_path / "a.jsonl"), batch=4) as actions:
        plan = actions.plan(ActionKind.RETRY, found.ids)
        outcome = actions.execute(plan, where=REFUSED, recheck=still_matching(compile_query(query, model)))
    assert outcome.changed == 22 and outcome.error is None
    assert _statuses(sql) == {"done": 5, "failed": 11, "pending": 34}
    assert sql.execute(
        "SELECT count(*) FROM jobs WHERE status = 'failed' AND last_error LIKE 'Card%'"
    ).fetchone() == (11,)


def test_read_only_refuses_a_bulk_action_before_connecting(
    incident: dict[str, list[int]],
    sql: psycopg.Connection,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    log = tmp_path / "audit.jsonl"
    # an unreachable DSN: read-only refuses before any connection is tried
    dsn = "host=127.0.0.1 port=1 connect_timeout=1"
    args = ["--read-only", "retry", "--dsn", dsn, "--where", REFUSED, "--yes", "--audit-log", str(log)]
    assert main(args) == EXIT_REFUSED
    assert "refused: read-only mode" in capsys.readouterr().err
    assert not log.exists() and _statuses(sql)["failed"] == 38


def test_an_unwritable_audit_log_refuses_the_write(
    dsn: str, incident: dict[str, list[int]], sql: psycopg.Connection, tmp_path: Path
) -> None:
    (tmp_path / "file").write_text("")
    model = pgq_model(dsn)
    with Actions(dsn, model, audit=AuditLog(tmp_path / "file" / "audit.jsonl")) as actions:
        outcome = actions.execute(actions.plan(ActionKind.RETRY, incident["refused"][:3]))
    assert outcome.changed == 0 and "cannot write the audit log" in str(outcome.error)
    assert _statuses(sql)["failed"] == 38


@pytest.mark.parametrize(("name", "hostile", "secret"), HOSTILE, ids=[h[0] for h in HOSTILE])
def test_the_audit_log_never_holds_a_password(name: str, hostile: str, secret: str, tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "audit.jsonl")
    log.write(hostile, "start", action="retry", where="state:dead", error=f"could not connect: {hostile}")
    text = (tmp_path / "audit.jsonl").read_text()
    assert secret not in text and json.loads(text)["target"] == target_of(hostile)


def test_init_is_audited_like_every_write(
    empty_dsn: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pgq-top init` writes the user's database (a table, indexes, settings; --adopt alters an
    existing table): a start and an end line, with what it did; --dry-run writes nothing and no line."""
    log = tmp_path / "audit.jsonl"
    dsn = f"{empty_dsn} password=Sekr3tPw"
    assert main(["init", "--dsn", dsn, "--table", "work", "--dry-run", "--audit-log", str(log)]) == 0
    assert not log.exists()
    assert main(["init", "--dsn", dsn, "--table", "work", "--audit-log", str(log)]) == 0
    assert main(["init", "--dsn", dsn, "--table", "work", "--audit-log", str(log)]) == 0
    capsys.readouterr()
    records = _audit(log)
    assert [(r["action"], r["event"]) for r in records] == [("init", "start"), ("init", "end")] * 2
    first, again = records[1], records[3]
    assert first["table"] == "public.work" and first["kind"] == "pgq" and first["error"] is None
    assert first["changed"] > 0 and 'created table "public"."work"' in first["outcome"]
    assert (again["changed"], again["outcome"]) == (0, "nothing to change")
    assert {"time", "user", "host", "target"} <= first.keys() and first["target"] == target_of(dsn)
    assert "Sekr3tPw" not in log.read_text()


def test_each_batch_names_its_write_in_application_name(
    dsn: str, incident: dict[str, list[int]], tmp_path: Path
) -> None:
    model = pgq_model(dsn)
    query = parse(REFUSED, datetime.now().astimezone())
    found = search(dsn, model, query, all_ids=True)
    inner, seen = still_matching(compile_query(query, model)), []

    def recheck(conn: psycopg.Connection, ids):  # type: ignore[no-untyped-def]
        seen.append(conn.execute("SELECT current_setting('application_name')").fetchone()[0])
        return inner(conn, ids)

    with Actions(dsn, model, audit=AuditLog(None), batch=10) as actions:
        outcome = actions.execute(actions.plan(ActionKind.RETRY, found.ids), recheck=recheck)
        after = actions.conn.execute("SELECT current_setting('application_name')").fetchone()[0]
    assert outcome.changed == 30 and seen == ["pgq-top retry"] * 3 and after == "pgq-top actions"


def test_every_batch_is_planned_for_its_own_ids(
    dsn: str, incident: dict[str, list[int]], sql: psycopg.Connection, tmp_path: Path
) -> None:
    """From the 6th batch on, psycopg runs the action's statement prepared and PostgreSQL may switch to
    a generic plan, which cannot use `(ids IS NULL OR j.id = ANY(ids))` to go to the ids: it walked
    the primary key from the start, a batch of 1,000 at 52,000 rows took 532 ms instead of 27 ms
    (the bar slowed 20x after 10,000). Every batch is planned with its own ids: no generic plan."""
    model = pgq_model(dsn)
    query = parse(REFUSED, datetime.now().astimezone())
    found = search(dsn, model, query, all_ids=True)
    with Actions(dsn, model, audit=AuditLog(None), batch=2) as actions:
        outcome = actions.execute(
            actions.plan(ActionKind.RETRY, found.ids), recheck=still_matching(compile_query(query, model))
        )
        plans = actions.conn.execute(
            "SELECT statement, generic_plans, custom_plans FROM pg_prepared_statements"
        ).fetchall()
    assert outcome.changed == 30
    assert [p for p in plans if p[1] and '"jobs"' in p[0]] == [], plans  # the search's and the action's


def test_an_interrupt_stops_between_batches_and_a_second_run_finishes(
    dsn: str, incident: dict[str, list[int]], sql: psycopg.Connection, tmp_path: Path
) -> None:
    model = pgq_model(dsn)
    query = parse(REFUSED, datetime.now().astimezone())
    log = AuditLog(tmp_path / "audit.jsonl")

    def interrupted(done: int, total: int) -> None:
        if done >= 16:  # Ctrl-C after the second batch of 8
            raise KeyboardInterrupt

    found = search(dsn, model, query, all_ids=True)
    with Actions(dsn, model, audit=log, batch=8) as actions:
        plan = actions.plan(ActionKind.RETRY, found.ids)
        recheck = still_matching(compile_query(query, model))
        outcome = actions.execute(plan, where=REFUSED, recheck=recheck, progress=interrupted)
    assert outcome.changed == 16 and outcome.exit_code == 130
    assert outcome.message == "retried 16 of 30 dead jobs; stopped, the rest were left alone"
    assert _statuses(sql) == {"pending": 12 + 16, "failed": 8 + 14}
    end = _audit(tmp_path / "audit.jsonl")[-1]
    assert end["changed"] == 16 and end["error"] == "stopped by the operator"
    again = search(dsn, model, query, all_ids=True)
    assert again.matched == 14
    with Actions(dsn, model, audit=log, batch=8) as actions:
        rest = actions.execute(actions.plan(ActionKind.RETRY, again.ids), recheck=recheck)
    assert rest.changed == 14 and _statuses(sql) == {"pending": 42, "failed": 8}
