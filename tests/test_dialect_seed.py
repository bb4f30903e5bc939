"""The seed article's two home-grown shapes end to end, driven by plain SQL: detection, counts against
ground truth, the stuck job with its rule, the CLI requeue of the stuck job, and a plain-SQL worker that
then completes everything. Each as the article writes the table (stock: the running jobs are read by
a scan, the index that would make them live is advice beside the figure, the table's definition is
left exactly as it was), then with that index created."""

from __future__ import annotations

import json
import time
from collections import Counter
from datetime import timedelta

import psycopg
import pytest
from dialect_cases.seed import (
    JOB_QUEUE,
    JOB_QUEUE_ADVISED,
    JOB_QUEUE_TRUTH,
    SEED_JOBS,
    SEED_JOBS_ADVISED,
    SEED_JOBS_CLAIM,
    SEED_JOBS_TRUTH,
    definition,
    job_queue_populate,
    seed_jobs_populate,
)

from pgq_tui.cli import main
from pgq_tui.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE

FINGERPRINT = """
SELECT (SELECT array_agg(attname::text ORDER BY attnum) FROM pg_attribute
        WHERE attrelid = %(t)s::regclass AND attnum > 0 AND NOT attisdropped),
       (SELECT array_agg(indexrelid::regclass::text ORDER BY 1) FROM pg_index
        WHERE indrelid = %(t)s::regclass),
       (SELECT reloptions FROM pg_class WHERE oid = %(t)s::regclass),
       (SELECT md5(string_agg(t::text, ',' ORDER BY t::text)) FROM {} t)
"""


def fingerprint(conn: psycopg.Connection, table: str) -> tuple:
    query = psycopg.sql.SQL(FINGERPRINT).format(psycopg.sql.Identifier(table))
    return conn.execute(query, {"t": table}).fetchone()


def snapshot(capsys: pytest.CaptureFixture[str], *argv: str) -> dict:
    code = main(["snapshot", "--json", *argv])
    out, err = capsys.readouterr()
    assert (code, err) == (EXIT_OK, ""), err
    return json.loads(out)


def cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def truth(conn: psycopg.Connection, query: str) -> Counter[tuple[str, str]]:
    return Counter((q, s) for _, q, s in conn.execute(query).fetchall())


def counts(snap: dict) -> Counter[tuple[str, str]]:
    names = {"ready": "ready", "scheduled": "scheduled", "running": "running", "stuck": "stuck"}
    return Counter(
        {(q["queue"], canon): q[field] for q in snap["queues"] for field, canon in names.items() if q[field]}
    )


@pytest.fixture
def conn(empty_dsn: str):
    with psycopg.connect(empty_dsn, autocommit=True) as c:
        yield c


