"""Unknown is never zero: a count not taken is null in JSON (with its reason), absent from the
exporter, "?" on screen, UNKNOWN in `check`, and never "healthy" in the health line. Real causes on a
real server: a state no index serves whose count cannot be taken (the seed article's table exactly as
the article creates it, without the running index, counted by background scans whose statement_timeout
cannot be met), and a counts statement that fails at this poll (a lock on the table held past the
monitor's lock_timeout). A state no index serves is not unknown by itself: on a small table the poll
counts it with a scan (exact, with the index advice as its note). Plus the one-shot wait for the
background count (`--wait`): landed, exact; past the budget, the figure says why."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

import psycopg
import pytest
import tui_support
from dialect_cases import seed
from monitor_support import empty_throughput, slow_scans
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families
from rich.text import Text

from pgq_tui.check import plugin, rules
from pgq_tui.cli import main
from pgq_tui.detection import find_queues, single_queue
from pgq_tui.exporter.cache import SnapshotCache
from pgq_tui.exporter.server import SnapshotCollector
from pgq_tui.fleet.poll import QueueOutcome
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


def seed_truth(dsn: str) -> dict[str, dict[str, int]]:
    """Ground truth per queue from the seed article's own rules (tests/dialect_cases/seed.py)."""
    with psycopg.connect(dsn) as conn:
        jobs = conn.execute(seed.SEED_JOBS_TRUTH).fetchall()
    out: dict[str, dict[str, int]] = {}
    for _, queue, state, *_ in jobs:
        per = out.setdefault(queue, {})
        per[state] = per.get(state, 0) + 1
    return out


