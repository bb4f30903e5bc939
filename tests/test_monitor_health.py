"""Pure monitor functions: no database. Formatters, cap arithmetic, autovacuum rules, rates, verdicts."""

from __future__ import annotations

import dataclasses
import doctest
from datetime import datetime, timedelta, timezone

import pytest
from monitor_support import empty_throughput

from pgq_tui.monitor import (
    ahead,
    background,
    cached,
    collect,
    counting,
    figures,
    finished,
    health,
    panels,
    provenance,
    queries,
    rates,
)
from pgq_tui.monitor.snapshot import (
    Lease,
    LeaseList,
    QueueStats,
    ServerInfo,
    Sessions,
    Snapshot,
    XminHolder,
)

NOW = datetime(2026, 1, 1, 12, 0, 0, 500_000, tzinfo=timezone.utc)


@pytest.mark.parametrize(
    "module",
    [ahead, health, queries, counting, rates, background, provenance, collect, finished, cached, figures],
)
def test_doctests(module: object) -> None:
    result = doctest.testmod(module)  # type: ignore[arg-type]
    assert result.attempted > 0 and result.failed == 0


def snapshot(**changes: object) -> Snapshot:
    base = Snapshot(
        server=ServerInfo("18.6", 180006, NOW, "db", False, 1.0, 42),
        queues=(),
        leases=LeaseList((), 0),
        stuck=LeaseList((), 0),
        throughput=empty_throughput(10),
        table=dataclasses.replace(
            panels.empty_table("public.jobs"), vacuum_threshold=100.0, until_autovacuum=100.0
        ),
        sessions=Sessions((), (), (), 1),
    )
    return dataclasses.replace(base, **changes)  # type: ignore[arg-type]


def queue(name: str, **counts: object) -> QueueStats:
    values: dict[str, object] = dict.fromkeys(("ready", "scheduled", "running", "stuck", "dead", "done"), 0)
    values["oldest_ready_age_s"] = None
    values.update(counts)
    return QueueStats(queue=name, **values)  # type: ignore[arg-type]


def test_healthy_snapshot_has_no_verdicts() -> None:
    assert health.verdicts(snapshot(queues=(queue("a", ready=3, oldest_ready_age_s=1.0),))) == []


def test_verdicts_name_each_problem_worst_first() -> None:
    gone = Lease(1, "a", "w1", 1, 5, NOW, -30.0, False, None)
    snap = snapshot(
        queues=(queue("a", ready=1, oldest_ready_age_s=400.0, dead=2), queue("b", oldest_ready_age_s=40.0)),
        stuck=LeaseList((gone,), 1),
        sessions=Sessions((), (XminHolder("backend", "77", 1000, 4000.0, None),), (), 3),
        table=dataclasses.replace(panels.empty_table("public.jobs"), dead_tuples=500, until_autovacuum=-1.0),
        errors={"throughput": "permission denied"},
    )
    found = [(v.level, v.panel) for v in health.verdicts(snap)]
    assert found[0][0] == health.CRIT
    assert ("crit", "queues") in found and ("warn", "queues") in found  # 400 s crit, 40 s warn
    assert ("crit", "leases") in found  # stuck with no live holder
    assert ("crit", "sessions") in found  # xmin held over an hour
    assert ("warn", "dead") in found and ("warn", "table") in found and ("warn", "throughput") in found
    messages = " ".join(v.message for v in health.verdicts(snap))
    assert "1 stuck jobs" in messages and "xmin held for 1h06m by backend 77" in messages


def test_bystanders_raise_no_xmin_verdict_or_measure() -> None:
    """#29: an hour-old transaction in another database and a logical slot hold none of this
    database's rows: no health verdict, and check's xmin_age measure (figures.oldest_xmin_holder)
    is not theirs. The same transaction in this database is both."""
    from pgq_tui.monitor import figures

    other = XminHolder("backend", "77", 1000, 4000.0, "bob@crm psql", scope="other database")
    slot = XminHolder("replication slot", "cdc", 2000, None, "logical inactive", scope="catalog")
    snap = snapshot(sessions=Sessions((), (other, slot), (), 3))
    assert not [v for v in health.verdicts(snap) if "xmin" in v.message]
    assert figures.oldest_xmin_holder(snap) is None
    mine = dataclasses.replace(other, scope="database")
    snap = snapshot(sessions=Sessions((), (mine, slot), (), 3))
    assert [v.level for v in health.verdicts(snap) if "xmin held" in v.message] == [health.CRIT]
    assert figures.oldest_xmin_holder(snap) == mine


def test_autovacuum_off_is_a_verdict() -> None:
    snap = snapshot(table=dataclasses.replace(panels.empty_table("public.jobs"), autovacuum_enabled=False))
    assert [v.message for v in health.verdicts(snap)] == ["autovacuum is off for public.jobs"]


