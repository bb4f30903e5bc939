"""The oldest ready age on a large stock table no index serves in run_at order (issue #29): the seed
article's `job_queue` as its claim query implies it (a primary key, no other index), 150,000 pending
jobs that have waited about an hour. Its oldest-ready statement is a scan, and the relation is far past
the in-poll scan size, so the background counter carries it: unknown (null, with the reason in
`unknown`) until its first pass lands, then stale with that pass's as_of, within a few percent of the
truth. `check`, the exporter, the health line and the diagnosis never read an unknown age as 0."""

from __future__ import annotations

import dataclasses
import json
import re
from datetime import timedelta

import psycopg
import pytest
from dialect_cases.seed import JOB_QUEUE
from prometheus_client.core import Metric

from pgq_tui.check import rules
from pgq_tui.cli import main
from pgq_tui.detection import single_queue
from pgq_tui.diagnosis.findings import Thresholds as WhyThresholds
from pgq_tui.diagnosis.work import stalled
from pgq_tui.exitcodes import WHY_CRITICAL
from pgq_tui.fleet.poller import FleetEntry
from pgq_tui.fleet.rows import fleet_row
from pgq_tui.monitor import counting, health, settle, tiers
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.snapshot import STALE, UNKNOWN, Figure, Snapshot
from pgq_tui.targets import Target

AGE = "oldest_ready_age_s"
ROWS = 150_000
# one INSERT: scheduled_at spread over ten minutes, the oldest 1h10m ago (each job waited about an hour)
POPULATE = f"""
INSERT INTO job_queue (payload, scheduled_at)
SELECT '{{}}', now() - interval '1 hour' - (g % 600) * interval '1 second'
FROM generate_series(1, {ROWS}) g
"""
TRUE_OLDEST = (
    "SELECT extract(epoch FROM now() - min(scheduled_at))::float8 FROM job_queue WHERE status = 'pending'"
)


@pytest.fixture
def stalled_queue(empty_dsn: str) -> float:
    """The stock table, filled and analyzed; returns the true oldest ready age as this fixture ends."""
    stock = JOB_QUEUE.split("CREATE INDEX")[0]  # the article's table alone: its primary key only
    with psycopg.connect(empty_dsn, autocommit=True) as conn:
        conn.execute(stock)
        conn.execute(POPULATE)
        conn.execute("ANALYZE job_queue")
        indexes = conn.execute(
            "SELECT count(*) FROM pg_index WHERE indrelid = 'job_queue'::regclass"
        ).fetchone()
        pages = conn.execute("SELECT relpages FROM pg_class WHERE oid = 'job_queue'::regclass").fetchone()
        assert indexes is not None and indexes[0] == 1  # the primary key, nothing else
        assert pages is not None and pages[0] > 2 * tiers.SCAN_PAGES
        truth = conn.execute(TRUE_OLDEST).fetchone()
    assert truth is not None
    return float(truth[0])


def _true_oldest(dsn: str) -> float:
    with psycopg.connect(dsn) as conn:
        row = conn.execute(TRUE_OLDEST).fetchone()
    assert row is not None
    return float(row[0])


def _age_metrics(snap: Snapshot) -> list[float]:
    """The exporter's oldest-ready series for this snapshot (none: absent)."""
    from pgq_tui.exporter import metrics

    class Outcome:  # what _queue_families reads of a fleet outcome
        table, queue, key = "public.job_queue", None, "t"

    families: list[Metric] = list(metrics._queue_families([(Outcome(), snap)], {}))  # type: ignore[list-item]
    return [s.value for f in families if f.name == "pgq_oldest_ready_job_age_seconds" for s in f.samples]


def test_the_age_is_unknown_until_the_background_pass_then_stale_and_true(
    empty_dsn: str, stalled_queue
) -> None:
    model = single_queue(empty_dsn, table="job_queue").model
    assert all(not s.indexed for s in model.counts if AGE in s.columns)  # no index serves it: a scan
    with Monitor(empty_dsn, model, count_interval_s=0.1, read_only=True) as monitor:
        # the first poll reads the counter's latest before asking it for anything: nothing has landed
        first = monitor.collect()
        assert monitor.tier.tier == tiers.BACKGROUND
        assert AGE in first.unknown and "has not landed" in first.unknown[AGE]
        # every count of this table is a scan too, so no queue may be listed yet; any that is has
        # its age unknown, not "nothing waiting"
        for q in first.queues:
            assert q.oldest_ready_age_s is None
            f = q.figures[AGE]
            assert (f.accuracy, f.source, f.as_of) == (UNKNOWN, counting.BACKGROUND_SCAN, None)
        # every consumer reads it as unknown: check UNKNOWN with perfdata U, the exporter omits it,
        # the health line is not healthy, the diagnosis does not call it stalled
        (age,) = [m for m in rules.measures(first) if m.label == "oldest_ready_age"]
        assert (age.level, age.value) == (rules.UNKNOWN, None) and "unknown" in age.message
        assert _age_metrics(first) == []
        said = [v.message for v in health.verdicts(first)]
        assert any("oldest ready age unknown" in m for m in said), said  # with the counts owed too
        # a one-shot command past its --wait says so, in the same place
        assert settle.past_wait(first, 0.0).unknown[AGE] == "background count not finished within 0 s"
        row = fleet_row(FleetEntry(Target("q", empty_dsn), snapshot=first, polls=1, ok_at=0.0), 0.0)
        assert AGE in row.unknown and row.oldest_ready_s is None and row.level != "ok"  # the fleet: "?"
        assert all(q[AGE] is None for q in first.to_dict()["queues"])
        assert first.to_dict()["unknown"][AGE] == first.unknown[AGE]
        # the counts are scans too: unknown for every queue, listed or not (no queue may be listed
        # yet, and an empty list must not sum to 0), so check's perfdata say U, never 0
        for name in ("ready", "running", "stuck"):
            assert "has not landed" in first.unknown[name], (name, first.unknown)
            assert settle.past_wait(first, 0.0).unknown[name] == "background count not finished within 0 s"
        perf = {m.label: m.value for m in rules.measures(first)}
        assert perf["ready"] is None and perf["running"] is None and perf["stuck"] is None, perf

        assert monitor.settle(30.0)
        snap = monitor.collect()
    truth = _true_oldest(empty_dsn)
    (q,) = snap.queues
    f = q.figures[AGE]
    assert (f.accuracy, f.source) == (STALE, counting.BACKGROUND_SCAN)
    assert f.as_of is not None and f.as_of <= snap.server.now
    assert AGE not in snap.unknown
    assert q.oldest_ready_age_s is not None
    assert q.oldest_ready_age_s == pytest.approx(truth, rel=0.03)
    (age,) = [m for m in rules.measures(snap) if m.label == "oldest_ready_age"]
    assert age.level == health.CRIT and age.value == pytest.approx(truth, rel=0.03)
    assert _age_metrics(snap) == [pytest.approx(truth, rel=0.03)]
    assert any("oldest ready job waiting" in v.message for v in health.verdicts(snap))
    data = snap.to_dict()["queues"][0]
    assert data[AGE] == pytest.approx(truth, rel=0.03)
    assert data["figures"][AGE]["accuracy"] == STALE and data["figures"][AGE]["as_of"] is not None