# -- a state no index serves: counted by a scan, not unknown -----------------------------------------
def test_a_state_no_index_serves_is_counted_by_a_scan_with_the_advice(
    stock_seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = run(capsys, "snapshot", "--json", "--dsn", stock_seed)
    snap = json.loads(out)
    assert code == 0 and snap["queues"], snap
    truth = seed_truth(stock_seed)
    for q in snap["queues"]:
        want = truth[q["queue"]]
        assert q["ready"] == want.get("ready", 0)  # counted through the article's own index
        # no index serves running/stuck: a scan in the poll (the table is small), exact, with the
        # index that would make it live as its note; never "unknown: no way to count it"
        assert q["running"] == want.get("running", 0) and q["running"] > 0
        assert q["stuck"] == want.get("stuck", 0) and q["stuck"] > 0
        for name in ("running", "stuck"):
            figure = q["figures"][name]
            assert (figure["accuracy"], figure["source"]) == ("exact", "scan"), figure
            assert figure["reason"] is None and "CREATE INDEX" in figure["note"], figure
        # the article's table has no dead state: nothing to count, and says so
        assert q["dead"] is None and q["figures"]["dead"]["accuracy"] == "unsupported"
        assert "does not record dead jobs" in q["figures"]["dead"]["reason"]
    assert not set(snap["unknown"]) & {"running", "stuck", "dead"}, snap["unknown"]


def _settled_past_budget(dsn: str, wait_s: float) -> Snapshot:
    """A one-shot poll (as `snapshot`/`check` take it) on the seed article's stock table with every
    relation counted as large (scan_pages=0: its scans are the background counter's) and a
    background statement_timeout of 1 ms, which no scan meets (each background statement runs on its
    own, so every scan must miss it: 100k kept done rows make each take several ms): the figures no
    index serves are never taken."""
    slow_scans(dsn)
    (target,) = find_queues(dsn)
    with open_monitor(dsn, target.model, read_only=True, scan_pages=0, count_budget_ms=1) as monitor:
        monitor.collect()
        assert monitor.owes
        assert monitor.settle(wait_s) is False
        return settle.past_wait(monitor.collect(), wait_s)


def test_a_background_scan_that_cannot_finish_is_null_with_its_reason(stock_seed: str) -> None:
    snap = _settled_past_budget(stock_seed, 5.0)
    doc = snap.to_dict()
    truth = seed_truth(stock_seed)
    assert doc["queues"], doc
    for q in doc["queues"]:
        assert q["ready"] == truth[q["queue"]].get("ready", 0)  # the index-served figures stand
        for name in ("running", "stuck"):
            assert q[name] is None, (name, q)  # never 0
            figure = q["figures"][name]
            assert (figure["accuracy"], figure["source"]) == ("unknown", "background scan"), figure
            assert figure["reason"].startswith("background count failed: "), figure
            assert "statement timeout" in figure["reason"] and "CREATE INDEX" in figure["note"]
        assert q["dead"] is None and q["figures"]["dead"]["accuracy"] == "unsupported"


def test_past_the_wait_a_background_scan_not_landed_says_so(stock_seed: str) -> None:
    """The first poll of a large stock table: its scans are only now asked of the background counter;
    past a wait of 0 s the figures are null and say the count did not finish in time."""
    (target,) = find_queues(stock_seed)
    with open_monitor(stock_seed, target.model, read_only=True, scan_pages=0) as monitor:
        first = monitor.collect()
        snap = settle.past_wait(first, 0.0)
        for q in snap.queues:
            for name in ("running", "stuck"):
                figure = q.figures[name]
                assert q.count(name) is None and figure.accuracy == "unknown", (name, figure)
                assert figure.reason == "background count not finished within 0 s", figure
        # given the time, the same scans land: exact as of the background's moment (stale)
        assert monitor.settle(10.0)
        landed = monitor.collect()
    truth = seed_truth(stock_seed)
    for q in landed.queues:
        assert q.stuck == truth[q.queue].get("stuck", 0) and q.figures["stuck"].accuracy == "stale"


def test_check_says_unknown_and_the_exporter_leaves_the_series_out(stock_seed: str) -> None:
    snap = _settled_past_budget(stock_seed, 2.0)
    code, text = plugin.render([rules.check("seed-jobs", snap)])
    first = text.splitlines()[0]
    assert code == 3 and first.startswith("PGQ UNKNOWN: stuck unknown: "), text
    assert "background count failed: " in first
    perf = perfdata(first)
    assert perf["stuck"] == "U;0;50;0" and perf["running"] == "U;;;0", perf  # unknown: U, never 0
    assert "dead" not in perf  # no dead state in this shape: unsupported, left out
    assert "unsupported for seed-jobs: dead (" in text

    (target,) = find_queues(stock_seed)
    series = scrape(Collected(QueueOutcome(Target("db", stock_seed), target, snap)))
    states = {state for (name, _, state) in series if name == "pgq_jobs"}
    assert "ready" in states and not states & {"running", "stuck", "dead"}, states
    assert not any(name == "pgq_jobs_exact" and state == "stuck" for name, _, state in series)
    assert not any(name == "pgq_stuck_jobs" for name, _, _ in series)
    line = verdict_text(snap).plain
    # the scan failed before it ever landed: unknown for every queue (Snapshot.unknown), not one queue's
    assert "healthy" not in line and line.startswith("? stuck unknown: background count failed"), line


def test_on_the_stock_table_check_counts_what_no_index_serves(
    stock_seed: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The same stock table, small: `check` is not UNKNOWN for want of an index."""
    code, out = run(capsys, "check", "--dsn", stock_seed, "--ready-age-warn", "off")
    first = out.splitlines()[0]
    perf = perfdata(first)
    truth = seed_truth(stock_seed)
    stuck = sum(per.get("stuck", 0) for per in truth.values())
    assert code != 3 and "UNKNOWN" not in first, out
    assert perf["stuck"].startswith(f"{stuck};") and stuck > 0, perf
    assert "dead" not in perf and "unsupported for seed-jobs: dead (" in out


async def test_screen_shows_a_question_mark_and_never_healthy(stock_seed: str) -> None:
    from pgq_tui.tui.app import PgqTopApp

    slow_scans(stock_seed)
    (target,) = find_queues(stock_seed)
    # background scans that never finish (scan_pages=0, a 1 ms budget, scans of several ms): those
    # figures stay unknown
    monitor = Monitor(stock_seed, target.model, read_only=True, scan_pages=0, count_budget_ms=1)
    app = PgqTopApp(monitor, target=target.label, interval=1.0, read_only=True)
    try:
        async with app.run_test(size=(160, 48)) as pilot:
            await tui_support.settle(pilot, app)
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
        for name in ("ready", "scheduled", "running", "stuck", "dead"):
            assert q[name] is None, (name, q)
            assert q["figures"][name]["accuracy"] == "unknown"
            assert (
                q["figures"][name]["reason"].startswith("count failed: ")
                and "lock timeout" in (q["figures"][name]["reason"])
            )
    assert doc["unknown"]["stuck"].startswith("count failed: ")
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
    assert set(row.unknown) == {"ready", "stuck", "dead", "oldest_ready_age_s"} and row.oldest_ready_s is None
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
    assert code == 0 and q["dead"] == 1500 and q["figures"]["dead"]["accuracy"] == "stale", q
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
    figure = mail.figures["dead"]
    assert figure.accuracy == "at_least" and mail.dead == 1000
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
            "stuck": Figure(AT_LEAST, t, "poll"),
        },
    )  # fmt: skip
    snap = Snapshot(
        server=ServerInfo("18.6", 180006, t, "db", False, 1.0, 42),
        queues=(q,),
        leases=LeaseList((), 0),
        stuck=LeaseList((), 0),
        throughput=empty_throughput(10),
        table=panels.empty_table("public.jobs"),
        sessions=Sessions((), (), (), 1),
    )
    (out,) = settle.past_wait(snap, 10.0).queues
    assert out.figures["running"].reason == "background count not finished within 10 s"
    assert out.figures["stuck"].reason == "background count not finished within 10 s"
    assert out.figures["ready"].reason is None and out.running is None and out.stuck == 1000