def _table_row(dead: int) -> dict[str, object]:
    """A table_health.sql row: threshold 50 + 0.2 x 1000 = 250, autovacuum on."""
    return {
        "reltuples": 1000.0, "live_tuples": 1000, "dead_tuples": dead, "table_bytes": 8192,
        "index_bytes": 8192, "last_vacuum": None, "last_autovacuum": None, "last_analyze": None,
        "last_autoanalyze": None, "vacuum_count": 0, "autovacuum_count": 0, "n_tup_ins": 0,
        "n_tup_upd": 0, "n_tup_del": 0, "n_tup_hot_upd": 0, "reloptions": None, "autovacuum": "on",
        "track_counts": "on", "vacuum_threshold": "50", "vacuum_scale_factor": "0.2",
        "vacuum_max_threshold": None,
    }  # fmt: skip


def test_vacuum_verdict_only_when_dead_tuples_exceed_the_threshold() -> None:
    # Autovacuum fires when dead tuples *exceed* the threshold (relation_needs_vacanalyze: >).
    at = panels.table_health(_table_row(250), [], "public.jobs")
    assert at.vacuum_threshold == 250.0 and at.until_autovacuum == 1
    assert health.verdicts(snapshot(table=at)) == []
    above = panels.table_health(_table_row(251), [], "public.jobs")
    assert above.until_autovacuum == 0
    assert [v.message for v in health.verdicts(snapshot(table=above))] == [
        "dead tuples above threshold: 251 > 250, autovacuum not running"
    ]


def test_table_health_effective_settings_from_reloptions() -> None:
    row = {
        "reltuples": 1000.0, "live_tuples": 900, "dead_tuples": 100, "table_bytes": 8192,
        "index_bytes": 16384,
        "last_vacuum": None, "last_autovacuum": NOW, "last_analyze": None, "last_autoanalyze": None,
        "vacuum_count": 0, "autovacuum_count": 2, "n_tup_ins": 1, "n_tup_upd": 2, "n_tup_del": 3,
        "n_tup_hot_upd": 1, "reloptions": ["autovacuum_vacuum_threshold=10", "autovacuum_enabled=off"],
        "autovacuum": "on", "track_counts": "on", "vacuum_threshold": "50", "vacuum_scale_factor": "0.2",
        "vacuum_max_threshold": "150",
    }  # fmt: skip
    progress = [{"pid": 9, "phase": "scanning heap", "heap_blks_total": 200, "heap_blks_scanned": 50,
                 "dead_tuples": 7}]  # fmt: skip
    t = panels.table_health(row, progress, "public.jobs")
    assert (t.vacuum_base_threshold, t.vacuum_scale_factor, t.vacuum_max_threshold) == (10, 0.2, 150)
    assert t.vacuum_threshold == 150.0  # min(10 + 0.2 * 1000, 150)
    assert t.until_autovacuum == 51.0  # 100 dead now; autovacuum fires at 151 (> 150)
    assert t.dead_ratio == 0.1 and not t.autovacuum_enabled
    assert t.vacuum is not None and t.vacuum.percent == 25.0 and t.vacuum.dead_tuples == 7


def test_throughput_window_excludes_the_current_second() -> None:
    until, since = panels.window(NOW, 300)
    assert until == NOW.replace(microsecond=0) and since == until - timedelta(seconds=300)
    rows = [
        {
            "queue": "a",
            "bucket": until - timedelta(seconds=s),
            "enqueued": 10,
            "completed": 7,
            "failed": 1,
            "dead": 0,
        }
        for s in range(1, 21)
    ]
    tp = panels.throughput(rows, until, history_s=30, rate_window_s=10)
    assert tp.total.completed == 7.0 and tp.total.enqueued == 10.0 and tp.per_queue["a"].failed == 1.0
    assert len(tp.history) == 30 and tp.history[-1].at == until - timedelta(seconds=1)
    assert sum(p.completed for p in tp.history) == 140 and sum(tp.queue_history["a"]) == 140


def test_queue_version_bands() -> None:
    assert queries.filename("lock_wait_s", 130000) == "lock_wait_s_pre_140000.sql"
    assert queries.filename("lock_wait_s", 140000) == "lock_wait_s.sql"
    # blocked.sql is written once; only its wait_s expression ({lock_wait_s}) is banded
    old, new = (queries.server_query("blocked", v).as_string(None) for v in (130000, 140000))
    assert "a.query_start" in old and "l.waitstart" not in old and "l.waitstart" in new
    pre18, pg18 = (queries.server_query("autovacuum_pacing", v).as_string(None) for v in (170000, 180000))
    assert "NULL::float8 AS vacuum_time_ms" in pre18 and "total_vacuum_time" not in pre18
    assert "pg_stat_get_total_autovacuum_time(c.oid))::float8 AS vacuum_time_ms" in pg18
    assert "'{}'::text[]" in pg18
    assert queries.filename("vacuum_progress", 180000) == "vacuum_progress.sql"
    with pytest.raises(KeyError):
        queries.filename("nope", 180000)


def test_monitor_never_imports_textual() -> None:
    """The monitor is presentation-agnostic: importing all of it must not pull in textual."""
    import subprocess
    import sys

    code = (
        "import sys, pgq_tui.monitor.collect, pgq_tui.monitor.health, pgq_tui.render.snapshot, "
        "pgq_tui.monitor.codec; sys.exit(1 if any(m.split('.')[0] == 'textual' for m in sys.modules) else 0)"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0