def test_seed_jobs_stock_reads_every_state_and_never_alters_the_table(
    empty_dsn: str, conn: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    conn.execute(SEED_JOBS)
    seed_jobs_populate(empty_dsn)
    before = fingerprint(conn, "jobs")
    snap = snapshot(capsys, "--dsn", empty_dsn)
    assert snap["kind"] == "seed-jobs" and snap["target"] == "seed-jobs · public.jobs"
    assert "locked_until < now()" in snap["stuck_rule"]
    assert "leases" not in snap["unsupported"] and "stuck" not in snap["unsupported"]
    want = truth(conn, SEED_JOBS_TRUTH)
    assert counts(snap) == want - Counter({k: v for k, v in want.items() if k[1] == "done"})
    stuck = [
        r[0] for r in conn.execute("SELECT id FROM jobs WHERE status = 'running' AND locked_until < now()")
    ]
    assert sorted(r["id"] for r in snap["stuck"]["rows"]) == sorted(stuck) and len(stuck) == 2
    for q in snap["queues"]:
        # running and stuck by a scan (exact: the table is small), the index that would make them
        # live beside the figure; ready and scheduled through the seed's own index, without advice
        for name in ("running", "stuck"):
            figure = q["figures"][name]
            assert (figure["accuracy"], figure["source"]) == ("exact", "scan"), figure
            assert "CREATE INDEX CONCURRENTLY" in figure["note"] and "status = 'running'" in figure["note"]
        assert q["figures"]["ready"]["note"] is None
        assert q["oldest_ready_age_s"] is not None
    assert fingerprint(conn, "jobs") == before


@pytest.mark.parametrize("advised", [False, True], ids=["stock", "indexed"])
def test_seed_jobs_end_to_end(
    empty_dsn: str, conn: psycopg.Connection, capsys: pytest.CaptureFixture[str], advised: bool
) -> None:
    conn.execute(SEED_JOBS)
    if advised:
        conn.execute(SEED_JOBS_ADVISED)  # the index the figure's advice names
    conn.execute("CREATE TABLE runs (job_id bigint, at timestamptz DEFAULT clock_timestamp())")
    seed_jobs_populate(empty_dsn)
    before = definition(conn, "jobs")
    stuck = [
        r[0] for r in conn.execute("SELECT id FROM jobs WHERE status = 'running' AND locked_until < now()")
    ]
    assert len(stuck) == 2

    snap = snapshot(capsys, "--dsn", empty_dsn)
    assert counts(snap) == truth(conn, SEED_JOBS_TRUTH) - Counter(
        {k: v for k, v in truth(conn, SEED_JOBS_TRUTH).items() if k[1] == "done"}
    )
    assert sorted(r["id"] for r in snap["stuck"]["rows"]) == sorted(stuck)
    assert {r["liveness"] for r in snap["stuck"]["rows"]} == {"unknown"}  # no worker id in this shape
    assert "leases" not in snap["unsupported"]

    # a plan without --yes and without a terminal: printed, then refused
    code, out, err = cli(capsys, "requeue", "--dsn", empty_dsn, "--stuck")
    assert code == EXIT_REFUSED and "no terminal" in err and err.count("\n") == 1
    assert "at most 2 rows" in out and "locked_until" in out and 'UPDATE "public"."jobs"' in out
    # the seed has no dead state and no retry: absent, not faked
    code, _, err = cli(capsys, "retry", "--dsn", empty_dsn, "--dead", "--yes")
    assert code == EXIT_REFUSED and "has no retry" in err
    # requeue a running (not stuck) job by id: refused by the guard
    live = conn.execute(
        "SELECT id FROM jobs WHERE status = 'running' AND locked_until > now() LIMIT 1"
    ).fetchone()[0]
    code, _, err = cli(capsys, "requeue", "--dsn", empty_dsn, "--ids", str(live), "--yes")
    assert code == EXIT_REFUSED and "nothing to requeue" in err
    # the stuck ones of one queue, then the rest
    code, out, err = cli(capsys, "requeue", "--dsn", empty_dsn, "--stuck", "--queue", "mail", "--yes")
    assert (code, err) == (EXIT_OK, "") and "requeued 1 of 1 stuck job" in out
    code, out, _ = cli(capsys, "requeue", "--dsn", empty_dsn, "--stuck", "--yes")
    assert code == EXIT_OK and "requeued 1 of 1 stuck job" in out
    rows = conn.execute("SELECT status, locked_until FROM jobs WHERE id = ANY(%s)", (stuck,)).fetchall()
    assert rows == [("pending", None), ("pending", None)]

    # a fresh plain-SQL worker runs everything that is due, the requeued jobs included
    for _ in range(20):
        for queue in ("mail", "thumbs"):
            for (job_id,) in conn.execute(SEED_JOBS_CLAIM, {"queue": queue, "n": 5, "lease": 60}).fetchall():
                conn.execute("INSERT INTO runs (job_id) VALUES (%s)", (job_id,))
                conn.execute("UPDATE jobs SET status = 'done', locked_until = NULL WHERE id = %s", (job_id,))
    ran = Counter(r[0] for r in conn.execute("SELECT job_id FROM runs"))
    assert all(ran[i] == 1 for i in stuck)
    snap = snapshot(capsys, "--dsn", empty_dsn)
    assert counts(snap) == Counter({(q, "scheduled"): 3 for q in ("mail", "thumbs")}) + Counter(
        {(q, "running"): 1 for q in ("mail", "thumbs")}
    )
    assert snap["stuck"]["total"] == 0
    assert definition(conn, "jobs") == before  # columns, indexes, constraints: exactly as they were


@pytest.mark.parametrize("advised", [False, True], ids=["stock", "indexed"])
def test_seed_job_queue_end_to_end(
    empty_dsn: str, conn: psycopg.Connection, capsys: pytest.CaptureFixture[str], advised: bool
) -> None:
    conn.execute(JOB_QUEUE)
    if advised:
        conn.execute(JOB_QUEUE_ADVISED)
    before = definition(conn, "job_queue")
    job_queue_populate(empty_dsn)
    snap = snapshot(capsys, "--dsn", empty_dsn)
    assert snap["kind"] == "seed-job-queue"
    assert "leases" not in snap["unsupported"] and "oldest_ready" not in snap["unsupported"]
    assert snap["queues"][0]["oldest_ready_age_s"] is not None
    want = truth(conn, JOB_QUEUE_TRUTH)
    assert counts(snap) == want
    assert "interval '30 minutes'" in snap["stuck_rule"]
    (stuck,) = snap["stuck"]["rows"]
    assert stuck["locked_by"] == "w-crashed" and stuck["seconds_left"] < 0
    code, out, _ = cli(capsys, "requeue", "--dsn", empty_dsn, "--ids", str(stuck["id"]), "--yes")
    assert code == EXIT_OK and "requeued 1 of 1" in out
    row = conn.execute(
        "SELECT status, locked_at, worker_id FROM job_queue WHERE id = %s", (stuck["id"],)
    ).fetchone()
    assert row == ("pending", None, None)
    # a plain-SQL worker claims by priority and deletes what it finished: the requeued job included
    done = []
    while True:
        got = conn.execute(
            "DELETE FROM job_queue WHERE id IN (SELECT id FROM job_queue WHERE status = 'pending' "
            "AND scheduled_at <= now() ORDER BY priority DESC, id LIMIT 3 FOR UPDATE SKIP LOCKED) "
            "RETURNING id"
        ).fetchall()
        if not got:
            break
        done += [r[0] for r in got]
    assert stuck["id"] in done
    snap = snapshot(capsys, "--dsn", empty_dsn)
    assert counts(snap) == Counter({("default", "scheduled"): 2, ("default", "running"): 2})
    assert definition(conn, "job_queue") == before


def test_several_queues_user_mapping_and_kind(
    empty_dsn: str, conn: psycopg.Connection, capsys: pytest.CaptureFixture[str], tmp_path
) -> None:
    conn.execute(SEED_JOBS)
    conn.execute(JOB_QUEUE)
    code, _, err = cli(capsys, "snapshot", "--dsn", empty_dsn)
    assert (
        code == EXIT_USAGE
        and "several queues found" in err
        and "seed-jobs" in err
        and "seed-job-queue" in err
    )
    assert snapshot(capsys, "--dsn", empty_dsn, "--kind", "seed-job-queue")["kind"] == "seed-job-queue"
    assert snapshot(capsys, "--dsn", empty_dsn, "--table", "jobs")["kind"] == "seed-jobs"
    code, _, err = cli(capsys, "snapshot", "--dsn", empty_dsn, "--kind", "nope")
    assert code == EXIT_USAGE and "unknown --kind 'nope'" in err
    # a user's mapping names a table of its own shape, with a dead state and retry/discard
    conn.execute(
        "CREATE TABLE tasks (task_id int PRIMARY KEY, state text, due timestamptz DEFAULT now(), err text);"
        "CREATE INDEX ON tasks (state);"
        "INSERT INTO tasks VALUES (1, 'new', now(), NULL), (2, 'broken', now(), 'kaput'),"
        " (3, 'broken', now(), 'bad')"
    )
    mapping = tmp_path / "tasks.toml"
    mapping.write_text(
        'kind = "tasks"\n[table]\nname = "tasks"\n'
        '[columns]\nid = "task_id"\nstatus = "state"\nrun_at = "due"\nerror = "err"\n'
        '[states]\nready = ["new"]\nrunning = ["busy"]\ndead = ["broken"]\n'
        '[retry]\nstatus = "new"\nclear = ["err"]\n[discard]\ndelete = true\n'
    )
    snap = snapshot(capsys, "--dsn", empty_dsn, "--mapping", str(mapping), "--kind", "tasks")
    assert snap["dead"]["total"] == 2 and {r["last_error"] for r in snap["dead"]["rows"]} == {"kaput", "bad"}
    code, out, _ = cli(
        capsys,
        "retry",
        "--dsn",
        empty_dsn,
        "--mapping",
        str(mapping),
        "--kind",
        "tasks",
        "--ids",
        "2",
        "--yes",
    )
    assert code == EXIT_OK and "retried 1 of 1 dead job" in out
    code, out, _ = cli(
        capsys, "discard", "--dsn", empty_dsn, "--mapping", str(mapping), "--kind", "tasks", "--dead", "--yes"
    )
    assert code == EXIT_OK and "discarded 1 of 1 dead job" in out
    assert conn.execute("SELECT task_id, state, err FROM tasks ORDER BY 1").fetchall() == [
        (1, "new", None),
        (2, "new", None),
    ]
    bad = tmp_path / "bad.toml"
    bad.write_text('kind = "x"\n[columns]\nid = "id"\n')
    code, _, err = cli(capsys, "snapshot", "--dsn", empty_dsn, "--mapping", str(bad))
    assert code == EXIT_USAGE and "[columns].status is required" in err and err.count("\n") == 1


def test_pgq_tables_act_through_the_same_cli(dsn: str, capsys: pytest.CaptureFixture[str]) -> None:
    """pgq-top's own table is one dialect among others: the CLI actions work on it too."""
    from pgq_tui.queue import JobQueue

    with JobQueue(dsn, worker_id="w1") as q:
        q.enqueue("emails", [{"n": 1}, {"n": 2}])
        (stuck,) = q.claim("emails", limit=1, lease=0.001)
        q.enqueue("reports", [{"n": 3}], max_attempts=1)
        (dead,) = q.claim("reports", limit=1)
        q.fail(dead, "boom")
    code, _, err = cli(capsys, "--read-only", "requeue", "--dsn", dsn, "--stuck", "--yes")
    assert code == EXIT_REFUSED and "read-only" in err
    code, out, _ = cli(capsys, "requeue", "--dsn", dsn, "--ids", str(stuck.id), "--yes")
    assert code == EXIT_OK and "requeued 1 of 1 stuck job (pgq · public.jobs)" in out
    code, out, _ = cli(capsys, "retry", "--dsn", dsn, "--dead", "--queue", "reports", "--yes")
    assert code == EXIT_OK and "retried 1 of 1 dead job" in out
    with psycopg.connect(dsn) as conn:
        rows = conn.execute("SELECT id, status, attempts FROM jobs ORDER BY id").fetchall()
    assert [(r[0], r[1]) for r in rows if r[0] in (stuck.id, dead.id)] == [
        (stuck.id, "pending"),
        (dead.id, "pending"),
    ]
    code, _, err = cli(capsys, "discard", "--dsn", dsn, "--ids", str(dead.id), "--yes")
    assert code == EXIT_REFUSED and "nothing to discard" in err


async def test_several_queues_are_offered_in_a_picker() -> None:
    from pgq_tui.tui.picker import QueuePicker

    app = QueuePicker(["seed-job-queue · public.job_queue", "seed-jobs · public.jobs"], ["a", "b"])
    async with app.run_test(size=(80, 20)) as pilot:
        await pilot.press("down", "enter")
    assert app.return_value == 1


def test_job_detail_of_a_dialect_shows_its_words_and_stuck_rule(
    empty_dsn: str, conn: psycopg.Connection
) -> None:
    from rich.console import Console

    from pgq_tui.actions import Actions
    from pgq_tui.detection import find_queues
    from pgq_tui.tui.screens.detail import detail_renderable

    conn.execute(SEED_JOBS)
    conn.execute(SEED_JOBS_ADVISED)
    seed_jobs_populate(empty_dsn)
    stuck = conn.execute("SELECT id FROM jobs WHERE locked_until < now()").fetchone()[0]
    (target,) = find_queues(empty_dsn)
    with Actions(empty_dsn, target.model) as actions:
        job = actions.job_detail(stuck)
        assert actions.job_detail(10**9) is None
    assert job is not None and job["status"] == "stuck (running)" and job["attempts"] == 1
    assert isinstance(job["payload"], dict) and job["details"] == {}  # every column is mapped by role
    console = Console(width=120, record=True)
    console.print(detail_renderable(job))
    text = console.export_text()
    assert "stuck means" in text and "locked_until < now()" in text and "seed-jobs" in text


def test_counts_above_the_cap_come_from_the_background_count(
    empty_dsn: str, conn: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    """Over the cap a count is first a lower bound, then the background's exact count (stale)."""
    from pgq_tui.detection import find_queues
    from pgq_tui.monitor.collect import Monitor

    conn.execute(JOB_QUEUE)
    conn.execute(JOB_QUEUE_ADVISED)
    conn.execute("INSERT INTO job_queue (payload) SELECT '{}' FROM generate_series(1, 40)")
    (target,) = find_queues(empty_dsn)
    with Monitor(empty_dsn, target.model, count_cap=10, count_interval_s=0.1) as monitor:
        (q,) = monitor.collect().queues
        # a proven lower bound: the cap, or the rows read when the cap is over all queues (this shape)
        assert q.accuracy("ready") == "at_least" and 10 <= q.ready < 40
        assert monitor.settle(10)
        (q,) = monitor.collect().queues
        assert (q.ready, q.accuracy("ready")) == (40, "stale")
    snap = snapshot(capsys, "--dsn", empty_dsn, "--count-cap", "10")
    (row,) = snap["queues"]
    assert row["ready"] == 40 and row["figures"]["ready"]["accuracy"] in ("stale", "exact")


def test_the_per_second_history_is_unknown_where_no_poll_interval_rated_it(
    empty_dsn: str, conn: psycopg.Connection, capsys: pytest.CaptureFixture[str]
) -> None:
    """The seed's table has no counters table: its per-second history is derived from the polls. A
    first poll rates no second (unknown: null in the JSON, no point on a chart), never a 5-minute run
    of zeros that reads as an idle queue; after a second poll, the seconds between the two carry the
    jobs enqueued in between, and the seconds before them stay unknown."""
    from pgq_tui.detection import find_queues
    from pgq_tui.history.series import History, series
    from pgq_tui.monitor.collect import Monitor

    conn.execute(SEED_JOBS)
    seed_jobs_populate(empty_dsn)
    snap = snapshot(capsys, "--dsn", empty_dsn)
    history = snap["throughput"]["history"]
    assert snap["throughput"]["source"] == "table" and len(history) == 300
    assert all(p[n] is None for p in history for n in ("enqueued", "completed", "failed", "dead"))

    (target,) = find_queues(empty_dsn)
    with Monitor(empty_dsn, target.model, read_only=True) as monitor:
        first = monitor.collect()
        chart = History()
        chart.add(first)
        assert all(not xs for xs, _ in series(chart.samples, first.server.now).values())  # nothing drawn
        conn.execute("INSERT INTO jobs (queue, payload) SELECT 'mail', '{}' FROM generate_series(1, 40)")
        time.sleep(2.1)  # the interval between the polls covers whole seconds
        second = monitor.collect()
    points = second.throughput.history
    rated = [p for p in points if p.enqueued is not None]
    # 40 jobs spread over the interval's whole seconds (the current one is still filling: not shown)
    assert rated and all(p.enqueued for p in rated) and sum(p.enqueued or 0 for p in rated) <= 40
    assert first.server.now <= rated[0].at + timedelta(seconds=1) and rated[-1].at <= second.server.now
    assert all(p.enqueued is None for p in points if p.at < rated[0].at)
