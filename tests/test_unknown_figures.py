"""Unknown is never zero: a count not taken is null in JSON (with its reason), absent from the
exporter, "?" on screen, UNKNOWN in `check`, and never "healthy" in the health line. Two real causes
on a real server: a state with no way to count it (the seed article's table exactly as the article
creates it, without the running index), and a counts statement that fails at this poll (a lock on
the table held past the monitor's lock_timeout). Plus the one-shot wait for the background count
(`--wait`): landed, exact; past the budget, the figure says why."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

import psycopg
import pytest
from dialect_cases import seed
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from rich.text import Text

from pgq_tui.check import plugin, rules
from pgq_tui.cli import main
from pgq_tui.detection import find_queues, single_queue
from pgq_tui.exporter.cache import SnapshotCache
from pgq_tui.exporter.server import SnapshotCollector
from pgq_tui.fleet.poll import QueueOutcome, TargetWatch
from pgq_tui.fleet.rows import fleet_row
from pgq_tui.monitor import settle
from pgq_tui.monitor.collect import Monitor, open_monitor
from pgq_tui.monitor.snapshot import Snapshot
from pgq_tui.queue import JobQueue
from pgq_tui.targets import Target
from pgq_tui.tui.verdict import verdict_text


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err, err
    return code, out


def perfdata(first_line: str) -> dict[str, str]:
    _, _, perf = first_line.partition(" | ")
    return {i.split("=", 1)[0].strip("'"): i.split("=", 1)[1] for i in re.findall(r"'[^']+'=\S+", perf)}


def scrape(source: object) -> dict[tuple[str, ...], float]:
    """One scrape through the exporter's collector (its cache over `source`, a TargetWatch or any
    object whose collect() gives QueueOutcomes), parsed back: (name, queue, state) -> value."""
    registry = CollectorRegistry(auto_describe=False)
    registry.register(SnapshotCollector(SnapshotCache(source)))  # type: ignore[arg-type]
    body = generate_latest(registry).decode()
    out: dict[tuple[str, ...], float] = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            key = (s.name, s.labels.get("queue", ""), s.labels.get("state", "") or s.labels.get("panel", ""))
            out[key] = s.value
    return out


class Collected:
    """A source that serves Snapshots already collected (here: polls taken while a lock was held)."""

    def __init__(self, *outcomes: QueueOutcome) -> None:
        self.outcomes = list(outcomes)

    def collect(self) -> list[QueueOutcome]:
        return self.outcomes


@pytest.fixture
def stock_seed(empty_dsn: str) -> str:
    """The seed article's `jobs` table exactly as the article writes it (no running index), with
    ready jobs in two queues and one expired lease in each (crashed workers)."""
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(seed.SEED_JOBS)
    seed.seed_jobs_populate(empty_dsn)
    return empty_dsn


# -- a state with no way to count it -----------------------------------------------------------------
def test_a_state_with_no_way_to_count_it_is_null_with_its_reason_in_json(
    stock_seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "snapshot", "--json", "--dsn", stock_seed)
    snap = json.loads(out)
    assert code == 0 and snap["queues"], snap
    with psycopg.connect(stock_seed) as conn:
        ready = dict(
            conn.execute(
                "SELECT queue, count(*) FROM jobs WHERE status = 'pending' AND run_at <= now() GROUP BY 1"
            ).fetchall()
        )
    for q in snap["queues"]:
        assert q["ready"] == ready.get(q["queue"], 0)  # counted through the article's own index
        for name in ("running", "expired"):
            assert q[name] is None, (name, q)  # never 0
            figure = q["figures"][name]
            assert figure["accuracy"] == "unknown" and "CREATE INDEX" in figure["reason"], figure
        # the article's table has no dead state: nothing to count, and says so
        assert q["failed"] is None and q["figures"]["failed"]["accuracy"] == "unsupported"
        assert "does not record dead jobs" in q["figures"]["failed"]["reason"]
    assert set(snap["unknown"]) >= {"running", "expired"} and "failed" not in snap["unknown"]
    assert snap["unknown"]["expired"] == snap["queues"][0]["figures"]["expired"]["reason"]
    # the text summary: "?" in the columns, the reason under the header, no "healthy"
    code, out = run(capsys, "snapshot", "--dsn", stock_seed)
    assert code == 0 and "healthy" not in out and "stuck unknown: " in out
    assert "expired not counted: no way to count it without an index" in out
    row = next(line for line in out.splitlines() if line.startswith("│ mail "))
    assert [c.strip() for c in row.split("│")[2:8]] == [str(ready["mail"]), "3", "?", "?", "n/a", "?"]


def test_check_says_unknown_and_the_exporter_leaves_the_series_out(
    stock_seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "check", "--dsn", stock_seed, "--ready-age-warn", "off")
    first = out.splitlines()[0]
    assert code == 3 and first.startswith("PGQ UNKNOWN: stuck unknown: "), out
    assert "CREATE INDEX" in first
    perf = perfdata(first)
    assert perf["stuck"] == "U;0;50;0" and perf["running"] == "U;;;0", perf  # unknown: U, never 0
    assert "dead" not in perf  # no dead state in this shape: unsupported, left out
    assert "unsupported for seed-jobs: dead (" in out

    with TargetWatch(Target("db", stock_seed)) as watch:
        series = scrape(watch)
    assert series[("pgq_up", "", "")] == 1
    states = {state for (name, _, state) in series if name == "pgq_jobs"}
    assert "ready" in states and not states & {"running", "stuck", "dead"}, states
    assert not any(name == "pgq_jobs_exact" and state == "stuck" for name, _, state in series)
    assert not any(name == "pgq_stuck_jobs" for name, _, _ in series)


async def test_screen_shows_a_question_mark_and_never_healthy(stock_seed: str) -> None:
    from pgq_tui.tui.app import PgqTopApp

    (target,) = find_queues(stock_seed)
    monitor = Monitor(stock_seed, target.model, read_only=True)
    app = PgqTopApp(monitor, target=target.label, interval=1.0, read_only=True)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            deadline = time.monotonic() + 10
            while app.received < 1:
                assert time.monotonic() < deadline, "no snapshot arrived"
                await pilot.pause(0.05)
            await pilot.pause()
            table = app.panel("queues")
            row = table.get_row("q:mail")
            cells = {
                k: v.plain if isinstance(v, Text) else str(v)
                for k, v in zip(table.shown_keys, row, strict=True)
            }
            assert (cells["run"], cells["stuck"], cells["dead"]) == ("?", "?", "n/a"), cells
            assert cells["ready"] not in ("?", "0")
            line = app.query_one("#verdict").content
            line = getattr(line, "plain", str(line))
            assert "healthy" not in line and line.startswith("health: ? stuck unknown: "), line
            assert "? not counted" in str(table.border_subtitle)
    finally:
        monitor.close()


# -- a counts statement that fails at this poll ------------------------------------------------------
@pytest.fixture
def locked_counts(dsn: str, queue: JobQueue) -> Iterator[tuple[Monitor, Snapshot, Snapshot]]:
    """pgq-top's own table: one poll with every figure, then one while another session holds an
    ACCESS EXCLUSIVE lock on the table (its counts wait past the monitor's lock_timeout and fail)."""
    queue.enqueue("emails", [{}] * 3)
    queue.enqueue("reports", [{}] * 2, max_attempts=1)
    for job in queue.claim("reports", limit=1):
        queue.fail(job, "boom")
    target = single_queue(dsn)
    with open_monitor(dsn, target.model, read_only=True, lock_timeout_ms=200) as monitor:
        before = monitor.collect()
        with psycopg.connect(dsn) as blocker:
            blocker.execute("LOCK TABLE jobs IN ACCESS EXCLUSIVE MODE")
            during = monitor.collect()
            blocker.rollback()
        yield monitor, before, during


def test_a_failed_counts_statement_makes_its_figures_unknown_not_zero(
    locked_counts: tuple[Monitor, Snapshot, Snapshot],
) -> None:
    _, before, during = locked_counts
    assert "lock timeout" in during.errors["queues"], during.errors
    assert {q.queue for q in during.queues} == {q.queue for q in before.queues} == {"emails", "reports"}
    doc = during.to_dict()
    for q in doc["queues"]:
        for name in ("ready", "scheduled", "running", "expired", "failed"):
            assert q[name] is None, (name, q)
            assert q["figures"][name]["accuracy"] == "unknown"
            assert (
                q["figures"][name]["reason"].startswith("count failed: ")
                and "lock timeout" in (q["figures"][name]["reason"])
            )
    assert doc["unknown"]["expired"].startswith("count failed: ")
    # the other panels went on: sessions (the blocker is listed as blocking us) and the server row
    assert "sessions" not in during.errors and during.server.collect_ms > 0
    # the poll before: every figure exact, as a check against a made-up null
    assert [q.ready for q in before.queues] == [3, 1] and before.unknown == {}


def test_a_failed_counts_statement_is_unknown_in_check_exporter_fleet_and_health(
    locked_counts: tuple[Monitor, Snapshot, Snapshot], dsn: str
) -> None:
    _, before, during = locked_counts
    result = rules.check("orders", during)
    code, text = plugin.render([result])
    first = text.splitlines()[0]
    assert code == 3 and first.startswith("PGQ UNKNOWN: stuck unknown: count failed: "), text
    perf = perfdata(first)
    assert perf["stuck"].startswith("U;") and perf["dead"].startswith("U;") and perf["ready"] == "U;;;0"
    # the poll before the lock: OK is still OK (1 dead job is a WARNING by default)
    assert plugin.render([rules.check("orders", before)])[0] == 1

    target = single_queue(dsn)
    series = scrape(Collected(QueueOutcome(Target("db", dsn), target, during)))
    assert not any(name in ("pgq_jobs", "pgq_jobs_exact", "pgq_stuck_jobs") for name, _, _ in series)
    assert series[("pgq_panel_up", "", "queues")] == 0 and series[("pgq_panel_up", "", "sessions")] == 1
    series = scrape(Collected(QueueOutcome(Target("db", dsn), target, before)))
    assert series[("pgq_jobs", "emails", "ready")] == 3 and series[("pgq_jobs", "reports", "dead")] == 1

    line = verdict_text(during).plain
    assert "healthy" not in line and "? stuck, dead and oldest ready age unknown: count failed: " in line, (
        line
    )

    from pgq_tui.fleet.poller import FleetEntry

    entry = FleetEntry(Target("db", dsn), queue=target, snapshot=during, polls=1, ok_at=0.0)
    row = fleet_row(entry, 1.0)
    assert (row.ready, row.stuck, row.dead) == (None, None, None)
    assert set(row.unknown) == {"ready", "stuck", "dead"} and row.oldest_ready_s is None
    # the lock also stalled the lists and the rates: those are warnings, worst first; never healthy
    assert row.level == "warn" and "healthy" not in row.verdict, row


# -- the one-shot wait for the background count -------------------------------------------------------
@pytest.fixture
def many_dead(dsn: str, queue: JobQueue) -> str:
    """1,500 dead jobs and 1,200 ready ones: over the poll's count cap of 1,000, so their exact counts
    are the background's."""
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(
            "INSERT INTO jobs (queue, payload, status, attempts, max_attempts, finished_at, last_error) "
            "SELECT 'mail', '{}', 'failed', 1, 1, now(), 'boom' FROM generate_series(1, 1500)"
        )
        conn.execute("INSERT INTO jobs (queue, payload) SELECT 'bulk', '{}' FROM generate_series(1, 1200)")
    return dsn


def test_check_waits_for_the_background_count(many_dead: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "check", "--dsn", many_dead, "--wait", "10")
    first = out.splitlines()[0]
    assert code == 2 and first.startswith("PGQ CRITICAL: 1.5k dead jobs"), out
    assert perfdata(first)["dead"] == "1500;0;1000;0" and perfdata(first)["ready"] == "1200;;;0"
    # no wait: a lower bound over the cap alerts as what it is at least, but is never a number in perfdata
    code, out = run(capsys, "check", "--dsn", many_dead, "--wait", "0")
    first = out.splitlines()[0]
    assert code == 1 and first.startswith("PGQ WARNING: ≥1.0k dead jobs"), out
    assert perfdata(first)["dead"] == "U;0;1000;0"
    assert perfdata(first)["ready"] == "U;;;0"  # a capped count is never summed into a number


def test_snapshot_waits_for_the_background_count(many_dead: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = run(capsys, "snapshot", "--json", "--dsn", many_dead, "--wait", "10")
    bulk, q = json.loads(out)["queues"]
    assert code == 0 and q["failed"] == 1500 and q["figures"]["failed"]["accuracy"] == "stale", q
    assert bulk["ready"] == 1200 and bulk["figures"]["ready"]["accuracy"] == "stale", bulk
    with pytest.raises(SystemExit) as exit_:  # bad input: argparse's one-line usage error
        main(["snapshot", "--dsn", many_dead, "--wait", "-1"])
    err = capsys.readouterr().err
    assert exit_.value.code == 2 and err.splitlines()[-1].endswith("--wait: must be 0 or more seconds: '-1'")


def test_past_the_wait_an_owed_figure_says_why(many_dead: str) -> None:
    """A background count that cannot finish (its statement_timeout of 1 ms): the wait ends, and the
    figure still owed says so; the poll's own figures are untouched."""
    target = single_queue(many_dead)
    with open_monitor(many_dead, target.model, read_only=True, count_budget_ms=1) as monitor:
        monitor.collect()
        assert monitor.owes
        assert monitor.settle(5.0) is False
        snap = settle.past_wait(monitor.collect(), 5.0)
    bulk, mail = snap.queues
    figure = mail.figures["failed"]
    assert figure.accuracy == "at_least" and mail.failed == 1000
    assert figure.reason is not None and figure.reason.startswith("background count failed: "), figure
    assert "statement timeout" in figure.reason
    assert bulk.figures["ready"].reason == figure.reason and bulk.ready == 1000
    assert mail.figures["ready"].reason is None and mail.ready == 0  # exact at the poll: untouched


def test_past_wait_reason_when_the_count_is_still_running() -> None:
    """Pure: the wording for a count still running at the end of the wait, and which figures it
    touches (the background's: a lower bound, or unknown until its first count)."""
    from datetime import datetime, timezone

    from pgq_tui.monitor import panels
    from pgq_tui.monitor.snapshot import (
        AT_LEAST,
        EXACT,
        UNKNOWN,
        Figure,
        LeaseList,
        QueueStats,
        ServerInfo,
        Sessions,
    )

    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    q = QueueStats(
        "a", 5, 0, None, 1000, 0, 0, None,
        figures={
            "ready": Figure(EXACT, t, "poll"),
            "running": Figure(UNKNOWN, None, "background", reason="not counted yet"),
            "expired": Figure(AT_LEAST, t, "poll"),
        },
    )  # fmt: skip
    snap = Snapshot(
        server=ServerInfo("18.6", 180006, t, "db", False, 1.0, 42),
        queues=(q,),
        leases=LeaseList((), 0),
        expired=LeaseList((), 0),
        throughput=panels.empty_throughput(10),
        table=panels.empty_table("public.jobs"),
        sessions=Sessions((), (), (), 1),
    )
    (out,) = settle.past_wait(snap, 10.0).queues
    assert out.figures["running"].reason == "background count not finished within 10 s"
    assert out.figures["expired"].reason == "background count not finished within 10 s"
    assert out.figures["ready"].reason is None and out.running is None and out.expired == 1000
