"""pg-boss 12.38 keeps its own per-queue counts (its monitor writes them on pgboss.queue, with
monitor_on). A figure the poll cannot take exactly (above the cap) shows them, stale as of when pg-boss
counted, until the background count lands; then the background's, being newer, wins. On pg-boss's own
schema (installed by its own client), jobs inserted by its own client, counted by its own monitor:

- above the cap, before any background count: pg-boss's count, as of its monitor_on, said whose it is
  (on the screen's provenance and in `snapshot --json`, which keeps it past its wait);
- jobs inserted since: the figure stays what pg-boss counted, with its old as_of (never fresher);
- the background count lands: its exact count, newer, replaces it;
- never shown: a count the poll has read past (it contradicts the poll), a queue pg-boss never
  counted (its zeros are defaults), counts written before an upgrade (a later bam row).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import psycopg
import pytest
from psycopg import sql
from psycopg.rows import dict_row

from pgq_tui.detection import single_queue
from pgq_tui.dialects.introspect import DEFAULTS
from pgq_tui.monitor import settle
from pgq_tui.monitor.cached import SOURCE
from pgq_tui.monitor.collect import Monitor
from pgq_tui.monitor.provenance import count_how

from .pgboss_client import PgBoss12

QUEUES = ["deep", "shallow"]
CAP = 5  # --count-cap: the deep queue's 40 ready and 12 scheduled jobs are above it


@pytest.fixture
def boss(framework_dsn: str, monkeypatch: pytest.MonkeyPatch) -> PgBoss12:
    PgBoss12.version()
    monkeypatch.setenv("PGQ_TEST_QUEUES", ",".join(QUEUES))  # pg-boss's install creates each queue
    client = PgBoss12(framework_dsn)
    client.install()
    client.insert("deep", 40)
    client.insert("deep", 12, in_seconds=3600)
    client.insert("shallow", 2)
    return client


@pytest.fixture
def monitor(boss: PgBoss12) -> Iterator[Monitor]:
    with Monitor(boss.dsn, single_queue(boss.dsn, kind="pg-boss").model, count_cap=CAP) as m:
        yield m


def counted_at(boss: PgBoss12) -> datetime:
    """pg-boss's monitor counts every queue; when it counted the deep one."""
    (when,) = [row["monitor_on"] for row in boss.monitor() if row["name"] == "deep"]
    with psycopg.connect(boss.dsn) as conn:
        stamped = conn.execute("SELECT monitor_on FROM pgboss.queue WHERE name = 'deep'").fetchone()
    assert stamped is not None and when
    return stamped[0]


def queue(snap: Any, name: str) -> Any:
    (q,) = [q for q in snap.queues if q.queue == name]
    return q


def test_pg_boss_own_counts_stand_above_the_cap_until_the_background_count_lands(
    boss: PgBoss12, monitor: Monitor
) -> None:
    at = counted_at(boss)
    boss.insert("deep", 3)  # after pg-boss counted: 43 ready now, 40 as of its count
    snap = monitor.collect()
    deep = queue(snap, "deep")
    for name, value in (("ready", 40), ("scheduled", 12)):
        figure = deep.figures[name]
        assert (getattr(deep, name), figure.accuracy, figure.source) == (value, "stale", SOURCE), name
        assert figure.as_of == at  # when pg-boss counted, not this poll
        assert "pg-boss's own count" in str(figure.reason)
        how = count_how(figure, CAP, snap.server.now)
        assert how.startswith("stale: exact as of") and "pg-boss's own count" in how
    shallow = queue(snap, "shallow")
    assert (shallow.ready, shallow.figures["ready"].accuracy) == (2, "exact")  # under the cap: the poll's
    assert "ready" not in snap.unknown

    assert monitor.settle(30)  # the background count lands, newer than pg-boss's
    deep = queue(monitor.collect(), "deep")
    assert (deep.ready, deep.figures["ready"].source) == (43, "background")
    assert deep.figures["ready"].as_of is not None and deep.figures["ready"].as_of > at