def test_the_stalled_rule_fires_on_a_stale_age_and_says_latency_unknown_before(
    empty_dsn: str, stalled_queue
) -> None:
    model = single_queue(empty_dsn, table="job_queue").model
    t = WhyThresholds(stalled_after_s=30.0, min_duration_s=0.0)
    with Monitor(empty_dsn, model, count_interval_s=0.1, read_only=True) as monitor:
        first = monitor.collect()
        assert all(
            f.id != f"stalled:{first.queues[0].queue}" or "latency unknown" in f.text
            for f in stalled([first], t)
        )
        assert monitor.settle(30.0)
        snap = monitor.collect()
    (finding,) = stalled([first, snap], t)
    assert finding.level == "crit" and "has waited 1h" in finding.text
    assert "as of a background scan" in finding.text

    # the same queue with its age unknown (only the clock is made up): nothing claimed for 40 s
    # says "latency unknown", never a wait of 0 and never silence
    def age_unknown(after_s: float) -> Snapshot:
        (q,) = snap.queues
        f = Figure(UNKNOWN, None, counting.BACKGROUND_SCAN, reason=counting.NOT_LANDED)
        q = dataclasses.replace(q, oldest_ready_age_s=None, figures={**q.figures, AGE: f})
        server = dataclasses.replace(snap.server, now=snap.server.now + timedelta(seconds=after_s))
        return dataclasses.replace(snap, queues=(q,), server=server)

    assert _age_metrics(age_unknown(0)) == []  # the exporter: absent, never 0
    assert stalled([age_unknown(0), age_unknown(10)], t) == []  # not idle long enough to say
    (finding,) = stalled([age_unknown(0), age_unknown(40)], t)
    assert finding.level == "warn" and "latency unknown" in finding.short and "has not landed" in finding.text


def test_snapshot_json_gives_the_age_and_check_is_critical(
    empty_dsn: str, stalled_queue, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["snapshot", "--json", "--dsn", empty_dsn, "--table", "job_queue", "--wait", "30"]) == 0
    data = json.loads(capsys.readouterr().out)
    truth = _true_oldest(empty_dsn)
    (q,) = data["queues"]
    assert q[AGE] == pytest.approx(truth, rel=0.03)
    assert q["figures"][AGE]["accuracy"] == STALE and q["figures"][AGE]["as_of"] is not None
    assert AGE not in data["unknown"]

    code = main(["check", "--dsn", empty_dsn, "--table", "job_queue", "--wait", "30"])
    out = capsys.readouterr().out
    assert code == 2, out  # CRITICAL: it waited over 5 minutes
    status, _, perf = out.splitlines()[0].partition(" | ")
    assert status.startswith("PGQ CRITICAL") and "oldest ready job waiting 1h" in status
    assert "(as of a background scan" in status  # measured then, and said so
    seen = re.search(r"'oldest_ready_age'=([\d.]+)s", perf)
    assert seen is not None and float(seen.group(1)) == pytest.approx(truth, rel=0.03)


def test_check_is_unknown_when_the_pass_does_not_land_in_the_wait(
    empty_dsn: str, stalled_queue, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["check", "--dsn", empty_dsn, "--table", "job_queue", "--wait", "0"])
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    # the second poll of `check` may already see the pass (it runs a second later): CRITICAL then;
    # never OK, never 0s
    assert code in (2, 3), out
    assert "'oldest_ready_age'=0s" not in first and not first.startswith("PGQ OK")
    if code == 3:
        assert "'oldest_ready_age'=U" in first


def test_why_names_the_stalled_queue(
    empty_dsn: str, stalled_queue, capsys: pytest.CaptureFixture[str]
) -> None:
    """`pgq-top why` over a few polls: the background scan's age lands and the stalled rule fires."""
    argv = ["why", "--dsn", empty_dsn, "--table", "job_queue", "--window", "3", "--interval", "0.5"]
    code = main([*argv, "--min-duration", "0", "--stalled-after", "30"])
    out = capsys.readouterr().out
    assert code == WHY_CRITICAL, out  # waited over 10x stalled_after
    assert "stalled: its oldest ready job has waited 1h" in out, out
