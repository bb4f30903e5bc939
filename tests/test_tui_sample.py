"""A fixed, busy Snapshot for dashboard tests (no database), and tests of the pure formatters."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from bloat_sample import sample_bloat
from rich.text import Text

from pgq_tui.monitor.snapshot import (
    STALE,
    Blocker,
    CountStatus,
    DeadJob,
    DeadList,
    Figure,
    Lease,
    LeaseList,
    QueueStats,
    Rates,
    ServerInfo,
    Session,
    Sessions,
    Snapshot,
    TableHealth,
    Throughput,
    ThroughputPoint,
    VacuumProgress,
    XminHolder,
)
from pgq_tui.tui.format import fmt_age, fmt_count, safe, sparkline, visible
from pgq_tui.tui.verdict import verdict_text

NOW = datetime(2026, 11, 29, 3, 0, 0, tzinfo=timezone.utc)
HOSTILE = "[bold red]pwned[/] \x1b[31mred\x1b[0m \u202egnp.exe"


def make_snapshot(**overrides: object) -> Snapshot:
    """A deterministic busy queue: times are pinned to NOW, every panel has something to show."""
    queues = (
        QueueStats(
            "emails",
            ready=1240,
            scheduled=35,
            running=8,
            stuck=2,
            dead=3,
            done=0,
            oldest_ready_age_s=42.0,
            # above the cap: the background count's exact value, 4 s old
            figures={"ready": Figure(STALE, NOW - timedelta(seconds=4), "background")},
        ),
        QueueStats(
            "reports", ready=12, scheduled=0, running=2, stuck=1, dead=0, done=0, oldest_ready_age_s=610.0
        ),
        QueueStats(
            "webhooks", ready=0, scheduled=4, running=1, stuck=0, dead=7, done=0, oldest_ready_age_s=None
        ),
    )
    leases = tuple(
        Lease(
            id=1000 + i,
            queue="emails",
            locked_by=f"pgq-w-host-{4200 + i}-ab12",
            attempts=1,
            max_attempts=5,
            locked_until=NOW + timedelta(seconds=20 - i),
            seconds_left=20.0 - i,
            holder_connected=True,
            holder_pid=4200 + i,
            heartbeat_age=float(i),
        )
        for i in range(8)
    )
    stuck = (
        Lease(
            id=77,
            queue="emails",
            locked_by="pgq-w-host-999-dead",
            attempts=2,
            max_attempts=5,
            locked_until=NOW - timedelta(seconds=95),
            seconds_left=-95.0,
            holder_connected=False,
            holder_pid=None,
            heartbeat_age=125.0,
        ),
        Lease(
            id=78,
            queue="emails",
            locked_by="pgq-w-host-999-dead",
            attempts=1,
            max_attempts=5,
            locked_until=NOW - timedelta(seconds=80),
            seconds_left=-80.0,
            holder_connected=False,
            holder_pid=None,
            heartbeat_age=110.0,
        ),
        Lease(
            id=91,
            queue="reports",
            locked_by="pgq-w-host-4300-beef",
            attempts=3,
            max_attempts=5,
            locked_until=NOW - timedelta(seconds=12),
            seconds_left=-12.0,
            holder_connected=True,
            holder_pid=4300,
        ),
    )
    history = tuple(
        ThroughputPoint(
            at=NOW - timedelta(seconds=60 - i),
            enqueued=40 + (i % 7) * 3,
            completed=38 + (i % 5) * 4,
            failed=i % 4,
            dead=0,
        )
        for i in range(60)
    )
    throughput = Throughput(
        interval_s=10.0,
        total=Rates(enqueued=52.0, completed=49.5, failed=1.5),
        per_queue={
            "emails": Rates(40.0, 38.0, 1.0),
            "reports": Rates(2.0, 1.5, 0.0),
            "webhooks": Rates(10, 10, 0.5),
        },
        history=history,
        queue_history={
            "emails": tuple(30 + i % 9 for i in range(30)),
            "reports": tuple(i % 3 for i in range(30)),
            "webhooks": tuple(10 for _ in range(30)),
        },
    )
    table = TableHealth(
        table="public.jobs",
        live_tuples=18_500,
        dead_tuples=7_250,
        dead_ratio=7250 / 25750,
        table_bytes=6 * 1024**2,
        index_bytes=2 * 1024**2,
        total_rows_estimate=18_000,
        last_vacuum=None,
        last_autovacuum=NOW - timedelta(seconds=184),
        last_analyze=None,
        last_autoanalyze=NOW - timedelta(seconds=63),
        vacuum_count=0,
        autovacuum_count=14,
        autovacuum_enabled=True,
        vacuum_threshold=5000.0,
        vacuum_scale_factor=0.0,
        vacuum_base_threshold=5000,
        until_autovacuum=-2250.0,
        vacuum=VacuumProgress(pid=5150, phase="scanning heap", percent=37.5, dead_tuples=2100),
    )
    sessions = Sessions(
        idle_in_transaction=(
            Session(
                pid=5001,
                user="app",
                application=HOSTILE,
                client="10.0.0.7",
                state="idle in transaction",
                xact_age_s=312.0,
                state_age_s=300.0,
                query="UPDATE accounts SET x = 1 WHERE id = 5",
                backend_xmin_age=15_400,
                wait_event="ClientRead",
                is_pgq_top=False,
            ),
        ),
        xmin_holders=(
            XminHolder(kind="backend", name="5001", xmin_age=15_400, age_s=312.0, detail="idle in tx"),
        ),
        blocked=(
            Blocker(
                blocked_pid=5010,
                blocked_query="ALTER TABLE jobs ADD COLUMN z int",
                blocked_wait_s=33.0,
                blocking_pid=5001,
                blocking_state="idle in transaction",
                blocking_query="UPDATE accounts",
                blocking_application="psql",
            ),
        ),
        total_backends=23,
    )
    dead = DeadList(
        rows=(
            DeadJob(
                id=501,
                queue="webhooks",
                attempts=5,
                max_attempts=5,
                finished_at=NOW - timedelta(seconds=30),
                last_error="HTTPError: 503 Service Unavailable",
            ),
            DeadJob(
                id=502,
                queue="emails",
                attempts=5,
                max_attempts=5,
                finished_at=NOW - timedelta(seconds=400),
                last_error=HOSTILE,
            ),
        ),
        total=10,
    )
    values: dict[str, object] = dict(
        server=ServerInfo(
            version="18.6",
            version_num=180006,
            now=NOW,
            database="shop",
            in_recovery=False,
            collect_ms=14.2,
            monitor_pid=4999,
        ),
        queues=queues,
        leases=LeaseList(rows=leases, total=11),
        stuck=LeaseList(rows=stuck, total=3),
        throughput=throughput,
        table=table,
        sessions=sessions,
        errors={},
        dead=dead,
        bloat=sample_bloat(NOW),
        counts=CountStatus(
            cap=1000,
            background="ready",
            budget_ms=20_000,
            max_lag_s=2.4,
            as_of=NOW - timedelta(seconds=4),
            cost_ms=370.0,
            lag_s=4.0,
        ),
        stuck_label="lease expired",  # pgq-top's own table, as its dialect says
    )
    values.update(overrides)
    return Snapshot(**values)  # type: ignore[arg-type]


def test_hostile_text_is_literal_and_escapes_visible() -> None:
    text = safe(HOSTILE)
    assert isinstance(text, Text)
    assert "[bold red]pwned[/]" in text.plain
    assert "\x1b" not in text.plain and "\\e[31m" in text.plain
    assert "\u202e" not in text.plain and "\\u202e" in text.plain
    assert not text.spans  # nothing from the payload became a style


def test_formatters() -> None:
    assert fmt_age(125) == "2m05s"
    assert fmt_count(12_345) == "12k"
    assert sparkline([0, 8], width=2) == "▁█"
    assert visible("a\tb") == "a\\tb"


def test_verdict_line_is_worst_first_and_literal() -> None:
    line = verdict_text(make_snapshot()).plain
    assert line.startswith("!! ")
    assert "stuck" in line
    healthy = make_snapshot(
        queues=(QueueStats("q", 0, 0, 0, 0, 0, 0, None),),
        stuck=LeaseList((), 0),
        sessions=Sessions((), (), (), 3),
        table=TableHealth(
            "public.jobs",
            10,
            0,
            0.0,
            1,
            1,
            10,
            None,
            None,
            None,
            None,
            0,
            0,
            True,
            5000.0,
            0.0,
            5000,
            5000.0,
            None,
        ),
        bloat=None,
    )
    assert verdict_text(healthy).plain == "✓ healthy"