def test_past_its_wait_a_one_shot_keeps_pg_boss_own_count_in_json(boss: PgBoss12, monitor: Monitor) -> None:
    """`snapshot`/`check` whose background count did not land within --wait (a huge table): pg-boss's
    count stays, saying why it is not the background's and whose it is."""
    at = counted_at(boss)
    snap = json.loads(json.dumps(settle.past_wait(monitor.collect(), 10.0).to_dict(), default=str))
    (deep,) = [q for q in snap["queues"] if q["queue"] == "deep"]
    figure = deep["figures"]["ready"]
    assert (deep["ready"], figure["accuracy"], figure["source"]) == (40, "stale", SOURCE)
    assert datetime.fromisoformat(figure["as_of"]) == at
    assert figure["reason"].startswith("background count not finished within 10 s; pg-boss's own count")
    assert "ready" not in snap["unknown"]


def first_poll_ready(boss: PgBoss12) -> tuple[str, str]:
    """The deep queue's ready figure at a new monitor's first poll (no background count yet), and
    whether pg-boss's cached-counts statement gives a row for it."""
    model = single_queue(boss.dsn, kind="pg-boss").model
    assert model.cached is not None
    with psycopg.connect(boss.dsn) as conn, conn.cursor(row_factory=dict_row) as cur:
        cur.execute(model.cached.statement.compose(), DEFAULTS)
        rows = "row" if any(r["queue"] == "deep" for r in cur.fetchall()) else "none"
    with Monitor(boss.dsn, model, count_cap=CAP) as m:
        return queue(m.collect(), "deep").figures["ready"].accuracy, rows


def test_a_count_never_taken_from_before_an_upgrade_or_that_the_poll_read_past_is_not_shown(
    boss: PgBoss12,
) -> None:
    assert first_poll_ready(boss) == ("at_least", "none")  # never counted: its zeros are defaults
    counted_at(boss)
    assert first_poll_ready(boss) == ("stale", "row")
    with psycopg.connect(boss.dsn, autocommit=True) as conn:
        # counts written before an upgrade's background migrations were queued (12.35 and older
        # counted blocked jobs as ready): a bam row of schema 46, created after them
        conn.execute(
            "INSERT INTO pgboss.bam (name, version, status, table_name, command)"
            " VALUES ('live_index_build', 46, 'completed', 'job', 'SELECT 1')"
        )
    assert first_poll_ready(boss) == ("at_least", "none")
    counted_at(boss)  # counted again after the upgrade
    assert first_poll_ready(boss) == ("stale", "row")
    with psycopg.connect(boss.dsn, autocommit=True) as conn:  # pg-boss counted what the poll read past
        conn.execute("UPDATE pgboss.queue SET ready_count = %s WHERE name = 'deep'", (CAP,))
    assert first_poll_ready(boss) == ("at_least", "row")


def test_a_role_with_the_documented_grants_reads_pg_boss_counts_only_with_select_on_bam(
    boss: PgBoss12, server_dsn: str
) -> None:
    """docs/grants.md: `job`, `queue` (and `schedule`, `version`) are enough; without `bam` pg-boss's own
    counts are not read (nothing fails, no error every poll), with it they are."""
    from test_grants import login_role

    counted_at(boss)
    with login_role(boss.dsn, server_dsn) as (name, role_dsn):
        with psycopg.connect(boss.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("GRANT USAGE ON SCHEMA pgboss TO {}").format(sql.Identifier(name)))
            for table in ("job", "queue", "schedule", "version"):  # the page's, schedules included
                conn.execute(
                    sql.SQL("GRANT SELECT ON {} TO {}").format(
                        sql.Identifier("pgboss", table), sql.Identifier(name)
                    )
                )
        model = single_queue(role_dsn, kind="pg-boss").model
        assert model.cached is None
        with Monitor(role_dsn, model, count_cap=CAP) as m:
            snap = m.collect()
        assert not snap.errors and queue(snap, "deep").figures["ready"].accuracy == "at_least"
        with psycopg.connect(boss.dsn, autocommit=True) as conn:
            conn.execute(sql.SQL("GRANT SELECT ON pgboss.bam TO {}").format(sql.Identifier(name)))
        with Monitor(role_dsn, single_queue(role_dsn, kind="pg-boss").model, count_cap=CAP) as m:
            snap = m.collect()
        assert not snap.errors and queue(snap, "deep").figures["ready"].source == SOURCE
